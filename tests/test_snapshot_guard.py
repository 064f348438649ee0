"""Guards on the snapshot set: every file is an episode's, files are readable JSON without
volatile values, and a snapshot no test uses fails the run under this suite's pytest config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolreplay.evals import load_eval
from toolreplay.runs.snapshots import pinned_keys, snapshot_id
from toolreplay.study.weather.study import STUDY

assert STUDY.snapshot_tests is not None
SNAPSHOT_TEST = STUDY.snapshot_tests.test

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SNAPSHOT_DIR = TESTS / "__snapshots__" / "test_snapshots"


def test_snapshot_files_are_exactly_the_study_episodes() -> None:
    suite = load_eval(REPO / "evals" / "weather.yaml")
    expected = {f"{SNAPSHOT_TEST}[{snapshot_id(k)}].json" for k in pinned_keys(suite)}
    assert len(expected) == 16
    assert {p.name for p in SNAPSHOT_DIR.iterdir()} == expected


def test_snapshot_files_are_readable_and_hold_no_volatile_values() -> None:
    path = SNAPSHOT_DIR / f"{SNAPSHOT_TEST}[single+atomic-ningde].json"
    text = path.read_text(encoding="utf-8")
    assert "宁德时代总部所在城市今天天气怎么样？" in text  # Chinese written as is
    assert "\\u" not in text
    data = json.loads(text)
    assert list(data) == sorted(data)  # stable key order
    assert '"usage"' not in text and '"wall_time_s"' not in text
    assert [f["mode"] for f in data["failure_modes"]] == ["unfulfilled_promise"]


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A throwaway project with this suite's pytest configuration and conftest and one
    snapshot test using the plugin's ``transcript_snapshot`` fixture. Under ``pytest -n``
    this test runs in an xdist worker, whose environment would make the inner run's syrupy
    leave the unused-snapshot report to a controller that does not exist: the inner run is
    not a worker."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyprojecttoml((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    tests = pytester.mkdir("tests")
    (tests / "conftest.py").write_text((TESTS / "conftest.py").read_text(encoding="utf-8"))
    (tests / "test_inner.py").write_text(
        "def test_kept(transcript_snapshot):\n"
        "    data = {'城市': '北京', 'usage': {'total_tokens': 7}, 'wall_time_s': 1.5}\n"
        "    assert data == transcript_snapshot\n",
        encoding="utf-8",
    )
    return pytester


@pytest.mark.slow
def test_an_unused_snapshot_fails_the_run(project: pytest.Pytester) -> None:
    # importlib mode: the inner conftest must not clash with this suite's module "conftest".
    mode = "--import-mode=importlib"
    written = project.path / "tests" / "__snapshots__" / "test_inner" / "test_kept.json"
    assert project.runpytest(mode, "--snapshot-update").ret == 0
    assert json.loads(written.read_text(encoding="utf-8")) == {"城市": "北京"}

    stale = written.with_name("test_gone.json")
    stale.write_text("{}\n", encoding="utf-8")
    result = project.runpytest(mode)
    result.assert_outcomes(passed=1)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*1 snapshot unused*"])

    assert project.runpytest(mode, "--snapshot-update").ret == 0
    assert not stale.exists()
