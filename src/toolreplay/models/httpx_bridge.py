"""An ``httpx2`` transport that sends through an ``httpx.Client``: so an SDK that only takes
an ``httpx2.Client`` (anthropic 2.x) can ride the ``httpx.Client`` that toolreplay records
and replays through (vcrpy's httpx stubs, the replay player's transport), like the openai
SDK does.

Each request is sent as the same ``httpx`` request (method, URL, headers, body, timeout) and
its response handed back as an ``httpx2`` response streamed from the ``httpx`` one's raw
bytes (``httpx2`` then decodes them as ``httpx`` would; a body the ``httpx`` transport
already read is handed over decoded). ``httpx`` transport errors are
raised as their ``httpx2`` namesakes (``ConnectError``, ``ReadTimeout``...), the ``httpx``
error as their cause; anything else (a cassette miss) is raised as itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx


def _httpx2() -> Any:
    import httpx2

    return httpx2


def _translated(exc: httpx.TransportError, request: Any) -> Exception:
    """The ``httpx2`` exception of the same name as ``exc`` (``TransportError`` when
    ``httpx2`` has none)."""
    h2 = _httpx2()
    kind = getattr(h2, type(exc).__name__, None)
    if not (isinstance(kind, type) and issubclass(kind, h2.TransportError)):
        kind = h2.TransportError
    return kind(str(exc) or type(exc).__name__, request=request)


def bridge_transport(client: httpx.Client) -> Any:
    """An ``httpx2.BaseTransport`` sending every request through ``client`` (module
    docstring). ``httpx2`` must be installed (anthropic 2.x installs it)."""
    h2 = _httpx2()

    class _Stream(h2.SyncByteStream):  # type: ignore[name-defined]
        def __init__(self, response: httpx.Response, request: Any) -> None:
            self.response = response
            self.request = request

        def __iter__(self) -> Iterator[bytes]:
            try:
                yield from self.response.iter_raw()
            except httpx.TransportError as exc:
                raise _translated(exc, self.request) from exc

        def close(self) -> None:
            self.response.close()

    class HttpxBridge(h2.BaseTransport):  # type: ignore[name-defined]
        """Sends ``httpx2`` requests through an ``httpx.Client``."""

        def __init__(self) -> None:
            self.client = client

        def handle_request(self, request: Any) -> Any:
            extensions = {}
            timeout = request.extensions.get("timeout")
            if isinstance(timeout, dict):
                extensions["timeout"] = dict(timeout)
            sent = httpx.Request(
                request.method,
                str(request.url),
                headers=list(request.headers.raw),
                content=request.read(),
                extensions=extensions,
            )
            try:
                response = client.send(sent, stream=True)
            except httpx.TransportError as exc:
                raise _translated(exc, request) from exc
            try:
                content = response.content  # a transport that read the body already
            except httpx.ResponseNotRead:
                return h2.Response(
                    response.status_code,
                    headers=list(response.headers.raw),
                    stream=_Stream(response, request),
                )
            decoded = [  # the body is decoded: its encoding and length no longer hold
                (k, v)
                for k, v in response.headers.raw
                if k.lower() not in (b"content-encoding", b"content-length")
            ]
            return h2.Response(response.status_code, headers=decoded, content=content)

    return HttpxBridge()


def httpx2_client(client: Any) -> Any:
    """``client`` when it is an ``httpx2.Client``; an ``httpx2.Client`` sending through it
    (:func:`bridge_transport`) when it is an ``httpx.Client``; :class:`TypeError` otherwise."""
    h2 = _httpx2()
    if isinstance(client, h2.Client):
        return client
    if isinstance(client, httpx.Client):
        return h2.Client(transport=bridge_transport(client), trust_env=False, timeout=None)
    raise TypeError(f"expected an httpx2.Client or an httpx.Client, not {type(client).__name__}")


__all__ = ["bridge_transport", "httpx2_client"]
