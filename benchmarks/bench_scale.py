"""Replay speed, one run: start-up, replay per episode beside its floor and its peer, whole
runs by phase, and 1,000 and 2,500 distinct recorded episodes; min and median of alternated
repetitions (every figure once per repetition), on the live code path (the openai SDK over
httpx and requests; only the transport is served from cassettes).

    python benchmarks/bench_scale.py [--reps 5] [--large-reps N] [--peer-reps 15]
                                     [--skip-large] [--startup-reps 10]
    python benchmarks/bench_scale.py --quick        # smoke test: 1 repetition, no large sets
    python benchmarks/bench_scale.py --startup-only # figure 1 alone (under a minute)

Figures:

1. start-up: import time of ``toolreplay.cli`` and of the openai SDK (fresh interpreters), and
   the wall time of whole commands that answer without replaying (fresh processes, min and
   median of ``--startup-reps`` alternated runs after one warm-up run each, each with its ratio
   to ``python -c pass``), beside the floor the command line cannot go under (typer and a rich
   console); byte code cached, as installed;
2. per episode, trial 1 of the 40 reference episodes, in one fresh process
   (``bench_peer.py``, ``--peer-reps`` alternated repetitions): bare parse, the floor (the
   same host code, the SDK over ``httpx.MockTransport`` returning the recorded bodies, a
   trivial ``requests`` adapter, no matching), toolreplay replay (parse cache in memory) and
   the vcrpy peer (vcrpy's own patches and persister, toolreplay's serializer and matchers, a
   lock around ``requests``' send); wall and CPU time; ratios replay/floor (target ≤ 1.10)
   and peer/replay (target ≥ 2.5);
3. whole-process ``toolreplay run`` on the reference set (every trial, the audit, the
   report), with a new empty parse cache and with the cache the previous run left, by phase
   (``run_phases.py``): import (interpreter start to the first replay: the command line, the
   SDK, the eval file and manifest), replay, judge+audit, write (results, report, the printed
   table), exit (the command's return to the process reaped); peak RSS of the largest
   process of its tree (``wait4``);
4. 1,000 and 2,500 episodes recorded from a generated eval file of distinct questions and
   places (``scale_sets.py``: loop+oneshot and loop+atomic, one trial; every cassette a
   distinct recording, counted), kept in ``benchmarks/.cache/`` (git-ignored) and recorded
   on first use (~9 min); whole-process ``toolreplay run`` with a new empty parse cache, by
   phase, peak RSS, and t(2,500)/t(1,000);
5. the report (``report.write_report``) on the results files of those runs: time and size.

The load average is printed before and after: on a shared machine compare figures only
within one run; ratios measured in one run are what counts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_peer
import scale_sets

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "evals" / "weather.yaml"
REFERENCE = ROOT / "cassettes" / "reference"
CACHE_ENV = "TOOLREPLAY_CACHE_DIR"
#: The ``toolreplay`` console script of this interpreter (what users run), else the same entry.
_SCRIPT = Path(sys.executable).with_name("toolreplay")
PHASES_SCRIPT = Path(__file__).resolve().with_name("run_phases.py")
#: Episodes of the generated sets: questions of the generated eval (× 2 configurations).
SIZES = {1000: 500, 2500: 1250}
PHASES = ("import", "replay", "judge+audit", "write", "exit")
TOOLREPLAY = (
    [str(_SCRIPT)]
    if _SCRIPT.exists()
    else [
        sys.executable,
        "-c",
        "import sys; from toolreplay.cli.main import main; sys.exit(main())",
    ]
)
#: Start-up target (s) of ``toolreplay --help`` and ``--version``, checked on the median.
STARTUP_TARGET_S = 0.2
#: The committed results file ``report`` and ``diff`` start on (relative to the repository).
STARTUP_RESULTS = "reports/results.json"
#: ``(key, statement)`` of the import figures.
IMPORTS = (
    ("import_cli", "import toolreplay.cli.main"),
    ("import_openai", "import openai"),
    ("import_openai_chat", "import openai.resources.chat.completions, openai.types.chat"),
)

# ---- formatting ----------------------------------------------------------------------------


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} cores"


class Table:
    """Rows of ``figure | min | median | target | ✓/✗`` (the mark is for the median)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str, str]] = []

    def add(
        self,
        name: str,
        values: list[float] | None,
        unit: str = "",
        target: float | None = None,
        fmt: str = "{:.3f}",
    ) -> None:
        if not values:
            self.rows.append((name, "n/a", "n/a", "", ""))
            return
        lo, mid = min(values), statistics.median(values)
        target_text = f"≤ {target:g}{unit}" if target is not None else ""
        mark = "" if target is None else ("✓" if mid <= target else "✗")
        self.rows.append((name, fmt.format(lo) + unit, fmt.format(mid) + unit, target_text, mark))

    def row(self, name: str, lo: str, mid: str = "", target: str = "", mark: str = "") -> None:
        self.rows.append((name, lo, mid, target, mark))

    def note(self, text: str) -> None:
        self.rows.append((text, "", "", "", ""))

    def print(self) -> None:
        width = max(len(r[0]) for r in self.rows if r[1] or r[2])
        head = ("figure", "min", "median", "target", "ok")
        print(f"{head[0]:<{width}}  {head[1]:>11}  {head[2]:>11}  {head[3]:>10}  {head[4]}")
        print("-" * (width + 42))
        for name, lo, mid, target, mark in self.rows:
            if not lo and not mid:
                print(name)
            else:
                print(f"{name:<{width}}  {lo:>11}  {mid:>11}  {target:>10}  {mark}")


# ---- measurements --------------------------------------------------------------------------


def env_with_cache(cache: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env[CACHE_ENV] = "" if cache is None else str(cache)
    env.setdefault("COLUMNS", "80")
    return env


def timed_process(args: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """``(wall s, peak RSS MiB of the largest process of its tree, exit code, stdout)`` of a
    fresh process (``wait4``: the process and the children it reaped)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # reaps it: Popen must not wait again
        seconds = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().decode("utf-8", "replace")
        error = err.read().decode("utf-8", "replace")
    if code not in (0, 1) or (code == 1 and "fidelity audit failed" not in error):
        raise SystemExit(f"{' '.join(args)} failed ({code}):\n{text}\n{error}")
    return seconds, usage.ru_maxrss / 1024, code, text


def startup_env() -> dict[str, str]:
    """The environment of the start-up figures: byte code is cached, as for an installed
    package (with ``PYTHONDONTWRITEBYTECODE`` set, every process would compile the project's
    modules again and the figures would measure the compiler)."""
    env = env_with_cache(None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def import_seconds(statement: str) -> float:
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=startup_env(),
    )
    return float(out.stdout)


def startup_commands(out: Path) -> list[tuple[str, list[str], float | None]]:
    """``(figure, command, target s)`` of the start-up figures; the first is the interpreter's
    own start-up, which the others are compared with; the next two are what any command costs
    (typer and a rich console) and what ``--help`` adds (typer's rich help: rich.markdown,
    markdown-it, pygments). ``report`` writes into ``out``."""
    page = str(out / "index.html")
    return [
        ("python -c pass", [sys.executable, "-c", "pass"], None),
        (
            "floor: import typer, rich.console",
            [sys.executable, "-c", "import typer, rich.console"],
            None,
        ),
        (
            "floor of --help: import typer.rich_utils",
            [sys.executable, "-c", "import typer.rich_utils"],
            None,
        ),
        ("toolreplay --help", [*TOOLREPLAY, "--help"], STARTUP_TARGET_S),
        ("toolreplay --version", [*TOOLREPLAY, "--version"], STARTUP_TARGET_S),
        (
            f"toolreplay report --results {STARTUP_RESULTS}",
            [*TOOLREPLAY, "report", "--results", STARTUP_RESULTS, "--out", page],
            None,
        ),
        (
            f"toolreplay diff {STARTUP_RESULTS} (with itself)",
            [*TOOLREPLAY, "diff", STARTUP_RESULTS, STARTUP_RESULTS],
            None,
        ),
    ]


def measure_startup(reps: int, out: Path) -> dict[str, list[float]]:
    """Wall time (s) of each start-up command in a fresh process: one warm-up run each (byte
    code compiled, files in the page cache), then ``reps`` runs, alternated."""
    commands = startup_commands(out)
    out.mkdir(parents=True, exist_ok=True)
    env = startup_env()
    times: dict[str, list[float]] = {name: [] for name, _, _ in commands}
    for rep in range(reps + 1):
        for name, args, _ in commands:
            started = time.perf_counter()
            done = subprocess.run(
                args,
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            seconds = time.perf_counter() - started
            if done.returncode != 0:
                raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
            if rep:  # the first round warms up
                times[name].append(seconds)
    return times


def add_startup_rows(table: Table, measured: dict[str, list[float]], out: Path) -> None:
    """Figure 1: the imports, then the commands, each followed by its ratio to the
    interpreter's own start-up (``python -c pass``)."""
    table.note("1. start-up (fresh interpreters)")
    table.add("  import toolreplay.cli.main", measured["import_cli"], " s")
    table.add("  import openai", measured["import_openai"], " s")
    table.add(
        "  import openai + its chat resources (what replay loads)",
        measured["import_openai_chat"],
        " s",
    )
    commands = startup_commands(out)
    base = measured[commands[0][0]]
    table.note("  whole commands, wall time (ratio: min/min, median/median)")
    for name, _, target in commands:
        values = measured[name]
        table.add(f"  {name}", values, " s", target)
        if values is not base:
            table.row(
                "    × python -c pass",
                f"{min(values) / min(base):.1f}×",
                f"{statistics.median(values) / statistics.median(base):.1f}×",
            )


def startup_only(reps: int, startup_reps: int) -> None:
    """Figure 1 alone: the imports ``reps`` times, the commands ``startup_reps`` times."""
    print(f"python {sys.version.split()[0]}; before: {load_average()}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    measured: dict[str, list[float]] = {}
    for _ in range(reps):
        for key, statement in IMPORTS:
            measured.setdefault(key, []).append(import_seconds(statement))
    measured.update(measure_startup(startup_reps, tmp))
    print(f"\nafter: {load_average()}")
    print(f"imports {reps}, commands {startup_reps} repetition(s); ✓/✗ on the median\n")
    table = Table()
    add_startup_rows(table, measured, tmp)
    table.print()
    shutil.rmtree(tmp, ignore_errors=True)


def run_args(eval_file: Path, set_dir: Path, out: Path, workers: int | None) -> list[str]:
    """The arguments of ``toolreplay run`` on a set (without the program)."""
    args = ["run", "--eval", str(eval_file), "--cassettes", str(set_dir.parent)]
    args += ["--set", set_dir.name, "--out", str(out)]
    return args + (["--workers", str(workers)] if workers else [])


def phased_process(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """``{"wall", "rss", "code", "stdout", "phases": {phase: s}}`` of ``toolreplay ARGS`` in a
    fresh process through ``run_phases.py`` (the same entry as the script)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        stamps_file = Path(f.name)
    env = {**env, "BENCH_PHASES_FILE": str(stamps_file)}
    started = time.time()
    seconds, rss, code, text = timed_process([sys.executable, str(PHASES_SCRIPT), *args], env)
    ended = started + seconds
    stamps = json.loads(stamps_file.read_text(encoding="utf-8"))
    stamps_file.unlink()
    phases = {
        "import": stamps["replay_start"] - started,
        "replay": stamps["replay_end"] - stamps["replay_start"],
        "judge+audit": stamps["write_start"] - stamps["replay_end"],
        "write": stamps["done"] - stamps["write_start"],
        "exit": ended - stamps["done"],
    }
    return {"wall": seconds, "rss": rss, "code": code, "stdout": text, "phases": phases}


def peer_figures(reps: int) -> dict[str, Any]:
    """:func:`bench_peer.measure` in a fresh process (its own parse cache)."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import bench_peer; "
        "print(json.dumps(bench_peer.measure(reps=int(sys.argv[2]))))"
    )
    tmp = tempfile.mkdtemp(prefix="bench-peer-cache-")
    out = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).resolve().parent), str(reps)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env_with_cache(Path(tmp)),
    )
    shutil.rmtree(tmp, ignore_errors=True)
    result: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    return result


def add_phase_rows(table: Table, name: str, runs: list[dict[str, Any]]) -> None:
    table.add(name, [r["wall"] for r in runs], " s")
    for phase in PHASES:
        table.add(f"    {phase}", [r["phases"][phase] for r in runs], " s")
    table.add("    peak RSS, largest process", [r["rss"] for r in runs], " MiB", fmt="{:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 5)")
    parser.add_argument(
        "--large-reps", type=int, default=None, help="repetitions of the large runs [--reps]"
    )
    parser.add_argument(
        "--peer-reps", type=int, default=None, help="repetitions of figure 2 (default 15)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke test: 1 repetition")
    parser.add_argument("--skip-large", action="store_true", help="no 1,000/2,500 sets")
    parser.add_argument("--startup-reps", type=int, default=None, help="default 10 (3 quick)")
    parser.add_argument("--startup-only", action="store_true", help="only figure 1")
    args = parser.parse_args()
    reps = max(1, args.reps if args.reps is not None else (1 if args.quick else 5))
    startup_reps = max(
        1, args.startup_reps if args.startup_reps is not None else (3 if args.quick else 10)
    )
    if args.startup_only:
        startup_only(reps, startup_reps)
        return
    peer_reps = max(1, args.peer_reps or (3 if args.quick else 15))
    large_reps = reps if args.large_reps is None else max(1, min(reps, args.large_reps))
    started_all = time.perf_counter()
    print(f"python {sys.version.split()[0]}; before: {load_average()}", flush=True)
    large: dict[int, tuple[Path, Path]] = {}
    distinct: dict[int, tuple[int, int]] = {}
    if not (args.skip_large or args.quick):
        largest = max(SIZES.values())
        for n, q in SIZES.items():
            large[n] = scale_sets.recorded_set(q, largest)
            distinct[n] = scale_sets.distinct_cassettes(large[n][1])
    tmp = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    measured: dict[str, list[float]] = {}
    runs: dict[str, list[dict[str, Any]]] = {}
    audits: dict[str, set[str]] = {}

    def fresh_cache() -> Path:
        return Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))

    def whole_run(name: str, args_: list[str], cache: Path) -> None:
        result = phased_process(args_, env_with_cache(cache))
        runs.setdefault(name, []).append(result)
        audit = next(
            (x.strip() for x in result["stdout"].splitlines() if x.startswith("fidelity:")), "?"
        )
        audits.setdefault(name, set()).add(f"exit {result['code']}; {audit}")

    print(f"start-up: {startup_reps} run(s) of each command …", flush=True)
    measured.update(measure_startup(startup_reps, tmp / "startup"))
    print(f"per episode: {peer_reps} repetitions of parse, floor, replay, peer …", flush=True)
    peer = peer_figures(peer_reps)
    for rep in range(reps):  # alternated: every figure once per repetition
        print(f"repetition {rep + 1}/{reps} …", flush=True)
        for key, statement in IMPORTS:
            measured.setdefault(key, []).append(import_seconds(statement))
        cache = fresh_cache()
        out = tmp / "ref"
        whole_run("ref_cold", run_args(EVAL, REFERENCE, out, None), cache)
        whole_run("ref_warm", run_args(EVAL, REFERENCE, out, None), cache)
        if rep < large_reps:
            for n, (eval_file, set_dir) in large.items():
                whole_run(f"x{n}", run_args(eval_file, set_dir, tmp / f"x{n}", None), fresh_cache())
        for old in tmp.glob("cache-*"):
            shutil.rmtree(old, ignore_errors=True)

    report_times: dict[int, list[float]] = {}
    report_sizes: dict[int, float] = {}
    report_counts: dict[int, int] = {}
    if large:
        from toolreplay.report.render import write_report

        for _ in range(reps):
            for n in large:
                page = tmp / f"report-x{n}.html"
                started = time.perf_counter()
                write_report(tmp / f"x{n}" / "results.json", page)
                report_times.setdefault(n, []).append(time.perf_counter() - started)
                report_sizes[n] = page.stat().st_size / 1e6
        for n in large:
            doc = json.loads((tmp / f"x{n}" / "results.json").read_text(encoding="utf-8"))
            report_counts[n] = len(doc.get("episodes", []))

    elapsed = time.perf_counter() - started_all
    print(f"\nafter: {load_average()}")
    print(
        f"{reps} repetition(s), alternated"
        + (f" ({large_reps} of the large sets)" if large else "")
        + f"; figure 2: {peer_reps}; whole benchmark {elapsed:.0f} s; ✓/✗ on the median\n"
    )
    table = Table()
    add_startup_rows(table, measured, tmp / "startup")
    table.note(f"2. per episode, trial 1 of the {peer['episodes']} reference episodes, one process")
    for name, lo, mid, target, mark in bench_peer.rows(peer):
        table.row(f"  {name}", lo, mid, target, mark) if lo else table.note(f"  {name}")
    table.note("3. whole-process `toolreplay run`, reference set (all trials + audit), by phase")
    add_phase_rows(table, "  new parse cache", runs["ref_cold"])
    add_phase_rows(table, "  parse cache warm (the previous run's)", runs["ref_warm"])
    if large:
        table.note("4. generated sets recorded with the stand-in (distinct questions and places;")
        table.note("   loop+oneshot, loop+atomic; one trial; new parse cache)")
        for n in large:
            files, unique = distinct[n]
            table.note(f"  {n:,} episodes: {files:,} cassettes, {unique:,} distinct contents")
            add_phase_rows(table, f"  toolreplay run, {n:,} episodes", runs[f"x{n}"])
        small, big = min(large), max(large)
        ts, tb = [r["wall"] for r in runs[f"x{small}"]], [r["wall"] for r in runs[f"x{big}"]]
        table.row(
            f"  t({big:,})/t({small:,}) (episodes ×{big / small:g})",
            f"{min(tb) / min(ts):.2f}",
            f"{statistics.median(tb) / statistics.median(ts):.2f}",
        )
        for key in ("replay",):
            ps = [r["phases"][key] for r in runs[f"x{small}"]]
            pb = [r["phases"][key] for r in runs[f"x{big}"]]
            table.row(
                f"  {key} phase: t({big:,})/t({small:,})",
                f"{min(pb) / min(ps):.2f}",
                f"{statistics.median(pb) / statistics.median(ps):.2f}",
            )
        table.note("5. report (write_report, in this process) on a run's results.json")
        for n in large:
            table.add(
                f"  {n:,}-episode run ({report_counts[n]} episodes in results.json)",
                report_times[n],
                " s",
                5.0,
            )
            mb = report_sizes[n]
            table.row("    HTML size", f"{mb:.2f} MB", "", "≤ 10 MB", "✓" if mb <= 10 else "✗")
    table.print()
    print()
    for name, seen in sorted(audits.items()):
        print(f"  {name}: {' / '.join(sorted(seen))}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
