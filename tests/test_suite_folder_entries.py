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


def test_convert_in_place_refuses_a_symlinked_cassette(tmp_path: Path) -> None:
    """`toolreplay convert DIR` used to replace a symlinked cassette by a regular file."""
    folder = tmp_path / "cassettes"
    folder.mkdir()
    shared = tmp_path / "shared.yaml"
    source = REPO / "examples" / "stock_agent" / "cassettes" / "test_agent" / "test_price[1].yaml"
    shared.write_bytes(source.read_bytes())
    (folder / "a.yaml").symlink_to(shared)
    (folder / "b.yaml").write_bytes(source.read_bytes())
    before = {p.name: p.read_bytes() for p in (shared, folder / "b.yaml")}
    result = CliRunner().invoke(app, ["convert", str(folder)])
    assert result.exit_code == 2, result.output
    assert "is a symbolic link" in result.output and "nothing was written" in result.output
    assert (folder / "a.yaml").is_symlink()
    assert {p.name: p.read_bytes() for p in (shared, folder / "b.yaml")} == before
    written = CliRunner().invoke(app, ["convert", str(folder), "--out", str(tmp_path / "out")])
    assert written.exit_code == 0, written.output
    assert (tmp_path / "out" / "a.yaml").is_file() and (folder / "a.yaml").is_symlink()
