"""The Open-Meteo client against the fixture server on loopback: shapes and typed errors."""

from __future__ import annotations

import pytest
import requests

from toolreplay.study.weather.fixture_server import open_meteo_fixture_server
from toolreplay.study.weather.openmeteo import BadRequest, NoMatch, OpenMeteoClient, RateLimited


@pytest.fixture
def client(loopback):
    with open_meteo_fixture_server() as base, requests.Session() as s:
        s.trust_env = False  # loopback: no proxy
        yield OpenMeteoClient(s, f"{base}/v1/search", f"{base}/v1/forecast")


def test_search_returns_results_as_ranked(client):
    results = client.search("北京")
    assert [r["feature_code"] for r in results] == ["PPLC", "PPL", "PPL"]
    assert results[0]["population"] == 18960744


def test_no_results_key_is_no_match(client):
    with pytest.raises(NoMatch):
        client.search("Nowhere-xyzzy")
    with pytest.raises(NoMatch):  # Chinese names match only with language=zh
        client.search("北京", language="en")


def test_http_400_carries_the_api_reason(client):
    with pytest.raises(BadRequest) as exc:
        client.search("北京", count=1000)
    assert exc.value.reason == "Parameter count must be between 1 and 100."
    with pytest.raises(BadRequest, match="Latitude must be in range"):
        client.forecast(999, 1)


def test_forecast_shape_and_units(client):
    body = client.forecast(39.9075, 116.39723)
    assert body["current_units"]["temperature_2m"] == "°C"
    assert body["daily_units"]["precipitation_sum"] == "mm"
    assert body["daily"]["time"] == ["2026-09-17", "2026-09-18", "2026-09-19"]
    assert body["current"]["temperature_2m"] == 30.9


def test_http_429_is_rate_limited(loopback):
    with open_meteo_fixture_server(overloaded=True) as base, requests.Session() as s:
        s.trust_env = False
        c = OpenMeteoClient(s, f"{base}/v1/search", f"{base}/v1/forecast")
        with pytest.raises(RateLimited) as exc:
            c.search("北京")
    assert exc.value.status == 429 and exc.value.reason
