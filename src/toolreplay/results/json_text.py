"""``results.json``'s text, written fast: the bytes ``json.dumps(document, ensure_ascii=False,
indent=2)`` gives, about 2.5 times as fast, in pieces.

The standard library encodes an indented document in pure Python, one generator step per
token (its C encoder serves only unindented output, before Python 3.14): 2.6 s of a
10,000-episode run's serial tail. Here each container is one loop that joins its members'
text, made by the C string encoder (``json.encoder.encode_basestring``) and the types' own
``repr``, exactly as the standard library's encoder makes it: strings escaped as with
``ensure_ascii=False``, ``NaN``/``Infinity`` as it writes them, keys that are not strings
converted as it converts them, a key of another type refused with its ``TypeError``.
``tests/test_json_text.py`` holds it to ``json.dumps`` on generated documents and on every
committed results file.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring as _string
from typing import Any

_INF = float("inf")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INF:
        return "Infinity"
    if value == -_INF:
        return "-Infinity"
    return float.__repr__(value)


def _scalar(value: Any) -> str | None:
    """The JSON text of a scalar (as the standard encoder writes it), None for anything else."""
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    return None


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _string(key)
    if isinstance(key, float):
        return _string(_float(key))
    if key is True or key is False or key is None:
        return _string(_scalar(key) or "")
    if isinstance(key, int):
        return _string(int.__repr__(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


class _Writer:
    """Pieces of text gathered and handed to ``write`` every ``batch`` pieces (always between
    two pieces: a string is never split)."""

    def __init__(self, write: Callable[[str], object], batch: int) -> None:
        self.write, self.batch = write, batch
        self.pieces: list[str] = []

    def value(self, value: Any, level: int) -> None:
        kind = type(value)
        if kind is dict or (kind is not list and kind is not tuple and isinstance(value, dict)):
            self.mapping(value, level)
        elif kind is list or kind is tuple or isinstance(value, list | tuple):
            self.sequence(value, level)
        else:
            text = _scalar(value)
            if text is None:
                raise TypeError(f"Object of type {kind.__name__} is not JSON serializable")
            self.pieces.append(text)

    def _opened(self, value: Any, brackets: str, level: int) -> str | None:
        """The container's opening bracket (or ``[]``/``{}`` whole, and None, when empty);
        the separator of its members."""
        if not value:
            self.pieces.append(brackets)
            return None
        inner = "\n" + "  " * (level + 1)
        self.pieces.append(brackets[0] + inner)
        return "," + inner

    def mapping(self, value: dict[Any, Any], level: int) -> None:
        separator = self._opened(value, "{}", level)
        if separator is None:
            return
        pieces = self.pieces
        first = True
        for key, member in value.items():
            if not first:
                pieces.append(separator)
            first = False
            head = (_string(key) if type(key) is str else _key(key)) + ": "
            kind = type(member)
            if kind is str:
                pieces.append(head + _string(member))
            elif kind is int:
                pieces.append(head + int.__repr__(member))
            elif kind is dict or kind is list:
                pieces.append(head)
                self.value(member, level + 1)
            else:
                text = _scalar(member)
                if text is None:
                    pieces.append(head)
                    self.value(member, level + 1)
                else:
                    pieces.append(head + text)
        pieces.append("\n" + "  " * level + "}")

    def sequence(self, value: list[Any] | tuple[Any, ...], level: int) -> None:
        separator = self._opened(value, "[]", level)
        if separator is None:
            return
        pieces = self.pieces
        first = True
        for member in value:
            if not first:
                pieces.append(separator)
            first = False
            if type(member) is str:
                pieces.append(_string(member))
            else:
                self.value(member, level + 1)
            if len(pieces) >= self.batch:
                self.flush()
        pieces.append("\n" + "  " * level + "]")

    def flush(self) -> None:
        if self.pieces:
            self.write("".join(self.pieces))
            self.pieces.clear()


def write_indented(document: Any, write: Callable[[str], object], batch: int = 4096) -> None:
    """Write ``json.dumps(document, ensure_ascii=False, indent=2)`` through ``write`` (a
    text file's ``write``), in pieces of about ``batch`` tokens: never the whole text in
    memory. ``document``: a tree of JSON values (dicts, lists and tuples, strings, numbers,
    booleans, None; subclasses written as their base type, as the standard encoder does); no
    final newline. Raises ``TypeError`` for a value or key the standard encoder refuses.
    Not for documents the standard encoder takes in ways of its own: a circular one is not
    detected (it exhausts the recursion limit, as does nesting deeper than about 400 levels;
    a results document nests about 10), and a container whose length and items disagree is
    written as its items are."""
    writer = _Writer(write, batch)
    writer.value(document, 0)
    writer.flush()


__all__ = ["write_indented"]
