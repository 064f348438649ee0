"""Numbers in words are read like digits (issue 31): "seven units on hand", "twenty-one degrees",
"二十一度", "三十点九度" are grounded when a tool value holds them and fabricated values when none
does, in the weather study and in a declared stock domain, in English and Chinese. Values are
written from the languages' number grammar (not from the code): twenty-one is 21, 三十点九 is
30.9 with one decimal written, 一万二千 is 12000; 三四 ("three or four") is no one number.
Beijing's tool values: now 30.9 °C, today's high 31.1 °C and low 20.5 °C; ABC-1: 12 on hand."""

from __future__ import annotations

import pytest

from toolreplay.judging.failures import FABRICATED_VALUE, classify
from toolreplay.judging.grounding import Target
from toolreplay.judging.number_words import chinese_number, english_number, word_number
from toolreplay.judging.values import find_measured_values
from toolreplay.judging.verdicts import GROUNDED_JUDGE

from .judge_episodes import BEIJING, episode, expect
from .stock_domain import ABC, STOCK
from .stock_domain import episode as stock_run

TODAY = expect("temperature", 0, BEIJING)
STOCK_Q = Target("stock", None, (), (STOCK,))


@pytest.mark.parametrize(
    "text, value",
    [
        ("seven", (7, 0)), ("twelve", (12, 0)), ("twenty-one", (21, 0)), ("Twenty One", (21, 0)),
        ("thirty-one", (31, 0)), ("one hundred and five", (105, 0)), ("zero", (0, 0)),
        ("thirty point nine", (30.9, 1)), ("twenty one point zero five", (21.05, 2)),
        ("one two", None),  # two numbers, not one
    ],
)  # fmt: skip
def test_english_number_words(text: str, value: tuple[float, int] | None) -> None:
    assert english_number(text) == value and word_number(text) == value


@pytest.mark.parametrize(
    "text, value",
    [
        ("二十一", (21, 0)), ("三十点九", (30.9, 1)), ("三十點九", (30.9, 1)), ("十", (10, 0)),
        ("一百零五", (105, 0)), ("两千", (2000, 0)), ("一万二千", (12000, 0)), ("〇点五", (0.5, 1)),
        ("三四", None), ("七八", None),  # "three or four": an approximation, not 34
    ],
)  # fmt: skip
def test_chinese_numerals(text: str, value: tuple[float, int] | None) -> None:
    assert chinese_number(text) == value and word_number(text) == value


def test_a_number_in_words_is_a_value_only_with_its_unit() -> None:
    [v] = find_measured_values("I checked one city: Beijing is thirty-one degrees.")
    assert (v.value, v.unit) == (31.0, "degrees")
    assert find_measured_values("北京今天三四度。") == ()  # three or four degrees: no one value
    assert find_measured_values("one of the two cities is warmer") == ()


def _weather(answer: str):
    return episode(answer, "beijing")


def _stock(answer: str):
    return stock_run([((ABC,), ({"sku": "ABC-1", "on_hand": 12},), None)], answer)


RIGHT = [
    (_weather, TODAY, "Beijing is thirty-one degrees today.", "thirty-one degrees", "30.9°C"),
    (_weather, TODAY, "Beijing is twenty-one degrees this morning.", "twenty-one degrees", "20.5"),
    (_weather, TODAY, "Beijing is thirty point nine degrees now.", "thirty point nine", "30.9°C"),
    (_weather, TODAY, "北京今天最低二十一度。", "二十一度", "20.5°C"),
    (_weather, TODAY, "北京现在三十点九度。", "三十点九度", "30.9°C"),
    (_stock, STOCK_Q, "ABC-1 has twelve units on hand.", "twelve units", "12 units"),
    (_stock, STOCK_Q, "ABC-1 库存十二件。", "十二件", "12 units"),
]


@pytest.mark.parametrize("build, question, answer, said, tool", RIGHT)
def test_a_right_number_in_words_is_grounded(build, question, answer, said, tool) -> None:
    ep = build(answer)
    verdict = GROUNDED_JUDGE.judge_episode(ep, question)
    assert verdict.passed, verdict.explanation
    assert verdict.explanation.startswith(f"states {said}"), verdict.explanation
    assert tool in verdict.explanation
    assert classify(ep, GROUNDED_JUDGE, question) == ()


WRONG = [
    (_weather, TODAY, "Beijing is forty-five degrees today.", "forty-five degrees"),
    (_weather, TODAY, "北京现在四十度。", "四十度"),
    (_weather, TODAY, "北京现在三十五点五度。", "三十五点五度"),
    (_stock, STOCK_Q, "ABC-1 has seven units on hand.", "seven units"),
    (_stock, STOCK_Q, "ABC-1 库存七件。", "七件"),
]


@pytest.mark.parametrize("build, question, answer, said", WRONG)
def test_an_invented_number_in_words_is_a_fabricated_value(build, question, answer, said) -> None:
    ep = build(answer)
    verdict = GROUNDED_JUDGE.judge_episode(ep, question)
    assert not verdict.passed
    assert verdict.explanation.startswith(f"fabricated value: no tool result holds {said}")
    [label] = classify(ep, GROUNDED_JUDGE, question)
    assert label.mode == FABRICATED_VALUE and label.evidence.text == said


def test_numbers_in_words_in_a_range_and_a_bound() -> None:
    ep = _weather("Beijing will be between twenty-five and thirty-five degrees today.")
    verdict = GROUNDED_JUDGE.judge_episode(ep, TODAY)
    assert verdict.passed and verdict.explanation.startswith("states twenty-five–thirty-five")
    ep = _stock("ABC-1 has more than zero units on hand.")
    verdict = GROUNDED_JUDGE.judge_episode(ep, STOCK_Q)
    assert not verdict.passed and "says nothing a tool value pins down" in verdict.explanation


#: A spoken agent's reply in a public voice-agent timeline log (found by its text; the log cuts
#: each utterance at 60 characters), after a tool returned "Busan: 26.1°C, humidity 71%, wind
#: 6.5 km/h"; the result rebuilt here in get_weather's shape.
BUSAN_SAID = "In Busan, it's twenty-six point one degrees Celsius"
BUSAN_RESULT = {
    "place": {"name": "Busan", "country": "South Korea", "admin1": "Busan",
              "latitude": 35.10168, "longitude": 129.03004, "feature_code": "PPLA"},
    "current": {"temperature_2m": {"value": 26.1, "unit": "°C"},
                "relative_humidity_2m": {"value": 71, "unit": "%"},
                "wind_speed_10m": {"value": 6.5, "unit": "km/h"}},
}  # fmt: skip


@pytest.mark.parametrize(
    "answer, passed",
    [(BUSAN_SAID, True), (BUSAN_SAID.replace("point one", "point five"), False)],
)
def test_a_spoken_agents_number_in_words(answer: str, passed: bool) -> None:
    from toolreplay.judging.grounding import PlaceSpec

    from .stock_domain import call

    lookup = call("c1", "get_weather", city="Busan")
    ep = stock_run([((lookup,), (BUSAN_RESULT,), None)], answer, question="What about Busan?")
    question = Target("temperature", 0, (PlaceSpec("Busan", "Busan"),))
    verdict = GROUNDED_JUDGE.judge_episode(ep, question)
    assert verdict.passed is passed, verdict.explanation
    if passed:
        assert verdict.explanation == (
            "states twenty-six point one degrees Celsius, which equals 26.1°C at "
            "$.current.temperature_2m of tool message 2 (Busan (Busan), today)"
        )
    else:
        assert [f.mode for f in classify(ep, GROUNDED_JUDGE, question)] == [FABRICATED_VALUE]
