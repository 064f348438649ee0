"""Model clients: one chat-completions request per round.

:class:`OpenAIChatModel` speaks to any OpenAI-compatible ``/chat/completions`` endpoint with
the openai SDK over an ``httpx.Client`` (or an ``httpx2.Client``, for an SDK that takes one)
that the caller passes in (so vcrpy can record and replay it). :class:`ScriptedModel` is an
in-process double for host tests (no HTTP).

Settings: :func:`resolve_endpoint` decides where a live recording sends its requests and which
environment variable's key goes with them; a key is only ever sent to the endpoint it belongs
to (:data:`KEY_PAIRING` in words, :func:`resolve_endpoint` for the rules).
:func:`model_settings` wraps it for callers that want a :class:`ModelSettings`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from toolreplay.models.base import ModelSettings
from toolreplay.models.raw_response import sorted_body
from toolreplay.wire.episode import Message, ModelReply
from toolreplay.wire.replies import ModelReplyError, parse_chat_reply, status_error_text

if TYPE_CHECKING:  # optional: the client's library, when the caller passes an httpx2 client
    import httpx2


class OpenAIChatModel:
    """Chat completions through the openai SDK.

    ``http_client`` is the client the SDK sends through: an ``httpx.Client`` (openai 1.x,
    2.x, 3.x) or an ``httpx2.Client`` (openai 3.x, and 2.47 or later with httpx2 installed;
    an earlier SDK refuses it with ``TypeError``). ``max_retries`` is 0 by
    default: in replay a retry would only hide a cassette miss behind "Connection error".
    Request body: ``model``, ``messages``, ``temperature``, and when tools are offered
    ``tools``, ``tool_choice`` (``"auto"`` unless given; a named choice such as
    ``{"type": "function", "function": {"name": ...}}`` is passed through),
    ``parallel_tool_calls=true``; ``max_tokens`` when ``settings.max_tokens`` is set; with
    ``settings.stream`` also ``stream=true`` and
    ``stream_options={"include_usage": true}``.

    The SDK sends the request; the reply is read from the raw HTTP response by
    :func:`parse_chat_reply`, so shapes the SDK's types cannot hold still get an outcome. A
    streamed reply is read chunk by chunk as it arrives and assembled
    (:func:`toolreplay.wire.stream.assemble_chat_stream`) into the same :class:`ModelReply`
    an unstreamed one gives.
    Errors: :class:`ModelReplyError` for an error status, an unusable body, or a stream cut
    off or broken (the chunk named; the connection dropping mid-stream included);
    ``openai.APIConnectionError`` when no response arrived, whichever library's transport
    error it was; a cassette miss (the replay transport's or vcrpy's) is raised as itself.
    """

    def __init__(
        self,
        settings: ModelSettings,
        http_client: httpx.Client | httpx2.Client,
        *,
        max_retries: int = 0,
        tool_choice: Any = "auto",
    ) -> None:
        self.settings = settings
        self.name = settings.model
        self.tool_choice = tool_choice
        self._client = _sdk_client()(
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
        if self.settings.max_tokens is not None:
            kwargs["max_tokens"] = self.settings.max_tokens
        if self.settings.stream:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}
        from openai import APIConnectionError, APIStatusError

        from toolreplay.cassettes.miss import find_miss

        try:
            raw = self._client.chat.completions.with_raw_response.create(
                model=self.settings.model,
                messages=list(messages),
                temperature=self.settings.temperature,
                **kwargs,
            )
        except APIConnectionError as exc:
            # The SDK reports a cassette miss as "Connection error."; surface the miss.
            miss = find_miss(exc)
            if miss is not None:
                raise miss from None
            raise
        except _http_errors("TransportError") as exc:
            # Some openai 3.x releases (built on httpx2) let an httpx client's own transport
            # errors through unwrapped; report them as 1.x and 2.x do: a connection error, or
            # the miss. An httpx2 client's are caught alike, should a release let them through.
            miss = find_miss(exc)
            if miss is not None:
                raise miss from None
            request: Any  # the client's own request; openai 3.x types it as httpx2's
            try:
                request = exc.request
            except RuntimeError:  # raised without its request: one of the error's library
                library = sys.modules[type(exc).__module__.split(".")[0]]
                request = library.Request("POST", str(self._client.base_url))
            raise APIConnectionError(request=request) from exc
        except APIStatusError as exc:
            response = exc.response
            endpoint = str(response.request.url.copy_with(query=None))
            problem = f"{type(exc).__name__}: {status_error_text(response)}"
            raise ModelReplyError(endpoint, response.status_code, problem) from None
        response = raw.http_response
        if self.settings.stream:
            _read_stream(response)
        return parse_chat_reply(response)


def _http_errors(name: str) -> tuple[type[Any], ...]:
    """httpx's exception class ``name`` (``TransportError``, ``HTTPError``) and, once httpx2 is
    imported (a client of it exists), httpx2's: each library raises its own, and httpx2's
    classes are not httpx's."""
    libraries = [httpx, sys.modules.get("httpx2")]
    return tuple(getattr(library, name) for library in libraries if library is not None)


def _read_stream(response: httpx.Response | httpx2.Response) -> None:
    """Read a streamed reply's body as it arrives, chunk by chunk (the client's library
    iterates the transport's stream); a connection that breaks mid-stream is a
    :class:`ModelReplyError`, never a hang."""
    try:
        response.read()
    except _http_errors("HTTPError") as exc:
        endpoint = str(response.request.url.copy_with(query=None))
        raise ModelReplyError(
            endpoint,
            response.status_code,
            f"the streamed reply broke off mid-stream ({type(exc).__name__}: {exc})",
        ) from None
    finally:
        response.close()


def _sdk_client() -> Any:
    """The openai SDK's ``OpenAI`` with the request body's top-level keys in sorted order
    (the order openai 1.x and 2.x send them in; 3.x puts ``model`` first), so a recording
    writes the same bytes whatever SDK version made it
    (:func:`~toolreplay.models.raw_response.sorted_body`). Imported here: the SDK import is
    the slowest part of start-up."""
    from openai import OpenAI

    return sorted_body(OpenAI)
