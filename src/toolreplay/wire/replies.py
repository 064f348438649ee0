"""Chat Completions replies: one parse at the boundary (raw body + pydantic) into a
:class:`~toolreplay.wire.episode.ModelReply`, with the fault named when the body is not a reply.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Protocol

import httpx
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from toolreplay.wire.episode import (
    NO_FINISH_REASON,
    REASONING_FIELDS,
    ModelReply,
    ToolCall,
    Usage,
)
from toolreplay.wire.hosted import chat_hosted, choice_zero
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.stream import (
    StreamError,
    assemble_chat_stream,
    is_content_parts,
    is_event_stream,
    json_text,
)


class ModelReplyError(RuntimeError):
    """The model endpoint answered with something that is not a usable chat completion
    (an HTTP error status, a body that is not JSON, no choice, no message...).

    ``endpoint`` is the request URL, ``status`` the HTTP status (None when no response
    arrived), ``problem`` what was wrong, in words. ``str()`` names all three. The hosts end
    the episode with stop reason ``error`` and keep this text as the episode's ``error``."""

    def __init__(self, endpoint: str, status: int | None, problem: str) -> None:
        where = f"{endpoint}: HTTP {status}" if status is not None else endpoint
        super().__init__(f"{where}: {problem}")
        self.endpoint = endpoint
        self.status = status
        self.problem = problem


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")


#: A field the protocol types as a string: another JSON value sent there is read as its JSON
#: text (:func:`~toolreplay.wire.stream.json_text`), not refused.
_Text = Annotated[str | None, BeforeValidator(json_text)]


def _content_value(content: Any) -> Any:
    """``message.content`` as read: a list of content parts kept for :func:`_content_text`;
    any other value that is not a string (a structured reply sent as an object or as an
    array of other items) as its JSON text."""
    return content if is_content_parts(content) else json_text(content)


class _WireFunction(_Wire):
    name: _Text = None
    arguments: Any = None


class _WireCustom(_Wire):
    """``custom`` of a custom tool call: its tool's ``name`` and the free-text ``input``."""

    name: _Text = None
    input: Any = None


class _WireToolCall(_Wire):
    id: _Text = None
    type: _Text = None
    function: _WireFunction | None = None
    custom: _WireCustom | None = None


class _WireMessage(_Wire):
    content: Annotated[str | list[Any] | None, BeforeValidator(_content_value)] = None
    refusal: _Text = None
    tool_calls: list[_WireToolCall] | None = None
    function_call: _WireFunction | None = None  # legacy field, still sent by some servers
    reasoning_content: Any = None  # REASONING_FIELDS: kept as sent
    reasoning: Any = None
    reasoning_details: Any = None


class _WireChoice(_Wire):
    message: _WireMessage
    finish_reason: _Text = None


class _WireUsage(_Wire):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _WireReply(_Wire):
    choices: list[_WireChoice] = Field(min_length=1)
    usage: _WireUsage | None = None


def _snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def arguments_text(arguments: Any) -> str:
    """``function.arguments`` (a Responses ``function_call``'s ``arguments``) as the JSON
    string the protocol specifies: the one arguments rule of the readers whose protocol sends
    arguments as text. A string is kept as sent, JSON or not (the tool's schema then judges
    it); an object, list or number (some servers send parsed JSON) is its JSON text; missing,
    null (OpenRouter) or empty text (Databricks streams ``""`` in every piece), each sent for
    a tool without parameters, is ``"{}"``, the empty object, so the message sent back holds
    JSON, as the programs send it back."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return "{}"
    return str(json_text(arguments))


def custom_input_text(value: Any) -> str:
    """A custom tool call's ``custom.input`` as its tool call's arguments: free text, kept as
    sent (even empty), as the Responses reader keeps a ``custom_tool_call``'s ``input``; any
    other value by the arguments rule (missing or null: ``"{}"``; an object: its JSON)."""
    return value if isinstance(value, str) else arguments_text(value)


def _tool_call(call: _WireToolCall) -> ToolCall | None:
    """A function tool call (``type`` ``function`` or absent), or a custom one (``type``
    ``custom``: :func:`custom_input_text`); None for any other type, or one without its
    ``function``/``custom``."""
    if call.type == "custom" and call.custom is not None:
        text = custom_input_text(call.custom.input)
        return ToolCall(call.id or "", call.custom.name or "", text)
    if call.function is not None and call.type in (None, "function"):
        return ToolCall(
            call.id or "", call.function.name or "", arguments_text(call.function.arguments)
        )
    return None


def _content_text(content: str | list[Any] | None) -> tuple[str | None, str | None]:
    """``(text, refusal)`` from ``message.content``: a string as is; a list of content parts
    joined (``text`` parts, bare strings); ``refusal`` parts collected apart."""
    if content is None or isinstance(content, str):
        return content, None
    texts: list[str] = []
    refusals: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("refusal"), str):
                refusals.append(part["refusal"])
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
    return ("".join(texts) if texts else None), ("".join(refusals) if refusals else None)


def _describe_unparsable(response: httpx.Response) -> str:
    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    text = response.content.decode("utf-8", errors="replace")
    if not text.strip():
        return "the body is empty, not a JSON chat completion"
    if ctype == "text/event-stream" or text.lstrip().startswith(("data:", "event:")):
        return (
            "the body is an event stream (text/event-stream), not a JSON chat completion "
            f"(a streamed reply to a request that did not ask for one): {_snippet(text)}"
        )
    if ctype == "text/html" or text.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        return f"the body is HTML, not a JSON chat completion: {_snippet(text)}"
    if ctype.endswith("json"):
        try:
            json.loads(text)
        except ValueError as exc:
            return f"the body is not valid JSON ({exc}): {_snippet(text)}"
    return (
        f"the body is not JSON ({ctype or 'no content-type'}), not a chat completion: "
        f"{_snippet(text)}"
    )


def _describe_invalid(body: Any, exc: ValidationError) -> str:
    if not isinstance(body, dict):
        return f"the JSON body is {type(body).__name__}, not a chat-completion object"
    if "choices" not in body and "error" in body:
        return f"no 'choices'; the body reports an error: {_snippet(json.dumps(body['error']))}"
    choices = body.get("choices")
    if choices is None:
        return "'choices' is missing or null: the reply holds no answer"
    if isinstance(choices, list) and not choices:
        return "'choices' is an empty list: the reply holds no answer"
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"])
    if err["type"] in ("model_type", "dict_type") and where.endswith("message"):
        shown = json.dumps(err["input"], ensure_ascii=False, default=str)[:80]
        return f"{where} is {shown}, not a message object"
    return f"{where}: {err['msg']} (got {_snippet(json.dumps(err['input'], default=str))})"


#: The openai SDK's exception class for an error status (``openai._client``'s
#: ``_make_status_error``), by status; 500 and above are ``InternalServerError``, any other
#: ``APIStatusError``.
STATUS_ERRORS = {
    400: "BadRequestError",
    401: "AuthenticationError",
    403: "PermissionDeniedError",
    404: "NotFoundError",
    409: "ConflictError",
    422: "UnprocessableEntityError",
    429: "RateLimitError",
}


def status_error_name(status: int) -> str:
    """The name of the exception the openai SDK raises for HTTP ``status``
    (:data:`STATUS_ERRORS`)."""
    return STATUS_ERRORS.get(status) or (
        "InternalServerError" if status >= 500 else "APIStatusError"
    )


class StatusResponse(Protocol):
    """What :func:`status_error_text` reads of a response: an ``httpx.Response``, or the
    response object of another HTTP client with the same two attributes (openai 3.x builds
    on ``httpx2``)."""

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...


def status_error_text(response: StatusResponse) -> str:
    """An error status in the words openai 1.x and 2.x give it, whatever SDK is installed (3.x
    words it otherwise), so an episode's error text does not depend on the SDK version:
    ``Error code: N - <the JSON body as a Python repr>``, else the body's text."""
    text = response.text.strip()
    try:
        return f"Error code: {response.status_code} - {json.loads(text)}"
    except ValueError:
        return text or f"Error code: {response.status_code}"


def exchange_status_error(exchange: Exchange) -> ModelReplyError | None:
    """The fault of a recorded exchange answered with an error status (400 and above),
    worded as the model client words the SDK's status error
    (``BadRequestError: Error code: 400 - {...}``), or whose body could not be decoded
    (:attr:`~toolreplay.wire.interactions.Exchange.body_fault`: an unknown
    ``Content-Encoding``, or one whose module is not installed, named with what to install;
    after the SDK's error name for an error status); None for a success status with a body
    read. Used by every protocol's reader first, so these read the same whatever the wire."""
    if exchange.status < 400 and not exchange.body_fault:
        return None  # the common case, before any URL is parsed
    endpoint = str(httpx.URL(exchange.uri).copy_with(query=None))
    if exchange.body_fault:
        name = f"{status_error_name(exchange.status)}: " if exchange.status >= 400 else ""
        return ModelReplyError(endpoint, exchange.status, name + exchange.body_fault)
    if exchange.status < 400:
        return None
    text = exchange.response_body.decode("utf-8", "replace")
    response = httpx.Response(exchange.status, content=text.encode("utf-8"))
    problem = f"{status_error_name(exchange.status)}: {status_error_text(response)}"
    return ModelReplyError(endpoint, exchange.status, problem)


def asked_to_stream(request: httpx.Request | None) -> bool:
    """Whether ``request``'s JSON body asks for a streamed reply (``"stream": true``)."""
    if request is None:
        return False
    try:
        body = json.loads(request.content)
    except (ValueError, httpx.RequestNotRead):
        return False
    return isinstance(body, dict) and body.get("stream") is True


def _streamed_body(response: httpx.Response, endpoint: str) -> Any:
    """The chat completion a streamed reply assembles into (:func:`assemble_chat_stream`);
    :class:`ModelReplyError` naming the chunk when the stream is cut off or broken."""
    try:
        return assemble_chat_stream(response.content)
    except StreamError as exc:
        raise ModelReplyError(
            endpoint, response.status_code, f"the streamed reply is unusable: {exc}"
        ) from None


def _choice_zero_first(body: Any) -> Any:
    """``body`` with its choice 0 first (:func:`~toolreplay.wire.hosted.choice_zero`: by its
    ``index``, by position when it has none); as sent when none is."""
    choices = body.get("choices") if isinstance(body, dict) else None
    position = choice_zero(choices)
    if not position:  # None or 0
        return body
    assert isinstance(choices, list)
    rest = choices[:position] + choices[position + 1 :]
    return {**body, "choices": [choices[position], *rest]}


def _filtered_without_message(body: Any) -> Any:
    """``body`` with an empty message in its first choice when that choice was withheld by a
    content filter and holds no ``message`` (or a null one), as Azure OpenAI sends it
    (``{"finish_reason": "content_filter", "content_filter_results": {...}}``): a reply
    with no content and finish reason ``content_filter``, not a broken body."""
    if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
        return body
    choices = body["choices"]
    first = choices[0] if choices else None
    if (
        isinstance(first, dict)
        and first.get("finish_reason") == "content_filter"
        and first.get("message") is None
    ):
        return {**body, "choices": [{**first, "message": {"content": None}}, *choices[1:]]}
    return body


def parse_chat_reply(response: httpx.Response) -> ModelReply:
    """Normalise one chat-completions HTTP response into a :class:`ModelReply`.

    The one place where wire shapes are accepted or refused:

    - ``function.arguments`` given as an object, list or number is serialised to the JSON
      string the protocol specifies (the tool's schema then judges it); a missing id stays
      ``""`` for the host to fill; a legacy ``function_call`` counts as a tool call only when
      there is no ``tool_calls``;
    - a custom tool call (``{"type": "custom", "custom": {"name", "input"}}``) is a tool call
      whose arguments are its ``input``, kept as sent (free text);
    - ``content`` given as a list of content parts is joined to text; ``refusal`` (the field
      or a ``refusal`` part) is kept in :attr:`ModelReply.refusal`;
    - a field typed as a string given as another JSON value (``content`` as an object, as
      Cloudflare Workers AI sends a structured reply, or as an array of items that are not
      content parts) is read as its JSON text;
    - ``finish_reason`` is kept as sent (:data:`~toolreplay.wire.episode.NO_FINISH_REASON`,
      ``"unknown"``, when absent or null: never taken for ``stop``);
    - the reasoning fields (``reasoning_content``, ``reasoning``, ``reasoning_details``: see
      :data:`~toolreplay.wire.episode.REASONING_FIELDS`) are kept as sent in
      :attr:`ModelReply.reasoning` when present and not null;
    - a tool call without ``function.arguments`` (or null, or empty text) gets ``"{}"``;
    - a choice withheld by a content filter without any ``message`` (Azure OpenAI) is a reply
      with no content and finish reason ``content_filter``;
    - the choice read is choice 0: by its ``index`` (``n`` > 1 may list the choices in any
      order), by its position when it has none.

    A streamed reply (an event stream, ``text/event-stream``) to a request that asked for one
    (``"stream": true`` in its body) is assembled first
    (:func:`toolreplay.wire.stream.assemble_chat_stream`: content, tool-call deltas by index,
    refusal, reasoning fields, finish reason, usage) and then read like any other body.

    Raises :class:`ModelReplyError` (endpoint, HTTP status, what was wrong) for an error status,
    a body that is not JSON (HTML, plain text, broken JSON, an event stream sent to a request
    that did not ask for one), a stream cut off or broken (the chunk named), ``choices``
    empty or null, or a choice whose ``message`` is null or not an object."""
    try:
        request: httpx.Request | None = response.request
    except RuntimeError:  # a response built without its request
        request = None
    endpoint = str(request.url.copy_with(query=None)) if request is not None else "?"
    status = response.status_code
    streamed = is_event_stream(
        response.content, response.headers.get("content-type", "")
    ) and asked_to_stream(request)
    try:
        body = _streamed_body(response, endpoint) if streamed else json.loads(response.content)
    except ValueError:
        raise ModelReplyError(endpoint, status, _describe_unparsable(response)) from None
    try:
        wire = _WireReply.model_validate(_filtered_without_message(_choice_zero_first(body)))
    except ValidationError as exc:
        raise ModelReplyError(endpoint, status, _describe_invalid(body, exc)) from None
    choice = wire.choices[0]
    msg = choice.message
    text, part_refusal = _content_text(msg.content)
    refusal = msg.refusal if msg.refusal else part_refusal
    wire_calls = msg.tool_calls or []
    if not wire_calls and msg.function_call is not None and msg.function_call.name:
        wire_calls = [_WireToolCall(id=None, type="function", function=msg.function_call)]
    calls = tuple(call for tc in wire_calls if (call := _tool_call(tc)) is not None)
    usage = wire.usage or _WireUsage()
    reasoning = {
        name: getattr(msg, name) for name in REASONING_FIELDS if getattr(msg, name) is not None
    }
    return ModelReply(
        text,
        calls,
        choice.finish_reason or NO_FINISH_REASON,
        Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0),
        refusal=refusal,
        reasoning=reasoning,
        hosted_tools=chat_hosted(body),
    )
