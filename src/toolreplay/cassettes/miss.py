"""Explaining a miss: what differs between a request and the closest recorded one, in the field's
terms (messages, tools, sampling parameters), and how to re-record.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from toolreplay.cassettes.errors import CassetteMiss
from toolreplay.cassettes.format import json_equal, parse_json_body, strip_secret_query
from toolreplay.redaction import known_secrets, redact_text, url_secrets

if TYPE_CHECKING:  # vcrpy is imported when recording (or a test's cassette) needs it
    pass


SAMPLING_PARAMETERS = frozenset(
    {
        "temperature", "top_p", "seed", "max_tokens", "max_completion_tokens", "n", "stop",
        "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
        "response_format",
    }
)  # fmt: skip


TOOL_PARAMETERS = ("tool_choice", "parallel_tool_calls")


def _describe_body_difference(sent: Any, recorded: Any) -> list[str]:
    """What differs between two chat-completions bodies, in the field's terms: the system
    prompt, a message, a tool schema, tools offered or withheld, a sampling parameter."""
    if not isinstance(sent, dict) or not isinstance(recorded, dict):
        return ["the request body differs"]
    out: list[str] = []
    tools_toggled = bool(sent.get("tools")) != bool(recorded.get("tools"))
    for key in sorted(set(sent) | set(recorded)):
        a, b = sent.get(key), recorded.get(key)
        if (key in sent) == (key in recorded) and json_equal(a, b):
            continue
        if key == "messages" and isinstance(a, list) and isinstance(b, list):
            out.extend(_describe_messages(a, b))
        elif key == "tools":
            out.extend(_describe_tools(a or [], b or []))
        elif key in TOOL_PARAMETERS:
            if not tools_toggled:  # otherwise they follow from tools offered or withheld
                out.append(f"request parameter `{key}`: sent {_short(a)}, recorded {_short(b)}")
        elif key in SAMPLING_PARAMETERS:
            out.append(f"sampling parameter `{key}`: sent {_short(a)}, recorded {_short(b)}")
        elif key == "model":
            out.append(f"model: sent {_short(a)}, recorded {_short(b)}")
        else:
            out.append(f"field `{key}`: sent {_short(a)}, recorded {_short(b)}")
    return out


def _short(value: Any, limit: int = 80) -> str:
    """A value for a message: strings quoted, JSON values as JSON, long ones cut."""
    if value is None:
        return "nothing"
    if not isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= limit else text[:limit] + "…"
    return repr(value if len(value) <= limit else value[:limit] + "…")


def _first_difference(a: str, b: str) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    window = slice(max(0, i - 20), i + 40)
    return f"at character {i}: sent {_short(a[window])}, recorded {_short(b[window])}"


def _message_name(index: int, message: Any, messages: list[Any]) -> str:
    """``system prompt``, ``message 3 (assistant)``, ``message 4 (tool result of
    geocode_city, call_1_1)``: one message of a request, numbered from 1."""
    role = message.get("role") if isinstance(message, dict) else "?"
    if role == "system":
        return "system prompt"
    if role == "tool":
        call_id = message.get("tool_call_id")
        name = next(
            (
                tc.get("function", {}).get("name")
                for m in messages
                if isinstance(m, dict)
                for tc in m.get("tool_calls") or []
                if isinstance(tc, dict) and tc.get("id") == call_id
            ),
            None,
        )
        return f"message {index + 1} (tool result of {name or '?'}, {call_id})"
    return f"message {index + 1} ({role})"


def _describe_tool_calls(name: str, sent: Any, recorded: Any) -> str | None:
    if not isinstance(sent, list) or not isinstance(recorded, list):
        return None
    if len(sent) != len(recorded):
        return f"{name}: sent {len(sent)} tool call(s), recorded {len(recorded)}"
    for i, (a, b) in enumerate(zip(sent, recorded, strict=True)):
        if json_equal(a, b) or not isinstance(a, dict) or not isinstance(b, dict):
            continue
        fa, fb = a.get("function") or {}, b.get("function") or {}
        if fa.get("name") != fb.get("name"):
            return f"{name} tool call {i + 1}: sent {fa.get('name')}, recorded {fb.get('name')}"
        if fa.get("arguments") != fb.get("arguments"):
            return (
                f"{name} tool call {i + 1} `{fa.get('name')}` arguments: sent "
                f"{_short(fa.get('arguments'))}, recorded {_short(fb.get('arguments'))}"
            )
        return f"{name} tool call {i + 1} differs: sent {_short(a)}, recorded {_short(b)}"
    return None


def _describe_messages(sent: list[Any], recorded: list[Any]) -> list[str]:
    out: list[str] = []
    if len(sent) != len(recorded):
        out.append(f"messages: sent {len(sent)}, recorded {len(recorded)}")
    for i, (a, b) in enumerate(zip(sent, recorded, strict=False)):
        if json_equal(a, b):
            continue
        name = _message_name(i, a, sent)
        ca, cb = (a or {}).get("content"), (b or {}).get("content")
        calls = _describe_tool_calls(name, (a or {}).get("tool_calls"), (b or {}).get("tool_calls"))
        if isinstance(ca, str) and isinstance(cb, str) and ca != cb:
            out.append(f"{name} content differs {_first_difference(ca, cb)}")
        elif ca == cb and calls is not None:
            out.append(calls)
        else:
            out.append(f"{name} differs: sent {_short(a)}, recorded {_short(b)}")
        break  # later messages follow from the first difference
    return out


def _describe_tools(sent: list[Any], recorded: list[Any]) -> list[str]:
    def by_name(tools: list[Any]) -> dict[str, Any]:
        return {t.get("function", {}).get("name"): t for t in tools if isinstance(t, dict)}

    a, b = by_name(sent), by_name(recorded)
    if not a and b:
        return [f"tools withheld: the recorded request offered {', '.join(sorted(map(str, b)))}"]
    if a and not b:
        return [f"tools offered ({', '.join(sorted(map(str, a)))}): the recorded request had none"]
    out = [f"tool schema `{n}` sent but not recorded" for n in sorted(set(a) - set(b))]
    out += [f"tool schema `{n}` recorded but not sent" for n in sorted(set(b) - set(a))]
    for n in sorted(set(a) & set(b)):
        fa, fb = a[n].get("function", {}), b[n].get("function", {})
        if fa.get("description") != fb.get("description"):
            out.append(
                f"tool schema `{n}` description differs "
                f"{_first_difference(str(fa.get('description')), str(fb.get('description')))}"
            )
        elif not json_equal(fa.get("parameters"), fb.get("parameters")):
            pa, pb = fa.get("parameters") or {}, fb.get("parameters") or {}
            props_a, props_b = pa.get("properties") or {}, pb.get("properties") or {}
            changed = sorted(
                k
                for k in set(props_a) | set(props_b)
                if not json_equal(props_a.get(k), props_b.get(k))
            )
            where = f" (parameter {', '.join(f'`{k}`' for k in changed)})" if changed else ""
            out.append(f"tool schema `{n}` parameters differ{where}")
        elif not json_equal(a[n], b[n]):
            out.append(f"tool schema `{n}` differs: sent {_short(a[n])}, recorded {_short(b[n])}")
    return out


def explain_miss(
    exc: Any,
    episode: str,
    rerecord: str,
    *,
    advice: str | None = None,
) -> CassetteMiss:
    """Turn vcrpy's miss into a :class:`CassetteMiss` in the field's terms.

    The message names ``episode`` and the cassette, counts the interactions played, picks the
    closest recorded request (same method and path, unplayed first, fewest differing body
    fields) and lists what differs: the system prompt, a message (its content or tool calls),
    a tool schema (description or parameters), tools offered or withheld, a sampling or
    request parameter, the model, a query parameter. It ends with ``rerecord``, the command
    that re-records the episode, or with ``advice`` when given."""
    req = exc.failed_request
    cassette = exc.cassette
    played = sum(1 for i in range(len(cassette.requests)) if cassette.play_counts[i])
    lines = [
        f"cassette miss in episode {episode}: {req.method} {urlsplit(req.uri).path} "
        f"is not in {cassette._path} (request {played + 1}; "
        f"{played} of {len(cassette.requests)} recorded interactions played)."
    ]
    same_path = [
        (i, r)
        for i, r in enumerate(cassette.requests)
        if urlsplit(r.uri).path == urlsplit(req.uri).path and r.method == req.method
    ]
    unplayed = [(i, r) for i, r in same_path if not cassette.play_counts[i]]
    candidates = unplayed or same_path
    if not candidates:
        lines.append("No recorded request has this method and path.")
    else:
        sent = parse_json_body(req.body)

        def distance(item: tuple[int, Any]) -> int:
            rec = parse_json_body(item[1].body)
            if isinstance(sent, dict) and isinstance(rec, dict):
                return sum(
                    1 for k in set(sent) | set(rec) if not json_equal(sent.get(k), rec.get(k))
                )
            return 0 if _matched_query(item[1].uri) == _matched_query(req.uri) else 1

        index, closest = min(candidates, key=distance)
        if not unplayed:
            lines.append(
                f"Every recorded {req.method} {urlsplit(req.uri).path} was already played: "
                "the host made more requests than were recorded."
            )
        lines.append(f"Closest recorded request: interaction {index + 1}. What differs:")
        if sent is not None or parse_json_body(closest.body) is not None:
            diffs = _describe_body_difference(sent, parse_json_body(closest.body))
        else:  # neither body is JSON: they are compared byte for byte
            mine, theirs = _body_bytes(req.body), _body_bytes(closest.body)
            shown = [_short(b.decode("utf-8", "replace")) for b in (mine, theirs)]
            diffs = (
                [f"request body (not JSON) differs: sent {shown[0]}, recorded {shown[1]}"]
                if mine != theirs
                else []
            )
        rq, sq = _matched_query(closest.uri), _matched_query(req.uri)
        if rq != sq:  # a repeated name's values compared as a list, as the matcher does
            for key in sorted(set(rq) | set(sq)):
                if rq.get(key) != sq.get(key):
                    diffs.append(f"query `{key}`: sent {sq.get(key)!r}, recorded {rq.get(key)!r}")
        lines.extend(f"  - {d}" for d in diffs or ["nothing the matchers compare differs"])
    if advice is not None:
        lines.append(advice)
    elif "--only" in rerecord:
        lines.append(f"If the change is intended, re-record this episode: {rerecord}")
    else:  # the prompt, a tool schema or a setting changed: every episode is affected
        lines.append(f"If the change is intended, the whole set is stale; re-record it: {rerecord}")
    # never print a secret: the request's credential query values, the keys known to be set
    secrets = sorted({*url_secrets(req.uri), *known_secrets()}, key=lambda s: (-len(s), s))
    return CassetteMiss(redact_text("\n".join(lines), secrets))


def _matched_query(uri: str) -> dict[str, str | list[str]]:
    """The query as the matcher compares it: credentials dropped (recording drops them); a
    name given more than once maps to its values in order."""
    out: dict[str, str | list[str]] = {}
    for name, value in sorted(parse_qsl(urlsplit(strip_secret_query(uri)).query)):
        had = out.get(name)
        out[name] = value if had is None else [*([had] if isinstance(had, str) else had), value]
    return out


class ReplayMiss(Exception):
    """A request the cassette in play does not hold (raised by the replay transport,
    :mod:`toolreplay.cassettes.transport`). Carries what :func:`explain_miss` reads, as vcrpy's
    miss does:
    ``failed_request`` and ``cassette`` (``requests``, ``play_counts``, ``_path``)."""

    def __init__(self, message: str, cassette: Any, failed_request: Any) -> None:
        super().__init__(message)
        self.cassette = cassette
        self.failed_request = failed_request

    def __reduce__(self) -> Any:  # pragma: no cover - explained before it crosses processes
        return (RuntimeError, (str(self),))


def is_miss(exc: BaseException) -> bool:
    """Whether ``exc`` itself is a cassette miss: the replay transport's :class:`ReplayMiss`
    or vcrpy's ``CannotOverwriteExistingCassetteException`` (checked only once vcrpy has been
    imported: no vcrpy miss can exist before)."""
    if isinstance(exc, ReplayMiss):
        return True
    errors = sys.modules.get("vcr.errors")
    return errors is not None and isinstance(exc, errors.CannotOverwriteExistingCassetteException)


def _body_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


def find_miss(exc: BaseException) -> Any:
    """The cassette miss behind ``exc``, if any: a :class:`ReplayMiss` or vcrpy's
    ``CannotOverwriteExistingCassetteException``, raised by the transport of whichever client
    sent the request (httpx, httpx2, requests). An SDK may raise it as itself (openai 3.x,
    google-genai) or wrap it in its connection error (openai 1.x and 2.x, anthropic 2.x:
    ``APIConnectionError``, the miss its ``__cause__``); the chain is followed."""
    seen: BaseException | None = exc
    while seen is not None:
        if is_miss(seen):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
