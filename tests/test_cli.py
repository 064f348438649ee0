from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from toolreplay.cli import app

from .conftest import EVAL_FILE, REPO

runner = CliRunner()


def run_cli(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_run_prints_the_table_and_writes_identical_results_twice(tmp_path):
    common = ["--eval", str(EVAL_FILE), "--cassettes", str(REPO / "cassettes")]
    first = run_cli("run", *common, "--out", str(tmp_path / "a"))
    second = run_cli("run", *common, "--out", str(tmp_path / "b"))
    assert first.exit_code == 0, first.output
    assert second.exit_code == 0, second.output
    assert "single+atomic" in first.output and "0/4" in first.output and "3.25" in first.output
    a = (tmp_path / "a" / "results.json").read_bytes()
    assert a == (tmp_path / "b" / "results.json").read_bytes()
    results = json.loads(a)
    assert results["cassette_set"] == "reference"
    assert [c["name"] for c in results["configurations"]] == [
        "single+oneshot", "loop+oneshot", "single+atomic", "loop+atomic",
    ]  # fmt: skip
    ep = results["episodes"][0]
    for key in ("configuration", "question_id", "question", "answer", "passed", "rounds",
                "tool_calls", "tool_chain", "stop_reason"):  # fmt: skip
        assert key in ep


def test_record_live_without_key_refuses_clearly(tmp_path, monkeypatch):
    monkeypatch.delenv("DASHSCOPE_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = runner.invoke(
        app,
        [
            "record",
            "--model-source",
            "live",
            "--cassettes",
            str(tmp_path),
            "--eval",
            str(EVAL_FILE),
        ],
    )
    assert result.exit_code == 1  # not a usage error: the environment lacks a key
    assert "needs an API key" in result.output
    assert not any(tmp_path.iterdir())


def test_record_needs_a_model_source(tmp_path):
    result = runner.invoke(app, ["record", "--eval", str(EVAL_FILE), "--cassettes", str(tmp_path)])
    assert result.exit_code == 2
    assert "'--model-source': missing; choose stand-in or live" in " ".join(result.output.split())
    result = runner.invoke(app, ["record", "--model-source", "both", "--cassettes", str(tmp_path)])
    assert result.exit_code == 2 and "'stand-in', 'live'" in result.output
    assert not any(tmp_path.iterdir())


def test_bad_eval_file_is_named(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nname: x\nsystem_prompt: s\nquestions: [{id: A, text: t}]\n")
    result = runner.invoke(app, ["run", "--eval", str(bad)])
    assert result.exit_code == 1  # a bad file is not a usage error
    assert str(bad) in result.output and "questions.0" in result.output


def test_help_explains_commands():
    result = run_cli("--help")
    assert "run" in result.output and "record" in result.output
    assert "--model-source" in run_cli("record", "--help").output


@pytest.mark.parametrize("name", ["", ".", "..", "../src", "a/b", ".hidden"])
def test_bad_set_names_are_refused_before_anything_is_touched(tmp_path, name):
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "x").write_text("keep")
    result = runner.invoke(
        app,
        [
            "record",
            "--model-source",
            "stand-in",
            "--set",
            name,
            "--cassettes",
            str(tmp_path),
            "--eval",
            str(EVAL_FILE),
        ],
    )
    assert result.exit_code == 2
    assert "bad cassette set name" in result.output
    assert (tmp_path / "keep" / "x").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep"]


def test_other_sets_report_into_their_own_folder(tmp_path, monkeypatch):
    import shutil

    shutil.copytree(REPO / "cassettes" / "reference", tmp_path / "cassettes" / "copy")
    monkeypatch.chdir(tmp_path)
    result = run_cli("run", "--eval", str(EVAL_FILE), "--set", "copy")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "reports" / "copy" / "index.html").exists()
    assert (
        json.loads((tmp_path / "reports" / "copy" / "results.json").read_text())["cassette_set"]
        == "copy"
    )


def test_manifest_urls_never_keep_credentials():
    from toolreplay.cassettes import redact_url

    assert redact_url("https://u:s3cret@api.example.com/v1?key=abc") == (
        "https://api.example.com/v1",
        "api.example.com",
    )
    assert redact_url("http://127.0.0.1:43567/v1") == ("http://127.0.0.1/v1", "127.0.0.1")


def test_run_reads_no_key(tmp_path, monkeypatch):
    marker = "-".join(["sk", "never", "read", "0123456789abcdef"])  # built: no key-like literal
    monkeypatch.setenv("DASHSCOPE_API_KEY", marker)
    monkeypatch.setenv("OPENAI_API_KEY", marker)
    common = ["--eval", str(EVAL_FILE), "--cassettes", str(REPO / "cassettes")]
    result = run_cli("run", *common, "--out", str(tmp_path))
    assert result.exit_code == 0
    for path in tmp_path.iterdir():
        assert marker not in path.read_text(encoding="utf-8")
