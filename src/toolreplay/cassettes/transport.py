"""Replay: serve a parsed cassette to the live HTTP clients, one episode or many in parallel.

The live code path runs unchanged: the openai SDK over an ``httpx.Client`` (or an
``httpx2.Client``, what anthropic 2.x takes) and ``requests`` for Open-Meteo. Only the
transport is served from the cassette, through the libraries' own extension points (a
``BaseTransport`` and an ``AsyncBaseTransport`` of httpx, or of httpx2 when it is installed,
and a ``requests`` adapter), instead of vcrpy's patches:

- :class:`Player`: the replay clients (``http`` for the SDK, ``async_http`` for async clients
  such as ``AsyncOpenAI``, ``httpx2_http`` and ``httpx2_async_http`` for the SDKs built on
  httpx2, ``session`` for Open-Meteo) and the cassette in play (:meth:`Player.use`). All
  serve the same :class:`~toolreplay.cassettes.tape.Tape`: one matching, one miss, one
  unplayed check. The cassette comes prepared (:func:`~toolreplay.cassettes.tape.prepare`:
  match keys, request and response bytes, made once per content by
  :func:`toolreplay.cassettes.store.load_prepared`, which reads the file and checks its
  sha256 against the manifest every time). Nothing is patched, nothing reaches a socket.
- Matching (:meth:`~toolreplay.cassettes.tape.Tape.play`) is the one
  :func:`toolreplay.cassettes.vcr.make_vcr` configures for vcrpy; a miss raises
  :class:`toolreplay.cassettes.miss.ReplayMiss`, which the model client, the tools and
  :func:`toolreplay.cassettes.miss.explain_miss` treat exactly as vcrpy's miss (vcrpy itself
  is not imported to replay), whichever client sent the request.
- Many episodes, serially or in a process pool: :mod:`toolreplay.runs.replay`.

httpx2 (https://github.com/pydantic/httpx2) is httpx's API under another import name: its
classes are not httpx's, so each library gets its own transports (:func:`_flavour`). It is
optional: imported only when an httpx2 client is first asked for.

Record modes other than ``none`` (pytest's ``--record-mode``) still go through vcrpy, which
patches httpx and httpx2 alike (vcrpy 8.2 and later).
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers

from toolreplay.cassettes.tape import Recorded as Recorded
from toolreplay.cassettes.tape import Recording as Recording
from toolreplay.cassettes.tape import Tape as Tape
from toolreplay.cassettes.tape import prepare as prepare

if TYPE_CHECKING:  # optional: imported when an httpx2 replay client is first asked for
    import httpx2


@dataclass(frozen=True, slots=True)
class _Flavour:
    """The replay classes for one HTTP client library with httpx's transport API: ``httpx`` or
    ``httpx2`` (the SDKs' fork of httpx under its own import name, whose classes are not
    httpx's: an ``httpx2.Client`` needs an ``httpx2.BaseTransport``). Made by
    :func:`_flavour`, once per library."""

    module: Any  # httpx or httpx2
    transport: type  # its BaseTransport answering from the tape
    async_transport: type  # its AsyncBaseTransport answering from the tape
    chunks: type  # its Sync/AsyncByteStream serving an event stream one event a chunk


def _flavour(http: Any) -> _Flavour:
    """The replay transports over ``http`` (the ``httpx`` or ``httpx2`` module), which share
    httpx's transport API: ``BaseTransport.handle_request``,
    ``AsyncBaseTransport.handle_async_request``, ``SyncByteStream``/``AsyncByteStream`` and
    ``Response(stream=, extensions={"reason_phrase": ...})``
    (https://www.python-httpx.org/advanced/transports/)."""

    class EventChunks(http.SyncByteStream, http.AsyncByteStream):
        """A recorded event stream served one event at a time (sync and async), as the
        server sent its chunks: the client reads a streamed reply chunk by chunk, as live."""

        def __init__(self, chunks: list[bytes]) -> None:
            self._chunks = chunks

        def __iter__(self) -> Iterator[bytes]:
            yield from self._chunks

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for chunk in self._chunks:
                yield chunk

    def response(recorded: Recorded, request: Any) -> Any:
        """The recorded response as vcrpy's httpx stub builds it: status, headers as
        recorded, the body (an event stream, ``text/event-stream``, cut at its events by
        :func:`toolreplay.wire.stream.event_chunks`; any other body one ``ByteStream``,
        readable sync and async), the recorded reason phrase."""
        ctype = next((v for k, v in recorded.headers if k.lower() == "content-type"), "")
        if ctype.split(";")[0].strip().lower() == "text/event-stream":
            from toolreplay.wire.stream import event_chunks

            stream = EventChunks(event_chunks(recorded.content))
        else:
            stream = http.ByteStream(recorded.content)
        message = recorded.reason
        return http.Response(
            recorded.status,
            headers=list(recorded.headers),
            stream=stream,
            extensions={"reason_phrase": message.encode("ascii", "replace")} if message else None,
            request=request,
        )

    class Transport(http.BaseTransport):
        """A transport answering from the player's tape."""

        def __init__(self, player: Player) -> None:
            self._player = player

        def handle_request(self, request: Any) -> Any:
            url = str(request.url)
            recorded = self._player.tape().play(request.method, url, request.read())
            return response(recorded, request)

    class AsyncTransport(http.AsyncBaseTransport):
        """The async twin of ``Transport``: the same tape, the same matching, miss and
        unplayed check. :meth:`Tape.play` never awaits, so concurrent tasks take recorded
        interactions one at a time."""

        def __init__(self, player: Player) -> None:
            self._player = player

        async def handle_async_request(self, request: Any) -> Any:
            body = await request.aread()
            recorded = self._player.tape().play(request.method, str(request.url), body)
            return response(recorded, request)

    return _Flavour(http, Transport, AsyncTransport, EventChunks)


_HTTPX = _flavour(httpx)
_EventChunks = _HTTPX.chunks
_httpx2_flavour: _Flavour | None = None


def _httpx2() -> _Flavour:
    """The httpx2 flavour, made on first use; :class:`ImportError` saying what to install
    when httpx2 is not (toolreplay does not depend on it: openai 3.x, anthropic 2.x and
    google-genai bring it)."""
    global _httpx2_flavour
    if _httpx2_flavour is None:
        try:
            import httpx2
        except ImportError as exc:
            raise ImportError(
                "an httpx2 replay client needs httpx2, which is not installed "
                "(pip install httpx2; the SDKs built on it install it)"
            ) from exc
        _httpx2_flavour = _flavour(httpx2)
    return _httpx2_flavour


class _Adapter(HTTPAdapter):
    """requests adapter answering from the player's tape; the response is built by
    ``HTTPAdapter.build_response`` from a urllib3 response, as for a real connection."""

    def __init__(self, player: Player) -> None:
        super().__init__()
        self._player = player

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False, **kwargs: Any
    ) -> requests.Response:
        assert request.method is not None and request.url is not None
        recorded = self._player.tape().play(request.method, request.url, _body(request.body))
        return _requests_response(self, recorded, request, stream)


def _requests_response(
    adapter: HTTPAdapter, recorded: Recorded, request: requests.PreparedRequest, stream: bool
) -> requests.Response:
    """The recorded response as ``HTTPAdapter.build_response`` makes it of a urllib3 response
    (``raw``), as for a real connection: status, reason, headers as recorded (repeated names
    joined, as urllib3 does), the encoding they name, the body bytes. Streamed, it is
    ``build_response`` itself over the body; otherwise the same fields are set directly with
    the content already read (what ``build_response`` then ``response.content`` give)."""
    from urllib3 import HTTPResponse
    from urllib3._collections import HTTPHeaderDict

    if stream:
        raw = HTTPResponse(
            body=io.BytesIO(recorded.content),
            headers=list(recorded.headers),  # type: ignore[arg-type]  # made a dict of
            status=recorded.status,
            reason=recorded.reason,
            preload_content=False,
            decode_content=False,
            request_method=request.method,
        )
        return adapter.build_response(request, raw)
    headers = HTTPHeaderDict(recorded.headers)
    raw = HTTPResponse(
        body=recorded.content,
        headers=headers,
        status=recorded.status,
        reason=recorded.reason,
        preload_content=False,
        decode_content=False,
    )
    response = requests.Response()
    response.status_code = recorded.status
    response.headers = CaseInsensitiveDict(headers)
    response.encoding = get_encoding_from_headers(response.headers)
    response.raw = raw
    response.reason = recorded.reason  # type: ignore[assignment]
    assert request.url is not None
    response.url = request.url
    response.request = request
    response.connection = adapter
    response._content = recorded.content
    response._content_consumed = True  # type: ignore[attr-defined]
    return response


def _body(body: Any) -> bytes | str | None:
    """A ``requests`` body as bytes or text: a file-like body is read, an iterable one (a
    generator of chunks) joined, as vcrpy's request does."""
    if body is None or isinstance(body, (bytes, str)):
        return body
    if hasattr(body, "read"):
        data = body.read()
        return data if isinstance(data, (bytes, str)) else bytes(data)
    chunks = [c.encode("utf-8") if isinstance(c, str) else bytes(c) for c in body]
    return b"".join(chunks)


_T = TypeVar("_T")


class Player:
    """Replay clients answering from the cassette put in play by :meth:`use`: ``http`` (an
    ``httpx.Client``, for the openai SDK), ``async_http`` (an ``httpx.AsyncClient``, for
    ``AsyncOpenAI`` and other async clients), ``httpx2_http`` and ``httpx2_async_http`` (an
    ``httpx2.Client`` and ``httpx2.AsyncClient``, for the SDKs that take only httpx2's: anthropic
    2.x; httpx2 must be installed) and ``session`` (a ``requests.Session``, for Open-Meteo).
    All serve the same tape. They ignore proxy and certificate settings from the environment.
    A request made while no cassette is in play raises :class:`RuntimeError`. Close it (or use
    it as a context manager, ``with`` or ``async with``) when done."""

    def __init__(self) -> None:
        self._tape: Tape | None = None
        self._made: dict[str, Any] = {}  # the clients made on first use, by property name
        self.http: httpx.Client = self._client(_HTTPX, asynchronous=False)
        self.session = requests.Session()
        self.session.trust_env = False
        adapter = _Adapter(self)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self._memo: dict[Any, Any] = {}

    def _client(self, flavour: _Flavour, *, asynchronous: bool) -> Any:
        """A client of ``flavour``'s library over its replay transport, without the
        environment's proxy and certificate settings; :func:`player_for` knows it."""
        http = flavour.module
        if asynchronous:
            client = http.AsyncClient(transport=flavour.async_transport(self), trust_env=False)
        else:
            client = http.Client(transport=flavour.transport(self), trust_env=False)
        client._toolreplay_player = self
        return client

    def _on_first_use(self, name: str, flavour: Callable[[], _Flavour], asynchronous: bool) -> Any:
        if name not in self._made:
            self._made[name] = self._client(flavour(), asynchronous=asynchronous)
        return self._made[name]

    @property
    def async_http(self) -> httpx.AsyncClient:
        """The ``httpx.AsyncClient`` serving the cassette in play (made on first use)."""
        client: httpx.AsyncClient = self._on_first_use("async_http", lambda: _HTTPX, True)
        return client

    @property
    def httpx2_http(self) -> httpx2.Client:
        """The ``httpx2.Client`` serving the cassette in play (made on first use);
        :class:`ImportError` when httpx2 is not installed."""
        client: httpx2.Client = self._on_first_use("httpx2_http", _httpx2, False)
        return client

    @property
    def httpx2_async_http(self) -> httpx2.AsyncClient:
        """The ``httpx2.AsyncClient`` serving the cassette in play (made on first use);
        :class:`ImportError` when httpx2 is not installed."""
        client: httpx2.AsyncClient = self._on_first_use("httpx2_async_http", _httpx2, True)
        return client

    def tape(self) -> Tape:
        if self._tape is None:
            raise RuntimeError("replay client used with no cassette in play")
        return self._tape

    @contextmanager
    def use(self, tape: Tape) -> Iterator[Tape]:
        """Put ``tape`` in play for the block."""
        self._tape = tape
        try:
            yield tape
        finally:
            self._tape = None

    def memo(self, key: Any, make: Callable[[], _T]) -> _T:
        """``make()`` the first time ``key`` is asked for, the same value after: what every
        episode over these clients shares (the SDK client)."""
        if key not in self._memo:
            self._memo[key] = make()
        value: _T = self._memo[key]
        return value

    def close(self) -> None:
        """Close the sync clients. The async clients' transports hold no connection, so
        leaving them unclosed leaks nothing; :meth:`aclose` closes them too."""
        self.http.close()
        if "httpx2_http" in self._made:
            self._made["httpx2_http"].close()
        self.session.close()

    async def aclose(self) -> None:
        """Close every client, the async ones included."""
        for name in ("async_http", "httpx2_async_http"):
            if name in self._made:
                await self._made[name].aclose()
        self.close()

    def __enter__(self) -> Player:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Player:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def player_for(http: Any) -> Player | None:
    """The :class:`Player` whose replay client (``http``, ``async_http``, ``httpx2_http`` or
    ``httpx2_async_http``) this is, if any."""
    player = getattr(http, "_toolreplay_player", None)
    return player if isinstance(player, Player) else None
