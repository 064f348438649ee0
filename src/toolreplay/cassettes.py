"""Cassettes: vcrpy configuration, a readable serializer, request matching, the manifest.

Layout: ``cassettes/<set>/<configuration>/<question-id>.yaml`` (one episode each, model and
Open-Meteo interactions in order) plus ``cassettes/<set>/manifest.json``. A set recorded with
several trials (``manifest.trials > 1``) keeps each episode's trials in a folder instead:
``cassettes/<set>/<configuration>/<question-id>/trial-<i>.yaml``, i = 1..trials.

- Matching: method, path, query and the JSON body compared as parsed JSON. Host and port are
  not matched, so a set recorded on loopback replays under any URL.
- Storage: JSON bodies are stored parsed (``parsed_body``), Chinese unescaped; only
  ``content-type`` headers are kept (authorization, api keys, cookies, ``x-stainless-*``,
  dates and request ids never reach a cassette); query parameters that carry credentials
  (:data:`SECRET_QUERY`: ``apikey``, ``key``, ``access_token``, ``signature``...) are dropped
  from URIs, and so are loopback ports.
- Replay: record mode ``none``; a request that is not recorded raises :class:`CassetteMiss`
  (what differs from the closest recorded request, and how to re-record); an interaction left
  unplayed raises :class:`UnplayedInteractions`; a malformed file raises
  :class:`CassetteError` naming the file and the interaction.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal
from unittest import mock
from urllib.parse import unquote_plus, urlsplit, urlunsplit

import vcr
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from vcr.errors import CannotOverwriteExistingCassetteException
from vcr.persisters.filesystem import FilesystemPersister
from vcr.serialize import serialize as vcr_serialize

from .files import atomic_write_text, leftovers

KEPT_HEADERS = {"content-type"}
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
MATCH_ON = ("method", "path", "query", "json_body")
MANIFEST_FORMAT: Literal[1] = 1
#: Query parameter names (lower-cased) that carry credentials; dropped before recording.
SECRET_QUERY = re.compile(
    r"(?:key|token|secret|passw(?:or)?d|pwd|signature|sig|auth|authorization|credentials?)$"
)


class CassetteError(ValueError):
    """A cassette or manifest file is missing or malformed; the message names the file
    (and the interaction, counted from 1)."""


class UnplayedInteractions(AssertionError):
    """The episode finished but the cassette holds recorded interactions it never requested."""


class CassetteMiss(RuntimeError):
    """Replay met a request that is not in the cassette. The message says which episode,
    what differs from the closest recorded request, and the command that re-records it."""


# ---- serializer --------------------------------------------------------------------------


def _parse_json_body(body: Any) -> Any:
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(body, str) or not body.strip():
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: ~10x faster


def _load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # A literal block keeps multi-line text readable, but YAML reads NEL and the Unicode line
    # and paragraph separators as line breaks there; such strings keep the quoted style.
    plain_lines = not any(ch in data for ch in "\x85\u2028\u2029\r")
    style = ("|" if "\n" in data else None) if plain_lines else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_presenter)


class JsonBodySerializer:
    """vcrpy serializer: YAML with JSON bodies stored parsed under ``parsed_body``."""

    @staticmethod
    def serialize(cassette_dict: dict[str, Any]) -> str:
        for interaction in cassette_dict["interactions"]:
            request = interaction["request"]
            parsed = _parse_json_body(request.get("body"))
            if parsed is not None:
                del request["body"]
                request["parsed_body"] = parsed
            body = interaction["response"].get("body", {})
            parsed = _parse_json_body(body.get("string"))
            if parsed is not None:
                interaction["response"]["body"] = {"parsed_body": parsed}
        return yaml.dump(
            cassette_dict, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100
        )

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        data: dict[str, Any] = _load_yaml(text)
        for interaction in data.get("interactions", []):
            request = interaction["request"]
            if "parsed_body" in request:
                request["body"] = json.dumps(request.pop("parsed_body"), ensure_ascii=False)
            body = interaction["response"].get("body", {})
            if "parsed_body" in body:
                interaction["response"]["body"] = {
                    "string": json.dumps(body["parsed_body"], ensure_ascii=False)
                }
        return data


# ---- matching and filtering --------------------------------------------------------------


def _json_body_matcher(r1: Any, r2: Any) -> None:
    b1, b2 = _parse_json_body(r1.body), _parse_json_body(r2.body)
    if b1 is None and b2 is None:
        if (r1.body or b"") != (r2.body or b""):
            raise AssertionError("bodies differ")
        return
    if b1 != b2:
        raise AssertionError("JSON bodies differ")


def strip_secret_query(url: str) -> str:
    """``url`` without the query parameters :data:`SECRET_QUERY` names (order and the rest of
    the query kept as sent)."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    kept = [
        pair
        for pair in parts.query.split("&")
        if not SECRET_QUERY.search(unquote_plus(pair.partition("=")[0]).lower())
    ]
    return urlunsplit(parts._replace(query="&".join(kept)))


def _before_record_request(request: Any) -> Any:
    # Header names are lower-cased so that a re-recording is byte-stable whatever casing the
    # HTTP library of the day sends (HTTP header names are case-insensitive).
    request.headers = {
        k.lower(): v for k, v in request.headers.items() if k.lower() in KEPT_HEADERS
    }
    request.uri = strip_secret_query(request.uri)
    parts = urlsplit(request.uri)
    if parts.hostname in LOOPBACK:
        request.uri = urlunsplit(parts._replace(netloc=parts.hostname or ""))
    return request


def _before_record_response(response: dict[str, Any]) -> dict[str, Any]:
    response["headers"] = {
        k.lower(): v for k, v in response.get("headers", {}).items() if k.lower() in KEPT_HEADERS
    }
    return response


class AtomicPersister:
    """vcrpy persister: cassettes are written atomically (:func:`~toolreplay.files.
    atomic_write_text`), so a killed recording never leaves a half-written cassette."""

    @staticmethod
    def load_cassette(cassette_path: str | Path, serializer: Any) -> Any:
        return FilesystemPersister.load_cassette(cassette_path, serializer)

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: Any, serializer: Any) -> None:
        path = Path(cassette_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, vcr_serialize(cassette_dict, serializer))


def make_vcr(record_mode: Literal["none", "once", "new_episodes", "all"] = "none") -> vcr.VCR:
    """A VCR configured as the module docstring says."""
    v = vcr.VCR(
        record_mode=record_mode,
        match_on=MATCH_ON,
        serializer="toolreplay-yaml",
        before_record_request=_before_record_request,
        before_record_response=_before_record_response,
        decode_compressed_response=True,
    )
    v.register_serializer("toolreplay-yaml", JsonBodySerializer)
    v.register_persister(AtomicPersister)
    v.register_matcher("json_body", _json_body_matcher)
    return v


# ---- validation of files read from disk ----------------------------------------------------


Headers = dict[str, list[str]]


class _RequestModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    method: str
    uri: str
    headers: Headers
    body: str | None = None
    parsed_body: Any = None

    @model_validator(mode="after")
    def _has_body(self) -> _RequestModel:
        if "body" not in self.model_fields_set and "parsed_body" not in self.model_fields_set:
            raise ValueError("needs 'body' or 'parsed_body'")
        return self


class _StatusModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    code: int = Field(ge=100, le=599)
    message: str


class _BodyModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    string: str | None = None
    parsed_body: Any = None

    @model_validator(mode="after")
    def _one_form(self) -> _BodyModel:
        if len(self.model_fields_set) != 1:
            raise ValueError("needs exactly one of 'string' or 'parsed_body'")
        return self


class _ResponseModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    status: _StatusModel
    headers: Headers
    body: _BodyModel


class _InteractionModel(BaseModel):
    """One recorded exchange. The reply body's shape is not judged here: whatever a server
    sent (no choices, HTML, an event stream...) replays, and the model client gives it an
    outcome (stop reason ``error`` with what was wrong)."""

    model_config = ConfigDict(extra="forbid")
    request: _RequestModel
    response: _ResponseModel


def read_cassette(path: Path) -> list[dict[str, Any]]:
    """The interactions of a cassette as stored (bodies parsed), validated.

    Raises :class:`CassetteError` naming ``path`` and, for a malformed interaction, its
    number (from 1) and the missing or wrong field."""
    try:
        data = _load_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CassetteError(f"cassette not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise CassetteError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise CassetteError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise CassetteError(f"{path}: not a cassette (no 'interactions' list)")
    for i, raw in enumerate(data["interactions"], start=1):
        try:
            _InteractionModel.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or "interaction"
            raise CassetteError(f"{path}: interaction {i}: {where}: {err['msg']}") from None
    interactions: list[dict[str, Any]] = data["interactions"]
    return interactions


# ---- miss explanations ------------------------------------------------------------------


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
        if a == b:
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
        if a == b or not isinstance(a, dict) or not isinstance(b, dict):
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
        if a == b:
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
        elif fa.get("parameters") != fb.get("parameters"):
            pa, pb = fa.get("parameters") or {}, fb.get("parameters") or {}
            props_a, props_b = pa.get("properties") or {}, pb.get("properties") or {}
            changed = sorted(
                k for k in set(props_a) | set(props_b) if props_a.get(k) != props_b.get(k)
            )
            where = f" (parameter {', '.join(f'`{k}`' for k in changed)})" if changed else ""
            out.append(f"tool schema `{n}` parameters differ{where}")
        elif a[n] != b[n]:
            out.append(f"tool schema `{n}` differs: sent {_short(a[n])}, recorded {_short(b[n])}")
    return out


def explain_miss(
    exc: CannotOverwriteExistingCassetteException,
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
        sent = _parse_json_body(req.body)

        def distance(item: tuple[int, Any]) -> int:
            rec = _parse_json_body(item[1].body)
            if isinstance(sent, dict) and isinstance(rec, dict):
                return sum(1 for k in set(sent) | set(rec) if sent.get(k) != rec.get(k))
            return 0 if item[1].query == req.query else 1

        index, closest = min(candidates, key=distance)
        if not unplayed:
            lines.append(
                f"Every recorded {req.method} {urlsplit(req.uri).path} was already played: "
                "the host made more requests than were recorded."
            )
        lines.append(f"Closest recorded request: interaction {index + 1}. What differs:")
        if sent is not None or _parse_json_body(closest.body) is not None:
            diffs = _describe_body_difference(sent, _parse_json_body(closest.body))
        else:
            diffs = []
        if closest.query != req.query:
            rq, sq = dict(closest.query), dict(req.query)
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
    return CassetteMiss("\n".join(lines))


def find_miss(exc: BaseException) -> CannotOverwriteExistingCassetteException | None:
    """The vcrpy miss behind ``exc`` (the SDK wraps it in a connection error), if any."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, CannotOverwriteExistingCassetteException):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


_SEND_LOCK = threading.Lock()


def _in_call_order(data: list[Any], tags: dict[int, tuple[int, int]]) -> list[Any]:
    """``data`` (a cassette's interactions) with each run of consecutive interactions made by
    the same tool round sorted by tool-call position (stable: a call's own requests keep
    their order). Interactions without a tag (model requests) stay where they are."""
    out: list[Any] = []
    i = 0
    while i < len(data):
        tag = tags.get(i)
        if tag is None:
            out.append(data[i])
            i += 1
            continue
        j = i
        while j < len(data) and (t := tags.get(j)) is not None and t[0] == tag[0]:
            j += 1
        out += [data[k] for k in sorted(range(i, j), key=lambda k: tags[k][1])]
        i = j
    return out


@contextmanager
def one_request_at_a_time(cassette: Any = None) -> Iterator[None]:
    """Serialise ``requests`` sends while a cassette is in use, and keep call order.

    Parallel tool calls send Open-Meteo requests from several threads, but vcrpy is not
    thread-safe: it briefly removes its patches, for every thread, while it builds a real
    connection, so a request sent from another thread at that moment would miss the cassette.
    Under a cassette the sends therefore take turns; in replay each request still gets the
    recorded reply that matches it, whatever order the threads arrive in. When recording
    into ``cassette``, each new interaction is tagged with the tool call that sent it
    (:mod:`toolreplay.callorder`), and on exit (before vcrpy saves) the interactions of each
    tool round are put in call order, so a recording is the same file whatever order the
    threads ran in. Without a cassette (a live run) nothing is serialised."""
    import requests.adapters

    from . import callorder

    send = requests.adapters.HTTPAdapter.send
    tags: dict[int, tuple[int, int]] = {}

    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _SEND_LOCK:
            before = len(cassette.data) if cassette is not None else 0
            try:
                return send(self, *args, **kwargs)
            finally:
                tag = callorder.current()
                if cassette is not None and tag is not None:
                    for index in range(before, len(cassette.data)):
                        tags[index] = tag

    with mock.patch.object(requests.adapters.HTTPAdapter, "send", locked):
        yield
    if cassette is not None and tags:
        cassette.data[:] = _in_call_order(list(cassette.data), tags)


RecordMode = Literal["none", "once", "new_episodes", "all"]


@contextmanager
def replay_cassette(
    path: Path, episode: str, rerecord: str, record_mode: RecordMode = "none"
) -> Iterator[Any]:
    """Replay one episode's cassette with ``record_mode`` (``none`` unless the caller, e.g.
    pytest's ``--record-mode``, says otherwise; in the other modes a request that is not
    recorded goes to the endpoint and is added, and the unplayed check is off).

    Raises :class:`CassetteError` (missing/malformed), :class:`CassetteMiss` (a request not
    recorded) or :class:`UnplayedInteractions` (recorded interactions never requested)."""
    if record_mode == "none" and not path.exists():
        raise CassetteError(
            f"cassette not found: {path} (episode {episode}); record it: {rerecord}"
        )
    if path.exists():
        read_cassette(path)
    try:
        with (
            make_vcr(record_mode).use_cassette(str(path)) as cassette,
            one_request_at_a_time(cassette),
        ):
            yield cassette
            if record_mode == "none" and not cassette.all_played:
                left = [
                    f"interaction {i + 1}: {r.method} {urlsplit(r.uri).path}"
                    for i, r in enumerate(cassette.requests)
                    if not cassette.play_counts[i]
                ]
                raise UnplayedInteractions(
                    f"episode {episode} left {len(left)} recorded interaction(s) of {path} "
                    f"unplayed ({'; '.join(left)}): the host made fewer requests than were "
                    f"recorded. Re-record if intended: {rerecord}"
                )
    except (CassetteMiss, UnplayedInteractions, CassetteError):
        raise
    except Exception as exc:
        miss = find_miss(exc)
        if miss is None:
            raise
        raise explain_miss(miss, episode, rerecord) from None


# ---- manifest ------------------------------------------------------------------------------


def sha256_json(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (sorted keys, UTF-8)."""
    canon = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


class EpisodeRecord(BaseModel):
    """What the manifest keeps of one recorded episode."""

    model_config = ConfigDict(extra="forbid")
    cassette: str
    cassette_sha256: str  # of the file's bytes as recorded; the audit detects later edits
    wall_time_s: float
    prompt_tokens: int
    completion_tokens: int
    rounds: int


class Manifest(BaseModel):
    """``cassettes/<set>/manifest.json``: provenance of a cassette set.

    ``provenance`` is ``stand-in`` (the bundled test-double model and fixture server) or
    ``live``. ``today`` is the date put in the system prompt, used again at replay.
    Hashes detect stale cassettes: the system prompt template and each toolset's schemas.
    ``trials`` and ``seed``: how many trials each episode has, and the stand-in's variation
    seed; ``episodes`` is keyed by :func:`episode_key` (trial 1 ``CONFIG/QUESTION``, later
    trials ``CONFIG/QUESTION/trial-<i>``)."""

    model_config = ConfigDict(extra="forbid")
    format: Literal[1] = MANIFEST_FORMAT
    cassette_set: str
    #: Trials recorded per configuration × question (1: one cassette per episode).
    trials: int = Field(default=1, ge=1)
    #: Seed of the stand-in's per-trial variation (see toolreplay.doubles.standin).
    seed: int = 0
    provenance: Literal["stand-in", "live"]
    model: str
    model_base_url: str
    endpoint_host: str
    geocoding_url: str
    forecast_url: str
    recorded_on: str
    today: str
    eval_file: str
    packages: dict[str, str]
    system_prompt_sha256: str
    tool_schemas_sha256: dict[str, str]
    settings: dict[str, Any]
    episodes: dict[str, EpisodeRecord] = Field(default_factory=dict)


SET_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$")


def check_set_name(name: str) -> str:
    """``name`` if it is a plain folder name (letters, digits, ``._+-``, not starting with a
    dot, no ``..``); :class:`ValueError` otherwise. Guards recording, which replaces the
    set's folder, from ever replacing ``cassettes/`` itself or anything outside it."""
    if not SET_NAME_RE.match(name) or ".." in name:
        raise ValueError(
            f"bad cassette set name {name!r}: use a plain folder name such as reference or "
            "live-qwen (letters, digits, '.', '_', '+', '-')"
        )
    return name


def manifest_path(set_dir: Path) -> Path:
    return set_dir / "manifest.json"


def read_manifest(set_dir: Path) -> Manifest:
    """Load and validate ``manifest.json``; :class:`CassetteError` naming the file otherwise.
    ``cassette_set`` is the folder's name (whatever the set was called when recorded)."""
    path = manifest_path(set_dir)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        left = leftovers(set_dir)
        if left and not set_dir.exists():
            raise CassetteError(
                f"no cassette set at {set_dir}: a recording was interrupted while replacing "
                f"it and left {', '.join(p.name for p in left)} beside it; the next "
                f"`toolreplay record ... --set {set_dir.name}` puts the previous set back "
                "(or rename that folder yourself)"
            ) from None
        raise CassetteError(
            f"no cassette set at {set_dir} ({path.name} missing); record one with "
            f"`toolreplay record --model-source stand-in --set {set_dir.name}`"
        ) from None
    except ValueError as exc:
        raise CassetteError(f"{path}: not valid JSON: {exc}") from None
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise CassetteError(f"{path}: {where}: {err['msg']}") from None
    # A set is named by its folder: a copied or renamed set reports and re-records as itself.
    return manifest.model_copy(update={"cassette_set": set_dir.name})


def write_manifest(set_dir: Path, manifest: Manifest) -> None:
    """Write ``manifest.json`` atomically (:func:`~toolreplay.files.atomic_write_text`)."""
    text = json.dumps(manifest.model_dump(), ensure_ascii=False, indent=2, sort_keys=False)
    atomic_write_text(manifest_path(set_dir), text + "\n")


def redact_url(url: str) -> tuple[str, str]:
    """``(url, host)`` for the manifest: credentials, query and fragment dropped (they may
    hold a key), and the port too for a loopback host (it changes every recording)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host if host in LOOPBACK or parts.port is None else f"{host}:{parts.port}"
    if ":" in host:
        netloc = f"[{host}]" + (f":{parts.port}" if parts.port and host not in LOOPBACK else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")), host


def episode_key(configuration: str, question_id: str, trial: int = 1) -> str:
    """``CONFIG/QUESTION`` for trial 1 (the key of a one-trial set, and the study's episode),
    ``CONFIG/QUESTION/trial-<i>`` for a later trial."""
    base = f"{configuration}/{question_id}"
    return base if trial == 1 else f"{base}/trial-{trial}"


def trial_cassette_path(set_dir: Path, configuration: str, question_id: str, trial: int) -> Path:
    """``<set>/<configuration>/<question-id>/trial-<i>.yaml``: a trial in a several-trial set."""
    return set_dir / configuration / question_id / f"trial-{trial}.yaml"


def cassette_path(set_dir: Path, configuration: str, question_id: str, trial: int = 1) -> Path:
    """The cassette of one episode's ``trial``: ``<set>/<configuration>/<question-id>.yaml``
    in a one-trial set, ``.../<question-id>/trial-<i>.yaml`` when the episode has a trials
    folder (any trial after the first always lives there)."""
    folder = set_dir / configuration / question_id
    if trial != 1 or folder.is_dir():
        return trial_cassette_path(set_dir, configuration, question_id, trial)
    return set_dir / configuration / f"{question_id}.yaml"


def episode_usage(record: EpisodeRecord | None) -> Mapping[str, int]:
    if record is None:
        return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    return {
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "total_tokens": record.prompt_tokens + record.completion_tokens,
    }
