"""Model clients: one chat-completions request per round.

:class:`OpenAIChatModel` speaks to any OpenAI-compatible ``/chat/completions`` endpoint with
the openai SDK over an ``httpx.Client`` that the caller passes in (so vcrpy can record and
replay it). :class:`ScriptedModel` is an in-process double for host tests (no HTTP).

Settings: :func:`resolve_endpoint` decides where a live recording sends its requests and which
environment variable's key goes with them; a key is only ever sent to the endpoint it belongs
to (:data:`KEY_PAIRING` in words, :func:`resolve_endpoint` for the rules).
:func:`model_settings` wraps it for callers that want a :class:`ModelSettings`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .episode import Message, ModelReply, ToolCall, Usage

DEFAULT_BASE_URL = "https://dashscope.aliyuncs.com/compatible-mode/v1"
DEFAULT_MODEL = "qwen-plus"
OPENAI_API_URL = "https://api.openai.com/v1"
KEY_VARIABLES = ("DASHSCOPE_API_KEY", "OPENAI_API_KEY")
KEY_PAIRING = (
    "DASHSCOPE_API_KEY goes to DashScope (default endpoint " + DEFAULT_BASE_URL + "); "
    "OPENAI_API_KEY goes to $OPENAI_BASE_URL, else the OpenAI API (" + OPENAI_API_URL + "); "
    "any other endpoint (--base-url or $TOOLREPLAY_BASE_URL) needs --api-key-env NAME naming "
    "the variable that holds its key"
)
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_DASHSCOPE_HOST = re.compile(r"^dashscope(?:-[a-z0-9-]+)?\.aliyuncs\.com$")


class ChatModel(Protocol):
    """Anything that answers one round: messages (+ tools, or None to withhold them)."""

    name: str

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply: ...


@dataclass(frozen=True)
class ModelSettings:
    """Where and what to ask. ``api_key`` may be None in replay (a placeholder is sent)."""

    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    api_key: str | None = field(default=None, repr=False)  # never in a repr, log or traceback
    temperature: float = 0.0


class EndpointError(ValueError):
    """A key/endpoint pairing that cannot be justified (or no key at all); the message says
    which variable or flag to set. Nothing has been sent when it is raised."""


@dataclass(frozen=True)
class Endpoint:
    """A resolved live endpoint: where requests go, the model, and the key with where each
    came from (``base_url_source``/``model_source``: a flag, a variable or ``default``;
    ``key_variable``: the environment variable the key was read from)."""

    base_url: str
    base_url_source: str
    model: str
    model_source: str
    key_variable: str | None  # None: a loopback endpoint named without a key variable
    api_key: str | None = field(repr=False)

    @property
    def host(self) -> str:
        return _host(self.base_url)

    def describe(self) -> str:
        """One line for the terminal; never the key itself."""
        return (
            f"endpoint {self.host} ({self.base_url}, from {self.base_url_source}), "
            f"model {self.model} (from {self.model_source}), "
            + (
                f"key from ${self.key_variable}"
                if self.key_variable
                else "no key sent (loopback endpoint; --api-key-env NAME sends one)"
            )
        )

    @property
    def settings(self) -> ModelSettings:
        return ModelSettings(base_url=self.base_url, model=self.model, api_key=self.api_key)


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def _origin(url: str) -> tuple[str, str, int | None]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def is_dashscope(url: str) -> bool:
    """Whether ``url`` is a DashScope endpoint (``dashscope*.aliyuncs.com``)."""
    return bool(_DASHSCOPE_HOST.match(_host(url)))


def resolve_endpoint(
    base_url: str | None = None,
    model: str | None = None,
    api_key_env: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Endpoint:
    """Pair a key with its endpoint for a live recording; :class:`EndpointError` otherwise.

    The endpoint is ``base_url`` (``--base-url``), else ``$TOOLREPLAY_BASE_URL``, else the one
    the key belongs to. The key is read from ``api_key_env`` (``--api-key-env NAME``) when
    given, which the caller thereby declares to belong to the endpoint; otherwise from the
    variable the endpoint pairs with:

    - ``DASHSCOPE_API_KEY`` with DashScope (``dashscope*.aliyuncs.com``; the default endpoint);
    - ``OPENAI_API_KEY`` with ``$OPENAI_BASE_URL`` (same scheme, host and port) or else
      ``api.openai.com``;
    - any other endpoint has no key variable of its own: ``--api-key-env`` is required,
      except on loopback (``127.0.0.1``, ``localhost``, ``::1``), where no key is sent.

    ``$TOOLREPLAY_API_KEY_ENV`` stands in for ``api_key_env`` (e.g. under the pytest plugin).

    With no endpoint named, the key decides: only ``DASHSCOPE_API_KEY`` set → DashScope; only
    ``OPENAI_API_KEY`` → ``$OPENAI_BASE_URL`` or the OpenAI API; both → refused as ambiguous.
    The model is ``model``, else ``$TOOLREPLAY_MODEL``, else ``qwen-plus`` on DashScope; other
    endpoints need one named (``qwen-plus`` is DashScope's)."""
    e = os.environ if env is None else env
    api_key_env = api_key_env or e.get("TOOLREPLAY_API_KEY_ENV") or None
    url, url_source = None, ""
    if base_url:
        url, url_source = base_url, "--base-url"
    elif e.get("TOOLREPLAY_BASE_URL"):
        url, url_source = e["TOOLREPLAY_BASE_URL"], "$TOOLREPLAY_BASE_URL"
    openai_url = e.get("OPENAI_BASE_URL") or None

    def openai_endpoint() -> tuple[str, str]:
        if openai_url:
            return openai_url, "$OPENAI_BASE_URL"
        return OPENAI_API_URL, "the OpenAI API, paired with OPENAI_API_KEY"

    if api_key_env:
        variable = api_key_env
        if not e.get(variable):
            raise EndpointError(f"--api-key-env {variable}: ${variable} is not set (or empty)")
        if url is None:
            if variable == "DASHSCOPE_API_KEY":
                url, url_source = DEFAULT_BASE_URL, "DashScope, paired with DASHSCOPE_API_KEY"
            elif variable == "OPENAI_API_KEY":
                url, url_source = openai_endpoint()
            else:
                raise EndpointError(
                    f"--api-key-env {variable} names no endpoint: pass --base-url URL with it, "
                    "the endpoint that key belongs to"
                )
    elif url is not None:
        if is_dashscope(url):
            variable = "DASHSCOPE_API_KEY"
        elif _host(url) == _host(OPENAI_API_URL) or (
            openai_url is not None and _origin(url) == _origin(openai_url)
        ):
            variable = "OPENAI_API_KEY"
        elif _host(url) in _LOOPBACK:
            variable = None  # a server of your own on this machine: no key is sent
        else:
            raise EndpointError(
                f"no key variable belongs to {url} ({url_source}): name the variable that "
                "holds its key with --api-key-env NAME. " + KEY_PAIRING + "."
            )
        if variable is not None and not e.get(variable):
            others = [v for v in KEY_VARIABLES if v != variable and e.get(v)]
            hint = (
                f" ${others[0]} is set but belongs to another endpoint and is not sent here;"
                f" if it really is this endpoint's key, say so with --api-key-env {others[0]}."
                if others
                else ""
            )
            raise EndpointError(f"{url} ({url_source}) needs ${variable}, which is not set.{hint}")
    else:
        present = [v for v in KEY_VARIABLES if e.get(v)]
        if not present:
            raise EndpointError(
                "live recording needs an API key: set DASHSCOPE_API_KEY or OPENAI_API_KEY "
                "(or name another variable with --api-key-env NAME and --base-url URL); the "
                "key is sent to its endpoint only and never written to a cassette. "
                "To record offline instead, use `toolreplay record --model-source stand-in`."
            )
        if len(present) > 1:
            raise EndpointError(
                "both DASHSCOPE_API_KEY and OPENAI_API_KEY are set: choose one with "
                "--api-key-env NAME (" + KEY_PAIRING + ")."
            )
        variable = present[0]
        if variable == "DASHSCOPE_API_KEY":
            url, url_source = DEFAULT_BASE_URL, "DashScope, paired with DASHSCOPE_API_KEY"
        else:
            url, url_source = openai_endpoint()
    if model:
        name, model_source = model, "--model"
    elif e.get("TOOLREPLAY_MODEL"):
        name, model_source = e["TOOLREPLAY_MODEL"], "$TOOLREPLAY_MODEL"
    elif is_dashscope(url):
        name, model_source = DEFAULT_MODEL, "default"
    else:
        raise EndpointError(
            f"name the model for {url} with --model NAME (or $TOOLREPLAY_MODEL); "
            f"the default {DEFAULT_MODEL} is DashScope's"
        )
    return Endpoint(
        url, url_source, name, model_source, variable, e[variable] if variable else None
    )


def model_settings(
    base_url: str | None = None,
    model: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    read_key: bool = True,
    api_key_env: str | None = None,
) -> ModelSettings:
    """Settings for a live recording: :func:`resolve_endpoint` (raises
    :class:`EndpointError`). ``api_key_env`` defaults to ``$TOOLREPLAY_API_KEY_ENV`` (the name
    of the variable holding the key of a ``--base-url`` / ``$TOOLREPLAY_BASE_URL`` endpoint).
    With ``read_key=False`` no key is read and nothing is refused: flag >
    ``$TOOLREPLAY_BASE_URL`` > DashScope, flag > ``$TOOLREPLAY_MODEL`` > ``qwen-plus``."""
    e = os.environ if env is None else env
    if read_key:
        api_key_env = api_key_env or e.get("TOOLREPLAY_API_KEY_ENV") or None
        return resolve_endpoint(base_url, model, api_key_env, e).settings
    return ModelSettings(
        base_url=base_url or e.get("TOOLREPLAY_BASE_URL") or DEFAULT_BASE_URL,
        model=model or e.get("TOOLREPLAY_MODEL") or DEFAULT_MODEL,
        api_key=None,
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


# ---- wire boundary: what a chat-completions reply may look like ------------------------------


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _WireFunction(_Wire):
    name: str | None = None
    arguments: Any = None


class _WireToolCall(_Wire):
    id: str | None = None
    type: str | None = None
    function: _WireFunction | None = None


class _WireMessage(_Wire):
    content: str | list[Any] | None = None
    refusal: str | None = None
    tool_calls: list[_WireToolCall] | None = None
    function_call: _WireFunction | None = None  # legacy field, still sent by some servers


class _WireChoice(_Wire):
    message: _WireMessage
    finish_reason: str | None = None


class _WireUsage(_Wire):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _WireReply(_Wire):
    choices: list[_WireChoice] = Field(min_length=1)
    usage: _WireUsage | None = None


def _snippet(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def _arguments_text(arguments: Any) -> str:
    """``function.arguments`` as the JSON string the protocol specifies. A string is kept as
    sent; an object, list or number (some servers send parsed JSON) is serialised; null is
    ``""``."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


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


def parse_chat_reply(response: httpx.Response) -> ModelReply:
    """Normalise one chat-completions HTTP response into a :class:`ModelReply`.

    The one place where wire shapes are accepted or refused:

    - ``function.arguments`` given as an object, list or number is serialised to the JSON
      string the protocol specifies (the tool's schema then judges it); a missing id stays
      ``""`` for the host to fill; a legacy ``function_call`` counts as a tool call only when
      there is no ``tool_calls``;
    - ``content`` given as a list of content parts is joined to text; ``refusal`` (the field
      or a ``refusal`` part) is kept in :attr:`ModelReply.refusal`;
    - ``finish_reason`` is kept as sent (``"stop"`` when absent).

    Raises :class:`ModelReplyError` (endpoint, HTTP status, what was wrong) for an error status,
    a body that is not JSON (HTML, plain text, an event stream, broken JSON), ``choices``
    empty or null, or a choice whose ``message`` is null or not an object."""
    endpoint = str(response.request.url.copy_with(query=None)) if response.request else "?"
    status = response.status_code
    try:
        body = json.loads(response.content)
    except ValueError:
        raise ModelReplyError(endpoint, status, _describe_unparsable(response)) from None
    try:
        wire = _WireReply.model_validate(body)
    except ValidationError as exc:
        raise ModelReplyError(endpoint, status, _describe_invalid(body, exc)) from None
    choice = wire.choices[0]
    msg = choice.message
    text, part_refusal = _content_text(msg.content)
    refusal = msg.refusal if msg.refusal else part_refusal
    wire_calls = msg.tool_calls or []
    if not wire_calls and msg.function_call is not None and msg.function_call.name:
        wire_calls = [_WireToolCall(id=None, type="function", function=msg.function_call)]
    calls = tuple(
        ToolCall(tc.id or "", tc.function.name or "", _arguments_text(tc.function.arguments))
        for tc in wire_calls
        if tc.function is not None and (tc.type in (None, "function"))
    )
    usage = wire.usage or _WireUsage()
    return ModelReply(
        text,
        calls,
        choice.finish_reason or "stop",
        Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0),
        refusal=refusal,
    )


class OpenAIChatModel:
    """Chat completions through the openai SDK.

    ``http_client`` is the ``httpx.Client`` the SDK sends through. ``max_retries`` is 0 by
    default: in replay a retry would only hide a cassette miss behind "Connection error".
    Request body: ``model``, ``messages``, ``temperature``, and when tools are offered
    ``tools``, ``tool_choice`` (``"auto"`` unless given; a named choice such as
    ``{"type": "function", "function": {"name": ...}}`` is passed through),
    ``parallel_tool_calls=true``.

    The SDK sends the request; the reply is read from the raw HTTP response by
    :func:`parse_chat_reply`, so shapes the SDK's types cannot hold still get an outcome.
    Errors: :class:`ModelReplyError` for an error status or an unusable body;
    ``openai.APIConnectionError`` when no response arrived; a vcrpy cassette miss is raised
    as itself.
    """

    def __init__(
        self,
        settings: ModelSettings,
        http_client: httpx.Client,
        *,
        max_retries: int = 0,
        tool_choice: Any = "auto",
    ) -> None:
        from openai import OpenAI  # imported here: the SDK import is the slowest part of start-up

        self.settings = settings
        self.name = settings.model
        self.tool_choice = tool_choice
        self._client = OpenAI(
            api_key=settings.api_key or "replay-no-key",
            base_url=settings.base_url,
            http_client=http_client,
            max_retries=max_retries,
        )

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply:
        kwargs: dict[str, Any] = {}
        if tools:
            kwargs = {
                "tools": list(tools),
                "tool_choice": self.tool_choice,
                "parallel_tool_calls": True,
            }
        from openai import APIConnectionError, APIStatusError

        from .cassettes import find_miss

        try:
            raw = self._client.chat.completions.with_raw_response.create(
                model=self.settings.model,
                messages=list(messages),  # type: ignore[arg-type]
                temperature=self.settings.temperature,
                **kwargs,
            )
        except APIConnectionError as exc:
            # The SDK reports a cassette miss as "Connection error."; surface the miss.
            miss = find_miss(exc)
            if miss is not None:
                raise miss from None
            raise
        except APIStatusError as exc:
            response = exc.response
            endpoint = str(response.request.url.copy_with(query=None))
            raise ModelReplyError(
                endpoint, response.status_code, f"{type(exc).__name__}: {exc.message}"
            ) from None
        return parse_chat_reply(raw.http_response)


ScriptStep = (
    ModelReply | Callable[[Sequence[Message], Sequence[Mapping[str, Any]] | None], ModelReply]
)


@dataclass
class ScriptedModel:
    """In-process model double: returns ``script`` replies in order (each a :class:`ModelReply`
    or a function of ``(messages, tools)``), recording every request in ``requests``.
    Raises :class:`AssertionError` when asked for more replies than scripted."""

    script: list[ScriptStep]
    name: str = "scripted"
    requests: list[tuple[list[Message], list[Mapping[str, Any]] | None]] = field(
        default_factory=list
    )

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply:
        self.requests.append(([dict(m) for m in messages], list(tools) if tools else None))
        if len(self.requests) > len(self.script):
            raise AssertionError(f"scripted model asked for reply {len(self.requests)}")
        step = self.script[len(self.requests) - 1]
        return step(messages, tools) if callable(step) else step
