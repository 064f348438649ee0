"""Bare degrees, degree keys, kelvin, wind chill and unitless results: the judgment
regressions a review found after bare ``73 degrees`` became a temperature in either scale
(``toolreplay.judging.degrees``), each as a kind with variants beyond the examples."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.test_judge_outside import asked, judged, values
from toolreplay.judging.degrees import bearing
from toolreplay.judging.values import scan

OK = (True, set())
FABRICATED = (False, {"fabricated_value"})


def boston(answer: str, result: Any, args: dict[str, Any] | None = None,
           measure: str = "temperature") -> tuple[bool, set[str]]:  # fmt: skip
    case = asked("Boston", "Massachusetts", answer, result, args or {"location": "Boston"},
                 measure)  # fmt: skip
    passed, labels, _ = judged(case)
    return passed, labels


# 1. a bare degree is a temperature only where nothing makes it a direction, an angle or a
# coordinate
@pytest.mark.parametrize(
    ("answer", "result"),
    [
        ("Boston: 22°C, wind 15 km/h ESE (112°).",
         {"temperature": 22, "wind_speed": 15, "wind_deg": 112}),
        ("Boston: 22°C, wind 15 km/h ESE (112°).", {"temperature": 22, "wind_speed": 15}),
        ("Boston is 22°C with wind from 120 degrees at 15 km/h.",
         {"temperature": 22, "wind_speed": 15, "wind_direction": 120}),
        ("Boston: 22°C, wind 15 km/h from 110°.",
         {"temperature": 22, "wind_speed": 15, "winddirDegree": 110}),
        ("It is 22°C; the wind will shift 90 degrees overnight.", {"temperature": 22}),
        ("It is 22°C; the sun peaks 70 degrees above the horizon.", {"temperature": 22}),
        ("Boston (about 71 degrees west) is 22°C today.", {"temperature": 22}),
        ("Tromsø, at 69.6 degrees north, is 22°C.", {"temperature": 22}),
        ("Tromsø is at 73 degrees latitude and 22°C.", {"temperature": 22}),
        ("Reykjavik sits at 64 degrees north; Boston is 22°C.", {"temperature": 22}),
        # variants: a bearing under 60 (read as °C before), a compass point, a veer, Chinese
        ("Boston is 22°C, wind direction 45 degrees.", {"temperature": 22}),
        ("Boston is 22°C with a NW 315° breeze.", {"temperature": 22}),
        ("It is 22°C and the wind veers by 30 degrees this evening.", {"temperature": 22}),
        ("波士顿 22°C，风向 135 度。", {"temperature": 22}),
    ],
)
def test_a_bearing_or_a_coordinate_is_no_temperature(answer: str, result: Any) -> None:
    assert boston(answer, result) == OK


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("It's 73 degrees and sunny in Boston.", [73.0]),
        ("Temperature is 73 degrees with wind from the north.", [73.0]),
        ("Winds from the north keep highs near 60 degrees.", [60.0]),
        ("West Palm Beach is 80 degrees.", [80.0]),  # a place's name is no compass point
        ("It is 73 degrees right now.", [73.0]),
        ("Wind from 120 degrees, temperature 73 degrees.", [73.0]),
    ],
)
def test_a_bare_degree_in_a_temperature_clause_stays_a_temperature(
    text: str, read: list[float]
) -> None:
    assert [v.value for v in scan(text).values] == read


def test_bearing_words() -> None:
    text = "wind 15 km/h ESE (112°)"
    assert bearing(text, text.index("112"), text.index(")"))
    text = "It's 73 degrees and sunny"
    assert not bearing(text, text.index("73"), text.index(" and"))


def test_a_bare_degree_answer_is_still_checked_against_the_temperature() -> None:
    assert boston("It's 73 degrees and sunny in Boston.", {"temperature": 22.8}) == OK
    assert boston("It's 73 degrees and sunny in Boston.", {"temperature": 10}) == FABRICATED
    assert boston("It's 95 degrees in Boston.", {"temperature": 35}) == OK  # 95 °F
    assert boston("It is 30 degrees in Boston.", {"temperature": -1.1}) == OK  # 30 °F


# 2. a temperature key may say degrees; a wind's direction is still no wind speed
@pytest.mark.parametrize(
    ("key", "unit"),
    [("temp_deg_c", "C"), ("temperature_deg", "°C"), ("tempDegreeF", "F"),
     ("feels_like_deg_c", "C"), ("temperature_degree", "degree")],
)  # fmt: skip
def test_a_temperature_key_saying_degrees_is_a_temperature(key: str, unit: str) -> None:
    assert values({key: 22}) == [(22.0, unit, None)]


@pytest.mark.parametrize(
    "result",
    [{"wind_deg": 112}, {"winddirDegree": "112"}, {"wind_direction_10m": 112},
     {"windBearing": 112}, {"wind_dir_degrees": 112}, {"wind": {"speed_x": 1, "deg": 112}}],
)  # fmt: skip
def test_a_wind_direction_key_is_no_value(result: Any) -> None:
    assert [v for v in values(result) if v[0] == 112.0] == []


def test_answers_from_degree_keys() -> None:
    assert boston("Boston is 22°C.", {"temp_deg_c": 22}) == OK
    assert boston("Boston is 22°C.", {"temperature_degree": 22}) == OK
    assert boston("Boston is 72°F.", {"tempDegreeF": 72}) == OK
    assert boston("Boston is 72°C.", {"tempDegreeF": 72}) == FABRICATED


# 3. a tool's bare degree is read in the scales where it is an air temperature
@pytest.mark.parametrize(
    ("answer", "tool", "verdict"),
    [
        ("It's 73°C in Boston.", "Current conditions in Boston: 73 degrees, sunny.", FABRICATED),
        ("It's 73°F in Boston.", "Current conditions in Boston: 73 degrees, sunny.", OK),
        ("It's 23°C in Boston.", "Current conditions in Boston: 73 degrees, sunny.", OK),
        ("It's 30°C in Boston.", "Boston: 30 degrees", OK),  # both scales plausible
        ("It's 30°F in Boston.", "Boston: 30 degrees", OK),
        ("It's 95°C in Boston.", "Boston: 95°", FABRICATED),
        ("It's 35°C in Boston.", "Boston: 95°", OK),
    ],
)
def test_a_tools_bare_degree_grounds_only_its_plausible_scales(
    answer: str, tool: str, verdict: tuple[bool, set[str]]
) -> None:
    assert boston(answer, tool) == verdict


# 4. a K set apart is kelvin only where it can be an air temperature
@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("It is 22°C; perfect for the 5 K race.", [(22.0, "°C")]),
        ("It is 22°C; the 10 K run starts at 9.", [(22.0, "°C")]),
        ("It is 22°C; a 5K starts at 9.", [(22.0, "°C")]),
        ("Gusts up to 40 K today; 22°C.", [(22.0, "°C")]),
        ("It is about 295 K (22°C).", [(295.0, "K"), (22.0, "°C")]),
        ("It is 5 kelvin in the cryostat.", [(5.0, "kelvin")]),  # the word always is
        ("It is 284.67 °K.", [(284.67, "kelvin")]),
    ],
)
def test_a_standalone_k_is_kelvin_only_where_plausible(
    text: str, read: list[tuple[float, str]]
) -> None:
    assert [(v.value, v.unit) for v in scan(text).values] == read


def test_answers_mentioning_a_race() -> None:
    assert boston("It is 22°C; perfect for the 5 K race.", {"temperature": 22}) == OK
    assert boston("It is 295.15 K in Boston.", {"main": {"temp": 295.15}}) == OK


# 5. a wind chill is a temperature
@pytest.mark.parametrize("key", ["wind_chill", "windchill", "WindChill", "wind_chill_index"])
def test_a_wind_chill_key_is_a_temperature(key: str) -> None:
    assert values({key: -5}) == [(-5.0, "°C", None)]
    assert boston("Boston is 2°C, with a wind chill of -5°C.", {"temperature": 2, key: -5}) == OK


def test_a_wind_chill_takes_its_siblings_unit() -> None:
    assert values({"windchill": 23, "unit": "F"}) == [(23.0, "F", None)]
    assert values({"wind_speed": 10, "windchill": 23, "units": "imperial"}) == [
        (10.0, "km/h", None), (23.0, "°F", None),
    ]  # fmt: skip


# 6. a call's result that is one number with no unit
def unitless(answer: str, result: str, tool: str = "get_temperature") -> tuple[bool, set[str]]:
    case = asked("Tokyo", "Tokyo", answer, result, {"city": "Tokyo"})
    case["tools"][0]["name"] = tool
    passed, labels, _ = judged(case)
    return passed, labels


@pytest.mark.parametrize(
    ("answer", "result", "tool", "verdict"),
    [
        ("The temperature in Tokyo is currently 20.0 degrees Celsius.", "20.0",
         "get_temperature", OK),
        ("It is 20°C in Tokyo.", "20.0", "get_temperature", OK),
        ("It is 68°F in Tokyo.", '"20"', "get_temperature", OK),  # 20 °C
        ("It is 70°F in Tokyo.", '"20"', "get_temperature", FABRICATED),  # 20 in no scale
        ("It is 20°F in Tokyo.", "20", "get_temperature", OK),
        ("It is 21°C in Tokyo.", "20.0", "get_temperature", FABRICATED),
        ("It is 20°C in Tokyo.", "20.0", "lookup", OK),  # a tool naming no quantity
        ("It is 20.4°C in Tokyo.", "20.43", "get_temperature", OK),  # the answer's precision
    ],
)
def test_a_unitless_number_result_grounds_its_value_in_any_scale(
    answer: str, result: str, tool: str, verdict: tuple[bool, set[str]]
) -> None:
    assert unitless(answer, result, tool) == verdict


def test_the_pydantic_ai_cassette_answer_is_grounded() -> None:
    """tests/data/foreign/pydantic-ai-openai-tool-call.yaml: get_temperature returns '20.0'."""
    found = unitless("The temperature in Tokyo is currently 20.0 degrees Celsius.",
                     json.loads('"20.0"'))  # fmt: skip
    assert found == OK
