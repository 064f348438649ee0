"""A scripted chat model for offline loop tests: replies given in order."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolreplay.wire.episode import Message, ModelReply

ScriptStep = (
    ModelReply | Callable[[Sequence[Message], Sequence[Mapping[str, Any]] | None], ModelReply]
)


@dataclass
class ScriptedModel:
    """In-process model double: returns ``script`` replies in order (each a :class:`ModelReply`
    or a function of ``(messages, tools)``), recording every request in ``requests``.
    Raises :class:`AssertionError` when asked for more replies than scripted."""

    script: list[ScriptStep]
    name: str = "scripted"
    requests: list[tuple[list[Message], list[Mapping[str, Any]] | None]] = field(
        default_factory=list
    )

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply:
        self.requests.append(([dict(m) for m in messages], list(tools) if tools else None))
        if len(self.requests) > len(self.script):
            raise AssertionError(f"scripted model asked for reply {len(self.requests)}")
        step = self.script[len(self.requests) - 1]
        return step(messages, tools) if callable(step) else step
