"""Replaying many episodes: jobs, workers (a process pool), shards, and a whole set
(:func:`replay_set`), results in job order whatever the number of workers.

Given the run's judge, :func:`replay_outcomes` also assesses each episode
(:func:`toolreplay.judging.assessment.assess`) in the process that replayed it, so the
judging is spread over the workers and the parent only merges what they send back.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

if TYPE_CHECKING:
    from toolreplay.cassettes.manifest import Manifest
    from toolreplay.evals import EvalSuite
    from toolreplay.judging.assessment import AssessedEpisode
    from toolreplay.judging.verdicts import Judge
    from toolreplay.runs.configuration import Configuration, Progress
    from toolreplay.wire.episode import Episode
from toolreplay.cassettes.manifest import Manifest, cassette_path, episode_key, read_manifest
from toolreplay.cassettes.transport import Player
from toolreplay.cassettes.vcr import RecordMode
from toolreplay.evals import EvalSuite
from toolreplay.runs.episode import replay_episode
from toolreplay.runs.pool import end_with_parent, watched_map
from toolreplay.wire.episode import Episode

_T = TypeVar("_T")


@dataclass(frozen=True)
class Job:
    """One episode to replay: configuration, question id and trial (from 1)."""

    configuration: Configuration
    question_id: str
    trial: int = 1

    @property
    def key(self) -> str:
        """``CONFIG/QUESTION`` (trial 1 of a one-trial set) or ``CONFIG/QUESTION/trial-i``."""
        from toolreplay.cassettes.manifest import episode_key

        return episode_key(self.configuration.name, self.question_id, self.trial)


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` (1 ≤ I ≤ N) → ``(I, N)``. Raises :class:`ValueError` naming the form."""
    try:
        i, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"bad shard {text!r}: use I/N, e.g. 1/4 (shard 1 of 4)") from None
    if not 1 <= i <= n:
        raise ValueError(f"bad shard {text!r}: I must be between 1 and N ({n})")
    return i, n


def shard(jobs: Sequence[_T], index: int, count: int) -> list[_T]:
    """Shard ``index`` of ``count`` (from 1): every ``count``-th job from the ``index``-th,
    so each shard gets a like mix of configurations. The shards partition ``jobs``."""
    return list(jobs[index - 1 :: count])


def default_workers() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class _Context:
    set_dir: Path
    manifest: Manifest
    suite: EvalSuite
    judge: Judge | None = None  # given: each episode is assessed where it was replayed
    others: tuple[Judge, ...] = ()  # and trial 1 by these judges too
    probe: CassetteProbe | None = None  # given: read in the workers, kept in the parent


class CassetteProbe(Protocol):
    """What a caller reads of a cassette where it was just replayed (a worker: its parse is
    at hand there), sent back and kept in the calling process, so the checks after the replay
    read no cassette again: the audit's facts of each trial-1 cassette
    (:class:`toolreplay.audit.traffic.FactsProbe`), a study's baseline traffic
    (:attr:`toolreplay.studies.BaselineAudit.cassette_probe`); several at once:
    :class:`ProbeSet`."""

    def read(self, path: Path, job: Job) -> Any:
        """What is read of the cassette at ``path``, replayed for ``job`` (picklable), in the
        worker; None: nothing (the probe does not want this job's cassette, or could not read
        it), and nothing is sent back."""

    def keep(self, found: Any) -> None:
        """Keep what :meth:`read` returned (never None), in the calling process."""


class ProbeSet:
    """Several :class:`CassetteProbe` as one: :meth:`read` gives each probe's reading (None
    when no probe read anything), :meth:`keep` hands each reading to its probe."""

    def __init__(self, probes: Sequence[CassetteProbe]) -> None:
        self.probes = tuple(probes)

    def read(self, path: Path, job: Job) -> tuple[Any, ...] | None:
        found = tuple(p.read(path, job) for p in self.probes)
        return None if all(f is None for f in found) else found

    def keep(self, found: tuple[Any, ...]) -> None:
        for probe, reading in zip(self.probes, found, strict=True):
            if reading is not None:
                probe.keep(reading)


_worker: dict[str, Any] = {}  # per worker process: the context and its player


def _outcome(
    ctx: _Context, player: Player, job: Job
) -> Episode | AssessedEpisode | BaseException:
    """The job's episode (with the context's judge: and its assessment for its question), or
    the replay error that stopped it."""
    from toolreplay.cassettes.errors import CassetteError, CassetteMiss, UnplayedInteractions
    from toolreplay.runs.episode import replay_episode

    try:
        episode = replay_episode(
            ctx.set_dir,
            ctx.manifest,
            ctx.suite,
            job.configuration,
            ctx.suite.question(job.question_id),
            http=player.http,
            session=player.session,
            trial=job.trial,
        )
    except (CassetteMiss, UnplayedInteractions, CassetteError) as exc:
        return exc
    if ctx.judge is None:
        return episode
    from dataclasses import replace

    from toolreplay.judging.assessment import AssessedEpisode, assess, passed_by
    from toolreplay.judging.shared import sharing

    episode = replace(episode, trial=job.trial)  # an assessed episode says which trial it is
    question = ctx.suite.question(job.question_id)
    with sharing():  # the judges ground the same answer once between them where they can
        assessed = assess(episode, question, ctx.judge)
        others = tuple(passed_by(episode, question, j) for j in ctx.others if job.trial == 1)
    return AssessedEpisode(episode, assessed, others)


def _init_worker(ctx: _Context, tell: Any = None) -> None:
    end_with_parent()  # however the parent ends
    _worker["ctx"] = ctx
    _worker["player"] = Player()
    _worker["tell"] = tell


def _run_chunk(
    jobs: Sequence[Job],
) -> tuple[list[Episode | AssessedEpisode | BaseException], list[Any]]:
    """The chunk's outcomes and what the context's probe read of its cassettes."""
    out: list[Episode | AssessedEpisode | BaseException] = []
    probed: list[Any] = []
    tell = _worker.get("tell")
    ctx: _Context = _worker["ctx"]
    for job in jobs:
        if tell is not None:  # which episode this worker holds, should it die
            tell.put((os.getpid(), job.key))
        out.append(_outcome(ctx, _worker["player"], job))
        if ctx.probe is not None:
            found = ctx.probe.read(_cassette_of(ctx, job), job)
            if found is not None:
                probed.append(found)
    return out, probed


def _cassette_of(ctx: _Context, job: Job) -> Path:
    return cassette_path(ctx.set_dir, job.configuration.name, job.question_id, job.trial)


@overload
def replay_outcomes(
    set_dir: Path,
    manifest: Manifest,
    suite: EvalSuite,
    jobs: Sequence[Job],
    *,
    workers: int = 1,
    progress: Progress | None = None,
    judge: None = None,
) -> list[Episode | BaseException]: ...


@overload
def replay_outcomes(
    set_dir: Path,
    manifest: Manifest,
    suite: EvalSuite,
    jobs: Sequence[Job],
    *,
    workers: int = 1,
    progress: Progress | None = None,
    judge: Judge,
    others: Sequence[Judge] = (),
    probe: CassetteProbe | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> list[AssessedEpisode | BaseException]: ...


@overload
def replay_outcomes(
    set_dir: Path,
    manifest: Manifest,
    suite: EvalSuite,
    jobs: Sequence[Job],
    *,
    workers: int = 1,
    progress: Progress | None = None,
    judge: Judge | None,
    others: Sequence[Judge] = (),
    probe: CassetteProbe | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> list[Episode | AssessedEpisode | BaseException]: ...


def replay_outcomes(
    set_dir: Path,
    manifest: Manifest,
    suite: EvalSuite,
    jobs: Sequence[Job],
    *,
    workers: int = 1,
    progress: Progress | None = None,
    judge: Judge | None = None,
    others: Sequence[Judge] = (),
    probe: CassetteProbe | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> list[Any]:
    """Replay ``jobs`` (episodes of the set at ``set_dir``) and return, in job order, each
    one's episode or its replay error (:class:`~toolreplay.cassettes.errors.CassetteMiss`,
    :class:`~toolreplay.cassettes.errors.UnplayedInteractions`,
    :class:`~toolreplay.cassettes.errors.CassetteError`): the same list, byte for byte once
    serialised, whatever ``workers`` is.

    With ``judge``, each episode comes back as an
    :class:`~toolreplay.judging.assessment.AssessedEpisode`: assessed by ``judge`` for its
    question of ``suite`` (:func:`~toolreplay.judging.assessment.assess`), once, in the process
    that replayed it (a worker, or this one when ``workers`` is 1): the same assessments
    whatever ``workers`` is. Each trial-1 episode is judged pass or fail by every judge of
    ``others`` too, there (:func:`~toolreplay.judging.assessment.passed_by`, into
    :attr:`~toolreplay.judging.assessment.AssessedEpisode.others`: the audit's narrow judge, a
    judgment of its own); ``others`` is ignored without ``judge``.

    ``workers`` > 1 replays in a process pool (fork on Linux) in chunks of a few episodes;
    fewer than 8 episodes a worker are replayed here (a pool would not pay for itself).
    ``progress(key)`` is called once per job, in job order. With ``probe``, each job's
    cassette is read through it where it was replayed (a worker, or here) and this process
    keeps what was read (:class:`CassetteProbe`). ``meanwhile()`` (work of the caller that
    needs no episode) is called once, here, while the workers replay, or after the episodes
    when they are replayed here; what it raises is raised. Keep it short: meanwhile the
    workers' notes of the episodes they take wait in a pipe, and a pipe full (about 900
    episodes) holds them until it returns."""
    ctx = _Context(set_dir, manifest, suite, judge, tuple(others), probe)
    workers = max(1, min(workers, len(jobs) // 8 or 1))
    out: list[Episode | AssessedEpisode | BaseException] = []
    # Serially, every job; in parallel, the first one here, before the fork: the workers then
    # start with the SDK imported and its lazy imports warm instead of each paying for them.
    with Player() as player:
        for job in jobs if workers == 1 else jobs[:1]:
            if progress:
                progress(job.key)
            out.append(_outcome(ctx, player, job))
            if probe is not None and (found := probe.read(_cassette_of(ctx, job), job)) is not None:
                probe.keep(found)
    if workers == 1:
        if meanwhile is not None:
            meanwhile()
        return out
    rest = jobs[1:]
    size = max(1, min(16, len(rest) // (workers * 4)))
    chunks = [rest[i : i + size] for i in range(0, len(rest), size)]
    # frozen: forked workers leave the parent's objects alone (no copy-on-write)
    with collector_frozen() as freeze:
        # closed however the loop ends: an error here (Ctrl-C in progress()) stops the workers
        # now, not when the error is dropped
        replayed = contextlib.closing(
            watched_map(_run_chunk, chunks, workers, _init_worker, (ctx,), meanwhile)
        )
        with replayed as pieces:
            for chunk, (results, probed) in zip(chunks, pieces, strict=True):
                if probe is not None:
                    for found in probed:
                        probe.keep(found)
                for job, result in zip(chunk, results, strict=True):
                    if progress:
                        progress(job.key)
                    out.append(result)
                freeze()  # and the outcomes gathered: full collections walk none of them
    return out


@contextlib.contextmanager
def collector_frozen() -> Iterator[Callable[[], None]]:
    """``gc.freeze()`` now and at each call of what it yields, everything unfrozen after; when
    this process had objects frozen already (its own choice: a server about to fork), nothing
    is frozen nor unfrozen, since unfreezing would release those too."""
    import gc

    if gc.get_freeze_count():
        yield lambda: None
        return
    gc.freeze()
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()


def replay_jobs(
    set_dir: Path,
    manifest: Manifest,
    suite: EvalSuite,
    jobs: Sequence[Job],
    *,
    workers: int = 1,
    progress: Progress | None = None,
) -> list[Episode]:
    """:func:`replay_outcomes`, raising the first replay error in job order."""
    episodes: list[Episode] = []
    for result in replay_outcomes(
        set_dir, manifest, suite, jobs, workers=workers, progress=progress
    ):
        if isinstance(result, BaseException):
            raise result
        episodes.append(result)
    return episodes


def replay_set(
    set_dir: Path,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    progress: Progress | None = None,
    *,
    record_mode: RecordMode = "none",
    workers: int = 1,
) -> list[Episode]:
    """Replay every configuration × question of the set (trial 1), in order (``record_mode``
    as in :func:`replay_episode`; in record mode ``none``, ``workers`` processes replay it,
    :func:`toolreplay.runs.replay.replay_jobs`, the same list whatever their number)."""
    from toolreplay.runs.replay import Job, replay_jobs

    manifest = read_manifest(set_dir)
    if record_mode == "none":
        jobs = [Job(config, question.id) for config in configs for question in suite.questions]
        return replay_jobs(set_dir, manifest, suite, jobs, workers=workers, progress=progress)
    episodes = []
    for config in configs:
        for question in suite.questions:
            if progress:
                progress(episode_key(config.name, question.id))
            episodes.append(
                replay_episode(
                    set_dir, manifest, suite, config, question, record_mode=record_mode
                )
            )
    return episodes
