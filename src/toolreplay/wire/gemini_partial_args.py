"""Vertex AI's streamed function-call arguments, assembled: a reply's parts with each call
whose arguments came in pieces as one ``functionCall`` part holding them whole.

Followed: Vertex AI's ``FunctionCall`` reference (``partialArgs[]``, ``willContinue``;
``PartialArg``: ``jsonPath`` and one of ``stringValue``, ``numberValue``, ``boolValue``,
``nullValue``, and its own ``willContinue``), sent when the request asks
``toolConfig.functionCallingConfig.streamFunctionCallArguments``. A stream of such a call:

- its **head**, ``{"name", "willContinue": true}`` (it may hold ``partialArgs`` or ``args``
  already, and the part a ``thoughtSignature``);
- **pieces** without a name, ``{"partialArgs": [{"jsonPath": "$.location", "stringValue":
  "Bos", "willContinue": true}], "willContinue": true}``, each value set at its path in the
  call's arguments (objects and arrays made as the path needs them: ``$.recipe.steps[0]``),
  a string at a path already holding one appended to it (a string sent in several pieces);
  ``{"willContinue": true}`` alone adds nothing;
- its **end**: ``{}``, or a piece with neither its own nor any of its values' ``willContinue``;
  a later call's head or the end of the reply ends it as well.

A call sent whole (``{"name", "args"}``) and every other part are kept as sent; so is a
continuation's ``thoughtSignature``, as a part of its own.

:class:`PartialArgsError` when a piece cannot be applied: pieces with no call open, a
``jsonPath`` that is not ``$`` followed by ``.name``/``[n]``/``['name']`` steps, a piece
holding no value, a path crossing a value of another kind (an index into an object, a field of
a string), an index past the end of its array, or a value at a path already holding one that is
not a string continued by a string.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

_CAMEL_HUMP = re.compile(r"(?<!^)(?=[A-Z])")

#: One step of a JSON path after ``$``: ``.name``, ``[n]``, ``['name']`` or ``["name"]``.
_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")

#: The value fields of a ``PartialArg``, in the order they are looked for.
_VALUES = ("stringValue", "numberValue", "boolValue", "nullValue")


class PartialArgsError(ValueError):
    """A streamed call's arguments that cannot be assembled (the module docstring lists
    why)."""


def field_of(obj: Any, name: str) -> Any:
    """``obj``'s field ``name`` (camelCase) or its snake_case twin; None when absent."""
    if not isinstance(obj, Mapping):
        return None
    if name in obj:
        return obj[name]
    return obj.get(_CAMEL_HUMP.sub("_", name).lower())


def _has(obj: Mapping[str, Any], name: str) -> bool:
    return name in obj or _CAMEL_HUMP.sub("_", name).lower() in obj


def _path(path: Any) -> list[str | int]:
    """A ``jsonPath`` as its steps (field names and indexes); :class:`PartialArgsError` for
    one that is not ``$`` followed by at least one step."""
    if not isinstance(path, str) or not path.startswith("$"):
        raise PartialArgsError(f"the jsonPath {path!r} does not start with '$'")
    steps: list[str | int] = []
    at = 1
    while at < len(path):
        found = _STEP.match(path, at)
        if found is None:
            raise PartialArgsError(f"the jsonPath {path!r} cannot be read from {path[at:]!r}")
        name, index, quoted, double = found.groups()
        key = name if name is not None else quoted if quoted is not None else double
        steps.append(int(index) if index is not None else str(key))
        at = found.end()
    if not steps:
        raise PartialArgsError(f"the jsonPath {path!r} names no field of the arguments")
    return steps


def _value(arg: Mapping[str, Any], path: str) -> Any:
    for name in _VALUES:
        if _has(arg, name):
            return None if name == "nullValue" else field_of(arg, name)
    raise PartialArgsError(f"the piece at {path!r} holds no value")


def _step_into(container: Any, step: str | int, following: str | int, path: str) -> Any:
    """The object or array at ``step`` of ``container``, made (an array when the step after
    it is an index) when absent or null."""
    made: Any = [] if isinstance(following, int) else {}
    if isinstance(step, int):
        if not isinstance(container, list):
            raise PartialArgsError(f"{path!r} indexes a value that is not an array")
        if step > len(container):
            raise PartialArgsError(f"{path!r} skips items of its array ({len(container)} held)")
        if step == len(container):
            container.append(made)
        elif container[step] is None:
            container[step] = made
        return container[step]
    if not isinstance(container, dict):
        raise PartialArgsError(f"{path!r} names a field of a value that is not an object")
    if container.get(step) is None:
        container[step] = made
    return container[step]


def apply_piece(args: dict[str, Any], arg: Any) -> None:
    """One ``PartialArg`` set into ``args`` (the module docstring says how)."""
    if not isinstance(arg, Mapping):
        raise PartialArgsError(f"a partialArgs item is {type(arg).__name__}, not an object")
    path = field_of(arg, "jsonPath")
    steps = _path(path)
    value = _value(arg, path)
    container: Any = args
    for step, following in pairwise(steps):
        container = _step_into(container, step, following, path)
    leaf = steps[-1]
    if isinstance(leaf, int):
        if not isinstance(container, list):
            raise PartialArgsError(f"{path!r} indexes a value that is not an array")
        if leaf > len(container):
            raise PartialArgsError(f"{path!r} skips items of its array ({len(container)} held)")
        held = container[leaf] if leaf < len(container) else None
        present = leaf < len(container)
    else:
        if not isinstance(container, dict):
            raise PartialArgsError(f"{path!r} names a field of a value that is not an object")
        held, present = container.get(leaf), leaf in container
    if present and isinstance(held, str) and isinstance(value, str):
        value = held + value  # a string sent in several pieces
    elif present:
        raise PartialArgsError(f"{path!r} is given a value again ({held!r} already held)")
    if isinstance(leaf, int) and leaf == len(container):
        container.append(value)
    else:
        container[leaf] = value


def _continues(call: Mapping[str, Any], pieces: Any) -> bool:
    """Whether more pieces of the call follow this one: its own ``willContinue`` or any of
    its values'."""
    values = pieces if isinstance(pieces, list) else ()
    return field_of(call, "willContinue") is True or any(
        field_of(p, "willContinue") is True for p in values
    )


def _call_key(part: Mapping[str, Any]) -> str:
    return "functionCall" if "functionCall" in part else "function_call"


def joined_calls(parts: list[Any]) -> list[Any]:
    """``parts`` with each call streamed in pieces as one ``functionCall`` part holding its
    whole ``args``, in its head's place; every other part as sent. :class:`PartialArgsError`
    for a piece that cannot be applied (the module docstring)."""
    joined: list[Any] = []
    open_args: dict[str, Any] | None = None
    name = ""
    for part in parts:
        call = field_of(part, "functionCall")
        if not isinstance(call, Mapping):
            joined.append(part)
            continue
        pieces = field_of(call, "partialArgs")
        if pieces is not None and not isinstance(pieces, list):
            raise PartialArgsError(f"partialArgs is {type(pieces).__name__}, not a list")
        if isinstance(call.get("name"), str):
            open_args = None  # a call's head ends the call before it
            if pieces is None and not _continues(call, pieces):
                joined.append(part)  # a call sent whole
                continue
            name, given = call["name"], call.get("args")
            open_args = dict(given) if isinstance(given, Mapping) else {}
            head = {k: v for k, v in call.items() if k not in _STREAM_FIELDS}
            joined.append({**part, _call_key(part): {**head, "args": open_args}})
        elif open_args is None:
            if pieces:
                raise PartialArgsError("partialArgs sent with no function call open")
            joined.append(part)  # an end with nothing open: as sent
            continue
        elif (signature := field_of(part, "thoughtSignature")) is not None:
            joined.append({"thoughtSignature": signature})
        for n, piece in enumerate(pieces or ()):
            try:
                apply_piece(open_args, piece)
            except PartialArgsError as exc:
                raise PartialArgsError(f"call {name!r}, partialArgs[{n}]: {exc}") from None
        if not _continues(call, pieces):
            open_args = None
    return joined


#: A call's fields that say how it is streamed, dropped from its assembled part.
_STREAM_FIELDS = frozenset({"partialArgs", "partial_args", "willContinue", "will_continue"})

__all__ = ["PartialArgsError", "apply_piece", "field_of", "joined_calls"]
