"""Replay: serve a parsed cassette to the live HTTP clients, one episode or many in parallel.

The live code path runs unchanged: the openai SDK over an ``httpx.Client`` and ``requests``
for Open-Meteo. Only the transport is served from the cassette, through the two libraries'
own extension points (an ``httpx.BaseTransport``, an ``httpx.AsyncBaseTransport`` and a
``requests`` adapter), instead of vcrpy's patches:

- :class:`Player`: the replay clients (``http`` for the SDK, ``async_http`` for async clients
  such as ``AsyncOpenAI``, ``session`` for Open-Meteo) and the cassette in play
  (:meth:`Player.use`). All three serve the same :class:`Tape`: one matching, one miss, one
  unplayed check. The cassette comes prepared (:func:`prepare`: match keys, request and
  response bytes, made once per content by :func:`toolreplay.cassettes.store.load_prepared`,
  which reads the file and checks its sha256 against the manifest every time). Nothing is
  patched, nothing reaches a socket.
- Matching is the one :func:`toolreplay.cassettes.vcr.make_vcr` configures for vcrpy, on the
  request as vcrpy's filter would store it: method, path, query (credentials dropped, pairs
  sorted) and the body compared as typed JSON (:func:`~toolreplay.cassettes.format.json_equal`)
  when its bytes differ from the recorded body's compact JSON; the first unplayed
  interaction that matches is played, as vcrpy does in record mode
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
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers

from toolreplay.cassettes.format import json_equal, parse_json_body, strip_secret_query
from toolreplay.cassettes.miss import ReplayMiss


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recorded interaction in the form matching and serving need, computed once per
    cassette content (:func:`prepare`) and shared by every replay of it: never changed.

    ``body`` holds the bytes the request body is compared with: for a JSON body the compact
    form the openai SDK and httpx send (``separators=(",", ":")``, ``ensure_ascii=False``), so
    that an identical request matches on bytes alone; otherwise the body's own bytes
    (``b""`` for none). ``content`` is the response body as vcrpy replays it (JSON as
    ``json.dumps`` with ``ensure_ascii=False``, text as UTF-8)."""

    method: str
    uri: str
    path: str
    query: tuple[tuple[str, str], ...]
    json_body: bool  # the request body is JSON (compared as typed JSON when bytes differ)
    body: bytes
    status: int
    reason: str | None
    headers: tuple[tuple[str, str], ...]
    content: bytes

    def request_body(self) -> str | bytes | None:
        """The request body as vcrpy holds it (JSON as text)."""
        return self.body.decode("utf-8") if self.json_body else (self.body or None)

    def body_value(self) -> Any:
        """The request body's JSON value (None when it is not JSON)."""
        return json.loads(self.body) if self.json_body else None


@dataclass(frozen=True, slots=True)
class Recording:
    """A cassette's interactions prepared for replay (:func:`prepare`): ``interactions`` in
    recorded order and, by ``(METHOD, path)``, the positions of those with that route."""

    interactions: tuple[Recorded, ...]
    routes: dict[tuple[str, str], tuple[int, ...]]


def _query(url: str) -> tuple[tuple[str, str], ...]:
    """The query as vcrpy's ``query`` matcher compares it, after the recording filter (which
    drops credentials): sorted ``(name, value)`` pairs."""
    return tuple(sorted(parse_qsl(urlsplit(strip_secret_query(url)).query)))


def _compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def prepare(interactions: Sequence[dict[str, Any]]) -> Recording:
    """What matching and serving need of a cassette's interactions (the stored form of
    :func:`toolreplay.cassettes.store.load_cassette`): a pure function of the cassette's
    content, kept with the parse cache (:func:`toolreplay.cassettes.store.load_prepared`)."""
    out: list[Recorded] = []
    routes: dict[tuple[str, str], list[int]] = {}
    for index, item in enumerate(interactions):
        request, response = item["request"], item["response"]
        if "parsed_body" in request:
            value = request["parsed_body"]
        else:
            value = parse_json_body(request.get("body"))
        json_body = value is not None
        body = _compact(value) if json_body else _raw(request.get("body"))
        stored = response.get("body") or {}
        if "parsed_body" in stored:
            content = json.dumps(stored["parsed_body"], ensure_ascii=False).encode("utf-8")
        else:
            content = _raw(stored.get("string"))
        status = response["status"]
        method = request["method"].upper()
        path = urlsplit(request["uri"]).path
        out.append(
            Recorded(
                method=method,
                uri=request["uri"],
                path=path,
                query=_query(request["uri"]),
                json_body=json_body,
                body=body,
                status=status["code"],
                reason=status.get("message"),
                headers=tuple((k, v) for k, values in response["headers"].items() for v in values),
                content=content,
            )
        )
        routes.setdefault((method, path), []).append(index)
    return Recording(tuple(out), {k: tuple(v) for k, v in routes.items()})


class Tape:
    """One cassette in play: its :class:`Recording` (made from ``interactions``, the stored
    form of :func:`toolreplay.cassettes.store.load_cassette`, or given prepared) and how
    often each interaction was played. :meth:`play` is thread-safe: parallel tool calls send
    from several threads."""

    def __init__(self, path: Path, interactions: Sequence[dict[str, Any]] | Recording) -> None:
        self.path = path
        recording = interactions if isinstance(interactions, Recording) else prepare(interactions)
        self.recording = recording
        self.play_counts = [0] * len(recording.interactions)
        self._lock = threading.Lock()

    def unplayed(self) -> list[str]:
        """``"interaction N: METHOD /path"`` for each interaction never played."""
        return [
            f"interaction {i + 1}: {r.method} {r.path}"
            for i, r in enumerate(self.recording.interactions)
            if not self.play_counts[i]
        ]

    def play(self, method: str, url: str, body: bytes | str | None) -> Recorded:
        """The first unplayed recorded interaction matching the request, marked played:
        identical requests get the recorded replies in recorded order, each once. Raises
        :class:`~toolreplay.cassettes.miss.ReplayMiss` when none does.

        vcrpy's ``method``, ``path``, ``query`` and toolreplay's ``json_body`` matchers: the
        query as sorted pairs without credentials; bodies compare as typed JSON
        (:func:`~toolreplay.cassettes.format.json_equal`) when either is JSON, byte for byte
        otherwise. Bytes equal to the recorded JSON's compact form match without parsing."""
        method = method.upper()
        path = urlsplit(url).path
        sent = _raw(body)
        query: tuple[tuple[str, str], ...] | None = None
        value: Any = _Lazy
        recorded = self.recording.interactions
        with self._lock:
            for index in self.recording.routes.get((method, path), ()):
                if self.play_counts[index]:
                    continue
                candidate = recorded[index]
                if candidate.uri != url:
                    if query is None:
                        query = _query(url)
                    if candidate.query != query:
                        continue
                if candidate.body != sent:
                    if not candidate.json_body:
                        continue  # not JSON: only equal bytes match
                    if value is _Lazy:
                        value = parse_json_body(body)
                    if value is None or not json_equal(value, candidate.body_value()):
                        continue
                self.play_counts[index] += 1
                return candidate
        raise ReplayMiss(
            f"{method} {path} is not recorded in {self.path}",
            _TapeView(self),
            _RequestView(method, strip_secret_query(url), body),
        )


def _raw(body: Any) -> bytes:
    if body is None:
        return b""
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


_Lazy = object()  # a value not computed yet


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
            _RequestView(r.method, r.uri, r.request_body()) for r in tape.recording.interactions
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


def _body_stream(recorded: Recorded) -> httpx.SyncByteStream | httpx.AsyncByteStream:
    """The body as a stream: an event stream (``text/event-stream``) cut at its events
    (:func:`toolreplay.wire.stream.event_chunks`), any other body in one piece."""
    ctype = next((v for k, v in recorded.headers if k.lower() == "content-type"), "")
    if ctype.split(";")[0].strip().lower() == "text/event-stream":
        from toolreplay.wire.stream import event_chunks

        return _EventChunks(event_chunks(recorded.content))
    return httpx.ByteStream(recorded.content)


def _httpx_response(recorded: Recorded, request: httpx.Request) -> httpx.Response:
    """The recorded response as vcrpy's httpx stub builds it: status, headers as recorded, the
    body bytes (an ``httpx.ByteStream``, readable sync and async; an event stream one event a
    chunk), the recorded reason phrase."""
    message = recorded.reason
    return httpx.Response(
        recorded.status,
        headers=list(recorded.headers),
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
