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

import contextvars
import hashlib
import json
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote_plus, urlsplit, urlunsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from .files import (
    InputFileError,
    atomic_write_text,
    decode_input,
    leftovers,
    read_input_bytes,
    read_input_text,
)

if TYPE_CHECKING:  # vcrpy is imported when recording (or a test's cassette) needs it
    import vcr

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


class AliasError(yaml.YAMLError):
    """A cassette uses a YAML anchor and alias (refused: a few lines of aliases can expand to
    gigabytes when the body is turned back into JSON)."""


def _refuse_shared_nodes(root: yaml.Node) -> None:
    """Walk the composed node graph once; an alias makes a node reachable twice (or a cycle),
    so the first node seen again is refused, before anything is constructed or expanded."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            mark = node.start_mark
            raise AliasError(
                f"YAML alias to the node anchored at line {mark.line + 1}, column "
                f"{mark.column + 1}: cassettes may not use anchors or aliases"
            )
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((value, key))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))


_NO_ALIAS_LOADERS: dict[type, type] = {}


def _no_alias_loader(base: type) -> type:
    """``base`` (a PyYAML safe loader, libyaml's by default) with a compose-time check that
    refuses aliases (:func:`_refuse_shared_nodes`)."""
    if base not in _NO_ALIAS_LOADERS:

        def get_single_node(self: Any) -> Any:
            node = base.get_single_node(self)  # type: ignore[attr-defined]
            if node is not None:
                _refuse_shared_nodes(node)
            return node

        _NO_ALIAS_LOADERS[base] = type(
            f"NoAlias{base.__name__}", (base,), {"get_single_node": get_single_node}
        )
    return _NO_ALIAS_LOADERS[base]


def _load_yaml(text: str) -> Any:
    """Parse one YAML document with the safe loader; aliases refused (:class:`AliasError`)."""
    return yaml.load(text, Loader=_no_alias_loader(_Loader))


# libyaml's emitter when available (~4x faster; the same bytes for every committed cassette);
# the representers, and so the choice of styles, are PyYAML's either way.
class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    pass


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # A literal block keeps multi-line text readable, but YAML reads NEL and the Unicode line
    # and paragraph separators as line breaks there; such strings keep the quoted style.
    plain_lines = not any(ch in data for ch in "\x85\u2028\u2029\r")
    style = ("|" if "\n" in data else None) if plain_lines else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_presenter)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def _storable_json(body: Any) -> tuple[bool, Any]:
    """``(True, value)`` when ``body`` is a JSON document whose value survives the trip
    through YAML and back to JSON unchanged: strict JSON (no NaN/Infinity, no duplicate keys),
    finite numbers, text without lone surrogates, not ``null``. Anything else is stored as
    text or bytes, byte for byte."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return False, None
    if not isinstance(body, str) or not body.strip():
        return False, None
    try:
        value = json.loads(body, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError):
        return False, None
    if value is None or _json_problem(value, text=True) is not None:
        return False, None
    return True, value


class JsonBodySerializer:
    """vcrpy serializer: YAML with JSON bodies stored parsed under ``parsed_body``.

    What is stored replays: a body that :func:`_storable_json` accepts is stored parsed and
    replays as the same JSON value (same types, same key order; the bytes are those of
    ``json.dumps``); every other body (any text, any bytes: bytes that are not UTF-8 as
    ``!!binary``) is stored and replayed byte for byte."""

    @staticmethod
    def serialize(cassette_dict: dict[str, Any]) -> str:
        for interaction in cassette_dict["interactions"]:
            request = interaction["request"]
            ok, parsed = _storable_json(request.get("body"))
            if ok:
                del request["body"]
                request["parsed_body"] = parsed
            body = interaction["response"].get("body", {})
            ok, parsed = _storable_json(body.get("string"))
            if ok:
                interaction["response"]["body"] = {"parsed_body": parsed}
        return yaml.dump(
            cassette_dict, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100
        )

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        data: dict[str, Any] = _load_yaml(text)
        for interaction in data.get("interactions", []):
            _unparse_bodies(interaction)
        return data


def _unparse_bodies(interaction: dict[str, Any]) -> dict[str, Any]:
    """Stored form → vcrpy form: ``parsed_body`` turned back into a JSON string, in place."""
    request = interaction["request"]
    if "parsed_body" in request:
        request["body"] = json.dumps(request.pop("parsed_body"), ensure_ascii=False)
    body = interaction["response"].get("body", {})
    if "parsed_body" in body:
        interaction["response"]["body"] = {
            "string": json.dumps(body["parsed_body"], ensure_ascii=False)
        }
    return interaction


# ---- matching and filtering --------------------------------------------------------------


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two parsed JSON values with their types: booleans, numbers, strings and
    null are never equal across types (``True`` ≠ ``1``, ``0`` ≠ ``False``, ``"1"`` ≠ ``1``);
    JSON has one number type, so ``1 == 1.0``. Objects compare by keys and values (order
    aside), arrays element by element. Python's ``==`` would call ``True == 1`` equal."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool):
            if not (isinstance(x, bool) and isinstance(y, bool) and x == y):
                return False
        elif isinstance(x, (int, float)) and isinstance(y, (int, float)):
            if not (x == y or (x != x and y != y)):  # NaN matches NaN (lenient JSON)
                return False
        elif isinstance(x, str) and isinstance(y, str):
            if x != y:
                return False
        elif x is None or y is None:
            if not (x is None and y is None):
                return False
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        else:
            return False
    return True


def _json_body_matcher(r1: Any, r2: Any) -> None:
    b1, b2 = _parse_json_body(r1.body), _parse_json_body(r2.body)
    if b1 is None and b2 is None:
        if (r1.body or b"") != (r2.body or b""):
            raise AssertionError("bodies differ")
        return
    if not json_equal(b1, b2):
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


#: The cassette :func:`replay_cassette` has just loaded and checked, so vcrpy's load does not
#: parse and validate the same file again.
_PRELOADED: contextvars.ContextVar[tuple[Path, list[dict[str, Any]]] | None] = (
    contextvars.ContextVar("toolreplay_preloaded_cassette", default=None)
)


class AtomicPersister:
    """vcrpy persister: cassettes are written atomically (:func:`~toolreplay.files.
    atomic_write_text`), so a killed recording never leaves a half-written cassette."""

    @staticmethod
    def load_cassette(cassette_path: str | Path, serializer: Any) -> Any:
        """Load through :func:`load_cassette` (every field validated); a missing file is
        vcrpy's "not found" (recording starts a new cassette)."""
        from vcr.persisters.filesystem import CassetteNotFoundError
        from vcr.request import Request as VcrRequest
        from vcr.serializers import compat

        path = Path(cassette_path)
        preloaded = _PRELOADED.get()
        if preloaded is not None and preloaded[0] == path:
            loaded = preloaded[1]  # replay_cassette has just loaded and checked it
        elif not path.is_file():
            raise CassetteNotFoundError()
        else:
            loaded = load_cassette(path)
        interactions = [_unparse_bodies(i) for i in loaded]
        requests = [VcrRequest._from_dict(i["request"]) for i in interactions]
        responses = [compat.convert_to_bytes(i["response"]) for i in interactions]
        return requests, responses

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize as vcr_serialize

        path = Path(cassette_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, vcr_serialize(cassette_dict, serializer))


def make_vcr(record_mode: Literal["none", "once", "new_episodes", "all"] = "none") -> vcr.VCR:
    """A VCR configured as the module docstring says."""
    import vcr

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

#: A cassette larger than this is refused before parsing (ours are a few kilobytes each).
CASSETTE_LIMIT = 64 * 1024 * 1024

Headers = dict[str, list[str]]
Body = str | bytes | None  # text, bytes (stored as !!binary), or no body


def _json_problem(value: Any, where: str = "", *, text: bool = False) -> str | None:
    """Where ``value`` stops being JSON (a YAML date, a non-string key, NaN...), or None.
    With ``text``, strings (keys too) must also be encodable as UTF-8 (no lone surrogates)."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            if text and not _utf8_ok(item):
                return f"{at or 'value'}: a lone surrogate"
            continue
        if item is None or isinstance(item, (bool, int)):
            continue
        if isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                return f"{at or 'value'}: {item} is not a JSON number"
            continue
        if isinstance(item, list):
            stack.extend((v, f"{at}.{i}" if at else str(i)) for i, v in enumerate(item))
        elif isinstance(item, dict):
            for k, v in item.items():
                if not isinstance(k, str):
                    return f"{at or 'value'}: key {k!r} is not a string"
                if text and not _utf8_ok(k):
                    return f"{at or 'value'}: a key with a lone surrogate"
                stack.append((v, f"{at}.{k}" if at else k))
        else:
            return f"{at or 'value'}: a YAML {type(item).__name__}, not a JSON value"
    return None


def _utf8_ok(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _RequestModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    method: str = Field(min_length=1)
    uri: str = Field(min_length=1)
    headers: Headers
    body: Body = None
    parsed_body: Any = None

    @model_validator(mode="after")
    def _has_body(self) -> _RequestModel:
        fields = self.model_fields_set & {"body", "parsed_body"}
        if len(fields) != 1:
            raise ValueError("needs exactly one of 'body' or 'parsed_body'")
        if "parsed_body" in fields and (problem := _json_problem(self.parsed_body)):
            raise ValueError(f"parsed_body.{problem}")
        return self


class _StatusModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    code: int = Field(ge=100, le=599)
    message: str


class _BodyModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    string: Body = None
    parsed_body: Any = None

    @model_validator(mode="after")
    def _one_form(self) -> _BodyModel:
        if len(self.model_fields_set) != 1:
            raise ValueError("needs exactly one of 'string' or 'parsed_body'")
        if "parsed_body" in self.model_fields_set and (
            problem := _json_problem(self.parsed_body)
        ):
            raise ValueError(f"parsed_body.{problem}")
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


def _first_error(exc: ValidationError, prefix: str = "") -> str:
    """``where: what`` for the first error pydantic found (``where`` dotted, after
    ``prefix``), without pydantic's "Value error, " decoration."""
    err = exc.errors()[0]
    where = ".".join([prefix, *map(str, err["loc"])] if prefix else map(str, err["loc"]))
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"{where}: {msg}" if where else msg


class _CassetteModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    version: Literal[1]
    interactions: list[Any]


class CassetteDamaged(CassetteError):
    """A cassette's bytes differ from the sha256 the manifest holds for it: the file was
    edited or damaged since recording. Not a cassette miss."""


def load_cassette(path: Path, expected_sha256: str | None = None) -> list[dict[str, Any]]:
    """The interactions of the cassette at ``path``, as stored (JSON bodies parsed under
    ``parsed_body``), every field validated; the one place a cassette is read and checked.
    Each call returns a fresh list the caller may change.

    Checks, in order, each failure a :class:`CassetteError` whose message starts with
    ``path`` and says where and what: the file exists, is a file, is at most
    :data:`CASSETTE_LIMIT` bytes; its sha256 equals ``expected_sha256`` when given
    (:class:`CassetteDamaged`, "edited or damaged since recording", naming also what else is
    wrong with it); UTF-8 (line, column, byte); YAML without anchors or aliases (line,
    column); ``version: 1`` and an ``interactions`` list; each interaction (numbered from 1)
    field by field: request method, URI, headers (name → list of strings), body (text,
    bytes or a JSON value); response status code (100–599) and message, headers, body (text,
    bytes or a JSON value). What a reply body *says* (choices, tool calls, usage) is not
    judged here: any recorded reply replays and the model client gives it an outcome; a body
    cut short or edited since recording fails the sha256 check instead.

    A cassette is parsed and validated once per content: the result is kept, by the sha256 of
    the file's bytes, in memory and in the parse cache on disk (:class:`ParseCache`), so a
    file read again (by another episode's audit check, another worker, the next run) costs a
    read, a hash and an unmarshal. The bytes are read and hashed every time, so an edited
    file is always parsed again."""
    try:
        data = read_input_bytes(path, "cassette", CASSETTE_LIMIT)
    except InputFileError as exc:
        if exc.missing:
            raise CassetteError(f"cassette not found: {path}") from None
        raise CassetteError(str(exc)) from None
    digest = hashlib.sha256(data).hexdigest()
    if expected_sha256 is not None and digest != expected_sha256:
        try:
            _validate(path, data)
            problem = ""
        except CassetteError as exc:
            problem = f"; it also fails to load: {str(exc).removeprefix(f'{path}: ')}"
        raise CassetteDamaged(
            f"{path}: edited or damaged since recording (its sha256 differs from the one "
            f"manifest.json holds{problem}). Restore it from version control or re-record it"
        )
    cache = parse_cache()
    interactions = cache.get(digest)
    if interactions is None:
        interactions = _validate(path, data)
        cache.put(digest, interactions)
    return interactions


#: Environment variable naming the parse cache's folder; set but empty turns the cache off.
CACHE_DIR_ENV = "TOOLREPLAY_CACHE_DIR"
#: Bump when what :func:`_validate` accepts or returns changes: older entries are ignored.
PARSE_CACHE_FORMAT = 1


def default_cache_dir() -> Path | None:
    """``$TOOLREPLAY_CACHE_DIR`` (None when set but empty: no disk cache), else
    ``$XDG_CACHE_HOME/toolreplay`` or ``~/.cache/toolreplay``."""
    import os

    value = os.environ.get(CACHE_DIR_ENV)
    if value is not None:
        return Path(value) if value.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "toolreplay"


class ParseCache:
    """Validated cassettes by the sha256 of their bytes: in memory (marshal blobs, at most
    ``memory_limit`` bytes, oldest dropped first) and, when ``folder`` is given, on disk as
    ``FOLDER/cassettes-<format>/<sha256>.marshal`` (outside the repository; never needed:
    deleting it only costs a parse). Entries are keyed by content, so an edited cassette
    never meets an old entry; a disk entry carries the sha256 of its payload and one that
    does not match (cut short, edited) is ignored and rewritten. A folder that cannot be
    written is left alone (the cache then lives in memory only). Entries are written with
    ``marshal`` for the running Python (its version is part of the folder name)."""

    def __init__(self, folder: Path | None, memory_limit: int = 48 * 1024 * 1024) -> None:
        import marshal
        import sys

        version = f"v{PARSE_CACHE_FORMAT}-py{sys.version_info[0]}{sys.version_info[1]}"
        self.folder = folder / f"cassettes-{version}-m{marshal.version}" if folder else None
        self.memory_limit = memory_limit
        self._memory: dict[str, bytes] = {}
        self._size = 0
        self._lock = threading.Lock()
        self.parsed = 0  # cassettes validated because no entry held them (benchmarks read it)

    def get(self, digest: str) -> list[dict[str, Any]] | None:
        import marshal

        blob = self._memory.get(digest)
        if blob is None and self.folder is not None:
            try:
                stored = (self.folder / f"{digest}.marshal").read_bytes()
            except OSError:
                stored = b""
            if len(stored) > 32 and hashlib.sha256(stored[32:]).digest() == stored[:32]:
                blob = stored[32:]
                self._remember(digest, blob)
        if blob is None:
            return None
        value: list[dict[str, Any]] = marshal.loads(blob)
        return value

    def put(self, digest: str, interactions: list[dict[str, Any]]) -> None:
        import marshal
        import os
        import tempfile

        self.parsed += 1
        try:
            blob = marshal.dumps(interactions)
        except ValueError:  # a value marshal cannot hold: not cached
            return
        self._remember(digest, blob)
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".marshal")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(hashlib.sha256(blob).digest() + blob)
                os.replace(tmp, self.folder / f"{digest}.marshal")
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            self.folder = None  # read-only or full: keep to memory from now on

    def _remember(self, digest: str, blob: bytes) -> None:
        with self._lock:
            if digest in self._memory or len(blob) > self.memory_limit:
                return
            while self._memory and self._size + len(blob) > self.memory_limit:
                self._size -= len(self._memory.pop(next(iter(self._memory))))
            self._memory[digest] = blob
            self._size += len(blob)


_parse_caches: dict[Path | None, ParseCache] = {}


def parse_cache() -> ParseCache:
    """The process's :class:`ParseCache` for the folder :func:`default_cache_dir` names now."""
    folder = default_cache_dir()
    cache = _parse_caches.get(folder)
    if cache is None:
        cache = _parse_caches[folder] = ParseCache(folder)
    return cache


def _validate(path: Path, data: bytes) -> list[dict[str, Any]]:
    try:
        text = decode_input(path, data, "cassette")
    except InputFileError as exc:
        raise CassetteError(str(exc)) from None
    try:
        raw = _load_yaml(text)
    except yaml.YAMLError as exc:
        raise CassetteError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("interactions"), list):
        raise CassetteError(f"{path}: not a cassette (no 'interactions' list)")
    try:
        _CassetteModel.model_validate(raw)
    except ValidationError as exc:
        raise CassetteError(f"{path}: {_first_error(exc)}") from None
    for i, item in enumerate(raw["interactions"], start=1):
        try:
            _InteractionModel.model_validate(item)
        except ValidationError as exc:
            raise CassetteError(f"{path}: interaction {i}: {_first_error(exc)}") from None
    interactions: list[dict[str, Any]] = raw["interactions"]
    return interactions


def read_cassette(path: Path) -> list[dict[str, Any]]:
    """:func:`load_cassette` without the manifest check (kept for existing callers)."""
    return load_cassette(path)


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
        sent = _parse_json_body(req.body)

        def distance(item: tuple[int, Any]) -> int:
            rec = _parse_json_body(item[1].body)
            if isinstance(sent, dict) and isinstance(rec, dict):
                return sum(
                    1 for k in set(sent) | set(rec) if not json_equal(sent.get(k), rec.get(k))
                )
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
        else:  # neither body is JSON: they are compared byte for byte
            mine, theirs = _body_bytes(req.body), _body_bytes(closest.body)
            shown = [_short(b.decode("utf-8", "replace")) for b in (mine, theirs)]
            diffs = (
                [f"request body (not JSON) differs: sent {shown[0]}, recorded {shown[1]}"]
                if mine != theirs
                else []
            )
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


class ReplayMiss(Exception):
    """A request the cassette in play does not hold (raised by the replay transport,
    :mod:`toolreplay.replay`). Carries what :func:`explain_miss` reads, as vcrpy's miss does:
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
    """The cassette miss behind ``exc`` (the SDK wraps it in a connection error), if any:
    a :class:`ReplayMiss` or vcrpy's ``CannotOverwriteExistingCassetteException``."""
    seen: BaseException | None = exc
    while seen is not None:
        if is_miss(seen):
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
    from unittest import mock

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
    path: Path,
    episode: str,
    rerecord: str | Callable[[], str],
    record_mode: RecordMode = "none",
    expected_sha256: str | None = None,
    *,
    player: Any = None,
) -> Iterator[Any]:
    """Replay one episode's cassette with ``record_mode`` (``none`` unless the caller, e.g.
    pytest's ``--record-mode``, says otherwise; in the other modes a request that is not
    recorded goes to the endpoint and is added, and the unplayed check is off), after
    :func:`load_cassette` has checked it (in mode ``none`` against ``expected_sha256``, the
    manifest's, when given).

    With a :class:`toolreplay.replay.Player` in record mode ``none``, the cassette is served
    to the player's clients (no patching; yields the :class:`~toolreplay.replay.Tape`);
    otherwise vcrpy patches the HTTP libraries for the block (yields vcrpy's cassette).
    ``rerecord`` is the command that re-records the episode, or a function that makes it
    (called only when an error needs it). Either way the errors are the same:
    :class:`CassetteError` (missing/malformed),
    :class:`CassetteDamaged` (edited or damaged since recording), :class:`CassetteMiss` (a
    request not recorded: what differs and how to re-record) or
    :class:`UnplayedInteractions` (recorded interactions never requested)."""

    def command() -> str:
        return rerecord() if callable(rerecord) else rerecord

    if record_mode == "none" and not path.exists():
        raise CassetteError(
            f"cassette not found: {path} (episode {episode}); record it: {command()}"
        )
    preloaded = None
    if path.exists():
        try:
            interactions = load_cassette(path, expected_sha256 if record_mode == "none" else None)
        except CassetteDamaged as exc:
            raise CassetteDamaged(f"{exc} (episode {episode}): {command()}") from None
        preloaded = (Path(str(path)), interactions)
    token = _PRELOADED.set(preloaded)
    try:
        if player is not None and record_mode == "none" and preloaded is not None:
            from .replay import Tape

            with player.use(Tape(path, preloaded[1])) as tape:
                yield tape
            left = tape.unplayed()
        else:
            with (
                make_vcr(record_mode).use_cassette(str(path)) as cassette,
                one_request_at_a_time(cassette),
            ):
                yield cassette
                left = []
                if record_mode == "none" and not cassette.all_played:
                    left = [
                        f"interaction {i + 1}: {r.method} {urlsplit(r.uri).path}"
                        for i, r in enumerate(cassette.requests)
                        if not cassette.play_counts[i]
                    ]
        if left:
            raise UnplayedInteractions(
                f"episode {episode} left {len(left)} recorded interaction(s) of {path} "
                f"unplayed ({'; '.join(left)}): the host made fewer requests than were "
                f"recorded. Re-record if intended: {command()}"
            )
    except (CassetteMiss, UnplayedInteractions, CassetteError):
        raise
    except Exception as exc:
        miss = find_miss(exc)
        if miss is None:
            raise
        raise explain_miss(miss, episode, command()) from None
    finally:
        _PRELOADED.reset(token)


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
    if set_dir.exists() and not set_dir.is_dir():
        raise CassetteError(f"{set_dir}: is a file, not a cassette set folder")
    try:
        text = read_input_text(path, "manifest", CASSETTE_LIMIT)
    except InputFileError as exc:
        if not exc.missing:
            raise CassetteError(str(exc)) from None
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
    try:
        raw = json.loads(text)
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
