"""Open-Meteo fixture server: ``/v1/search`` and ``/v1/forecast`` on loopback, in the real
API's shapes, from ``data/open_meteo.yaml`` (values from public records, sources named
per entry; see that file).

Behaviour copied from the real API: no ``results`` key when nothing matches; HTTP 400
``{"error": true, "reason": ...}`` for every bad parameter (name missing, count not a number
or out of 1..100, latitude/longitude missing, not numbers or out of range, unknown variables,
forecast_days not a number or out of 0..16, unknown timezone), never a 500; a known variable
the fixture has no data for is ``null``, as the real API answers gaps; HTTP 404 ``Not Found``
for other paths.
``overloaded=True`` answers every request with HTTP 429, as the free tier does under load.
A forecast for a point with no fixture cell within 0.5° is a 404 naming the point.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from importlib import resources
from typing import Any

import yaml

from toolreplay.doubles.loopback import serve

UNITS = {
    "time": "iso8601",
    "interval": "seconds",
    "temperature_2m": "°C",
    "relative_humidity_2m": "%",
    "weather_code": "wmo code",
    "wind_speed_10m": "km/h",
    "temperature_2m_max": "°C",
    "temperature_2m_min": "°C",
    "precipitation_sum": "mm",
    "wind_speed_10m_max": "km/h",
}
#: Variables the fixture server knows (the real API knows many more; these are the ones the
#: toolsets ask for). Any other name is answered like the real API answers a misspelt one.
CURRENT_KNOWN = frozenset(
    {"temperature_2m", "relative_humidity_2m", "weather_code", "wind_speed_10m"}
)
DAILY_KNOWN = frozenset(
    {"weather_code", "temperature_2m_max", "temperature_2m_min", "precipitation_sum",
     "wind_speed_10m_max"}
)  # fmt: skip
CJK = re.compile(r"[\u4e00-\u9fff]")


def load_fixtures() -> dict[str, Any]:
    """The bundled fixture data (``toolreplay/study/weather/data/open_meteo.yaml``), a fresh
    copy each call (the file is parsed once per process)."""
    return copy.deepcopy(_fixtures())


@functools.lru_cache(maxsize=1)
def _fixtures() -> dict[str, Any]:
    source = resources.files("toolreplay.study.weather").joinpath("data/open_meteo.yaml")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data: dict[str, Any] = yaml.load(source.read_text("utf-8"), Loader=loader)
    return data


def _error(status: int, reason: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": True, "reason": reason}


@dataclass
class OpenMeteoFixtures:
    """The request handler (a :data:`~toolreplay.loopback.JsonApp`)."""

    data: dict[str, Any]
    overloaded: bool = False

    def __call__(
        self, method: str, path: str, query: dict[str, str], body: bytes
    ) -> tuple[int, Any]:
        if self.overloaded:
            return _error(429, "Too many concurrent requests")
        if path == "/v1/search":
            return self.search(query)
        if path == "/v1/forecast":
            return self.forecast(query)
        return _error(404, "Not Found")

    def search(self, query: dict[str, str]) -> tuple[int, Any]:
        name = query.get("name")
        if not name:
            return _error(400, "No value found for the key 'name' at path 'name'")
        try:
            count = int(query.get("count", "10"))
        except ValueError:
            return _error(400, "Parameter count must be between 1 and 100.")
        if not 1 <= count <= 100:
            return _error(400, "Parameter count must be between 1 and 100.")
        entry = self.data["search"].get(name)
        # Chinese names match only with language=zh (as the real API does).
        if entry is None or (CJK.search(name) and query.get("language") != "zh"):
            return 200, {"generationtime_ms": 0.3}
        return 200, {"results": entry["results"][:count], "generationtime_ms": 0.5}

    def forecast(self, query: dict[str, str]) -> tuple[int, Any]:
        if "latitude" not in query or "longitude" not in query:
            return _error(
                400, "Parameter 'latitude' and 'longitude' must have the same number of elements"
            )
        coords = []
        for key in ("latitude", "longitude"):
            try:
                coords.append(float(query[key]))
            except ValueError:
                return _error(
                    400, f"Cannot initialize Float from invalid String value {query[key]} "
                    f"for key {key}",
                )  # fmt: skip
        lat, lon = coords
        if not -90 <= lat <= 90:
            return _error(400, f"Latitude must be in range of -90 to 90°. Given: {lat}.")
        if not -180 <= lon <= 180:
            return _error(400, f"Longitude must be in range of -180 to 180°. Given: {lon}.")
        try:
            days = int(query.get("forecast_days", "7"))
        except ValueError:
            return _error(
                400, "Cannot initialize Int from invalid String value "
                f"{query['forecast_days']} for key forecast_days",
            )  # fmt: skip
        if not 0 <= days <= 16:
            return _error(400, f"Forecast days is invalid. Allowed range 0 to 16. Given {days}.")
        if query.get("timezone", "auto") not in ("auto", "GMT", "UTC", "Asia/Shanghai"):
            return _error(400, "Invalid timezone")
        current_vars = [v for v in query.get("current", "").split(",") if v]
        daily_vars = [v for v in query.get("daily", "").split(",") if v]
        for v in current_vars:
            if v not in CURRENT_KNOWN:
                return _error(
                    400, "Cannot initialize ForecastVariable from invalid String value "
                    f"{v} for key current",
                )  # fmt: skip
        for v in daily_vars:
            if v not in DAILY_KNOWN:
                return _error(
                    400, "Invalid value: Cannot initialize ForecastVariableDaily from invalid "
                    f"String value {v}",
                )  # fmt: skip
        cell = next(
            (
                c
                for c in self.data["forecast"]
                if abs(c["latitude"] - lat) <= 0.5 and abs(c["longitude"] - lon) <= 0.5
            ),
            None,
        )
        if cell is None:
            return _error(404, f"toolreplay fixture server has no grid cell near {lat},{lon}")
        body: dict[str, Any] = {
            "latitude": cell["latitude"],
            "longitude": cell["longitude"],
            "generationtime_ms": 0.1,
            "utc_offset_seconds": 28800,
            "timezone": "Asia/Shanghai",
            "timezone_abbreviation": "GMT+8",
            "elevation": cell["elevation"],
        }
        if current_vars:
            body["current_units"] = {k: UNITS[k] for k in ("time", "interval", *current_vars)}
            body["current"] = {
                "time": cell["current"]["time"],
                "interval": 900,
                **{v: cell["current"].get(v) for v in current_vars},
            }
        if daily_vars:
            start = date.fromisoformat(self.data["today"])
            body["daily_units"] = {k: UNITS[k] for k in ("time", *daily_vars)}
            body["daily"] = {
                "time": [(start + timedelta(days=i)).isoformat() for i in range(days)],
                **{
                    v: (list(cell["daily"].get(v) or []) + [None] * days)[:days] for v in daily_vars
                },
            }
        return 200, body


@contextmanager
def open_meteo_fixture_server(*, overloaded: bool = False) -> Iterator[str]:
    """Run the fixture server on loopback; yields its base URL (``http://127.0.0.1:PORT``).
    Geocoding is at ``{base}/v1/search``, forecasts at ``{base}/v1/forecast``."""
    with serve(OpenMeteoFixtures(load_fixtures(), overloaded=overloaded)) as base:
        yield base
