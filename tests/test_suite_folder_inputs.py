"""run, mutate and audit take the same inputs, read by one path (cli.sources.episodes_input): a
folder of cassettes a team's tests recorded (``--cassettes DIR``) is judged, scored and
audited without an eval file (audit used to ask for --eval: found by review), and what is
wrong with ``--cassettes`` is said in the same words by all three."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

import toolreplay.cli.sources as sources
from toolreplay.cli.main import app

from .conftest import REPO

FOLDER = REPO / "examples" / "stock_agent" / "cassettes"


def _invoke(args: list[str]):
    return CliRunner().invoke(app, args)


def test_audit_of_a_test_suite_folder_needs_no_eval_file(tmp_path, monkeypatch):
    folder = tmp_path / "cassettes"
    shutil.copytree(FOLDER, folder)
    monkeypatch.chdir(tmp_path)
    result = _invoke(["audit", "--cassettes", str(folder)])
    assert result.exit_code == 0, result.output
    assert "no cassette set at" not in result.output
    assert "PASS completeness" in result.output
    assert "read from the cassettes of" in result.output and "4 question(s)" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cassettes"]  # read only


@pytest.mark.parametrize("command", ["run", "mutate", "audit"])
def test_every_command_reads_its_inputs_through_one_path(tmp_path, monkeypatch, command):
    calls: list[tuple] = []
    real = sources.episodes_input

    def spy(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(sources, "episodes_input", spy)
    monkeypatch.chdir(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _invoke([command, "--cassettes", str(empty)])
    assert calls == [(None, empty, "reference")]
    assert result.exit_code == 1
    assert " ".join(result.output.split()).startswith(f"error: no cassettes in {empty}:")
