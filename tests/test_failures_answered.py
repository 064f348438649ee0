"""Whether an answer answers: a promise the same answer goes on to keep, a gerund that is a
subject, an answer that only declines though a tool returned a result (``declined``), an
answer the token limit cut off (``truncated``). The examples are public test-suite cassettes
(``tests/data/foreign``) a newcomer ran ``toolreplay run --cassettes`` on; the variants are
other phrasings, in English and Chinese, on built episodes."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from toolreplay.evals import ANY_MEASURE, Question, StopReason
from toolreplay.judging.answered import find_decline, find_unkept_promise
from toolreplay.judging.assessment import assess
from toolreplay.judging.failures import (
    DECLINED,
    EMPTY_ANSWER,
    FAILURE_MODES,
    NO_MEASUREMENT,
    TRUNCATED,
    UNFULFILLED_PROMISE,
    classify,
)
from toolreplay.judging.grounding import Target
from toolreplay.judging.intent import find_promise
from toolreplay.judging.places import PlaceSpec
from toolreplay.wire.episode import Episode, ModelReply, Round, ToolCall, ToolResult

from .stock_domain import ABC, CORRECT, STOCK, call, episode, stock_episode

FOREIGN = Path(__file__).parent / "data" / "foreign"
#: The stock question, its measure declared as an eval file declares it.
STOCK_ASKED = Target("stock", None, (PlaceSpec("ABC-1", None), PlaceSpec("XYZ-2", None)), (STOCK,))


def _any(**kw: object) -> Question:
    """A test's question as ``toolreplay run --cassettes`` makes it: no measure declared."""
    fields: dict[str, object] = {
        "id": "q", "text": "?", "measure": ANY_MEASURE, "places": (), "day_index": 0,
    }  # fmt: skip
    fields.update(kw)
    return Question(**fields)  # type: ignore[arg-type]


def _cassette(name: str, tmp_path: Path) -> tuple[Episode, Question]:
    """The one episode of ``tests/data/foreign/<name>`` and the question a test-suite run
    asks of it."""
    from toolreplay.cassettes import load_recorded
    from toolreplay.evaluation.wire import suite_from_tests
    from toolreplay.wire.reader import read_wire_episodes

    cassette = tmp_path / f"test_{name.replace('-', '_')}"
    shutil.copy(FOREIGN / name, cassette)
    [question] = suite_from_tests([cassette]).questions
    assert question.measure == ANY_MEASURE
    [record] = read_wire_episodes(load_recorded(cassette))
    return record.episode, question


def modes(ep: Episode, question: object = None) -> list[str]:
    return [f.mode for f in classify(ep, measure=question)]  # type: ignore[arg-type]


# ---- a promise the same answer keeps ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "said"),
    [
        # "...; I'll consult the advisor as instructed before finalizing.\n\n2 + 2 = 4"
        ("anthropic-advisor-consult-then-answer.yaml", "2 + 2 = 4"),
        # "I will use a function `is_prime(n)` to check if...": a plan, then the sum
        ("gemini-primes-plan-then-answer.yaml", "**5117**"),
        # "...; getting the s'mores right took finesse.": a gerund subject, no announcement
        ("gemini-dragon-story-gerund-subject.yaml", "finesse"),
    ],
)
def test_public_answers_that_announce_and_then_answer_pass(
    name: str, said: str, tmp_path: Path
) -> None:
    ep, question = _cassette(name, tmp_path)
    assert said in ep.answer and ep.stop_reason == "converged"
    judged = assess(ep, question)
    assert judged.failure_modes == () and judged.passed, judged.failure_modes


@pytest.mark.parametrize(
    "text",
    [
        "Let me search for a historical event that occurred on September 17.\n\nHere's one "
        "significant historical event: in 1939, Taisto Mäki ran 10,000 metres in under 30 "
        "minutes.",
        "I'll look that up.\n\nThe capital of Australia is Canberra, not Sydney as many think.",
        "I'll consult the advisor first.\n\n2 + 2 = 4",
        "让我查一下。北京是中华人民共和国的首都，也是全国的政治文化中心。",
        "我来查询一下这场比赛。曼联昨天以 2 比 1 击败了利物浦。",
    ],
)
def test_a_promise_kept_later_in_the_answer_is_no_label_without_a_measure(text: str) -> None:
    assert find_promise(text) is not None  # the sentence still announces a look-up
    assert find_unkept_promise(text) is None
    assert modes(stock_episode(text), _any()) == []
    assert modes(stock_episode(text), _any(measure="none")) == []


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("I'll look that up. Thanks for your patience.", "I'll look that up."),
        ("Let me check. Sorry, I don't have that information.", "Let me check."),
        ("我将重新查询宁德的天气。请稍等。", "我将重新查询宁德的天气。"),
        ("I'll check the score. Would you like the scorers too?", "I'll check the score."),
        (
            "Here is what I found about the match so far, from the first report. "
            "Let me check the final score.",
            "Let me check the final score.",
        ),
        ("Fetching the data now...", "Fetching the data now..."),
    ],
)
def test_a_promise_nothing_after_keeps_is_still_unfulfilled(text: str, sentence: str) -> None:
    span = find_unkept_promise(text)
    assert span is not None and text[span[0] : span[1]] == sentence
    [label] = classify(stock_episode(text), measure=_any())
    assert label.mode == UNFULFILLED_PROMISE and label.evidence.text == sentence


def test_a_measured_question_still_needs_the_value_after_a_promise() -> None:
    """With a measure, what follows a promise keeps it only with a value of the measure."""
    text = "Let me check the warehouse. ABC-1 is our best-selling part this quarter by far."
    assert modes(stock_episode(text), STOCK_ASKED) == [UNFULFILLED_PROMISE]


@pytest.mark.parametrize(
    ("text", "promise"),
    [
        ("Looking forward, AI promises to deepen integration into daily life:", False),
        ("Looking for the forecast now.", True),
        ("Being a monster was easy; getting the s'mores right took finesse.", False),
        ("Finding a balance between them is key.", False),
        ("Checking the forecast every morning helps a lot.", False),
        ("Getting it right will take time.", False),
        (
            "In these visions, people could populate a virtual space, getting a second opinion "
            "on a presentation, or testing out ideas that are difficult to try in real life.",
            False,
        ),
        ("Getting weather information...", True),
        ("Sure! Fetching the data for Beijing...", True),
        ("I'm checking again now.", True),
        ("We are looking into it.", True),
    ],
)
def test_gerund_subjects_and_participles_are_no_announcements(text: str, promise: bool) -> None:
    assert (find_promise(text) is not None) is promise


# ---- declined: an answer that only declines though a tool answered ---------------------------


def test_public_answer_that_only_apologises_after_a_handoff_is_declined(tmp_path: Path) -> None:
    ep, question = _cassette("openai-agents-handoff-sorry.yaml", tmp_path)
    assert ep.answer == "I'm sorry, but I don't have that information."
    judged = assess(ep, question)
    assert judged.verdict.passed  # any answer passes the verdict of a question with no measure
    [label] = judged.failure_modes
    assert label.mode == DECLINED and not judged.passed
    assert label.evidence.text == ep.answer
    assert label.evidence.tool_call is not None and label.evidence.tool_call.name == "research"
    assert 'research({"query": "soccer news October 4 2023"}) returned a result' in (
        label.explanation
    )


DECLINES = [
    "I'm sorry, I can't help with that.",
    "Unfortunately, no information is available for that item. Would you like me to try again?",
    "I do not have access to that data.",
    "抱歉，我无法提供相关信息。",
    "很抱歉，我没有找到相关信息。如果需要，我可以再帮您查询。",
]


@pytest.mark.parametrize("text", DECLINES)
def test_a_decline_after_a_tool_result_is_declined(text: str) -> None:
    span = find_decline(text)
    assert span is not None
    [label] = classify(stock_episode(text), measure=_any())
    assert label.mode == DECLINED and label.evidence.span == span
    assert label.evidence.tool_call == ABC
    assert not assess(stock_episode(text), _any()).passed


@pytest.mark.parametrize(
    "text",
    [
        "Sorry, I don't have the full details, but United beat Liverpool 2-1 yesterday.",
        "I don't have the final figures. However, ABC-1 sold out twice this quarter already.",
        CORRECT,
    ],
)
def test_an_answer_that_says_something_beside_a_decline_is_not_declined(text: str) -> None:
    assert find_decline(text) is None
    assert DECLINED not in modes(stock_episode(text), _any())


@pytest.mark.parametrize("text", DECLINES[:2])
def test_a_decline_with_nothing_to_pass_over_is_no_label(text: str) -> None:
    """No tool ran, a tool failed or returned nothing, or only a handoff answered: nothing
    held the answer, and saying so is no failure."""
    no_tool = episode([], text)
    failed = _with_results(text, ToolResult(ABC, '{"error": "unknown sku"}', error="unknown"))
    nothing = _with_results(text, ToolResult(ABC, "[]"))
    handoff = ToolCall("h1", "transfer_to_summarizer", "{}")
    handed = _with_results(text, ToolResult(handoff, "{'assistant': 'Summarizer'}"))
    for ep in (no_tool, failed, nothing, handed):
        assert modes(ep, _any()) == []


def _with_results(answer: str, *results: ToolResult) -> Episode:
    calls = tuple(r.call for r in results)
    first = ModelReply(None, calls, "tool_calls")
    final = ModelReply(answer, (), "stop")
    rounds = (Round(1, True, first, results), Round(2, True, final))
    transcript = (
        {"role": "user", "content": "?"},
        first.to_message(),
        *(r.to_message() for r in results),
        final.to_message(),
    )
    return dataclasses.replace(episode([], answer), transcript=transcript, rounds=rounds)


def test_a_measured_or_none_question_keeps_its_labels_for_a_decline() -> None:
    ep = stock_episode("I'm sorry, but I don't have that information.")
    assert modes(ep, STOCK_ASKED) == [NO_MEASUREMENT]  # the verdict fails it already
    assert modes(ep, "none") == []  # nothing to measure: declining may be right


# ---- truncated: the token limit ended the episode --------------------------------------------


def _truncated(answer: str, **kw: object) -> Episode:
    ep = stock_episode(answer, stop_reason="truncated", **kw)  # type: ignore[arg-type]
    last = ep.rounds[-1]
    cut = dataclasses.replace(last, reply=dataclasses.replace(last.reply, finish_reason="length"))
    return dataclasses.replace(ep, rounds=(*ep.rounds[:-1], cut))


def test_public_answer_cut_by_the_token_limit_is_truncated(tmp_path: Path) -> None:
    ep, question = _cassette("openai-llama-index-complete-length.yaml", tmp_path)
    assert ep.stop_reason == "truncated"
    assert ep.answer.endswith("has been contemplated by")
    judged = assess(ep, question)
    [label] = judged.failure_modes
    assert label.mode == TRUNCATED and not judged.passed
    assert label.evidence.text == ep.answer
    assert label.explanation == (
        "the model hit its output token limit (finish reason length, stop reason truncated): "
        f"the answer stops after {len(ep.answer)} characters, mid-reply"
    )
    accepted = dataclasses.replace(question, expect=(StopReason(("converged", "truncated")),))
    again = assess(ep, accepted)
    assert again.failure_modes == () and again.passed


def test_a_truncated_answer_fails_even_with_grounded_values() -> None:
    ep = _truncated(CORRECT)
    assert modes(ep, STOCK_ASKED) == [TRUNCATED]
    assert not assess(ep, STOCK_ASKED).passed
    assert assess(stock_episode(CORRECT), STOCK_ASKED).passed


def test_a_truncated_reply_with_no_text_is_empty_and_truncated() -> None:
    ep = _truncated("", pending=(call("c3", "lookup_sku", sku="XYZ-2"),))
    labels = classify(ep, measure=STOCK_ASKED)
    assert [f.mode for f in labels] == [EMPTY_ANSWER, TRUNCATED]
    assert labels[1].evidence.tool_call == call("c3", "lookup_sku", sku="XYZ-2")


def test_the_new_modes_are_in_the_vocabulary_and_serialise() -> None:
    from toolreplay.report.labels import FAILURE_MODES as LABELS
    from toolreplay.results.build import failure_mode_record

    assert {DECLINED, TRUNCATED} <= set(FAILURE_MODES) and {DECLINED, TRUNCATED} <= set(LABELS)
    [label] = classify(_truncated(CORRECT), measure=STOCK_ASKED)
    record = json.loads(json.dumps(failure_mode_record(label).model_dump()))
    assert record["mode"] == "truncated"
    assert record["evidence"]["text"] == "XYZ-2: 0 units on hand."  # the last sentence


@pytest.mark.parametrize(
    ("finish", "limit"),
    [
        ("model_context_window_exceeded", "its context window"),  # Anthropic's, Bedrock's
        ("length", "its output token limit"),
        ("max_tokens", "its output token limit"),
        ("MAX_TOKENS", "its output token limit"),
    ],
)
def test_the_truncated_label_names_the_limit_the_model_hit(finish: str, limit: str) -> None:
    ep = stock_episode(CORRECT, stop_reason="truncated")  # type: ignore[arg-type]
    last = ep.rounds[-1]
    cut = dataclasses.replace(last, reply=dataclasses.replace(last.reply, finish_reason=finish))
    ep = dataclasses.replace(ep, rounds=(*ep.rounds[:-1], cut))
    [label] = classify(ep, measure=STOCK_ASKED)
    assert label.mode == TRUNCATED
    assert label.explanation.startswith(f"the model hit {limit} (finish reason {finish},")
