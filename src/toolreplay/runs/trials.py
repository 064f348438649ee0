"""Repeated trials: replay every trial of a cassette set and summarise them.

A set recorded with ``--trials n`` holds n cassettes per configuration × question
(``manifest.trials``). :func:`replay_trials` replays them all, :func:`trial_jobs` lists them;
what they add up to (pass@k, pass^k, spreads, failure-mode rates) is
:mod:`toolreplay.results.trials`. Trial 1 is the study's episode; the 2×2 table is built from
it alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolreplay.cassettes.manifest import Manifest, read_manifest
from toolreplay.evals import EvalSuite, Question
from toolreplay.runs.configuration import Configuration, Progress
from toolreplay.runs.replay import Job, replay_jobs
from toolreplay.wire.episode import Episode


def replay_trials(
    set_dir: Path,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    progress: Progress | None = None,
    *,
    questions: Sequence[Question] | None = None,
    manifest: Manifest | None = None,
    workers: int = 1,
) -> list[tuple[int, Episode]]:
    """``(trial, episode)`` for every trial (1..``manifest.trials``) of every configuration ×
    question (``questions``, default all), in that order, replayed by ``workers`` processes
    (:func:`~toolreplay.runs.replay.replay_jobs`; the same list whatever their number). Raises
    what :func:`~toolreplay.runs.episode.replay_episode` raises, the first in that order."""
    manifest = manifest or read_manifest(set_dir)
    jobs = trial_jobs(suite, configs, manifest.trials, questions)
    episodes = replay_jobs(set_dir, manifest, suite, jobs, workers=workers, progress=progress)
    return [(job.trial, episode) for job, episode in zip(jobs, episodes, strict=True)]


def trial_jobs(
    suite: EvalSuite,
    configs: Sequence[Configuration],
    trials: int,
    questions: Sequence[Question] | None = None,
) -> list[Job]:
    """Every trial of every configuration × question, configuration-major."""
    qs = list(suite.questions if questions is None else questions)
    return [
        Job(config, question.id, trial)
        for config in configs
        for question in qs
        for trial in range(1, trials + 1)
    ]
