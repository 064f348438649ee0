"""Integrity: a cassette set is its manifest. Every cassette file has an entry and every entry a
file, each a regular file; every episode has the manifest's number of trials; the set's name is
its folder's. Otherwise the set is damaged, and the message names what differs (issue 22's
cases: an entry removed and its cassette edited, trials lowered, an unknown extra cassette, a
manifest naming another set). No manifest at all stays its own message."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.manifest import SetDamaged, read_manifest
from toolreplay.cli.main import app

from .conftest import EVAL_FILE, REPO

HARD = REPO / "cassettes" / "hard"  # one trial per episode: small and quick to copy


def _copy(tmp_path: Path, name: str = "hard") -> Path:
    dest = tmp_path / name
    shutil.copytree(HARD, dest)
    return dest


def _edit_manifest(set_dir: Path, change) -> None:
    path = set_dir / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def test_the_committed_sets_are_whole():
    for set_dir in sorted((REPO / "cassettes").iterdir()):
        if set_dir.is_dir() and not set_dir.name.startswith("."):
            read_manifest(set_dir)


def test_an_entry_removed_and_its_cassette_edited_is_damage(tmp_path):
    set_dir = _copy(tmp_path)
    key = "loop+atomic/changsha"
    cassette = set_dir / "loop+atomic" / "changsha.yaml"
    _edit_manifest(set_dir, lambda m: m["episodes"].pop(key))
    cassette.write_text(cassette.read_text(encoding="utf-8").replace("长沙", "南京"), "utf-8")
    with pytest.raises(SetDamaged, match=r"set damaged: .*without a manifest entry: "
                       r"loop\+atomic/changsha\.yaml"):  # fmt: skip
        read_manifest(set_dir)


def test_an_unknown_extra_cassette_is_damage(tmp_path):
    set_dir = _copy(tmp_path)
    shutil.copy(set_dir / "loop+atomic" / "changsha.yaml", set_dir / "loop+atomic" / "extra.yaml")
    with pytest.raises(SetDamaged, match=r"loop\+atomic/extra\.yaml"):
        read_manifest(set_dir)


def test_an_entry_without_its_file_is_damage(tmp_path):
    set_dir = _copy(tmp_path)
    (set_dir / "loop+atomic" / "changsha.yaml").unlink()
    with pytest.raises(SetDamaged, match=r"cassette file is missing: loop\+atomic/changsha "):
        read_manifest(set_dir)


def test_trials_lowered_is_damage(tmp_path):
    set_dir = tmp_path / "reference"
    shutil.copytree(REPO / "cassettes" / "reference", set_dir)
    _edit_manifest(set_dir, lambda m: m.update(trials=2))
    with pytest.raises(SetDamaged, match=r"trials are not 1\.\.2"):
        read_manifest(set_dir)


def test_a_manifest_naming_another_set_is_damage(tmp_path):
    set_dir = _copy(tmp_path, "renamed")
    with pytest.raises(SetDamaged, match="names the set 'hard' but its folder is 'renamed'"):
        read_manifest(set_dir)
    _edit_manifest(set_dir, lambda m: m.update(cassette_set="renamed"))
    assert read_manifest(set_dir).cassette_set == "renamed"  # the fix the message gives


def test_a_cassette_that_is_not_a_regular_file_is_damage_not_a_hang(tmp_path):
    set_dir = _copy(tmp_path)
    cassette = set_dir / "loop+atomic" / "changsha.yaml"
    cassette.unlink()
    os.mkfifo(cassette)
    with pytest.raises(SetDamaged, match=r"not regular files: loop\+atomic/changsha\.yaml"):
        read_manifest(set_dir)


def test_no_manifest_is_its_own_case(tmp_path):
    set_dir = _copy(tmp_path)
    (set_dir / "manifest.json").unlink()
    with pytest.raises(CassetteError, match=r"manifest\.json missing") as caught:
        read_manifest(set_dir)
    assert not isinstance(caught.value, SetDamaged)


def test_a_manifest_that_is_a_fifo_is_refused_unread(tmp_path):
    set_dir = _copy(tmp_path)
    (set_dir / "manifest.json").unlink()
    os.mkfifo(set_dir / "manifest.json")
    with pytest.raises(CassetteError, match="is a FIFO"):
        read_manifest(set_dir)


def test_run_on_a_damaged_set_is_one_line_and_exit_1(tmp_path):
    set_dir = _copy(tmp_path)
    _edit_manifest(set_dir, lambda m: m["episodes"].pop("loop+atomic/changsha"))
    result = CliRunner().invoke(
        app,
        ["run", "--eval", str(REPO / "evals" / "weather-hard.yaml"), "--cassettes",
         str(tmp_path), "--set", "hard", "--out", str(tmp_path / "out")],
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.output.startswith("error: set damaged:") and result.output.count("\n") == 1
    assert not (tmp_path / "out").exists()
    assert EVAL_FILE.exists()


STOCK = REPO / "examples" / "stock_agent" / "cassettes"


def test_a_test_suites_set_is_whole_with_uneven_repeats_and_under_any_folder_name(tmp_path):
    """A set recorded by the pytest plugin (provenance ``pytest``): each test repeated as
    often as it says (trials 1..n, n up to the manifest's), copied under any folder name (to
    diff it, say); a gap in a test's repeats is damage."""
    copy = tmp_path / "before"
    shutil.copytree(STOCK, copy)
    manifest = read_manifest(copy)
    assert manifest.provenance == "pytest" and manifest.cassette_set != copy.name

    def drop(key: str) -> None:
        (copy / manifest.episodes[key].cassette).unlink()
        _edit_manifest(copy, lambda m: m["episodes"].pop(key))

    drop("test_agent/stock-levels/trial-3")
    read_manifest(copy)  # one test repeated twice, the others three times: whole
    drop("test_agent/price/trial-2")  # trials 1 and 3: a gap
    with pytest.raises(SetDamaged, match=r"not 1\.\.n \(n at most 3"):
        read_manifest(copy)
