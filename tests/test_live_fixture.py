"""`tool_choice` from the eval file, and `record --model-source live --tools fixture`: a live
model with the bundled Open-Meteo fixture server for the tools."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from toolreplay.cassettes.manifest import read_manifest
from toolreplay.cassettes.store import read_cassette
from toolreplay.cli.main import app
from toolreplay.evals import load_eval
from toolreplay.models.base import ModelSettings
from toolreplay.models.openai_chat import OpenAIChatModel
from toolreplay.study.weather.fixture_server import load_fixtures
from toolreplay.study.weather.standin import STANDIN_MODEL, standin_server

from .conftest import EVAL_FILE
from .wire_shapes import completion

NAMED = {"type": "function", "function": {"name": "geocode_city"}}


def small_eval(tmp_path: Path, **experiment) -> Path:
    doc = yaml.safe_load(EVAL_FILE.read_text(encoding="utf-8"))
    doc["experiment"] = {"hosts": ["loop"], "toolsets": ["atomic"], **experiment}
    doc["questions"] = [q for q in doc["questions"] if q["id"] in ("beijing", "shanghai-rain")]
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def test_tool_choice_from_the_eval_file_is_sent_with_tools_only(tmp_path):
    assert load_eval(small_eval(tmp_path)).experiment.tool_choice == "auto"
    suite = load_eval(small_eval(tmp_path, tool_choice=NAMED))
    assert suite.experiment.tool_choice == NAMED
    sent = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=completion({"role": "assistant", "content": "x"}))

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        model = OpenAIChatModel(
            ModelSettings("http://m.test/v1", "m"), http, tool_choice=suite.experiment.tool_choice
        )
        tools = [{"type": "function", "function": {"name": "geocode_city", "parameters": {}}}]
        model.complete([{"role": "user", "content": "q"}], tools)
        model.complete([{"role": "user", "content": "q"}], None)
    assert sent[0]["tool_choice"] == NAMED
    assert "tool_choice" not in sent[1] and "tools" not in sent[1]


def test_bad_tool_choice_is_named(tmp_path):
    import pytest

    from toolreplay.evals import EvalFileError

    with pytest.raises(EvalFileError, match=r"experiment\.tool_choice"):
        load_eval(small_eval(tmp_path, tool_choice="sometimes"))


@pytest.mark.slow
def test_record_live_with_the_fixture_open_meteo_then_replay(tmp_path, loopback, monkeypatch):
    eval_path = small_eval(tmp_path, tool_choice=NAMED, max_rounds=3)
    suite = load_eval(eval_path)
    key = "-".join(["sk", "test", "0123456789abcdefghijklmnop"])  # built: no key-like literal
    monkeypatch.delenv("DASHSCOPE_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    cassettes = tmp_path / "cassettes"
    with standin_server(suite) as model_url:  # stands in for a live third-party server
        result = CliRunner().invoke(
            app,
            [
                "record",
                "--model-source", "live",
                "--tools",
                "fixture",
                "--base-url",
                model_url,
                "--api-key-env",
                "OPENAI_API_KEY",
                "--model",
                STANDIN_MODEL,
                "--eval",
                str(eval_path),
                "--cassettes",
                str(cassettes),
                "--set",
                "live-fixture",
                "--no-ablations",
            ],
        )
    assert result.exit_code == 0, result.output
    set_dir = cassettes / "live-fixture"
    manifest = read_manifest(set_dir)
    assert manifest.provenance == "live"
    assert manifest.today == str(load_fixtures()["today"])  # the fixtures' date, not the clock
    assert manifest.tool_urls["geocoding_url"] == "http://127.0.0.1/v1/search"
    assert manifest.settings["tool_choice"] == NAMED
    interactions = read_cassette(set_dir / "loop+atomic" / "beijing.yaml")
    bodies = [i["request"].get("parsed_body") for i in interactions]
    model_bodies = [b for b in bodies if isinstance(b, dict) and "messages" in b]
    assert model_bodies[0]["tool_choice"] == NAMED
    assert "tool_choice" not in model_bodies[-1]  # the forced final round offers no tools
    assert any(i["request"]["uri"].startswith("http://127.0.0.1/v1/forecast") for i in interactions)
    text = "".join(p.read_text(encoding="utf-8") for p in set_dir.rglob("*.yaml"))
    assert key not in text
    monkeypatch.delenv("OPENAI_API_KEY")
    out_dir = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--eval",
            str(eval_path),
            "--cassettes",
            str(cassettes),
            "--set",
            "live-fixture",
            "--out",
            str(out_dir),
        ],
    )
    assert "loop+atomic" in result.output and "Traceback" not in result.output, result.output
    results = json.loads((out_dir / "results.json").read_text(encoding="utf-8"))
    assert len(results["episodes"]) == 2


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("nowhere=https://mirror.example/v1", "the study has no such endpoint (its keys: "
         "geocoding_url, forecast_url)"),
        ("geocoding_url", "give KEY=URL, e.g. geocoding_url=https://mirror.example/v1"),
        ("=https://x", "give KEY=URL"),
    ],
)  # fmt: skip
def test_a_tool_url_names_one_of_the_studys_endpoints(tmp_path, value, said):
    """``record --tool-url KEY=URL``: the keys are the study's (the engine knows no tool of
    its own); anything else is a usage error before any request, and nothing is written."""
    result = CliRunner().invoke(
        app,
        ["record", "--model-source", "live", "--tool-url", value, "--eval", str(EVAL_FILE),
         "--cassettes", str(tmp_path / "c"), "--set", "s"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert said in " ".join(result.output.split())
    assert not (tmp_path / "c").exists()
