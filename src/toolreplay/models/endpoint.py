"""Endpoints and keys: which base URL, model and API key a recording uses, each key paired with its
endpoint.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from toolreplay.models.base import DEFAULT_BASE_URL, DEFAULT_MODEL, ChatModel, ModelSettings

_DASHSCOPE_HOST = re.compile(r"^dashscope(?:-[a-z0-9-]+)?\.aliyuncs\.com$")
OPENAI_API_URL = "https://api.openai.com/v1"


KEY_VARIABLES = ("DASHSCOPE_API_KEY", "OPENAI_API_KEY")


KEY_PAIRING = (
    "DASHSCOPE_API_KEY goes to DashScope (default endpoint " + DEFAULT_BASE_URL + "); "
    "OPENAI_API_KEY goes to $OPENAI_BASE_URL, else the OpenAI API (" + OPENAI_API_URL + "); "
    "any other endpoint (--base-url or $TOOLREPLAY_BASE_URL) needs --api-key-env NAME naming "
    "the variable that holds its key"
)


_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


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


def check_base_url(url: str, source: str = "--base-url") -> None:
    """:class:`EndpointError` unless ``url`` (from ``source``, e.g. ``--base-url``) can be a
    base URL: ``http`` or ``https``, a host, no query and no fragment. The SDK appends each
    request's path to the base URL, so a query or fragment in it makes requests that a
    recording's matching never finds again. The message shows the URL without credentials."""
    from toolreplay.redaction import strip_url_credentials

    try:
        parts = urlsplit(url)
        scheme, host = parts.scheme, parts.hostname
    except ValueError as exc:
        raise EndpointError(f"{source}: not a URL ({exc})") from None
    shown = strip_url_credentials(url)
    if scheme not in ("http", "https") or not host:
        raise EndpointError(f"{source} {shown}: a base URL is http:// or https:// with a host")
    if parts.query or parts.fragment or url.rstrip().endswith(("?", "#")):
        raise EndpointError(
            f"{source} {shown.split('?')[0].split('#')[0]}: a base URL takes no query or "
            "fragment (`?...`, `#...`): the SDK appends each request's path to it, so such "
            "a recording would never replay. Pass the key with --api-key-env NAME (it is sent "
            "as a header) and the URL without them."
        )


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
    if url is not None:
        check_base_url(url, url_source)  # before any pairing: a URL that could never replay
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
    check_base_url(url, url_source)
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
    stream: bool = False,
    protocol: str = "chat_completions",
) -> ModelSettings:
    """Settings for a live recording: :func:`resolve_endpoint` (raises
    :class:`EndpointError`). ``api_key_env`` defaults to ``$TOOLREPLAY_API_KEY_ENV`` (the name
    of the variable holding the key of a ``--base-url`` / ``$TOOLREPLAY_BASE_URL`` endpoint).
    With ``read_key=False`` no key is read and nothing is refused: flag >
    ``$TOOLREPLAY_BASE_URL`` > DashScope, flag > ``$TOOLREPLAY_MODEL`` > ``qwen-plus``.
    ``stream``: the model client asks for streamed replies (:attr:`ModelSettings.stream`).
    ``protocol``: the wire protocol the model client speaks (:attr:`ModelSettings.protocol`;
    :class:`ValueError` for an unknown one)."""
    e = os.environ if env is None else env
    if read_key:
        api_key_env = api_key_env or e.get("TOOLREPLAY_API_KEY_ENV") or None
        settings = resolve_endpoint(base_url, model, api_key_env, e).settings
        return replace(settings, stream=stream, protocol=protocol)
    return ModelSettings(
        base_url=base_url or e.get("TOOLREPLAY_BASE_URL") or DEFAULT_BASE_URL,
        model=model or e.get("TOOLREPLAY_MODEL") or DEFAULT_MODEL,
        api_key=None,
        stream=stream,
        protocol=protocol,
    )


def chat_model(
    settings: ModelSettings,
    http_client: Any,
    *,
    max_retries: int = 0,
    tool_choice: Any = "auto",
) -> ChatModel:
    """The model client of ``settings.protocol``, sending through ``http_client``:
    ``chat_completions`` → :class:`~toolreplay.models.openai_chat.OpenAIChatModel`,
    ``responses`` → :class:`~toolreplay.models.openai_responses.OpenAIResponsesModel` (both
    take an ``httpx.Client``), ``anthropic_messages`` →
    :class:`~toolreplay.models.anthropic_messages.AnthropicMessagesModel` (an
    ``httpx2.Client`` or an ``httpx.Client``; :class:`ImportError` naming the ``anthropic``
    extra when the SDK is missing). ``max_retries`` and ``tool_choice`` (in Chat Completions
    form) go to the client."""
    if settings.protocol == "responses":
        from toolreplay.models.openai_responses import OpenAIResponsesModel

        return OpenAIResponsesModel(
            settings, http_client, max_retries=max_retries, tool_choice=tool_choice
        )
    if settings.protocol == "anthropic_messages":
        from toolreplay.models.anthropic_messages import AnthropicMessagesModel

        return AnthropicMessagesModel(
            settings, http_client, max_retries=max_retries, tool_choice=tool_choice
        )
    from toolreplay.models.openai_chat import OpenAIChatModel

    return OpenAIChatModel(settings, http_client, max_retries=max_retries, tool_choice=tool_choice)
