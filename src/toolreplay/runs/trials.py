"""Repeated trials: replay every trial of a cassette set and summarise them.

A set recorded with ``--trials n`` holds n cassettes per configuration × question
(``manifest.trials``). :func:`replay_trials` replays them all; :func:`trial_outcome` reduces a
judged episode to what the metrics need; :func:`summarize_trials` gives, per configuration,
the unbiased pass@k and pass^k for k = 1..n (:mod:`toolreplay.results.metrics`; a configuration's
value is the mean over its questions), the same per question, mean rounds and tool calls
with their spread over every trial, and failure-mode rates (episodes carrying the mode /
episodes). Trial 1 is the study's episode; the 2×2 table is built from it alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolreplay.cassettes.manifest import Manifest, read_manifest
from toolreplay.evals import EvalSuite, Question
from toolreplay.judging.assessment import Assessment
from toolreplay.judging.failures import FAILURE_MODES
from toolreplay.results.metrics import Spread, curve, mean_curve, rate
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


def trial_outcome(trial: int, episode: Episode, assessment: Assessment) -> dict[str, Any]:
    """``{"configuration", "question_id", "trial", "passed", "rounds", "tool_calls",
    "stop_reason", "failure_modes": [mode, ...]}`` for one trial, from its
    :class:`~toolreplay.judging.assessment.Assessment` (the one pass rule, as
    ``results.json``'s episodes)."""
    return {
        "configuration": episode.configuration,
        "question_id": episode.question_id,
        "trial": trial,
        "passed": assessment.passed,
        "rounds": len(episode.rounds),
        "tool_calls": len(episode.tool_calls),
        "stop_reason": episode.stop_reason,
        "failure_modes": assessment.modes,
    }


def _keyed(values: Mapping[int, float]) -> dict[str, float]:
    return {str(k): round(v, 4) for k, v in values.items()}


def summarize_trials(
    outcomes: Sequence[Mapping[str, Any]],
    configuration_names: Sequence[str],
    question_ids: Sequence[str],
) -> dict[str, dict[str, Any]]:
    """Per configuration name: ``{"trials", "pass_at_k", "pass_hat_k", "rounds_over_trials",
    "tool_calls_over_trials", "failure_mode_rates", "questions"}`` (see the module
    docstring). ``trials`` is the smallest number of trials any of its questions has;
    ``pass_at_k``/``pass_hat_k`` map ``"k"`` (1..trials) to a value in [0, 1], rounded to 4
    places; ``rounds_over_trials`` and ``tool_calls_over_trials`` are ``{"mean", "sd", "min",
    "max"}`` over every trial (population sd); ``failure_mode_rates`` maps a mode to the share
    of trials carrying it (modes never seen left out); ``questions`` lists ``{"question_id",
    "trials", "passes", "pass_at_k", "pass_hat_k"}``."""
    out: dict[str, dict[str, Any]] = {}
    for name in configuration_names:
        mine = [o for o in outcomes if o["configuration"] == name]
        per_q: list[dict[str, Any]] = []
        at_curves, hat_curves = [], []
        for qid in question_ids:
            runs = sorted((o for o in mine if o["question_id"] == qid), key=lambda o: o["trial"])
            if not runs:
                continue
            passed = [bool(o["passed"]) for o in runs]
            at, hat = curve(passed, "pass_at_k"), curve(passed, "pass_hat_k")
            at_curves.append(at)
            hat_curves.append(hat)
            per_q.append(
                {
                    "question_id": qid,
                    "trials": len(runs),
                    "passes": sum(passed),
                    "pass_at_k": _keyed(at),
                    "pass_hat_k": _keyed(hat),
                }
            )
        counts = {m: sum(1 for o in mine if m in o["failure_modes"]) for m in FAILURE_MODES}
        out[name] = {
            "trials": min((q["trials"] for q in per_q), default=0),
            "pass_at_k": _keyed(mean_curve(at_curves)),
            "pass_hat_k": _keyed(mean_curve(hat_curves)),
            "rounds_over_trials": Spread.of([o["rounds"] for o in mine]).to_dict(),
            "tool_calls_over_trials": Spread.of([o["tool_calls"] for o in mine]).to_dict(),
            "failure_mode_rates": {m: round(rate(c, len(mine)), 4) for m, c in counts.items() if c},
            "questions": per_q,
        }
    return out


def add_trial_metrics(
    results: dict[str, Any],
    outcomes: Sequence[Mapping[str, Any]],
    question_ids: Sequence[str],
    trials: int,
) -> dict[str, Any]:
    """Add the trial fields to a results document (``results.json``, built from trial 1):
    ``results["trials"]``, each configuration's :func:`summarize_trials` fields, and
    ``results["trial_outcomes"]`` (every :func:`trial_outcome`). Returns ``results``."""
    names = [c["name"] for c in results["configurations"]]
    summary = summarize_trials(outcomes, names, question_ids)
    results["trials"] = trials
    for c in results["configurations"]:
        c.update(summary[c["name"]])
    results["trial_outcomes"] = [dict(o) for o in outcomes]
    return results
