"""A chat completion sent as an event stream, the way OpenAI's API streams it: what the
stand-in answers to a request that asks ``"stream": true``.

:func:`completion_events` cuts a ``chat.completion`` body into ``chat.completion.chunk``
events: the role (with the first content piece), the content in pieces, each tool call's id
and name in a first delta with its arguments following in pieces (by ``index``), the
``finish_reason`` in a last delta, the usage in a chunk with empty ``choices`` when
``stream_options.include_usage`` asked for it, then ``[DONE]``. Assembling them
(:func:`toolreplay.wire.stream.assemble_chat_stream`) gives the body back.
"""

from __future__ import annotations

import json
from typing import Any

#: Characters per content piece and per arguments piece (small, so every reply streams in
#: several chunks and the assembly is exercised).
PIECE = 12


def _pieces(text: str, size: int = PIECE) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def completion_events(completion: dict[str, Any], include_usage: bool) -> list[str]:
    """The ``data:`` payloads (JSON text, then ``[DONE]``) streaming ``completion`` (one
    choice, as the stand-in writes it)."""
    head = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
        "system_fingerprint": completion.get("system_fingerprint"),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    choice = completion["choices"][0]
    message = choice["message"]
    content = message.get("content")
    events: list[str] = []
    if content:
        pieces = _pieces(content)
        events.append(chunk({"role": "assistant", "content": pieces[0]}))
        events.extend(chunk({"content": piece}) for piece in pieces[1:])
    else:
        events.append(chunk({"role": "assistant", "content": None}))
    for index, call in enumerate(message.get("tool_calls") or []):
        first = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        events.append(chunk({"tool_calls": [first]}))
        events.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _pieces(call["function"]["arguments"])
        )
    events.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        usage = {**head, "choices": [], "usage": completion["usage"]}
        events.append(json.dumps(usage, ensure_ascii=False, separators=(",", ":")))
    events.append("[DONE]")
    return events
