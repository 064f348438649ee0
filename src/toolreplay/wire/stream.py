"""Streamed Chat Completions replies: an event stream (``text/event-stream``) assembled into
the one chat completion it stands for, the way the openai SDK accumulates the chunks.

A streamed reply is a sequence of server-sent events, each ``data: {chat.completion.chunk}``
followed by a blank line, ended by ``data: [DONE]``::

    data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}], ...}

    data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}], ...}

    data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2}}

    data: [DONE]

:func:`split_events` cuts a body into its events (chunk boundaries kept);
:func:`assemble_chat_stream` turns them into a chat-completion dict that
:func:`toolreplay.wire.replies.parse_chat_reply` reads like any unstreamed body. A stream cut
off (no ``[DONE]``, and a choice left without a finish reason), a chunk that is not JSON, or
an ``error`` event raises :class:`StreamError`, naming the chunk (its index among the events
and a snippet).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeGuard

#: The SSE ``data`` payload that ends an OpenAI-compatible stream.
DONE = "[DONE]"

#: Delta fields that are text pieces to join (the reasoning fields among them).
_TEXT_FIELDS = ("content", "refusal", "reasoning_content", "reasoning")
#: A delta's list fields whose items accumulate: ``annotations`` (``url_citation``\ s of
#: OpenAI's search models) and ``executed_tools`` (Groq's compound models), the hosted
#: tools' traces (:mod:`toolreplay.wire.hosted`).
_LIST_FIELDS = ("annotations", "executed_tools")
#: A chunk's top-level fields kept from the last chunk that sends them non-empty (Perplexity's
#: search results).
_SEARCH_FIELDS = ("citations", "search_results")


class StreamError(ValueError):
    """An event stream that does not assemble into a reply: cut off (no ``[DONE]``, and no
    ``finish_reason`` for a choice it opened, or no choice at all), a chunk
    that is not a JSON object, or an error event. ``chunk`` is the 0-based index of the event
    at fault among the stream's events (:func:`split_events`: comment lines such as
    OpenRouter's ``: OPENROUTER PROCESSING`` are not events), the last one read when the
    stream was cut off, None for an empty stream; ``snippet`` the start of its text,
    ``problem`` what was wrong; ``str()`` names all three."""

    def __init__(self, problem: str, chunk: int | None = None, snippet: str = "") -> None:
        where = f"chunk {chunk}" if chunk is not None else "the stream"
        text = f"{where}: {problem}"
        if snippet:
            text += f": {snippet}"
        super().__init__(text)
        self.problem = problem
        self.chunk = chunk
        self.snippet = snippet


@dataclass(frozen=True)
class StreamEvent:
    """One server-sent event: ``event`` is its ``event:`` field (``"message"`` when absent),
    ``data`` its ``data:`` lines joined by newlines, ``text`` the event as sent (its lines,
    without the blank line that ends it)."""

    event: str
    data: str
    text: str


def _snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def json_text(value: Any) -> Any:
    """``value`` as the text the protocol specifies where a provider sent another JSON value
    in a field typed as a string: an object, list, number or boolean as its JSON text
    (``json.dumps``, non-ASCII kept); a string or None as is. Cloudflare Workers AI sends a
    structured reply's ``content`` as an object, some servers ``arguments`` as one."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def is_content_parts(content: Any) -> TypeGuard[list[Any]]:
    """Whether ``content`` is a list of content parts: each a string, or an object holding a
    string ``text`` or ``refusal``, or whose ``type`` names a field it holds
    (``{"type": "image_url", "image_url": ...}``). A list holding anything else (a
    structured reply sent as a JSON array) is a value, not parts."""
    if not isinstance(content, list):
        return False
    return all(
        isinstance(p, str)
        or (
            isinstance(p, dict)
            and (
                isinstance(p.get("text"), str)
                or isinstance(p.get("refusal"), str)
                or (isinstance(p.get("type"), str) and p["type"] in p)
            )
        )
        for p in content
    )


def is_event_stream(body: str | bytes, content_type: str = "") -> bool:
    """Whether ``body`` (with its ``content-type``, if known) is a server-sent event stream:
    the content type says ``text/event-stream``, or the text starts with ``data:``/``event:``."""
    if content_type.split(";")[0].strip().lower() == "text/event-stream":
        return True
    head = body[:64].decode("utf-8", "replace") if isinstance(body, bytes) else body[:64]
    return head.lstrip().startswith(("data:", "event:"))


def split_events(body: str | bytes) -> list[StreamEvent]:
    """The events of an SSE body, in order, per the SSE rules: lines end in ``\\n``, ``\\r\\n``
    or ``\\r``; a blank line ends an event; ``data:`` lines of one event are joined by
    ``\\n``; comment lines (``:``) and fields other than ``event``/``data`` are skipped; one
    space after the colon is dropped. An event without data lines is dropped, except a named
    one (``event: error``). Text after the last blank line is a last event."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    events: list[StreamEvent] = []
    name, data, lines = "", [], []  # type: ignore[var-annotated]
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if data or name:
                events.append(StreamEvent(name or "message", "\n".join(data), "\n".join(lines)))
            name, data, lines = "", [], []
            continue
        lines.append(line)
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
    if data or name:
        events.append(StreamEvent(name or "message", "\n".join(data), "\n".join(lines)))
    return events


def event_chunks(body: str | bytes) -> list[bytes]:
    """The body cut at event boundaries: each piece one event with the blank line that ends it
    (their concatenation is the body, byte for byte). What replay serves, piece by piece."""
    raw = body.encode("utf-8") if isinstance(body, str) else body
    pieces: list[bytes] = []
    start = 0
    for sep in (b"\r\n\r\n", b"\n\n", b"\r\r"):
        if sep in raw:
            break
    else:
        return [raw] if raw else []
    while True:
        end = raw.find(sep, start)
        if end < 0:
            if start < len(raw):
                pieces.append(raw[start:])
            return pieces
        pieces.append(raw[start : end + len(sep)])
        start = end + len(sep)


def _merge_tool_calls(slots: list[dict[str, Any]], deltas: list[Any], chunk: int) -> None:
    """Tool-call deltas merged into ``slots`` by ``index``: ``id``, ``type`` and
    ``function.name`` (a custom tool call's ``custom.name``) are kept from the first chunk that
    sends them (providers that repeat them on every chunk are not doubled),
    ``function.arguments`` pieces (``custom.input`` pieces) are joined. A delta
    that brings another id and a name starts a new call (parallel calls sent at one index, as
    Gemini's OpenAI-compatible endpoint does: :func:`_starts_another`); a delta without ``index``
    continues the last call unless it brings a new id."""
    for delta in deltas:
        if not isinstance(delta, dict):
            raise StreamError("a tool-call delta is not an object", chunk, _snippet(str(delta)))
        index = delta.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            new_id = delta.get("id")
            known = [s for s in slots if s["id"] == new_id] if new_id else []
            if known:
                slot = known[0]
            elif new_id or not slots:
                slot = _new_slot(slots, len(slots))
            else:
                slot = slots[-1]
        else:
            held = [s for s in slots if s["index"] == index]
            slot = held[-1] if held else _new_slot(slots, index)
            if _starts_another(delta, slot):
                slot = _new_slot(slots, index)
        if delta.get("id") and not slot["id"]:
            slot["id"] = delta["id"]
        if delta.get("type") and not slot["type"]:
            slot["type"] = delta["type"]
        for kind, field in (("function", "arguments"), ("custom", "input")):
            part = delta.get(kind)
            if not isinstance(part, dict) or not part:  # an empty custom: {} echoed: nothing
                continue
            slot["kinds"].add(kind)
            if part.get("name") and not slot["name"]:
                slot["name"] = part["name"]
            value = part.get(field)
            if isinstance(value, str):
                slot[field] = (slot[field] or "") + value
            elif value is not None:  # a server sending parsed JSON, in one piece
                slot[field] = value


def _starts_another(delta: dict[str, Any], slot: dict[str, Any]) -> bool:
    """Whether a delta at an index already holding a call is the head of another call: it
    brings an id other than the held one *and* a function name. Gemini's OpenAI-compatible
    endpoint sends parallel calls all at index 0, each whole with its own id; a provider that
    changes the id on a call's later chunks (Poolside) sends no name there, so those still
    continue the call."""
    new_id = delta.get("id")
    named = any(
        isinstance(delta.get(kind), dict) and bool(delta[kind].get("name"))
        for kind in ("function", "custom")
    )
    return bool(new_id and slot["id"] and new_id != slot["id"] and named)


def _new_slot(slots: list[dict[str, Any]], index: int) -> dict[str, Any]:
    slot: dict[str, Any] = {
        "index": index,
        "id": "",
        "type": "",
        "name": "",
        "arguments": None,
        "input": None,
        "kinds": set(),  # which of function, custom the deltas sent
    }
    slots.append(slot)
    return slot


def _call_message(slot: dict[str, Any]) -> dict[str, Any]:
    """One assembled tool call in the message's shape: a custom tool call
    (``{"type": "custom", "custom": {"name", "input"}}``) when its type says ``custom``, or
    when no type came and its deltas sent ``custom`` and no ``function``; else a function
    call."""
    custom = slot["type"] == "custom" or (not slot["type"] and slot["kinds"] == {"custom"})
    if custom:
        return {
            "id": slot["id"] or None,
            "type": "custom",
            "custom": {"name": slot["name"], "input": slot["input"]},
        }
    return {
        "id": slot["id"] or None,
        "type": slot["type"] or "function",
        "function": {"name": slot["name"], "arguments": slot["arguments"]},
    }


def _merge_details(acc: list[Any], items: list[Any]) -> None:
    """``reasoning_details`` items: an item with the ``index`` of one already held has its
    text fields joined onto it (as the SDK's accumulation does), any other is appended."""
    for item in items:
        held = None
        if isinstance(item, dict) and isinstance(item.get("index"), int):
            held = next(
                (a for a in acc if isinstance(a, dict) and a.get("index") == item["index"]), None
            )
        if held is None:
            acc.append(dict(item) if isinstance(item, dict) else item)
            continue
        for key, value in item.items():
            if isinstance(value, str) and isinstance(held.get(key), str) and key != "type":
                held[key] += value
            elif held.get(key) is None:
                held[key] = value


class _Choice:
    def __init__(self, index: int) -> None:
        self.index = index
        self.role = "assistant"
        self.text: dict[str, str | None] = dict.fromkeys(_TEXT_FIELDS)
        self.details: list[Any] | None = None
        self.calls: list[dict[str, Any]] = []
        self.function_call: dict[str, Any] | None = None
        self.finish_reason: str | None = None
        self.lists: dict[str, list[Any]] = {}  # annotations, executed_tools: items appended

    def add(self, choice: dict[str, Any], chunk: int) -> None:
        delta = choice.get("delta")
        if delta is None:
            delta = choice.get("message")  # a server that sends whole messages as chunks
        if isinstance(delta, dict):
            if isinstance(delta.get("role"), str):
                self.role = delta["role"]
            for name in _TEXT_FIELDS:
                piece = delta.get(name)
                if name == "content" and is_content_parts(piece):  # content parts (Mistral)
                    piece = "".join(
                        p["text"]
                        for p in piece
                        if isinstance(p, dict) and p.get("type") == "text" and "text" in p
                    )
                elif name == "content":  # another JSON value: its text (json_text)
                    piece = json_text(piece)
                if isinstance(piece, str):
                    self.text[name] = (self.text[name] or "") + piece
            details = delta.get("reasoning_details")
            if isinstance(details, list):
                self.details = self.details or []
                _merge_details(self.details, details)
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                _merge_tool_calls(self.calls, calls, chunk)
            for name in _LIST_FIELDS:
                if isinstance(items := delta.get(name), list):
                    self.lists.setdefault(name, []).extend(items)
            legacy = delta.get("function_call")
            if isinstance(legacy, dict):
                held = self.function_call = self.function_call or {"name": "", "arguments": ""}
                held["name"] = held["name"] or legacy.get("name") or ""
                if isinstance(legacy.get("arguments"), str):
                    held["arguments"] += legacy["arguments"]
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]

    def message(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": self.role, "content": self.text["content"]}
        for name in _TEXT_FIELDS[1:]:
            if self.text[name] is not None:
                msg[name] = self.text[name]
        if self.details is not None:
            msg["reasoning_details"] = self.details
        if self.calls:
            msg["tool_calls"] = [
                _call_message(s)
                for s in sorted(self.calls, key=lambda s: s["index"])  # stable: sent order
            ]
        if self.function_call is not None:
            msg["function_call"] = self.function_call
        return msg | self.lists


def _chunk_usage(chunk: dict[str, Any]) -> Any:
    usage = chunk.get("usage")
    if usage is None and isinstance(chunk.get("x_groq"), dict):
        usage = chunk["x_groq"].get("usage")  # Groq's older streams put it there
    return usage


def assemble_chat_stream(body: str | bytes | Iterable[StreamEvent]) -> dict[str, Any]:
    """The chat completion an event stream stands for, as a JSON-shaped dict
    (``{"id", "object": "chat.completion", "created", "model", "choices": [{"index",
    "message", "finish_reason"}], "usage"}``), assembled the way the openai SDK does:

    - ``content``, ``refusal``, ``reasoning_content`` and ``reasoning`` pieces are joined
      (``content`` given as a list of parts: its ``text`` parts);
      ``reasoning_details`` items are merged by their ``index``, else appended;
    - tool calls are merged by ``index``: ``id``, ``type`` and ``function.name`` from the
      first chunk that sends them, ``function.arguments`` pieces joined;
    - ``finish_reason`` is the last one sent for each choice; ``usage`` the last one sent
      (the ``stream_options.include_usage`` chunk with empty ``choices``, or Groq's
      ``x_groq.usage``); ``id``, ``model``, ``created`` from the first chunk that has them;
    - a delta's ``annotations`` and ``executed_tools`` items are appended, and a chunk's
      top-level ``citations`` and ``search_results`` (Perplexity) kept from the last chunk
      that sends them non-empty: the traces of hosted tools (:mod:`toolreplay.wire.hosted`).

    A stream that ends without ``data: [DONE]`` is complete when every choice it opened has
    its ``finish_reason`` (the HuggingFace router sends none after its last chunk, which holds
    the finish reason and the usage; the openai SDK's accumulation gives the same final
    completion with or without it); a choice left without one, or no choice at all, is a
    stream cut off.

    Raises :class:`StreamError` naming the chunk (0-based event index and a snippet) for an
    event whose data is not a JSON object, an ``error`` event or a chunk holding ``error``,
    a stream cut off (the last event named), and an empty stream."""
    events = split_events(body) if isinstance(body, (str, bytes)) else list(body)
    if not events:
        raise StreamError("the event stream is empty: no chunk, no [DONE]")
    top: dict[str, Any] = {}
    choices: dict[int, _Choice] = {}
    usage: Any = None
    done = False
    for i, event in enumerate(events):
        if event.data.strip() == DONE:
            done = True
            break
        if event.event == "error":
            raise StreamError("the server sent an error event", i, _snippet(event.text))
        try:
            chunk = json.loads(event.data)
        except ValueError as exc:
            raise StreamError(
                f"the chunk is not valid JSON ({exc}); the stream is broken",
                i,
                _snippet(event.text),
            ) from None
        if not isinstance(chunk, dict):
            raise StreamError("the chunk is not a JSON object", i, _snippet(event.text))
        if chunk.get("error") is not None:
            raise StreamError("the chunk reports an error", i, _snippet(event.data))
        for key in ("id", "model", "created", "system_fingerprint"):
            if key not in top and chunk.get(key) is not None:
                top[key] = chunk[key]
        top |= {key: chunk[key] for key in _SEARCH_FIELDS if chunk.get(key)}
        if (chunk_usage := _chunk_usage(chunk)) is not None:
            usage = chunk_usage
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                raise StreamError("a choice is not an object", i, _snippet(event.data))
            index = choice.get("index", 0)
            index = index if isinstance(index, int) else 0
            choices.setdefault(index, _Choice(index)).add(choice, i)
    finished = bool(choices) and all(c.finish_reason for c in choices.values())
    if not done and not finished:
        last = len(events) - 1
        raise StreamError(
            "the stream is cut off: it ends without data: [DONE] "
            + ("and before a finish reason" if choices else "and holds no choice"),
            last,
            _snippet(events[last].text),
        )
    completion: dict[str, Any] = {
        "id": top.get("id"),
        "object": "chat.completion",
        "created": top.get("created"),
        "model": top.get("model"),
        "choices": [
            {"index": c.index, "message": c.message(), "finish_reason": c.finish_reason}
            for c in sorted(choices.values(), key=lambda c: c.index)
        ],
    }
    for key in ("system_fingerprint", *_SEARCH_FIELDS):
        if key in top:
            completion[key] = top[key]
    if usage is not None:
        completion["usage"] = usage
    return completion
