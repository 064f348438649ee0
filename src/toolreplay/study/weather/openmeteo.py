"""Open-Meteo client over ``requests`` (geocoding ``/v1/search`` and forecast ``/v1/forecast``).

The :class:`requests.Session` is passed in, so vcrpy, a test transport or the fixture server
can sit underneath. Shapes returned are the API's own JSON (dicts), unchanged.

Errors (all :class:`OpenMeteoError`, carrying the API's ``reason`` text):

- :class:`NoMatch`: geocoding answered HTTP 200 with no ``results`` key;
- :class:`BadRequest`: HTTP 400 ``{"error": true, "reason": ...}``;
- :class:`RateLimited`: HTTP 429 (the free tier's overload answer);
- :class:`OpenMeteoError` itself for any other non-200 status or a body that is not JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import requests

from toolreplay.study.weather.endpoints import TOOL_URLS
from toolreplay.tools.toolset import ToolError

GEOCODING_URL = TOOL_URLS["geocoding_url"]
FORECAST_URL = TOOL_URLS["forecast_url"]


#: ``current=`` variables requested by every forecast call (units in ``current_units``).
CURRENT_VARIABLES = ("temperature_2m", "relative_humidity_2m", "weather_code", "wind_speed_10m")


#: ``daily=`` variables requested by every forecast call (units in ``daily_units``).
DAILY_VARIABLES = (
    "weather_code",
    "temperature_2m_max",
    "temperature_2m_min",
    "precipitation_sum",
    "wind_speed_10m_max",
)


class OpenMeteoError(ToolError):
    """An Open-Meteo call failed. ``status`` is the HTTP status, ``reason`` the API's text
    (the toolsets send both to the model as a tool message)."""

    def __init__(self, message: str, *, status: int | None = None, reason: str = "") -> None:
        super().__init__(message, reason=reason)
        self.status = status


class NoMatch(OpenMeteoError):
    """Geocoding found nothing: HTTP 200 and no ``results`` key in the body."""


class BadRequest(OpenMeteoError):
    """HTTP 400: a parameter was rejected; ``reason`` says which."""


class RateLimited(OpenMeteoError):
    """HTTP 429: the API is overloaded or the free-tier quota is spent."""


@dataclass(frozen=True)
class OpenMeteoClient:
    """Calls Open-Meteo through ``session``.

    ``geocoding_url`` and ``forecast_url`` default to the public API; point them at the
    fixture server (or anything speaking the same API) to record offline.
    ``timeout`` is in seconds.
    """

    session: requests.Session
    geocoding_url: str = GEOCODING_URL
    forecast_url: str = FORECAST_URL
    timeout: float = 20.0

    def search(self, name: str, *, count: int = 10, language: str = "zh") -> list[dict[str, Any]]:
        """Geocode ``name``: the ``results`` list exactly as Open-Meteo ranked it.

        Each result carries ``name``, ``latitude``/``longitude`` (degrees), ``feature_code``
        (GeoNames, e.g. ``PPLC``), ``admin1``.. and ``population`` when known (empty fields are
        omitted by the API). Raises :class:`NoMatch` when nothing matches.
        """
        body = self._get(
            self.geocoding_url,
            {"name": name, "count": count, "language": language, "format": "json"},
        )
        results = body.get("results")
        if not isinstance(results, list) or not results:
            raise NoMatch(f"no place named {name!r}", status=200, reason="no results")
        return [r for r in results if isinstance(r, dict)]

    def forecast(
        self, latitude: float, longitude: float, *, forecast_days: int = 3
    ) -> dict[str, Any]:
        """Forecast for a point: the API body with ``current``/``current_units`` and
        ``daily``/``daily_units`` (°C, %, km/h, mm as the ``*_units`` say), local timezone.
        """
        return self._get(
            self.forecast_url,
            {
                "latitude": latitude,
                "longitude": longitude,
                "current": ",".join(CURRENT_VARIABLES),
                "daily": ",".join(DAILY_VARIABLES),
                "timezone": "auto",
                "forecast_days": forecast_days,
            },
        )

    def _get(self, url: str, params: dict[str, Any]) -> dict[str, Any]:
        response = self.session.get(url, params=params, timeout=self.timeout)
        try:
            body = response.json()
        except ValueError:
            raise OpenMeteoError(
                f"{url}: HTTP {response.status_code} with a body that is not JSON",
                status=response.status_code,
            ) from None
        raw_reason = body.get("reason") if isinstance(body, dict) else None
        reason = str(raw_reason) if raw_reason not in (None, "") else ""
        shown = reason or "no reason given"
        if response.status_code == 400:
            raise BadRequest(f"Open-Meteo rejected the request: {shown}", status=400, reason=reason)
        if response.status_code == 429:
            raise RateLimited(
                f"Open-Meteo rate limit ({shown}); try again later", status=429, reason=reason
            )
        if response.status_code != 200 or not isinstance(body, dict):
            raise OpenMeteoError(
                f"{url}: HTTP {response.status_code}: {reason or 'unexpected body'}",
                status=response.status_code,
                reason=reason,
            )
        return body
