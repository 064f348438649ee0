"""After an intended re-recording (``pytest --record-mode=rewrite``), the completeness check's
failure gives the exact command that refreshes the test suite folder's manifest
(``audit.suite_folder.refresh_command``), and that command does it (issue 34)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app

from .conftest import REPO

runner = CliRunner()

EXAMPLE = REPO / "examples" / "stock_agent"


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["run", *args, "-j", "1"], env={"COLUMNS": "400"})
    return result.exit_code, result.output


@pytest.fixture
def rerecorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stock agent's eval file and cassettes, one cassette changed as a re-recording
    changes it (its manifest now stale)."""
    shutil.copy(EXAMPLE / "eval.yaml", tmp_path / "eval.yaml")
    shutil.copytree(EXAMPLE / "cassettes", tmp_path / "cassettes")
    cassette = next((tmp_path / "cassettes" / "test_agent").glob("test_price*.yaml"))
    cassette.write_text(cassette.read_text(encoding="utf-8") + "# re-recorded\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_stale_manifest_failure_gives_the_refresh_command(rerecorded: Path) -> None:
    code, output = _run("--eval", "eval.yaml", "--out", "first")
    assert code == 1
    assert "1 episode(s) changed since the manifest was written" in output
    command = "rm cassettes/manifest.json && toolreplay run --eval eval.yaml --cassettes cassettes"
    line = next(line for line in output.splitlines() if "refresh the manifest" in line)
    assert "pytest --record-mode=rewrite" in line and line.rstrip().endswith(command)


@pytest.mark.slow
def test_the_refresh_command_refreshes_the_manifest(rerecorded: Path) -> None:
    code, output = _run("--eval", "eval.yaml", "--out", "first")
    assert code == 1  # the stale manifest fails completeness
    command = output.split("refresh the manifest: ", 1)[1].split("\n", 1)[0].strip()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "200"}
    bindir = Path(sys.executable).parent  # the toolreplay script of this interpreter
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        command + " --out second -j 1", shell=True, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr  # completeness passes again
    assert _run("--eval", "eval.yaml", "--out", "third")[0] == 0
