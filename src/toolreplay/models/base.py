"""What a chat model is to the hosts (:class:`ChatModel`) and the settings it is made with."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolreplay.wire.episode import Message, ModelReply

DEFAULT_BASE_URL = "https://dashscope.aliyuncs.com/compatible-mode/v1"
DEFAULT_MODEL = "qwen-plus"

#: The wire protocols a model can be asked over (:attr:`ModelSettings.protocol`): Chat
#: Completions (``POST …/chat/completions``), the Responses API (``POST …/responses``) and
#: Anthropic Messages (``POST …/v1/messages``).
MODEL_PROTOCOLS = ("chat_completions", "responses", "anthropic_messages")


class ChatModel(Protocol):
    """Anything that answers one round: messages (+ tools, or None to withhold them)."""

    name: str

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply: ...


class ConversionError(ValueError):
    """A conversation or tool that a model's protocol cannot carry (a content part or tool
    of a kind it has no form for, a message of an unknown role); the message names the
    message or tool (1-based) and why. Raised before anything is sent."""


@dataclass(frozen=True)
class ModelSettings:
    """Where and what to ask. ``api_key`` may be None in replay (a placeholder is sent).
    ``stream``: ask for streamed replies (``stream: true``, ``stream_options.include_usage``);
    the model client assembles them into the same :class:`ModelReply`.
    ``protocol``: the wire protocol spoken (:data:`MODEL_PROTOCOLS`; ``base_url`` is then
    that API's base URL as its SDK takes it: ``https://api.openai.com/v1`` for Chat
    Completions and Responses, ``https://api.anthropic.com`` for Anthropic Messages).
    ``max_tokens``: the cap on a reply's tokens; None sends none, except over Anthropic
    Messages, which requires one (1024 then). :class:`ValueError` for an unknown protocol or
    a cap below 1."""

    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    api_key: str | None = field(default=None, repr=False)  # never in a repr, log or traceback
    temperature: float = 0.0
    stream: bool = False
    protocol: str = "chat_completions"
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.protocol not in MODEL_PROTOCOLS:
            raise ValueError(
                f"unknown model protocol {self.protocol!r}; known: {', '.join(MODEL_PROTOCOLS)}"
            )
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, not {self.max_tokens}")


def content_text(content: Any) -> str:
    """A Chat Completions message ``content`` as text: a string as is, the ``text`` parts
    of a list joined (other parts left out), None as ``""``; any other value as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p if isinstance(p, str) else str(p.get("text") or "")
            for p in content
            if isinstance(p, str) or (isinstance(p, dict) and p.get("type") in ("text", None))
        )
    return json.dumps(content, ensure_ascii=False)
