"""The Chat Completions wire reader (``POST …/chat/completions``), whatever program sent the
requests (toolreplay's hosts, pydantic-ai, ``llm``, openai-agents switched to Chat
Completions, a hand-written openai SDK loop), streamed replies or not.

- a **model request** is a ``POST`` whose path ends in ``/chat/completions`` and whose JSON
  body holds ``messages``; those messages are the conversation, as sent; tools are offered
  when the body holds ``tools`` (or the legacy ``functions``); it is streamed when it asks
  ``"stream": true``;
- its **reply** is read by :func:`toolreplay.wire.replies.parse_chat_reply` (an event
  stream, when the request asked for one, assembled as the openai SDK does), the parser the
  hosts' model client uses.

The episode builder common to every protocol: :mod:`toolreplay.wire.reader`.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from toolreplay.wire.episode import ModelReply
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.protocol import History, ModelRequest, RequestCarriesAll
from toolreplay.wire.replies import exchange_status_error, parse_chat_reply


@dataclass(frozen=True)
class ChatCompletionsWire(RequestCarriesAll):
    """The Chat Completions reader (a :class:`~toolreplay.wire.protocol.WireProtocol`)."""

    name: str = "Chat Completions"

    def is_request(self, exchange: Exchange) -> bool:
        return exchange.is_chat_completion

    def request(self, exchange: Exchange, history: History) -> ModelRequest:
        body = exchange.request_body
        return ModelRequest(
            messages=tuple(body["messages"]),
            tools_offered=bool(body.get("tools") or body.get("functions")),
            streamed=body.get("stream") is True,
        )

    def reply(self, exchange: Exchange) -> ModelReply:
        """The reply through the one parser the model client uses."""
        if (fault := exchange_status_error(exchange)) is not None:
            raise fault
        # parse_chat_reply reads of the request its URL and whether it asked to stream: the
        # body is not encoded again for that
        asked = b'{"stream": true}' if exchange.request_body.get("stream") is True else b"{}"
        request = httpx.Request("POST", exchange.uri, content=asked)
        headers = {"content-type": exchange.content_type} if exchange.content_type else {}
        response = httpx.Response(
            exchange.status, headers=headers, content=exchange.response_body, request=request
        )
        return parse_chat_reply(response)


#: The Chat Completions reader.
CHAT_COMPLETIONS = ChatCompletionsWire()

__all__ = ["CHAT_COMPLETIONS", "ChatCompletionsWire"]
