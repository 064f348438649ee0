"""The recorded traffic as the audit reads it: cassettes read once per audit, the model
requests, and the tool calls with their results."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from toolreplay.cassettes.store import read_cassette
from toolreplay.wire import WireEpisodeError, protocol_of, read_exchanges

_F = TypeVar("_F", bound=Callable[..., Any])
_AUDIT_CACHES: list[Any] = []


def audit_cache(maxsize: int) -> Callable[[_F], _F]:
    """``functools.lru_cache(maxsize)`` for what the audit's checks read of a cassette (keyed
    by path, mtime and size), emptied by :func:`clear_audit_caches` when an audit ends: the
    checks share each file's reading while they run, and a run of 10,000 episodes does not
    keep them after (they were a quarter of its peak memory). Raw interactions are kept for
    few files (every pass of a check reads each file once), what is derived from them (a
    study's requests, the tool results) for many."""

    def wrap(fn: _F) -> _F:
        cached = lru_cache(maxsize=maxsize)(fn)
        _AUDIT_CACHES.append(cached)
        return cached  # type: ignore[return-value]

    return wrap


def clear_audit_caches() -> None:
    """Empty every :func:`audit_cache` (the audit calls it as it ends)."""
    for cached in _AUDIT_CACHES:
        cached.cache_clear()


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
    interactions = read(Path(path_))
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
    request offers the model a tool (Anthropic's tools declared with ``tool_choice: {"type":
    "none"}`` offer none). None when no wire reader reads it as a model request."""
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
    path = Path(path_)
    bodies = first_model_requests(path)
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
