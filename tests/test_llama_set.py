"""The committed live set recorded against llama-cpp-python's server (a third-party
OpenAI-compatible server) with gemma-3-270m: it replays offline to its committed results.
CI never builds llama.cpp; it only replays."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from toolreplay.cassettes import read_cassette, read_manifest
from toolreplay.cli import app

from .conftest import REPO

SET = "llama-gemma3-270m"
EVAL = REPO / "evals" / f"{SET}.yaml"
SET_DIR = REPO / "cassettes" / SET
REPORT = REPO / "reports" / SET

pytestmark = pytest.mark.skipif(
    not (SET_DIR / "manifest.json").exists(),
    reason=f"cassettes/{SET}/ is not recorded yet (needs a llama-cpp-python build; README, "
    "'A real third-party server')",
)


def test_the_llama_set_replays_to_its_committed_results(tmp_path):
    result = CliRunner().invoke(
        app,
        ["run", "--eval", str(EVAL), "--cassettes", str(SET_DIR.parent), "--set", SET,
         "--out", str(tmp_path)],
    )  # fmt: skip
    assert "Traceback" not in result.output, result.output
    assert "single+oneshot" in result.output and "loop+oneshot" in result.output
    fresh = (tmp_path / "results.json").read_bytes()
    assert fresh == (REPORT / "results.json").read_bytes(), "stale reports/" + SET


def test_the_llama_set_is_labelled_live_with_fixture_tools():
    manifest = read_manifest(SET_DIR)
    assert manifest.provenance == "live"
    assert manifest.endpoint_host == "127.0.0.1"
    assert manifest.geocoding_url == "http://127.0.0.1/v1/search"  # the fixture server
    assert manifest.settings["tool_choice"] == {
        "type": "function", "function": {"name": "get_weather"}
    }  # fmt: skip
    first = read_cassette(SET_DIR / "loop+oneshot" / "beijing.yaml")[0]
    assert first["request"]["parsed_body"]["tool_choice"]["function"]["name"] == "get_weather"
