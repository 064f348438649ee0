"""A model SDK's raw HTTP response read by a wire reader: what the clients of every protocol
share (:mod:`~toolreplay.models.openai_chat`, :mod:`~toolreplay.models.openai_responses`,
:mod:`~toolreplay.models.anthropic_messages`).

The SDK sends the request (``with_raw_response``); the reply is read from the raw response
turned into a :class:`~toolreplay.wire.interactions.Exchange` by the protocol's wire reader
(:meth:`~toolreplay.wire.protocol.WireProtocol.reply`), the same reader that rebuilds the
episode from the cassette later, so a live run and a replay read the same bytes the same way.
Responses are those of ``httpx`` or of ``httpx2`` (anthropic 2.x, openai 3.x): both are read
through the attributes they share.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from toolreplay.wire.episode import ModelReply
from toolreplay.wire.interactions import Exchange
from toolreplay.wire.protocol import WireProtocol
from toolreplay.wire.replies import ModelReplyError, exchange_status_error


def endpoint_of(response: Any) -> str:
    """The URL ``response`` answered, without its query (``"?"`` when it has no request)."""
    try:
        return str(response.request.url.copy_with(query=None))
    except RuntimeError:  # a response built without its request
        return "?"


def exchange_of(response: Any) -> Exchange:
    """``response`` (an ``httpx`` or ``httpx2`` response, body read) as the one
    :class:`Exchange` a wire reader reads: ``POST``, the request's URL and JSON body (its
    text when it is not JSON), the status, the response's content type and body bytes."""
    try:
        request = response.request
        uri, content = str(request.url), request.content
    except RuntimeError:
        uri, content = "?", b""
    try:
        body: Any = json.loads(content) if content else None
    except ValueError:
        body = content.decode("utf-8", "replace")
    return Exchange(
        number=1,
        method="POST",
        uri=uri,
        status=response.status_code,
        request_body=body,
        content_type=response.headers.get("content-type", ""),
        response_body=response.content,
    )


def read_body(response: Any) -> None:
    """Read ``response``'s body as it arrives (a streamed reply chunk by chunk) and close it;
    a connection that breaks mid-body is a :class:`ModelReplyError`, never a hang."""
    try:
        response.read()
    except Exception as exc:  # httpx.HTTPError or httpx2.HTTPError: the transport broke
        if not _is_http_error(exc):
            raise
        raise ModelReplyError(
            endpoint_of(response),
            response.status_code,
            f"the streamed reply broke off mid-stream ({type(exc).__name__}: {exc})",
        ) from None
    finally:
        response.close()


def _is_http_error(exc: BaseException) -> bool:
    """Whether ``exc`` is an ``httpx`` or ``httpx2`` ``HTTPError`` (by module, so that
    ``httpx2`` need not be installed)."""
    return any(
        c.__name__ in ("HTTPError", "StreamError")
        and c.__module__.partition(".")[0] in ("httpx", "httpx2")
        for c in type(exc).__mro__
    )


def reply_of(response: Any, protocol: WireProtocol) -> ModelReply:
    """The reply ``response`` holds as ``protocol``'s reader reads it (its body read first);
    :class:`ModelReplyError` for an error status, a broken stream or a body that is not a
    usable reply."""
    read_body(response)
    return protocol.reply(exchange_of(response))


def status_fault(response: Any) -> ModelReplyError:
    """The :class:`ModelReplyError` of an error-status response (the SDK's status error's
    ``response``), worded as every wire reader words it
    (:func:`~toolreplay.wire.replies.exchange_status_error`:
    ``BadRequestError: Error code: 400 - {...}``)."""
    try:
        response.read()
    except Exception:  # the status is the fault; a body cut off adds nothing
        pass
    fault = exchange_status_error(exchange_of(response))
    if fault is None:  # not an error status after all: name what the SDK refused
        return ModelReplyError(
            endpoint_of(response), response.status_code, "the SDK refused the response"
        )
    return fault


@functools.cache
def sorted_body(client_class: type) -> type:
    """A subclass of an SDK client class (openai's ``OpenAI``, anthropic's ``Anthropic``)
    that sends the request body's top-level keys in sorted order (``extra_body`` merged
    in), so a recording writes the same bytes whatever SDK version made it."""

    class SortedBody(client_class):
        def _build_request(self, options: Any, *, retries_taken: int = 0) -> Any:
            if isinstance(options.json_data, Mapping):
                data = dict(options.json_data)
                extra = getattr(options, "extra_json", None)
                if isinstance(extra, Mapping):  # ``extra_body``: merged here, then sorted
                    data.update(extra)
                    options.extra_json = None
                options.json_data = dict(sorted(data.items()))
            return super()._build_request(options, retries_taken=retries_taken)

    SortedBody.__name__ = SortedBody.__qualname__ = f"SortedBody{client_class.__name__}"
    return SortedBody


__all__ = ["endpoint_of", "exchange_of", "read_body", "reply_of", "sorted_body", "status_fault"]
