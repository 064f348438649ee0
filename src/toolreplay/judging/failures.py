"""Failure classifier: why an episode's answer failed, with the evidence each label rests on.

:func:`classify` gives an :class:`~toolreplay.wire.episode.Episode` zero or more
:class:`FailureMode` labels (an episode can carry several):

=======================  ==================================================================
mode                     when
=======================  ==================================================================
``error``                the model endpoint failed and the episode ended there (stop reason
                         ``error``): an HTTP error status from the server, a body that is no
                         chat completion, or a transport failure (no response). The label's
                         explanation names the status, the endpoint and the round; its
                         evidence quotes the server's message (:class:`EpisodeError`). It is
                         the episode's only label: there is no answer to read.
``empty_answer``         form A: the final text is empty. Usually the last reply held tool
                         calls the host never executed (:attr:`Episode.pending_tool_calls`);
                         also a forced final round (tools withheld) that returned no text, or
                         a reply with neither text nor tool calls.
``unfulfilled_promise``  form B: the final reply carries tool calls the host never
                         executed beside text with no measured value (whatever the text
                         says: "retrying now", a narration), or, with nothing pending, its
                         text announces a look-up still to be taken (the intent grammar of
                         :func:`find_promise`: 我将重新查询, 让我再查一下, 這就幫您查詢, I'll
                         look that up, one moment while I check, 稍后给您结果, I'm looking
                         that up now, 正在为您查询...) and holds no measured value. For a
                         question that asks for no measured value (``any``, ``none``) a
                         promise that a later sentence of the same answer keeps by saying
                         something is no label
                         (:func:`toolreplay.judging.answered.find_unkept_promise`).
``fabricated_value``     a value in the answer that no tool result of the episode holds for
                         the day, field and place the answer states it for, after unit
                         conversion and rounding to the answer's precision
                         (:func:`toolreplay.judging.grounding.ground_answer`); one label per
                         answer, naming each such value (a range once, a value written
                         again once); a value the episode holds nothing to check against
                         (a hosted tool's, or no tool result under an ``any`` question:
                         :mod:`toolreplay.judging.checkable`) is not checkable, not this.
``wrong_place``          the answer is about another place than the question asks: its
                         values are tool values of a place it names that the question does not
                         ask about, and none is a value of an asked place
                         (:func:`toolreplay.judging.verdicts.wrong_place`); evidence quotes
                         the place it names, the explanation names both.
``no_measurement``       a non-empty answer with no measured value and no promise (an offer
                         conditional on the user: 等您需要时我可以再查, if you like I can...,
                         到时..., a question, a statement that nothing was found).
``declined``             a question with no measure declared (``any``): the answer only
                         declines ("I'm sorry, but I don't have that information", I can't
                         help with that, 抱歉，我无法提供相关信息) and says nothing else, though
                         a tool of the episode returned a result
                         (:func:`toolreplay.judging.answered.find_decline`); evidence quotes
                         the sentence and names the call whose result it passed over.
``refusal``              the final reply carries the model's ``refusal`` text (the OpenAI
                         refusal field or a refusal content part); evidence quotes it.
``truncated``            the episode ended because the model hit its output token limit
                         (stop reason ``truncated``: finish reason ``length``, as Anthropic's
                         ``max_tokens`` and Gemini's ``MAX_TOKENS`` read); evidence quotes the
                         answer's last sentence. Beside ``empty_answer`` when no text came. Not
                         given when the question's expectations accept that stop reason
                         (``stop_reason: truncated``).
=======================  ==================================================================

Structure comes first (an error that ended the episode, pending tool calls), then the text.
"Measured value" means what :func:`toolreplay.judging.values.scan` reads with the judge's
units, so numbers in dates (``2026-09-17``, ``9月17日``) and coordinates (``31.2222,
121.4581``, ``北纬39.9度``, ``39.9°N``, ``39°54′``) never count. The pass/fail verdict and the
stop reason are not failure modes; they are reported beside them.

Shape of one label in results.json (:func:`toolreplay.results.build.failure_mode_record`, read
by the HTML report)::

    {"mode": str, "explanation": str,
     "evidence": {"message_index": int | None,   # index into episode.transcript
                  "span": [start, end] | None,    # char offsets into that message's content
                  "text": str | None,             # the quoted sentence or value
                  "tool_call": {"name": str, "arguments": Any} | None}}
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolreplay.evals import ANY_MEASURE, StopReason
from toolreplay.judging.answered import find_decline, find_unkept_promise, holds_content
from toolreplay.judging.bounds import BETWEEN
from toolreplay.judging.episode_errors import EpisodeError
from toolreplay.judging.grounding import Target, ValueCheck, ground_answer
from toolreplay.judging.intent import find_promise, sentences
from toolreplay.judging.toolvalues import ToolValue, tool_values
from toolreplay.judging.values import relevant_values
from toolreplay.judging.verdicts import FULL_JUDGE, NO_VALUE, FormatJudge, wrong_place
from toolreplay.wire import hands_off
from toolreplay.wire.episode import Episode, ToolCall

if TYPE_CHECKING:
    from toolreplay.evals import Question


ERROR = "error"


EMPTY_ANSWER = "empty_answer"


UNFULFILLED_PROMISE = "unfulfilled_promise"


FABRICATED_VALUE = "fabricated_value"


WRONG_PLACE = "wrong_place"


NO_MEASUREMENT = "no_measurement"


DECLINED = "declined"


REFUSAL = "refusal"


TRUNCATED = "truncated"


#: Every mode, in the order labels are given and counted.
FAILURE_MODES = (
    EMPTY_ANSWER, UNFULFILLED_PROMISE, FABRICATED_VALUE, WRONG_PLACE, NO_MEASUREMENT, DECLINED,
    REFUSAL, TRUNCATED, ERROR,
)  # fmt: skip


@dataclass(frozen=True)
class Evidence:
    """What a label rests on. ``message_index`` indexes ``episode.transcript``; ``span`` is
    ``(start, end)`` character offsets into that message's ``content``; ``text`` quotes the
    sentence or value; ``tool_call`` is the pending tool call the label points at. Any of
    them may be None."""

    message_index: int | None = None
    span: tuple[int, int] | None = None
    text: str | None = None
    tool_call: ToolCall | None = None


@dataclass(frozen=True)
class FailureMode:
    """One label: ``mode`` (one of :data:`FAILURE_MODES`), a one-line ``explanation`` and
    the :class:`Evidence`."""

    mode: str
    explanation: str
    evidence: Evidence


def final_index(episode: Episode) -> int | None:
    """Index of the final assistant reply in the transcript (None when the episode ended
    before one, e.g. on an API error)."""
    if episode.transcript and episode.transcript[-1].get("role") == "assistant":
        return len(episode.transcript) - 1
    return None


def _call_text(call: ToolCall) -> str:
    args = call.parsed_arguments()
    shown = json.dumps(args, ensure_ascii=False) if not isinstance(args, str) else args
    return f"{call.name}({shown})"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _empty(episode: Episode, index: int | None) -> FailureMode:
    pending = episode.pending_tool_calls
    last = episode.rounds[-1] if episode.rounds else None
    if pending:
        calls = ", ".join(_call_text(c) for c in pending)
        why = (
            f"the final reply has no text, only {_plural(len(pending), 'tool call')} the host "
            f'never executed: {calls}; the host stopped ({episode.stop_reason}) and returned ""'
        )
    elif index is None:
        why = f"the episode ended before any answer (stop reason {episode.stop_reason})"
    elif last is not None and not last.tools_offered:
        why = (
            f"tools were withheld in the final round (stop reason {episode.stop_reason}) and "
            "the model returned no text"
        )
    elif episode.stop_reason == "unknown":
        why = (
            "the model's final reply has neither text nor tool calls and named no finish "
            "reason (stop reason unknown): it may have been cut off"
        )
    else:
        why = "the model's final reply has neither text nor tool calls"
    return FailureMode(
        EMPTY_ANSWER, why, Evidence(index, None, None, pending[0] if pending else None)
    )


def _error(episode: Episode) -> FailureMode:
    err = EpisodeError.parse(episode.error)
    failed = len(episode.rounds) + 1  # the request that failed: the round after the last one
    why = (
        f"the model endpoint failed in round {failed} ({err.summary()}) and the episode ended "
        "there, with no answer (stop reason error)"
    )
    return FailureMode(ERROR, why, Evidence(None, None, err.message, None))


def _truncated(episode: Episode, index: int | None, measure: object) -> tuple[FailureMode, ...]:
    """The ``truncated`` label of an episode the model's token limit ended, unless the
    question's expectations accept that stop reason (``stop_reason: truncated``)."""
    if episode.stop_reason != "truncated":
        return ()
    if any(
        isinstance(e, StopReason) and "truncated" in e.reasons
        for e in getattr(measure, "expect", ())
    ):
        return ()
    answer = episode.answer
    last = sentences(answer)[-1] if answer.strip() else None
    finish = episode.rounds[-1].reply.finish_reason if episode.rounds else None
    limit = (  # Anthropic's and Bedrock's model_context_window_exceeded
        "its context window" if "context" in str(finish).lower() else "its output token limit"
    )
    cut = (
        f"the answer stops after {len(answer)} characters, mid-reply"
        if last is not None
        else "the reply has no text"
    )
    return (
        FailureMode(
            TRUNCATED,
            f"the model hit {limit} (finish reason {finish}, stop reason truncated): {cut}",
            Evidence(
                index,
                last,
                answer[last[0] : last[1]] if last is not None else None,
                episode.pending_tool_calls[0] if episode.pending_tool_calls else None,
            ),
        ),
    )


def _answered_call(episode: Episode) -> ToolCall | None:
    """The first call a tool answered with a result (no error, holding some content, see
    :func:`~toolreplay.judging.answered.holds_content`; a handoff to another agent is no
    result), or None."""
    for r in episode.rounds:
        for result in r.results:
            if result.error is None and holds_content(result.content):
                if not hands_off(result.call):
                    return result.call
    return None


#: How many of an answer's fabricated values one label's explanation names.
SHOWN_VALUES = 6


def _fabricated(checks: list[ValueCheck], answer: str, index: int | None) -> FailureMode:
    """The one ``fabricated_value`` label of an answer: its values no tool result holds, a
    range's two ends as one statement (``3–4 cm``), a value written again with the same
    reason once (``6 mph ×2``); the evidence is the first."""
    items: dict[tuple[str, str], list[tuple[int, int]]] = {}
    n = 0
    while n < len(checks):
        c, nxt = checks[n], checks[n + 1] if n + 1 < len(checks) else None
        span, n = c.span, n + 1
        if c.bound == BETWEEN and nxt is not None and nxt.bound == BETWEEN:
            if nxt.reason == c.reason:  # the two ends of one range
                span, n = (c.span[0], nxt.span[1]), n + 1
        items.setdefault((answer[span[0] : span[1]], c.reason), []).append(span)
    (text, reason), spans = next(iter(items.items()))
    evidence = Evidence(index, spans[0], text, None)
    if len(items) == 1 and len(spans) == 1:
        why = (
            f"the answer states {text}, which no tool result holds for what it is stated for "
            f"(after unit conversion and rounding): {reason}"
        )
        return FailureMode(FABRICATED_VALUE, why, evidence)
    shown = [
        f"{t}{f' ×{len(s)}' if len(s) > 1 else ''} ({r})"
        for (t, r), s in list(items.items())[:SHOWN_VALUES]
    ]
    more = len(items) - SHOWN_VALUES
    count = sum(len(s) for s in items.values())
    why = (
        f"the answer states {count} values no tool result holds for what they are stated for "
        f"(after unit conversion and rounding): {'; '.join(shown)}"
        + (f"; and {_plural(more, 'other value')}" if more > 0 else "")
    )
    return FailureMode(FABRICATED_VALUE, why, evidence)


def classify(
    episode: Episode,
    judge: FormatJudge = FULL_JUDGE,
    measure: Question | str | Target | None = None,
) -> tuple[FailureMode, ...]:
    """The failure modes of ``episode`` (see the module docstring), in :data:`FAILURE_MODES`
    order; ``()`` for an answer that holds only grounded measured values.

    An episode that ended on a model API error (stop reason ``error``) is ``error`` and nothing
    else: there is no answer to read. Structure first: a final reply whose tool calls the host
    never executed is the strongest
    signal (no text: ``empty_answer``; text without a measured value: ``unfulfilled_promise``,
    whatever the text says, e.g. "retrying now"). Then the text: a promise by the intent grammar
    (:func:`find_promise`; for a question with no measure, one no later sentence keeps,
    :func:`find_unkept_promise`), else ``no_measurement`` (with no measure: ``declined`` for an
    answer that only declines though a tool returned a result). An episode the token limit
    ended is also ``truncated``, unless the question's expectations accept that stop reason.
    ``judge`` supplies the units (so with the narrow judge "26度" is no measurement);
    ``measure`` is the question (or just its measure name) whose values count as answering it,
    whose day and places each value is grounded against
    (:func:`toolreplay.judging.grounding.ground_answer`), and whose ``expect`` may accept a
    stop reason. Never raises for a well-formed episode."""
    if episode.stop_reason == "error":
        return (_error(episode),)
    expect = Target.of(measure)
    judge = judge.for_question(expect)
    index = final_index(episode)
    answer = episode.answer
    refusal = episode.rounds[-1].reply.refusal if episode.rounds else None
    if refusal is not None:  # "": the API said it refused, and nothing more
        said = f": {refusal}" if refusal else ", saying nothing more"
        refused = FailureMode(
            REFUSAL,
            f"the model refused (stop reason {episode.stop_reason}){said}",
            Evidence(index, None, refusal, None),
        )
    cut = _truncated(episode, index, measure)
    if refusal is not None and not answer.strip():
        return (refused, *cut)
    if not answer.strip():
        return (_empty(episode, index), *cut)
    vocab = judge.resolved_vocabulary()
    expect = expect.in_vocabulary(vocab)
    grounding = ground_answer(
        answer, episode.transcript, expect, judge.resolved_units(), vocab, episode.hosted_tools
    )
    values = tuple(c.value for c in grounding.checks)
    vacuous = {id(c.value): c for c in grounding.checks if c.vacuous}  # bounds.py: pins nothing
    relevant = relevant_values(answer, values, expect.measure, vocab)
    said_nothing = [vacuous[id(v)] for v in relevant if id(v) in vacuous]
    relevant = tuple(v for v in relevant if id(v) not in vacuous)
    pending = episode.pending_tool_calls
    labels: list[FailureMode] = []
    of = f" of {expect.measure}" if expect.measure not in (None, NO_VALUE, ANY_MEASURE) else ""
    if not relevant:
        unmeasured = expect.measure in (NO_VALUE, ANY_MEASURE)  # an answer need say something
        promise = find_unkept_promise(answer) if unmeasured else find_promise(answer)
        decline = find_decline(answer) if expect.measure == ANY_MEASURE else None
        passed_over = _answered_call(episode) if decline is not None else None
        if pending:
            calls = ", ".join(_call_text(c) for c in pending)
            span = promise or (0, len(answer))
            said = "announces it" if promise else "holds no measured value and announces nothing"
            labels.append(
                FailureMode(
                    UNFULFILLED_PROMISE,
                    f"the final reply carries {_plural(len(pending), 'tool call')} the host never "
                    f"executed ({calls}) and its text {said}; no measured value{of}, and the host "
                    f"has stopped ({episode.stop_reason})",
                    Evidence(index, span, answer[span[0] : span[1]], pending[0]),
                )
            )
        elif promise is not None:
            start, end = promise
            labels.append(
                FailureMode(
                    UNFULFILLED_PROMISE,
                    "the answer announces a look-up still to be taken and holds no measured "
                    f"value{of}, but the host has stopped ({episode.stop_reason})",
                    Evidence(index, promise, answer[start:end], None),
                )
            )
        elif said_nothing:  # only bounds or ranges that pin nothing (above 0°C)
            c = said_nothing[0]
            labels.append(
                FailureMode(
                    NO_MEASUREMENT,
                    f"the answer holds no measured value{of} a tool value pins down: {c.reason}",
                    Evidence(index, c.span, c.text, None),
                )
            )
        elif decline is not None and passed_over is not None:
            start, end = decline
            labels.append(
                FailureMode(
                    DECLINED,
                    "the answer declines to answer and says nothing else, though "
                    f"{_call_text(passed_over)} returned a result",
                    Evidence(index, decline, answer[start:end], passed_over),
                )
            )
        elif not unmeasured:  # they need no measured value
            labels.append(
                FailureMode(
                    NO_MEASUREMENT,
                    f"the answer holds no measured value with a unit "
                    f"{'for ' + expect.measure + ' ' if expect.measure else ''}({judge.name} "
                    "judge) and announces no further action",
                    Evidence(index, (0, len(answer)), answer, None),
                )
            )
    made_up = [c for c in grounding.checks if c.fabricated]  # not checkable: not made up
    if made_up:
        labels.append(_fabricated(made_up, answer, index))
    answering = {id(v) for v in relevant}
    elsewhere = wrong_place([c for c in grounding.checks if id(c.value) in answering], expect)
    if elsewhere is not None:
        start, end = elsewhere.span
        labels.append(
            FailureMode(
                WRONG_PLACE,
                elsewhere.explanation(answer),
                Evidence(index, elsewhere.span, answer[start:end], None),
            )
        )
    if refusal:
        labels.append(refused)
    return (*labels, *cut)


__all__ = [
    "DECLINED", "EMPTY_ANSWER", "ERROR", "FABRICATED_VALUE", "FAILURE_MODES", "NO_MEASUREMENT",
    "REFUSAL", "TRUNCATED", "UNFULFILLED_PROMISE", "WRONG_PLACE", "EpisodeError", "Evidence",
    "FailureMode", "ToolValue", "classify", "final_index",
    "find_promise", "mode_counts", "sentences", "tool_values",
]  # fmt: skip


def mode_counts(labels_per_episode: Iterable[Iterable[str]]) -> dict[str, int]:
    """How many episodes carry each mode (an episode with two fabricated values counts
    once), in :data:`FAILURE_MODES` order, modes with no episode left out."""
    counts = Counter(mode for modes in labels_per_episode for mode in set(modes))
    return {m: counts[m] for m in FAILURE_MODES if counts[m]}
