"""A test suite's cassette folder whose entries named like cassettes are not regular files (a
FIFO, a link to /dev/zero, a link to nothing) is refused on every run, naming each, before
anything is read or written (issue 34: they used to be skipped silently on the first run)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app

from .conftest import REPO


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: os.mkfifo(p), "is a FIFO"),
        (lambda p: p.symlink_to("/dev/zero"), "is a device"),
        (lambda p: p.symlink_to(p.with_name("gone.yaml")), "is a link to nothing"),
    ],
    ids=["fifo", "dev-zero", "dangling"],
)
def test_odd_entries_in_a_suite_folder_are_named_and_refused(tmp_path: Path, make, said):
    folder = tmp_path / "cassettes"
    shutil.copytree(REPO / "examples" / "stock_agent" / "cassettes", folder)
    (folder / "manifest.json").unlink()  # the first run, before any manifest
    make(folder / "test_agent" / "test_odd.yaml")
    for _ in range(2):  # the first run and every later one
        result = CliRunner().invoke(
            app, ["run", "--cassettes", str(folder), "--out", str(tmp_path / "out")]
        )
        assert result.exit_code == 2, result.output
        text = " ".join(result.output.split())
        assert f"test_agent/test_odd.yaml {said}" in text
        assert not (tmp_path / "out").exists() and not (folder / "manifest.json").exists()
