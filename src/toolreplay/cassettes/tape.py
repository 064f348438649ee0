"""The cassette in play during replay: its interactions prepared once for matching and
serving (:func:`prepare`, :class:`Recording`), and the :class:`Tape` that matches a request
to the first unplayed recorded interaction and counts what was played. The clients that serve
a tape (httpx, httpx2, requests) are :mod:`toolreplay.cassettes.transport`'s.

Matching is the one :func:`toolreplay.cassettes.vcr.make_vcr` configures for vcrpy, on the
request as vcrpy's filter would store it: method, path, query (credentials dropped, pairs
sorted) and the body compared as typed JSON (:func:`~toolreplay.cassettes.format.json_equal`)
when its bytes differ from the recorded body's compact JSON; the first unplayed interaction
that matches is played, as vcrpy does in record mode ``none``, so identical requests (an agent
loop polling or retrying) get the recorded replies in recorded order, each once. A miss
raises :class:`toolreplay.cassettes.miss.ReplayMiss` carrying what
:func:`toolreplay.cassettes.miss.explain_miss` reads of vcrpy's own miss.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

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
