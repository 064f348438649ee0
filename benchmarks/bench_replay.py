"""Replay throughput: every committed episode (2×2 + ablations), with the libyaml loader the
cassettes use and with PyYAML's pure-Python loader, measured in one run.

    python benchmarks/bench_replay.py [--repeat N]

Prints episodes per second and the ratio. Offline: replay never touches the network.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import yaml

import toolreplay.cassettes as cassettes
from toolreplay.evals import load_eval
from toolreplay.experiment import ablation_configurations, replay_set, study_configurations

ROOT = Path(__file__).resolve().parents[1]


def measure(repeat: int) -> tuple[int, float]:
    suite = load_eval(ROOT / "evals" / "weather.yaml")
    configs = study_configurations(suite) + ablation_configurations(suite)
    count = 0
    start = time.perf_counter()
    for _ in range(repeat):
        count += len(replay_set(ROOT / "cassettes" / "reference", suite, configs))
    return count, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    measure(1)  # warm imports
    n, fast = measure(args.repeat)
    original = cassettes._Loader
    cassettes._Loader = yaml.SafeLoader
    try:
        _, slow = measure(args.repeat)
    finally:
        cassettes._Loader = original
    print(f"episodes replayed per run: {n // args.repeat} (x{args.repeat})")
    for label, seconds in (("libyaml loader", fast), ("pure-Python loader", slow)):
        rate, per = n / seconds, 1000 * seconds / n
        print(f"{label:<20} {seconds:6.2f} s  {rate:6.1f} episodes/s  {per:5.1f} ms/episode")
    print(f"speed-up: {slow / fast:.1f}x")


if __name__ == "__main__":
    main()
