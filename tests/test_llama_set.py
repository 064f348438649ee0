"""The committed live set recorded against llama-cpp-python's server (a third-party
OpenAI-compatible server) with gemma-3-270m: it replays offline to its committed results.
CI never builds llama.cpp; it only replays."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from toolreplay.cassettes.manifest import read_manifest
from toolreplay.cassettes.store import read_cassette
from toolreplay.cli.main import app

from .conftest import REPO

SET = "llama-gemma3-270m"
EVAL = REPO / "evals" / f"{SET}.yaml"
SET_DIR = REPO / "cassettes" / SET
REPORT = REPO / "reports" / SET


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
    assert manifest.tool_urls["geocoding_url"] == "http://127.0.0.1/v1/search"  # the fixture server
    assert manifest.settings["tool_choice"] == {
        "type": "function", "function": {"name": "get_weather"}
    }  # fmt: skip
    first = read_cassette(SET_DIR / "loop+oneshot" / "beijing.yaml")[0]
    assert first["request"]["parsed_body"]["tool_choice"]["function"]["name"] == "get_weather"


def test_the_llama_set_shows_the_servers_real_failure():
    """Round 1: a grammar-constrained get_weather call in llama.cpp's shape (long id, legacy
    function_call beside tool_calls); round 2: the server refuses the assistant message's
    null content with HTTP 500, and the episode ends with stop reason error, not a crash."""
    results = json.loads((REPORT / "results.json").read_text(encoding="utf-8"))
    assert len(results["episodes"]) == 8
    for ep in results["episodes"]:
        assert ep["stop_reason"] == "error" and ep["tool_chain"] == ["get_weather"]
        assert [f["mode"] for f in ep["failure_modes"]] == ["empty_answer"]
    raw = read_cassette(SET_DIR / "single+oneshot" / "beijing.yaml")
    reply = raw[0]["response"]["body"]["parsed_body"]["choices"][0]["message"]
    assert reply["tool_calls"][0]["id"].startswith("call__0_get_weather_cmpl-")
    assert reply["function_call"]["name"] == "get_weather"
    assert raw[-1]["response"]["status"]["code"] == 500
