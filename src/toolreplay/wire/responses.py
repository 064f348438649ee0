"""The OpenAI Responses API wire reader (``POST …/responses``), whatever program sent the
requests (pydantic-ai, openai-agents, a hand-written openai SDK loop) and whatever server
answered (OpenAI, Azure OpenAI, OpenRouter, DeepSeek...), streamed replies or not.

Followed: OpenAI's API reference for ``POST /v1/responses`` (request ``input`` items, the
``Response`` object, its streaming events) and the openai SDK's own types
(``openai.types.responses``: ``ResponseInputItemParam``, ``Response``,
``ResponseOutputItem``, ``ResponseReasoningItem``, ``ResponseStreamEvent``) and stream
accumulation (``openai.lib.streaming.responses``).

- a **model request** is a ``POST`` whose path ends in ``/responses`` (not
  ``/responses/{id}`` nor ``/responses/compact``) and whose JSON body holds ``input`` (a
  string or a list of items), a ``previous_response_id`` or a stored ``prompt`` template
  (an object with an ``id``): each of the last two names a conversation held server-side;
- its **conversation**, in Chat Completions form: ``instructions`` as a leading ``system``
  message; ``input`` a string as one ``user`` message; input items: a message of role
  ``user``/``system``/``developer`` as that role's message (``developer`` as ``system``;
  text parts joined, a message holding other parts keeps them as content parts, as sent);
  a run of the model's own items (an ``assistant`` message, ``reasoning``, ``function_call``,
  ``custom_tool_call``, with hosted tools' items between them skipped) as ONE assistant
  message: its text, ``refusal``, ``tool_calls`` (id: ``call_id``) and ``reasoning_details``
  (:mod:`toolreplay.wire.protocol`'s form), as the reply that produced them reads; a
  ``function_call_output``/``custom_tool_call_output`` as a ``tool`` message
  (``tool_call_id``: ``call_id``); ``item_reference`` and hosted tools' items are skipped;
- a stored **prompt** (``{"id", "version", "variables"}``; the template's own messages are
  the server's, never sent) is, before the ``input``, one ``user`` message as the request
  states it: ``prompt`` holds the ``id`` (and ``version`` when given) and ``content`` one part
  per variable, in order, each with its name as ``variable``: a string or an ``input_text``
  as ``{"type": "text", "text"}``, an ``input_image``/``input_file`` as sent; no variables
  give ``content: ""``. A continued conversation already holding the same turn does not
  repeat it;
- a request naming a ``previous_response_id`` (or made in a ``conversation`` of the
  Conversations API) continues the conversation the reader stored for that reply
  (:data:`~toolreplay.wire.protocol.History`), its instructions not repeated when that
  conversation already starts with a system message; one that names a reply recorded
  before the cassette began holds its own input only;
- its **reply** is the ``Response`` object (a streamed one assembled by
  :func:`toolreplay.wire.responses_stream.assemble_response`), read by
  :func:`reply_from_response`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import httpx

from toolreplay.wire.episode import NO_FINISH_REASON, Message, ModelReply, Usage
from toolreplay.wire.hosted import distinct, responses_hosted
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.protocol import History, ModelRequest
from toolreplay.wire.replies import ModelReplyError, exchange_status_error
from toolreplay.wire.responses_items import TEXT_PARTS, Turn, reasoning_details, tool_call
from toolreplay.wire.responses_stream import (
    assemble_response,
    error_text,
    stream_response_id,
)
from toolreplay.wire.stream import StreamError, is_event_stream
from toolreplay.wire.tool_choice import calls_forbidden

#: Input items and output items that are the model's own turn (one assistant message).
_MODEL_ITEMS = ("reasoning", "function_call", "custom_tool_call")

#: Tool outputs sent back: each a ``tool`` message.
_TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output")

#: ``incomplete_details.reason`` -> finish reason; any other reason (``max_messages``, none
#: given) is a reply cut short: ``length``. ``steered`` (stopped at a safe boundary after a
#: WebSocket ``response.steer``) ends as a complete reply would.
_INCOMPLETE_FINISH = {"max_output_tokens": "length", "content_filter": "content_filter"}


#: The usage fields read: prompt and completion tokens.
_USAGE_FIELDS = ("input_tokens", "output_tokens")


def _snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _content(content: Any) -> Any:
    """A message's or a tool output's content in Chat Completions form: a string as is; a
    list of parts that are all text, joined; a list holding other parts (images, files) kept
    as content parts, its text parts as ``{"type": "text", "text"}``; anything else as
    JSON text."""
    if isinstance(content, str) or content is None:
        return content
    if not isinstance(content, list):
        return json.dumps(content, ensure_ascii=False, default=str)
    parts = [
        {"type": "text", "text": p["text"]}
        if isinstance(p, dict) and p.get("type") in TEXT_PARTS and isinstance(p.get("text"), str)
        else p
        for p in content
    ]
    if all(isinstance(p, dict) and p.get("type") == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def conversation(items: Any) -> list[Message]:
    """A request's ``input`` in Chat Completions messages (the module docstring says how each
    item reads). Never raises: an item it does not know is skipped."""
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    messages: list[Message] = []
    turn: Turn | None = None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind, role = item.get("type"), item.get("role")
        if kind in _MODEL_ITEMS or (kind in (None, "message") and role == "assistant"):
            turn = turn or Turn()
            turn.add(item)
            continue
        if kind in _TOOL_OUTPUTS:
            reply: Message = {
                "role": "tool",
                "tool_call_id": str(item.get("call_id") or ""),
                "content": _content(item.get("output")),
            }
        elif kind in (None, "message") and role in ("user", "system", "developer"):
            role = "system" if role == "developer" else role
            reply = {"role": role, "content": _content(item.get("content"))}
        else:
            continue  # item_reference, hosted tools' calls and outputs, compaction...
        if turn is not None:
            messages.append(turn.message())
            turn = None
        messages.append(reply)
    if turn is not None:
        messages.append(turn.message())
    return messages


def _prompt_id(prompt: Any) -> str | None:
    """The id of a request's stored ``prompt`` template; None when it names none."""
    found = prompt.get("id") if isinstance(prompt, dict) else None
    return found if isinstance(found, str) and found else None


def prompt_turn(prompt: Any) -> Message | None:
    """A request's stored ``prompt`` (``id``, optional ``version`` and ``variables``) as the
    ``user`` message the module docstring describes; None when it names no template."""
    if (prompt_id := _prompt_id(prompt)) is None:
        return None
    reference = {"id": prompt_id}
    if isinstance(prompt.get("version"), str):
        reference["version"] = prompt["version"]
    variables = prompt.get("variables")
    parts: list[dict[str, Any]] = []
    for name, value in variables.items() if isinstance(variables, dict) else ():
        if isinstance(value, str):
            part: dict[str, Any] = {"type": "text", "text": value}
        elif isinstance(value, dict) and value.get("type") in TEXT_PARTS:
            part = {"type": "text", "text": value.get("text")}
        elif isinstance(value, dict):
            part = dict(value)
        else:
            part = {"type": "text", "text": json.dumps(value, ensure_ascii=False)}
        parts.append({**part, "variable": str(name)})
    return {"role": "user", "prompt": reference, "content": parts or ""}


def _continued(body: dict[str, Any]) -> str | None:
    """The id of the stored conversation a request continues: its ``previous_response_id``,
    else its ``conversation`` (an id, or an object with ``id``); None when neither."""
    previous = body.get("previous_response_id")
    if isinstance(previous, str) and previous:
        return previous
    held = body.get("conversation")
    held = held.get("id") if isinstance(held, dict) else held
    return held if isinstance(held, str) and held else None


def _background_id(exchange: Exchange) -> str | None:
    """The id of the response a background request started (the JSON body's ``id``, or the
    stream's)."""
    if is_event_stream(exchange.response_body, exchange.content_type):
        return stream_response_id(exchange.response_body)
    try:
        found = json.loads(exchange.response_body).get("id")
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, str) and found else None


def _endpoint(exchange: Exchange) -> str:
    return str(httpx.URL(exchange.uri).copy_with(query=None))


def _unparsable(exchange: Exchange) -> str:
    text = exchange.response_body.decode("utf-8", "replace")
    if not text.strip():
        return "the body is empty, not a JSON Response object"
    if is_event_stream(exchange.response_body, exchange.content_type):
        return (
            "the body is an event stream (text/event-stream), not a JSON Response object "
            f"(a streamed reply to a request that did not ask for one): {_snippet(text)}"
        )
    return f"the body is not JSON, not a Response object: {_snippet(text)}"


def client_tools(body: Any) -> frozenset[str]:
    """The names of the function and custom tools a request offers (``tools`` items of type
    ``function`` or ``custom``, their ``name``): the tools the program runs itself."""
    tools = body.get("tools") if isinstance(body, dict) else None
    names = set()
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, dict) and tool.get("type") in ("function", "custom"):
            inner = tool.get("function")
            name = tool.get("name") or (inner.get("name") if isinstance(inner, dict) else None)
            if isinstance(name, str):
                names.add(name)
    return frozenset(names)


def _hosted(item: dict[str, Any], offered: frozenset[str] | None) -> bool:
    """Whether an output item is a call the server ran itself: a ``custom_tool_call``
    already ``completed`` of a tool the request did not offer (xAI reports its server-side
    tools, ``x_search``'s ``x_keyword_search`` and the like, so), read as a hosted tool's
    item. Never when ``offered`` is None (the request not known)."""
    return (
        offered is not None
        and item.get("type") == "custom_tool_call"
        and item.get("status") == "completed"
        and item.get("name") not in offered
    )


def reply_from_response(
    response: Any, endpoint: str, status: int, offered: frozenset[str] | None = None
) -> ModelReply:
    """A ``Response`` object (a JSON-shaped dict) as a :class:`ModelReply`:

    - ``output``: the ``output_text`` parts of ``message`` items joined as the content (as the
      SDK's ``Response.output_text`` joins them), ``refusal`` parts as the refusal,
      ``function_call``/``custom_tool_call`` items as tool calls, ``reasoning`` items as
      ``reasoning_details`` (:func:`reasoning_details`); hosted tools' items are skipped, and
      so is a ``custom_tool_call`` already ``completed`` of a tool not among ``offered`` (the
      request's function and custom tools, :func:`client_tools`, when given): a server-side
      tool's call, as xAI reports them;
    - finish reason: ``status: incomplete`` with ``incomplete_details.reason``
      ``max_output_tokens`` is ``length``, ``content_filter`` is ``content_filter`` (another
      reason: ``length``); no ``status`` at all is
      :data:`~toolreplay.wire.episode.NO_FINISH_REASON`; otherwise ``tool_calls`` when the
      output holds a call, else ``stop``;
    - usage: ``usage.input_tokens`` and ``usage.output_tokens``.

    Raises :class:`ModelReplyError` (``endpoint``, ``status``, what was wrong) for a body
    that is not an object, a non-null ``error`` or ``status: failed`` (the error's code and
    message), ``status: cancelled``, ``queued`` or ``in_progress`` (a background response,
    not yet a reply), and an ``output`` missing or not a list."""
    if not isinstance(response, dict):
        problem = f"the JSON body is {type(response).__name__}, not a Response object"
        raise ModelReplyError(endpoint, status, problem)
    state = response.get("status")
    if response.get("error") is not None or state == "failed":
        problem = f"the response failed ({error_text(response.get('error'))})"
        raise ModelReplyError(endpoint, status, problem)
    if state in ("cancelled", "queued", "in_progress"):
        problem = f"the response is {state}, not a finished reply (status: {state})"
        raise ModelReplyError(endpoint, status, problem)
    output = response.get("output")
    if not isinstance(output, list):
        raise ModelReplyError(
            endpoint, status, "'output' is missing or not a list: the body holds no reply"
        )
    turn = Turn()
    server: list[str] = []  # the hosted tools' names (hosted.py), xAI's server-side calls too
    for item in output:
        is_message = isinstance(item, dict) and item.get("type") == "message"
        if isinstance(item, dict) and (item.get("type") in _MODEL_ITEMS or is_message):
            if not _hosted(item, offered):
                turn.add(item)
            else:
                server.append(str(item.get("name") or ""))
    finish = "tool_calls" if turn.calls else "stop"
    if state is None:  # no status: finished or cut off, not told
        finish = NO_FINISH_REASON
    if state == "incomplete":
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        if reason != "steered":
            finish = _INCOMPLETE_FINISH.get(str(reason), "length")
    usage = response.get("usage")
    tokens = [usage.get(k) if isinstance(usage, dict) else None for k in _USAGE_FIELDS]
    counts = [t if isinstance(t, int) and not isinstance(t, bool) else 0 for t in tokens]
    return ModelReply(
        turn.content,
        tuple(turn.calls),
        finish,
        Usage(counts[0], counts[1]),
        refusal=turn.refusal,
        reasoning=turn.reasoning,
        hosted_tools=distinct([*responses_hosted(output), *server]),
    )


@dataclass(frozen=True)
class ResponsesWire:
    """The Responses API reader (a :class:`~toolreplay.wire.protocol.WireProtocol`)."""

    name: str = "Responses API"

    def is_request(self, exchange: Exchange) -> bool:
        """``POST …/responses`` with a JSON object body holding ``input`` (a string or a
        list), a ``previous_response_id`` or a ``prompt`` naming a template (an ``id``)."""
        body = exchange.request_body
        return (
            exchange.method.upper() == "POST"
            and exchange.path.rstrip("/").endswith("/responses")
            and isinstance(body, dict)
            and (
                isinstance(body.get("input"), (str, list))
                or isinstance(body.get("previous_response_id"), str)
                or _prompt_id(body.get("prompt")) is not None
            )
        )

    def request(self, exchange: Exchange, history: History) -> ModelRequest:
        """The request's whole conversation (the stored one it continues, its prompt
        template's turn, then its input); ``tools_offered`` when ``tools`` is non-empty and
        ``tool_choice`` is not ``"none"``;
        ``streamed`` when ``"stream": true``."""
        body = exchange.request_body
        earlier = history.get(_continued(body) or "", ())
        messages = [*earlier, *conversation(body.get("input"))]
        if (turn := prompt_turn(body.get("prompt"))) is not None and turn not in earlier:
            messages.insert(len(earlier), turn)
        instructions = body.get("instructions")
        leads = bool(earlier) and earlier[0].get("role") == "system"
        if isinstance(instructions, str) and instructions and not leads:
            messages.insert(0, {"role": "system", "content": instructions})
        return ModelRequest(
            messages=tuple(messages),
            tools_offered=bool(body.get("tools")) and not calls_forbidden(body),
            streamed=body.get("stream") is True,
        )

    def _asked_to_stream(self, exchange: Exchange) -> bool:
        body = exchange.request_body
        return isinstance(body, dict) and body.get("stream") is True

    def reply(self, exchange: Exchange) -> ModelReply:
        """The reply: an error status first (:func:`exchange_status_error`); then the
        ``Response`` body, or the one a streamed reply ends with
        (:func:`~toolreplay.wire.responses_stream.assemble_response`), read by
        :func:`reply_from_response`. :class:`ModelReplyError` for an error status, a body
        that is not JSON (an event stream sent to a request that did not ask for one among
        them), a stream cut off or ended by an ``error``/``response.failed`` event, and what
        :func:`reply_from_response` refuses."""
        if (fault := exchange_status_error(exchange)) is not None:
            raise fault
        endpoint = _endpoint(exchange)
        streamed = self._asked_to_stream(exchange) and is_event_stream(
            exchange.response_body, exchange.content_type
        )
        if streamed:
            try:
                response = assemble_response(exchange.response_body)
            except StreamError as exc:
                problem = f"the streamed reply is unusable: {exc}"
                raise ModelReplyError(endpoint, exchange.status, problem) from None
        else:
            try:
                response = json.loads(exchange.response_body)
            except ValueError:
                raise ModelReplyError(endpoint, exchange.status, _unparsable(exchange)) from None
        offered = client_tools(exchange.request_body)
        return reply_from_response(response, endpoint, exchange.status, offered)

    def reply_id(self, exchange: Exchange) -> str | None:
        """The id a later request continues this reply's conversation by: the request's
        ``conversation`` when it was made in one (the Conversations API adds each
        response's input and output to it), else the response's ``id`` (the body's, or the
        stream's); None when there is none. Never raises."""
        body = exchange.request_body
        held = body.get("conversation") if isinstance(body, dict) else None
        if held is not None and (conversation_id := _continued({"conversation": held})):
            return conversation_id
        if is_event_stream(exchange.response_body, exchange.content_type):
            return stream_response_id(exchange.response_body)
        response = exchange.response_json()
        rid = response.get("id") if isinstance(response, dict) else None
        return rid if isinstance(rid, str) and rid else None

    def settled(
        self, exchange: Exchange, later: Sequence[Exchange]
    ) -> tuple[Exchange, tuple[int, ...]]:
        """A background response (``"background": true``: the reply says ``queued`` or
        ``in_progress``) is finished by the program's later polls, ``GET
        …/responses/{id}`` (``?stream=true&starting_after=N`` to stream the rest): the
        last poll answered with a success status holds the reply, read as this request's
        (streamed when its body is an event stream). Any other exchange is its own reply."""
        body = exchange.request_body
        if not isinstance(body, dict) or body.get("background") is not True:
            return exchange, ()
        rid = _background_id(exchange)
        polls = tuple(
            x
            for x in later
            if x.method.upper() == "GET" and rid and x.path.rstrip("/").endswith(f"/{rid}")
        )
        done = [x for x in polls if x.status < 400]
        if not done:
            return exchange, ()
        last = done[-1]
        streamed = is_event_stream(last.response_body, last.content_type)
        final = replace(
            exchange,
            status=last.status,
            request_body={**body, "stream": streamed},
            content_type=last.content_type,
            response_body=last.response_body,
        )
        return final, tuple(x.number for x in polls)


#: The Responses API reader.
RESPONSES = ResponsesWire()

__all__ = [
    "RESPONSES",
    "ResponsesWire",
    "client_tools",
    "conversation",
    "prompt_turn",
    "reasoning_details",
    "reply_from_response",
    "tool_call",
]
