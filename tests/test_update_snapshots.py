"""``toolreplay record ... --update-snapshots``: re-record chosen episodes and rewrite their
snapshots in one step (recording and the pytest run it starts are faked here)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolreplay.cassettes.manifest import read_manifest
from toolreplay.cli import main as cli
from toolreplay.cli import record as cli_record
from toolreplay.runs import record as runs_record
from toolreplay.runs import snapshots
from toolreplay.runs.snapshots import (
    SnapshotUpdateError,
    check_can_update,
    pinned_keys,
    snapshot_node_id,
    update_command,
)
from toolreplay.studies import SnapshotTests
from toolreplay.study.weather.study import STUDY

TESTS = STUDY.snapshot_tests
assert TESTS is not None
SNAPSHOT_TEST_FILE, SNAPSHOT_TEST = TESTS.file, TESTS.test

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "cassettes" / "reference"


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Fake stand-in recording (nothing on disk changes): the ``only`` keys of each call."""
    calls: list[list[str]] = []

    def fake_record(
        set_dir: Path, suite: Any, configs: Any, *, only: Any, progress: Any, **kwargs: Any
    ) -> Any:
        calls.append(list(only))
        return read_manifest(REFERENCE)

    # `toolreplay record` imports the recorder when it runs: replace it where it is looked up
    monkeypatch.setattr(runs_record, "record_stand_in", fake_record)
    monkeypatch.chdir(REPO)
    return calls


@pytest.fixture
def regenerated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Capture the reports regeneration that follows a snapshot update (the committed
    reports/ must not be rewritten by a test)."""
    sets: list[str] = []
    monkeypatch.setattr(cli_record, "_regenerate_reports", lambda e, c, name: sets.append(name))
    return sets


@pytest.fixture
def pytest_runs(monkeypatch: pytest.MonkeyPatch, regenerated: list[str]) -> list[list[str]]:
    """Capture the pytest commands the update would run; they 'pass'."""
    runs: list[list[str]] = []

    def fake_run(cmd: list[str], cwd: Path, check: bool) -> subprocess.CompletedProcess[str]:
        assert Path(cwd) == REPO
        runs.append(cmd)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(snapshots.subprocess, "run", fake_run)
    return runs


def invoke(*args: str) -> Any:
    named = [] if "--set" in args else ["--set", "reference"]  # record has no default set
    return CliRunner().invoke(cli.app, ["record", "--model-source", "stand-in", *named, *args])


def test_record_then_update_only_the_recorded_episodes(
    recorded: list[list[str]], pytest_runs: list[list[str]], regenerated: list[str]
) -> None:
    keys = ["single+atomic/beijing", "loop+atomic/ningde", "loop+oneshot-no_shi_retry/ningde"]
    result = invoke(*[a for k in keys for a in ("--only", k)], "--update-snapshots")
    assert result.exit_code == 0, result.output
    assert recorded == [keys]
    assert regenerated == ["reference"]  # reports/ follow the re-recorded cassettes
    [cmd] = pytest_runs
    assert cmd[1:5] == ["-m", "pytest", "-q", "--snapshot-update"]
    assert cmd[5:] == [  # the ablated baseline has no snapshot
        "tests/test_snapshots.py::test_episode[single+atomic-beijing]",
        "tests/test_snapshots.py::test_episode[loop+atomic-ningde]",
    ]


def test_whole_set_updates_the_whole_snapshot_file(
    recorded: list[list[str]], pytest_runs: list[list[str]]
) -> None:
    assert invoke("--update-snapshots").exit_code == 0
    assert pytest_runs[0][-1] == SNAPSHOT_TEST_FILE  # so unused snapshots are deleted too


def test_without_the_flag_no_snapshot_is_touched(
    recorded: list[list[str]], pytest_runs: list[list[str]]
) -> None:
    assert invoke("--only", "single+atomic/beijing").exit_code == 0
    assert recorded and not pytest_runs


def test_only_ablated_episodes_update_nothing(
    recorded: list[list[str]], pytest_runs: list[list[str]]
) -> None:
    result = invoke("--only", "single+oneshot-no_admin_seat/ningde", "--update-snapshots")
    assert result.exit_code == 0
    assert "no snapshot pins these episodes" in result.output
    assert not pytest_runs


def test_a_failing_snapshot_run_fails_the_command(
    recorded: list[list[str]], monkeypatch: pytest.MonkeyPatch, regenerated: list[str]
) -> None:
    monkeypatch.setattr(
        snapshots.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1)
    )
    result = invoke("--only", "single+atomic/beijing", "--update-snapshots")
    assert result.exit_code == 1
    assert "updating snapshots failed (pytest exit code 1)" in result.output
    assert not regenerated


def test_another_set_is_refused_before_recording(
    recorded: list[list[str]], pytest_runs: list[list[str]]
) -> None:
    result = invoke("--set", "live-qwen", "--update-snapshots")
    assert result.exit_code == 2
    assert "the snapshot tests pin" in result.output
    assert not recorded and not pytest_runs


def test_outside_the_repository_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SnapshotUpdateError, match="run this from the repository root"):
        check_can_update(TESTS, tmp_path, tmp_path / "cassettes" / "reference")
    check_can_update(TESTS, REPO, REFERENCE)
    with pytest.raises(SnapshotUpdateError, match="declares no snapshot tests"):
        check_can_update(None, REPO, REFERENCE)


def test_update_command_and_node_ids() -> None:
    assert snapshot_node_id(TESTS, "loop+atomic/shanghai-rain") == (
        "tests/test_snapshots.py::test_episode[loop+atomic-shanghai-rain]"
    )
    assert update_command(TESTS, [])[-2:] == ["--snapshot-update", SNAPSHOT_TEST_FILE]
    with pytest.raises(ValueError, match="CONFIGURATION/QUESTION-ID"):
        snapshot_node_id(TESTS, "loop+atomic")
    other = SnapshotTests("checks/test_pins.py", "test_pin", "mine")
    assert snapshot_node_id(other, "a/b") == "checks/test_pins.py::test_pin[a-b]"


def test_node_ids_name_the_parametrized_snapshot_test(suite: Any) -> None:
    # The snapshot files themselves are checked against snapshot_id in test_snapshot_guard.py.
    spec = importlib.util.spec_from_file_location("snapshot_module", REPO / SNAPSHOT_TEST_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    test = getattr(module, SNAPSHOT_TEST)
    [mark] = [m for m in test.pytestmark if m.name == "parametrize"]
    node_ids = [f"{SNAPSHOT_TEST_FILE}::{test.__name__}[{i}]" for i in mark.kwargs["ids"]]
    assert node_ids == [snapshot_node_id(TESTS, k) for k in pinned_keys(suite)]
