"""The Responses API wire reader (not yet written: it recognises no request)."""

from __future__ import annotations

from dataclasses import dataclass

from toolreplay.wire.episode import ModelReply
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.protocol import History, ModelRequest


@dataclass(frozen=True)
class ResponsesWire:
    """The Responses API reader (a :class:`~toolreplay.wire.protocol.WireProtocol`)."""

    name: str = "Responses API"

    def is_request(self, exchange: Exchange) -> bool:
        return False

    def request(self, exchange: Exchange, history: History) -> ModelRequest:
        raise NotImplementedError

    def reply(self, exchange: Exchange) -> ModelReply:
        raise NotImplementedError

    def reply_id(self, exchange: Exchange) -> str | None:
        return None


#: The Responses API reader.
RESPONSES = ResponsesWire()

__all__ = ["RESPONSES", "ResponsesWire"]
