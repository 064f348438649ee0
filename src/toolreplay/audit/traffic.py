"""The recorded traffic as the audit reads it: cassettes read once per audit, the model
requests, and the tool calls with their results."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from toolreplay.audit.tables import STANDIN_FINGERPRINT
from toolreplay.cassettes.manifest import sha256_json
from toolreplay.cassettes.store import load_cassette_digest, read_cassette
from toolreplay.wire import WireEpisodeError, protocol_of, read_exchanges

_F = TypeVar("_F", bound=Callable[..., Any])
_AUDIT_CACHES: list[Any] = []
_KEPT: list[dict[str, Any]] = []  # kept_until_audit_ends's dicts


def audit_cache(maxsize: int | None) -> Callable[[_F], _F]:
    """``functools.lru_cache(maxsize)`` for what the audit's checks read of a cassette (keyed
    by path, mtime and size), emptied by :func:`clear_audit_caches` when an audit ends: the
    checks share each file's reading while they run, and a run of 10,000 episodes does not
    keep them after (they were a quarter of its peak memory). Raw interactions are kept for
    few files (every pass of a check reads each file once), what is derived from them (a
    study's requests, the tool results) for many, a file's sha256 for all (None)."""

    def wrap(fn: _F) -> _F:
        cached = lru_cache(maxsize=maxsize)(fn)
        _AUDIT_CACHES.append(cached)
        return cached  # type: ignore[return-value]

    return wrap


def clear_audit_caches() -> None:
    """Empty every :func:`audit_cache` and the cassette facts kept (the audit calls it as it
    ends)."""
    for cached in _AUDIT_CACHES:
        cached.cache_clear()
    _FACTS.clear()
    for kept in _KEPT:
        kept.clear()


def first_model_requests(path: Path) -> list[dict[str, Any]]:
    """The JSON bodies of the model requests recorded in the cassette at ``path``, in order,
    read through :func:`read`, in Chat Completions form; do not mutate. A Chat Completions
    request (``/chat/completions``) is its body as sent; a request of another protocol a wire
    reader reads (the Responses API, Anthropic Messages...; :func:`chat_form`) is given in
    that form, so the checks read every protocol alike."""
    st = path.stat()
    return _requests_cached(str(path), st.st_mtime_ns, st.st_size)


@audit_cache(maxsize=256)
def _requests_cached(path_: str, mtime_ns: int, size: int) -> list[dict[str, Any]]:
    del mtime_ns, size  # part of the key: an edited file is read again
    return _model_bodies(read(Path(path_)))


def _model_bodies(interactions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in interactions:
        body = i["request"].get("parsed_body")
        if not isinstance(body, dict):
            continue
        if _chat_completions(i):
            out.append(body)
        elif (chat := chat_form(i)) is not None:
            out.append(chat)
    return out


def _chat_completions(interaction: Mapping[str, Any]) -> bool:
    return urlsplit(str(interaction["request"]["uri"])).path.endswith("/chat/completions")


def is_model_request(interaction: Mapping[str, Any]) -> bool:
    """Whether a recorded ``interaction`` is a model request: to ``…/chat/completions``, or
    one a wire reader reads as a model request of its protocol (the Responses API, Anthropic
    Messages...); the rest is tool traffic."""
    if _chat_completions(interaction):
        return True
    try:
        (exchange,) = read_exchanges([interaction])
    except WireEpisodeError:
        return False
    return protocol_of(exchange) is not None


def chat_form(interaction: Mapping[str, Any]) -> dict[str, Any] | None:
    """The model request of a recorded ``interaction`` of a protocol other than Chat
    Completions as a Chat Completions body: ``model``, ``temperature``, ``top_p``,
    ``tool_choice``, ``parallel_tool_calls`` as the body sent them (absent when not sent),
    ``messages`` as its protocol's wire reader reads them
    (:meth:`toolreplay.wire.protocol.WireProtocol.request`), and ``tools`` as sent when the
    request offers the model a tool (tools declared with a tool choice of ``none``, in any
    protocol's form, offer none: :mod:`toolreplay.wire.tool_choice`). None when no wire
    reader reads it as a model request."""
    try:
        (exchange,) = read_exchanges([interaction])
    except WireEpisodeError:
        return None
    protocol = protocol_of(exchange)
    body = exchange.request_body
    if protocol is None or not isinstance(body, dict):
        return None
    request = protocol.request(exchange, {})
    sent = ("model", "temperature", "top_p", "tool_choice", "parallel_tool_calls")
    out: dict[str, Any] = {k: body[k] for k in sent if k in body}
    out["messages"] = list(request.messages)
    if request.tools_offered and body.get("tools"):
        out["tools"] = body["tools"]
    return out


@audit_cache(maxsize=256)
def _read_cached(path: str, mtime_ns: int, size: int) -> list[dict[str, Any]]:
    del mtime_ns, size  # part of the key: an edited file is read again
    return read_cassette(Path(path))


def read(path: Path) -> list[dict[str, Any]]:
    """:func:`read_cassette`, read once per audit (the checks share it); do not mutate."""
    st = path.stat()
    return _read_cached(str(path), st.st_mtime_ns, st.st_size)


def recorded_tool_results(path: Path) -> list[tuple[str, Any, Any]]:
    """``(tool name, arguments, result)`` of every tool call executed in a recorded episode, in
    order, read from the last model request of the cassette (which carries every tool message
    the model was sent); a result that is JSON is parsed. Read once per file content (the
    checks share it); do not mutate."""
    st = path.stat()
    return _tool_results_cached(str(path), st.st_mtime_ns, st.st_size)


@audit_cache(maxsize=2048)
def _tool_results_cached(path_: str, mtime_ns: int, size: int) -> list[tuple[str, Any, Any]]:
    del mtime_ns, size  # part of the key: an edited file is read again
    return _tool_results_of(first_model_requests(Path(path_)))


def tool_results_of(interactions: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    """:func:`recorded_tool_results` of a cassette's ``interactions`` (as loaded: a replay
    worker's, from the parse it has at hand)."""
    return _tool_results_of(_model_bodies(interactions))


def _tool_results_of(bodies: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    if not bodies:
        return []
    messages = bodies[-1].get("messages", [])
    calls: dict[str, tuple[str, Any]] = {}
    for m in messages:
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = fn.get("arguments")
            calls[str(tc.get("id"))] = (str(fn.get("name")), args)
    out = []
    for m in messages:
        if m.get("role") != "tool":
            continue
        name, args = calls.get(str(m.get("tool_call_id")), ("?", None))
        try:
            result = json.loads(m.get("content") or "")
        except ValueError:
            result = m.get("content")
        out.append((name, args, result))
    return out


#: The sampling fields the parity check compares, as a model request sent them.
PARITY_FIELDS = ("model", "temperature", "top_p", "tool_choice", "parallel_tool_calls")


@dataclass(frozen=True)
class RequestFacts:
    """What the parity check reads of one model request: ``fields``, ``(name, shown)`` of
    each of :data:`PARITY_FIELDS` it sent and of its ``system prompt`` (shown as JSON text;
    the prompt as ``sha256`` and 12 hex digits; ``tool_choice`` and ``parallel_tool_calls``
    only with tools), its user ``question`` and its ``tools`` (12 hex digits of their sha256,
    None without)."""

    fields: tuple[tuple[str, str], ...]
    question: str
    tools: str | None


@dataclass(frozen=True)
class CassetteFacts:
    """What the audit's parity and completeness checks read of one cassette, small enough to
    keep for every cassette of a run: the ``sha256`` of its bytes, each model request's
    :class:`RequestFacts` (every protocol, as :func:`first_model_requests` gives them), and
    its Chat Completions ``replies`` with how many are the stand-in's (``standin_replies``)."""

    sha256: str
    requests: tuple[RequestFacts, ...]
    replies: int
    standin_replies: int


_FACTS: dict[str, CassetteFacts] = {}  # by the sha256 of the bytes they were read from


def cassette_facts(path: Path) -> CassetteFacts:
    """The :class:`CassetteFacts` of the cassette at ``path`` as it is now: found by the
    sha256 of its bytes (:func:`cassette_sha256`) among those the replay workers sent
    (:class:`FactsProbe`) or read here before, else read here (through :func:`read`); kept
    while the audit runs. :class:`OSError` when the file cannot be read."""
    facts = _FACTS.get(cassette_sha256(path))
    if facts is None:
        facts = facts_of(path.read_bytes(), read(path))
        _FACTS[facts.sha256] = facts
    return facts


def cassette_sha256(path: Path) -> str:
    """The sha256 (hex) of the bytes of the cassette at ``path``, hashed here once per audit
    (by path, mtime and size), never parsed: a cassette edited into nonsense still has one,
    and one edited since its replay is told by it. :class:`OSError` when it cannot be read."""
    st = path.stat()
    return _sha256_cached(str(path), st.st_mtime_ns, st.st_size)


@audit_cache(maxsize=None)
def _sha256_cached(path: str, mtime_ns: int, size: int) -> str:
    del mtime_ns, size  # part of the key: an edited file is read again
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def facts_of(data: bytes, interactions: list[dict[str, Any]]) -> CassetteFacts:
    """The :class:`CassetteFacts` of a cassette's bytes ``data``, read as ``interactions``."""
    return _facts(hashlib.sha256(data).hexdigest(), interactions)


def _facts(sha256: str, interactions: list[dict[str, Any]]) -> CassetteFacts:
    requests = []
    for body in _model_bodies(interactions):
        msgs = body.get("messages", [])
        fields = [
            (name, json.dumps(body.get(name), ensure_ascii=False))
            for name in PARITY_FIELDS
            if "tools" in body or name not in ("tool_choice", "parallel_tool_calls")
        ]  # (those two are only sent with tools: the loop's last round has none)
        prompt = next((m.get("content") for m in msgs if m.get("role") == "system"), None)
        fields.append(("system prompt", "sha256 " + sha256_json(prompt)[:12]))
        user = next((m.get("content") for m in msgs if m.get("role") == "user"), "")
        tools = sha256_json(body["tools"])[:12] if "tools" in body else None
        requests.append(RequestFacts(tuple(fields), str(user), tools))
    replies = standin = 0
    for i in interactions:
        if not _chat_completions(i):
            continue
        reply = (i["response"].get("body") or {}).get("parsed_body")
        if not isinstance(reply, Mapping):
            continue
        replies += 1
        if reply.get("system_fingerprint") == STANDIN_FINGERPRINT or str(
            reply.get("id", "")
        ).startswith("chatcmpl-standin-"):
            standin += 1
    return CassetteFacts(sha256, tuple(requests), replies, standin)


class FactsProbe:
    """Reads :class:`CassetteFacts` where a cassette was just replayed (a replay worker:
    :meth:`read`, from the cassette's parse, never kept there) and keeps what the workers
    sent in this process (:meth:`keep`), so the audit after the replay reads no cassette for
    its parity and completeness checks. Kept until the audit ends
    (:func:`clear_audit_caches`)."""

    def read(self, path: Path, job: Any = None) -> CassetteFacts | None:
        """The facts of the cassette at ``path`` when ``job`` (a
        :class:`~toolreplay.runs.replay.Job`) is a trial 1, the trial the audit reads; None
        for another trial or when it cannot be read (the audit reads it again and says
        why)."""
        if getattr(job, "trial", 1) != 1:
            return None
        try:
            return _facts(*load_cassette_digest(path))  # the file read and hashed once
        except Exception:
            return None

    def keep(self, found: CassetteFacts | None) -> None:
        """Keep what :meth:`read` found, for :func:`cassette_facts` (by its sha256)."""
        if found is not None:
            _FACTS[found.sha256] = found


def kept_until_audit_ends() -> dict[str, Any]:
    """A dict the caller fills while an audit runs (what a study's probe sent, by the sha256
    of the cassette's bytes: :func:`cassette_sha256`), emptied with the audit caches by
    :func:`clear_audit_caches`."""
    kept: dict[str, Any] = {}
    _KEPT.append(kept)
    return kept


FACTS_PROBE = FactsProbe()
