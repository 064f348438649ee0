"""``benchmarks/bench_scale.py --quick`` runs end to end, so the benchmark cannot rot: every
figure's heading and ratio line printed, the hooks of ``benchmarks/run_phases.py`` still
finding the functions they stamp, the tiny generated sets recorded in parallel into a cache
folder of the test's own. No time is asserted (figures belong in docs/performance.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"


@pytest.mark.slow
def test_quick_benchmark_runs_end_to_end(tmp_path: Path) -> None:
    env = {**os.environ, "TOOLREPLAY_BENCH_CACHE": str(tmp_path / "cache"), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_scale.py"), "--quick"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,  # a hang fails; no figure is asserted
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    for heading in (
        "1. start-up",
        "2. per episode, trial 1 of the 40 reference episodes",
        "3. whole-process `toolreplay run`, reference set",
        "4. generated sets recorded with the stand-in",
        "5. report (write_report",
    ):
        assert heading in out, heading
    for line in (
        "ratio replay/floor, paired by repetition",
        "ratio peer_own/replay, paired by repetition",
        "ratio peer/replay, paired by repetition",
        "vcrpy, its own yaml serializer",
        "vcrpy, toolreplay's serializer",
        "empty ÷ warm parse cache, wall (paired",
        "t(8)/t(4), whole run, empty cache (episodes ×2) (paired",
        "toolreplay run, 8 episodes, empty parse cache",
        "toolreplay run, 8 episodes, warm parse cache",
        "serial tail (last replay → exit), share of wall",
        "CPU per episode (user+sys, process tree)",
        "peak RSS, largest process",
        "8 episodes: 8 cassettes, 8 distinct contents",
        "the floor alone, 8 of these episodes (CPU per episode, one process)",
        "warm run's CPU per episode ÷ the floor's (paired",
        "ref_cold: exit 0; fidelity: all",  # the reference set passes its audit
    ):
        assert line in out, line
    assert "n/a" not in out
    # the sets were recorded (in parallel parts, merged) into the test's cache folder
    cassettes = tmp_path / "cache" / "cassettes"
    manifest = json.loads((cassettes / "scale-x4" / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["episodes"]) == 8
    assert not list(cassettes.glob("*.part-*"))


def test_run_phases_names_a_hook_that_is_gone(tmp_path: Path) -> None:
    """A renamed function stops ``run_phases.py`` naming it (exit 3), instead of a run whose
    phases are silently missing."""
    code = (
        "import runpy, sys; sys.path.insert(0, sys.argv[1]); import run_phases; "
        "run_phases.REPLAY = ('toolreplay.runs.replay', 'no_such_function'); "
        "sys.argv = ['run_phases.py', '--version']; run_phases.main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(BENCH)],
        cwd=REPO,
        env={**os.environ, "BENCH_PHASES_FILE": str(tmp_path / "phases.json")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3
    assert "toolreplay.runs.replay.no_such_function is gone" in done.stderr


def test_run_phases_hooks_exist() -> None:
    """The functions ``run_phases.py`` stamps exist today (the quick benchmark runs them)."""
    import importlib

    sys.path.insert(0, str(BENCH))
    try:
        import run_phases
    finally:
        sys.path.remove(str(BENCH))
    module, name = run_phases.REPLAY
    assert callable(getattr(importlib.import_module(module), name))
    assert any(hasattr(importlib.import_module(m), n) for m, n in run_phases.WRITERS)
