"""The Bedrock Converse wire reader: AWS Bedrock Runtime's ``Converse`` and ``ConverseStream``
APIs (``POST /model/{modelId}/converse`` and ``…/converse-stream``), whatever program sent
the requests (boto3, pydantic-ai, a hand-written loop).

Followed: the Amazon Bedrock API reference, ``Converse``
(https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html: request
``messages``, ``system``, ``toolConfig``; response ``output.message``, ``stopReason``,
``usage``), ``ConverseStream`` (…/API_runtime_ConverseStream.html: events
``messageStart``, ``contentBlockStart``, ``contentBlockDelta``, ``contentBlockStop``,
``messageStop``, ``metadata``, and the exception events), and the data types
``ContentBlock``, ``ToolUseBlock``, ``ToolResultBlock``, ``ReasoningContentBlock``; the
binary framing of a streamed reply (``application/vnd.amazon.eventstream``) as the AWS
event stream encoding specifies it (e.g. Amazon Transcribe's "Setting up a streaming
transcription", section "Event stream encoding"; awslabs/aws-c-event-stream).

- a **model request** is a ``POST`` to ``/model/{modelId}/converse`` or
  ``/model/{modelId}/converse-stream`` (the model id URL-encoded or not) whose JSON body holds
  ``messages``. In Chat Completions form: ``system``'s ``text`` blocks are a leading
  ``system`` message; an ``assistant`` message's ``text`` blocks are its content (joined),
  its ``toolUse`` blocks its ``tool_calls`` (``toolUseId``, ``name``, ``input`` as JSON),
  its ``reasoningContent`` blocks its ``reasoning_details`` (``reasoningText.text`` with its
  ``signature``; ``redactedContent`` as ``reasoning.encrypted`` with the bytes under
  ``data``); a ``user`` message's ``toolResult`` blocks are ``tool`` messages (their
  ``text`` and ``json`` items as text, one per line; ``is_error`` when ``status`` is
  ``error``), placed before a ``user`` message of its other blocks (one text as a string,
  else a list of parts; ``image``/``document``/``video`` as parts without their bytes).
  Server-side tools (a ``toolUse`` of ``type: server_tool_use`` and the ``toolResult`` the
  service put in the assistant message) ran on AWS: they are not the program's tool calls
  and are skipped; so is any block not named here. Tools are offered when
  ``toolConfig.tools`` is not empty; it is streamed when the path ends in
  ``converse-stream``.
- the **reply**: ``output.message`` read as above; ``stopReason`` in Chat Completions terms:
  ``end_turn``/``stop_sequence`` → ``stop``, ``tool_use`` → ``tool_calls``,
  ``max_tokens``/``model_context_window_exceeded`` → ``length``,
  ``guardrail_intervened``/``content_filtered`` → ``content_filter``, any other value
  ``stop`` (``tool_calls`` when the reply holds calls); usage ``inputTokens`` and
  ``outputTokens``. A streamed reply's frames are decoded (:func:`event_stream_messages`,
  both CRCs checked) and its events assembled into that same shape: text and reasoning
  deltas joined per content block, a ``toolUse`` block's ``input`` pieces joined into its
  arguments, ``messageStop``'s ``stopReason``, ``metadata``'s ``usage``.

:class:`~toolreplay.wire.replies.ModelReplyError` for an error status, a body that is not a
Converse response, a broken frame, an exception or error event in the stream, or a stream
that ends before ``messageStop`` (cut off).
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolreplay.wire.episode import NO_FINISH_REASON, Message, ModelReply, ToolCall, Usage
from toolreplay.wire.hosted import bedrock_hosted
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.protocol import History, ModelRequest, RequestCarriesAll
from toolreplay.wire.replies import ModelReplyError, exchange_status_error
from toolreplay.wire.tool_choice import calls_forbidden

#: ``stopReason`` → ``finish_reason`` (any other value: ``stop``; none sent:
#: :data:`~toolreplay.wire.episode.NO_FINISH_REASON`).
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}

_PATH = re.compile(r"/model/[^?#]+/(converse|converse-stream)/?$")

#: Header value types of the event stream encoding with a fixed size, by type number
#: (0 and 1 are the booleans, no bytes; 6 and 7 bytes and string, 2-byte length first).
_FIXED_SIZES = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}


class EventStreamError(ValueError):
    """A body that is not an AWS event stream, or a frame of it that is broken (sizes,
    CRCs, headers); the message names the frame (0-based) and its byte offset."""


def event_stream_messages(body: bytes) -> list[tuple[dict[str, Any], bytes]]:
    """The messages of an ``application/vnd.amazon.eventstream`` body, in order, each its
    headers (name → value; strings decoded, other types as their raw bytes) and payload.
    Each frame: total length and headers length (4 bytes each, big-endian), the CRC32 of
    those 8 bytes, the headers, the payload, the CRC32 of all before it.
    :class:`EventStreamError` for a frame that breaks any of it."""
    messages: list[tuple[dict[str, Any], bytes]] = []
    offset = 0
    while offset < len(body):
        where = f"frame {len(messages)} (byte {offset})"
        if len(body) - offset < 16:
            raise EventStreamError(f"{where}: {len(body) - offset} bytes, shorter than a frame")
        total, headers_length, prelude_crc = struct.unpack_from(">III", body, offset)
        frame = body[offset : offset + total]
        if total < 16 + headers_length or len(frame) < total:
            raise EventStreamError(f"{where}: length {total} does not fit the body (cut off?)")
        if zlib.crc32(frame[:8]) != prelude_crc or zlib.crc32(frame[:-4]) != int.from_bytes(
            frame[-4:], "big"
        ):
            raise EventStreamError(f"{where}: CRC mismatch")
        headers: dict[str, Any] = {}
        raw, at = frame[12 : 12 + headers_length], 0
        try:
            while at < len(raw):
                name_length = raw[at]
                name = raw[at + 1 : at + 1 + name_length].decode("utf-8")
                kind = raw[at + 1 + name_length]
                at += 2 + name_length
                if kind in _FIXED_SIZES:
                    size = _FIXED_SIZES[kind]
                else:
                    (size,) = struct.unpack_from(">H", raw, at)
                    at += 2
                value = raw[at : at + size]
                headers[name] = value.decode("utf-8") if kind == 7 else value
                at += size
        except (IndexError, struct.error, UnicodeDecodeError) as exc:
            raise EventStreamError(f"{where}: broken headers ({exc})") from None
        messages.append((headers, frame[12 + headers_length : -4]))
        offset += total
    return messages


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _reasoning_item(block: Any) -> dict[str, Any] | None:
    if not isinstance(block, Mapping):
        return None
    text = block.get("reasoningText")
    if isinstance(text, Mapping) and isinstance(text.get("text"), str):
        item = {"type": "reasoning.text", "text": text["text"]}
        if isinstance(text.get("signature"), str) and text["signature"]:
            item["signature"] = text["signature"]
        return item
    if block.get("redactedContent") is not None:
        return {"type": "reasoning.encrypted", "data": block["redactedContent"]}
    return None


def _assistant(blocks: Any) -> tuple[str | None, tuple[ToolCall, ...], list[dict[str, Any]]]:
    """An assistant message's content blocks: its text, tool calls and reasoning items."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[dict[str, Any]] = []
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, Mapping):
            continue
        use = block.get("toolUse")
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif isinstance(use, Mapping) and use.get("type") != "server_tool_use":
            args = use.get("input")
            arguments = args if isinstance(args, str) else _json({} if args is None else args)
            calls.append(ToolCall(str(use.get("toolUseId") or ""), str(use.get("name")), arguments))
        elif (item := _reasoning_item(block.get("reasoningContent"))) is not None:
            reasoning.append(item)
    return "".join(texts) or None, tuple(calls), reasoning


def _result_text(items: Any) -> str:
    """A ``toolResult``'s ``content``: ``text`` items as sent, ``json`` items as JSON, one
    per line; other items (images, documents) left out."""
    pieces = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("text"), str):
            pieces.append(item["text"])
        elif isinstance(item, Mapping) and "json" in item:
            pieces.append(_json(item["json"]))
    return "\n".join(pieces)


def _user(blocks: Any) -> list[Message]:
    """A user message's content blocks: its tool results as ``tool`` messages, then its
    other blocks as one ``user`` message."""
    messages: list[Message] = []
    parts: list[dict[str, Any]] = []
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, Mapping):
            continue
        result = block.get("toolResult")
        if isinstance(result, Mapping):
            message: Message = {
                "role": "tool",
                "tool_call_id": str(result.get("toolUseId") or ""),
                "content": _result_text(result.get("content")),
            }
            if result.get("status") == "error":
                message["is_error"] = True
            messages.append(message)
        elif isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        else:
            for kind in ("image", "document", "video"):
                if isinstance(media := block.get(kind), Mapping):
                    parts.append({"type": kind, "format": media.get("format")})
    if len(parts) == 1 and parts[0]["type"] == "text":
        messages.append({"role": "user", "content": parts[0]["text"]})
    elif parts:
        messages.append({"role": "user", "content": parts})
    return messages


def _messages(body: Mapping[str, Any]) -> list[Message]:
    messages: list[Message] = []
    system = body.get("system")
    texts = [
        b["text"]
        for b in (system if isinstance(system, list) else ())
        if isinstance(b, Mapping) and isinstance(b.get("text"), str)
    ]
    if texts:
        messages.append({"role": "system", "content": "\n".join(texts)})
    for turn in body["messages"]:
        if not isinstance(turn, Mapping):
            continue
        if turn.get("role") == "assistant":
            text, calls, reasoning = _assistant(turn.get("content"))
            message: Message = {"role": "assistant", "content": text}
            if reasoning:
                message["reasoning_details"] = reasoning
            if calls:
                message["tool_calls"] = [c.to_message() for c in calls]
            messages.append(message)
        else:
            messages.extend(_user(turn.get("content")))
    return messages


def _delta(block: dict[str, Any], delta: Mapping[str, Any]) -> None:
    """One ``contentBlockDelta`` added to its block (the Converse response's shape)."""
    if isinstance(delta.get("text"), str):
        block["text"] = block.get("text", "") + delta["text"]
    elif isinstance(use := delta.get("toolUse"), Mapping):
        block.setdefault("toolUse", {})
        block["toolUse"]["input"] = block["toolUse"].get("input", "") + str(use.get("input", ""))
    elif isinstance(reasoning := delta.get("reasoningContent"), Mapping):
        if reasoning.get("redactedContent") is not None:
            block["reasoningContent"] = {"redactedContent": reasoning["redactedContent"]}
            return
        kept = block.setdefault("reasoningContent", {}).setdefault("reasoningText", {"text": ""})
        kept["text"] += reasoning.get("text") or ""
        if isinstance(reasoning.get("signature"), str):
            kept["signature"] = reasoning["signature"]


def assemble_converse_stream(body: bytes) -> dict[str, Any]:
    """A ``ConverseStream`` body (event stream frames) as the ``Converse`` response it stands
    for: ``output.message.content`` (one block per ``contentBlockIndex``), ``stopReason``,
    ``usage``. :class:`EventStreamError` for a broken frame, an exception or error event, or
    a stream without ``messageStop``."""
    blocks: dict[int, dict[str, Any]] = {}
    reply: dict[str, Any] = {}
    for n, (headers, payload) in enumerate(event_stream_messages(body)):
        kind = headers.get(":message-type", "event")
        if kind != "event":
            name = headers.get(":exception-type") or headers.get(":error-code") or kind
            text = payload.decode("utf-8", "replace") or headers.get(":error-message", "")
            raise EventStreamError(f"frame {n}: {kind} event {name}: {text[:200]}")
        try:
            event = json.loads(payload)
        except ValueError:
            raise EventStreamError(f"frame {n}: the payload is not JSON") from None
        if not isinstance(event, dict):
            continue
        index = event.get("contentBlockIndex")
        block = blocks.setdefault(index, {}) if isinstance(index, int) else {}
        name = headers.get(":event-type")
        if name == "contentBlockStart" and isinstance(event.get("start"), Mapping):
            block.update({k: dict(v) for k, v in event["start"].items() if isinstance(v, Mapping)})
        elif name == "contentBlockDelta" and isinstance(event.get("delta"), Mapping):
            _delta(block, event["delta"])
        elif name == "messageStop":
            reply["stopReason"] = event.get("stopReason")
        elif name == "metadata":
            reply["usage"] = event.get("usage")
    if "stopReason" not in reply:
        raise EventStreamError("the stream ends before messageStop (cut off)")
    content = [blocks[i] for i in sorted(blocks)]
    return {"output": {"message": {"role": "assistant", "content": content}}, **reply}


def _count(usage: Any, name: str) -> int:
    value = usage.get(name) if isinstance(usage, Mapping) else None
    return value if isinstance(value, int) else 0


@dataclass(frozen=True)
class BedrockConverseWire(RequestCarriesAll):
    """The Bedrock Converse reader (a :class:`~toolreplay.wire.protocol.WireProtocol`); the
    shapes read: this module's docstring."""

    name: str = "Bedrock Converse"

    def is_request(self, exchange: Exchange) -> bool:
        return (
            exchange.method.upper() == "POST"
            and _PATH.search(exchange.path) is not None
            and isinstance(exchange.request_body, Mapping)
            and isinstance(exchange.request_body.get("messages"), list)
        )

    def request(self, exchange: Exchange, history: History) -> ModelRequest:
        body = exchange.request_body
        config = body.get("toolConfig")
        tools = config.get("tools") if isinstance(config, Mapping) else None
        return ModelRequest(
            messages=tuple(_messages(body)),
            tools_offered=isinstance(tools, list) and bool(tools) and not calls_forbidden(body),
            streamed=exchange.path.rstrip("/").endswith("converse-stream"),
        )

    def reply(self, exchange: Exchange) -> ModelReply:
        """The reply's assistant message (a streamed one assembled first) as a
        :class:`ModelReply`; :class:`ModelReplyError` as the module docstring lists."""
        if (fault := exchange_status_error(exchange)) is not None:
            raise fault
        endpoint = exchange.uri.split("?", 1)[0]
        raw = exchange.response_body
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if body is None and exchange.path.rstrip("/").endswith("converse-stream"):
            try:
                body = assemble_converse_stream(raw)
            except EventStreamError as exc:
                problem = f"the streamed reply (AWS event stream) is unusable: {exc}"
                raise ModelReplyError(endpoint, exchange.status, problem) from None
        output = body.get("output") if isinstance(body, Mapping) else None
        message = output.get("message") if isinstance(output, Mapping) else None
        if not isinstance(message, Mapping):
            shown = raw[:120].decode("utf-8", "replace")
            problem = f"not a Converse response (no output.message): {shown!r}"
            raise ModelReplyError(endpoint, exchange.status, problem)
        text, calls, reasoning = _assistant(message.get("content"))
        finish = STOP_REASONS.get(str(body.get("stopReason")), "stop")
        if finish in ("stop", "tool_calls"):
            finish = "tool_calls" if calls else "stop"
        if body.get("stopReason") is None:  # none sent: finished or cut off, not told
            finish = NO_FINISH_REASON
        usage = body.get("usage")
        return ModelReply(
            text,
            calls,
            finish,
            Usage(_count(usage, "inputTokens"), _count(usage, "outputTokens")),
            reasoning={"reasoning_details": reasoning} if reasoning else {},
            hosted_tools=bedrock_hosted(message.get("content")),
        )


#: The Bedrock Converse reader.
BEDROCK_CONVERSE = BedrockConverseWire()

__all__ = [
    "BEDROCK_CONVERSE",
    "STOP_REASONS",
    "BedrockConverseWire",
    "EventStreamError",
    "assemble_converse_stream",
    "event_stream_messages",
]
