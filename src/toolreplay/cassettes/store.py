"""Reading cassettes: bounded, checked reads, validation of every interaction (pydantic), the
sha256 check against the manifest and the parse cache (memory and disk, keyed by content).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from toolreplay.cassettes.cache_key import entry_mac, folder_key
from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.format import json_problem
from toolreplay.inputs import InputFileError, parse_checked, read_input_bytes

#: A cassette larger than this is refused before parsing (ours are a few kilobytes each).
CASSETTE_LIMIT = 64 * 1024 * 1024


Headers = dict[str, list[str]]


Body = str | bytes | None  # text, bytes (stored as !!binary), or no body


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
        if "parsed_body" in fields and (problem := json_problem(self.parsed_body)):
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
        if "parsed_body" in self.model_fields_set and (problem := json_problem(self.parsed_body)):
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
    wrong with it); UTF-8 (line, column, byte); YAML nesting at most 200 levels, without
    anchors, aliases or a key given twice in a mapping (line, column; checked in the one pass
    that loads it); ``version: 1`` and an ``interactions`` list; each interaction (numbered
    from 1) field by field: request method, URI, headers (name → list of strings), body (text,
    bytes or a JSON value); response status code (100–599) and message, headers, body (text,
    bytes or a JSON value). What a reply body *says* (choices, tool calls, usage) is not
    judged here: any recorded reply replays and the model client gives it an outcome; a body
    cut short or edited since recording fails the sha256 check instead.

    A cassette is parsed and validated once per content: the result is kept, by the sha256 of
    the file's bytes, in memory and in the parse cache on disk (:class:`ParseCache`), so a
    file read again (by another episode's audit check, another worker, the next run) costs a
    read, a hash and an unmarshal. The bytes are read and hashed every time, so an edited
    file is always parsed again."""
    data, digest = _read_checked(path, expected_sha256)
    return _interactions(path, data, digest)


def load_cassette_digest(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """``(sha256 hex of its bytes, interactions)`` of the cassette at ``path``, the file read
    and hashed once: :func:`load_cassette` (its checks, its parse cache) with the digest it
    computed, for a caller that keys what it reads by the bytes (a replay worker's probes).
    The interactions are those last parsed here or for :func:`load_prepared` when the bytes
    are the same (not unmarshalled again for each probe of a cassette just replayed): shared,
    never change them."""
    data, digest = _read_checked(path, None)
    if _LAST[0] != digest:
        _LAST[:] = [digest, _interactions(path, data, digest)]
    return digest, _LAST[1]


#: ``[sha256, interactions]`` last parsed by :func:`load_cassette_digest` or :func:`load_prepared`.
_LAST: list[Any] = ["", None]


_T = TypeVar("_T")


def load_prepared(
    path: Path, expected_sha256: str | None, prepare: Callable[[list[dict[str, Any]]], _T]
) -> _T:
    """``prepare(interactions)`` for the cassette at ``path``, made once per content: the
    file is read, hashed and checked as :func:`load_cassette` does (the same errors), then
    the value is looked up in memory by the sha256 of the bytes and ``prepare`` (see
    :meth:`ParseCache.prepared`). ``prepare`` must be a pure function of the interactions and
    its result is shared by every caller: never change it."""
    data, digest = _read_checked(path, expected_sha256)

    def parsed() -> list[dict[str, Any]]:
        _LAST[:] = [digest, _interactions(path, data, digest)]
        return _LAST[1]

    return parse_cache().prepared(digest, prepare, parsed)


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, at most :data:`CASSETTE_LIMIT`, read by the one checked reader (a
    FIFO or a device is refused unopened); :class:`CassetteError` otherwise."""
    try:
        return read_input_bytes(path, "cassette", CASSETTE_LIMIT)
    except InputFileError as exc:
        if exc.missing:
            raise CassetteError(f"cassette not found: {path}") from None
        raise CassetteError(str(exc)) from None


def _read_checked(path: Path, expected_sha256: str | None) -> tuple[bytes, str]:
    """``(bytes, sha256 hex)`` of the cassette at ``path``, checked against
    ``expected_sha256`` when given (:class:`CassetteDamaged`)."""
    data = _read_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    if expected_sha256 is not None and digest != expected_sha256:
        try:
            validate_cassette(path, data)
            problem = ""
        except CassetteError as exc:
            problem = f"; it also fails to load: {str(exc).removeprefix(f'{path}: ')}"
        raise CassetteDamaged(
            f"{path}: edited or damaged since recording (its sha256 differs from the one "
            f"manifest.json holds{problem}). Restore it from version control or re-record it"
        )
    return data, digest


def _interactions(path: Path, data: bytes, digest: str) -> list[dict[str, Any]]:
    """The validated interactions of ``data`` (whose sha256 is ``digest``): from the parse
    cache, else parsed, validated and kept there."""
    cache = parse_cache()
    interactions = cache.get(digest)
    if interactions is None:
        interactions = validate_cassette(path, data)
        cache.put(digest, interactions)
    return interactions


#: Environment variable naming the parse cache's folder; set but empty turns the cache off.
CACHE_DIR_ENV = "TOOLREPLAY_CACHE_DIR"


#: Bump when what :func:`validate_cassette` accepts or returns, or an entry's layout, changes: older
#: entries are ignored (they live in another folder).
PARSE_CACHE_FORMAT = 4


def default_cache_dir() -> Path | None:
    """``$TOOLREPLAY_CACHE_DIR`` (None when set but empty: no disk cache), else
    ``$XDG_CACHE_HOME/toolreplay`` or ``~/.cache/toolreplay``."""
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
    never meets an old entry. A disk entry is bound to the bytes it was parsed from and to
    its payload: it is the sha256 of the cassette's bytes (32 bytes), then an HMAC-SHA256
    (32 bytes) over that sha256 and the payload, then the payload. The HMAC's key is the
    folder's own (:data:`KEY_FILE`: 32 random bytes made on first use, mode 0600, owned by
    the user; one that is not is replaced). An entry whose sha256 is not the one asked for
    (copied over another), or whose HMAC does not match (cut short, edited, or forged by
    someone who cannot read the key) is ignored and rewritten, never trusted. A folder that
    cannot be written, or whose key cannot be read or made, is left alone (the cache then
    lives in memory only). Entries are written with ``marshal`` for the running Python (its
    version is part of the folder name).

    Beside the parsed cassettes, :meth:`prepared` keeps in memory what replay derives from
    them (match keys, request and response bytes), by the same sha256."""

    def __init__(self, folder: Path | None, memory_limit: int = 48 * 1024 * 1024) -> None:
        import marshal

        version = f"v{PARSE_CACHE_FORMAT}-py{sys.version_info[0]}{sys.version_info[1]}"
        self.folder = folder / f"cassettes-{version}-m{marshal.version}" if folder else None
        self.memory_limit = memory_limit
        self._memory: dict[str, bytes] = {}
        self._size = 0
        self._derived: dict[tuple[str, Callable[..., Any]], tuple[int, Any]] = {}
        self._derived_size = 0
        self._lock = threading.Lock()
        self.parsed = 0  # cassettes validated because no entry held them (benchmarks read it)
        self.folder_asked = folder  # the folder it was made for (its key in _parse_caches)
        self._key: bytes | None = None  # the folder's HMAC key, once read or made

    def get(self, digest: str) -> list[dict[str, Any]] | None:
        """A fresh copy of the interactions parsed from the bytes whose sha256 is ``digest``,
        or None when no valid entry holds them."""
        import marshal

        blob = self._memory.get(digest)
        if blob is None and self.folder is not None:
            entry = self.folder / f"{digest}.marshal"
            try:  # a regular file only (a FIFO put there is not waited on), bounded
                stored = read_input_bytes(entry, "parse cache entry", 4 * CASSETTE_LIMIT)
            except InputFileError:
                stored = b""
            if len(stored) > 64 and stored[:32] == bytes.fromhex(digest):
                key, payload = self._folder_key(), stored[64:]
                if key is not None and hmac.compare_digest(
                    entry_mac(key, stored[:32], payload), stored[32:64]
                ):
                    blob = payload
                    self._remember(digest, blob)
        if blob is None:
            return None
        value: list[dict[str, Any]] = marshal.loads(blob)
        return value

    def put(self, digest: str, interactions: list[dict[str, Any]]) -> None:
        """Keep ``interactions``, parsed from the bytes whose sha256 is ``digest``."""
        import marshal
        import tempfile

        self.parsed += 1
        try:
            blob = marshal.dumps(interactions)
        except ValueError:  # a value marshal cannot hold: not cached
            return
        self._remember(digest, blob)
        if self.folder is None:
            return
        key = self._folder_key()
        if key is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".marshal")
            try:
                with os.fdopen(fd, "wb") as f:
                    head = bytes.fromhex(digest)
                    f.write(head + entry_mac(key, head, blob) + blob)
                os.replace(tmp, self.folder / f"{digest}.marshal")
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            self.folder = None  # read-only or full: keep to memory from now on

    def prepared(
        self,
        digest: str,
        prepare: Callable[[list[dict[str, Any]]], _T],
        interactions: Callable[[], list[dict[str, Any]]],
    ) -> _T:
        """``prepare(interactions())`` for the cassette whose bytes have sha256 ``digest``,
        made once and kept in memory (within ``memory_limit``, weighed by the size of the
        parsed entry, oldest dropped first); the same object for every caller."""
        key = (digest, prepare)
        found = self._derived.get(key)
        if found is not None:
            value: _T = found[1]
            return value
        value = prepare(interactions())
        weight = len(self._memory.get(digest, b"")) or 4096
        with self._lock:
            if key not in self._derived and weight <= self.memory_limit:
                while self._derived and self._derived_size + weight > self.memory_limit:
                    self._derived_size -= self._derived.pop(next(iter(self._derived)))[0]
                self._derived[key] = (weight, value)
                self._derived_size += weight
        return value

    def _folder_key(self) -> bytes | None:
        """The folder's HMAC key (read, else made: :func:`folder_key`), kept once had; None,
        and the cache kept to memory from now on, when it can be neither read nor made."""
        if self._key is None and self.folder is not None:
            self._key = folder_key(self.folder)
            if self._key is None:
                self.folder = None
        return self._key

    def _remember(self, digest: str, blob: bytes) -> None:
        with self._lock:
            if digest in self._memory or len(blob) > self.memory_limit:
                return
            while self._memory and self._size + len(blob) > self.memory_limit:
                self._size -= len(self._memory.pop(next(iter(self._memory))))
            self._memory[digest] = blob
            self._size += len(blob)


_parse_caches: dict[Path | None, ParseCache] = {}


_by_environment: dict[tuple[str | None, ...], ParseCache] = {}


def parse_cache() -> ParseCache:
    """The process's :class:`ParseCache` for the folder :func:`default_cache_dir` names now
    (looked up by the environment values it reads: no path is built per call)."""
    env = os.environ
    seen = (env.get(CACHE_DIR_ENV), env.get("XDG_CACHE_HOME"), env.get("HOME"))
    cache = _by_environment.get(seen)
    if cache is not None and _parse_caches.get(cache.folder_asked) is cache:
        return cache
    folder = default_cache_dir()
    cache = _parse_caches.get(folder)
    if cache is None:
        cache = _parse_caches[folder] = ParseCache(folder)
    cache.folder_asked = folder
    _by_environment[seen] = cache
    return cache


def validate_cassette(path: Path, data: bytes) -> list[dict[str, Any]]:
    """The interactions of the cassette file ``path`` whose bytes are ``data``: parsed as YAML
    by the one checked reader and validated (the cassette's shape, then each interaction's;
    an interaction of another serializer's shape is named as such); :class:`CassetteError`
    naming the file otherwise."""
    try:
        raw = parse_checked(path, data, what="cassette", parse="yaml")
    except InputFileError as exc:
        raise CassetteError(str(exc)) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("interactions"), list):
        raise CassetteError(f"{path}: not a cassette (no 'interactions' list)")
    try:
        _CassetteModel.model_validate(raw)
    except ValidationError as exc:
        raise CassetteError(f"{path}: {_first_error(exc)}") from None
    for i, item in enumerate(raw["interactions"], start=1):
        foreign = foreign_shape(item, path)
        if foreign is not None:
            raise CassetteError(f"{path}: interaction {i}: {foreign}")
        try:
            _InteractionModel.model_validate(item)
        except ValidationError as exc:
            raise CassetteError(f"{path}: interaction {i}: {_first_error(exc)}") from None
    interactions: list[dict[str, Any]] = raw["interactions"]
    return interactions


#: The command that rewrites a cassette of another serializer's shape in toolreplay's.
CONVERT_COMMAND = "toolreplay convert"


def foreign_shape(interaction: Any, path: Path | str = "PATH") -> str | None:
    """What another serializer's shape ``interaction`` has, with the command that converts it,
    or None when it is not one toolreplay knows (then the field checks say what is wrong).

    Known: pydantic-ai's test serializer (``tests/json_body_serializer.py``), which stores a
    JSON response body as ``response.parsed_body`` beside ``status`` and ``headers``, where
    toolreplay stores it as ``response.body.parsed_body``."""
    if not isinstance(interaction, dict):
        return None
    response = interaction.get("response")
    if isinstance(response, dict) and "parsed_body" in response and "body" not in response:
        return (
            "response.parsed_body beside status and headers is pydantic-ai's cassette shape "
            "(its tests/json_body_serializer.py), not toolreplay's (response.body.parsed_body); "
            f"convert the file: {CONVERT_COMMAND} {path}"
        )
    return None


def read_cassette(path: Path) -> list[dict[str, Any]]:
    """:func:`load_cassette` without the manifest check (kept for existing callers)."""
    return load_cassette(path)
