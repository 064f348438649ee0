"""The Chat Completions wire reader (``POST …/chat/completions``), whatever program sent the
requests (toolreplay's hosts, pydantic-ai, ``llm``, openai-agents switched to Chat
Completions, a hand-written openai SDK loop), streamed replies or not.

- a **model request** is a ``POST`` whose path ends in ``/chat/completions`` and whose JSON
  body holds ``messages``; those messages are the conversation, as sent, but that an
  assistant message's custom tool calls (``{"type": "custom", "custom": {"name", "input"}}``,
  openai's ``ChatCompletionMessageCustomToolCallParam``) read as function calls whose
  arguments are the ``input`` as sent, as the reply's are read (their ``tool`` messages
  answer them by ``tool_call_id`` like any other); tools are offered when the body holds
  ``tools`` (or the legacy ``functions``) and ``tool_choice`` (or the legacy
  ``function_call``) is not ``"none"`` (:mod:`toolreplay.wire.tool_choice`); it is streamed
  when it asks ``"stream": true``;
- its **reply** is read by :func:`toolreplay.wire.replies.parse_chat_reply` (an event
  stream, when the request asked for one, assembled as the openai SDK does), the parser the
  hosts' model client uses.

The episode builder common to every protocol: :mod:`toolreplay.wire.reader`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from toolreplay.wire.episode import Message, ModelReply, ToolCall
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.protocol import History, ModelRequest, RequestCarriesAll
from toolreplay.wire.replies import custom_input_text, exchange_status_error, parse_chat_reply
from toolreplay.wire.tool_choice import calls_forbidden


def _function_call(call: Any) -> Any:
    """A tool call of an assistant message sent back: a custom one as a function call (its
    ``input`` as the arguments, as sent); any other as it is."""
    if not isinstance(call, dict) or call.get("type") != "custom":
        return call
    custom = call.get("custom")
    custom = custom if isinstance(custom, dict) else {}
    arguments = custom_input_text(custom.get("input"))
    return ToolCall(
        str(call.get("id") or ""), str(custom.get("name") or ""), arguments
    ).to_message()


def _history(message: Any) -> Any:
    """A message of the conversation sent, with its custom tool calls as function calls
    (:func:`_function_call`); any other message as sent."""
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(calls, list) or not any(
        isinstance(c, dict) and c.get("type") == "custom" for c in calls
    ):
        return message
    read: Message = {**message, "tool_calls": [_function_call(c) for c in calls]}
    return read


@dataclass(frozen=True)
class ChatCompletionsWire(RequestCarriesAll):
    """The Chat Completions reader (a :class:`~toolreplay.wire.protocol.WireProtocol`)."""

    name: str = "Chat Completions"

    def is_request(self, exchange: Exchange) -> bool:
        return exchange.is_chat_completion

    def request(self, exchange: Exchange, history: History) -> ModelRequest:
        body = exchange.request_body
        return ModelRequest(
            messages=tuple(_history(m) for m in body["messages"]),
            tools_offered=bool(body.get("tools") or body.get("functions"))
            and not calls_forbidden(body)
            and body.get("function_call") != "none",
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
