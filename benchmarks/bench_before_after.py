"""Before/after, alternated in one run: another source tree (e.g. the commit before a change)
against this one, each measured in fresh processes on this checkout's cassettes.

    git archive COMMIT src | tar -x -C /tmp/before
    python benchmarks/bench_before_after.py /tmp/before/src [--reps 5] [--peer-reps 3]

Per repetition and tree: the per-episode figures of ``bench_peer.py`` (bare parse, the floor,
toolreplay replay, the vcrpy peer; trial 1 of the 40 reference episodes, ``--peer-reps``
passes in one fresh process after a warm-up), then a whole-process ``toolreplay run`` of the
reference set by phase (``run_phases.py``: import, replay, judge+audit, write, exit). Each
process gets a new empty parse cache (``TOOLREPLAY_CACHE_DIR``). Prints min and median and
the ratios replay/floor and peer/replay of each tree. Both trees replay this checkout's
cassettes and eval file, so the other tree must read the same cassette layout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
PHASES = ("import", "replay", "judge+audit", "write", "exit")
PEER = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_peer; "
    "print(json.dumps(bench_peer.measure(reps=int(sys.argv[2]))))"
)


def env_for(src: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env["TOOLREPLAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-before-after-cache-")
    env["PYTHONPATH"] = str(src if src is not None else ROOT / "src")
    return env


def per_episode(src: Path | None, reps: int) -> dict[str, list[float]]:
    out = subprocess.run(
        [sys.executable, "-c", PEER, str(HERE), str(reps)],
        env=env_for(src),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, list[float]] = json.loads(out.stdout.splitlines()[-1])
    return result


def whole_run(src: Path | None, out: Path) -> dict[str, float]:
    """Wall time and phases (s) of ``toolreplay run --out OUT`` in a fresh process."""
    stamps_file = Path(tempfile.mkstemp(suffix=".json")[1])
    env = {**env_for(src), "BENCH_PHASES_FILE": str(stamps_file)}
    started = time.time()
    subprocess.run(
        [sys.executable, str(HERE / "run_phases.py"), "run", "--out", str(out)],
        env=env,
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    ended = time.time()
    s = json.loads(stamps_file.read_text(encoding="utf-8"))
    stamps_file.unlink()
    return {
        "toolreplay run": ended - started,
        "import": s["replay_start"] - started,
        "replay": s["replay_end"] - s["replay_start"],
        "judge+audit": s["write_start"] - s["replay_end"],
        "write": s["done"] - s["write_start"],
        "exit": ended - s["done"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("before", type=Path, help="the other tree's src/ folder")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--peer-reps", type=int, default=3, help="passes per process")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    found: dict[str, list[float]] = {}
    out = Path(tempfile.mkdtemp(prefix="bench-before-after-"))
    for _ in range(args.reps):
        for tag, src in (("before", args.before.resolve()), ("after", None)):
            one = per_episode(src, args.peer_reps)
            for way in ("parse", "floor", "replay", "peer"):
                found.setdefault(f"{tag} {way} (ms/episode)", []).extend(one[way])
            for name, value in whole_run(src, out / tag).items():
                found.setdefault(f"{tag} {name} (s)", []).append(value)
    print(f"load average after: {os.getloadavg()[0]:.2f}; {args.reps} repetitions")
    width = max(map(len, found))
    for name, values in sorted(found.items(), key=lambda kv: kv[0].split(" ", 1)[::-1]):
        print(f"{name:{width}}  min {min(values):9.3f}  median {statistics.median(values):9.3f}")
    for tag in ("before", "after"):
        for a, b in (("replay", "floor"), ("peer", "replay")):
            x, y = found[f"{tag} {a} (ms/episode)"], found[f"{tag} {b} (ms/episode)"]
            print(
                f"{tag} {a}/{b}: min {min(x) / min(y):.2f}, "
                f"median {statistics.median(x) / statistics.median(y):.2f}"
            )


if __name__ == "__main__":
    main()
