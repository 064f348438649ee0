"""The Responses API's model items, read alike in a reply's ``output`` and in a later
request's ``input`` (:mod:`toolreplay.wire.responses`): ``function_call`` and
``custom_tool_call`` items as tool calls, ``reasoning`` items as ``reasoning_details``,
``message`` items as text and refusal, one turn of them gathered into one assistant message.
"""

from __future__ import annotations

from typing import Any

from toolreplay.wire.episode import Message, ModelReply, ToolCall
from toolreplay.wire.replies import arguments_text, custom_input_text

#: Content-part types that are text, by the field holding it.
TEXT_PARTS = ("input_text", "output_text", "text", "summary_text", "reasoning_text")


def tool_call(item: dict[str, Any]) -> ToolCall:
    """A ``function_call`` item (``call_id``, ``name``, ``arguments``: the arguments rule,
    :func:`~toolreplay.wire.replies.arguments_text`) or a ``custom_tool_call`` one
    (``input``: free text, kept as sent, :func:`~toolreplay.wire.replies.custom_input_text`)
    as a :class:`ToolCall` whose id is the ``call_id`` (the item's ``id`` when it has none)."""
    call_id = item.get("call_id") or item.get("id") or ""
    if item.get("type") == "custom_tool_call":
        arguments = custom_input_text(item.get("input"))
    else:
        arguments = arguments_text(item.get("arguments"))
    return ToolCall(str(call_id), str(item.get("name") or ""), arguments)


def reasoning_details(item: dict[str, Any]) -> list[dict[str, Any]]:
    """A ``reasoning`` item as ``reasoning_details`` entries (OpenRouter's
    ``openai-responses-v1`` form): each ``summary_text`` of ``summary`` as
    ``reasoning.summary``, each ``reasoning_text`` of ``content`` as ``reasoning.text``,
    ``encrypted_content`` as ``reasoning.encrypted`` (under ``data``); each with the item's
    ``id``. Empty when the item holds none of them."""
    details: list[dict[str, Any]] = []
    for key, kind, field in (
        ("summary", "reasoning.summary", "summary"),
        ("content", "reasoning.text", "text"),
    ):
        parts = item.get(key)
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                details.append({"type": kind, field: part["text"]})
    if isinstance(item.get("encrypted_content"), str) and item["encrypted_content"]:
        details.append({"type": "reasoning.encrypted", "data": item["encrypted_content"]})
    for detail in details:
        detail["format"] = "openai-responses-v1"
        if isinstance(item.get("id"), str):
            detail["id"] = item["id"]
    return details


class Turn:
    """The model's own items of one turn (output items, or their copies in a later input),
    gathered into one assistant message."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.refusals: list[str] = []
        self.calls: list[ToolCall] = []
        self.details: list[dict[str, Any]] = []

    def add(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind in ("function_call", "custom_tool_call"):
            self.calls.append(tool_call(item))
        elif kind == "reasoning":
            self.details.extend(reasoning_details(item))
        elif kind in (None, "message"):
            content = item.get("content")
            if isinstance(content, str):
                self.texts.append(content)
            for part in content if isinstance(content, list) else []:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                    self.refusals.append(part["refusal"])
                elif part.get("type") in TEXT_PARTS and isinstance(part.get("text"), str):
                    self.texts.append(part["text"])

    @property
    def content(self) -> str | None:
        return "".join(self.texts) if self.texts else None

    @property
    def refusal(self) -> str | None:
        return "".join(self.refusals) if self.refusals else None

    @property
    def reasoning(self) -> dict[str, Any]:
        return {"reasoning_details": self.details} if self.details else {}

    def message(self) -> Message:
        """The assistant message, shaped as :meth:`ModelReply.to_message` shapes a reply."""
        return ModelReply(
            self.content, tuple(self.calls), refusal=self.refusal, reasoning=self.reasoning
        ).to_message()


__all__ = ["TEXT_PARTS", "Turn", "reasoning_details", "tool_call"]
