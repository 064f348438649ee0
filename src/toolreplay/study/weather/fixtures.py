"""pytest fixtures of the weather study (entry point ``pytest11``: ``toolreplay-weather``).

- ``open_meteo_client``: an :class:`~toolreplay.study.weather.openmeteo.OpenMeteoClient` on
  the plugin's ``http_session`` (``TOOLREPLAY_GEOCODING_URL`` / ``TOOLREPLAY_FORECAST_URL``
  override the public endpoints); under a cassette it replays.
"""

from __future__ import annotations

import os
from typing import Any

import pytest


@pytest.fixture
def open_meteo_client(http_session: Any) -> Any:
    from toolreplay.study.weather.openmeteo import FORECAST_URL, GEOCODING_URL, OpenMeteoClient

    return OpenMeteoClient(
        http_session,
        os.environ.get("TOOLREPLAY_GEOCODING_URL") or GEOCODING_URL,
        os.environ.get("TOOLREPLAY_FORECAST_URL") or FORECAST_URL,
    )
