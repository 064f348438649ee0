"""The Gemini wire reader: Google's ``generateContent`` REST API (the Gemini API,
``generativelanguage.googleapis.com``, and Vertex AI's ``…/publishers/google/models/…``, whose
body is the same), streamed or not, whatever program sent the requests (google-genai,
pydantic-ai, a hand-written loop).

Followed: the Gemini API reference, https://ai.google.dev/api/generate-content (request,
``GenerateContentResponse``, ``Candidate``, ``FinishReason``, ``UsageMetadata``,
``PromptFeedback``) and https://ai.google.dev/api/caching#Content (``Content``, ``Part``,
``FunctionCall``, ``FunctionResponse``: "use 'output' key to specify function output and
'error' key to specify error details"); Vertex AI's ``GenerateContentResponse`` reference for
its extra finish reasons (``MODEL_ARMOR``...). The REST API accepts its field names in
camelCase and in snake_case (``system_instruction``, ``function_call``, ``thought_signature``
as google-genai's Vertex mode sends them): both are read, everywhere.

- a **model request** is a ``POST`` whose path holds ``:generateContent`` or
  ``:streamGenerateContent`` and whose JSON body holds a ``contents`` list. In Chat
  Completions form: ``systemInstruction``'s text is a leading ``system`` message; a ``model``
  content is an ``assistant`` message (text parts joined; ``functionCall`` parts its
  ``tool_calls``, ``args`` serialised to JSON; ``thought: true`` parts and any
  ``thoughtSignature`` its ``reasoning_details``); a ``user`` content (or one without role)
  gives one ``tool`` message per ``functionResponse`` part (``response`` as JSON; marked
  ``is_error``, with the error as content, when it holds ``error`` and no ``output``), then a
  ``user`` message of its other parts (one text part as a string, else a list of parts;
  ``inlineData``/``fileData`` kept as ``inline_data``/``file_data`` parts without their
  bytes). Tools are offered when ``tools`` holds any tool and
  ``toolConfig.functionCallingConfig.mode`` is not ``NONE``
  (:mod:`toolreplay.wire.tool_choice`); it is streamed when the path holds
  ``:streamGenerateContent``.
- **call ids**: Gemini often sends none. A ``functionCall`` without ``id`` gets
  ``f"{name}#{turn}.{index}"`` (``turn``: its content's index in ``contents``; ``index``: its
  place among that content's calls), the same in every request holding the turn; a
  ``functionResponse`` answers the previous ``model`` content's first unanswered call of its
  name unless its own ``id`` names one of them. A reply's call without id takes
  ``turn = len(contents)``: the index its content will have in the next request.
- the **reply**: candidate 0 (the candidate whose ``index`` is 0, by its position when it
  has none: with ``candidateCount`` > 1 a streamed chunk may hold another one only), its
  parts read as above (texts joined, thoughts apart);
  ``finishReason`` in Chat Completions terms: ``STOP`` (and ``UNEXPECTED_TOOL_CALL``, a call
  of a tool not offered, which the program answers) → ``tool_calls`` when the reply holds
  calls, else ``stop``; ``MAX_TOKENS`` → ``length``; ``SAFETY``, ``RECITATION``,
  ``BLOCKLIST``, ``PROHIBITED_CONTENT``, ``SPII``, ``IMAGE_SAFETY``... → ``content_filter``;
  ``MALFORMED_FUNCTION_CALL`` and any other value → ``stop``, its calls dropped; an
  unstreamed reply without ``finishReason`` → ``unknown``
  (:data:`~toolreplay.wire.episode.NO_FINISH_REASON`), its calls kept. No
  candidate but a ``promptFeedback.blockReason``: a reply with no content, filtered. An enum
  sent as an integer (``$alt=json;enum-encoding=int``: ``"finishReason": 2``) is read by its
  name in the proto definition of the API the request URL names (Vertex AI and the Gemini API
  number finish reasons differently from 6 on: :mod:`~toolreplay.wire.gemini_enums`). Usage:
  ``promptTokenCount``, and ``candidatesTokenCount`` + ``thoughtsTokenCount``. A
  **streamed** reply is server-sent events (``?alt=sse``), each ``data:`` one
  ``GenerateContentResponse`` chunk, or without ``alt=sse`` a JSON array of chunks: their
  parts are read in order as one reply (texts joined), the last ``finishReason`` and the
  last ``usageMetadata`` kept. A call whose arguments Vertex AI streams in pieces
  (``partialArgs`` by JSON path, ``willContinue``: asked by
  ``toolConfig.functionCallingConfig.streamFunctionCallArguments``) is one call, in its
  head's place, its arguments assembled from the pieces
  (:mod:`~toolreplay.wire.gemini_partial_args`).

:class:`~toolreplay.wire.replies.ModelReplyError` for an error status, a body that is not
JSON, an ``error`` object (in the body or in any chunk), no candidate and no block reason, an
enum integer the API's proto does not name (named in the error, never guessed), a stream
that ends without a ``finishReason`` (cut off), or streamed arguments a piece of which cannot
be applied (its call, piece and path named).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from toolreplay.wire.episode import NO_FINISH_REASON, Message, ModelReply, ToolCall, Usage
from toolreplay.wire.gemini_enums import Api, EnumError, api_of, enum_name
from toolreplay.wire.gemini_partial_args import PartialArgsError, joined_calls
from toolreplay.wire.gemini_partial_args import field_of as _field
from toolreplay.wire.hosted import distinct, gemini_hosted
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.protocol import History, ModelRequest, RequestCarriesAll
from toolreplay.wire.replies import ModelReplyError, exchange_status_error
from toolreplay.wire.stream import StreamError, split_events
from toolreplay.wire.tool_choice import calls_forbidden

#: Finish reasons of a candidate withheld or cut by a filter (Gemini API and Vertex AI).
FILTER_REASONS = frozenset(
    {
        "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR",
    }
)  # fmt: skip

#: Finish reasons after which the candidate's function calls stand.
CALL_REASONS = frozenset({"STOP", "UNEXPECTED_TOOL_CALL"})


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@dataclass
class _Parts:
    """A content's parts, read: texts, reasoning items, function calls and responses
    (``(id or None, name, args or response)``), other input parts kept."""

    texts: list[str] = field(default_factory=list)
    reasoning: list[dict[str, Any]] = field(default_factory=list)
    calls: list[tuple[str | None, str, Any]] = field(default_factory=list)
    responses: list[tuple[str | None, str, Any]] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)


def _call_id(value: Mapping[str, Any]) -> str | None:
    given = value.get("id")
    return given if isinstance(given, str) and given else None


def _kept_part(part: Mapping[str, Any]) -> dict[str, Any] | None:
    """An input part that is neither text nor a function call or response, as a content
    part without its bytes (``inline_data``, ``file_data``); None for any other."""
    inline = _field(part, "inlineData")
    if isinstance(inline, Mapping):
        return {"type": "inline_data", "mime_type": _field(inline, "mimeType")}
    file = _field(part, "fileData")
    if isinstance(file, Mapping):
        uri, mime = _field(file, "fileUri"), _field(file, "mimeType")
        return {"type": "file_data", "mime_type": mime, "file_uri": uri}
    return None


def _read_parts(parts: Any) -> _Parts:
    """``parts`` read in order; a thought continuing the thought before it (a stream's
    pieces) grows the same reasoning item until that item has its signature."""
    found = _Parts()
    thinking = False
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, Mapping):
            continue
        signature = _field(part, "thoughtSignature")
        signature = signature if isinstance(signature, str) and signature else None
        text, call = part.get("text"), _field(part, "functionCall")
        response = _field(part, "functionResponse")
        if isinstance(text, str) and part.get("thought") is True:
            last = found.reasoning[-1] if thinking else None
            if last is not None and "signature" not in last:
                last["text"] += text
            else:
                last = {"type": "reasoning.text", "text": text}
                found.reasoning.append(last)
            if signature:
                last["signature"] = signature
            thinking = True
            continue
        thinking = False
        if isinstance(call, Mapping) and isinstance(call.get("name"), str):
            found.calls.append((_call_id(call), call["name"], call.get("args") or {}))
        elif isinstance(response, Mapping) and isinstance(response.get("name"), str):
            found.responses.append((_call_id(response), response["name"], response.get("response")))
        elif isinstance(text, str):
            found.texts.append(text)
        elif (kept := _kept_part(part)) is not None:
            found.others.append(kept)
        if signature:
            found.reasoning.append({"type": "reasoning.encrypted", "signature": signature})
    return found


def _tool_calls(parts: _Parts, turn: int) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(given or f"{name}#{turn}.{index}", name, _json(args))
        for index, (given, name, args) in enumerate(parts.calls)
    )


def _tool_message(call_id: str, name: str, response: Any) -> Message:
    """A ``functionResponse`` as a ``tool`` message: ``response`` as JSON, or its ``error``
    (marked ``is_error``) when it reports one and holds no ``output``."""
    message: Message = {"role": "tool", "tool_call_id": call_id, "name": name}
    if isinstance(response, Mapping) and "error" in response and "output" not in response:
        error = response["error"]
        message["content"] = error if isinstance(error, str) else _json(error)
        message["is_error"] = True
    else:
        message["content"] = _json(response)
    return message


def _answered(
    given: str | None, name: str, asked: list[tuple[str, str]], answered: set[str]
) -> str | None:
    """The id of the call a ``functionResponse`` answers among ``asked`` (the previous model
    content's calls): its own id when that names one of them, else the first unanswered call
    of its name; its own id (or None) when none fits."""
    if given is not None and any(given == call_id for call_id, _ in asked):
        return given
    for call_id, call_name in asked:
        if call_name == name and call_id not in answered:
            return call_id
    return given


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    texts = _read_parts(_field(content, "parts")).texts
    return "\n".join(texts) if texts else None


def _messages(body: Mapping[str, Any]) -> list[Message]:
    """The request's conversation in Chat Completions form (module docstring)."""
    messages: list[Message] = []
    if (system := _text_of(_field(body, "systemInstruction"))) is not None:
        messages.append({"role": "system", "content": system})
    asked: list[tuple[str, str]] = []
    answered: set[str] = set()
    for turn, content in enumerate(body["contents"]):
        if not isinstance(content, Mapping):
            continue
        parts = _read_parts(_field(content, "parts"))
        if content.get("role") == "model":
            calls = _tool_calls(parts, turn)
            message: Message = {"role": "assistant", "content": "".join(parts.texts) or None}
            if parts.reasoning:
                message["reasoning_details"] = parts.reasoning
            if calls:
                message["tool_calls"] = [c.to_message() for c in calls]
            messages.append(message)
            asked, answered = [(c.id, c.name) for c in calls], set()
            continue
        for index, (given, name, response) in enumerate(parts.responses):
            call_id = _answered(given, name, asked, answered) or f"{name}#{turn}.{index}"
            answered.add(call_id)
            messages.append(_tool_message(call_id, name, response))
        if parts.others or len(parts.texts) > 1:
            texts = [{"type": "text", "text": t} for t in parts.texts]
            messages.append({"role": "user", "content": [*texts, *parts.others]})
        elif parts.texts:
            messages.append({"role": "user", "content": parts.texts[0]})
    return messages


def _snippet(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _endpoint(exchange: Exchange) -> str:
    return exchange.uri.split("?", 1)[0]


def _chunks(exchange: Exchange) -> list[Any]:
    """The reply's ``GenerateContentResponse`` objects: one for a plain reply, each event's
    or array item's for a streamed one."""
    fail = ModelReplyError
    endpoint, status = _endpoint(exchange), exchange.status
    text = exchange.response_body.decode("utf-8", "replace")
    if not text.strip():
        raise fail(endpoint, status, "the body is empty, not a GenerateContentResponse")
    if text.lstrip().startswith(("data:", "event:", ":")):
        chunks = []
        for n, event in enumerate(split_events(text)):
            try:
                chunks.append(json.loads(event.data))
            except ValueError:
                problem = f"{StreamError('not JSON', n, _snippet(event.data))}"
                raise fail(endpoint, status, f"the streamed reply is unusable: {problem}") from None
        return chunks
    try:
        body = json.loads(text)
    except ValueError as exc:
        problem = f"the body is not JSON ({exc}), not a GenerateContentResponse: {_snippet(text)}"
        raise fail(endpoint, status, problem) from None
    return body if isinstance(body, list) else [body]


@dataclass
class _Merged:
    """A reply's chunks merged: candidate 0's parts in order, the last finish reason, the
    last usage metadata and prompt feedback's block reason (enums by name); whether any chunk
    held a candidate."""

    parts: list[Any] = field(default_factory=list)
    finish: str | None = None
    usage: Any = None
    blocked: str | None = None
    candidates: bool = False
    hosted: list[str] = field(default_factory=list)  # tools the server ran (hosted.py)


def _merged(exchange: Exchange) -> _Merged:
    merged, api = _Merged(), api_of(exchange.uri)
    for n, chunk in enumerate(_chunks(exchange)):
        where = f"chunk {n}: " if _streamed(exchange) else ""
        if not isinstance(chunk, Mapping):
            problem = f"{where}the JSON is {type(chunk).__name__}, not a GenerateContentResponse"
            raise ModelReplyError(_endpoint(exchange), exchange.status, problem)
        if "error" in chunk:
            problem = f"{where}the reply reports an error: {_snippet(_json(chunk['error']))}"
            raise ModelReplyError(_endpoint(exchange), exchange.status, problem)
        first = _candidate_zero(chunk.get("candidates"))
        if isinstance(first, Mapping):
            merged.candidates = True
            merged.hosted.extend(gemini_hosted(first))
            parts = _field(_field(first, "content"), "parts")
            merged.parts.extend(parts if isinstance(parts, list) else ())
            reason = _enum(exchange, where, "finishReason", _field(first, "finishReason"), api)
            merged.finish = reason or merged.finish
        if (usage := _field(chunk, "usageMetadata")) is not None:
            merged.usage = usage
        if (feedback := _field(chunk, "promptFeedback")) is not None:
            blocked = _field(feedback, "blockReason")
            merged.blocked = _enum(exchange, where, "blockReason", blocked, api)
    return merged


def _candidate_zero(candidates: Any) -> Any:
    """Candidate 0 of a chunk: the candidate whose ``index`` is 0, by its position when it
    has none (with ``candidateCount`` > 1 a chunk may hold another candidate only); None
    when the chunk holds none."""
    for position, candidate in enumerate(candidates if isinstance(candidates, list) else ()):
        index = candidate.get("index", position) if isinstance(candidate, Mapping) else position
        if index == 0 and not isinstance(index, bool):
            return candidate
    return None


def _enum(exchange: Exchange, where: str, name: str, value: Any, api: Api) -> str | None:
    """An enum of the reply by its name (:mod:`~toolreplay.wire.gemini_enums`), an integer
    no table names the reply's fault."""
    try:
        return enum_name(name, value, api)
    except EnumError as exc:
        raise ModelReplyError(_endpoint(exchange), exchange.status, f"{where}{exc}") from None


def _streamed(exchange: Exchange) -> bool:
    return ":streamGenerateContent" in unquote(exchange.path)


def _count(usage: Any, name: str) -> int:
    value = _field(usage, name)
    return value if isinstance(value, int) else 0


def _finish_reason(reason: str | None, has_calls: bool) -> str:
    if reason is None:  # an unstreamed candidate without finishReason: finished or cut off
        return NO_FINISH_REASON
    if reason in FILTER_REASONS:
        return "content_filter"
    if reason == "MAX_TOKENS":
        return "length"
    return "tool_calls" if has_calls and reason in CALL_REASONS else "stop"


@dataclass(frozen=True)
class GeminiWire(RequestCarriesAll):
    """The Gemini reader (a :class:`~toolreplay.wire.protocol.WireProtocol`); the shapes
    read: this module's docstring."""

    name: str = "Gemini"

    def is_request(self, exchange: Exchange) -> bool:
        path = unquote(exchange.path)
        return (
            exchange.method.upper() == "POST"
            and (":generateContent" in path or ":streamGenerateContent" in path)
            and isinstance(exchange.request_body, Mapping)
            and isinstance(exchange.request_body.get("contents"), list)
        )

    def request(self, exchange: Exchange, history: History) -> ModelRequest:
        body = exchange.request_body
        tools = body.get("tools")
        return ModelRequest(
            messages=tuple(_messages(body)),
            tools_offered=isinstance(tools, list) and any(tools) and not calls_forbidden(body),
            streamed=_streamed(exchange),
        )

    def reply(self, exchange: Exchange) -> ModelReply:
        """Candidate 0 of the reply (every chunk of a streamed one) as a
        :class:`ModelReply`; :class:`ModelReplyError` as the module docstring lists."""
        if (fault := exchange_status_error(exchange)) is not None:
            raise fault
        merged = _merged(exchange)
        usage = Usage(
            _count(merged.usage, "promptTokenCount"),
            _count(merged.usage, "candidatesTokenCount")
            + _count(merged.usage, "thoughtsTokenCount"),
        )
        if not merged.candidates:
            if merged.blocked is not None:
                return ModelReply(None, (), "content_filter", usage)
            problem = "no candidate and no promptFeedback.blockReason: the reply holds no answer"
            raise ModelReplyError(_endpoint(exchange), exchange.status, problem)
        if merged.finish is None and _streamed(exchange):
            problem = "the streamed reply ends without a finishReason (cut off)"
            raise ModelReplyError(_endpoint(exchange), exchange.status, problem)
        try:
            parts = _read_parts(joined_calls(merged.parts))
        except PartialArgsError as exc:
            problem = f"the streamed function call arguments are unusable: {exc}"
            raise ModelReplyError(_endpoint(exchange), exchange.status, problem) from None
        contents = exchange.request_body["contents"]
        calls = _tool_calls(parts, len(contents)) if merged.finish in CALL_REASONS else ()
        if merged.finish is None:  # an unstreamed reply without finishReason: as sent
            calls = _tool_calls(parts, len(contents))
        reasoning = {"reasoning_details": parts.reasoning} if parts.reasoning else {}
        return ModelReply(
            "".join(parts.texts) or None,
            calls,
            _finish_reason(merged.finish, bool(calls)),
            usage,
            reasoning=reasoning,
            hosted_tools=distinct(merged.hosted),
        )


#: The Gemini reader.
GEMINI = GeminiWire()

__all__ = ["CALL_REASONS", "FILTER_REASONS", "GEMINI", "GeminiWire"]
