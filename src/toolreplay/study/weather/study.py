"""The weather study as the engine sees it: :data:`STUDY`, a :class:`~toolreplay.studies.Study`.

Declared as the entry point ``weather`` in the group ``toolreplay.studies``. Importing this
module is cheap: the toolsets, the Open-Meteo client and the baseline audit are imported when
first used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolreplay.studies import Study

if TYPE_CHECKING:
    import requests

    from toolreplay.tools.toolset import Toolset

#: The reference heuristics of the oneshot baseline, in the study's order.
HEURISTICS = ("admin_seat", "population_order", "shi_retry")

#: Open-Meteo's public endpoints, by the manifest key that stores each.
TOOL_URLS = {
    "geocoding_url": "https://geocoding-api.open-meteo.com/v1/search",
    "forecast_url": "https://api.open-meteo.com/v1/forecast",
}


def make_toolset(name: str, client: Any, heuristics: tuple[str, ...] | None = None) -> Toolset:
    """``oneshot`` (with ``heuristics`` switched on, the others off) or ``atomic`` over an
    :class:`~toolreplay.study.weather.openmeteo.OpenMeteoClient`."""
    from toolreplay.study.weather import toolsets

    h = None
    if heuristics is not None:
        h = toolsets.Heuristics(**{n: n in heuristics for n in toolsets.Heuristics.names()})
    return toolsets.make_toolset(name, client, h)


def tool_schemas() -> Mapping[str, tuple[dict[str, Any], ...]]:
    """Every toolset's schemas by toolset name."""
    from toolreplay.study.weather.toolsets import all_tool_schemas

    return all_tool_schemas()


def tool_client(session: requests.Session, urls: Mapping[str, str]) -> Any:
    """An Open-Meteo client over ``session`` at ``urls["geocoding_url"]`` and
    ``urls["forecast_url"]``."""
    from toolreplay.study.weather.openmeteo import OpenMeteoClient

    return OpenMeteoClient(session, urls["geocoding_url"], urls["forecast_url"])


class _BaselineAudit:
    """The audit's check of the three heuristics, read from the geocoding traffic."""

    def check_baseline(
        self, set_dir: Any, suite: Any, manifest: Any, oneshot: Any, ablated: Any
    ) -> Any:
        from toolreplay.study.weather.baseline import check_baseline

        return check_baseline(set_dir, suite, manifest, oneshot, ablated)

    def exercised_heuristics(self, path: Any) -> Mapping[str, list[tuple[str, bool]]]:
        from toolreplay.study.weather.baseline import exercised_heuristics

        return exercised_heuristics(path)


STUDY = Study(
    name="weather",
    toolsets=("oneshot", "atomic"),
    make_toolset=make_toolset,
    tool_schemas=tool_schemas,
    tool_client=tool_client,
    tool_urls=TOOL_URLS,
    vocabulary="toolreplay.study.weather.vocabulary:WEATHER",  # imported when first judged
    toolset_labels={
        "oneshot": "get_weather(city)",
        "atomic": "geocode_city → get_weather_by_coords",
    },
    baseline_toolset="oneshot",
    heuristics=HEURISTICS,
    baseline_audit=_BaselineAudit(),
)
