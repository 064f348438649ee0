"""Replay of the whole committed cassettes, every trial: the reference set (2×2 and the six
ablated baselines, all trials) and the harder eval's set, timed per set.

    python benchmarks/bench_trials.py

Prints episodes, seconds (wall and CPU) and episodes per second for each set. Offline.
"""

from __future__ import annotations

import time
from pathlib import Path

from toolreplay.cassettes.manifest import read_manifest
from toolreplay.evals import load_eval
from toolreplay.runs.configuration import ablation_configurations, study_configurations
from toolreplay.runs.trials import replay_trials

ROOT = Path(__file__).resolve().parents[1]
SETS = (("reference", "weather.yaml"), ("hard", "weather-hard.yaml"))


def main() -> None:
    load_eval(ROOT / "evals" / "weather.yaml")  # warm imports
    total, total_wall, total_cpu = 0, 0.0, 0.0
    for name, eval_file in SETS:
        set_dir = ROOT / "cassettes" / name
        suite = load_eval(ROOT / "evals" / eval_file)
        configs = study_configurations(suite) + ablation_configurations(suite)
        wall, cpu = time.perf_counter(), time.process_time()
        n = len(replay_trials(set_dir, suite, configs))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        trials = read_manifest(set_dir).trials
        print(
            f"{name}: {n} episodes ({trials} trial(s) each) in {wall:.1f} s wall, "
            f"{cpu:.1f} s CPU, {n / wall:.1f} episodes/s"
        )
        total, total_wall, total_cpu = total + n, total_wall + wall, total_cpu + cpu
    print(f"all: {total} episodes in {total_wall:.1f} s wall, {total_cpu:.1f} s CPU")


if __name__ == "__main__":
    main()
