"""What the mutation score costs, one run: whole-process ``toolreplay mutate`` against
``toolreplay run`` on the same episodes, alternated repetitions, the ratio printed.

    python benchmarks/bench_mutate.py [--reps 1] [--questions 500]   # 1,000 episodes + reference
    python benchmarks/bench_mutate.py --quick     # smoke test: examples/stock_agent, 1 repetition

Sets: the reference set (``cassettes/reference``, ``evals/weather.yaml``) and the 1,000-episode
generated set of ``scale_sets.py`` (``--questions`` questions × 2 configurations, distinct
recordings kept in ``benchmarks/.cache/``, recorded with the stand-in on first use, ~2 min).
With ``--quick``, the test suite folder of ``examples/stock_agent`` only.

Each repetition runs, in this order, in fresh processes: ``toolreplay run`` (every trial, the
audit, results.json and the report written to a temporary folder), ``toolreplay mutate`` with
its default options (``--workers`` the number of cores), and ``toolreplay mutate --workers 2``
when that is not the default. Wall time and CPU time (user + system of the process and the
workers it reaped, ``wait4``); the figure is the median over repetitions and the ratio
mutate ÷ run is taken within each repetition (paired), its median printed. Target (issue 32):
mutate ≤ 10× run on 1,000 episodes. The load average is printed before and after: on a shared
machine compare only the ratios measured in one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale_sets

ROOT = Path(__file__).resolve().parents[1]
TOOLREPLAY = scale_sets.TOOLREPLAY
#: mutate ÷ run on 1,000 episodes, at most (issue 32's acceptance).
TARGET = 10.0


def timed(args: list[str]) -> tuple[float, float]:
    """``(wall s, CPU s)`` of ``toolreplay args`` in a fresh process (output discarded; a
    failing command raises CalledProcessError)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*TOOLREPLAY, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode not in (0, 1):  # 1: episodes failed, or a score under --fail-under
        raise subprocess.CalledProcessError(proc.returncode, args, stderr=err)
    return wall, usage.ru_utime + usage.ru_stime


def variants() -> dict[str, list[str]]:
    """The mutate commands measured: the defaults, and ``--workers 2`` unless that is the
    default (a machine of two cores)."""
    out = {"mutate": []}
    if (os.cpu_count() or 1) != 2:
        out["mutate -j2"] = ["--workers", "2"]
    return out


def measure(name: str, where: list[str], reps: int) -> dict[str, list[tuple[float, float]]]:
    """Every command's ``(wall, CPU)`` per repetition on the set ``where`` names (the
    ``--eval``/``--cassettes``/``--set`` options), alternated."""
    times: dict[str, list[tuple[float, float]]] = {"run": []}
    for label in variants():
        times[label] = []
    for rep in range(reps):
        with tempfile.TemporaryDirectory() as out:
            times["run"].append(timed(["run", *where, "--out", out]))
        for label, extra in variants().items():
            times[label].append(timed(["mutate", *where, *extra]))
        line = ", ".join(f"{k} {v[-1][0]:.1f} s" for k, v in times.items())
        print(f"  {name} repetition {rep + 1}: {line}", flush=True)
    return times


def report(name: str, episodes: int, times: dict[str, list[tuple[float, float]]]) -> float:
    """Print the set's figures; returns the median paired wall ratio mutate ÷ run."""
    run = times["run"]
    med = statistics.median
    print(
        f"{name}: {episodes} episodes; toolreplay run {med(w for w, _ in run):.1f} s wall, "
        f"{med(c for _, c in run):.1f} s CPU"
    )
    ratio = 0.0
    for label, values in times.items():
        if label == "run":
            continue
        wall = med(w / r[0] for (w, _), r in zip(values, run, strict=True))
        cpu = med(c / r[1] for (_, c), r in zip(values, run, strict=True))
        ratio = ratio or wall
        print(
            f"  toolreplay {label}: {med(w for w, _ in values):.1f} s wall, "
            f"{med(c for _, c in values):.1f} s CPU; ratio to run {wall:.1f}× wall, "
            f"{cpu:.1f}× CPU"
        )
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=1, help="alternated repetitions")
    parser.add_argument("--questions", type=int, default=500, help="of the generated set")
    parser.add_argument("--quick", action="store_true", help="examples/stock_agent, 1 repetition")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"cores: {os.cpu_count()}; mutate's default --workers is the number of cores"
        + ("" if "mutate -j2" in variants() else " (2: --workers 2 is the default, measured once)")
    )
    if args.quick:
        stock = ["--eval", "examples/stock_agent/eval.yaml"]
        ratio = report("examples/stock_agent", 12, measure("stock_agent", stock, 1))
        print(f"mutate ÷ run (quick, examples/stock_agent): {ratio:.1f}× wall")
        return 0
    eval_file, set_dir = scale_sets.recorded_set(args.questions, args.questions)
    files, distinct = scale_sets.distinct_cassettes(set_dir)
    large = [
        "--eval", str(eval_file), "--cassettes", str(set_dir.parent), "--set", set_dir.name,
    ]  # fmt: skip
    reference = report("reference", 80, measure("reference", [], args.reps))
    episodes = scale_sets.CONFIGURATIONS * args.questions
    print(f"{set_dir.relative_to(ROOT)}: {files} cassettes, {distinct} distinct")
    ratio = report(set_dir.name, episodes, measure(set_dir.name, large, args.reps))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ok = ratio <= TARGET
    print(
        f"mutate ÷ run: {ratio:.1f}× wall on {episodes} episodes (reference set {reference:.1f}×); "
        f"target ≤ {TARGET:.0f}×: {'OK' if ok else 'OVER'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
