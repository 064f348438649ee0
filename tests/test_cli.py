from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app

from .conftest import EVAL_FILE, KEY_MARKER, REPO

runner = CliRunner()


def run_cli(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.mark.slow
def test_run_prints_the_table_and_writes_the_results(committed_run):
    """The whole committed set, every trial (shared run; that it reproduces the committed
    reports byte for byte, i.e. is deterministic, is tests/test_report.py's freshness test)."""
    first, out = committed_run
    assert first.exit_code == 0, first.output
    assert "single+atomic" in first.output and "0/4" in first.output and "3.25" in first.output
    results = json.loads((out / "results.json").read_bytes())
    assert results["cassette_set"] == "reference"
    assert [c["name"] for c in results["configurations"]] == [
        "single+oneshot", "loop+oneshot", "single+atomic", "loop+atomic",
    ]  # fmt: skip
    ep = results["episodes"][0]
    for key in ("configuration", "question_id", "question", "answer", "passed", "rounds",
                "tool_calls", "tool_chain", "stop_reason"):  # fmt: skip
        assert key in ep


@pytest.mark.slow
def test_run_reports_the_study_table_from_trial_one_and_pass_hat_k(committed_run):
    result, out = committed_run
    lines = result.output.splitlines()
    rows = {
        name: next(line for line in lines if f"{name} " in f" {line.strip()} " and "/4" in line)
        for name in ("single+oneshot", "loop+oneshot", "single+atomic", "loop+atomic")
    }
    assert "4/4" in rows["single+oneshot"] and "4/4" in rows["loop+oneshot"]
    assert "0/4" in rows["single+atomic"] and "4/4" in rows["loop+atomic"]
    assert "pass^k, k=1..5" in result.output and "pass@5" in result.output
    assert "single+atomic: empty_answer 65%, unfulfilled_promise 35%" in result.output
    assert "  single+oneshot: pass^1 0.95 [0.46, 1.00], pass^5 0.75 [0.30, 0.95]" in lines
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["trials"] >= 5
    for c in results["configurations"]:
        assert [int(k) for k in c["pass_hat_k"]] == list(range(1, results["trials"] + 1))
        assert [int(k) for k in c["pass_at_k"]] == list(range(1, results["trials"] + 1))
        assert len(c["questions"]) == 4
    assert results["selection"]["all_configurations"] and results["selection"]["all_questions"]
    assert len(results["trial_outcomes"]) == 16 * results["trials"]


def test_record_live_without_key_refuses_clearly(tmp_path, monkeypatch):
    monkeypatch.delenv("DASHSCOPE_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = runner.invoke(
        app,
        [
            "record",
            "--model-source",
            "live",
            "--set",
            "x",
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
    assert result.exit_code == 2 and "'--model-source'" in result.output
    assert "choose stand-in or live" in result.output
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


@pytest.mark.slow
def test_other_sets_report_into_their_own_folder(tmp_path, monkeypatch):
    import shutil

    shutil.copytree(REPO / "cassettes" / "reference", tmp_path / "cassettes" / "copy")
    manifest = tmp_path / "cassettes" / "copy" / "manifest.json"  # a set is named by its folder
    manifest.write_text(manifest.read_text().replace('"reference"', '"copy"', 1))
    monkeypatch.chdir(tmp_path)
    result = run_cli(
        "run", "--eval", str(EVAL_FILE), "--set", "copy",
        "--questions", "beijing", "--configurations", "loop+atomic",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "reports" / "copy" / "index.html").exists()
    assert (
        json.loads((tmp_path / "reports" / "copy" / "results.json").read_text())["cassette_set"]
        == "copy"
    )


def test_manifest_urls_never_keep_credentials():
    from toolreplay.cassettes.manifest import redact_url

    assert redact_url("https://u:s3cret@api.example.com/v1?key=abc") == (
        "https://api.example.com/v1",
        "api.example.com",
    )
    assert redact_url("http://127.0.0.1:43567/v1") == ("http://127.0.0.1/v1", "127.0.0.1")


@pytest.mark.slow
def test_run_reads_no_key(committed_run):
    """The shared run had a key-like value in both key variables; none of it is written."""
    _, out = committed_run
    for path in out.iterdir():
        assert KEY_MARKER not in path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_selection_is_applied_and_named(tmp_path):
    common = ["--eval", str(EVAL_FILE), "--cassettes", str(REPO / "cassettes")]
    result = run_cli(
        "run", *common, "--out", str(tmp_path),
        "--configurations", "single+oneshot,loop+atomic", "--questions", "hottest",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in results["configurations"]] == ["single+oneshot", "loop+atomic"]
    assert {e["question_id"] for e in results["episodes"]} == {"hottest"}
    sel = results["selection"]
    assert sel["configurations"] == ["single+oneshot", "loop+atomic"]
    assert sel["questions"] == ["hottest"]
    assert not sel["all_configurations"] and not sel["all_questions"]
    assert "loop+atomic" in (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "Selection" in (tmp_path / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "option, value, needle",
    [
        ("--configurations", "loop+nothing", "unknown loop+nothing"),
        ("--questions", "ningde,atlantis", "unknown atlantis"),
    ],
)
def test_unknown_selection_is_refused(option, value, needle):
    result = runner.invoke(app, ["run", "--eval", str(EVAL_FILE), option, value])
    assert result.exit_code == 2
    assert needle in result.output
