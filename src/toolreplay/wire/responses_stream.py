"""A streamed Responses API reply (``POST …/responses`` with ``"stream": true``): its
server-sent events assembled into the ``Response`` object they stand for, the way the openai
SDK's ``ResponseStreamState`` (``openai.lib.streaming.responses._responses``) does.

Events read (OpenAI API reference, "Streaming events" of ``POST /v1/responses``; the SDK's
``openai.types.responses.ResponseStreamEvent`` union):

- ``response.completed`` / ``response.incomplete``: the final ``Response``; its ``output`` is
  the reply. When the event holds no ``output`` (the field may be left out) or an empty one
  while items were streamed, the output is assembled from the events before it, each item as
  its ``response.output_item.done`` gave it, else as ``response.output_item.added`` began it
  and the deltas grew it (``response.output_text.delta``, ``response.refusal.delta``,
  ``response.reasoning_text.delta``, ``response.reasoning_summary_text.delta``,
  ``response.function_call_arguments.delta``, ``response.custom_tool_call_input.delta``, and
  their ``.done`` events);
- ``error`` (``{"type": "error", "code", "message"}``) and ``response.failed`` (its
  ``response.error``): the reply failed;
- ``response.created`` / ``response.in_progress`` / ``response.queued``: the response's id;
- every other event (hosted tools' progress, annotations, content-part ``.done``...) is
  skipped, and so is a ``data: [DONE]`` line some compatible servers (OpenRouter) end with.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from toolreplay.wire.stream import StreamError, StreamEvent, split_events

#: The events that end a stream with a usable response.
TERMINAL_EVENTS = ("response.completed", "response.incomplete")

#: Text deltas: event type -> (the item's list of parts, the event's index field, the part's
#: text field, the part's type when the event comes before its ``part.added``).
_DELTAS = {
    "response.output_text.delta": ("content", "content_index", "text", "output_text"),
    "response.refusal.delta": ("content", "content_index", "refusal", "refusal"),
    "response.reasoning_text.delta": ("content", "content_index", "text", "reasoning_text"),
    "response.reasoning_summary_text.delta": ("summary", "summary_index", "text", "summary_text"),
}

#: ``.done`` events carrying a part's whole text (in the field the delta grows): each read
#: like its delta event.
_DONES = {name.replace(".delta", ".done"): name for name in _DELTAS}

#: A call's text, grown by its deltas and given whole by its ``.done`` event (under the
#: same field name as the item's): event type -> the item's field.
_CALL_TEXT = {
    "response.function_call_arguments.delta": "arguments",
    "response.function_call_arguments.done": "arguments",
    "response.custom_tool_call_input.delta": "input",
    "response.custom_tool_call_input.done": "input",
}

#: Parts added before their text: event type -> (the item's list of parts, index field).
_PARTS = {
    "response.content_part.added": ("content", "content_index"),
    "response.reasoning_summary_part.added": ("summary", "summary_index"),
}


def _snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def error_text(error: Any) -> str:
    """A Responses API error in words: ``code: message`` from an error object
    (``{"code", "message"}``; an ``error`` event may nest it under ``error``), the text of a
    string, ``"no error given"`` for None."""
    if isinstance(error, dict) and isinstance(error.get("error"), dict):
        error = error["error"]
    if error is None:
        return "no error given"
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message")
        if code or message:
            return ": ".join(str(x) for x in (code, message) if x)
    if isinstance(error, str):
        return error
    return json.dumps(error, ensure_ascii=False, default=str)


def _index(chunk: dict[str, Any], field: str, fallback: int) -> int:
    value = chunk.get(field)
    return value if isinstance(value, int) and not isinstance(value, bool) else fallback


def _part(item: dict[str, Any], key: str, index: int, kind: str) -> dict[str, Any] | None:
    """The ``index``-th part of ``item[key]``, made (of type ``kind``) when the list is short;
    None when the item holds something else there."""
    parts = item.get(key)
    if parts is None:
        parts = item[key] = []
    if not isinstance(parts, list) or index < 0:
        return None
    while len(parts) <= index:
        parts.append({"type": kind})
    part = parts[index]
    return part if isinstance(part, dict) else None


def _apply(kind: str, chunk: dict[str, Any], items: dict[int, dict[str, Any]]) -> None:
    """One output event applied to the items begun so far (by ``output_index``)."""
    if kind == "response.output_item.added":
        if isinstance(chunk.get("item"), dict):
            items[_index(chunk, "output_index", len(items))] = copy.deepcopy(chunk["item"])
        return
    item = items.get(_index(chunk, "output_index", -1))
    if item is None:
        return  # an event for an item never begun: nothing to grow
    delta = chunk.get("delta")
    if kind in _PARTS:
        key, field = _PARTS[kind]
        part = chunk.get("part")
        kind_of = part.get("type") if isinstance(part, dict) else None
        held = _part(item, key, _index(chunk, field, 0), str(kind_of or "output_text"))
        if held is not None and isinstance(part, dict):
            held.update({k: v for k, v in part.items() if k not in held or not held[k]})
    elif kind in _DELTAS and isinstance(delta, str):
        key, field, text, kind_of = _DELTAS[kind]
        held = _part(item, key, _index(chunk, field, 0), kind_of)
        if held is not None:
            held[text] = str(held.get(text) or "") + delta
    elif kind in _DONES:
        key, field, text, kind_of = _DELTAS[_DONES[kind]]
        held = _part(item, key, _index(chunk, field, 0), kind_of)
        if held is not None and isinstance(chunk.get(text), str):
            held[text] = chunk[text]
    elif kind in _CALL_TEXT:
        name = _CALL_TEXT[kind]
        if kind.endswith(".delta") and isinstance(delta, str):
            item[name] = str(item.get(name) or "") + delta
        elif kind.endswith(".done") and isinstance(chunk.get(name), str):
            item[name] = chunk[name]


def _chunk(event: StreamEvent, number: int) -> dict[str, Any] | None:
    """The JSON object of one event; None for ``[DONE]``; :class:`StreamError` for data that
    is not a JSON object, or an ``error`` event without data."""
    data = event.data.strip()
    if data == "[DONE]":
        return None
    if not data and event.event == "error":
        raise StreamError("the server sent an error event", number, _snippet(event.text))
    try:
        chunk = json.loads(data)
    except ValueError as exc:
        raise StreamError(
            f"the event is not valid JSON ({exc}); the stream is broken",
            number,
            _snippet(event.text),
        ) from None
    if not isinstance(chunk, dict):
        raise StreamError("the event is not a JSON object", number, _snippet(event.text))
    return chunk


def assemble_response(body: str | bytes) -> dict[str, Any]:
    """The ``Response`` object (a JSON-shaped dict) a Responses API event stream ends with,
    assembled as the module docstring says.

    Raises :class:`~toolreplay.wire.stream.StreamError` naming the event (0-based index
    among the stream's events, and a snippet) for an ``error`` event or a ``response.failed``
    one (the error's code and message given), an event whose data is not a JSON object, a
    stream that ends without ``response.completed`` or ``response.incomplete`` (cut off),
    and an empty stream."""
    events = split_events(body)
    if not events:
        raise StreamError("the event stream is empty: no event, no response.completed")
    items: dict[int, dict[str, Any]] = {}
    done: dict[int, dict[str, Any]] = {}
    for number, event in enumerate(events):
        chunk = _chunk(event, number)
        if chunk is None:
            continue
        kind = chunk.get("type") if isinstance(chunk.get("type"), str) else event.event
        response = chunk.get("response")
        if kind == "error" or event.event == "error":
            problem = f"the server sent an error event ({error_text(chunk)})"
            raise StreamError(problem, number, _snippet(event.data))
        if kind == "response.failed":
            error = response.get("error") if isinstance(response, dict) else None
            problem = f"the response failed (response.failed: {error_text(error)})"
            raise StreamError(problem, number, _snippet(event.data))
        if kind in TERMINAL_EVENTS and isinstance(response, dict):
            output = response.get("output")
            if not isinstance(output, list) or (not output and (items or done)):
                streamed = [done.get(i) or items[i] for i in sorted(items.keys() | done.keys())]
                response = {**response, "output": streamed}
            return response
        if kind == "response.output_item.done" and isinstance(chunk.get("item"), dict):
            done[_index(chunk, "output_index", len(done))] = chunk["item"]
        else:
            _apply(str(kind), chunk, items)
    last = len(events) - 1
    raise StreamError(
        "the stream is cut off: it ends without response.completed or response.incomplete",
        last,
        _snippet(events[last].text),
    )


def stream_response_id(body: str | bytes) -> str | None:
    """The response's ``id`` as the stream names it (the first event carrying a ``response``
    with an id: ``response.created``, else a later one); None when none does. Never raises."""
    for event in split_events(body):
        try:
            chunk = json.loads(event.data)
        except ValueError:
            continue
        response = chunk.get("response") if isinstance(chunk, dict) else None
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            return str(response["id"])
    return None


__all__ = ["TERMINAL_EVENTS", "assemble_response", "error_text", "stream_response_id"]
