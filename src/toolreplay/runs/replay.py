"""Replaying many episodes: jobs, workers (a process pool), shards, and a whole set
(:func:`replay_set`), results in job order whatever the number of workers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolreplay.cassettes.manifest import Manifest
    from toolreplay.evals import EvalSuite
    from toolreplay.runs.configuration import Configuration, Progress
    from toolreplay.wire.episode import Episode
from toolreplay.cassettes.manifest import Manifest, episode_key, read_manifest
from toolreplay.cassettes.transport import _T, Player
from toolreplay.cassettes.vcr import RecordMode
from toolreplay.evals import EvalSuite
from toolreplay.runs.episode import replay_episode
from toolreplay.wire.episode import Episode


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


_worker: dict[str, Any] = {}  # per worker process: the context and its player


def _outcome(ctx: _Context, player: Player, job: Job) -> Episode | BaseException:
    """The job's episode, or the replay error that stopped it."""
    from toolreplay.cassettes.errors import CassetteError, CassetteMiss, UnplayedInteractions
    from toolreplay.runs.episode import replay_episode

    try:
        return replay_episode(
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


def _init_worker(ctx: _Context) -> None:
    import signal

    # A worker ends with its parent, however the parent ends (SIGKILL included): Linux's
    # parent-death signal; elsewhere the pool's own shutdown.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform == "linux":
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    _worker["ctx"] = ctx
    _worker["player"] = Player()


def _run_chunk(jobs: Sequence[Job]) -> list[Episode | BaseException]:
    return [_outcome(_worker["ctx"], _worker["player"], job) for job in jobs]


def _pool_context() -> Any:
    import multiprocessing

    # fork on Linux: the workers start with the openai SDK and the rest imported (~0.5 s a
    # process otherwise); elsewhere the platform's default start method.
    if sys.platform == "linux":
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def replay_outcomes(
    set_dir: Path,
    manifest: Manifest,
    suite: EvalSuite,
    jobs: Sequence[Job],
    *,
    workers: int = 1,
    progress: Progress | None = None,
) -> list[Episode | BaseException]:
    """Replay ``jobs`` (episodes of the set at ``set_dir``) and return, in job order, each
    one's episode or its replay error (:class:`~toolreplay.cassettes.errors.CassetteMiss`,
    :class:`~toolreplay.cassettes.errors.UnplayedInteractions`,
    :class:`~toolreplay.cassettes.errors.CassetteError`): the same list, byte for byte once
    serialised, whatever ``workers`` is.

    ``workers`` > 1 replays in a process pool (fork on Linux) in chunks of a few episodes;
    fewer than 8 episodes a worker are replayed here (a pool would not pay for itself).
    ``progress(key)`` is called once per job, in job order."""
    ctx = _Context(set_dir, manifest, suite)
    workers = max(1, min(workers, len(jobs) // 8 or 1))
    out: list[Episode | BaseException] = []
    # Serially, every job; in parallel, the first one here, before the fork: the workers then
    # start with the SDK imported and its lazy imports warm instead of each paying for them.
    with Player() as player:
        for job in jobs if workers == 1 else jobs[:1]:
            if progress:
                progress(job.key)
            out.append(_outcome(ctx, player, job))
    if workers == 1:
        return out
    import gc
    from concurrent.futures import ProcessPoolExecutor

    rest = jobs[1:]
    size = max(1, min(16, len(rest) // (workers * 4)))
    chunks = [rest[i : i + size] for i in range(0, len(rest), size)]
    gc.freeze()  # forked workers leave the parent's objects alone (no copy-on-write)
    try:
        with ProcessPoolExecutor(
            workers, mp_context=_pool_context(), initializer=_init_worker, initargs=(ctx,)
        ) as pool:
            try:
                for chunk, results in zip(chunks, pool.map(_run_chunk, chunks), strict=True):
                    for job, result in zip(chunk, results, strict=True):
                        if progress:
                            progress(job.key)
                        out.append(result)
            except BaseException:  # Ctrl-C, SIGTERM (as an interrupt): drop the queued work
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    finally:
        gc.unfreeze()
    return out


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
