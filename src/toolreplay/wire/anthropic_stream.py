"""Anthropic Messages streamed replies: the event stream (``text/event-stream``) assembled into
the ``Message`` it stands for, as the anthropic SDK's ``accumulate_event`` does
(:func:`assemble_message_stream`), and the same events as Amazon Bedrock's
``invoke-with-response-stream`` sends them: AWS event-stream frames
(``application/vnd.amazon.eventstream``) whose payloads are ``{"bytes": base64(event JSON)}``
(:func:`assemble_bedrock_stream`; AWS Bedrock Runtime reference,
"InvokeModelWithResponseStream": ``PayloadPart.bytes``).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from toolreplay.wire.bedrock_converse import EventStreamError, event_stream_messages
from toolreplay.wire.stream import StreamError, split_events


def snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def error_text(error: Any) -> str:
    """An ``{"type": "error", "error": {"type", "message"}}`` body's error in words."""
    if isinstance(error, dict):
        kind, text = error.get("type"), error.get("message")
        if isinstance(kind, str) or isinstance(text, str):
            return ": ".join(str(x) for x in (kind, text) if x)
    return snippet(json.dumps(error, ensure_ascii=False, default=str))


class _Stream:
    """The Message a stream stands for, built event by event as ``accumulate_event`` does;
    blocks kept by their ``index``."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json: dict[int, str] = {}
        self.ended = False

    def add(self, kind: str, event: dict[str, Any], n: int, text: str) -> None:
        if kind != "message_start" and kind not in _EVENTS:
            return  # ping, and events added after this reader was written
        if self.message is None and kind != "message_start":
            raise StreamError(f"a {kind} event before message_start", n, snippet(text))
        if kind == "message_start":
            start = event.get("message")
            if not isinstance(start, dict):
                raise StreamError("message_start holds no message object", n, snippet(text))
            if self.message is not None:
                self._again(start, n, text)
                return
            usage = start.get("usage")
            self.message = {**start, "usage": dict(usage) if isinstance(usage, dict) else {}}
            held = start.get("content")
            for i, block in enumerate(held if isinstance(held, list) else ()):
                if isinstance(block, dict):
                    self.blocks[i] = dict(block)
        elif kind in ("content_block_start", "content_block_delta"):
            self._block(kind, event, n, text)
        elif kind == "message_delta":
            self._delta(event)
        elif kind == "message_stop":
            self.ended = True

    def _again(self, start: dict[str, Any], n: int, text: str) -> None:
        """A second ``message_start``: the same message's start sent twice (its ``id``
        repeated) is skipped; another message's start in the same stream (spliced
        generations, vercel/ai#18402) makes the stream unusable rather than merged."""
        assert self.message is not None
        held, given = self.message.get("id"), start.get("id")
        if isinstance(given, str) and given and given == held:
            return
        raise StreamError(
            f"a second message_start (message {given!r} while {held!r} was read): one "
            "stream holds one message, two would be merged",
            n,
            snippet(text),
        )

    def _block(self, kind: str, event: dict[str, Any], n: int, text: str) -> None:
        index = event.get("index")
        if not isinstance(index, int):
            raise StreamError(f"a {kind} event without an index", n, snippet(text))
        if kind == "content_block_start":
            block = event.get("content_block")
            self.blocks[index] = dict(block) if isinstance(block, dict) else {}
            return
        block = self.blocks.get(index)
        delta = event.get("delta")
        if block is None:
            raise StreamError(f"a delta to block {index}, never started", n, snippet(text))
        if not isinstance(delta, dict):
            return
        kind_of = delta.get("type")
        if kind_of == "signature_delta":
            block["signature"] = delta.get("signature")
        elif kind_of == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            self.json[index] = self.json.get(index, "") + delta["partial_json"]
        elif kind_of in ("text_delta", "thinking_delta"):
            into = kind_of.removesuffix("_delta")
            if isinstance(delta.get(into), str):
                block[into] = str(block.get(into) or "") + delta[into]

    def _delta(self, event: dict[str, Any]) -> None:
        assert self.message is not None
        delta = event.get("delta")
        if isinstance(delta, dict):
            for key in ("stop_reason", "stop_sequence", "stop_details"):
                if key in delta:
                    self.message[key] = delta[key]
        usage = event.get("usage")
        if isinstance(usage, dict):  # cumulative totals: they replace, when sent
            self.message["usage"].update({k: v for k, v in usage.items() if v is not None})
        self.ended = self.ended or self.message.get("stop_reason") is not None

    def result(self) -> dict[str, Any]:
        assert self.message is not None
        blocks = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if index in self.json:  # the input as the model streamed it
                raw = self.json[index]
                try:
                    block["input"] = json.loads(raw) if raw.strip() else {}
                except ValueError:
                    block["input"] = raw
            blocks.append(block)
        return {**self.message, "content": blocks}


#: The events after ``message_start`` that build the Message (``ping`` and others: skipped).
_EVENTS = ("content_block_start", "content_block_delta", "content_block_stop",
           "message_delta", "message_stop")  # fmt: skip


def assemble_message_stream(body: str | bytes) -> dict[str, Any]:
    """The ``Message`` an Anthropic event stream stands for, as a JSON-shaped dict, assembled
    as the anthropic SDK's ``accumulate_event`` does: the message of ``message_start``; each
    ``content_block_start`` block, by ``index``; ``text_delta``, ``thinking_delta`` and
    ``input_json_delta`` (``partial_json``) pieces joined, ``signature_delta`` set; a
    ``tool_use`` input parsed from its joined JSON (kept as the text when it does not parse);
    ``message_delta``'s ``stop_reason``, ``stop_sequence``, ``stop_details`` and usage counts
    (cumulative: each one sent replaces the one held). ``ping`` and unknown events (and
    unknown delta types) are skipped, and so is a ``message_start`` repeating the message's
    own ``id``.

    Raises :class:`~toolreplay.wire.stream.StreamError` naming the event (0-based index,
    snippet) for an ``error`` event, an event whose data is not a JSON object, an event before
    ``message_start``, a second ``message_start`` of another message (or without an id), a
    delta to a block never started, an empty stream, and a stream cut off: it ends with
    neither ``message_stop`` nor a ``message_delta`` giving the stop reason."""
    events = split_events(body)
    if not events:
        raise StreamError("the event stream is empty: no message_start, no message_stop")
    stream = _Stream()
    for n, event in enumerate(events):
        try:
            data = json.loads(event.data) if event.data.strip() else {}
        except ValueError as exc:
            raise StreamError(
                f"the event's data is not valid JSON ({exc})", n, snippet(event.text)
            ) from None
        if not isinstance(data, dict):
            raise StreamError("the event's data is not a JSON object", n, snippet(event.text))
        kind = event.event if event.event != "message" else str(data.get("type") or "")
        if kind == "error" or data.get("type") == "error":
            what = error_text(data.get("error"))
            raise StreamError(f"the server sent an error event ({what})", n, snippet(event.text))
        stream.add(kind, data, n, event.text)
    if stream.message is None or not stream.ended:
        last = len(events) - 1
        raise StreamError(
            "the stream is cut off: it ends without message_stop (no stop reason)",
            last,
            snippet(events[last].text),
        )
    return stream.result()


def is_bedrock_stream(content_type: str) -> bool:
    """Whether a reply's content type is the AWS event stream."""
    return content_type.split(";")[0].strip().lower() == "application/vnd.amazon.eventstream"


def assemble_bedrock_stream(body: bytes) -> dict[str, Any]:
    """The ``Message`` of a Bedrock ``invoke-with-response-stream`` reply: each frame's payload
    ``bytes`` (base64) decoded to an Anthropic event, and the events assembled by
    :func:`assemble_message_stream`. :class:`~toolreplay.wire.stream.StreamError` for a broken
    frame, an exception frame (``:message-type: exception``, named with its type and message),
    or a payload that is not a base64 event."""
    try:
        frames = event_stream_messages(body)
    except EventStreamError as exc:
        raise StreamError(f"the AWS event stream is broken: {exc}") from None
    events = []
    for n, (headers, payload) in enumerate(frames):
        text = payload.decode("utf-8", "replace")
        if headers.get(":message-type") == "exception":
            kind = headers.get(":exception-type", "exception")
            raise StreamError(f"Bedrock sent an exception frame ({kind})", n, snippet(text))
        try:
            data = json.loads(payload)
            event = base64.b64decode(data["bytes"], validate=True).decode("utf-8")
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise StreamError("a frame that holds no base64 event", n, snippet(text)) from None
        events.append(f"data: {event}\n\n")
    return assemble_message_stream("".join(events))


__all__ = [
    "assemble_bedrock_stream",
    "assemble_message_stream",
    "error_text",
    "is_bedrock_stream",
    "snippet",
]
