"""Repeated trials as results: each trial's outcome and what the trials add up to per
configuration.

:func:`trial_outcome` reduces an assessed episode to what the metrics need;
:func:`summarize_trials` gives, per configuration, the unbiased pass@k and pass^k for
k = 1..n (:mod:`toolreplay.results.metrics`; a configuration's value is the mean over its
questions), the same per question, mean rounds and tool calls with their spread over every
trial, and failure-mode rates (episodes carrying the mode / episodes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

from toolreplay.judging.assessment import Assessment
from toolreplay.judging.failures import FAILURE_MODES
from toolreplay.results.format import IntervalRecord, QuestionTrials, SpreadRecord, TrialOutcome
from toolreplay.results.intervals import LEVEL, rate_interval
from toolreplay.results.metrics import Spread, curve, mean_curve, rate
from toolreplay.wire.episode import Episode


def trial_outcome(trial: int, episode: Episode, assessment: Assessment) -> TrialOutcome:
    """One trial's outcome (``configuration``, ``question_id``, ``trial``, ``passed``,
    ``rounds``, ``tool_calls``, ``stop_reason``, ``failure_modes``: the modes' names), from
    its :class:`~toolreplay.judging.assessment.Assessment` (the one pass rule, as
    ``results.json``'s episodes)."""
    return TrialOutcome(
        configuration=episode.configuration,
        question_id=episode.question_id,
        trial=trial,
        passed=assessment.passed,
        rounds=len(episode.rounds),
        tool_calls=len(episode.tool_calls),
        stop_reason=episode.stop_reason,
        failure_modes=list(assessment.modes),
    )


class TrialFields(TypedDict):
    """A configuration's fields over every trial (:func:`summarize_trials`), its
    :class:`~toolreplay.results.format.ConfigurationSummary` is updated with."""

    trials: int
    pass_at_k: dict[str, float]
    pass_hat_k: dict[str, float]
    pass_hat_k_interval: dict[str, IntervalRecord]
    rounds_over_trials: SpreadRecord
    tool_calls_over_trials: SpreadRecord
    failure_mode_rates: dict[str, float]
    questions: list[QuestionTrials]


def _keyed(values: Mapping[int, float]) -> dict[str, float]:
    return {str(k): round(v, 4) for k, v in values.items()}


def _intervals(hat_curves: Sequence[dict[int, float]], trials: int) -> dict[str, IntervalRecord]:
    """Each k's interval of the mean over the questions (:func:`~toolreplay.results.
    intervals.rate_interval`), for the k every question has."""
    out: dict[str, IntervalRecord] = {}
    for k in sorted(mean_curve(hat_curves)):
        (low, high), method = rate_interval([c[k] for c in hat_curves], trials)
        out[str(k)] = IntervalRecord(
            low=round(low, 4), high=round(high, 4), level=LEVEL, method=method
        )
    return out


def summarize_trials(
    outcomes: Sequence[TrialOutcome],
    configuration_names: Sequence[str],
    question_ids: Sequence[str],
) -> dict[str, TrialFields]:
    """Per configuration name, its trial fields (:class:`~toolreplay.results.format.
    ConfigurationSummary`'s ``trials``, ``pass_at_k``, ``pass_hat_k``, ``pass_hat_k_interval``,
    ``rounds_over_trials``, ``tool_calls_over_trials``, ``failure_mode_rates``,
    ``questions``; see the module docstring), to update its summary with. ``trials`` is the
    smallest number of trials any of its questions has; ``pass_at_k``/``pass_hat_k`` map
    ``"k"`` (1..trials) to a value in [0, 1], rounded to 4 places; ``pass_hat_k_interval``
    maps the same keys to its 95% :class:`~toolreplay.results.format.IntervalRecord`;
    ``rounds_over_trials`` and ``tool_calls_over_trials`` are
    :class:`~toolreplay.results.format.SpreadRecord` over every trial (population sd);
    ``failure_mode_rates`` maps a mode to the share of trials carrying it (modes never seen
    left out); ``questions`` lists
    :class:`~toolreplay.results.format.QuestionTrials`."""
    out: dict[str, TrialFields] = {}
    for name in configuration_names:
        mine = [o for o in outcomes if o.configuration == name]
        by_question: dict[str, list[TrialOutcome]] = {}
        for o in mine:  # once, not once per question (quadratic: 6 s at 10,000 episodes)
            by_question.setdefault(o.question_id, []).append(o)
        per_q: list[QuestionTrials] = []
        at_curves, hat_curves = [], []
        for qid in question_ids:
            runs = sorted(by_question.get(qid, ()), key=lambda o: o.trial)
            if not runs:
                continue
            passed = [bool(o.passed) for o in runs]
            at, hat = curve(passed, "pass_at_k"), curve(passed, "pass_hat_k")
            at_curves.append(at)
            hat_curves.append(hat)
            per_q.append(
                QuestionTrials(
                    question_id=qid,
                    trials=len(runs),
                    passes=sum(passed),
                    pass_at_k=_keyed(at),
                    pass_hat_k=_keyed(hat),
                )
            )
        counts = {m: sum(1 for o in mine if m in (o.failure_modes or ())) for m in FAILURE_MODES}
        out[name] = {
            "trials": min((q.trials for q in per_q), default=0),
            "pass_at_k": _keyed(mean_curve(at_curves)),
            "pass_hat_k": _keyed(mean_curve(hat_curves)),
            "pass_hat_k_interval": _intervals(
                hat_curves, min((q.trials for q in per_q), default=0)
            ),
            "rounds_over_trials": Spread.of([o.rounds or 0 for o in mine]).to_record(),
            "tool_calls_over_trials": Spread.of([o.tool_calls or 0 for o in mine]).to_record(),
            "failure_mode_rates": {m: round(rate(c, len(mine)), 4) for m, c in counts.items() if c},
            "questions": per_q,
        }
    return out
