"""The weather study's recorded tool traffic, as the baseline check reads it: each cassette's
Open-Meteo requests (:func:`recorded_requests`) and executed tool calls (:func:`tool_results`),
read once per file content while an audit runs, or sent by the replay worker that replayed the
cassette (:class:`RequestsProbe`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from toolreplay.audit import (
    audit_cache,
    cassette_sha256,
    is_model_request,
    kept_until_audit_ends,
    read,
    recorded_tool_results,
    tool_results_of,
)
from toolreplay.cassettes import load_cassette_digest


@dataclass(frozen=True)
class OpenMeteoRequest:
    """One recorded Open-Meteo request: ``kind`` ``search`` or ``forecast`` (or ``other``), its
    URI parameters, whether it answered 200, and for a search the candidates (empty when the
    answer had no ``results``: nothing found). ``position``: the interaction's index."""

    kind: str
    params: Mapping[str, list[str]]
    ok: bool
    results: list[dict[str, Any]]
    position: int

    @property
    def name(self) -> str:
        return self.params.get("name", [""])[0]


def recorded_requests(path: Path) -> list[OpenMeteoRequest]:
    """Every recorded request that is not a model request (of any protocol), in order; read
    once per file content while an audit runs (the checks share it), or sent by the replay
    worker that replayed the cassette (:class:`RequestsProbe`, found by the sha256 of the
    bytes as they are now); do not mutate."""
    sent = _sent(path)
    if sent is not None:
        return sent.requests
    st = path.stat()
    return _requests_cached(str(path), st.st_mtime_ns, st.st_size)


def tool_results(path: Path) -> list[tuple[str, Any, Any]]:
    """:func:`toolreplay.audit.recorded_tool_results` of the cassette at ``path``, or what
    the replay worker that replayed it sent (:class:`RequestsProbe`); do not mutate."""
    sent = _sent(path)
    return recorded_tool_results(path) if sent is None else sent.tool_results


def _sent(path: Path) -> BaselineTraffic | None:
    return _SENT.get(cassette_sha256(path)) if _SENT else None


@audit_cache(maxsize=2048)
def _requests_cached(path_: str, mtime_ns: int, size: int) -> list[OpenMeteoRequest]:
    del mtime_ns, size  # part of the key: an edited file is read again
    return _requests_of(read(Path(path_)))


def _requests_of(interactions: list[dict[str, Any]]) -> list[OpenMeteoRequest]:
    out = []
    for position, i in enumerate(interactions):
        if is_model_request(i):
            continue
        status = (i["response"].get("status") or {}).get("code")
        body = (i["response"].get("body") or {}).get("parsed_body")
        out.append(open_meteo_request(i["request"]["uri"], status, body, position))
    return out


@dataclass(frozen=True)
class BaselineTraffic:
    """What the baseline check reads of one cassette: its Open-Meteo ``requests``
    (:func:`recorded_requests`) and its executed tool calls' ``tool_results``
    (:func:`tool_results`), keyed by ``sha256``, the hex digest of the bytes read; and
    ``audits``, what the check makes of them, made where they were read
    (:class:`toolreplay.study.weather.calls.CallsProbe`): the calls held against the
    reference, by the heuristics on (a ``CallAudit`` by tuple of heuristic names)."""

    sha256: str
    requests: list[OpenMeteoRequest]
    tool_results: list[tuple[str, Any, Any]]
    audits: Mapping[tuple[str, ...], Any] = field(default_factory=dict)


def sent_by_sha256(sha256: str) -> BaselineTraffic | None:
    """What a replay worker sent of a cassette whose bytes have this sha256 (hex), if any."""
    return _SENT.get(sha256)


def sent_traffic(path: Path) -> BaselineTraffic | None:
    """What a replay worker sent of the cassette at ``path`` as its bytes are now (by their
    sha256), None when none did (or no audit is running)."""
    return _sent(path)


_SENT: dict[str, BaselineTraffic] = kept_until_audit_ends()


class RequestsProbe:
    """The baseline check's reading (:func:`recorded_requests`) of each cassette of the
    baseline toolset (every trial, ablated configurations too), done by the replay worker
    that replayed it (:class:`toolreplay.runs.replay.CassetteProbe`) and kept here, by the
    sha256 of the bytes read, until the audit ends: the check then reads none of those
    cassettes again. A cassette edited since (another sha256) is read here as before."""

    def __init__(self, toolset: str) -> None:
        self.toolset = toolset

    def read(self, path: Path, job: Any) -> BaselineTraffic | None:
        """The :class:`BaselineTraffic` of a baseline toolset's cassette (no ``audits``);
        None for another toolset's or one that cannot be read (the check reads it and says
        why)."""
        if getattr(job.configuration, "toolset", None) != self.toolset:
            return None
        try:
            sha256, interactions = load_cassette_digest(path)  # read and hashed once
            return BaselineTraffic(
                sha256, _requests_of(interactions), tool_results_of(interactions)
            )
        except Exception:
            return None

    def keep(self, found: BaselineTraffic) -> None:
        _SENT[found.sha256] = found


def open_meteo_request(uri: str, status: Any, body: Any, position: int) -> OpenMeteoRequest:
    """The request to ``uri`` that answered HTTP ``status`` with the JSON ``body`` (parsed),
    ``position``-th in its episode."""
    parts = urlsplit(uri)
    kind = (
        "search"
        if parts.path.endswith("/search")
        else "forecast"
        if parts.path.endswith("/forecast")
        else "other"
    )
    results = body.get("results") if isinstance(body, Mapping) else None
    return OpenMeteoRequest(
        kind,
        parse_qs(parts.query, keep_blank_values=True),
        status == 200,
        [r for r in results if isinstance(r, dict)] if isinstance(results, list) else [],
        position,
    )
