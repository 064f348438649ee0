"""The recorded traffic as the audit reads it: cassettes read once per audit, the model
requests, and the tool calls with their results."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolreplay.cassettes.store import read_cassette


def first_model_requests(path: Path) -> list[dict[str, Any]]:
    """The JSON bodies of the model requests (``/chat/completions``) recorded in the
    cassette at ``path``, in order, read through :func:`read`; do not mutate."""
    return [
        i["request"]["parsed_body"]
        for i in read(path)
        if urlsplit(i["request"]["uri"]).path.endswith("/chat/completions")
        and isinstance(i["request"].get("parsed_body"), dict)
    ]


@lru_cache(maxsize=256)
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


@lru_cache(maxsize=16384)
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


