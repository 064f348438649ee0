"""Expectations: what an episode should do along the way and say at the end, checked one by one.

:func:`check_expectations` checks an :class:`~toolreplay.wire.episode.Episode` against
expectations (the data of :mod:`toolreplay.evals.expectations`, or their YAML form as dicts) and
gives one :class:`ExpectationResult` per expectation: ``passed``, a one-line ``explanation``
and the :class:`~toolreplay.judging.failures.Evidence` (the transcript message it rests on,
and for answer checks the span of the final answer). Usable on its own, e.g. in a test::

    from toolreplay.judging.expectations import check_expectations

    results = check_expectations(episode, [
        {"tool_called": "lookup_sku"},
        {"tool_sequence": {"tools": ["lookup_sku", "lookup_sku"], "mode": "any_order"}},
        {"tool_arguments": {"tool": "lookup_sku", "matches": {"sku": "^[A-Z]{3}-\\\\d$"}}},
        {"max_rounds": 3},
        {"strict_grounding": True},
    ], measures=[{"name": "stock", "units": ["units"], "fields": ["on_hand"]}])
    assert all(r.passed for r in results), [r.explanation for r in results if not r.passed]

The trajectory kinds are checked by :mod:`toolreplay.judging.trajectory`, the answer kinds
here. What each kind checks (:mod:`toolreplay.evals.expectations` for the forms):
tool calls are the calls the host executed (a call left pending in the final reply was never
made), except for ``tool_not_called``, which also fails on a pending call (the model asked for
it). ``grounded`` and ``strict_grounding`` use the grounded judge
(:data:`~toolreplay.judging.verdicts.GROUNDED_JUDGE` unless one is given) with the question's
day and places and the declared measures added to its vocabulary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from toolreplay.evals import (
    AnswerContains,
    AnswerMatches,
    AnswerNotContains,
    EpisodeExpectation,
    Grounded,
    MaxRounds,
    MaxToolCalls,
    MeasureDeclaration,
    StopReason,
    StrictGrounding,
    ToolArguments,
    ToolCalled,
    ToolNotCalled,
    ToolSequence,
    parse_expectations,
    parse_measures,
)
from toolreplay.judging.failures import Evidence, final_index
from toolreplay.judging.grounding import Target, ground_answer
from toolreplay.judging.trajectory import TRAJECTORY_CHECKS, subset_mismatch
from toolreplay.judging.verdicts import GROUNDED_JUDGE, FormatJudge
from toolreplay.wire.episode import Episode


@dataclass(frozen=True)
class ExpectationResult:
    """One expectation checked: its ``kind``, ``expected`` (the expectation in words),
    ``passed``, a one-line ``explanation`` and the :class:`Evidence` it rests on
    (``message_index`` into ``episode.transcript``; for answer checks the ``span`` and
    ``text`` in the final answer; the ``tool_call`` it points at)."""

    kind: str
    expected: str
    passed: bool
    explanation: str
    evidence: Evidence = field(default_factory=Evidence)



# ---- answer --------------------------------------------------------------------------------


def _find(text: str, answer: str, case_sensitive: bool) -> int:
    return answer.find(text) if case_sensitive else answer.casefold().find(text.casefold())


def _answer_at(episode: Episode, start: int, end: int) -> Evidence:
    return Evidence(final_index(episode), (start, end), episode.answer[start:end])


def _answer_contains(e: AnswerContains, episode: Episode) -> tuple[bool, str, Evidence]:
    answer = episode.answer
    missing = [t for t in e.texts if _find(t, answer, e.case_sensitive) < 0]
    if missing:
        shown = ", ".join(repr(t) for t in missing)
        said = f"{answer[:80]!r}" if answer.strip() else "empty"
        return False, f"the answer lacks {shown} (answer: {said})", Evidence(final_index(episode))
    at = _find(e.texts[0], answer, e.case_sensitive)
    shown = ", ".join(repr(t) for t in e.texts)
    return True, f"the answer contains {shown}", _answer_at(episode, at, at + len(e.texts[0]))


def _answer_not_contains(e: AnswerNotContains, episode: Episode) -> tuple[bool, str, Evidence]:
    for t in e.texts:
        at = _find(t, episode.answer, e.case_sensitive)
        if at >= 0:
            return False, f"the answer contains {t!r}", _answer_at(episode, at, at + len(t))
    shown = ", ".join(repr(t) for t in e.texts)
    return True, f"the answer contains none of {shown}", Evidence(final_index(episode))


def _answer_matches(e: AnswerMatches, episode: Episode) -> tuple[bool, str, Evidence]:
    m = re.search(e.pattern, episode.answer)
    if m is None:
        return False, f"the answer does not match /{e.pattern}/", Evidence(final_index(episode))
    return True, f"the answer matches /{e.pattern}/: {m.group()!r}", _answer_at(episode, *m.span())


def _grounded(
    e: Grounded, episode: Episode, expect: Target, judge: FormatJudge
) -> tuple[bool, str, Evidence]:
    asked = expect if e.measure is None else replace(expect, measure=e.measure)
    verdict = judge.judge_episode(episode, asked)
    span = verdict.checks[0].span if verdict.checks else None
    text = verdict.checks[0].text if verdict.checks else None
    for c in verdict.checks:  # point at the value the verdict is about
        if c.grounded != verdict.passed:
            continue
        span, text = c.span, c.text
        break
    return verdict.passed, verdict.explanation, Evidence(final_index(episode), span, text)


def _strict(
    e: StrictGrounding, episode: Episode, expect: Target, judge: FormatJudge
) -> tuple[bool, str, Evidence]:
    judge = judge.for_question(expect)
    vocab = judge.resolved_vocabulary()
    unknown = [m for m in e.measures if vocab.measure(m) is None]
    if unknown:
        known = ", ".join(m.name for m in vocab.measures) or "none"
        return False, f"unknown measure {unknown[0]!r} (declared: {known})", Evidence()
    kinds = {k for m in e.measures for k in vocab.kinds(m)} if e.measures else None
    g = ground_answer(
        episode.answer, episode.transcript, replace(expect, measure=None),
        judge.resolved_units(), vocab, episode.hosted_tools,
    )  # fmt: skip
    checks = [c for c in g.checks if kinds is None or c.value.kind in kinds]
    of = f" of {', '.join(e.measures)}" if e.measures else ""
    for c in checks:
        if not c.grounded and not c.vacuous:  # a bound that pins nothing is no fabrication
            return (
                False,
                c.reason if not c.checkable else f"fabricated value: {c.reason}",
                Evidence(final_index(episode), c.span, c.text),
            )
    if not checks:
        return True, f"the answer states no value{of} with a unit", Evidence(final_index(episode))
    shown = ", ".join(c.text for c in checks[:4])
    return (
        True,
        f"every value{of} in the answer is in a tool result: {shown}",
        Evidence(final_index(episode), checks[0].span, checks[0].text),
    )


# ---- the check -----------------------------------------------------------------------------


def describe(e: EpisodeExpectation) -> str:
    """The expectation in words (``tool_sequence exact: a → b``)."""
    match e:
        case ToolCalled(tool, n):
            return f"{tool} is called" + (f" at least {n} times" if n > 1 else "")
        case ToolNotCalled(tool):
            return f"{tool} is not called"
        case ToolSequence(tools, mode):
            return f"calls {' → '.join(tools)} ({mode.replace('_', ' ')})"
        case ToolArguments():
            parts = [json.dumps(dict(e.equals), ensure_ascii=False)] if e.equals else []
            parts += [f"{k} ~ /{p}/" for k, p in e.matches.items()]
            tol = f" ±{e.tolerance:g}" if e.tolerance else ""
            return f"{e.calls} call of {e.tool} with {'; '.join(parts) or '{}'}{tol}"
        case MaxRounds(limit):
            return f"at most {limit} rounds"
        case MaxToolCalls(limit):
            return f"at most {limit} tool calls"
        case StopReason(reasons):
            return f"stops: {' or '.join(reasons)}"
        case AnswerContains(texts):
            return "the answer contains " + ", ".join(repr(t) for t in texts)
        case AnswerNotContains(texts):
            return "the answer contains none of " + ", ".join(repr(t) for t in texts)
        case AnswerMatches(pattern):
            return f"the answer matches /{pattern}/"
        case Grounded(measure):
            return f"a grounded value of {measure or 'the question’s measure'}"
        case StrictGrounding(measures):
            return f"every value of {', '.join(measures) or 'any measure'} is grounded"
    raise TypeError(f"not an expectation: {e!r}")


def check_expectation(
    expectation: EpisodeExpectation,
    episode: Episode,
    question: Any = None,
    judge: FormatJudge = GROUNDED_JUDGE,
) -> ExpectationResult:
    """One expectation checked (see :func:`check_expectations`)."""
    expect = Target.of(question)
    e = expectation
    if isinstance(e, Grounded):
        ok, why, ev = _grounded(e, episode, expect, judge)
    elif isinstance(e, StrictGrounding):
        ok, why, ev = _strict(e, episode, expect, judge)
    else:
        check = _TRAJECTORY_AND_TEXT[type(e)]
        ok, why, ev = check(e, episode)
    return ExpectationResult(e.kind, describe(e), ok, why, ev)


_TRAJECTORY_AND_TEXT: dict[type, Any] = {
    **TRAJECTORY_CHECKS,
    AnswerContains: _answer_contains,
    AnswerNotContains: _answer_not_contains,
    AnswerMatches: _answer_matches,
}


def check_expectations(
    episode: Episode,
    expectations: Iterable[EpisodeExpectation | Mapping[str, Any]],
    question: Any = None,
    *,
    measures: Iterable[MeasureDeclaration | Mapping[str, Any]] = (),
    judge: FormatJudge = GROUNDED_JUDGE,
) -> list[ExpectationResult]:
    """Check ``episode`` against ``expectations``, one :class:`ExpectationResult` each, in
    order.

    ``expectations``: :mod:`toolreplay.evals.expectations` data, or their YAML form as dicts
    (``{"max_rounds": 3}``); a bad one raises
    :class:`~toolreplay.evals.DeclarationError` before anything is checked.
    ``question``: what ``grounded`` and ``strict_grounding`` judge the answer for: an
    :class:`~toolreplay.evals.Question` (its measure, day, places and its eval file's declared
    measures), a measure name, a :class:`~toolreplay.judging.grounding.Target`, or None
    (any measure, day and place). ``measures``: measure declarations to add to the judge's
    vocabulary (data or ``{"name", "units", "words", "fields"}`` dicts). ``judge``: the judge
    the answer checks use (default: the grounded judge with the default study's vocabulary;
    pass ``GroundedJudge("grounded", vocabulary=...)`` for another).
    """
    specs = parse_expectations(list(expectations))
    declared = tuple(
        m if isinstance(m, MeasureDeclaration) else parse_measures([m], "measures")[0]
        for m in measures
    )
    expect = Target.of(question)
    if declared:
        expect = replace(expect, measures=(*expect.measures, *declared))
    return [check_expectation(e, episode, expect, judge) for e in specs]


def expectations_passed(results: Iterable[ExpectationResult]) -> bool:
    """Whether every result passed (True for none)."""
    return all(r.passed for r in results)


def expectations_met(episode: Episode, question: Any, judge: FormatJudge = GROUNDED_JUDGE) -> bool:
    """Whether ``episode`` meets every expectation of ``question`` (its ``expect``; True for a
    question with none, a measure name or None)."""
    expected = getattr(question, "expect", ())
    return all(check_expectation(e, episode, question, judge).passed for e in expected)


__all__ = [
    "ExpectationResult", "check_expectation", "check_expectations", "describe",
    "expectations_met", "expectations_passed", "subset_mismatch",
]  # fmt: skip
