"""What a chat model is to the hosts (:class:`ChatModel`) and the settings it is made with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolreplay.wire.episode import Message, ModelReply

DEFAULT_BASE_URL = "https://dashscope.aliyuncs.com/compatible-mode/v1"
DEFAULT_MODEL = "qwen-plus"


class ChatModel(Protocol):
    """Anything that answers one round: messages (+ tools, or None to withhold them)."""

    name: str

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply: ...


@dataclass(frozen=True)
class ModelSettings:
    """Where and what to ask. ``api_key`` may be None in replay (a placeholder is sent).
    ``stream``: ask for streamed replies (``stream: true``, ``stream_options.include_usage``);
    the model client assembles them into the same :class:`ModelReply`."""

    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    api_key: str | None = field(default=None, repr=False)  # never in a repr, log or traceback
    temperature: float = 0.0
    stream: bool = False
