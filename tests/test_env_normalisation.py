"""Normalisation of environment values: what only the recording machine had (a loopback port,
a temporary folder) never reaches a model request as it is, the same way when recording and
when replaying, so a set recorded on loopback replays (issue 22's case: Open-Meteo on loopback
answering 503, its port in the tool's error text)."""

from __future__ import annotations

import tempfile

import pytest

from toolreplay.cassettes.environment import normalise_environment
from toolreplay.cassettes.manifest import read_manifest
from toolreplay.doubles.loopback import serve
from toolreplay.models.base import ModelSettings
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.record import record_live
from toolreplay.runs.replay import replay_set
from toolreplay.study.weather.fixture_server import open_meteo_fixture_server
from toolreplay.study.weather.standin import standin_server


def test_loopback_ports_and_temporary_paths_are_normalised_idempotently():
    text = (
        "http://127.0.0.1:36173/v1/forecast: HTTP 503; http://localhost:8080/x; "
        "http://[::1]:9/y; https://api.open-meteo.com:443/v1; "
        f"{tempfile.gettempdir()}/tmpab12cd/out.json"
    )
    once = normalise_environment(text)
    assert once == (
        "http://127.0.0.1/v1/forecast: HTTP 503; http://localhost/x; http://[::1]/y; "
        "https://api.open-meteo.com:443/v1; $TMPDIR/tmpab12cd/out.json"
    )
    assert normalise_environment(once) == once


@pytest.mark.slow
def test_a_set_recorded_against_a_failing_loopback_api_replays(suite, tmp_path, loopback):
    """The forecast endpoint answers 503: the tool's error text names its URL, port included,
    and the model's next request carries that text. Replay (port-less URLs) must match it."""

    def failing(method, path, query, body):
        return 503, {"error": True, "reason": "overloaded"}

    config = Configuration("single", "oneshot")
    with (
        standin_server(suite) as model_url,
        open_meteo_fixture_server() as om,
        serve(failing) as down,
    ):
        record_live(
            tmp_path / "down",
            suite,
            [config],
            ModelSettings(base_url=model_url, model="toolreplay-standin", api_key="k"),
            tool_urls={"geocoding_url": f"{om}/v1/search", "forecast_url": f"{down}/v1/forecast"},
        )
    text = "".join(p.read_text("utf-8") for p in (tmp_path / "down").rglob("*.yaml"))
    assert "HTTP 503" in text and "127.0.0.1/v1/forecast: HTTP 503" in text
    assert ":" + down.rsplit(":", 1)[1] not in text  # the recording's port reached no request
    episodes = replay_set(tmp_path / "down", suite, [config])
    assert len(episodes) == len(suite.questions)
    assert read_manifest(tmp_path / "down").provenance == "live"
