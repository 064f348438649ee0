"""Before/after on the reference set, alternated in one run: another source tree (e.g. the
commit before a change) against this one, each measured in fresh processes.

    git archive COMMIT src | tar -x -C /tmp/before
    python benchmarks/bench_before_after.py /tmp/before/src [--reps 5]

Per repetition and tree: bare ``yaml.load(CSafeLoader)`` of the 40 reference cassettes
(trial 1 of each configuration × question) and ``replay_set`` of the same 40 episodes (ms per
episode, one process, after a warm-up replay), then whole-process ``toolreplay run`` (s; every
trial and the audit). Each process gets a new empty parse cache (``TOOLREPLAY_CACHE_DIR``).
Prints min and median, and the replay/parse ratio. Both trees replay this checkout's cassettes
and eval file, so the other tree must read the same cassette layout.
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
INNER = r"""
import json, sys, time, yaml
from pathlib import Path
from toolreplay.cassettes import cassette_path
from toolreplay.evals import load_eval
from toolreplay.experiment import ablation_configurations, replay_set, study_configurations
root = Path(sys.argv[1])
suite = load_eval(root / "evals" / "weather.yaml")
configs = study_configurations(suite) + ablation_configurations(suite)
set_dir = root / "cassettes" / "reference"
texts = [cassette_path(set_dir, c.name, q.id, 1).read_text(encoding="utf-8")
         for c in configs for q in suite.questions]
replay_set(set_dir, suite, configs)  # warm-up: imports and first-use caches
started = time.perf_counter()
for text in texts:
    yaml.load(text, Loader=yaml.CSafeLoader)
parse = (time.perf_counter() - started) / len(texts) * 1000
started = time.perf_counter()
replay_set(set_dir, suite, configs)
replay = (time.perf_counter() - started) / len(texts) * 1000
print(json.dumps({"parse": parse, "replay": replay}))
"""


def env_for(src: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env["TOOLREPLAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-before-after-cache-")
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def per_episode(src: Path | None) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", INNER, str(ROOT)],
        env=env_for(src),
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def whole_run(src: Path | None, out: Path) -> float:
    code = "import sys; from toolreplay.cli import main; sys.exit(main())"
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code, "run", "--out", str(out)],
        env=env_for(src),
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("before", type=Path, help="the other tree's src/ folder")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    found: dict[str, list[float]] = {}
    out = Path(tempfile.mkdtemp(prefix="bench-before-after-"))
    for _ in range(args.reps):
        for tag, src in (("before", args.before.resolve()), ("after", None)):
            one = per_episode(src)
            found.setdefault(f"{tag} parse (ms/episode)", []).append(one["parse"])
            found.setdefault(f"{tag} replay (ms/episode)", []).append(one["replay"])
            found.setdefault(f"{tag} toolreplay run (s)", []).append(whole_run(src, out / tag))
    print(f"load average after: {os.getloadavg()[0]:.2f}; {args.reps} repetitions")
    for name, values in found.items():
        print(f"{name:30} min {min(values):9.3f}  median {statistics.median(values):9.3f}")
    for tag in ("before", "after"):
        p, r = found[f"{tag} parse (ms/episode)"], found[f"{tag} replay (ms/episode)"]
        print(
            f"{tag} replay/parse ratio: min {min(r) / min(p):.2f}, "
            f"median {statistics.median(r) / statistics.median(p):.2f}"
        )


if __name__ == "__main__":
    main()
