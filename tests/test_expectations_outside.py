# ruff: noqa: E501  (the tables of specs and answers are kept one case a line)
"""Expectations and declared measures on specs and answers written to break them: odd specs are
refused in one line or judged as written; numbers written the ways people write them (no-break
space groups, 1.234,5, decimal commas, units before the number, negatives, percent, a declared
conversion) are read as the value they state, and strict grounding still catches an invented
one. Expected values follow the specification in docs/expectations.md, not this code's output."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolreplay.evals import DeclarationError, parse_expectation, parse_measures
from toolreplay.judging.expectations import check_expectations
from toolreplay.judging.trajectory import subset_mismatch

from .stock_domain import call, episode

# ---- specs refused in one line ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ({"answer_contains": ""}, "expect.answer_contains: texts.0: String should have at least 1 character"),
        ({"answer_not_contains": ["ZZZ-9", ""]}, "expect.answer_not_contains: texts.1: String should have at least 1 character"),
        ({"max_rounds": True}, "expect.max_rounds: limit: a whole number, not true"),
        ({"max_tool_calls": False}, "expect.max_tool_calls: limit: a whole number, not false"),
        ({"tool_called": {"tool": "t", "at_least": True}}, "expect.tool_called: at_least: a whole number, not true"),
        ({"strict_grounding": []}, "expect.strict_grounding: an empty list names no measure"),
        ({"tool_sequence": []}, "expect.tool_sequence: tools: List should have at least 1 item"),
        ({"answer_matches": "(unclosed"}, "expect.answer_matches: pattern: not a regular expression"),
        ({"tool_arguments": {"tool": "t", "matches": {"sku": "[z-a]"}}},
         "expect.tool_arguments: matches: sku: not a regular expression (bad character range"),
        ({"tool_arguments": {"tool": "t", "tolerance": "close"}}, "expect.tool_arguments: tolerance: Input should be a valid number"),
    ],
)  # fmt: skip
def test_odd_specs_are_refused_in_one_line(spec: dict[str, Any], error: str) -> None:
    with pytest.raises(DeclarationError) as caught:
        parse_expectation(spec)
    assert str(caught.value).startswith(error)
    assert "\n" not in str(caught.value)


# ---- trajectory on odd episodes --------------------------------------------------------------

UNICODE = call("u1", "查询库存", sku="ABC-1")
SEARCH = call("s1", "search", q={"filters": [{"k": "a", "v": [1, 2.0001]}], "limit": 10})


def _one(ep: Any, spec: dict[str, Any]) -> tuple[bool, str]:
    [r] = check_expectations(ep, [spec])
    return r.passed, r.explanation


def test_unicode_tool_names() -> None:
    ep = episode([((UNICODE,), ({"sku": "ABC-1", "on_hand": 12},), None)], "ABC-1: 12 件")
    assert _one(ep, {"tool_called": "查询库存"}) == (True, "查询库存 was called once (round 1)")
    assert _one(ep, {"tool_not_called": "查询价格"})[0]
    assert _one(ep, {"tool_sequence": ["查询库存"]})[0]


def test_superset_with_a_listed_tool_called_zero_times_fails_naming_it() -> None:
    ep = episode([((UNICODE,), ({"sku": "ABC-1", "on_hand": 12},), None)], "ABC-1: 12 件")
    passed, why = _one(ep, {"tool_sequence": {"tools": ["查询库存", "lookup"], "mode": "superset"}})
    assert not passed and "missing lookup" in why
    # with no call at all, every listed tool is missing
    none = episode([], "I don't know.")
    passed, why = _one(none, {"tool_sequence": {"tools": ["lookup"], "mode": "superset"}})
    assert not passed and "missing lookup" in why
    # subset passes on no call at all: every call made (none) is listed
    assert _one(none, {"tool_sequence": {"tools": ["lookup"], "mode": "subset"}})[0]


def test_json_subset_with_nested_lists_and_tolerance() -> None:
    ep = episode([((SEARCH,), ({"hits": 1},), None)], "done")
    nested = {"q": {"filters": [{"v": [1, 2]}]}}
    assert _one(ep, {"tool_arguments": {"tool": "search", "equals": nested, "tolerance": 0.01}})[0]
    passed, why = _one(ep, {"tool_arguments": {"tool": "search", "equals": nested}})
    assert not passed and why.endswith("q.filters[0].v[1] is 2.0001, expected 2")
    # a list of another length: shown as JSON both sides
    assert subset_mismatch({"tags": ["a"]}, {"tags": ["a", "b"]}) == (
        'tags is ["a", "b"], expected ["a"]'
    )
    # tolerance is for numbers: a number written as a string is not one
    passed, why = _one(
        ep, {"tool_arguments": {"tool": "search", "equals": {"q": {"limit": "10"}}, "tolerance": 5}}
    )
    assert not passed and why.endswith('q.limit is 10, expected "10"')


def test_a_regex_on_a_field_that_is_no_string_says_so() -> None:
    ep = episode([((SEARCH,), ({"hits": 1},), None)], "done")
    passed, why = _one(ep, {"tool_arguments": {"tool": "search", "matches": {"q.limit": "^10$"}}})
    assert not passed and why.endswith("q.limit is 10, not a string to match /^10$/")
    assert _one(ep, {"tool_arguments": {"tool": "search", "matches": {"q.filters.0.k": "^a$"}}})[0]


# ---- declared measures: numbers as people write them --------------------------------------------

MEASURES = parse_measures([
    {"name": "stock", "units": [{"name": "units", "spellings": ["unit", "pcs"]}],
     "words": ["on hand", "in stock"], "fields": ["on_hand"], "entity": "sku"},
    {"name": "price",
     "units": [{"name": "EUR", "spellings": ["euro", "euros", "€"], "before": ["€", "EUR"]},
               {"name": "cents", "spellings": ["cent"], "scale": 0.01},
               {"name": "USD", "spellings": ["dollars"], "before": ["$", "USD"], "scale": 0.5}],
     "words": ["price", "costs", "cost"], "fields": ["$.price"], "entity": "sku"},
    {"name": "change", "units": [{"name": "%", "spellings": ["percent"]}],
     "words": ["change", "changed"], "fields": ["pct"]},
    {"name": "heat", "units": [{"name": "°C"}, {"name": "°F", "scale": 5 / 9, "offset": -160 / 9}],
     "words": ["temperature"], "fields": ["t"]},
])  # fmt: skip


def _judged(result: Any, answer: str, measure: str) -> tuple[bool, bool, str]:
    """(grounded passed, strict_grounding passed, strict's explanation)."""
    lookup = call("c1", "lookup", sku="ABC-1")  # the tool message is json.dumps(result)
    ep = episode([((lookup,), (result,), None)], answer, question="What about ABC-1?")
    grounded, strict = check_expectations(
        ep, [{"grounded": measure}, {"strict_grounding": True}], question=measure, measures=MEASURES
    )
    return grounded.passed, strict.passed, strict.explanation


GROUNDED = [
    # (tool result, answer, measure): the answer states what the result holds
    ({"sku": "ABC-1", "on_hand": 1234}, "ABC-1: 1,234 units on hand.", "stock"),
    ({"sku": "ABC-1", "on_hand": 1234}, "ABC-1: 1\u00a0234 units on hand.", "stock"),
    ({"sku": "ABC-1", "on_hand": 1234}, "ABC-1 : 1\u202f234 units on hand.", "stock"),
    ({"sku": "ABC-1", "on_hand": 1234567}, "ABC-1: 1.234.567 units on hand.", "stock"),
    ({"sku": "ABC-1", "on_hand": -3}, "ABC-1: -3 units on hand (backordered).", "stock"),
    ({"sku": "ABC-1", "on_hand": -3}, "ABC-1: \u22123 units on hand (backordered).", "stock"),
    ({"sku": "ABC-1", "price": 1234.5}, "ABC-1 costs 1.234,5 EUR.", "price"),
    ({"sku": "ABC-1", "price": 1234.5}, "ABC-1 costs 1\u202f234,50\u00a0€.", "price"),
    ({"sku": "ABC-1", "price": 12.5}, "ABC-1 costs 12,50 €.", "price"),
    ({"sku": "ABC-1", "price": 12}, "ABC-1 costs €12.", "price"),
    ({"sku": "ABC-1", "price": 12}, "ABC-1 costs EUR 12.", "price"),
    ({"sku": "ABC-1", "price": 12}, "ABC-1 costs $24.", "price"),  # declared: 1 USD = 0.5 EUR
    ({"sku": "ABC-1", "price": 12}, "ABC-1 costs 1200 cents.", "price"),
    ({"sku": "ABC-1", "price": {"value": 1250, "unit": "cents"}}, "ABC-1 costs €12.50.", "price"),
    ({"sku": "ABC-1", "price": -12}, "The ABC-1 price change is -€12.", "price"),
    ({"sku": "ABC-1", "price": -12}, "The ABC-1 price change is \u2212$24.", "price"),
    ({"pct": -5}, "The price changed -5%.", "change"),
    ({"t": 20}, "The temperature is 68 °F.", "heat"),
    # a value in the text of a string field, and JSON serialized into a string field (the
    # shape of the tool message in the Azure recording of tests/test_wire_outside.py)
    ({"sku": "ABC-1", "note": "Price: 1250 cents"}, "ABC-1 costs €12.50.", "price"),
    ({"SerializedResult": json.dumps({"sku": "ABC-1", "on_hand": 12}), "IsError": False},
     "ABC-1: 12 units on hand.", "stock"),
    # a tool message that is a JSON string (a framework that json.dumps a tool's text)
    ("ABC-1: 12 units on hand", "ABC-1 has 12 units on hand.", "stock"),
]  # fmt: skip


@pytest.mark.parametrize(("result", "answer", "measure"), GROUNDED)
def test_a_value_written_another_way_is_grounded(result: Any, answer: str, measure: str) -> None:
    grounded, strict, why = _judged(result, answer, measure)
    assert (grounded, strict) == (True, True), why


FABRICATED = [
    # (tool result, answer, measure, the invented value as the explanation quotes it)
    ({"sku": "ABC-1", "on_hand": 12}, "ABC-1: 12 units on hand; ZZZ-9: 99 units.", "stock", "99 units"),
    ({"sku": "ABC-1", "on_hand": 1234}, "ABC-1: 1,235 units on hand.", "stock", "1,235 units"),
    ({"sku": "ABC-1", "on_hand": 3}, "ABC-1: -3 units on hand.", "stock", "-3 units"),
    ({"sku": "ABC-1", "price": 12}, "ABC-1 costs $5.", "price", "$5"),
    ({"sku": "ABC-1", "price": 12}, "ABC-1 costs -€12.", "price", "-€12"),  # the sign is read
    ({"sku": "ABC-1", "price": 12.5}, "ABC-1 costs 13,50 €.", "price", "13,50 €"),
    ({"sku": "ABC-1", "price": 1234.5}, "ABC-1 costs 1.234,9 EUR.", "price", "1.234,9 EUR"),
    ({"pct": -5}, "The price changed 5%.", "change", "5%"),
    ({"t": 20}, "The temperature is 70 °F.", "heat", "70 °F"),
    ({"sku": "ABC-1", "note": "Price: 1250 cents"}, "ABC-1 costs €13.50.", "price", "€13.50"),
    ({"SerializedResult": json.dumps({"sku": "ABC-1", "on_hand": 12}), "IsError": False},
     "ABC-1: 21 units on hand.", "stock", "21 units"),
]  # fmt: skip


@pytest.mark.parametrize(("result", "answer", "measure", "invented"), FABRICATED)
def test_an_invented_value_fails_strict_grounding(
    result: Any, answer: str, measure: str, invented: str
) -> None:
    _, strict, why = _judged(result, answer, measure)
    assert not strict
    assert why.startswith(f"fabricated value: no tool result holds {invented};"), why


def test_a_lone_point_group_stays_a_decimal() -> None:
    """``1.234`` is one point two three four (English), never 1234: stated for 1234 on hand it
    is not grounded, and that is named, not passed."""
    grounded, strict, why = _judged(
        {"sku": "ABC-1", "on_hand": 1234}, "ABC-1: 1.234 units on hand.", "stock"
    )
    assert (grounded, strict) == (False, False)
    assert "no tool result holds 1.234 units" in why


def test_a_field_in_another_unit_than_the_first_is_declared_on_that_unit() -> None:
    """A tool returning ``price_cents``: declared under the ``cents`` unit, 1250 is €12.50; an
    answer of €1250 (the cents read as euros) is the invented value."""
    [price] = parse_measures([
        {"name": "price", "units": [
            {"name": "EUR", "spellings": ["€"], "before": ["€"]},
            {"name": "cents", "scale": 0.01, "fields": ["price_cents"]}],
         "words": ["costs"], "fields": ["$.price"], "entity": "sku"},
    ])  # fmt: skip
    assert price.units[1].fields == ("price_cents",)
    lookup = call("c1", "lookup", sku="ABC-1")
    results = []
    for answer in ("ABC-1 costs €12.50.", "ABC-1 costs 1250 cents.", "ABC-1 costs €1250."):
        ep = episode([((lookup,), ({"sku": "ABC-1", "price_cents": 1250},), None)], answer)
        [r] = check_expectations(ep, [{"strict_grounding": ["price"]}], measures=[price])
        results.append((r.passed, r.explanation))
    assert [passed for passed, _ in results] == [True, True, False]
    assert results[2][1] == (
        "fabricated value: no tool result holds €1250; the nearest price is 1250 cents at "
        "$.price_cents of tool message 2 (ABC-1)"
    )
