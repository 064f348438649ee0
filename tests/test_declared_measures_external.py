"""The declared-measure judge on answers real models wrote, from public transcripts and cassettes
(quoted as test data; the episodes around them rebuilt as the hosts build them).

- Hermes-2-Pro answering "current stock price of Tesla" after ``get_current_stock_price(symbol=
  "TSLA")`` returned the float 177.67 (NousResearch's Hermes function-calling runner, logged in
  github.com/Tuanshu/Hermes-Function-Calling, ``seed_42_test.md``).
- claude-sonnet-4-5 asked for AAPL's stock price and the USD→EUR exchange rate with no such tool
  at hand (pydantic-ai's ``tests/cassettes/test_tool_search/test_tool_search_eval[anthropic]
  .yaml``): it says so and offers alternatives, stating no value.
"""

from __future__ import annotations

import pytest

from toolreplay.evals import MeasureDeclaration, UnitDeclaration
from toolreplay.judging.expectations import check_expectations
from toolreplay.judging.failures import FABRICATED_VALUE, NO_MEASUREMENT, classify
from toolreplay.judging.grounding import Target
from toolreplay.judging.verdicts import GROUNDED_JUDGE

from .stock_domain import call, episode

#: A share price in US dollars: "$177.67", "177.67 USD"; a bare number returned by the tool is
#: one ("$": the whole result).
SHARE_PRICE = MeasureDeclaration(
    "share_price",
    (UnitDeclaration("USD", ("dollars", "US$"), before=("$", "US$", "USD")),),
    words=("price", "stock", "trading", "shares"),
    fields=("$", "price", "current_price"),
)

HERMES_ANSWERS = (
    "After executing the corrected function call, we received the current stock price of Tesla "
    "(TSLA). \n\nThe current stock price of Tesla (TSLA) is $177.67.\n\nWe can now conclude our "
    "analysis and summarize the results. The user query asked for the current stock price of "
    "Tesla (TSLA), which we were able to obtain using the `get_current_stock_price` function. "
    "The stock price returned for TSLA is $177.67. This completes the task, and no further "
    "function calls are necessary.",
    "The current stock price of Tesla (TSLA) is $177.67. This information is obtained directly "
    "from the function call made, which returned a float value of 177.67. It's the result from "
    'the `get_current_stock_price` function where we passed the stock symbol "TSLA" as an '
    "argument. With this information, I have completed the task for this query related to stock "
    "prices. No further function calls are needed here because the query has been answered.",
)

TSLA = Target("share_price", None, (), (SHARE_PRICE,))


def _hermes(answer: str) -> object:
    lookup = call("call_0", "get_current_stock_price", symbol="TSLA")
    return episode(
        [((lookup,), (177.67,), None)],  # type: ignore[arg-type]  # the tool returned a float
        answer,
        question="What is the current stock price of Tesla (TSLA)?",
    )


@pytest.mark.parametrize("answer", HERMES_ANSWERS, ids=["answer-1", "answer-2"])
def test_hermes_stock_price_answers_are_grounded(answer: str) -> None:
    ep = _hermes(answer)
    verdict = GROUNDED_JUDGE.judge_episode(ep, TSLA)  # type: ignore[arg-type]
    assert verdict.passed, verdict.explanation
    assert verdict.explanation == "states $177.67, which equals 177.67 USD at $ of tool message 2"
    assert classify(ep, GROUNDED_JUDGE, TSLA) == ()  # type: ignore[arg-type]
    results = check_expectations(
        ep,  # type: ignore[arg-type]
        [{"strict_grounding": ["share_price"]}, {"tool_arguments": {"tool":
         "get_current_stock_price", "equals": {"symbol": "TSLA"}}}],
        TSLA,
    )  # fmt: skip
    assert [r.passed for r in results] == [True, True]


def test_a_changed_digit_in_a_hermes_answer_is_fabricated() -> None:
    ep = _hermes(HERMES_ANSWERS[1].replace("$177.67", "$178.67"))
    labels = classify(ep, GROUNDED_JUDGE, TSLA)  # type: ignore[arg-type]
    assert [f.mode for f in labels] == [FABRICATED_VALUE]
    assert labels[0].evidence.text == "$178.67"


CLAUDE_NO_TOOL = {
    "What is the current stock price for AAPL?": (
        "I don't have access to a tool that can retrieve current stock prices. The available "
        "tools I have are:\n\n1. **get_weather** - for checking weather information for cities\n"
        "2. **tool_search_tool_bm25** - for searching through available tools\n\nTo get current "
        "stock price information for AAPL (Apple Inc.), you would need to:\n- Use a financial data "
        "service or API (like Yahoo Finance, Alpha Vantage, or similar)\n- Check a financial "
        "website or stock market platform\n- Use a trading app or brokerage platform\n\nIs there "
        "anything else I can help you with using the available tools?"
    ),
    "What is the current exchange rate from USD to EUR?": (
        "I don't have access to a tool that can retrieve current exchange rates. The only tools "
        "available to me are:\n1. A weather lookup tool for cities\n2. A tool search function\n\n"
        "To get the current USD to EUR exchange rate, I recommend:\n- Checking a financial website "
        "like XE.com, Bloomberg, or Reuters\n- Using your bank's currency converter\n- Searching "
        '"USD to EUR" in a search engine for real-time rates\n\nExchange rates fluctuate '
        "constantly throughout the day based on market conditions, so it's best to check a live "
        "source for the most accurate information."
    ),
}


@pytest.mark.parametrize("question", list(CLAUDE_NO_TOOL))
def test_claude_saying_it_has_no_tool_states_no_value(question: str) -> None:
    ep = episode([], CLAUDE_NO_TOOL[question], question=question)
    [label] = classify(ep, GROUNDED_JUDGE, TSLA)
    assert label.mode == NO_MEASUREMENT  # list numbers and "USD to EUR" are no values
    [strict] = check_expectations(ep, [{"strict_grounding": True}], TSLA)
    assert strict.passed and strict.explanation == "the answer states no value with a unit"
    [used] = check_expectations(ep, [{"tool_called": "stock_lookup"}])
    assert (
        not used.passed
        and used.explanation == "stock_lookup was never called (calls: no tool call)"
    )


@pytest.mark.parametrize(
    ("text", "promise"),
    [
        ("To get the rate, I recommend:\n- Checking a financial website\n- Using your bank", None),
        ("You could try:\n1. Checking XE.com\n2. Searching online", None),
        ("I'll do the following:\n- Checking 宁德市 again", "- Checking 宁德市 again"),
        ("- Checking the warehouse now", "- Checking the warehouse now"),
    ],
)
def test_a_list_of_advice_to_the_user_is_no_promise(text: str, promise: str | None) -> None:
    from toolreplay.judging.intent import find_promise

    span = find_promise(text)
    assert (text[span[0] : span[1]] if span else None) == promise
