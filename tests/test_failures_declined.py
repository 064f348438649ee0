"""What ``declined`` is and is not: a tool result that holds nothing is nothing to pass over
(``{"results": []}``, "0 rows"); a negative finding ("I couldn't find any errors") or a
partial answer ("I don't know the price, but it's in stock") is no decline; "I'm unable
to…" is one, and so is a decline that sends the user elsewhere ("Please check
weather.com"). Also the promises an em dash used to hide from the gerund-subject rule."""

from __future__ import annotations

import pytest

from toolreplay.judging.answered import find_decline, holds_content
from toolreplay.judging.assessment import assess
from toolreplay.judging.failures import DECLINED
from toolreplay.judging.intent import find_promise
from toolreplay.wire.episode import ToolResult

from .stock_domain import call, stock_episode
from .test_failures_answered import (
    STOCK_ASKED,
    _any,
    _with_results,
    modes,
)
from .test_failures_answered import (
    test_a_decline_after_a_tool_result_is_declined as _is_declined,
)

SEARCH = call("c1", "search_customers", query="Jane Roe")


# ---- a tool result that found nothing --------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "answer"),
    [
        ('{"results": []}', "I couldn't find any customer named Jane Roe."),
        ('{"customers": [], "total": 0}', "There are no records of that customer."),
        ('{"status": "not_found"}', "I couldn't find that order."),
        ("0 rows", "There is no data for that period."),
        ("No matching documents.", "I couldn't find any documents on that topic."),
        # beyond the examples: an echoed query, paging, a Chinese answer, a flag
        ('{"query": "Jane Roe", "results": [], "page": 1}', "I'm sorry, I don't know."),
        ('{"found": false, "items": []}', "抱歉，我无法提供这些信息。"),
        ("Customer not found.", "I don't have that information."),
        ('No results found for "Jane Roe".', "I'm unable to help with that."),
    ],
)
def test_a_result_that_found_nothing_is_nothing_to_pass_over(content: str, answer: str) -> None:
    assert not holds_content(content)
    assert DECLINED not in modes(_with_results(answer, ToolResult(SEARCH, content)), _any())


@pytest.mark.parametrize(
    "content",
    ['{"temperature": 0}', '{"count": 3}', '{"city": "Oslo", "alerts": []}', "No rain expected",
     "22", '{"sku": "ABC-1", "on_hand": 0}'],
)
def test_a_result_with_content_is_usable(content: str) -> None:
    assert holds_content(content)
    answer = "I don't have that information."
    assert modes(_with_results(answer, ToolResult(SEARCH, content)), _any()) == [DECLINED]


# ---- a negative finding or a partial answer is no decline ------------------------------------

NOT_DECLINES = [
    "Sorry, I don't know who won. The match was a draw.",
    "I don't know the price, but it's in stock.",
    "I can't confirm the delivery date, but the order was shipped.",
    "抱歉，我无法提供价格，但有库存。",
    "I didn't find any problems with your code.",
    "I don't see any problems.",
    "I couldn't find any errors; everything looks fine.",
    "We don't have ABC-1 in stock at the moment.",
    "No results were found that contradict this.",
    # beyond the examples
    "I wasn't able to find any open orders for that customer.",
    "I'm not sure about XYZ-2, but ABC-1 is in stock.",
    "我不知道具体数量，但是ABC-1有货。",
    "没有找到结果。",
    "There are no records of a delay.",
]


@pytest.mark.parametrize("text", NOT_DECLINES)
def test_a_negative_finding_or_a_partial_answer_is_not_declined(text: str) -> None:
    assert find_decline(text) is None
    assert DECLINED not in modes(stock_episode(text), _any())


# ---- a decline, however phrased -------------------------------------------------------------

DECLINES = [
    "I'm unable to help with that.",
    "I apologize, but I'm unable to assist with that request.",
    "We're unable to provide that information.",
    "I'm not in a position to comment on that.",
    "I cannot provide real-time weather updates. Please check a weather website such as "
    "weather.com for the latest forecast in Paris.",
    "I don't have real-time data. Please check a local weather service.",
    "抱歉，我目前无法获取北京的实时天气数据，请访问中国天气网查询。",
    "我无法确定。",
    "Not sure.",
    # beyond the examples
    "I am not able to look that up.",
    "I’m unable to retrieve that.",
    "I don't know. You can visit the store's website for details.",
    "Sorry, I don't have access to live inventory. For the latest numbers, please contact "
    "the warehouse.",
    "很抱歉，我不知道。建议您查看官方网站。",
    "As an AI, I do not have real-time access to weather data.",
    "No, I don't know.",
]


@pytest.mark.parametrize("text", DECLINES)
def test_a_decline_or_a_decline_with_a_redirect_is_declined(text: str) -> None:
    _is_declined(text)  # the same checks as for the first declines found


# ---- a dash ends the clause whose verb would make an -ing opening a subject -------------------


@pytest.mark.parametrize(
    ("text", "promise"),
    [
        ("Searching for the forecast — this will take a moment.", True),
        ("Looking up the current weather in Paris for you — it should only take a second.", True),
        ("Checking the warehouse now — this could take a minute.", True),
        ("Checking the warehouse now – it may take a minute.", True),
        ("Searching the catalogue now - this will only take a second.", True),
        ("Looking forward to helping you.", False),
        ("Being a monster was easy; getting the s'mores right took finesse.", False),
        ("Finding a balance between them is key.", False),
    ],
)
def test_a_dash_ends_the_gerund_subject_clause(text: str, promise: bool) -> None:
    assert (find_promise(text) is not None) is promise


@pytest.mark.parametrize(
    "text",
    [
        "Searching for the forecast — this will take a moment.",
        "Looking up the current stock for you — it should only take a second.",
        "Checking the warehouse now — this could take a minute.",
    ],
)
def test_an_unkept_dash_promise_fails(text: str) -> None:
    assert not assess(stock_episode(text), _any()).passed
    assert not assess(stock_episode(text), STOCK_ASKED).passed
