"""The weather study as the engine sees it: :data:`STUDY`, a :class:`~toolreplay.studies.Study`.

Declared as the entry point ``weather`` in the group ``toolreplay.studies``. Importing this
module is cheap: the toolsets, the Open-Meteo client and the baseline audit are imported when
first used.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from toolreplay.studies import SnapshotTests, Study
from toolreplay.study.weather.endpoints import TOOL_URLS
from toolreplay.study.weather.report_texts import FIDELITY_CHECKS, GLOSSARY

if TYPE_CHECKING:
    import requests

    from toolreplay.study.weather.hints import StandinHints
    from toolreplay.study.weather.openmeteo import OpenMeteoClient
    from toolreplay.tools.toolset import Toolset

#: The reference heuristics of the oneshot baseline, in the study's order.
HEURISTICS = ("admin_seat", "population_order", "shi_retry")


def make_toolset(
    name: str, client: OpenMeteoClient, heuristics: tuple[str, ...] | None = None
) -> Toolset:
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


def tool_client(session: requests.Session, urls: Mapping[str, str]) -> OpenMeteoClient:
    """An Open-Meteo client over ``session`` at ``urls["geocoding_url"]`` and
    ``urls["forecast_url"]``."""
    from toolreplay.study.weather.openmeteo import OpenMeteoClient

    return OpenMeteoClient(session, urls["geocoding_url"], urls["forecast_url"])


class _BaselineAudit:
    """The audit's checks of the baseline: every recorded get_weather call, and its code on
    generated geocoding answers, held against the independent reference
    (:mod:`toolreplay.study.weather.reference`)."""

    def check_baseline(
        self, set_dir: Any, suite: Any, manifest: Any, oneshot: Any, ablated: Any
    ) -> Any:
        from toolreplay.study.weather.baseline import check_baseline

        return check_baseline(set_dir, suite, manifest, oneshot, ablated)

    def check_properties(self) -> Any:
        from toolreplay.study.weather.properties import check_properties

        def baseline(session: requests.Session, on: tuple[str, ...]) -> Toolset:
            return make_toolset("oneshot", tool_client(session, TOOL_URLS), on)

        return check_properties(baseline=baseline)

    def exercised_heuristics(self, path: Any) -> Mapping[str, list[tuple[str, bool]]]:
        from toolreplay.study.weather.baseline import exercised_heuristics

        return exercised_heuristics(path)

    @property
    def cassette_probe(self) -> Any:
        """The replay workers read each oneshot cassette's Open-Meteo traffic for the check,
        and hold its calls against the reference there."""
        from toolreplay.study.weather.calls import CallsProbe

        return CallsProbe("oneshot")


@contextmanager
def fixture_server() -> Iterator[tuple[Mapping[str, str], str]]:
    """The Open-Meteo fixture server on loopback: its endpoints and the fixtures' ``today``."""
    from toolreplay.study.weather.fixture_server import load_fixtures, open_meteo_fixture_server

    with open_meteo_fixture_server() as base:
        urls = {"geocoding_url": f"{base}/v1/search", "forecast_url": f"{base}/v1/forecast"}
        yield urls, str(load_fixtures()["today"])


def parse_standin(raw: Any) -> StandinHints:
    """A question's ``standin:`` block (:func:`toolreplay.study.weather.hints.parse_standin`,
    imported when an eval file is first read)."""
    from toolreplay.study.weather.hints import parse_standin as parse

    return parse(raw)


def standin_policy(suite: Any, seed: int, trial: int) -> Any:
    """The weather stand-in model in process
    (:class:`~toolreplay.study.weather.standin.StandinPolicy`)."""
    from toolreplay.study.weather.standin import StandinPolicy

    return StandinPolicy(suite, seed=seed, trial=trial)


def standin_server(suite: Any, seed: int, trial: int) -> AbstractContextManager[str]:
    """The weather stand-in model on loopback, one trial (yields ``.../v1``)."""
    from toolreplay.study.weather.standin import standin_server as serve

    return serve(suite, seed=seed, trial=trial)


STUDY: Study[OpenMeteoClient] = Study(
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
    near_miss_heuristic="shi_retry",  # the study's first baseline had lost the 市 retry
    near_miss_title="Weakened baseline (no 市 retry), narrow judge (°C only)",
    fidelity_checks=FIDELITY_CHECKS,
    glossary=GLOSSARY,
    baseline_audit=_BaselineAudit(),
    fixture_server=fixture_server,
    question_block="standin",  # the stand-in's hints and per-trial variations
    parse_question_block=parse_standin,
    standin_policy=standin_policy,
    standin_server=standin_server,
    # this repository's snapshot tests of the reference set (tests/test_snapshots.py)
    snapshot_tests=SnapshotTests("tests/test_snapshots.py", "test_episode", "reference"),
)
