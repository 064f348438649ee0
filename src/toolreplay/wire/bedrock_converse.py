"""The Bedrock Converse wire reader (not yet written: it recognises no request)."""

from __future__ import annotations

from dataclasses import dataclass

from toolreplay.wire.episode import ModelReply
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.protocol import History, ModelRequest


@dataclass(frozen=True)
class BedrockConverseWire:
    """The Bedrock Converse reader (a :class:`~toolreplay.wire.protocol.WireProtocol`)."""

    name: str = "Bedrock Converse"

    def is_request(self, exchange: Exchange) -> bool:
        return False

    def request(self, exchange: Exchange, history: History) -> ModelRequest:
        raise NotImplementedError

    def reply(self, exchange: Exchange) -> ModelReply:
        raise NotImplementedError

    def reply_id(self, exchange: Exchange) -> str | None:
        return None


#: The Bedrock Converse reader.
BEDROCK_CONVERSE = BedrockConverseWire()

__all__ = ["BEDROCK_CONVERSE", "BedrockConverseWire"]
