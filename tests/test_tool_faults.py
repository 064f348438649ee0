"""Tool faults never escape: whatever a tool or Open-Meteo does, the model gets a tool message
that says what went wrong, and never a placeholder such as ``None``."""

from __future__ import annotations

import json
import time
from typing import Any

import jsonschema
import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st

from toolreplay.doubles.loopback import serve
from toolreplay.study.weather.fixture_server import OpenMeteoFixtures, load_fixtures
from toolreplay.study.weather.openmeteo import OpenMeteoClient
from toolreplay.study.weather.toolsets import atomic_toolset, oneshot_toolset
from toolreplay.tools.toolset import Toolset
from toolreplay.wire.episode import ToolCall

BEIJING = {"name": "北京", "latitude": 39.9075, "longitude": 116.39723, "feature_code": "PPLC",
           "country": "中国", "admin1": "北京市", "population": 11716620}  # fmt: skip


def call(name: str, arguments: Any) -> ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall("c1", name, text)


def raising(exc: Exception) -> Toolset:
    def boom(x: int) -> dict:
        raise exc

    schema = {
        "type": "function",
        "function": {
            "name": "boom",
            "parameters": {
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "required": ["x"],
            },
        },
    }
    return Toolset("t", (schema,), {"boom": boom})  # fmt: skip


@pytest.mark.parametrize(
    "exc, says",
    [
        (ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero"),
        (KeyError("latitude"), "KeyError: 'latitude'"),
        (TypeError(), "TypeError"),
        (RuntimeError("disk full"), "RuntimeError: disk full"),
    ],
)
def test_any_exception_a_tool_raises_becomes_a_tool_message(exc, says):
    result = raising(exc).execute(call("boom", {"x": 1}))
    assert result.error and says in result.error
    assert json.loads(result.content)["error"] == result.error


def test_arguments_are_validated_against_the_schema_with_the_validators_message():
    tools = atomic_toolset(OpenMeteoClient(requests.Session()))
    cases = {
        '{"latitude": 95, "longitude": 116}': "(at latitude): 95 is greater than the maximum of 90",
        '{"latitude": "39.9", "longitude": 116}': "(at latitude): '39.9' is not of type 'number'",
        '{"latitude": 39.9}': "'longitude' is a required property",
        '{"latitude": 39.9, "longitude": 116, "city": "北京"}': "Additional properties",
        "[39.9, 116]": "is not of type 'object'",
        "39.9": "is not of type 'object'",
        '{"latitude": 39.9,': "arguments are not valid JSON",
    }
    for arguments, says in cases.items():
        result = tools.execute(call("get_weather_by_coords", arguments))
        assert result.error and says in result.error, (arguments, result.error)
        assert "invalid arguments for get_weather_by_coords" in result.error or "JSON" in says


def test_validators_are_built_once_per_schema_not_per_call_or_episode(monkeypatch):
    tools = atomic_toolset(OpenMeteoClient(requests.Session()))
    assert set(tools.validators) == {"geocode_city", "get_weather_by_coords"}

    def no_more(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a validator was built during a call")

    built = tools.validators["get_weather_by_coords"]
    cls = type(built)
    monkeypatch.setattr(cls, "check_schema", classmethod(no_more))  # runs when one is built
    monkeypatch.setattr(jsonschema, "validate", no_more)
    for _ in range(3):
        result = tools.execute(call("get_weather_by_coords", {"latitude": 999, "longitude": 0}))
        assert "maximum of 90" in (result.error or "")
    assert tools.validators["get_weather_by_coords"] is built
    # built once per schema per process: the next toolset (the next episode) reuses it
    again = atomic_toolset(OpenMeteoClient(requests.Session()))
    assert again.validators["get_weather_by_coords"] is built


def test_a_bad_schema_fails_when_the_toolset_is_made():
    schema = {"type": "function", "function": {"name": "f", "parameters": {"type": "nope"}}}
    with pytest.raises(jsonschema.SchemaError):
        Toolset("t", (schema,), {"f": lambda: {}})


def test_an_unknown_tool_gets_the_list_of_offered_tools():
    tools = atomic_toolset(OpenMeteoClient(requests.Session()))
    result = tools.execute(call("get_weather", {"city": "北京"}))
    assert result.error == (
        "unknown tool 'get_weather'; the tools offered are: geocode_city, get_weather_by_coords"
    )


# ---- Open-Meteo replies, served on loopback -------------------------------------------------


def _forecast(**override: Any) -> dict[str, Any]:
    body = {
        "latitude": 39.9, "longitude": 116.4, "timezone": "Asia/Shanghai",
        "current_units": {"time": "iso8601", "temperature_2m": "°C", "weather_code": "wmo code"},
        "current": {"time": "2026-09-17T15:30", "temperature_2m": 20.5, "weather_code": 1},
        "daily_units": {"time": "iso8601", "temperature_2m_max": "°C", "weather_code": "wmo code",
                        "precipitation_sum": "mm"},
        "daily": {"time": ["2026-09-17", "2026-09-18"], "temperature_2m_max": [25.0, 26.0],
                  "weather_code": [1, 3], "precipitation_sum": [0.0, 1.5]},
    }  # fmt: skip
    body.update(override)
    return body


def open_meteo(loopback, search: tuple[int, Any], forecast: tuple[int, Any], delay: float = 0):
    def app(method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
        if delay:
            time.sleep(delay)
        return search if path == "/v1/search" else forecast

    return serve(app)


def tool_message(
    loopback,
    name: str,
    args: dict,
    search: tuple[int, Any] = (200, {"results": [BEIJING]}),
    forecast: tuple[int, Any] | None = None,
    delay: float = 0,
) -> tuple[str, str | None]:
    """The tool message ``name(args)`` gives when Open-Meteo answers ``search``/``forecast``."""
    forecast = forecast or (200, _forecast())
    with open_meteo(loopback, search, forecast, delay) as base, requests.Session() as s:
        s.trust_env = False
        client = OpenMeteoClient(s, f"{base}/v1/search", f"{base}/v1/forecast", timeout=0.3)
        tools = oneshot_toolset(client) if name == "get_weather" else atomic_toolset(client)
        result = tools.execute(call(name, args))
    return result.content, result.error


def assert_no_placeholder(content: str) -> None:
    assert "None" not in content and "null" not in content and "nan" not in content.lower()
    json.loads(content)


COORDS = {"latitude": 39.9, "longitude": 116.4}


@pytest.mark.slow
@pytest.mark.parametrize(
    "forecast, says",
    [
        ((200, {"latitude": 39.9, "longitude": 116.4}), "no weather values"),
        ((200, _forecast(current=None, daily=None)), "no weather values"),
        (
            (
                200,
                _forecast(
                    current={"time": "t", "temperature_2m": None, "weather_code": None},
                    daily={"time": None},
                ),
            ),
            "no weather values",
        ),
        (
            (400, {"error": True, "reason": "Latitude must be in range of -90 to 90°."}),
            "Latitude must be in range",
        ),
        ((400, {"error": True, "reason": None}), "no reason given"),
        ((400, {"error": True}), "no reason given"),
        (
            (429, {"error": True, "reason": "Minutely API request limit exceeded."}),
            "rate limit (Minutely API request limit exceeded.)",
        ),
        ((502, "<html>bad gateway</html>"), "HTTP 502"),
        ((500, {"error": True, "reason": None}), "HTTP 500: unexpected body"),
    ],
)
def test_open_meteo_faults_reach_the_model_without_placeholders(loopback, forecast, says):
    for name, args in (("get_weather_by_coords", COORDS), ("get_weather", {"city": "北京"})):
        content, error = tool_message(loopback, name, args, forecast=forecast)
        assert error and says in error, (name, error)
        assert_no_placeholder(content)


@pytest.mark.parametrize(
    "override, missing",
    [
        ({"current": {"time": "t", "temperature_2m": None, "weather_code": 1}},
         ("current", ["temperature_2m"])),
        ({"daily": {"time": ["2026-09-17", "2026-09-18"], "temperature_2m_max": [25.0, None],
                    "weather_code": [None, 3], "precipitation_sum": None}},
         ("daily", ["weather_code", "precipitation_sum"])),
        ({"daily": {"time": ["2026-09-17", "2026-09-18"], "temperature_2m_max": [25.0]}},
         ("daily", None)),
        ({"current_units": None, "daily_units": None}, None),
        ({"timezone": None, "latitude": None}, None),
    ],
)  # fmt: skip
def test_gaps_in_a_forecast_are_named_not_shown_as_null(loopback, override, missing):
    for name, args in (("get_weather_by_coords", COORDS), ("get_weather", {"city": "北京"})):
        content, error = tool_message(loopback, name, args, forecast=(200, _forecast(**override)))
        assert error is None, error
        assert_no_placeholder(content)
        if missing is not None:
            block, names = missing
            data = json.loads(content)[block]
            first = data if block == "current" else data[0]
            if names is not None:
                assert first["missing"] == names
            else:
                assert data[1]["missing"] == ["temperature_2m_max"]


def test_a_timeout_is_a_tool_message(loopback):
    content, error = tool_message(loopback, "get_weather", {"city": "北京"}, delay=1.0)
    assert error and "did not answer in time" in error
    assert_no_placeholder(content)


@pytest.mark.parametrize(
    "search",
    [
        (200, {"results": None}),
        (200, {"generationtime_ms": 0.2}),
        (200, {"results": [{"name": "北京", "latitude": None, "longitude": 116.4}]}),
        (200, {"results": ["北京"]}),
    ],
)
def test_geocoding_without_usable_candidates(loopback, search):
    content, error = tool_message(loopback, "geocode_city", {"city": "北京"}, search=search)
    assert error is None and json.loads(content)["candidates"] == []
    content, error = tool_message(loopback, "get_weather", {"city": "北京"}, search=search)
    assert error and "找不到" in error
    assert_no_placeholder(content)


def test_candidate_fields_that_are_null_are_left_out(loopback):
    place = dict(BEIJING, admin2=None, population=None)
    content, error = tool_message(loopback, "geocode_city", {"city": "北京"},
                                  search=(200, {"results": [place]}))  # fmt: skip
    assert_no_placeholder(content)
    assert error is None
    (candidate,) = json.loads(content)["candidates"]  # the candidate survives its null fields
    assert candidate["name"] == BEIJING["name"] and candidate["latitude"] == BEIJING["latitude"]
    assert "admin2" not in candidate and "population" not in candidate


# ---- the fixture server answers bad parameters like the real API ------------------------------

FIXTURES = OpenMeteoFixtures(load_fixtures())
VALUE = st.one_of(
    st.text(max_size=12),
    st.integers(-1000, 1000).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["", "nan", "inf", "-0", "1e400", "39.9", "116.4", "3", "temperature_2m",
                     "temperature_2m,foo", "auto", "zh"]),
)  # fmt: skip
QUERY = st.dictionaries(
    st.sampled_from(["name", "count", "language", "latitude", "longitude", "current", "daily",
                     "forecast_days", "timezone", "format"]),
    VALUE,
)  # fmt: skip


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(path=st.sampled_from(["/v1/search", "/v1/forecast"]), query=QUERY)
def test_fixture_server_never_answers_500(path, query):
    status, body = FIXTURES("GET", path, query, b"")
    assert status in (200, 400, 404), (status, body)
    if status != 200:
        assert body["error"] is True and isinstance(body["reason"], str) and body["reason"]


@pytest.mark.parametrize(
    "query, reason",
    [
        ({"latitude": "abc", "longitude": "1"}, "invalid String value abc for key latitude"),
        ({"latitude": "1"}, "must have the same number of elements"),
        ({"latitude": "999", "longitude": "1"}, "Latitude must be in range of -90 to 90°"),
        ({"latitude": "39.9", "longitude": "116.4", "forecast_days": "x"}, "forecast_days"),
        ({"latitude": "39.9", "longitude": "116.4", "forecast_days": "17"}, "Allowed range"),
        ({"latitude": "39.9", "longitude": "116.4", "current": "temperatur_2m"},
         "invalid String value temperatur_2m"),
        ({"latitude": "39.9", "longitude": "116.4", "timezone": "Mars/Base"}, "Invalid timezone"),
    ],
)  # fmt: skip
def test_fixture_server_bad_forecast_parameters_are_400_with_reason(query, reason):
    status, body = FIXTURES("GET", "/v1/forecast", query, b"")
    assert status == 400 and reason in body["reason"]
