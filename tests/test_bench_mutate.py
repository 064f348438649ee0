"""The mutation benchmark (``benchmarks/bench_mutate.py``) in its quick form, so that it cannot
rot: whole-process ``toolreplay run`` and ``toolreplay mutate`` on ``examples/stock_agent``, the
ratio line printed. No timing is asserted (figures belong in ``docs/performance.md``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # the benchmark script end to end, in a process of its own
def test_quick_benchmark_runs_and_prints_the_ratio() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_mutate.py"), "--quick"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"^examples/stock_agent: 12 episodes; toolreplay run [\d.]+ s wall", out, re.M)
    assert re.search(r"^  toolreplay mutate: [\d.]+ s wall, [\d.]+ s CPU; ratio to run", out, re.M)
    assert re.search(r"^mutate ÷ run \(quick, examples/stock_agent\): [\d.]+× wall$", out, re.M)
