"""The reference baseline heuristics and the atomic tools, over a fake Open-Meteo client."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolreplay.study.weather.fixture_server import load_fixtures
from toolreplay.study.weather.openmeteo import BadRequest, NoMatch
from toolreplay.study.weather.toolsets import (
    Heuristics,
    atomic_toolset,
    choose_place,
    oneshot_toolset,
)
from toolreplay.wire.episode import ToolCall

FIX = load_fixtures()


class FakeOpenMeteo:
    """Serves the bundled fixture data in-process and records every call."""

    def __init__(self) -> None:
        self.searches: list[str] = []
        self.forecasts: list[tuple[float, float]] = []

    def search(self, name: str, *, count: int = 10, language: str = "zh") -> list[dict[str, Any]]:
        self.searches.append(name)
        entry = FIX["search"].get(name)
        if entry is None:
            raise NoMatch("none", status=200, reason="no results")
        return entry["results"][:count]

    def forecast(self, latitude: float, longitude: float, *, forecast_days: int = 3) -> dict:
        self.forecasts.append((latitude, longitude))
        if not -90 <= latitude <= 90:
            raise BadRequest("bad", status=400, reason="Latitude must be in range of -90 to 90°.")
        return {
            "latitude": latitude,
            "longitude": longitude,
            "timezone": "Asia/Shanghai",
            "current_units": {"time": "iso8601", "temperature_2m": "°C"},
            "current": {"time": "2026-09-17T15:30", "temperature_2m": 20.5},
            "daily_units": {"time": "iso8601", "precipitation_sum": "mm"},
            "daily": {"time": ["2026-09-17"], "precipitation_sum": [1.2]},
        }


def run(toolset, name: str, **args) -> dict:
    result = toolset.execute(ToolCall("c1", name, json.dumps(args, ensure_ascii=False)))
    return json.loads(result.content)


def test_beijing_admin_seat_beats_same_name_villages():
    villages_first = list(reversed(FIX["search"]["北京"]["results"]))
    assert villages_first[0]["feature_code"] == "PPL"
    chosen = choose_place(villages_first, Heuristics(population_order=False))
    assert chosen["feature_code"] == "PPLC"
    # with neither heuristic, the first-ranked village is taken
    assert choose_place(villages_first, Heuristics(False, False, True))["admin1"] == "四川省"


def test_population_order_picks_the_largest_place():
    cands = [
        {"name": "a", "feature_code": "PPLA3", "population": 10},
        {"name": "b", "feature_code": "PPLA2", "population": 5000},
    ]
    assert choose_place(cands, Heuristics())["name"] == "b"
    assert choose_place(cands, Heuristics(population_order=False))["name"] == "a"


def test_shi_retry_requeries_with_city_suffix():
    om = FakeOpenMeteo()
    out = run(oneshot_toolset(om), "get_weather", city="宁德")
    assert om.searches == ["宁德", "宁德市"]
    assert out["place"]["admin1"] == "福建省" and out["place"]["feature_code"] == "PPLA2"
    assert out["current"]["temperature_2m"] == {"value": 20.5, "unit": "°C"}


def test_without_shi_retry_baseline_lands_in_tibet():
    om = FakeOpenMeteo()
    out = run(oneshot_toolset(om, Heuristics(shi_retry=False)), "get_weather", city="宁德")
    assert om.searches == ["宁德"]
    assert out["place"]["admin1"] == "西藏自治区"


def test_no_retry_when_name_already_ends_in_shi_or_admin_seat_found():
    om = FakeOpenMeteo()
    run(oneshot_toolset(om), "get_weather", city="北京")
    run(oneshot_toolset(om), "get_weather", city="宁德市")
    assert om.searches == ["北京", "宁德市"]


def test_get_weather_unknown_city_is_an_error_result():
    om = FakeOpenMeteo()
    out = run(oneshot_toolset(om), "get_weather", city="不存在")
    assert "找不到" in out["error"]
    assert om.searches == ["不存在", "不存在市"]


def test_geocode_city_returns_candidates_as_ranked_and_chooses_nothing():
    out = run(atomic_toolset(FakeOpenMeteo()), "geocode_city", city="北京")
    assert [c["admin1"] for c in out["candidates"]] == ["北京市", "重庆市", "四川省"]
    assert "chosen" not in json.dumps(out)
    empty = run(atomic_toolset(FakeOpenMeteo()), "geocode_city", city="火星")
    assert empty["candidates"] == []


def test_get_weather_by_coords_accepts_coordinates_only():
    ts = atomic_toolset(FakeOpenMeteo())
    assert "error" in run(ts, "get_weather_by_coords", city="北京")
    assert "error" in run(ts, "get_weather_by_coords", latitude=999, longitude=1)
    ok = run(ts, "get_weather_by_coords", latitude=39.9, longitude=116.4)
    assert ok["daily"][0]["precipitation_sum"] == {"value": 1.2, "unit": "mm"}


def test_heuristic_switches_are_named():
    assert Heuristics.names() == ("admin_seat", "population_order", "shi_retry")
    assert Heuristics().without("shi_retry").disabled == ("shi_retry",)
    with pytest.raises(ValueError, match="unknown heuristic"):
        Heuristics().without("nope")


def test_schemas_are_written_for_the_model():
    ts = atomic_toolset(FakeOpenMeteo())
    for schema in ts.schemas:
        fn = schema["function"]
        assert "调用" in fn["description"]  # says when to call
        for prop in fn["parameters"]["properties"].values():
            assert "例如" in prop["description"]  # parameters carry examples


def test_network_failure_becomes_a_tool_error_the_model_reads():
    import requests

    class Down(FakeOpenMeteo):
        def search(self, name, *, count=10, language="zh"):
            raise requests.ConnectionError("no route")

    result = oneshot_toolset(Down()).execute(ToolCall("c", "get_weather", '{"city": "北京"}'))
    assert result.error == "Open-Meteo unreachable: ConnectionError"
    assert json.loads(result.content) == {"error": "Open-Meteo unreachable: ConnectionError"}
