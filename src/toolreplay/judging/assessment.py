"""One episode assessed once: the verdict, the failure modes, the expectations, and the one
pass rule every consumer reads.

:func:`assess` is the only place an episode is judged for a run: results (``results.json``'s
episodes), trial outcomes (pass^k), the audit's tables, snapshots and the report all read the
:class:`Assessment` it returns, so they cannot disagree on whether an episode passed.

**The pass rule** (:attr:`Assessment.passed`): the verdict passed (the answer states a grounded
value of the question's measure, or the question measures nothing), no failure mode that is a
failure on its own (:data:`FAILING_MODES`: every mode but ``no_measurement`` and
``wrong_place``, which a passing verdict already rules on) labels the episode, and every
expectation of the question is met.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolreplay.judging.expectations import ExpectationResult, check_expectation
from toolreplay.judging.failures import (
    DECLINED,
    EMPTY_ANSWER,
    ERROR,
    FABRICATED_VALUE,
    REFUSAL,
    TRUNCATED,
    UNFULFILLED_PROMISE,
    FailureMode,
    classify,
)
from toolreplay.judging.shared import sharing
from toolreplay.judging.verdicts import FULL_JUDGE, Judge, Verdict
from toolreplay.wire.episode import Episode

#: Failure modes that fail an episode whatever its verdict: a value no tool result holds, no
#: answer, a promise the host never let the model keep, an answer that only declines though a
#: tool returned a result, a refusal, an answer the token limit cut off, an API error. For a
#: question that measures nothing (a test-suite question without an eval file) the verdict
#: passes any answer, so these are what fail it. ``no_measurement`` and ``wrong_place`` are
#: the verdict's own reasons and never accompany a passing verdict of a measured question.
FAILING_MODES = (
    FABRICATED_VALUE, EMPTY_ANSWER, UNFULFILLED_PROMISE, DECLINED, REFUSAL, TRUNCATED, ERROR,
)  # fmt: skip


@dataclass(frozen=True)
class Assessment:
    """What the judge decided about one episode: ``verdict`` (the judge's, with its evidence),
    ``failure_modes`` (:func:`~toolreplay.judging.failures.classify`, in
    :data:`~toolreplay.judging.failures.FAILURE_MODES` order) and ``expectations`` (one
    :class:`~toolreplay.judging.expectations.ExpectationResult` per expectation of the
    question, in order; empty without any)."""

    verdict: Verdict
    failure_modes: tuple[FailureMode, ...]
    expectations: tuple[ExpectationResult, ...] = ()

    @property
    def passed(self) -> bool:
        """The pass rule (module docstring)."""
        return (
            self.verdict.passed
            and not any(f.mode in FAILING_MODES for f in self.failure_modes)
            and all(r.passed for r in self.expectations)
        )

    @property
    def modes(self) -> list[str]:
        """The failure modes' names, sorted, each once."""
        return sorted({f.mode for f in self.failure_modes})


@dataclass(frozen=True)
class AssessedEpisode:
    """One episode (its ``trial`` and, once its set says so, ``cassette`` on it) with its
    :class:`Assessment`: what a replay worker sends back (the episode judged in the process
    that replayed it) and what every consumer of a run reads. ``others``: whether the same
    episode passes by each of the other judges a run asked for (the audit's narrow judge), in
    that order (:func:`passed_by`: only the pass rule, which is all the audit reads of them);
    empty when none was. Pickles (frozen dataclasses of plain values)."""

    episode: Episode
    assessment: Assessment
    others: tuple[bool, ...] = ()

    @property
    def trial(self) -> int:
        return self.episode.trial


def assess(episode: Episode, question: Any = None, judge: Judge = FULL_JUDGE) -> Assessment:
    """Judge ``episode`` once for ``question``: an :class:`~toolreplay.evals.Question` (its
    measure, day, places, declared measures and ``expect``), only a measure name, or None (any
    value). ``judge`` decides the verdict and supplies the units the failure classifier reads.
    Never raises for a well-formed episode."""
    with sharing():  # the verdict and the classifier ground the answer once between them
        verdict = judge.judge_episode(episode, question)
        labels = classify(episode, judge, question)
        expected = getattr(question, "expect", ())
        checked = tuple(check_expectation(e, episode, question, judge) for e in expected)
    return Assessment(verdict, labels, checked)


def passed_by(episode: Episode, question: Any = None, judge: Judge = FULL_JUDGE) -> bool:
    """``assess(episode, question, judge).passed``, deciding no more than the pass rule needs:
    the verdict first, then the failure modes and the expectations only when it passed (an
    episode the verdict fails is not classified). For the judges whose assessment only says
    pass or fail (the audit's narrow judge). Never raises for a well-formed episode."""
    with sharing():
        if not judge.judge_episode(episode, question).passed:
            return False
        if any(f.mode in FAILING_MODES for f in classify(episode, judge, question)):
            return False
        expected = getattr(question, "expect", ())
        return all(check_expectation(e, episode, question, judge).passed for e in expected)


__all__ = ["FAILING_MODES", "AssessedEpisode", "Assessment", "assess", "passed_by"]
