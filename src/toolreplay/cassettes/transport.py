"""Replay: serve a parsed cassette to the live HTTP clients, one episode or many in parallel.

The live code path runs unchanged: the openai SDK over an ``httpx.Client`` and ``requests``
for Open-Meteo. Only the transport is served from the cassette, through the two libraries'
own extension points (an ``httpx.BaseTransport``, an ``httpx.AsyncBaseTransport`` and a
``requests`` adapter), instead of vcrpy's patches:

- :class:`Player`: the replay clients (``http`` for the SDK, ``async_http`` for async clients
  such as ``AsyncOpenAI``, ``session`` for Open-Meteo) and the cassette in play
  (:meth:`Player.use`). All three serve the same :class:`Tape`: one matching, one miss, one
  unplayed check. The cassette comes from
  :func:`toolreplay.cassettes.store.load_cassette` (read and validated once per content, sha256
  checked against the manifest). Nothing is patched, nothing reaches a socket.
- Matching is the one :func:`toolreplay.cassettes.vcr.make_vcr` configures for vcrpy, on the
  request as vcrpy's filter would store it: method, path, query (credentials dropped, pairs
  sorted) and the body compared as typed JSON (:func:`~toolreplay.cassettes.format.json_equal`);
  the first unplayed interaction that matches is played, as vcrpy does in record mode
  ``none``, so identical requests (an agent loop polling or retrying) get the recorded
  replies in recorded order, each once. A miss raises
  :class:`toolreplay.cassettes.miss.ReplayMiss`, which the model client, the tools and
  :func:`toolreplay.cassettes.miss.explain_miss` treat exactly as vcrpy's miss (vcrpy itself
  is not imported to replay).
- Many episodes, serially or in a process pool: :mod:`toolreplay.runs.replay`.

Record modes other than ``none`` (pytest's ``--record-mode``) still go through vcrpy.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

import httpx
import requests
from requests.adapters import HTTPAdapter

from toolreplay.cassettes.format import _parse_json_body, json_equal, strip_secret_query
from toolreplay.cassettes.miss import ReplayMiss


@dataclass
class _Recorded:
    """One recorded interaction, in the form matching and serving need."""

    method: str
    path: str
    query: list[tuple[str, str]]
    body: Any  # the stored request body: parsed JSON, text, bytes or None
    parsed: bool  # body is parsed JSON (``parsed_body``)
    response: dict[str, Any]  # the stored response (status, headers, body)

    def content(self) -> bytes:
        """The response body's bytes, as vcrpy would replay them (JSON as ``json.dumps``
        with ``ensure_ascii=False``, text as UTF-8)."""
        body = self.response.get("body") or {}
        if "parsed_body" in body:
            return json.dumps(body["parsed_body"], ensure_ascii=False).encode("utf-8")
        value = body.get("string")
        if isinstance(value, str):
            return value.encode("utf-8")
        return value or b""

    def request_body(self) -> str | bytes | None:
        """The request body as vcrpy holds it (JSON turned back into text)."""
        if self.parsed:
            return json.dumps(self.body, ensure_ascii=False)
        value: str | bytes | None = self.body
        return value


def _query(url: str) -> list[tuple[str, str]]:
    """The query as vcrpy's ``query`` matcher compares it, after the recording filter (which
    drops credentials): sorted ``(name, value)`` pairs."""
    return sorted(parse_qsl(urlsplit(strip_secret_query(url)).query))


class Tape:
    """The interactions of one cassette (:func:`toolreplay.cassettes.store.load_cassette`'s stored
    form) and how often each was played. :meth:`play` is thread-safe: parallel tool calls
    send from several threads."""

    def __init__(self, path: Path, interactions: Sequence[dict[str, Any]]) -> None:
        self.path = path
        self.interactions = list(interactions)
        self.recorded = []
        for item in self.interactions:
            request = item["request"]
            parsed = "parsed_body" in request
            self.recorded.append(
                _Recorded(
                    method=request["method"].upper(),
                    path=urlsplit(request["uri"]).path,
                    query=_query(request["uri"]),
                    body=request["parsed_body"] if parsed else request.get("body"),
                    parsed=parsed,
                    response=item["response"],
                )
            )
        self.play_counts = [0] * len(self.recorded)
        self._lock = threading.Lock()

    def unplayed(self) -> list[str]:
        """``"interaction N: METHOD /path"`` for each interaction never played."""
        return [
            f"interaction {i + 1}: {r.method} {r.path}"
            for i, r in enumerate(self.recorded)
            if not self.play_counts[i]
        ]

    def _matches(
        self,
        recorded: _Recorded,
        method: str,
        path: str,
        query: _Lazy,
        sent: _Lazy,
        raw: bytes | str | None,
    ) -> bool:
        """vcrpy's ``method``, ``path``, ``query`` and toolreplay's ``json_body`` matchers:
        bodies compare as typed JSON when either is JSON, byte for byte otherwise."""
        if recorded.method != method or recorded.path != path or recorded.query != query():
            return False
        mine = recorded.body if recorded.parsed else _parse_json_body(recorded.body)
        if sent() is None and mine is None:
            return _raw(raw) == _raw(recorded.body)
        return json_equal(sent(), mine)

    def play(self, method: str, url: str, body: bytes | str | None) -> _Recorded:
        """The first unplayed recorded interaction matching the request, marked played:
        identical requests get the recorded replies in recorded order, each once. Raises
        :class:`~toolreplay.cassettes.miss.ReplayMiss` when none does."""
        method = method.upper()
        path = urlsplit(url).path
        query = _Lazy(lambda: _query(url))
        sent = _Lazy(lambda: _parse_json_body(body))
        with self._lock:
            for index, recorded in enumerate(self.recorded):
                if self.play_counts[index] == 0 and self._matches(
                    recorded, method, path, query, sent, body
                ):
                    self.play_counts[index] += 1
                    return recorded
        raise ReplayMiss(
            f"{method} {path} is not recorded in {self.path}",
            _TapeView(self),
            _RequestView(method, strip_secret_query(url), body),
        )


def _raw(body: Any) -> bytes:
    if body is None:
        return b""
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


class _Lazy:
    """A value computed on first call (most candidates differ in method or path)."""

    _unset = object()

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._value: Any = self._unset

    def __call__(self) -> Any:
        if self._value is self._unset:
            self._value = self._make()
        return self._value


@dataclass(frozen=True)
class _RequestView:
    """What :func:`toolreplay.cassettes.miss.explain_miss` reads of a request (vcrpy's
    ``Request`` attributes): method, URI, body and the sorted query pairs."""

    method: str
    uri: str
    body: str | bytes | None

    @property
    def query(self) -> list[tuple[str, str]]:
        return sorted(parse_qsl(urlsplit(self.uri).query))


class _TapeView:
    """What :func:`toolreplay.cassettes.miss.explain_miss` reads of a vcrpy cassette: the
    recorded ``requests``, their ``play_counts`` and the cassette's ``_path``."""

    def __init__(self, tape: Tape) -> None:
        self._path = str(tape.path)
        self.play_counts = list(tape.play_counts)
        self.requests = [
            _RequestView(r.method, item["request"]["uri"], r.request_body())
            for r, item in zip(tape.recorded, tape.interactions, strict=True)
        ]


class _EventChunks(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A recorded event stream served one event at a time (sync and async), as the server
    sent its chunks: the client reads a streamed reply chunk by chunk, as live."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


def _body_stream(recorded: _Recorded) -> httpx.SyncByteStream | httpx.AsyncByteStream:
    """The body as a stream: an event stream (``text/event-stream``) cut at its events
    (:func:`toolreplay.wire.stream.event_chunks`), any other body in one piece."""
    content = recorded.content()
    types = recorded.response["headers"].get("content-type") or [""]
    if types[0].split(";")[0].strip().lower() == "text/event-stream":
        from toolreplay.wire.stream import event_chunks

        return _EventChunks(event_chunks(content))
    return httpx.ByteStream(content)


def _httpx_response(recorded: _Recorded, request: httpx.Request) -> httpx.Response:
    """The recorded response as vcrpy's httpx stub builds it: status, headers as recorded, the
    body bytes (an ``httpx.ByteStream``, readable sync and async; an event stream one event a
    chunk), the recorded reason phrase."""
    status = recorded.response["status"]
    message = status.get("message")
    return httpx.Response(
        status["code"],
        headers=[(k, v) for k, values in recorded.response["headers"].items() for v in values],
        stream=_body_stream(recorded),
        extensions={"reason_phrase": message.encode("ascii", "replace")} if message else None,
        request=request,
    )


class _Transport(httpx.BaseTransport):
    """httpx transport answering from the player's tape (:func:`_httpx_response`)."""

    def __init__(self, player: Player) -> None:
        self._player = player

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        recorded = self._player.tape().play(request.method, str(request.url), request.read())
        return _httpx_response(recorded, request)


class _AsyncTransport(httpx.AsyncBaseTransport):
    """The async twin of :class:`_Transport`, for ``httpx.AsyncClient``: the same tape, the
    same matching, miss and unplayed check. :meth:`Tape.play` never awaits, so concurrent
    tasks take recorded interactions one at a time."""

    def __init__(self, player: Player) -> None:
        self._player = player

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        recorded = self._player.tape().play(request.method, str(request.url), body)
        return _httpx_response(recorded, request)


class _Adapter(HTTPAdapter):
    """requests adapter answering from the player's tape; the response is built by
    ``HTTPAdapter.build_response`` from a urllib3 response, as for a real connection."""

    def __init__(self, player: Player) -> None:
        super().__init__()
        self._player = player

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False, **kwargs: Any
    ) -> requests.Response:
        from urllib3 import HTTPResponse

        assert request.method is not None and request.url is not None
        recorded = self._player.tape().play(request.method, request.url, _body(request.body))
        headers = [(k, v) for k, values in recorded.response["headers"].items() for v in values]
        raw = HTTPResponse(
            body=io.BytesIO(recorded.content()),
            headers=headers,  # type: ignore[arg-type]  # urllib3 makes an HTTPHeaderDict of it
            status=recorded.response["status"]["code"],
            reason=recorded.response["status"].get("message"),
            preload_content=False,
            decode_content=False,
            request_method=request.method,
        )
        response = self.build_response(request, raw)
        if not stream:
            _ = response.content
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
    """Replay clients: ``http`` (an ``httpx.Client``, for the openai SDK), ``async_http`` (an
    ``httpx.AsyncClient``, for ``AsyncOpenAI`` and other async clients) and ``session`` (a
    ``requests.Session``, for Open-Meteo), answering from the cassette put in play by
    :meth:`use`. They ignore proxy and certificate settings from the environment. A request
    made while no cassette is in play raises :class:`RuntimeError`. Close it (or use it as a
    context manager, ``with`` or ``async with``) when done."""

    def __init__(self) -> None:
        self._tape: Tape | None = None
        self._async_http: httpx.AsyncClient | None = None
        self.http = httpx.Client(transport=_Transport(self), trust_env=False)
        self.http._toolreplay_player = self  # type: ignore[attr-defined]
        self.session = requests.Session()
        self.session.trust_env = False
        adapter = _Adapter(self)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self._memo: dict[Any, Any] = {}

    @property
    def async_http(self) -> httpx.AsyncClient:
        """The ``httpx.AsyncClient`` serving the cassette in play (made on first use)."""
        if self._async_http is None:
            self._async_http = httpx.AsyncClient(transport=_AsyncTransport(self), trust_env=False)
            self._async_http._toolreplay_player = self  # type: ignore[attr-defined]
        return self._async_http

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
        """Close the sync clients. The async client's transport holds no connection, so
        leaving it unclosed leaks nothing; :meth:`aclose` closes it too."""
        self.http.close()
        self.session.close()

    async def aclose(self) -> None:
        """Close every client, the async one included."""
        if self._async_http is not None:
            await self._async_http.aclose()
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
    """The :class:`Player` whose ``http`` or ``async_http`` client this is, if any."""
    player = getattr(http, "_toolreplay_player", None)
    return player if isinstance(player, Player) else None
