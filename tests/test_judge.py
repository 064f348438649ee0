from __future__ import annotations

import pytest

from toolreplay.judging.values import find_measured_values
from toolreplay.judging.verdicts import FORMAT_JUDGE as FULL_JUDGE
from toolreplay.judging.verdicts import NARROW_JUDGE


@pytest.mark.parametrize(
    "answer, kind",
    [
        ("北京今天 30.9°C。", "temperature"),
        ("气温 28℃", "temperature"),
        ("大约 26 度", "temperature"),
        ("about 21 degrees Celsius", "temperature"),
        ("降水约 2.6 毫米", "precipitation"),
        ("rain 2.6 mm tomorrow", "precipitation"),
        ("降水概率 60%", "percent"),
        ("风速 6.5 km/h", "wind"),
        ("wind 3 m/s", "wind"),
        ("零下 -3.5°C", "temperature"),
    ],
)
def test_full_judge_accepts_a_measured_value_with_unit(answer, kind):
    verdict = FULL_JUDGE.judge(answer)
    assert verdict.passed, verdict.explanation
    assert kind in {v.kind for v in verdict.values}


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "上海明天会下雨。",
        "我将重新查询，明确指定「宁德市」。",
        "已找到上海的坐标（31.2222, 121.4581），接下来我将查询。",
        "今天是 2026-09-17，9月17日。",
        "北纬39.9度，东经116.4度",
    ],
)
def test_full_judge_rejects_answers_without_measurement(answer):
    assert not FULL_JUDGE.judge(answer).passed


def test_values_and_spans():
    text = "北京 31.1°C，广州 33.4℃，降水 2.6 毫米"
    values = find_measured_values(text)
    assert [(v.value, v.kind) for v in values] == [
        (31.1, "temperature"),
        (33.4, "temperature"),
        (2.6, "precipitation"),
    ]
    assert text[values[0].start : values[0].end] == "31.1°C"


def test_narrow_judge_accepts_only_celsius():
    assert NARROW_JUDGE.judge("30.9°C").passed
    assert not NARROW_JUDGE.judge("预计降水量约 2.6 毫米").passed
    assert not NARROW_JUDGE.accepts("precipitation")
    assert NARROW_JUDGE.accepts("temperature") and NARROW_JUDGE.accepts("comparison")
    assert FULL_JUDGE.accepts("precipitation")


def test_empty_answer_explanation():
    assert FULL_JUDGE.judge("  ").explanation == "empty answer"


@pytest.mark.parametrize(
    "answer, measure, passed",
    [
        ("北京今天风速 12 km/h，具体气温我将重新查询。", "temperature", False),
        ("上海明天湿度 80%。", "precipitation", False),
        ("上海明天降水概率 60%。", "precipitation", True),
        ("上海明天会下雨，降水约 2.6 毫米。", "precipitation", True),
        ("上海明天 26°C。", "precipitation", False),
        ("广州最热，33.4°C。", "comparison", False),
        ("北京 31.1°C，广州 33.4°C，广州最热。", "comparison", True),
        ("北京今天 30.9°C。", "temperature", True),
    ],
)
def test_verdict_follows_the_questions_measure(answer, measure, passed):
    assert FULL_JUDGE.judge(answer, measure).passed is passed


def test_narrow_judge_cannot_pass_a_precipitation_question():
    verdict = NARROW_JUDGE.judge("降水约 2.6 毫米，约 20°C", "precipitation")
    assert not verdict.passed and "accepts no unit for precipitation" in verdict.explanation


@pytest.mark.parametrize(
    "text, expected",
    [
        ("北京今天26°，晴。", [(26.0, "temperature")]),
        ("Beijing is 79°F today.", [(79.0, "temperature")]),
        ("about 26 degrees", [(26.0, "temperature")]),
        ("零下5度", [(-5.0, "temperature")]),
        ("气温 −3.5℃", [(-3.5, "temperature")]),
        ("累计 1,234 毫米", [(1234.0, "precipitation")]),
        ("20-25°C", [(20.0, "temperature"), (25.0, "temperature")]),
        ("宁德市的纬度为 26.66 度，经度为 119.52 度", []),
        ("坐标（31.2222°, 121.4581°）", []),
        ("北纬39.9°", []),
    ],
)
def test_units_signs_separators_and_coordinates(text, expected):
    assert [(v.value, v.kind) for v in find_measured_values(text)] == expected


def test_a_range_is_not_a_negative_number():
    assert [v.value for v in find_measured_values("气温30°C-32°C")] == [30.0, 32.0]
    assert [v.value for v in find_measured_values("气温-3°C")] == [-3.0]


def test_wind_and_none_measures():
    from toolreplay.judging.verdicts import FORMAT_JUDGE, FULL_JUDGE, NARROW_JUDGE

    # the form of a wind answer (the grounded judge also needs a tool result holding it)
    assert FORMAT_JUDGE.judge("明天最大风速约 31.4 km/h。", "wind").passed
    assert not FORMAT_JUDGE.judge("明天最高 28.7°C。", "wind").passed
    assert not FULL_JUDGE.judge("明天最大风速约 31.4 km/h。", "wind").passed  # nothing grounds it
    assert FULL_JUDGE.accepts("wind") and not NARROW_JUDGE.accepts("wind")
    # none: nothing to measure, so a stated value fails and an answer without one passes
    assert FULL_JUDGE.judge("抱歉，没有找到名为「霍格沃茨」的地点。", "none").passed
    assert not FULL_JUDGE.judge("霍格沃茨明天 12°C。", "none").passed
    assert not FULL_JUDGE.judge("", "none").passed
    assert NARROW_JUDGE.accepts("none")
