"""Tool results as frameworks send them: what a tool message's text holds, read as data.

A tool message's ``content`` is text, and frameworks put a tool's return value into it in
different ways. :func:`read_tool_result` reads, in order:

1. JSON (``{"sku": "ABC-1", "on_hand": 12}``), what most frameworks send;
2. a Python literal, what ``str(value)`` gives for a dict or list (openai-agents sends a
   tool's dict result this way: ``{'sku': 'ABC-1', 'on_hand': 12}``), read with
   :func:`ast.literal_eval` (never evaluated: only literals are accepted; at most
   :data:`LITERAL_LIMIT` characters);
3. ``key: value`` lines (``sku: ABC-1`` / ``on_hand: 12``), every non-empty line of that form,
   numbers read as numbers;

and returns None for anything else (plain text, read as text by the judge). What is wrapped
is unwrapped: JSON text in a JSON string (a framework that serialised twice), and content
blocks (Anthropic's and MCP's ``[{"type": "text", "text": ...}]``), whose text is read the same
way (data when it holds data, else the text itself).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

#: Longer text is not read as a Python literal (the parser's cost grows with the text).
LITERAL_LIMIT = 1_000_000

_LINE = re.compile(r"^\s*([A-Za-z_][\w .-]{0,63}?)\s*:\s*(.*?)\s*$")
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")


def _literal(text: str) -> Any:
    if len(text) > LITERAL_LIMIT:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict | list | tuple) else None


def _plain(value: Any) -> Any:
    """A literal's value as JSON data: tuples as lists, keys as text, sets and bytes left
    out."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def _key_values(text: str) -> dict[str, Any] | None:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    out: dict[str, Any] = {}
    for line in lines:
        m = _LINE.match(line)
        if m is None or not m.group(2):
            return None
        value: Any = m.group(2)
        if _NUMBER.match(value):
            value = float(value) if any(c in value for c in ".eE") else int(value)
        out[m.group(1)] = value
    return out


def _text_blocks(value: Any) -> str | None:
    """The text of content blocks (every item ``{"type": "text", "text": str}``), or None."""
    if not isinstance(value, list) or not value:
        return None
    if not all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in value
    ):
        return None
    return "\n".join(b["text"] for b in value)


def _unwrap(value: Any, depth: int) -> Any:
    text = value if isinstance(value, str) else _text_blocks(value)
    if text is None or depth >= 3:
        return value
    inner = read_tool_result(text, _depth=depth + 1)
    return text if inner is None else inner


def read_tool_result(text: str, *, _depth: int = 0) -> Any:
    """The data a tool message's text holds (see the module docstring): a dict, list or
    scalar from JSON, a dict or list from a Python literal or ``key: value`` lines, the text
    of content blocks or of a JSON string when it holds no data; None when it is plain text.
    Never raises for a string."""
    try:
        return _unwrap(json.loads(text), _depth)
    except (ValueError, RecursionError):
        pass
    stripped = text.strip()
    if stripped[:1] in ("{", "[", "("):
        value = _literal(stripped)
        if value is not None:
            return _plain(value)
    return _key_values(stripped)


__all__ = ["LITERAL_LIMIT", "read_tool_result"]
