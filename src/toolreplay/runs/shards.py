"""Shard files: what ``toolreplay run --shard I/N`` replayed, for ``toolreplay merge``.

A run's episodes (every trial of the selected study configurations, then the episodes the
fidelity audit adds: trial 1 of every configuration of the eval file) form one job list in
a fixed order; shard I of N is every N-th job from the I-th (:func:`toolreplay.runs.replay.shard`).
Each shard writes ``shard-I-of-N.json`` (JSON, UTF-8)::

    {"format": 1, "shard": [I, N],
     "eval_file": "evals/weather.yaml", "eval_sha256": "...",
     "cassettes": "cassettes", "cassette_set": "reference", "manifest_sha256": "...",
     "configurations": null | "a,b", "questions": null | "x,y",
     "jobs": [{"key": "loop+atomic/ningde/trial-2",
               "episode": {...} | null,      # the Episode, lossless
               "error": {"type": "CassetteMiss", "message": "..."} | null}, ...]}

:func:`read_shards` checks that the files are shards 1..N of one split, made from the same
eval file, selection and recording of the set, and cover exactly the run's jobs; it returns
one outcome per job in run order, so results and report built from them are byte-identical
to an unsharded run's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictInt, TypeAdapter, ValidationError

from toolreplay.cassettes.errors import CassetteError, CassetteMiss, UnplayedInteractions
from toolreplay.cassettes.manifest import manifest_path
from toolreplay.inputs import InputFileError, read_checked
from toolreplay.outputs import atomic_write_text
from toolreplay.runs.replay import Job
from toolreplay.strict_json import DuplicateJsonKeyError, json_error_message, load_json
from toolreplay.wire.episode import Episode

SHARD_FORMAT: Literal[1] = 1


#: A shard file larger than this is refused before parsing.
SHARD_LIMIT = 512 * 1024 * 1024


_ERRORS: dict[str, type[Exception]] = {
    "CassetteMiss": CassetteMiss,
    "UnplayedInteractions": UnplayedInteractions,
    "CassetteError": CassetteError,
}


_EPISODE = TypeAdapter(Episode)


class ShardError(ValueError):
    """Shard files that cannot be merged; the message names the file and what is wrong."""


class _JobError(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["CassetteMiss", "UnplayedInteractions", "CassetteError"]
    message: str


class _JobModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str
    episode: dict[str, Any] | None
    error: _JobError | None


class _ShardModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal[1]
    shard: tuple[StrictInt, StrictInt]
    eval_file: str
    eval_sha256: str
    cassettes: str
    cassette_set: str
    manifest_sha256: str
    configurations: str | None
    questions: str | None
    jobs: list[_JobModel]


@dataclasses.dataclass(frozen=True)
class ShardSpec:
    """What a run replays, as a shard file names it: the eval file, the cassette set and
    the selection (``--configurations``/``--questions`` as given, None for all)."""

    eval_file: Path
    cassettes: Path
    cassette_set: str
    configurations: str | None
    questions: str | None


def shard_file_name(index: int, count: int) -> str:
    """``shard-I-of-N.json``."""
    return f"shard-{index}-of-{count}.json"


def _sha256(path: Path) -> str:
    """SHA-256 of a text file's content, line ends normalised (a checkout with CRLF line ends
    is the same file)."""
    return hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def _manifest_sha256(set_dir: Path) -> str:
    """SHA-256 of the set's manifest as canonical JSON (formatting and line ends aside)."""
    from toolreplay.cassettes.manifest import sha256_json

    return sha256_json(json.loads(manifest_path(set_dir).read_bytes()))


def _names(value: str | None) -> str | None:
    """A ``--configurations``/``--questions`` value in canonical form (sorted, unique)."""
    if value is None:
        return None
    return ",".join(sorted({n.strip() for n in value.split(",") if n.strip()}))


def write_shard(
    path: Path,
    spec: ShardSpec,
    index: int,
    count: int,
    jobs: Sequence[Job],
    outcomes: Sequence[Episode | BaseException],
) -> None:
    """Write shard ``index`` of ``count``: ``jobs`` and what replaying each gave (atomically)."""
    entries = []
    for job, outcome in zip(jobs, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            kind = type(outcome).__name__
            error = {"type": kind if kind in _ERRORS else "CassetteError", "message": str(outcome)}
            entries.append({"key": job.key, "episode": None, "error": error})
        else:
            episode = _EPISODE.dump_python(outcome, mode="json")
            entries.append({"key": job.key, "episode": episode, "error": None})
    set_dir = spec.cassettes / spec.cassette_set
    doc = {
        "format": SHARD_FORMAT,
        "shard": [index, count],
        "eval_file": spec.eval_file.as_posix(),
        "eval_sha256": _sha256(spec.eval_file),
        "cassettes": spec.cassettes.as_posix(),
        "cassette_set": spec.cassette_set,
        "manifest_sha256": _manifest_sha256(set_dir),
        "configurations": spec.configurations,
        "questions": spec.questions,
        "jobs": entries,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(doc, ensure_ascii=False) + "\n")


def _read(path: Path) -> _ShardModel:
    try:
        text = read_checked(path, what="shard file", limit=SHARD_LIMIT)
    except InputFileError as exc:  # missing, not UTF-8, too large...: which files to give
        raise ShardError(
            f"{exc}; give the files `toolreplay run --shard I/N` wrote (OUT/shard-I-of-N.json)"
        ) from None
    try:
        raw = load_json(text)  # a key given twice is refused, naming its line
    except DuplicateJsonKeyError as exc:
        raise ShardError(json_error_message(path, exc)) from None
    except (ValueError, RecursionError):
        raw = None  # not JSON: validating the text says so, as "not a shard file"
    try:
        if raw is None:
            return _ShardModel.model_validate_json(text)
        return _ShardModel.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(map(str, err["loc"]))
        if err["type"] == "missing":
            what = f"the required field {where} is missing"
        else:
            what = f"{where + ': ' if where else ''}{err['msg']}"
        raise ShardError(
            f"{path}: not a shard file of format {SHARD_FORMAT} ({what}); give the files "
            "`toolreplay run --shard I/N` wrote (OUT/shard-I-of-N.json), every I from 1 to N"
        ) from None


def read_spec(paths: Sequence[Path]) -> ShardSpec:
    """The eval file, set and selection the shard files ``paths`` were made from. Raises
    :class:`ShardError` when no file is given, one is unreadable or not a shard file, or the
    files name different eval files, sets or selections."""
    if not paths:
        raise ShardError("no shard files given")
    specs = {}
    for path in paths:
        doc = _read(path)
        specs[path] = ShardSpec(
            Path(doc.eval_file),
            Path(doc.cassettes),
            doc.cassette_set,
            _names(doc.configurations),
            _names(doc.questions),
        )
    first, spec = next(iter(specs.items()))
    for path, other in specs.items():
        differ = [
            name
            for name, a, b in (
                ("eval file", spec.eval_file.resolve(), other.eval_file.resolve()),
                ("cassettes folder", spec.cassettes.resolve(), other.cassettes.resolve()),
                ("cassette set", spec.cassette_set, other.cassette_set),
                ("--configurations", spec.configurations, other.configurations),
                ("--questions", spec.questions, other.questions),
            )
            if a != b
        ]
        if differ:
            raise ShardError(
                f"{path} and {first} come from different runs ({', '.join(differ)} "
                "differ); merge the shards of one run"
            )
    return spec


def read_shards(
    paths: Sequence[Path], spec: ShardSpec, jobs: Sequence[Job]
) -> list[Episode | BaseException]:
    """One outcome per job of ``jobs`` (the whole run, in order) from the shard files
    ``paths``: the episode, or the replay error the shard met (same class and message).

    Raises :class:`ShardError` when a shard is missing or given twice, the files come from
    different splits, another version of the eval file or another recording of the set, an
    episode is not in the run or in two shards, or the files do not cover every job."""
    docs = [(p, _read(p)) for p in paths]
    counts = {d.shard[1] for _, d in docs}
    if len(counts) != 1:
        raise ShardError(f"shard files from different splits (N = {sorted(counts)})")
    count = counts.pop()
    seen: dict[int, Path] = {}
    for p, d in docs:
        index = d.shard[0]
        if not 1 <= index <= count:
            raise ShardError(f"{p}: shard {index}/{count} is not a shard of {count}")
        if index in seen:
            raise ShardError(f"shard {index}/{count} given twice: {seen[index]} and {p}")
        seen[index] = p
    if len(seen) < count:
        missing: list[int] = []  # the first few (N may be large; only as many as given + 5)
        i = 1
        while len(missing) < 5 and i <= count:
            if i not in seen:
                missing.append(i)
            i += 1
        more = count - len(seen) - len(missing)
        raise ShardError(
            f"missing shard(s) {', '.join(f'{i}/{count}' for i in missing)}"
            f"{f' and {more} more' if more else ''}: run `toolreplay run --shard I/{count}` "
            "for each and pass every shard file"
        )
    eval_sha = _sha256(spec.eval_file)
    manifest_sha = _manifest_sha256(spec.cassettes / spec.cassette_set)
    for p, d in docs:
        if d.eval_sha256 != eval_sha:
            raise ShardError(f"{p} was made with another version of {spec.eval_file}")
        if d.manifest_sha256 != manifest_sha:
            raise ShardError(
                f"{p} was replayed from another recording of the set (its manifest.json "
                "differs); replay every shard from the same cassettes"
            )
    by_key = {job.key: job for job in jobs}
    found: dict[str, Episode | BaseException] = {}
    for p, d in docs:
        for entry in d.jobs:
            if entry.key not in by_key:
                raise ShardError(f"{p}: episode {entry.key!r} is not one this run replays")
            if entry.key in found:
                raise ShardError(f"{p}: episode {entry.key} is in two shards")
            found[entry.key] = _outcome(p, entry, by_key[entry.key])
    if absent := [job.key for job in jobs if job.key not in found]:
        raise ShardError(
            f"the shards do not cover {len(absent)} episode(s) of the run, e.g. {absent[0]}"
        )
    return [found[job.key] for job in jobs]


def _outcome(path: Path, entry: _JobModel, job: Job) -> Episode | BaseException:
    if entry.error is not None and entry.episode is not None:
        raise ShardError(f"{path}: episode {entry.key} has both an episode and an error")
    if entry.error is not None:
        return _ERRORS[entry.error.type](
            f"{entry.error.message}\n(recorded by {path} for episode {entry.key} when that "
            "shard was replayed; once fixed, replay that shard again and merge)"
        )
    if entry.episode is None:
        raise ShardError(f"{path}: episode {entry.key} has neither an episode nor an error")
    try:
        episode: Episode = _EPISODE.validate_python(entry.episode)
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"]
        raise ShardError(f"{path}: episode {entry.key}: malformed ({msg})") from None
    if (episode.configuration, episode.question_id) != (
        job.configuration.name,
        job.question_id,
    ):
        raise ShardError(
            f"{path}: episode {entry.key} holds the episode of "
            f"{episode.configuration}/{episode.question_id}: the file was edited"
        )
    return episode
