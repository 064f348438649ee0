"""Bounds and ranges are statements, judged by what they say (issue 31): a bound is grounded only
when it pins a tool value, a range when it contains one and is no wider than its measure allows;
a true bound that pins nothing is vacuous (no grounded value, no fabrication), a bound or range
no tool value satisfies is a fabricated value. The same rule in the weather study and in a
declared stock and price domain, in English and Chinese; the explanation never says "equals".

Expectations are written from the rule (docs/judge.md, "Bounds and ranges"), not from the code:
temperature's plausible range is −90…60 °C, so a range may span 15 °C and a bound sits within
7.5 °C of the value; stock declares none, so for 12 units on hand a range may span 6 units and
a bound sits within 3; the price measure below declares 0…100 EUR (a range of 10 EUR, a bound
within 5 EUR). Beijing's tool values: now 30.9 °C, today's high 31.1 °C and low 20.5 °C.
"""

from __future__ import annotations

import pytest

from toolreplay.evals import MeasureDeclaration, UnitDeclaration, parse_measures
from toolreplay.evals.boundary import DeclarationError
from toolreplay.judging.bounds import AT_LEAST, AT_MOST, bound_of
from toolreplay.judging.failures import FABRICATED_VALUE, NO_MEASUREMENT, classify
from toolreplay.judging.grounding import Target
from toolreplay.judging.measures import declared_vocabulary, plausible
from toolreplay.judging.values import scan
from toolreplay.judging.verdicts import GROUNDED_JUDGE
from toolreplay.judging.vocabulary import default_vocabulary

from .judge_episodes import BEIJING, episode, expect
from .stock_domain import ABC, STOCK, call
from .stock_domain import episode as stock_run

TODAY = expect("temperature", 0, BEIJING)

#: Prices in EUR with other currencies converted (1 USD = 0.9 EUR, 1 GBP = 1.15 EUR) and a
#: declared plausible range of 0…100 EUR.
PRICES = MeasureDeclaration(
    "price",
    (
        UnitDeclaration("EUR", ("euro", "euros", "欧元"), before=("€", "EUR")),
        UnitDeclaration("USD", ("dollars",), before=("$", "USD"), scale=0.9),
        UnitDeclaration("GBP", ("pounds",), before=("£", "GBP"), scale=1.15),
    ),
    words=("price", "costs", "cost", "价格", "售价"),
    fields=("$.price.amount",),
    entity=("sku",),
    plausible={"price": (0.0, 100.0)},
)
PRICE_Q = Target("price", None, (), (PRICES,))
STOCK_Q = Target("stock", None, (), (STOCK,))


def _stock(answer: str):  # ABC-1: 12 on hand
    return stock_run([((ABC,), ({"sku": "ABC-1", "on_hand": 12},), None)], answer)


def _price(answer: str):  # ABC-1 costs €12.50
    lookup = call("c1", "get_price", sku="ABC-1")
    return stock_run(
        [((lookup,), ({"sku": "ABC-1", "price": {"amount": 12.5, "currency": "EUR"}},), None)],
        answer,
        question="What does ABC-1 cost?",
    )


def _weather(answer: str):
    return episode(answer, "beijing")


DOMAINS = {"weather": (_weather, TODAY), "stock": (_stock, STOCK_Q), "price": (_price, PRICE_Q)}


def _judged(domain: str, answer: str):
    build, question = DOMAINS[domain]
    ep = build(answer)
    return GROUNDED_JUDGE.judge_episode(ep, question), classify(ep, GROUNDED_JUDGE, question)


VACUOUS = [
    ("weather", "北京今天最高温度在 0°C 以上"),  # the example
    ("weather", "Beijing stays below 40°C today."),
    ("weather", "北京今天气温不会低于 10 度。"),  # at least 10 (negated 低于)
    ("weather", "Beijing won't drop below 0°C today."),
    ("weather", "Beijing will be between 0 and 40°C today."),  # a range 40 °C wide
    ("weather", "北京今天 0 到 40 度之间。"),
    ("stock", "ABC-1 has more than 0 units on hand."),
    ("stock", "ABC-1 has fewer than 1000 units on hand."),  # failed as a fabrication before
    ("stock", "ABC-1 库存超过 0 件。"),
    ("stock", "ABC-1 库存不到 1000 件。"),
    ("stock", "ABC-1 has between 1 and 100 units on hand."),
    # just past the allowed width: 8.1 °C off (7.5 allowed); 4 units off (3); 7 units wide (6)
    ("weather", "Beijing's high today is above 23°C."),
    ("stock", "ABC-1 has more than 8 units on hand."),
    ("stock", "ABC-1 has between 8 and 15 units on hand."),
    ("price", "ABC-1 costs more than €1."),
    ("price", "ABC-1 costs under £1000."),
    ("price", "ABC-1 的价格低于 1000 欧元。"),
]


@pytest.mark.parametrize("domain, answer", VACUOUS)
def test_a_bound_or_range_that_pins_nothing_is_no_grounded_value(domain: str, answer: str) -> None:
    verdict, labels = _judged(domain, answer)
    assert not verdict.passed, verdict.explanation
    assert "says nothing a tool value pins down" in verdict.explanation or (
        "too wide to say anything a tool value pins down" in verdict.explanation
    ), verdict.explanation
    assert "equals" not in verdict.explanation
    assert [f.mode for f in labels] == [NO_MEASUREMENT], [f.explanation for f in labels]
    assert "pins down" in labels[0].explanation


def test_a_vacuous_bound_says_what_it_is_true_of() -> None:
    verdict, _ = _judged("weather", "北京今天最高温度在 0°C 以上")
    assert verdict.explanation.startswith(
        "states ≥ 0°C: true of 31.1°C at $.daily[0].temperature_2m_max of tool message 2 "
        "(北京 (北京市), today), but says nothing a tool value pins down"
    ), verdict.explanation
    [check] = verdict.checks
    assert check.vacuous and not check.grounded and check.bound == AT_LEAST


GROUNDED = [
    ("weather", "北京今天最高超过 30 度。", "states > 30 度: true of 31.1°C"),
    ("weather", "Beijing's high today is just over 30°C.", "states > 30°C: true of 31.1°C"),
    ("weather", "Beijing's high today is above 24°C.", "states > 24°C: true of 31.1°C"),  # 7.1 off
    ("weather", "Beijing stays below 32°C today.", "states < 32°C: true of"),
    ("weather", "北京今天最高不会超过 32 度。", "states ≤ 32 度: true of 31.1°C"),
    ("weather", "北京今天最低不低于 20 度。", "states ≥ 20 度: true of 20.5°C"),
    ("weather", "北京今天 25 到 35 度之间。", "states 25–35 度: contains"),
    ("weather", "Beijing is between 25 and 35°C today.", "states 25–35°C: contains"),
    ("weather", "Beijing: 25–35°C today.", "states 25–35°C: contains"),
    ("weather", "北京今天气温介于 25 和 35 度之间。", "states 25–35 度: contains"),
    ("stock", "ABC-1 has more than 10 units on hand.", "states > 10 units: true of 12 units"),
    ("stock", "ABC-1 库存不到 15 件。", "states < 15 件: true of 12 units"),
    ("stock", "ABC-1 has between 10 and 14 units on hand.", "states 10–14 units: contains"),
    ("price", "ABC-1 costs under €15.", "states < €15: true of 12.5 EUR"),
    ("price", "ABC-1 costs between €10 and €15.", "states €10–€15: contains 12.5 EUR"),
]


@pytest.mark.parametrize("domain, answer, said", GROUNDED)
def test_a_bound_or_range_that_pins_a_tool_value_is_grounded(
    domain: str, answer: str, said: str
) -> None:
    verdict, labels = _judged(domain, answer)
    assert verdict.passed, verdict.explanation
    assert verdict.explanation.startswith(said), verdict.explanation
    assert "equals" not in verdict.explanation
    assert labels == ()


FALSE = [
    ("weather", "北京今天最高超过 35℃。"),
    ("weather", "Beijing won't go above 25°C today."),
    ("weather", "北京今天 35 到 40 度。"),  # a range that holds no tool value
    ("weather", "Beijing: between 35 and 40°C today."),
    ("stock", "ABC-1 has more than 20 units on hand."),
    ("stock", "ABC-1 has 100 to 200 units on hand."),
    ("price", "ABC-1 costs over €20."),
]


@pytest.mark.parametrize("domain, answer", FALSE)
def test_a_bound_or_range_no_tool_value_satisfies_is_fabricated(domain: str, answer: str) -> None:
    verdict, labels = _judged(domain, answer)
    assert not verdict.passed and verdict.explanation.startswith("fabricated value: ")
    assert "equals" not in verdict.explanation
    assert labels and {f.mode for f in labels} == {FABRICATED_VALUE}


def test_a_price_in_an_undeclared_currency_beside_a_vacuous_bound() -> None:
    """The issue's "250 USD is more than €1": with EUR and cents declared (no USD), 250 USD is
    no value and "more than €1" pins nothing; with USD declared, 250 USD is a fabricated price."""
    from .stock_domain import PRICE

    answer = "250 USD is more than €1."
    ep = _price(answer)
    eur_only = Target("price", None, (), (PRICE,))
    verdict = GROUNDED_JUDGE.judge_episode(ep, eur_only)
    [check] = verdict.checks
    assert not verdict.passed and check.vacuous and not check.grounded
    assert check.reason.startswith("states > €1: true of 12.5 EUR")
    assert [f.mode for f in classify(ep, GROUNDED_JUDGE, eur_only)] == [NO_MEASUREMENT]
    assert FABRICATED_VALUE in [f.mode for f in classify(ep, GROUNDED_JUDGE, PRICE_Q)]


def test_a_days_low_and_high_stay_two_values() -> None:
    verdict, _ = _judged("weather", "北京今天 20.5–31.1°C，现在 30.9°C。")
    assert verdict.passed and "equals" in verdict.explanation
    assert all(c.bound is None for c in verdict.checks)
    # one end a tool value, the other invented: a fabricated value, not a range that holds one
    verdict, labels = _judged("weather", "北京今天 20.5–29.5°C。")
    assert not verdict.passed and [f.mode for f in labels] == [FABRICATED_VALUE]


def test_a_vacuous_bound_beside_a_grounded_value_is_no_fabrication() -> None:
    verdict, labels = _judged("weather", "北京现在 30.9°C，肯定在 0°C 以上。")
    assert verdict.passed and labels == ()
    assert verdict.explanation.startswith("states 30.9°C, which equals 30.9°C")


@pytest.mark.parametrize(
    "text, bound",
    [
        ("above 30°C", AT_LEAST), ("30°C 以上", AT_LEAST), ("超过 30°C", AT_LEAST),
        ("at least 30°C", AT_LEAST), ("no less than 30°C", AT_LEAST), ("不低于 30°C", AT_LEAST),
        ("never drops below 30°C", AT_LEAST), ("30°C 出头", AT_LEAST),
        ("below 30°C", AT_MOST), ("30°C 以下", AT_MOST), ("不到 30°C", AT_MOST),
        ("at most 30°C", AT_MOST), ("no more than 30°C", AT_MOST), ("不超过 30°C", AT_MOST),
        ("won't exceed 30°C", AT_MOST), ("fewer than 30°C", AT_MOST), ("最多 30°C", AT_MOST),
        ("30°C 以内", AT_MOST), ("30°C", None), ("高温 30°C", None), ("up to 30°C", None),
    ],
)  # fmt: skip
def test_bound_words_in_both_languages(text: str, bound: str | None) -> None:
    [v] = scan(text).values
    assert bound_of(text, v) == bound


def test_ranges_are_read_as_ranges_and_lists_as_lists() -> None:
    assert scan("between 25 and 35°C").ranges == ((0, 1),)
    assert scan("25 和 35 度之间").ranges == ((0, 1),)
    assert scan("25–35°C").ranges == ((0, 1),) and scan("25 到 35 度").ranges == ((0, 1),)
    read = scan("31.1 和 28.6°C")  # a list pairs values with places: no range
    assert read.ranges == () and read.lists == ((0, 1),)


def test_each_measure_declares_its_plausible_range() -> None:
    weather = default_vocabulary()
    assert plausible(weather, "temperature") == (-90.0, 60.0)
    assert plausible(weather, "percent") == (0.0, 100.0)
    stock = declared_vocabulary(weather, (STOCK,))
    assert plausible(stock, "stock") == (float("-inf"), float("inf"))  # none declared
    assert plausible(stock, "temperature") == (-90.0, 60.0)  # the study's are kept
    [yaml] = parse_measures([{"name": "price", "units": ["EUR"], "plausible": [0, 100]}])
    assert yaml.plausible == {"price": (0.0, 100.0)}
    with pytest.raises(DeclarationError, match="plausible"):
        parse_measures([{"name": "price", "units": ["EUR"], "plausible": [100, 0]}])


def test_a_declared_plausible_range_sets_what_a_bound_may_leave_open() -> None:
    """The same answer: with 0…100 EUR a bound within 5 EUR pins the price, with 0…20 EUR
    (a tenth: 2 EUR, a bound within 1 EUR) it does not."""
    answer = "ABC-1 costs under €15."
    narrow = Target("price", None, (), (MeasureDeclaration(
        PRICES.name, PRICES.units, PRICES.words, PRICES.fields, PRICES.entity,
        plausible={"price": (0.0, 20.0)},
    ),))  # fmt: skip
    assert GROUNDED_JUDGE.judge_episode(_price(answer), PRICE_Q).passed
    verdict = GROUNDED_JUDGE.judge_episode(_price(answer), narrow)
    assert not verdict.passed and "within 1 EUR" in verdict.explanation


# ---- outside material -----------------------------------------------------------------------

#: A travel agent's final answer (github.com/GuruGuru19/Travel-Agent, ExampleConversations.md,
#: conversation 2, quoted as test data) after a forecast tool returned Nice's Saturday: clear,
#: 13.9–24.2 °C, now 19.5 °C. Rebuilt here in get_weather's shape with Saturday as day 0.
NICE_ANSWER = (
    "The weather for Saturday in Nice will be clear skies with temperatures ranging from 13.9°C "
    "to 24.2°C. This suggests a mild, sunny day ideal for a beach event.\nPack light clothing "
    "and consider sunscreen for prolonged sun exposure."
)
NICE_RESULT = {
    "place": {"name": "Nice", "country": "France", "admin1": "Provence-Alpes-Côte d'Azur",
              "latitude": 43.70313, "longitude": 7.26608, "feature_code": "PPLA2"},
    "current": {"temperature_2m": {"value": 19.5, "unit": "°C"}},
    "daily": [{"date": "2025-06-14", "temperature_2m_max": {"value": 24.2, "unit": "°C"},
               "temperature_2m_min": {"value": 13.9, "unit": "°C"}}],
}  # fmt: skip


def _nice(answer: str):
    from toolreplay.judging.grounding import PlaceSpec

    lookup = call("c1", "get_weather", city="Nice")
    ep = stock_run([((lookup,), (NICE_RESULT,), None)], answer, question="Nice on Saturday?")
    return ep, Target("temperature", 0, (PlaceSpec("Nice", "Provence-Alpes-Côte d'Azur"),))


@pytest.mark.parametrize(
    "answer, passed, how",
    [
        (NICE_ANSWER, True, "equals"),  # a day's low and high: two values, as before
        (NICE_ANSWER.replace("13.9°C", "15°C").replace("24.2°C", "25°C"), True, "contains"),
        (NICE_ANSWER.replace("13.9°C", "5°C").replace("24.2°C", "35°C"), False, "too wide"),
        (NICE_ANSWER.replace("13.9°C", "26°C").replace("24.2°C", "30°C"), False, "fabricated"),
    ],
)
def test_a_real_answers_range_and_its_variants(answer: str, passed: bool, how: str) -> None:
    ep, question = _nice(answer)
    verdict = GROUNDED_JUDGE.judge_episode(ep, question)
    assert verdict.passed is passed and how in verdict.explanation, verdict.explanation


#: Texts written about real weather in public repositories' test data (found by their text): a
#: heat warning's "预计午后最高气温超过三十七度。" (a bound in Chinese numerals) and a case report's
#: "最高气温介于35-46.1℃之间。" (a range with both 介于 and 之间). Judged here against a rebuilt
#: result whose high is 38.2 °C (then 36.0 °C).
ALERT_BOUND = "预计午后最高气温超过三十七度。"
REPORT_RANGE = "最高气温介于35-46.1℃之间。"


def _hot(high: float):
    from toolreplay.judging.grounding import PlaceSpec

    result = {
        "place": {"name": "乌鲁木齐", "country": "中国", "admin1": "新疆维吾尔自治区",
                  "latitude": 43.80096, "longitude": 87.60046, "feature_code": "PPLA"},
        "current": {"temperature_2m": {"value": 33.0, "unit": "°C"}},
        "daily": [{"date": "2026-07-15", "temperature_2m_max": {"value": high, "unit": "°C"},
                   "temperature_2m_min": {"value": 24.0, "unit": "°C"}}],
    }  # fmt: skip
    lookup = call("c1", "get_weather", city="乌鲁木齐")
    question = Target("temperature", 0, (PlaceSpec("乌鲁木齐", "新疆维吾尔自治区"),))
    return lambda answer: (stock_run([((lookup,), (result,), None)], answer), question)


@pytest.mark.parametrize(
    "answer, high, passed, said",
    [
        (ALERT_BOUND, 38.2, True, "states > 三十七度: true of 38.2°C"),
        (ALERT_BOUND, 36.0, False, "fabricated value: no tool value is at least 三十七度"),
        (REPORT_RANGE, 38.2, True, "states 35–46.1℃: contains 38.2°C"),
        (REPORT_RANGE, 33.0, False, "fabricated value: no tool value lies within 35–46.1℃"),
    ],
)
def test_bounds_and_ranges_written_about_real_weather(
    answer: str, high: float, passed: bool, said: str
) -> None:
    ep, question = _hot(high)(answer)
    verdict = GROUNDED_JUDGE.judge_episode(ep, question)
    assert verdict.passed is passed and verdict.explanation.startswith(said), verdict.explanation
