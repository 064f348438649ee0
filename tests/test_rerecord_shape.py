"""Re-recording keeps the set's shape (issue 34): trials and seed of an existing set are kept
unless given, and a re-recording that would remove cassettes (fewer trials, ablations or
questions left out) says what it removes and needs --force; nothing is changed otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.runs.record import RecordingError, trials_and_seed

from .conftest import REPO

REFERENCE = REPO / "cassettes" / "reference"


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.*")}


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(REFERENCE, tmp_path / "reference")
    return tmp_path


def _record(cassettes: Path, *extra: str):
    return CliRunner().invoke(
        app,
        ["record", "--model-source", "stand-in", "--set", "reference", "--eval",
         str(REPO / "evals" / "weather.yaml"), "--cassettes", str(cassettes), *extra],
    )  # fmt: skip


def test_an_existing_set_gives_its_trials_and_seed(copy: Path) -> None:
    assert trials_and_seed(copy / "reference", (), None, None) == (5, 0)
    assert trials_and_seed(copy / "reference", (), 7, 3) == (7, 3)
    assert trials_and_seed(copy / "new", (), None, None) == (1, 0)
    (copy / "broken").mkdir()
    (copy / "broken" / "manifest.json").write_text("{", encoding="utf-8")
    assert trials_and_seed(copy / "broken", (), None, None) == (1, 0)  # only --force replaces
    with pytest.raises(RecordingError):
        trials_and_seed(copy / "broken", ("loop+atomic/ningde",), None, None)


@pytest.mark.parametrize(
    ("extra", "named"),
    [(["--trials", "1"], "loop+atomic/beijing/trial-2"),
     (["--no-ablations"], "loop+oneshot-no_admin_seat/"),
     (["--trials", "2", "--no-ablations"], "/trial-3")],
)  # fmt: skip
def test_a_re_recording_that_would_remove_cassettes_needs_force(copy, extra, named) -> None:
    before = _tree(copy / "reference")
    result = _record(copy, *extra)
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "would remove" in text and "--force" in text and "Nothing was changed" in text
    assert named in text
    assert _tree(copy / "reference") == before


def test_trials_beyond_the_bound_are_a_usage_error(copy: Path) -> None:
    result = _record(copy, "--trials", "1000000")
    assert result.exit_code == 2, result.output
    assert not (copy / "reference" / ".recording").exists()


@pytest.mark.slow
def test_the_readme_form_re_records_the_committed_set_as_it_is(copy: Path) -> None:
    """`toolreplay record --model-source stand-in --set reference` (the README's form) on the
    committed 5-trial set: 5 trials kept, every cassette byte for byte (the stand-in is
    deterministic), only the manifest's date and package versions may change."""
    before = _tree(copy / "reference")
    result = _record(copy)
    assert result.exit_code == 0, result.output
    assert "5 trials each, seed 0" in " ".join(result.output.split())
    after = _tree(copy / "reference")
    assert sorted(after) == sorted(before)
    changed = [name for name in before if before[name] != after[name]]
    assert changed in ([], ["manifest.json"])


def test_force_into_a_set_that_is_a_link_leaves_nothing_behind(tmp_path: Path) -> None:
    """`record --force` into a set that is a symbolic link used to leave
    `.recording-linked-XXXX` pointing outside, which every later record claimed to remove."""
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(REFERENCE, elsewhere)
    before = _tree(elsewhere)
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "reference").symlink_to(elsewhere)
    for _ in range(2):  # one trial, no ablations: the swap is what is tested, not the shape
        result = _record(tmp_path / "cassettes", "--force", "--trials", "1", "--no-ablations")
        assert result.exit_code == 0, result.output
        assert "removed" not in result.output
        names = sorted(p.name for p in (tmp_path / "cassettes").iterdir())
        assert names == [".reference.lock", "reference"]
    assert not (tmp_path / "cassettes" / "reference").is_symlink()
    assert (tmp_path / "cassettes" / "reference").stat().st_mode & 0o077  # not owner-only
    assert _tree(elsewhere) == before  # what the link pointed to is untouched
