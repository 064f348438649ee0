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
  (:func:`~toolreplay.redaction.secret_query`: ``apikey``, ``key``, ``access_token``,
  ``signature``, a key-like ``appid``...) are dropped from URIs, and so are loopback ports.
- Replay: record mode ``none``; a request that is not recorded raises :class:`CassetteMiss`
  (what differs from the closest recorded request, and how to re-record); an interaction left
  unplayed raises :class:`UnplayedInteractions`; a malformed file raises
  :class:`CassetteError` naming the file and the interaction.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_serializer,
    model_validator,
)

from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.format import LOOPBACK
from toolreplay.cassettes.store import CASSETTE_LIMIT
from toolreplay.folders import leftovers
from toolreplay.inputs import InputFileError, read_checked
from toolreplay.outputs import atomic_write_text

if TYPE_CHECKING:  # vcrpy is imported when recording (or a test's cassette) needs it
    pass


MANIFEST_FORMAT: Literal[1] = 1


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

    ``provenance`` is ``stand-in`` (the bundled test-double model and fixture server),
    ``live``, or ``pytest`` (recorded by the pytest plugin in a user's test suite). ``today``
    is the date put in the system prompt, used again at replay.
    Hashes detect stale cassettes: the system prompt template and each toolset's schemas.
    ``trials`` and ``seed``: how many trials each episode has, and the stand-in's variation
    seed; ``episodes`` is keyed by :func:`episode_key` (trial 1 ``CONFIG/QUESTION``, later
    trials ``CONFIG/QUESTION/trial-<i>``)."""

    model_config = ConfigDict(extra="forbid")
    format: Literal[1] = MANIFEST_FORMAT
    cassette_set: str
    #: Trials recorded per configuration × question (1: one cassette per episode).
    trials: int = Field(default=1, ge=1)
    #: Seed of the stand-in's per-trial variation (see toolreplay.study.weather.standin).
    seed: int = 0
    #: ``pytest``: a folder recorded by the pytest plugin, its manifest written afterwards
    #: (:mod:`toolreplay.runs.suite_folder`).
    provenance: Literal["stand-in", "live", "pytest"]
    model: str
    model_base_url: str
    endpoint_host: str
    #: The endpoints the tools were recorded against, by the study's manifest key
    #: (``geocoding_url``, ``forecast_url``...); stored as top-level ``*_url`` keys.
    tool_urls: dict[str, str] = Field(default_factory=dict)
    recorded_on: str
    today: str
    eval_file: str
    packages: dict[str, str]
    system_prompt_sha256: str
    tool_schemas_sha256: dict[str, str]
    settings: dict[str, Any]
    episodes: dict[str, EpisodeRecord] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _collect_tool_urls(cls, data: Any) -> Any:
        """Top-level ``*_url`` keys (but ``model_base_url``) are the tools' endpoints."""
        if isinstance(data, Mapping) and "tool_urls" not in data:
            urls = {
                k: v
                for k, v in data.items()
                if isinstance(k, str) and k.endswith("_url") and k != "model_base_url"
            }
            data = {k: v for k, v in data.items() if k not in urls}
            data["tool_urls"] = urls
        return data

    @model_serializer(mode="wrap")
    def _flat_tool_urls(self, handler: Any) -> dict[str, Any]:
        """The tools' endpoints go back to top-level keys, after ``endpoint_host``."""
        data = handler(self)
        urls = data.pop("tool_urls", {})
        out: dict[str, Any] = {}
        for key, value in data.items():
            out[key] = value
            if key == "endpoint_host":
                out.update(urls)
        return out


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


def _damaged_advice(path: Path, set_dir: Path) -> str:
    return (
        f"restore it (`git checkout -- {path}`), else record the set again (`toolreplay "
        f"record ... --set {set_dir.name} --force`), or for a folder your tests recorded "
        "delete it (the next `toolreplay run` writes it anew)"
    )


def read_manifest(set_dir: Path, *, check: bool = True) -> Manifest:
    """Load and validate ``manifest.json``; :class:`CassetteError` naming the file otherwise
    (no manifest at all is its own message), and :class:`SetDamaged` when the set's files
    disagree with it (:func:`check_set`; ``check`` False leaves that to the caller: a test
    suite's folder, where a test recorded or removed since is reported by the audit's
    completeness check, not refused)."""
    path = manifest_path(set_dir)
    if set_dir.exists() and not set_dir.is_dir():
        raise CassetteError(f"{set_dir}: is a file, not a cassette set folder")
    try:
        raw = read_checked(path, what="manifest", limit=CASSETTE_LIMIT, parse="json")
    except InputFileError as exc:
        if not exc.missing:
            raise CassetteError(f"{exc}; {_damaged_advice(path, set_dir)}") from None
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
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        what = (
            f"the required field {where} is missing"
            if err["type"] == "missing"
            else f"{where}: {err['msg']}"
        )
        raise CassetteError(
            f"{path}: {what}; the manifest was edited or damaged: "
            + _damaged_advice(path, set_dir)
        ) from None
    if check:
        check_set(set_dir, manifest)
    return manifest


class SetDamaged(CassetteError):
    """A cassette set whose files disagree with its manifest (see :func:`check_set`); the
    message starts with ``set damaged:`` and names what differs."""


def _listed(names: list[str], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_set(set_dir: Path, manifest: Manifest) -> None:
    """:class:`SetDamaged` unless the set at ``set_dir`` is exactly what its manifest says:
    the set name is the folder's; every cassette file (``*.yaml``, hidden files aside) has an
    entry and every entry a file, each a regular file (not a link, FIFO or device); every
    episode has ``manifest.trials`` trials, numbered 1..trials (in a set recorded by a test
    suite, provenance ``pytest``, 1..n with n up to trials: each test is repeated as often
    as it says). A set edited by hand (an entry removed, a cassette added, ``trials``
    lowered) would otherwise replay unchecked."""
    problems: list[str] = []
    if manifest.cassette_set != set_dir.name and manifest.provenance != "pytest":
        # (a test suite's folder is named by its tests and copied freely, e.g. to diff)
        problems.append(
            f"the manifest names the set {manifest.cassette_set!r} but its folder is "
            f"{set_dir.name!r} (a copied or renamed set? set cassette_set in its "
            f"manifest.json to {set_dir.name!r})"
        )
    files: dict[str, Path] = {}
    for path in set_dir.rglob("*.yaml"):
        rel = path.relative_to(set_dir)
        if not any(part.startswith(".") for part in rel.parts):
            files[rel.as_posix()] = path
    entries = {Path(r.cassette).as_posix(): key for key, r in manifest.episodes.items()}
    if unknown := sorted(set(files) - set(entries)):
        problems.append(f"cassette file(s) without a manifest entry: {_listed(unknown)}")
    if missing := sorted(set(entries) - set(files)):
        problems.append(
            f"manifest entries whose cassette file is missing: "
            f"{_listed([f'{entries[m]} ({m})' for m in missing])}"
        )
    irregular = sorted(rel for rel, p in files.items() if rel in entries and not _regular(p))
    if irregular:
        problems.append(f"cassette(s) that are not regular files: {_listed(irregular)}")
    trials: dict[str, set[int]] = {}
    for key in manifest.episodes:
        base, _, last = key.rpartition("/trial-")
        if base and last.isdigit() and base.count("/") == 1:
            trials.setdefault(base, set()).add(int(last))
        else:
            trials.setdefault(key, set()).add(1)
    wanted = set(range(1, manifest.trials + 1))
    if manifest.provenance == "pytest":
        # a test suite repeats each test as often as it says: 1..n, n up to trials
        uneven = sorted(
            k for k, got in trials.items() if got != set(range(1, len(got) + 1)) or got - wanted
        )
        shape = f"1..n (n at most {manifest.trials}, the manifest's trials)"
    else:
        uneven = sorted(k for k, got in trials.items() if got != wanted)
        shape = f"1..{manifest.trials} as the manifest's trials says"
    if uneven:
        problems.append(
            f"episodes whose trials are not {shape}: "
            f"{_listed([f'{k} ({len(trials[k])} trial(s))' for k in uneven])}"
        )
    if problems:
        raise SetDamaged(f"set damaged: {set_dir}: " + "; ".join(problems))


def _regular(path: Path) -> bool:
    import stat

    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def write_manifest(set_dir: Path, manifest: Manifest) -> None:
    """Write ``manifest.json`` atomically (:func:`~toolreplay.outputs.atomic_write_text`)."""
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


def recorded_cassette_path(
    set_dir: Path, configuration: str, question_id: str, trial: int, trials: int
) -> Path:
    """Where recording a set of ``trials`` trials writes an episode's ``trial``: the one-trial
    layout's ``<question-id>.yaml`` when ``trials`` is 1, else ``<question-id>/trial-<i>.yaml``
    (:func:`cassette_path` reads either)."""
    if trials == 1:
        return cassette_path(set_dir, configuration, question_id)
    return trial_cassette_path(set_dir, configuration, question_id, trial)


def episode_usage(record: EpisodeRecord | None) -> Mapping[str, int]:
    if record is None:
        return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    return {
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "total_tokens": record.prompt_tokens + record.completion_tokens,
    }
