"""The grounded judge on real answers from outside the project: models' replies to weather
questions beside the tool results they saw, from public cassettes, docs and transcripts
(``tests/data/judge/outside-weather-answers.yaml``, each case cited), graded by hand; and one
test per kind of tool result those cases showed the judge misreading."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolreplay.evals import Place, Question
from toolreplay.judging.failures import classify
from toolreplay.judging.toolvalues import tool_values
from toolreplay.judging.values import scan
from toolreplay.judging.verdicts import GROUNDED_JUDGE
from toolreplay.wire.episode import Episode, ModelReply, Round, ToolCall, ToolResult, Usage

CASES = Path(__file__).parent / "data" / "judge" / "outside-weather-answers.yaml"


@cache
def cases() -> list[dict[str, Any]]:
    return list(yaml.safe_load(CASES.read_text(encoding="utf-8"))["cases"])


def episode(case: dict[str, Any]) -> Episode:
    """The case's tool calls in one round (each answered by its result), then its answer (with
    the ``pending`` call, when it has one, left unanswered)."""
    messages: list[Any] = [{"role": "user", "content": case["question"]}]
    rounds = []
    tools = case.get("tools", [])
    if tools:
        calls = tuple(
            ToolCall(f"call_{n}", t.get("name", "get_weather"),
                     json.dumps(t.get("args", {}), ensure_ascii=False))
            for n, t in enumerate(tools, 1)
        )  # fmt: skip
        first = ModelReply(None, calls, "tool_calls")
        done = tuple(
            ToolResult(c, t["result"] if isinstance(t["result"], str)
                       else json.dumps(t["result"], ensure_ascii=False))
            for c, t in zip(calls, tools, strict=True)
        )  # fmt: skip
        messages += [first.to_message(), *(d.to_message() for d in done)]
        rounds.append(Round(1, True, first, done))
    pending = case.get("pending")
    later = (
        (ToolCall("call_p", pending["name"], json.dumps(pending.get("args", {}))),)
        if pending
        else ()
    )
    final = ModelReply(case["answer"] or None, later, "tool_calls" if later else "stop")
    rounds.append(Round(len(rounds) + 1, True, final))
    messages.append(final.to_message())
    stop = "max_rounds" if later else "converged"
    return Episode("outside", case["id"], case["question"], tuple(messages), tuple(rounds),
                   stop, case["answer"], Usage())  # fmt: skip


def question(case: dict[str, Any]) -> Question:
    day = case.get("day", "today")
    places = tuple(
        Place(p["query"], p.get("region"), tuple(p.get("names", ()))) for p in case["places"]
    )
    index = None if day is None else ["today", "tomorrow"].index(day)
    return Question(case["id"], case["question"], case["measure"], places, day, index)


def judged(case: dict[str, Any]) -> tuple[bool, set[str], str]:
    ep, q = episode(case), question(case)
    verdict = GROUNDED_JUDGE.judge_episode(ep, q)
    labels = {f.mode for f in classify(ep, GROUNDED_JUDGE, q)}
    return verdict.passed, labels, verdict.explanation


def test_the_corpus_is_real_and_graded() -> None:
    assert len(cases()) >= 40
    for case in cases():
        assert case["source"] and case["expect"] in ("pass", "fail"), case["id"]
    assert sum("known_gap" not in c for c in cases()) >= 39


AGREED = [c for c in cases() if "known_gap" not in c]
GAPS = [c for c in cases() if "known_gap" in c]


@pytest.mark.parametrize("case", AGREED, ids=lambda c: c["id"])
def test_the_judge_agrees_with_the_grader(case: dict[str, Any]) -> None:
    passed, labels, explanation = judged(case)
    assert (passed, labels) == (case["expect"] == "pass", set(case.get("labels", []))), explanation


@pytest.mark.parametrize("case", GAPS, ids=lambda c: c["id"])
def test_known_gaps_still_disagree(case: dict[str, Any]) -> None:
    """Each known gap still disagrees; when one is fixed, move it to the agreed cases."""
    passed, _, _ = judged(case)
    assert passed != (case["expect"] == "pass")


def weather(result: Any, args: dict[str, Any] | None = None, answer: str = "") -> Episode:
    case = {
        "id": "t", "question": "?", "answer": answer,
        "tools": [{"name": "get_weather", "args": args or {}, "result": result}],
    }  # fmt: skip
    return episode(case)


def values(result: Any, args: dict[str, Any] | None = None) -> list[tuple[float, str, Any]]:
    found = tool_values(weather(result, args).transcript)
    return [(v.value, v.unit, v.place.name if v.place is not None else None) for v in found]


def test_a_result_without_a_place_object_is_about_the_place_its_call_names() -> None:
    assert values("24℃", {"location": "Hangzhou"}) == [(24.0, "℃", "Hangzhou")]
    # the call's unit argument is the unit of the result's bare numbers, as a sibling field's is
    assert values({"temperature": 7}, {"city": "北京", "unit": "celsius"}) == [
        (7.0, "celsius", "北京"),
    ]  # fmt: skip
    # the result's own field first (OpenWeatherMap's top-level ``name``)
    assert values({"name": "London", "temperature": 9}, {"q": "Londres"}) == [(9.0, "°C", "London")]
    # two places named: none is the place
    assert values("9°C", {"city": "Paris", "location": "London"}) == [(9.0, "°C", None)]
    assert values("9°C", {"days": 2}) == [(9.0, "°C", None)]


def case(answer: str, result: Any, args: dict[str, Any], region: str | None = "California"):
    return {
        "id": "t", "question": "What's the weather in San Francisco?", "measure": "temperature",
        "places": [{"query": "San Francisco", "region": region}], "answer": answer,
        "tools": [{"name": "get_weather", "args": args, "result": result}],
    }  # fmt: skip


def test_a_place_named_only_by_the_call_grounds_the_asked_place_of_any_region() -> None:
    sf = {"location": "San Francisco, CA"}
    assert judged(case("It is 72°F in San Francisco.", "72°F", sf))[0]
    assert judged(case("It is 72°F in San Francisco.", "72°F", sf, region=None))[0]
    # another place named by the call is still another place
    passed, _, why = judged(case("It is 72°F in San Francisco.", "72°F", {"city": "Denver"}))
    assert not passed and "Denver" in why


def test_a_sibling_unit_field_is_the_numbers_unit() -> None:
    result = {"location": "San Francisco", "temperature": 65, "unit": "fahrenheit"}
    assert values(result) == [(65.0, "fahrenheit", "San Francisco")]
    right = case("It is 65 degrees Fahrenheit.", result, {"location": "San Francisco"})
    wrong = case("It is 65°C.", result, {"location": "San Francisco"})
    assert judged(right)[0]
    passed, labels, _ = judged(wrong)
    assert not passed and labels == {"fabricated_value"}  # the false pass this fixed
    # a unit field of another kind leaves the temperature alone
    assert values({"temperature": 20, "wind": 5, "wind_unit": "mph"}) == [
        (20.0, "°C", None), (5.0, "mph", None),
    ]  # fmt: skip


def test_a_number_kept_as_a_string_counts_as_the_number() -> None:
    assert values({"temperature": "10", "unit": "celsius"}) == [(10.0, "celsius", None)]
    assert values({"temperature": "−3.5"}) == [(-3.5, "°C", None)]
    assert values({"temperature": "n/a", "humidity": "80"}) == [(80.0, "%", None)]
    assert values({"id": "42", "temperature": "12"}) == [(12.0, "°C", None)]


def test_abbreviated_temperature_keys_and_their_unit_letters() -> None:
    assert values({"tempC": 28, "temp_F": 82, "maxtempC": 30, "temp": 4}) == [
        (28.0, "C", None), (82.0, "F", None), (30.0, "C", None), (4.0, "°C", None),
    ]  # fmt: skip
    # words that merely contain the letters are not temperatures
    assert values({"attempts": 3, "template": 2, "contemporary": 1}) == []


def test_a_place_only_asked_for_never_makes_a_quoted_value_fabricated() -> None:
    """A call's search phrase, coordinates or another name for the place (``NYC``) is no
    evidence of another place: a value quoted from its result is never called made up, and
    beside a result with a place object it grounds the answer."""
    sf = case("It is 18°C in San Francisco.", {"temperature": 18}, {"q": "37.77,-122.42"})
    assert judged(sf)[1] == set()
    nyc = case("It is 18°C in San Francisco.", "18°C", {"city": "SF"})
    assert judged(nyc)[1] == set()
    paris = {
        "id": "t", "question": "Weather in Paris?", "measure": "temperature",
        "places": [{"query": "Paris", "region": "Île-de-France"}],
        "answer": "20°C in Paris now, dropping to 14°C tonight.",
        "tools": [
            {"name": "get_weather", "args": {"city": "Paris"}, "result": {
                "place": {"name": "Paris", "admin1": "Île-de-France"}, "temperature": 20}},
            {"name": "web_search", "args": {"query": "weather in Paris tonight"},
             "result": "Tonight: low of 14°C"},
        ],
    }  # fmt: skip
    assert judged(paris)[:2] == (True, set())


# ---- bare degrees, wttr.in's unit-named keys, OpenWeatherMap's kelvin ---------------------

BODIES = Path(__file__).parent / "data" / "judge" / "weather-api-bodies.yaml"


@cache
def body(name: str) -> Any:
    entry = yaml.safe_load(BODIES.read_text(encoding="utf-8"))["bodies"][name]
    assert entry["source"]
    return entry["body"]


def asked(place: str, region: str, answer: str, result: Any, args: dict[str, Any],
          measure: str = "temperature") -> dict[str, Any]:  # fmt: skip
    return {
        "id": "t", "question": f"What's the weather in {place}?", "measure": measure,
        "places": [{"query": place, "region": region}], "answer": answer,
        "tools": [{"name": "get_weather", "args": args, "result": result}],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "read", "coordinates"),
    [
        ("It is 73 degrees and sunny.", [(73.0, "degrees")], 0),
        ("Day 75°. Night 59°.", [(75.0, "°"), (59.0, "°")], 0),
        ("Highs 75°/60°", [(75.0, "°"), (60.0, "°")], 0),
        ("New York is at 40.7°N, 74.0°W.", [], 2),
        ("lat 40.7°, lon -74.0°", [], 2),
        ("New York (40.7°, -74.0°) is 73 degrees.", [(73.0, "degrees")], 2),
        ("北京 116度", [], 1),  # 度 is Celsius: 116 度 is no temperature
        ("It is 282° there.", [], 1),  # no temperature in °C or °F
        ("It is 284.67 K (11.5°C); 10K people ran.", [(284.67, "K"), (11.5, "°C")], 0),
    ],
)
def test_bare_degrees_are_a_temperature_unless_they_read_like_a_coordinate(
    text: str, read: list[tuple[float, str]], coordinates: int
) -> None:
    found = scan(text)
    assert [(v.value, v.unit) for v in found.values] == read
    assert len(found.coordinates) == coordinates


def test_bare_degrees_ground_in_the_tool_results_scale() -> None:
    ny = {"city": "New York"}
    said = "It is 73 degrees in New York."
    assert judged(asked("New York", "New York", said, "73°F", ny))[:2] == (True, set())
    assert judged(asked("New York", "New York", said, "22.8°C", ny))[:2] == (True, set())
    assert judged(asked("New York", "New York", "It is 73°F.", "73 degrees", ny))[0]
    assert judged(asked("New York", "New York", "It is 23°C.", "73 degrees", ny))[0]
    passed, labels, why = judged(asked("New York", "New York", "It is 80 degrees.", "73°F", ny))
    assert not passed and labels == {"fabricated_value"} and "80 degrees" in why
    # 度 is Celsius only: 73度 is no temperature to ground
    assert not judged(asked("New York", "New York", "纽约 73度。", "73°F", ny))[0]


def test_wttr_keys_name_their_units() -> None:
    found = values(body("wttr-london-j1"), {"location": "London"})
    current = {(v, u) for v, u, _ in found[:9]}
    assert current == {
        (16.0, "C"), (60.0, "F"), (71.0, "%"), (17.0, "C"), (63.0, "F"),
        (11.0, "km/h"), (7.0, "mph"), (0.0, "mm"), (0.0, "inches"),
    }  # fmt: skip
    hourly = {(v, u) for v, u, _ in found if u in ("mph", "km/h", "%", "C")}
    assert (9.0, "C") in hourly  # WindChillC is a temperature, not a wind speed
    assert (5.0, "mph") in hourly and (8.0, "km/h") in hourly and (11.0, "km/h") in hourly
    units = {u for _, u, _ in found}
    assert "°C" not in units  # pressureInches, visibilityMiles, DewPointC... no other reading
    assert not any(u == "inches" and v == 30.0 for v, u, _ in found)  # pressureInches
    assert not any(u == "mph" and v == 6.0 for v, u, _ in found)  # visibilityMiles
    assert values({"chanceofrain": "80", "chanceofwindy": "5"}) == [
        (80.0, "%", None), (5.0, "%", None),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "measure", "verdict"),
    [
        ("London: wind NE at 11 km/h (7 mph).", "wind", (True, set())),
        ("London: wind NE at 11 mph.", "wind", (False, {"fabricated_value"})),
        ("No rain in London: 0.0 mm (0.0 in).", "precipitation", (True, set())),
        ("London is 17°C (63°F), feels like 16°C (60°F).", "temperature", (True, set())),
        ("London is 17°C, feels like 12°C.", "temperature", (False, {"fabricated_value"})),
    ],
)
def test_answers_quoting_wttr_values(answer: str, measure: str, verdict: tuple) -> None:
    c = asked("London", "England", answer, body("wttr-london-j1"), {"location": "London"},
              measure)  # fmt: skip
    assert judged(c)[:2] == verdict


def test_openweathermap_kelvin_is_read_as_kelvin() -> None:
    mv = body("owm-mountain-view-kelvin")
    assert values(mv, {"q": "Mountain View"})[:4] == [
        (284.67, "K", "Mountain View"), (283.5, "K", "Mountain View"),
        (280.74, "K", "Mountain View"), (288.43, "K", "Mountain View"),
    ]  # fmt: skip
    # the call's units decide: metric °C, imperial °F, standard K (whatever the number)
    small = {"main": {"temp": 13.1}}
    assert values(small, {"q": "Paris", "units": "metric"}) == [(13.1, "°C", "Paris")]
    assert values(small, {"q": "Paris", "units": "imperial"}) == [(13.1, "°F", "Paris")]
    assert values(small, {"q": "Paris", "units": "standard"}) == [(13.1, "K", "Paris")]
    assert values(small, {"q": "Paris"}) == [(13.1, "°C", "Paris")]  # plausible °C: stays


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ("Hamburg: overcast, 10.9°C (feels like 10.3°C).", (True, set())),
        ("Hamburg: overcast, 51.7°F.", (True, set())),
        ("Hamburg: overcast, 284.07 K.", (True, set())),
        ("Hamburg: overcast, 284.07°C.", (False, {"fabricated_value"})),
        ("Hamburg: overcast, 284°.", (False, {"no_measurement"})),
        ("Hamburg: overcast, 15°C.", (False, {"fabricated_value"})),
    ],
)
def test_answers_from_an_openweathermap_kelvin_result(answer: str, verdict: tuple) -> None:
    c = asked("Hamburg", "Hamburg", answer, body("owm-hamburg-kelvin"), {"q": "Hamburg"})
    assert judged(c)[:2] == verdict
