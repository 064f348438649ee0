"""Reply bodies sent as event streams, the way each provider's API streams them: what the
stand-in and the scripted model answer to a request that asks for a stream.

:func:`completion_events` cuts a ``chat.completion`` body into ``chat.completion.chunk``
events: the role (with the first content piece), the content in pieces, each tool call's id
and name in a first delta with its arguments following in pieces (by ``index``), the
``finish_reason`` in a last delta, the usage in a chunk with empty ``choices`` when
``stream_options.include_usage`` asked for it, then ``[DONE]``. Assembling them
(:func:`toolreplay.wire.stream.assemble_chat_stream`) gives the body back.

The other protocols, each from its own non-streamed body (:mod:`toolreplay.doubles.replies`),
so that a whole body a script gives streams too:

- :func:`responses_events`: an OpenAI Responses API ``Response`` as its named events
  (``response.created``, ``response.in_progress``, per output item
  ``response.output_item.added``, a message's ``response.content_part.added``,
  ``response.output_text.delta`` pieces, ``response.output_text.done``,
  ``response.content_part.done``, a function call's
  ``response.function_call_arguments.delta`` pieces and ``.done``, a reasoning item's
  ``response.reasoning_summary_*`` / ``response.reasoning_text.*`` events,
  ``response.output_item.done``; then ``response.completed``), each with its
  ``sequence_number`` from 0 (platform.openai.com/docs/api-reference/responses-streaming,
  and the openai SDK's ``ResponseStreamState`` accumulation);
- :func:`anthropic_events`: an Anthropic ``Message`` as ``message_start``, per content block
  ``content_block_start``, its ``content_block_delta`` pieces (``text_delta``,
  ``input_json_delta``, ``thinking_delta`` then ``signature_delta``) and
  ``content_block_stop`` (a ``ping`` after the first start, as the API sends), then
  ``message_delta`` (stop reason, usage) and ``message_stop``
  (docs.anthropic.com/en/docs/build-with-claude/streaming);
- :func:`gemini_chunks`: a Gemini ``GenerateContentResponse`` as the
  ``GenerateContentResponse`` chunks of ``:streamGenerateContent``: text in pieces, a
  ``functionCall`` whole in its chunk, ``usageMetadata``, ``modelVersion`` and
  ``responseId`` on every chunk, the ``finishReason`` on the last
  (ai.google.dev/api/generate-content#method:-models.streamgeneratecontent).

A named event goes out as ``event: NAME`` and ``data: JSON`` lines (:func:`named_event`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
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


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def named_event(name: str, data: dict[str, Any]) -> str:
    """One server-sent event with its name: ``event: NAME``, ``data: JSON``, a blank line."""
    return f"event: {name}\ndata: {_compact(data)}\n\n"


class _Sequence:
    """Responses events numbered in order (``sequence_number`` from 0)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, event: str, /, **fields: Any) -> None:
        number = len(self.events)
        self.events.append((event, {"type": event, **fields, "sequence_number": number}))


def _message_events(emit: _Sequence, index: int, item: dict[str, Any]) -> None:
    where = {"item_id": item.get("id"), "output_index": index}
    emit(
        "response.output_item.added",
        output_index=index,
        item={**item, "status": "in_progress", "content": []},
    )
    for c_index, part in enumerate(item.get("content") or []):
        at = {**where, "content_index": c_index}
        if part.get("type") != "output_text":  # a refusal...: whole
            emit("response.content_part.added", **at, part=part)
            emit("response.content_part.done", **at, part=part)
            continue
        text = part.get("text") or ""
        emit("response.content_part.added", **at, part={**part, "text": ""})
        for piece in _pieces(text):
            emit("response.output_text.delta", **at, delta=piece, logprobs=[])
        emit("response.output_text.done", **at, text=text, logprobs=[])
        emit("response.content_part.done", **at, part=part)


def _function_call_events(emit: _Sequence, index: int, item: dict[str, Any]) -> None:
    where = {"item_id": item.get("id"), "output_index": index}
    emit(
        "response.output_item.added",
        output_index=index,
        item={**item, "arguments": "", "status": "in_progress"},
    )
    arguments = item.get("arguments") or ""
    for piece in _pieces(arguments):
        emit("response.function_call_arguments.delta", **where, delta=piece)
    emit("response.function_call_arguments.done", **where, arguments=arguments)


def _reasoning_events(emit: _Sequence, index: int, item: dict[str, Any]) -> None:
    where = {"item_id": item.get("id"), "output_index": index}
    emit(
        "response.output_item.added",
        output_index=index,
        item={**item, "summary": []},
    )
    for s_index, part in enumerate(item.get("summary") or []):
        at = {**where, "summary_index": s_index}
        text = part.get("text") or ""
        emit("response.reasoning_summary_part.added", **at, part={**part, "text": ""})
        for piece in _pieces(text):
            emit("response.reasoning_summary_text.delta", **at, delta=piece)
        emit("response.reasoning_summary_text.done", **at, text=text)
        emit("response.reasoning_summary_part.done", **at, part=part)
    for c_index, part in enumerate(item.get("content") or []):
        at = {**where, "content_index": c_index}
        text = part.get("text") or ""
        for piece in _pieces(text):
            emit("response.reasoning_text.delta", **at, delta=piece)
        emit("response.reasoning_text.done", **at, text=text)


def responses_events(response: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The named events (name, data) streaming the Responses API ``response``."""
    emit = _Sequence()
    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    for index, item in enumerate(response.get("output") or []):
        kind = item.get("type")
        if kind == "message":
            _message_events(emit, index, item)
        elif kind == "function_call":
            _function_call_events(emit, index, item)
        elif kind == "reasoning":
            _reasoning_events(emit, index, item)
        else:  # any other item: added and done whole
            emit("response.output_item.added", output_index=index, item=item)
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=response)
    return emit.events


def _block_deltas(block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    kind = block.get("type")
    if kind == "text":
        for piece in _pieces(block.get("text") or ""):
            yield {"type": "text_delta", "text": piece}
    elif kind == "tool_use":
        for piece in _pieces(_compact(block.get("input") or {})):
            yield {"type": "input_json_delta", "partial_json": piece}
    elif kind == "thinking":
        for piece in _pieces(block.get("thinking") or ""):
            yield {"type": "thinking_delta", "thinking": piece}
        yield {"type": "signature_delta", "signature": block.get("signature") or ""}


#: What a content block starts as before its deltas fill it, by type.
_BLOCK_START: dict[str, dict[str, Any]] = {
    "text": {"text": ""},
    "tool_use": {"input": {}},
    "thinking": {"thinking": "", "signature": ""},
}


def anthropic_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The named events (name, data) streaming the Anthropic Messages ``message``."""
    usage = message.get("usage") or {}
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": usage.get("input_tokens", 0), "output_tokens": 1},
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message.get("content") or []):
        first = {**block, **_BLOCK_START.get(str(block.get("type")), {})}
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": first},
            )
        )
        if index == 0:
            events.append(("ping", {"type": "ping"}))
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in _block_deltas(block)
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {
        "stop_reason": message.get("stop_reason"),
        "stop_sequence": message.get("stop_sequence"),
    }
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def gemini_chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``GenerateContentResponse`` chunks streaming the Gemini ``response`` (its first
    candidate)."""
    candidate = (response.get("candidates") or [{}])[0]
    content = candidate.get("content") or {}
    parts: list[dict[str, Any]] = []
    for part in content.get("parts") or []:
        if set(part) == {"text"}:  # plain text: in pieces; a thought, a call...: whole
            parts.extend({"text": piece} for piece in _pieces(part["text"]))
        else:
            parts.append(part)
    rest = {k: v for k, v in response.items() if k != "candidates"}
    chunks = []
    for part in parts or [{"text": ""}]:
        one = {
            "content": {"parts": [part], "role": content.get("role", "model")},
            "index": candidate.get("index", 0),
        }
        chunks.append({"candidates": [one], **rest})
    last = chunks[-1]["candidates"][0]
    last.update({k: v for k, v in candidate.items() if k not in ("content", "index")})
    return chunks
