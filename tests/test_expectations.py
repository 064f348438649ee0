"""Expectations: every kind has a passing and a failing case, each with its explanation and the
message it rests on; bad specs are one-line errors naming where they are."""

from __future__ import annotations

from typing import Any

import pytest

from toolreplay.evals import (
    EXPECTATION_KINDS,
    DeclarationError,
    MaxRounds,
    ToolSequence,
    parse_expectation,
    parse_measures,
)
from toolreplay.judging.expectations import check_expectations, subset_mismatch
from toolreplay.results.build import expectation_record
from toolreplay.wire.episode import Episode

from .stock_domain import (
    ABC,
    ABC_RESULT,
    CORRECT,
    INVENTED,
    STOCK,
    XYZ,
    XYZ_RESULT,
    call,
    episode,
    stock_episode,
)

GOOD = stock_episode(CORRECT)
#: geocode-like chain: look up ABC-1, then XYZ-2, in two rounds
TWO_ROUNDS = episode(
    [((ABC,), (ABC_RESULT,), None), ((XYZ,), (XYZ_RESULT,), "Now XYZ-2.")], CORRECT
)


def one(ep: Episode, spec: dict[str, Any], **kw: Any) -> tuple[bool, str, int | None]:
    [r] = check_expectations(ep, [spec], measures=[STOCK], **kw)
    return r.passed, r.explanation, r.evidence.message_index


CASES: list[tuple[str, dict[str, Any], Episode, bool, str, int | None]] = [
    # kind, spec, episode, passed, explanation, evidence message index
    ("tool_called", {"tool_called": "lookup_sku"}, GOOD, True,
     "lookup_sku was called 2 times (round 1)", 1),
    ("tool_called", {"tool_called": "delete_sku"}, GOOD, False,
     "delete_sku was never called (calls: lookup_sku → lookup_sku)", None),
    ("tool_called", {"tool_called": {"tool": "lookup_sku", "at_least": 3}}, GOOD, False,
     "lookup_sku was called 2 times (round 1), fewer than the 3 expected", 1),
    ("tool_not_called", {"tool_not_called": "delete_sku"}, GOOD, True,
     "delete_sku was not called (calls: lookup_sku → lookup_sku)", None),
    ("tool_not_called", {"tool_not_called": "lookup_sku"}, TWO_ROUNDS, False,
     'lookup_sku was called in round 1: lookup_sku({"sku": "ABC-1"})', 1),
    ("tool_sequence", {"tool_sequence": ["lookup_sku", "lookup_sku"]}, TWO_ROUNDS, True,
     "the calls are exactly lookup_sku → lookup_sku", 1),
    ("tool_sequence", {"tool_sequence": ["lookup_sku"]}, TWO_ROUNDS, False,
     "1 call(s) more than the 1 expected; made lookup_sku → lookup_sku", 3),
    ("tool_sequence", {"tool_sequence": ["lookup_sku", "get_price"]}, TWO_ROUNDS, False,
     "call 2 is lookup_sku, expected get_price; made lookup_sku → lookup_sku", 3),
    ("tool_sequence", {"tool_sequence": {"tools": ["lookup_sku"], "mode": "in_order"}},
     TWO_ROUNDS, True, "lookup_sku were called in this order; made lookup_sku → lookup_sku",
     None),
    ("tool_sequence",
     {"tool_sequence": {"tools": ["get_price", "lookup_sku"], "mode": "in_order"}},
     TWO_ROUNDS, False,
     "get_price (expected call 1 in order) was not made after none of them; made "
     "lookup_sku → lookup_sku", None),
    ("tool_sequence", {"tool_sequence": {"tools": ["lookup_sku"] * 2, "mode": "any_order"}},
     GOOD, True, "made lookup_sku → lookup_sku: the expected calls in some order", None),
    ("tool_sequence", {"tool_sequence": {"tools": ["lookup_sku"], "mode": "any_order"}},
     GOOD, False,
     "made lookup_sku → lookup_sku, not the expected calls in some order: not expected "
     "lookup_sku", 1),
    ("tool_sequence",
     {"tool_sequence": {"tools": ["lookup_sku", "lookup_sku", "get_price"], "mode": "subset"}},
     GOOD, True, "made lookup_sku → lookup_sku: only expected calls", None),
    ("tool_sequence", {"tool_sequence": {"tools": ["get_price"], "mode": "subset"}}, GOOD,
     False, "made lookup_sku → lookup_sku, not only expected calls: missing get_price; not "
     "expected lookup_sku, lookup_sku", 1),
    ("tool_sequence", {"tool_sequence": {"tools": ["lookup_sku"], "mode": "superset"}}, GOOD,
     True, "made lookup_sku → lookup_sku: every expected call", None),
    ("tool_sequence",
     {"tool_sequence": {"tools": ["lookup_sku", "get_price"], "mode": "superset"}}, GOOD,
     False, "made lookup_sku → lookup_sku, not every expected call: missing get_price; not "
     "expected lookup_sku", 1),
    ("tool_arguments", {"tool_arguments": {"tool": "lookup_sku", "equals": {"sku": "XYZ-2"}}},
     TWO_ROUNDS, True, 'lookup_sku({"sku": "XYZ-2"}) has the expected arguments (round 2)', 3),
    ("tool_arguments", {"tool_arguments": {"tool": "lookup_sku", "equals": {"sku": "ZZZ-9"}}},
     TWO_ROUNDS, False,
     'lookup_sku({"sku": "ABC-1"}) in round 1: sku is "ABC-1", expected "ZZZ-9" (and 1 other '
     "call(s) of lookup_sku)", 1),
    ("tool_arguments",
     {"tool_arguments": {"tool": "lookup_sku", "matches": {"sku": r"^[A-Z]{3}-\d$"},
                         "calls": "all"}},
     TWO_ROUNDS, True, "every call of lookup_sku has the expected arguments (round 1)", 1),
    ("tool_arguments",
     {"tool_arguments": {"tool": "lookup_sku", "matches": {"sku": "^ABC"}, "calls": "all"}},
     TWO_ROUNDS, False,
     'lookup_sku({"sku": "XYZ-2"}) in round 2: sku is "XYZ-2", which does not match /^ABC/', 3),
    ("max_rounds", {"max_rounds": 3}, TWO_ROUNDS, True, "3 round(s), within 3", None),
    ("max_rounds", {"max_rounds": 2}, TWO_ROUNDS, False,
     "3 rounds, more than 2; round 3 is over the limit", 5),
    ("max_tool_calls", {"max_tool_calls": 2}, GOOD, True, "2 tool call(s), within 2", None),
    ("max_tool_calls", {"max_tool_calls": 1}, TWO_ROUNDS, False,
     "2 tool calls, more than 1 (lookup_sku → lookup_sku); call 2 is "
     'lookup_sku({"sku": "XYZ-2"})', 3),
    ("stop_reason", {"stop_reason": "converged"}, GOOD, True,
     "the episode stopped: converged", 4),
    ("stop_reason", {"stop_reason": ["max_rounds", "repeated"]}, GOOD, False,
     "the episode stopped: converged, expected max_rounds or repeated", 4),
    ("answer_contains", {"answer_contains": ["abc-1", "XYZ-2"]}, GOOD, True,
     "the answer contains 'abc-1', 'XYZ-2'", 4),
    ("answer_contains", {"answer_contains": {"texts": ["abc-1"], "case_sensitive": True}},
     GOOD, False,
     "the answer lacks 'abc-1' (answer: 'ABC-1: 12 units on hand; XYZ-2: 0 units on hand.')", 4),
    ("answer_matches", {"answer_matches": r"XYZ-2: \d+ units"}, GOOD, True,
     r"the answer matches /XYZ-2: \d+ units/: 'XYZ-2: 0 units'", 4),
    ("answer_matches", {"answer_matches": r"out of stock"}, GOOD, False,
     "the answer does not match /out of stock/", 4),
    ("answer_not_contains", {"answer_not_contains": "ZZZ-9"}, GOOD, True,
     "the answer contains none of 'ZZZ-9'", 4),
    ("answer_not_contains", {"answer_not_contains": "ZZZ-9"}, stock_episode(INVENTED), False,
     "the answer contains 'ZZZ-9'", 4),
    ("grounded", {"grounded": "stock"}, GOOD, True,
     "states 12 units, which equals 12 units at $.on_hand of tool message 2 (ABC-1)", 4),
    ("grounded", {"grounded": "stock"}, stock_episode("ABC-1: 15 units on hand."), False,
     "fabricated value: no tool result holds 15 units; the nearest stock is 12 units at "
     "$.on_hand of tool message 2 (ABC-1)", 4),
    ("strict_grounding", {"strict_grounding": True}, GOOD, True,
     "every value in the answer is in a tool result: 12 units, 0 units", 4),
    ("strict_grounding", {"strict_grounding": ["stock"]}, stock_episode(INVENTED), False,
     "fabricated value: no tool result holds 99 units; the nearest stock is 12 units at "
     "$.on_hand of tool message 2 (ABC-1)", 4),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "spec", "ep", "passed", "explanation", "index"),
    CASES,
    ids=[f"{c[0]}-{'pass' if c[3] else 'fail'}-{i}" for i, c in enumerate(CASES)],
)
def test_each_expectation_kind(
    kind: str,
    spec: dict[str, Any],
    ep: Episode,
    passed: bool,
    explanation: str,
    index: int | None,
) -> None:
    [r] = check_expectations(ep, [spec], measures=[STOCK])
    assert (r.kind, r.passed, r.explanation, r.evidence.message_index) == (
        kind, passed, explanation, index,
    )  # fmt: skip


def test_every_kind_has_a_passing_and_a_failing_case() -> None:
    assert {(c[0], c[3]) for c in CASES} == {(k, p) for k in EXPECTATION_KINDS for p in (1, 0)}


def test_evidence_of_answer_checks_quotes_the_answer() -> None:
    [r] = check_expectations(stock_episode(INVENTED), [{"strict_grounding": True}],
                             measures=[STOCK])  # fmt: skip
    assert r.evidence.text == "99 units"
    assert r.evidence.span is not None
    start, end = r.evidence.span
    assert INVENTED[start:end] == "99 units"
    assert expectation_record(r).model_dump() == {
        "kind": "strict_grounding",
        "expected": "every value of any measure is grounded",
        "passed": False,
        "explanation": r.explanation,
        "evidence": {"message_index": 4, "span": [start, end], "text": "99 units",
                     "tool_call": None},
    }  # fmt: skip


def test_a_pending_call_counts_as_called_for_tool_not_called_only() -> None:
    ep = stock_episode("Let me check ZZZ-9 too.", pending=(call("c9", "delete_sku", sku="Z"),))
    [called, not_called] = check_expectations(
        ep, [{"tool_called": "delete_sku"}, {"tool_not_called": "delete_sku"}]
    )
    assert not called.passed and not not_called.passed
    assert not_called.explanation == (
        'delete_sku was called in round 2: delete_sku({"sku": "Z"}) (left pending: the host '
        "never ran it)"
    )
    assert not_called.evidence.tool_call is not None


def test_numeric_tolerance_and_nested_subsets() -> None:
    args = {"where": {"lat": 39.9042, "lon": 116.4074}, "days": [0, 1], "unit": "C"}
    assert subset_mismatch({"where": {"lat": 39.9}}, args, 0.01) is None
    assert subset_mismatch({"where": {"lat": 39.9}}, args) == (
        "where.lat is 39.9042, expected 39.9"
    )
    assert subset_mismatch({"days": [0]}, args) == "days is [0, 1], expected [0]"
    assert subset_mismatch({"zoom": 3}, args) == "zoom is missing"
    assert subset_mismatch({"unit": "F"}, args) == 'unit is "C", expected "F"'
    assert subset_mismatch({"days": [0, 1.0]}, args) is None


def test_expectations_are_data_or_their_yaml_form() -> None:
    assert parse_expectation({"max_rounds": 3}) == MaxRounds(3)
    assert parse_expectation(MaxRounds(3)) == MaxRounds(3)
    assert parse_expectation({"tool_sequence": ["a", "b"]}) == ToolSequence(("a", "b"), "exact")
    [a, b] = check_expectations(GOOD, [MaxRounds(2), {"max_rounds": 1}])
    assert a.passed and not b.passed


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"tool_caled": "x"}, "q.expect.0: unknown expectation kind 'tool_caled' (known: "),
        ({"max_rounds": -1}, "q.expect.0.max_rounds: limit: Input should be greater than"),
        ({"tool_sequence": {"tools": ["a"], "mode": "sorted"}}, "q.expect.0.tool_sequence: mode"),
        ({"answer_matches": "(unclosed"}, "q.expect.0.answer_matches: pattern: not a regular"),
        ({"tool_arguments": "x"}, "q.expect.0.tool_arguments: needs a mapping"),
        ({"max_rounds": 1, "max_tool_calls": 2}, "q.expect.0: an expectation is a mapping with"),
        ({"stop_reason": "done"}, "q.expect.0.stop_reason: reasons.0: Input should be"),
    ],
)
def test_bad_expectations_are_one_line_errors(raw: Any, message: str) -> None:
    with pytest.raises(DeclarationError) as info:
        parse_expectation(raw, "q.expect.0")
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_bad_measure_declarations_are_one_line_errors() -> None:
    with pytest.raises(DeclarationError, match=r"^measures\.0: units: List should have"):
        parse_measures([{"name": "stock", "units": []}])
    with pytest.raises(DeclarationError, match=r"^measures\.1: measure 'stock' declared twice"):
        parse_measures([{"name": "stock", "units": ["u"]}, {"name": "stock", "units": ["u"]}])
    with pytest.raises(DeclarationError, match=r"^measures\.0: units\.0\..*scale must not be 0"):
        parse_measures([{"name": "stock", "units": [{"name": "u", "scale": 0}]}])
