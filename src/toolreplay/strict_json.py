"""JSON read strictly: a key given twice in one object is refused, naming where.

``json.loads`` keeps the last of two equal keys in an object, silently, so a hand-edited
``results.json`` or manifest could say one thing to a reader and another to toolreplay.
:func:`load_json` parses with an ``object_pairs_hook`` that refuses a repeated key (the hook
is given no positions), then, only then, finds where it is by scanning the text in reading
order (:func:`repeated_key`): strings are decoded as ``json`` decodes them, so keys written
with escapes compare as the keys they are, and each object's keys are its own (the same key
in two objects is fine). :func:`toolreplay.inputs.parse_checked` reads every JSON input
through it (manifests, results files, shard files).
"""

from __future__ import annotations

import json
import re
from typing import Any


class DuplicateJsonKeyError(ValueError):
    """A JSON object holds the same key twice (``json`` would keep the second, silently):
    ``key``, and the lines (from 1) of its second (``line``) and first (``first_line``)
    occurrence. The message says what to do; :func:`parse_checked` puts ``PATH:LINE:``
    before it."""

    def __init__(self, key: str, line: int, first_line: int) -> None:
        shown = json.dumps(key, ensure_ascii=False)
        super().__init__(
            f"duplicate key {shown[:80]}{'...' if len(shown) > 80 else ''} (first on line "
            f"{first_line}); JSON would silently keep the second: remove one of them (toolreplay "
            "writes each key once, so the file was edited)"
        )
        self.key, self.line, self.first_line = key, line, first_line


class _Repeated(Exception):
    """Raised by :func:`_unique_object` (not a ValueError: ``json`` lets it through)."""


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _Repeated
    return value


_JSON_PLAIN = re.compile(r'[^"{}\[\]]*')  # what is neither a string nor a bracket
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def repeated_key(text: str) -> tuple[str, int, int] | None:
    """``(key, offset of its second occurrence, offset of its first)`` of the first key,
    in reading order, given twice in one object of the JSON ``text`` (keys compared as
    decoded: ``"a"`` and ``"\\u0061"`` are one key); None when there is none."""
    objects: list[dict[str, int] | None] = []  # the open brackets: an object's keys, or None
    at, end = 0, len(text)
    while (at := _JSON_PLAIN.match(text, at).end()) < end:  # type: ignore[union-attr]
        if text[at] != '"':
            if text[at] in "{[":
                objects.append({} if text[at] == "{" else None)
            elif objects:
                objects.pop()
            at += 1
            continue
        try:
            key, after = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
        except ValueError:
            return None
        colon = _JSON_SPACE.match(text, after).end()  # type: ignore[union-attr]
        keys = objects[-1] if objects else None
        if keys is not None and text[colon : colon + 1] == ":":  # a key, not a value
            if key in keys:
                return key, at, keys[key]
            keys[key] = at
        at = after
    return None


def load_json(text: str) -> Any:
    """``json.loads(text)``, refusing a key given twice in one object
    (:class:`DuplicateJsonKeyError`, with the lines of both; the same key in different objects
    is fine). ``ValueError`` (``json``'s) for text that is not JSON; ``RecursionError`` for
    nesting beyond the interpreter's reach."""
    try:
        return json.loads(text, object_pairs_hook=_unique_object)
    except _Repeated:
        found = repeated_key(text)
    if found is None:  # the hook saw it, so the scan does: never reached
        raise ValueError("a key given twice in one object")
    key, second, first = found
    raise DuplicateJsonKeyError(
        key, text.count("\n", 0, second) + 1, text.count("\n", 0, first) + 1
    )


def json_error_message(path: object, exc: ValueError) -> str:
    """The one line for JSON file ``path`` that :func:`load_json` refused with ``exc``:
    ``PATH:LINE: duplicate key ...`` for a repeated key, else ``PATH: not valid JSON: ...``."""
    if isinstance(exc, DuplicateJsonKeyError):
        return f"{path}:{exc.line}: {exc}"
    return f"{path}: not valid JSON: {exc}"


__all__ = ["DuplicateJsonKeyError", "json_error_message", "load_json", "repeated_key"]
