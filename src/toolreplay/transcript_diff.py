"""The first message where two transcripts differ, described in a few words on each side
(:func:`first_difference`; ``toolreplay diff`` and the report's comparison name it)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MessageDifference", "first_difference"]


@dataclass(frozen=True)
class MessageDifference:
    """The first message where two transcripts differ: ``index`` (into both), ``a`` and ``b``
    that message on each side in a few words (``(no message)`` past a transcript's end)."""

    index: int
    a: str
    b: str


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe_message(message: Mapping[str, Any] | None) -> str:
    if message is None:
        return "(no message)"
    role = message.get("role", "?")
    content = message.get("content")
    parts = []
    if isinstance(content, str) and content:
        parts.append(json.dumps(_short(content), ensure_ascii=False))
    elif content is None and role == "assistant":
        parts.append("content null")
    elif content == "":
        parts.append('content ""')
    elif content is not None:
        parts.append(_short(json.dumps(content, ensure_ascii=False)))
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        parts.append(f"{fn.get('name', '?')}({_short(str(fn.get('arguments', '')), 40)})")
    return f"{role}: " + ("; ".join(parts) or "(nothing)")


def first_difference(
    ta: Sequence[Mapping[str, Any]], tb: Sequence[Mapping[str, Any]]
) -> MessageDifference | None:
    """The first message that differs between two transcripts (chat-format message dicts,
    an episode's ``transcript``), described in a few words on each side; None when the
    transcripts are equal."""
    for i in range(max(len(ta), len(tb))):
        ma = ta[i] if i < len(ta) else None
        mb = tb[i] if i < len(tb) else None
        if ma != mb:
            return MessageDifference(i, _describe_message(ma), _describe_message(mb))
    return None
