"""Expectations: what an episode should do along the way and say at the end, checked one by one.

:func:`check_expectations` checks an :class:`~toolreplay.wire.episode.Episode` against
expectations (the data of :mod:`toolreplay.declarations`, or their YAML form as dicts) and
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

What each kind checks (module docstring of :mod:`toolreplay.declarations` for the forms):
tool calls are the calls the host executed (a call left pending in the final reply was never
made), except for ``tool_not_called``, which also fails on a pending call (the model asked for
it). ``grounded`` and ``strict_grounding`` use the grounded judge
(:data:`~toolreplay.judging.verdicts.GROUNDED_JUDGE` unless one is given) with the question's
day and places and the declared measures added to its vocabulary.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from toolreplay.declarations import (
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
from toolreplay.judging.failures import Evidence, _final_index
from toolreplay.judging.grounding import Expectation, ground_answer
from toolreplay.judging.verdicts import GROUNDED_JUDGE, FormatJudge
from toolreplay.wire.episode import Episode, ToolCall


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

    def to_dict(self) -> dict[str, Any]:
        """``{"kind", "expected", "passed", "explanation", "evidence": {"message_index",
        "span", "text", "tool_call"}}`` (results.json's ``episodes[].expectations[]``)."""
        return {
            "kind": self.kind,
            "expected": self.expected,
            "passed": self.passed,
            "explanation": self.explanation,
            "evidence": self.evidence.to_dict(),
        }


@dataclass(frozen=True)
class _Call:
    """A tool call with the transcript index of the assistant message that made it."""

    call: ToolCall
    message_index: int | None
    round: int


def _calls(episode: Episode) -> list[_Call]:
    """The executed tool calls in order, each with its message index and round."""
    where: dict[str, int] = {}
    for i, m in enumerate(episode.transcript):
        for tc in m.get("tool_calls") or []:
            where.setdefault(str(tc.get("id")), i)
    return [
        _Call(r.call, where.get(r.call.id), rnd.index)
        for rnd in episode.rounds
        for r in rnd.results
    ]


def _pending(episode: Episode) -> list[_Call]:
    index = _final_index(episode)
    last = episode.rounds[-1].index if episode.rounds else 0
    return [_Call(c, index, last) for c in episode.pending_tool_calls]


def _shown(call: ToolCall) -> str:
    args = call.parsed_arguments()
    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return f"{call.name}({text})"


def _chain(calls: Sequence[_Call]) -> str:
    return " → ".join(c.call.name for c in calls) or "no tool call"


def _at(call: _Call | None) -> Evidence:
    if call is None:
        return Evidence()
    return Evidence(call.message_index, None, _shown(call.call), call.call)


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


# ---- trajectory ----------------------------------------------------------------------------


def _tool_called(e: ToolCalled, episode: Episode) -> tuple[bool, str, Evidence]:
    calls = _calls(episode)
    made = [c for c in calls if c.call.name == e.tool]
    if not made:
        return False, f"{e.tool} was never called (calls: {_chain(calls)})", Evidence()
    rounds = ", ".join(str(r) for r in dict.fromkeys(c.round for c in made))
    ok = len(made) >= e.at_least
    why = f"{e.tool} was called {_times(len(made))} (round {rounds})"
    if not ok:
        why += f", fewer than the {e.at_least} expected"
    return ok, why, _at(made[0])


def _tool_not_called(e: ToolNotCalled, episode: Episode) -> tuple[bool, str, Evidence]:
    for c in (*_calls(episode), *_pending(episode)):
        if c.call.name == e.tool:
            pending = " (left pending: the host never ran it)" if c in _pending(episode) else ""
            return (
                False,
                f"{e.tool} was called in round {c.round}: {_shown(c.call)}{pending}",
                _at(c),
            )
    return True, f"{e.tool} was not called (calls: {_chain(_calls(episode))})", Evidence()


def _sequence(e: ToolSequence, episode: Episode) -> tuple[bool, str, Evidence]:
    calls = _calls(episode)
    names = [c.call.name for c in calls]
    want = list(e.tools)
    made = f"made {_chain(calls)}"
    if e.mode == "exact":
        for i, (got, exp) in enumerate(zip(names, want, strict=False)):
            if got != exp:
                return False, f"call {i + 1} is {got}, expected {exp}; {made}", _at(calls[i])
        if len(names) != len(want):
            extra = calls[len(want)] if len(names) > len(want) else None
            why = (
                f"{len(names) - len(want)} call(s) more than the {len(want)} expected"
                if extra
                else f"{want[len(names)]} (call {len(names) + 1}) was never made"
            )
            return False, f"{why}; {made}", _at(extra)
        return True, f"the calls are exactly {_chain(calls)}", _at(calls[0] if calls else None)
    if e.mode == "in_order":
        pos = 0
        for c in calls:
            if pos < len(want) and c.call.name == want[pos]:
                pos += 1
        if pos < len(want):
            done = " → ".join(want[:pos]) or "none of them"
            return (
                False,
                f"{want[pos]} (expected call {pos + 1} in order) was not made after {done}; {made}",
                Evidence(),
            )
        return True, f"{' → '.join(want)} were called in this order; {made}", Evidence()
    have, need = Counter(names), Counter(want)
    missing = sorted((need - have).elements())
    unexpected = sorted((have - need).elements())
    first = next((c for c in calls if c.call.name in set(unexpected)), None)
    gaps = "; ".join(
        p
        for p in (
            f"missing {', '.join(missing)}" if missing else "",
            f"not expected {', '.join(unexpected)}" if unexpected else "",
        )
        if p
    )
    ok = {
        "any_order": not missing and not unexpected,
        "subset": not unexpected,
        "superset": not missing,
    }[e.mode]
    what = {
        "any_order": "the expected calls in some order",
        "subset": "only expected calls",
        "superset": "every expected call",
    }[e.mode]
    if ok:
        return True, f"{made}: {what}", Evidence()
    return False, f"{made}, not {what}: {gaps}", _at(first)


def _lookup(args: Any, dotted: str) -> tuple[bool, Any]:
    node = args
    for part in dotted.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def subset_mismatch(expected: Any, actual: Any, tolerance: float = 0.0, at: str = "") -> str | None:
    """Where ``actual`` does not hold ``expected`` as a JSON subset (objects: every expected
    key, recursively; lists: same length, item by item; numbers within ``tolerance``; else
    equal), in words; None when it does."""
    where = at or "the arguments"
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"{where} is {json.dumps(actual, ensure_ascii=False)}, not an object"
        for k, v in expected.items():
            if k not in actual:
                return f"{(at + '.' if at else '')}{k} is missing"
            found = subset_mismatch(v, actual[k], tolerance, f"{at + '.' if at else ''}{k}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{where} is {json.dumps(actual, ensure_ascii=False)}, expected {expected}"
        for i, (x, y) in enumerate(zip(expected, actual, strict=True)):
            found = subset_mismatch(x, y, tolerance, f"{at}[{i}]")
            if found:
                return found
        return None
    number = (int, float)
    if (
        isinstance(expected, number)
        and isinstance(actual, number)
        and not isinstance(expected, bool)
        and not isinstance(actual, bool)
    ):
        if math.isclose(expected, actual, rel_tol=0.0, abs_tol=tolerance):
            return None
        within = f" (tolerance {tolerance:g})" if tolerance else ""
        return f"{where} is {actual}, expected {expected}{within}"
    if expected == actual:
        return None
    return (
        f"{where} is {json.dumps(actual, ensure_ascii=False)}, expected "
        f"{json.dumps(expected, ensure_ascii=False)}"
    )


def _arguments_mismatch(e: ToolArguments, call: ToolCall) -> str | None:
    args = call.parsed_arguments()
    if isinstance(args, str):
        return f"its arguments are not JSON: {args!r}"
    found = subset_mismatch(dict(e.equals), args, e.tolerance) if e.equals else None
    if found:
        return found
    for key, pattern in e.matches.items():
        present, value = _lookup(args, key)
        if not present:
            return f"{key} is missing"
        if not isinstance(value, str) or re.search(pattern, value) is None:
            shown = json.dumps(value, ensure_ascii=False)
            return f"{key} is {shown}, which does not match /{pattern}/"
    return None


def _tool_arguments(e: ToolArguments, episode: Episode) -> tuple[bool, str, Evidence]:
    calls = [c for c in _calls(episode) if c.call.name == e.tool]
    if not calls:
        return False, f"{e.tool} was never called (calls: {_chain(_calls(episode))})", Evidence()
    checked = [(c, _arguments_mismatch(e, c.call)) for c in calls]
    bad = [(c, why) for c, why in checked if why]
    good = [c for c, why in checked if not why]
    if e.calls == "all" and bad:
        c, why = bad[0]
        return False, f"{_shown(c.call)} in round {c.round}: {why}", _at(c)
    if e.calls == "any" and not good:
        c, why = bad[0]
        more = f" (and {len(bad) - 1} other call(s) of {e.tool})" if len(bad) > 1 else ""
        return False, f"{_shown(c.call)} in round {c.round}: {why}{more}", _at(c)
    c = good[0]
    every = "every call of " + e.tool if e.calls == "all" else _shown(c.call)
    return True, f"{every} has the expected arguments (round {c.round})", _at(c)


def _round_index(episode: Episode, n: int) -> int | None:
    """Transcript index of the assistant message of round ``n`` (1-based)."""
    seen = 0
    for i, m in enumerate(episode.transcript):
        if m.get("role") == "assistant":
            seen += 1
            if seen == n:
                return i
    return None


def _max_rounds(e: MaxRounds, episode: Episode) -> tuple[bool, str, Evidence]:
    n = len(episode.rounds)
    if n <= e.limit:
        return True, f"{n} round(s), within {e.limit}", Evidence()
    return (
        False,
        f"{n} rounds, more than {e.limit}; round {e.limit + 1} is over the limit",
        Evidence(_round_index(episode, e.limit + 1)),
    )


def _max_tool_calls(e: MaxToolCalls, episode: Episode) -> tuple[bool, str, Evidence]:
    calls = _calls(episode)
    if len(calls) <= e.limit:
        return True, f"{len(calls)} tool call(s), within {e.limit}", Evidence()
    over = calls[e.limit]
    return (
        False,
        f"{len(calls)} tool calls, more than {e.limit} ({_chain(calls)}); call {e.limit + 1} "
        f"is {_shown(over.call)}",
        _at(over),
    )


def _stop_reason(e: StopReason, episode: Episode) -> tuple[bool, str, Evidence]:
    ok = episode.stop_reason in e.reasons
    wanted = " or ".join(e.reasons)
    why = f"the episode stopped: {episode.stop_reason}" + ("" if ok else f", expected {wanted}")
    return ok, why, Evidence(_final_index(episode))


# ---- answer --------------------------------------------------------------------------------


def _find(text: str, answer: str, case_sensitive: bool) -> int:
    return answer.find(text) if case_sensitive else answer.casefold().find(text.casefold())


def _answer_at(episode: Episode, start: int, end: int) -> Evidence:
    return Evidence(_final_index(episode), (start, end), episode.answer[start:end])


def _answer_contains(e: AnswerContains, episode: Episode) -> tuple[bool, str, Evidence]:
    answer = episode.answer
    missing = [t for t in e.texts if _find(t, answer, e.case_sensitive) < 0]
    if missing:
        shown = ", ".join(repr(t) for t in missing)
        said = f"{answer[:80]!r}" if answer.strip() else "empty"
        return False, f"the answer lacks {shown} (answer: {said})", Evidence(_final_index(episode))
    at = _find(e.texts[0], answer, e.case_sensitive)
    shown = ", ".join(repr(t) for t in e.texts)
    return True, f"the answer contains {shown}", _answer_at(episode, at, at + len(e.texts[0]))


def _answer_not_contains(e: AnswerNotContains, episode: Episode) -> tuple[bool, str, Evidence]:
    for t in e.texts:
        at = _find(t, episode.answer, e.case_sensitive)
        if at >= 0:
            return False, f"the answer contains {t!r}", _answer_at(episode, at, at + len(t))
    shown = ", ".join(repr(t) for t in e.texts)
    return True, f"the answer contains none of {shown}", Evidence(_final_index(episode))


def _answer_matches(e: AnswerMatches, episode: Episode) -> tuple[bool, str, Evidence]:
    m = re.search(e.pattern, episode.answer)
    if m is None:
        return False, f"the answer does not match /{e.pattern}/", Evidence(_final_index(episode))
    return True, f"the answer matches /{e.pattern}/: {m.group()!r}", _answer_at(episode, *m.span())


def _grounded(
    e: Grounded, episode: Episode, expect: Expectation, judge: FormatJudge
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
    return verdict.passed, verdict.explanation, Evidence(_final_index(episode), span, text)


def _strict(
    e: StrictGrounding, episode: Episode, expect: Expectation, judge: FormatJudge
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
        judge.resolved_units(), vocab,
    )  # fmt: skip
    checks = [c for c in g.checks if kinds is None or c.value.kind in kinds]
    of = f" of {', '.join(e.measures)}" if e.measures else ""
    for c in checks:
        if not c.grounded:
            return (
                False,
                f"fabricated value: {c.reason}",
                Evidence(_final_index(episode), c.span, c.text),
            )
    if not checks:
        return True, f"the answer states no value{of} with a unit", Evidence(_final_index(episode))
    shown = ", ".join(c.text for c in checks[:4])
    return (
        True,
        f"every value{of} in the answer is in a tool result: {shown}",
        Evidence(_final_index(episode), checks[0].span, checks[0].text),
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
    expect = Expectation.of(question)
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
    ToolCalled: _tool_called,
    ToolNotCalled: _tool_not_called,
    ToolSequence: _sequence,
    ToolArguments: _tool_arguments,
    MaxRounds: _max_rounds,
    MaxToolCalls: _max_tool_calls,
    StopReason: _stop_reason,
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

    ``expectations``: :mod:`toolreplay.declarations` data, or their YAML form as dicts
    (``{"max_rounds": 3}``); a bad one raises
    :class:`~toolreplay.declarations.DeclarationError` before anything is checked.
    ``question``: what ``grounded`` and ``strict_grounding`` judge the answer for: an
    :class:`~toolreplay.evals.Question` (its measure, day, places and its eval file's declared
    measures), a measure name, a :class:`~toolreplay.judging.grounding.Expectation`, or None
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
    expect = Expectation.of(question)
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
