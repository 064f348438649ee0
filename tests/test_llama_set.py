"""The committed live set recorded against llama-cpp-python's server (a third-party
OpenAI-compatible server) with gemma-3-270m: it replays offline to its committed results.
CI never builds llama.cpp; it only replays."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from toolreplay.cassettes.manifest import read_manifest
from toolreplay.cassettes.store import read_cassette
from toolreplay.cli.main import app

from .conftest import REPO

SET = "llama-gemma3-270m"
EVAL = REPO / "evals" / f"{SET}.yaml"
SET_DIR = REPO / "cassettes" / SET
REPORT = REPO / "reports" / SET


@pytest.mark.slow
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
        assert [f["mode"] for f in ep["failure_modes"]] == ["error"]  # never empty_answer
        assert ep["error"]["status"] == 500
        assert ep["error"]["endpoint"] == "http://127.0.0.1/v1/chat/completions"
        assert ep["error"]["message"].startswith("7 validation errors:\n")
        assert "HTTP 500" in ep["failure_modes"][0]["explanation"]
        assert ep["verdict"] == "no answer: the episode ended on a model API error"
    for c in results["configurations"]:
        assert c["failure_modes"] == {"error": 4} and c["failure_mode_rates"] == {"error": 1.0}
    raw = read_cassette(SET_DIR / "single+oneshot" / "beijing.yaml")
    reply = raw[0]["response"]["body"]["parsed_body"]["choices"][0]["message"]
    assert reply["tool_calls"][0]["id"].startswith("call__0_get_weather_cmpl-")
    assert reply["function_call"]["name"] == "get_weather"
    assert raw[-1]["response"]["status"]["code"] == 500


@pytest.mark.slow
def test_the_llama_report_says_error_and_that_the_tools_were_the_fixture_server():
    """The page counts the HTTP 500 as `error ×4` per configuration, shows the server's message
    after the last transcript message (cut with "show all") with the badge there and not on
    the tool message, and says per endpoint what answered: a live model, the fixture server."""
    from bs4 import BeautifulSoup

    page = BeautifulSoup((REPORT / "index.html").read_text(encoding="utf-8"), "html5lib")

    def text(tag) -> str:
        return " ".join(tag.get_text().split())

    verdict = text(page.select_one("#verdict"))
    for name in ("single+oneshot", "loop+oneshot"):
        row = page.select_one(f"#verdict tr[data-configuration='{name}']")
        assert text(row) == f"{name} failed 0/4 0% error ×4"
    assert "empty answer" not in verdict
    for cell in page.select("#grid td.cell[data-configuration]"):
        assert text(cell.select_one(".cell-modes")) == "error ×4"
    banner = page.select_one(".banner")
    assert "live" in banner["class"]
    assert "the tools were the fixture server, not live APIs" in text(banner)
    assert "Open-Meteo API" not in text(banner)
    facts = {text(d.dt): text(d.dd) for d in page.select(".facts > div")}
    assert facts["model endpoint"] == "http://127.0.0.1/v1: live"
    assert facts["geocoding endpoint"] == "http://127.0.0.1/v1/search: the fixture server"
    assert facts["forecast endpoint"] == "http://127.0.0.1/v1/forecast: the fixture server"
    episodes = page.select("details.episode")
    assert len(episodes) == 8
    for ep in episodes:
        error = ep.select_one(".msg.role-error")
        assert error is not None and error is ep.select(".msg")[-1]
        assert "HTTP 500 from http://127.0.0.1/v1/chat/completions" in text(error)
        assert error.select_one(".badge.mode-error") is not None
        assert "7 validation errors:" in text(error.select_one(".head"))
        assert "show all" in text(error.select_one("details.more summary"))
        tool = ep.select_one(".msg.role-tool")
        assert tool.select_one(".badge.mode") is None and "has-evidence" not in tool["class"]
    # the eight identical errors are one cause, said in one line, its episodes listed
    (cause,) = page.select("#failures .error-cause")
    assert "messages[2].content: Input should be a valid string (got null)" in text(cause)
    listed = cause.select("ul.cause-episodes li a")
    assert len(listed) == 8
