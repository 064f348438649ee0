from __future__ import annotations

import pytest

from toolreplay.judge import FULL_JUDGE, NARROW_JUDGE, find_measured_values


@pytest.mark.parametrize(
    "answer, kind",
    [
        ("北京今天 30.9°C。", "temperature"),
        ("气温 28℃", "temperature"),
        ("大约 26 度", "temperature"),
        ("about 21 degrees Celsius", "temperature"),
        ("降水约 2.6 毫米", "precipitation"),
        ("rain 2.6 mm tomorrow", "precipitation"),
        ("降水概率 60%", "probability"),
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
