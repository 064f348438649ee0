"""The wire readers' cost on Chat Completions cassettes, before and after a change, alternated
in one run: episodes read from a cassette's interactions alone (what ``toolreplay run
--cassettes``, ``pytest --toolreplay-report`` and the audit of a test suite do per cassette).

    git archive COMMIT src | tar -x -C /tmp/before
    python benchmarks/bench_wire.py /tmp/before/src [--reps 7] [--passes 20]

Every Chat Completions cassette this checkout holds (the reference set's, the examples', the
foreign ones under ``tests/data/foreign/``) is loaded once per process (YAML parsed before
timing); each repetition then runs, in a fresh process per tree, ``--passes`` passes of
``read_wire_episodes`` over every cassette's interactions and reports the CPU seconds per
pass. Trees alternate (before, after, before, ...) so that the machine's load falls on both
alike. Prints min and median per tree and after ÷ before (target ≤ 1.05: the Chat Completions
path unchanged by the protocol dispatch).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Run in the child process: prints the CPU seconds of one pass (min over passes is the
#: parent's business; the child reports the mean of its passes).
CHILD = r"""
import json, sys, time
from pathlib import Path
import yaml
from toolreplay.wire.interactions import read_exchanges
try:
    from toolreplay.wire.reader import read_wire_episodes
except ImportError:
    from toolreplay.wire.chat_completions import read_wire_episodes
paths, passes = json.loads(sys.argv[1]), int(sys.argv[2])
loaded = []
for p in paths:
    try:  # a file plain safe YAML cannot load (an aiohttp recording's istr tags) is left out
        data = yaml.load(Path(p).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        interactions = data["interactions"]
        chat = any(x.is_chat_completion for x in read_exchanges(interactions))
    except Exception:
        continue  # (and one an older tree's reader cannot take: the same files on both sides)
    if chat:
        loaded.append(interactions)
episodes = sum(len(read_wire_episodes(i)) for i in loaded)  # warm-up, and the count
start = time.process_time()
for _ in range(passes):
    for interactions in loaded:
        read_wire_episodes(interactions)
per_pass = (time.process_time() - start) / passes
print(json.dumps({"cassettes": len(loaded), "episodes": episodes, "per_pass": per_pass}))
"""


def cassettes() -> list[str]:
    """The Chat Completions cassettes of this checkout (YAML files holding interactions)."""
    roots = [ROOT / "cassettes", ROOT / "examples", ROOT / "tests" / "data" / "foreign"]
    return sorted(
        str(p)
        for r in roots
        for p in r.rglob("*.yaml")
        if "interactions" in p.read_text(encoding="utf-8", errors="replace")[:4000]
    )


def run(tree: Path, paths: list[str], passes: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(paths), str(passes)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="the src/ folder of the tree to compare with")
    parser.add_argument("--reps", type=int, default=7, help="alternated repetitions per tree")
    parser.add_argument("--passes", type=int, default=20, help="passes per process")
    args = parser.parse_args()
    paths = cassettes()
    trees = {"before": args.before.resolve(), "after": ROOT / "src"}
    times: dict[str, list[float]] = {name: [] for name in trees}
    shown = {}
    for _ in range(args.reps):
        for name, tree in trees.items():
            result = run(tree, paths, args.passes)
            times[name].append(result["per_pass"])
            shown[name] = result
    for name in trees:
        t = times[name]
        print(
            f"{name}: {shown[name]['cassettes']:.0f} cassettes, {shown[name]['episodes']:.0f} "
            f"episodes; per pass min {min(t) * 1000:.1f} ms, median "
            f"{statistics.median(t) * 1000:.1f} ms"
        )
    ratio = statistics.median(times["after"]) / statistics.median(times["before"])
    best = min(times["after"]) / min(times["before"])
    print(f"after / before: median {ratio:.3f}, min {best:.3f} (target <= 1.05)")


if __name__ == "__main__":
    main()
