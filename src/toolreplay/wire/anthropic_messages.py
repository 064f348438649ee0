"""The Anthropic Messages wire reader (``POST …/v1/messages``; the same body through Amazon
Bedrock's ``…/invoke`` and Google Vertex AI's ``…:rawPredict``/``:streamRawPredict``), streamed
replies or not.

Followed: Anthropic's API reference, "Messages" (``POST /v1/messages``: request ``system``,
``messages``, ``tools``, ``stream``; the reply's ``content`` blocks, ``stop_reason``,
``usage``) and "Streaming Messages" (the event flow ``message_start``,
``content_block_start``/``_delta``/``_stop``, ``message_delta``, ``message_stop``, ``ping``,
``error``), https://docs.anthropic.com/en/api/messages and
https://docs.anthropic.com/en/docs/build-with-claude/streaming; the anthropic SDK's types
(``anthropic.types.Message``) and accumulation (``anthropic.lib.streaming``,
``accumulate_event``).

- a **model request** is a ``POST`` whose JSON body holds a ``messages`` list and either
  whose path ends in ``/v1/messages`` (or ``/messages`` with ``max_tokens`` in the body), or
  whose body names an ``anthropic_version`` (Bedrock, Vertex AI); never a
  ``…/chat/completions`` path, nor ``/v1/messages/count_tokens`` or ``/batches``;
- its conversation is read into Chat Completions form (:func:`conversation`): ``system`` →
  a leading system message; a user turn's ``tool_result`` blocks → ``tool`` messages (with
  ``"is_error": true`` when the block says so), then a user message with its other blocks;
  an assistant turn's ``text`` → ``content``, ``tool_use`` → ``tool_calls`` (the block's
  ``id``; ``input`` serialised as the arguments), ``thinking``/``redacted_thinking`` →
  ``reasoning_details``; server tool blocks (``server_tool_use``, ``web_search_tool_result``,
  ``mcp_tool_use``...) run on Anthropic's side and are skipped (a reply keeps their names,
  :mod:`~toolreplay.wire.hosted`); tools are offered when
  ``tools`` is non-empty and ``tool_choice`` is not ``{"type": "none"}``;
- its **reply** (:func:`message_reply`) is the ``Message`` object, or the event stream of a
  streamed request assembled into one
  (:func:`~toolreplay.wire.anthropic_stream.assemble_message_stream`; Bedrock's binary AWS
  event stream by :func:`~toolreplay.wire.anthropic_stream.assemble_bedrock_stream`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from toolreplay.wire.anthropic_stream import (
    assemble_bedrock_stream,
    assemble_message_stream,
    error_text,
    is_bedrock_stream,
    snippet,
)
from toolreplay.wire.episode import NO_FINISH_REASON, Message, ModelReply, ToolCall, Usage
from toolreplay.wire.hosted import anthropic_hosted
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.protocol import History, ModelRequest, RequestCarriesAll
from toolreplay.wire.replies import ModelReplyError, exchange_status_error
from toolreplay.wire.stream import StreamError, is_event_stream
from toolreplay.wire.tool_choice import calls_forbidden

#: ``stop_reason`` values and the Chat Completions ``finish_reason`` each reads as
#: (``end_turn``, ``stop_sequence`` and ``pause_turn`` read as ``stop``, or ``tool_calls`` when
#: the reply holds a tool call).
FINISH_REASONS = {
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


def _texts(blocks: list[Any]) -> list[str] | None:
    """The texts of ``blocks`` when every one is a ``text`` block (or a bare string), else
    None."""
    texts = [
        b if isinstance(b, str) else b.get("text") if isinstance(b, dict) else None for b in blocks
    ]
    if all(isinstance(t, str) for t in texts) and (
        all(isinstance(b, str) or b.get("type", "text") == "text" for b in blocks)
    ):
        return texts  # type: ignore[return-value]
    return None


def _kept(block: Any) -> Any:
    """A block kept as sent, without its ``cache_control`` (a caching mark that a program
    moves from turn to turn, not content)."""
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _plain(content: Any) -> Any:
    """A user or system ``content`` in Chat Completions form: a string as sent; text blocks
    joined by a blank line; any other list of blocks kept as sent (:func:`_kept`)."""
    if not isinstance(content, list):
        return content
    texts = _texts(content)
    return "\n\n".join(texts) if texts is not None else [_kept(b) for b in content]


def _arguments_text(tool_input: Any) -> str:
    """A ``tool_use`` block's ``input`` as the JSON string of a Chat Completions tool call
    (``"{}"`` when absent). A string is kept as it is: the text of a streamed input that
    did not parse (:func:`assemble_message_stream`), so the arguments read as sent."""
    if isinstance(tool_input, str):
        return tool_input
    return json.dumps({} if tool_input is None else tool_input, ensure_ascii=False)


def _reasoning_item(block: Mapping[str, Any]) -> dict[str, Any] | None:
    """A ``thinking`` block as ``{"type": "reasoning.text", "text", "signature"}``, a
    ``redacted_thinking`` block as ``{"type": "reasoning.encrypted", "data"}``; None for
    another block."""
    if block.get("type") == "thinking":
        item: dict[str, Any] = {"type": "reasoning.text", "text": str(block.get("thinking") or "")}
        if block.get("signature"):
            item["signature"] = block["signature"]
        return item
    if block.get("type") == "redacted_thinking":
        return {"type": "reasoning.encrypted", "data": block.get("data")}
    return None


@dataclass(frozen=True)
class _Assistant:
    """What an assistant turn (a request's or a reply's ``content``) holds."""

    text: str | None
    calls: tuple[ToolCall, ...]
    reasoning: tuple[dict[str, Any], ...]


def _assistant(content: Any) -> _Assistant:
    """An assistant ``content`` (a string, or blocks): adjacent ``text`` blocks joined as
    sent (a text cut by citations reads whole), texts parted by another block (a server
    tool's use and result) by a blank line; ``tool_use`` blocks as calls, thinking blocks as
    reasoning items; other blocks skipped."""
    if isinstance(content, str):
        return _Assistant(content, (), ())
    texts: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[dict[str, Any]] = []
    parted = False  # another block came after the last text
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            if parted and texts:
                texts.append("\n\n")
            texts.append(block["text"])
            parted = False
            continue
        parted = True
        if kind == "tool_use":
            calls.append(
                ToolCall(
                    str(block.get("id") or ""),
                    str(block.get("name") or ""),
                    _arguments_text(block.get("input")),
                )
            )
        elif (item := _reasoning_item(block)) is not None:
            reasoning.append(item)
    return _Assistant("".join(texts) if texts else None, tuple(calls), tuple(reasoning))


def _tool_message(block: Mapping[str, Any]) -> Message:
    """A ``tool_result`` block as a ``tool`` message: its ``content`` a string as sent, text
    blocks joined, other blocks kept as sent (``""`` when absent)."""
    content = block.get("content")
    if content is None:
        content = ""
    elif isinstance(content, list):
        texts = _texts(content)
        content = "\n\n".join(texts) if texts is not None else [_kept(b) for b in content]
    message: Message = {
        "role": "tool",
        "tool_call_id": str(block.get("tool_use_id") or ""),
        "content": content,
    }
    if block.get("is_error") is True:
        message["is_error"] = True
    return message


def _user_turn(role: str, content: Any) -> list[Message]:
    """A user (or system) turn: its ``tool_result`` blocks as ``tool`` messages, then a
    message with the other blocks (left out when there are none)."""
    if not isinstance(content, list):
        return [{"role": role, "content": content}]
    tools = [
        _tool_message(b) for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    rest = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]
    return [*tools, {"role": role, "content": _plain(rest)}] if rest else tools


def _assistant_message(turn: _Assistant) -> Message:
    message: Message = {"role": "assistant", "content": turn.text}
    if turn.reasoning:
        message["reasoning_details"] = [dict(i) for i in turn.reasoning]
    if turn.calls:
        message["tool_calls"] = [c.to_message() for c in turn.calls]
    return message


def conversation(body: Mapping[str, Any]) -> tuple[Message, ...]:
    """A Messages request body's conversation in Chat Completions form (the module
    docstring): ``system`` first, then each turn of ``messages``; a turn that is not an
    object, or of another role than ``user``, ``assistant`` or ``system``, is skipped."""
    messages: list[Message] = []
    system = body.get("system")
    if isinstance(system, (str, list)) and system:
        messages.append({"role": "system", "content": _plain(system)})
    for turn in body.get("messages") or ():
        if not isinstance(turn, dict):
            continue
        role, content = turn.get("role"), turn.get("content")
        if role == "assistant":
            messages.append(_assistant_message(_assistant(content)))
        elif role in ("user", "system"):
            messages.extend(_user_turn(role, content))
    return tuple(messages)


def _refusal_said(message: Mapping[str, Any]) -> str:
    """What the API said of a refusal that came without text: its ``stop_details``'
    ``category`` and ``explanation`` (``"cyber; …"``), else ``""`` (it said nothing; the
    reply's ``refusal`` is then empty, never words of toolreplay's put in the model's mouth)."""
    details = message.get("stop_details")
    if not isinstance(details, dict):
        return ""
    return "; ".join(str(details[k]) for k in ("category", "explanation") if details.get(k))


_CACHE_COUNTS = ("cache_creation_input_tokens", "cache_read_input_tokens")


def message_usage(usage: Any) -> Usage:
    """``usage`` as prompt and completion tokens: ``input_tokens`` +
    ``cache_creation_input_tokens`` + ``cache_read_input_tokens`` (the reference: "total input
    tokens in a request is the summation" of the three), and ``output_tokens``."""
    counts = {k: v for k, v in (usage if isinstance(usage, dict) else {}).items() if type(v) is int}
    prompt = sum(counts.get(k, 0) for k in ("input_tokens", *_CACHE_COUNTS))
    return Usage(prompt, counts.get("output_tokens", 0))


def message_reply(message: Mapping[str, Any]) -> ModelReply:
    """A ``Message`` object (``{"type": "message", "content": [...], "stop_reason",
    "usage"}``) as a :class:`ModelReply`: text, tool calls and reasoning as
    :func:`conversation` reads an assistant turn; ``finish_reason`` from ``stop_reason``
    (:data:`FINISH_REASONS`; :data:`~toolreplay.wire.episode.NO_FINISH_REASON` when it is
    null or missing); ``refusal`` set for ``stop_reason: refusal`` (the reply's text,
    which is then not its content, or a note naming ``stop_details``); usage by
    :func:`message_usage`."""
    turn = _assistant(message.get("content"))
    stop = message.get("stop_reason")
    finish = FINISH_REASONS.get(str(stop), "tool_calls" if turn.calls else "stop")
    if stop is None:  # none sent: finished or cut off, not told
        finish = NO_FINISH_REASON
    content, refusal = turn.text, None
    if stop == "refusal":
        content, refusal = None, turn.text or _refusal_said(message)
    return ModelReply(
        content=content,
        tool_calls=turn.calls,
        finish_reason=finish,
        usage=message_usage(message.get("usage")),
        refusal=refusal,
        reasoning={"reasoning_details": [dict(i) for i in turn.reasoning]}
        if turn.reasoning
        else {},
        hosted_tools=anthropic_hosted(message.get("content")),
    )


def _describe_unparsable(exchange: Exchange) -> str:
    text = exchange.response_body.decode("utf-8", errors="replace")
    ctype = exchange.content_type.split(";")[0].strip().lower() or "no content-type"
    if not text.strip():
        return "the body is empty, not a JSON Message"
    if text.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        return f"the body is HTML, not a JSON Message: {snippet(text)}"
    return f"the body is not JSON ({ctype}), not a Message: {snippet(text)}"


def _reply_body(exchange: Exchange) -> Any:
    """The reply's Message as a dict: the JSON body, or the event stream assembled;
    :class:`ModelReplyError` for a body that is neither, an error body or event, a stream
    cut off or broken, a JSON value that is not a Message."""
    endpoint = str(httpx.URL(exchange.uri).copy_with(query=None))
    status = exchange.status
    bedrock = is_bedrock_stream(exchange.content_type)
    if bedrock or is_event_stream(exchange.response_body, exchange.content_type):
        try:
            if bedrock:  # Bedrock's invoke-with-response-stream: the events in AWS frames
                return assemble_bedrock_stream(exchange.response_body)
            return assemble_message_stream(exchange.response_body)
        except StreamError as exc:
            raise ModelReplyError(
                endpoint, status, f"the streamed reply is unusable: {exc}"
            ) from None
    try:
        body = json.loads(exchange.response_body)
    except ValueError:
        raise ModelReplyError(endpoint, status, _describe_unparsable(exchange)) from None
    if not isinstance(body, dict):
        problem = f"the JSON body is {type(body).__name__}, not a Message object"
        raise ModelReplyError(endpoint, status, problem)
    if body.get("type") == "error" or ("error" in body and "content" not in body):
        problem = f"the body reports an error: {error_text(body.get('error'))}"
        raise ModelReplyError(endpoint, status, problem)
    if not isinstance(body.get("content"), list) or body.get("type", "message") != "message":
        shown = snippet(json.dumps(body, ensure_ascii=False, default=str))
        problem = f"not a Message (type 'message' with a 'content' list): {shown}"
        raise ModelReplyError(endpoint, status, problem)
    return body


#: Path endings that ask for a streamed reply without ``"stream": true`` in the body
#: (Vertex AI, Bedrock).
_STREAM_PATHS = (":streamRawPredict", "/invoke-with-response-stream")


@dataclass(frozen=True)
class AnthropicMessagesWire(RequestCarriesAll):
    """The Anthropic Messages reader (a :class:`~toolreplay.wire.protocol.WireProtocol`)."""

    name: str = "Anthropic Messages"

    def is_request(self, exchange: Exchange) -> bool:
        body = exchange.request_body
        if exchange.method.upper() != "POST" or not isinstance(body, dict):
            return False
        if not isinstance(body.get("messages"), list):
            return False
        path = exchange.path.rstrip("/")
        if path.endswith("/chat/completions"):
            return False
        if path.endswith("/v1/messages") or "anthropic_version" in body:
            return True
        return path.endswith("/messages") and "max_tokens" in body

    def request(self, exchange: Exchange, history: History) -> ModelRequest:
        body = exchange.request_body
        return ModelRequest(
            messages=conversation(body),
            # {"type": "none"}: tools declared, none callable
            tools_offered=bool(body.get("tools")) and not calls_forbidden(body),
            streamed=body.get("stream") is True or exchange.path.endswith(_STREAM_PATHS),
        )

    def reply(self, exchange: Exchange) -> ModelReply:
        """The reply (:func:`message_reply` of the Message, streamed or not); an error
        status first (:func:`~toolreplay.wire.replies.exchange_status_error`)."""
        if (fault := exchange_status_error(exchange)) is not None:
            raise fault
        return message_reply(_reply_body(exchange))


#: The Anthropic Messages reader.
ANTHROPIC_MESSAGES = AnthropicMessagesWire()

__all__ = [
    "ANTHROPIC_MESSAGES",
    "AnthropicMessagesWire",
    "assemble_message_stream",
    "conversation",
    "message_reply",
    "message_usage",
]
