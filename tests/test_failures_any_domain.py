"""Every failure mode on a non-weather domain (stock look-up, price in EUR), with measures declared
as an eval file declares them: nothing in the classifier or the judge is the weather study's."""

from __future__ import annotations

import pytest

from toolreplay.judging.expectations import check_expectations
from toolreplay.judging.failures import (
    EMPTY_ANSWER,
    ERROR,
    FABRICATED_VALUE,
    NO_MEASUREMENT,
    REFUSAL,
    UNFULFILLED_PROMISE,
    WRONG_PLACE,
    classify,
)
from toolreplay.judging.grounding import Target
from toolreplay.judging.measures import measure_vocabulary
from toolreplay.judging.places import PlaceSpec
from toolreplay.judging.verdicts import GROUNDED_JUDGE, GroundedJudge
from toolreplay.wire.episode import Episode

from .stock_domain import ABC, ABC_RESULT, CORRECT, PRICE, STOCK, XYZ, call, episode, stock_episode

#: What the question asks (stock of ABC-1 and XYZ-2), the measure declared as an eval file does.
ASKED = Target("stock", None, (PlaceSpec("ABC-1", None), PlaceSpec("XYZ-2", None)), (STOCK,))
ONLY_ABC = Target("stock", None, (PlaceSpec("ABC-1", None),), (STOCK,))
#: The same judged with a vocabulary of the declarations alone (no study at all).
ALONE = GroundedJudge("grounded", vocabulary=measure_vocabulary((STOCK, PRICE), "stock-shop"))

JUDGES = pytest.mark.parametrize("judge", [GROUNDED_JUDGE, ALONE], ids=["study+declared", "alone"])


def modes(ep: Episode, judge: GroundedJudge, expect: Target = ASKED) -> list[str]:
    return [f.mode for f in classify(ep, judge, expect)]


@JUDGES
def test_a_correct_answer_has_no_failure_mode(judge: GroundedJudge) -> None:
    ep = stock_episode(CORRECT)
    assert modes(ep, judge) == []
    verdict = judge.judge_episode(ep, ASKED)
    assert verdict.passed, verdict.explanation


@JUDGES
def test_empty_answer(judge: GroundedJudge) -> None:
    ep = stock_episode(
        "", pending=(call("c3", "lookup_sku", sku="XYZ-2"),), stop_reason="max_rounds"
    )
    [label] = classify(ep, judge, ASKED)
    assert label.mode == EMPTY_ANSWER
    assert label.explanation == (
        'the final reply has no text, only 1 tool call the host never executed: lookup_sku({"sku": '
        '"XYZ-2"}); the host stopped (max_rounds) and returned ""'
    )
    assert not judge.judge_episode(ep, ASKED).passed


@JUDGES
def test_unfulfilled_promise(judge: GroundedJudge) -> None:
    ep = stock_episode("Let me check the warehouse for XYZ-2, one moment.")
    [label] = classify(ep, judge, ASKED)
    assert label.mode == UNFULFILLED_PROMISE
    assert "holds no measured value of stock" in label.explanation
    pending = stock_episode(
        "I'll look that up again.", pending=(call("c3", "lookup_sku", sku="X"),)
    )
    assert modes(pending, judge) == [UNFULFILLED_PROMISE]


@JUDGES
def test_fabricated_value(judge: GroundedJudge) -> None:
    ep = stock_episode("ABC-1: 12 units on hand; XYZ-2: 0 units on hand; ZZZ-9: 99 units.")
    labels = classify(ep, judge, ASKED)
    assert [f.mode for f in labels] == [FABRICATED_VALUE]
    assert labels[0].evidence.text == "99 units"
    assert "no tool result holds 99 units" in labels[0].explanation


@JUDGES
def test_no_measurement(judge: GroundedJudge) -> None:
    ep = stock_episode("Both items are available in the warehouse.")
    [label] = classify(ep, judge, ASKED)
    assert label.mode == NO_MEASUREMENT
    assert label.explanation.startswith(
        "the answer holds no measured value with a unit for stock (grounded judge)"
    )
    verdict = judge.judge_episode(ep, ASKED)
    assert verdict.explanation == "no stock value with a unit"


@JUDGES
def test_wrong_entity(judge: GroundedJudge) -> None:
    """Asked about ABC-1, the answer gives the count the tools returned for XYZ-2."""
    ep = stock_episode("XYZ-2: 0 units on hand.")
    labels = classify(ep, judge, ONLY_ABC)
    assert [f.mode for f in labels] == [WRONG_PLACE]
    assert labels[0].evidence.text == "XYZ-2"
    verdict = judge.judge_episode(ep, ONLY_ABC)
    assert not verdict.passed
    assert verdict.explanation.startswith("wrong place: the answer is about XYZ-2")
    # ABC-12 is not ABC-1
    assert modes(stock_episode("ABC-1: 12 units on hand."), judge, ONLY_ABC) == []


@JUDGES
def test_refusal(judge: GroundedJudge) -> None:
    ep = stock_episode("", refusal="I can't share inventory data.")
    [label] = classify(ep, judge, ASKED)
    assert (label.mode, label.evidence.text) == (REFUSAL, "I can't share inventory data.")


@JUDGES
def test_error(judge: GroundedJudge) -> None:
    ep = episode(
        [((ABC,), (ABC_RESULT,), None)],
        None,
        stop_reason="error",
        error="HTTP 503 from https://api.example.com/v1/chat/completions: overloaded",
    )
    [label] = classify(ep, judge, ASKED)
    assert label.mode == ERROR
    assert "round 2" in label.explanation
    assert judge.judge_episode(ep, ASKED).explanation == (
        "no answer: the episode ended on a model API error"
    )


def test_a_price_in_eur_fabricated_and_wrong_entity() -> None:
    get_a = call("p1", "get_price", sku="ABC-1")
    get_b = call("p2", "get_price", sku="XYZ-2")
    results = (
        {"sku": "ABC-1", "price": {"amount": 12.5, "currency": "EUR"}},
        {"sku": "XYZ-2", "price": {"amount": 7.0, "currency": "EUR"}},
    )
    asked = Target("price", None, (PlaceSpec("ABC-1", None),), (PRICE,))
    priced = measure_vocabulary((PRICE,), "prices")
    for answer, labels in [
        ("ABC-1 costs €12.50.", []),
        ("ABC-1 costs €12.50 (1250 cents).", []),
        ("ABC-1 costs €15.", [FABRICATED_VALUE]),
        ("The price of XYZ-2 is €7.", [WRONG_PLACE]),
    ]:
        ep = episode([((get_a, get_b), results, None)], answer, question="Price of ABC-1?")
        for judge in (GROUNDED_JUDGE, GroundedJudge("g", vocabulary=priced)):
            assert modes(ep, judge, asked) == labels, (answer, judge.name)


def test_the_stock_example_with_expectations_alone() -> None:
    """A plugin user's check: the declared measure, strict grounding, no eval file."""
    bad = stock_episode("ABC-1: 12 units on hand; XYZ-2: 0 units on hand; ZZZ-9: 99 units.")
    [strict] = check_expectations(bad, [{"strict_grounding": True}], measures=[STOCK])
    assert not strict.passed and strict.evidence.text == "99 units"
    [ok] = check_expectations(stock_episode(CORRECT), [{"strict_grounding": True}],
                              measures=[STOCK])  # fmt: skip
    assert ok.passed
    assert XYZ.name == "lookup_sku"


def test_no_value_of_any_measure_is_worded_once() -> None:
    ep = stock_episode("Both items are available.")
    verdict = GROUNDED_JUDGE.judge_episode(ep, None)
    assert verdict.explanation == "no measured value with a unit"
