"""Recording never replaces a set it was not pointed at, nor one of another provenance."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.record import record_stand_in
from toolreplay.runs.target import RecordingError

from .conftest import EVAL_FILE, REFERENCE


def invoke(*args: str):
    return CliRunner().invoke(app, ["record", "--eval", str(EVAL_FILE), *args])


@pytest.mark.parametrize("mode", ["stand-in", "live"])
def test_record_needs_a_named_set(tmp_path, monkeypatch, mode):
    monkeypatch.setenv("DASHSCOPE_API_KEY", "-".join(["sk", "x" * 20]))
    shutil.copytree(REFERENCE, tmp_path / "reference")
    before = {p: p.read_bytes() for p in (tmp_path / "reference").rglob("*") if p.is_file()}
    result = invoke("--model-source", mode, "--cassettes", str(tmp_path))
    assert result.exit_code == 2
    assert "name the cassette set to record with --set NAME" in result.output
    assert "--set reference" in result.output
    assert "recording live" not in result.output  # refused before resolving any endpoint
    after = {p: p.read_bytes() for p in (tmp_path / "reference").rglob("*") if p.is_file()}
    assert after == before and sorted(p.name for p in tmp_path.iterdir()) == ["reference"]


def live_copy(tmp_path):
    set_dir = tmp_path / "reference"
    shutil.copytree(REFERENCE, set_dir)
    manifest = json.loads((set_dir / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(provenance="live", model="qwen-plus", endpoint_host="dashscope.aliyuncs.com")
    (set_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return set_dir, {p: p.read_bytes() for p in set_dir.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_a_set_of_other_provenance_is_not_replaced(suite, tmp_path, loopback):
    set_dir, before = live_copy(tmp_path)
    with pytest.raises(RecordingError) as info:
        record_stand_in(set_dir, suite, [Configuration("loop", "atomic")])
    message = str(info.value)
    assert "holds a live recording (model qwen-plus at dashscope.aliyuncs.com" in message
    assert "would be stand-in (model toolreplay-standin at 127.0.0.1)" in message
    assert "--force" in message and "Nothing was changed" in message
    assert {p: p.read_bytes() for p in set_dir.rglob("*") if p.is_file()} == before
    manifest = record_stand_in(
        set_dir, suite, [Configuration("loop", "atomic")], force=True, trials=1
    )
    assert manifest.provenance == "stand-in" and len(manifest.episodes) == 4


def test_a_folder_that_is_not_a_set_is_not_replaced(suite, tmp_path, loopback):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(RecordingError, match="exists but is not a cassette set"):
        record_stand_in(tmp_path / "notes", suite, [Configuration("loop", "atomic")])
    assert (tmp_path / "notes" / "todo.txt").read_text(encoding="utf-8") == "keep me"


def test_cli_refuses_without_force(tmp_path, loopback):
    set_dir, before = live_copy(tmp_path)
    result = invoke(
        "--model-source", "stand-in", "--set", "reference", "--cassettes", str(tmp_path)
    )
    assert result.exit_code == 1 and "holds a live recording" in result.output
    assert {p: p.read_bytes() for p in set_dir.rglob("*") if p.is_file()} == before


@pytest.mark.slow
def test_same_provenance_rerecords_in_place(suite, tmp_path, loopback):
    set_dir = tmp_path / "reference"
    record_stand_in(set_dir, suite, [Configuration("loop", "atomic")])
    again = record_stand_in(set_dir, suite, [Configuration("loop", "atomic")])
    assert again.provenance == "stand-in"
