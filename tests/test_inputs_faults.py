"""Inputs and messages: odd input ends in one clear line and the right exit status (2 for a
usage error, everywhere), output survives any stdout encoding, the table keeps its essential
columns at any width, re-record advice never targets a set made for another eval file (issue
22's cases)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.evals import EvalFileError, load_eval

from .conftest import EVAL_FILE, REPO, with_summaries

RESULTS = REPO / "reports" / "results.json"
HARD_EVAL = REPO / "evals" / "weather-hard.yaml"


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


def _flipped(tmp_path: Path) -> Path:
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    episode = next(e for e in data["episodes"] if e["passed"])
    episode.update(passed=False, answer="北京今天天气如何，我不清楚。")
    path = tmp_path / "b.json"
    path.write_text(json.dumps(with_summaries(data), ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "env", [{"PYTHONIOENCODING": "ascii"}, {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": ""}]
)
def test_output_survives_an_encoding_that_cannot_show_chinese(tmp_path, env):
    proc = subprocess.run(
        [sys.executable, "-m", "toolreplay", "diff", str(RESULTS), str(_flipped(tmp_path))],
        env={**os.environ, "PYTHONPATH": str(REPO / "src"), **env},
        capture_output=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert b"Traceback" not in proc.stderr and b"1 flip" in proc.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--questions", ""],
        ["run", "--configurations", " , "],
        ["run", "--questions", "bogus"],
        ["record", "--model-source", "stand-in", "--set", "x", "--only", "bogus/x"],
        ["run", "--shard", "0/4"],
        ["run", "--workers", "0"],
    ],
)
def test_usage_errors_exit_2(args, tmp_path):
    result = _cli(*args, "--eval", str(EVAL_FILE))
    assert result.exit_code == 2, result.output


def test_an_eval_file_whose_top_level_is_a_list_says_so(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n", encoding="utf-8")
    with pytest.raises(EvalFileError, match="the top level is a list; an eval file is a mapping"):
        load_eval(path)


def test_inputs_nested_beyond_reason_are_one_line(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000, encoding="utf-8")
    result = _cli("report", "--results", str(deep), "--out", str(tmp_path / "x.html"))
    assert result.exit_code == 2 and "nests deeper than" in result.output
    set_dir = tmp_path / "s"
    set_dir.mkdir()
    (set_dir / "manifest.json").write_text("[" * 100_000, encoding="utf-8")
    result = _cli("run", "--cassettes", str(tmp_path), "--set", "s", "--out", str(tmp_path / "o"))
    assert result.exit_code == 1 and "nested beyond reason" in result.output
    deep_yaml = tmp_path / "deep.yaml"
    deep_yaml.write_text("a: " + "[" * 100_000, encoding="utf-8")
    with pytest.raises(EvalFileError, match="nest"):
        load_eval(deep_yaml)
    # closed brackets too, and in a cassette: read from the parser's events, never composed
    # (composing recursed per level and crashed PyYAML 6.0's C loader)
    deep_yaml.write_text("a: " + "[" * 50_000 + "]" * 50_000, encoding="utf-8")
    with pytest.raises(EvalFileError, match="nest"):
        load_eval(deep_yaml)
    from toolreplay.cassettes.errors import CassetteError
    from toolreplay.cassettes.store import load_cassette

    with pytest.raises(CassetteError, match="nest"):
        load_cassette(deep_yaml)


def test_a_name_longer_than_the_filesystem_allows_is_one_line(tmp_path):
    result = _cli("run", "--questions", "beijing", "--out", str(tmp_path / ("x" * 300)))
    assert result.exit_code == 2 and "bytes long; this file system allows 255" in result.output
    result = _cli("record", "--model-source", "stand-in", "--set", "x" * 300)
    assert result.exit_code == 2


def test_the_table_keeps_configuration_and_passed_at_40_columns(monkeypatch):
    from toolreplay.cli import common
    from toolreplay.report.console import summary_table

    monkeypatch.setattr(common.out, "_width", 40)
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    with common.out.capture() as captured:
        common.out.print(summary_table(results, common.out.width))
    text = captured.get()
    assert "passed" in text and "4/4" in text and "loop+atomic" in text
    assert max(len(line) for line in text.splitlines()) <= 40


def test_rerecord_advice_never_targets_a_set_of_another_eval_file(tmp_path):
    result = _cli("run", "--eval", str(HARD_EVAL), "--out", str(tmp_path / "o"))
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "--set reference" not in text
    assert "--set weather-hard (a new set: reference was recorded from evals/weather.yaml" in text


@pytest.mark.slow
def test_an_undecodable_recorded_body_is_named_not_just_unplayed(tmp_path):
    """A reply marked gzip that is not gzip data ends the episode early: the message names
    that body before the interactions it left unplayed."""
    import hashlib
    import shutil

    import yaml

    set_dir = tmp_path / "hard"
    shutil.copytree(REPO / "cassettes" / "hard", set_dir)
    path = set_dir / "loop+atomic" / "changsha.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["interactions"][0]["response"]["body"] = {"string": b"\x1f\x8b\x08not gzip"}
    data["interactions"][0]["response"]["headers"] = {
        "content-type": ["application/json"],
        "content-encoding": ["gzip"],
    }
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    manifest = json.loads((set_dir / "manifest.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest["episodes"]["loop+atomic/changsha"]["cassette_sha256"] = digest
    (set_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = _cli(
        "run", "--eval", str(HARD_EVAL), "--cassettes", str(tmp_path), "--set", "hard",
        "--configurations", "loop+atomic", "--questions", "changsha", "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "interaction 1: the body is marked gzip but is not gzip data" in text
