"""Replay speed, one run: start-up, replay per episode beside its floor and vcrpy, whole
runs by phase, and 1,000 to 10,000 distinct recorded episodes; min and median of alternated
repetitions (every figure once per repetition), ratios paired by repetition, on the live code
path (the openai SDK over httpx and requests; only the transport is served from cassettes).

    python benchmarks/bench_scale.py [--reps 5] [--large-reps N] [--peer-reps 15]
                                     [--sizes 1000,2500,10000] [--jobs N]
                                     [--skip-large] [--startup-reps 10]
    python benchmarks/bench_scale.py --quick        # smoke test: every figure once, tiny sets
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
   trivial ``requests`` adapter, no matching), toolreplay replay (parse cache in memory), and
   vcrpy two ways: with its own ``yaml`` serializer and persister on the same cassettes
   converted to its stock format (stock vcrpy cannot read toolreplay's ``parsed_body``), and
   with toolreplay's serializer on toolreplay's cassettes (both with toolreplay's matchers and
   a lock around ``requests``' send); wall and CPU time; ratios paired by repetition:
   replay/floor (target ≤ 1.10), vcrpy own parser/replay (target ≥ 2.5), vcrpy toolreplay's
   parser/replay;
3. whole-process ``toolreplay run`` on the reference set (every trial, the audit, the
   report), with a new empty parse cache and with the cache the previous run left, by phase
   (``run_phases.py``): import (interpreter start to the first replay: the command line, the
   SDK, the eval file and manifest), replay (``replay_outcomes``: the workers' episodes
   gathered), judge+audit, write (results, report, the printed table), exit (the command's
   return to the process reaped); the serial tail (from the end of the last replay to the
   process reaped, as a share of the wall time: what more workers cannot shrink); CPU per
   episode (user + sys of the process and the workers it reaped, ``wait4``, ÷ the set's
   episodes); peak RSS of the largest process of its tree; the empty-cache run ÷ the warm one
   (target ≤ 1.5);
4. ``--sizes`` episodes (default 1,000, 2,500 and 10,000) recorded from a generated eval file
   of distinct questions and places (``scale_sets.py``: loop+oneshot and loop+atomic, one
   trial; every cassette a distinct recording, counted), kept in ``benchmarks/.cache/``
   (git-ignored) and recorded on first use with the stand-in in ``--jobs`` processes (the
   10,000-episode set in 22 min on 2 shared cores); whole-process ``toolreplay run`` of each
   with an empty parse cache, then again with the cache it left: by phase, the serial tail's
   share (target ≤ 10 %), CPU per episode (targets ≤ 12 ms empty, ≤ 9 ms warm), peak RSS
   (target ≤ 1 GiB), and t(largest)/t(smallest) with an empty cache, paired by repetition
   (target ≤ 1.1 × the ratio of episodes: ≤ 11 from 1,000 to 10,000); beside each set's runs,
   in the same repetition, the floor on :data:`FLOOR_SAMPLE` of its episodes, spread evenly
   over both configurations (``bench_peer.floor_cpu``, a fresh process: the host code with
   the SDK over ``httpx.MockTransport``, nothing read, judged or written), the CPU per
   episode no change of toolreplay's can take off a run, and each run's CPU per episode ÷ it.
   The generated sets have no ablated configurations, so their audit fails its ``ablation``
   and ``near_miss`` checks (exit 1, printed at the end): expected;
5. the report (``report.write_report``) on the results files of those runs: the time to write
   every page (target ≤ 3 s up to 2,500 episodes) and the report page's size (target ≤ 2 MB).

``--quick`` runs every figure once: one repetition, no start-up warm-up, figure 4 on sets of
4 and 8 episodes (recorded on first use under ``$TOOLREPLAY_BENCH_CACHE`` when set): a smoke
test (``tests/test_bench_scale.py``), not figures. The load average is printed before and
after: on a shared machine compare figures only within one run; ratios measured in one run
are what counts.
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
#: Figure 4's sets, in episodes (``--sizes``; questions of the generated eval × 2).
DEFAULT_SIZES = "1000,2500,10000"
QUICK_SIZES = "4,8"
#: Targets (issue 33), checked on the median: CPU per episode with an empty and a warm parse
#: cache, peak RSS, the serial tail's share of the wall time, t(big)/t(small) ÷ episodes,
#: the reference set's empty-cache run ÷ its warm one.
TARGET_CPU_COLD_MS = 12.0
TARGET_CPU_WARM_MS = 9.0
TARGET_RSS_MIB = 1024.0
TARGET_TAIL_PERCENT = 10.0
TARGET_LINEARITY = 1.1
TARGET_COLD_WARM = 1.5
#: Episodes of each generated set the floor is measured on (figure 4's live-path row).
FLOOR_SAMPLE = 1000
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
#: Report targets (issue 33): the report page ≤ 2 MB at any size, the report written in ≤ 3 s
#: up to 2,500 episodes (no time target past that: it grows with the transcripts page).
REPORT_PAGE_TARGET_MB = 2.0
REPORT_TARGET_S = 3.0
REPORT_TARGET_EPISODES = 2500

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


def timed_process(args: list[str], env: dict[str, str]) -> tuple[float, float, int, str, float]:
    """``(wall s, peak RSS MiB of the largest process of its tree, exit code, stdout, CPU s)``
    of a fresh process (``wait4``: the process and the children it reaped; CPU is user +
    sys)."""
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
    return seconds, usage.ru_maxrss / 1024, code, text, usage.ru_utime + usage.ru_stime


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


def measure_startup(reps: int, out: Path, warm_up: bool = True) -> dict[str, list[float]]:
    """Wall time (s) of each start-up command in a fresh process: one warm-up run each (byte
    code compiled, files in the page cache; unless not ``warm_up``), then ``reps`` runs,
    alternated."""
    commands = startup_commands(out)
    out.mkdir(parents=True, exist_ok=True)
    env = startup_env()
    times: dict[str, list[float]] = {name: [] for name, _, _ in commands}
    for rep in range(0 if warm_up else 1, reps + 1):
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


def set_episodes(set_dir: Path) -> int:
    """Episodes of a set (every trial): what a whole ``toolreplay run`` of it replays."""
    manifest = json.loads((set_dir / "manifest.json").read_text(encoding="utf-8"))
    return len(manifest["episodes"])


def phased_process(args: list[str], env: dict[str, str], episodes: int = 1) -> dict[str, Any]:
    """``{"wall", "rss", "cpu_ms", "code", "stdout", "phases": {phase: s}, "tail"}`` of
    ``toolreplay ARGS`` in a fresh process through ``run_phases.py`` (the same entry as the
    script): wall time (s), peak RSS of the largest process of its tree (MiB), CPU time
    (user + sys of the process and every worker it reaped) per episode (ms, of
    ``episodes``), the phases (s) and the serial tail: from the end of the last replay
    (every worker's episodes gathered) to the process reaped, as a share of the wall time.
    SystemExit when the run failed or did not reach a phase (a hook that missed)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        stamps_file = Path(f.name)
    env = {**env, "BENCH_PHASES_FILE": str(stamps_file)}
    started = time.time()
    seconds, rss, code, text, cpu = timed_process([sys.executable, str(PHASES_SCRIPT), *args], env)
    ended = started + seconds
    stamps = json.loads(stamps_file.read_text(encoding="utf-8"))
    stamps_file.unlink()
    missing = [
        k for k in ("replay_start", "replay_end", "replay_last_end", "write_start", "done")
        if k not in stamps
    ]  # fmt: skip
    if missing:
        raise SystemExit(
            f"run_phases.py: {', '.join(missing)} never stamped in toolreplay {' '.join(args)}: "
            f"the run no longer calls {'.'.join(run_phases_hooks()[0])} or "
            f"{'.'.join(run_phases_hooks()[1])}; hook what it calls now"
        )
    phases = {
        "import": stamps["replay_start"] - started,
        "replay": stamps["replay_end"] - stamps["replay_start"],
        "judge+audit": stamps["write_start"] - stamps["replay_end"],
        "write": stamps["done"] - stamps["write_start"],
        "exit": ended - stamps["done"],
    }
    return {
        "wall": seconds,
        "rss": rss,
        "cpu_ms": cpu / episodes * 1000,
        "code": code,
        "stdout": text,
        "phases": phases,
        "tail": (ended - stamps["replay_last_end"]) / seconds,
    }


def run_phases_hooks() -> tuple[tuple[str, str], tuple[str, str]]:
    """The functions ``run_phases.py`` stamps: the replay, the first writer."""
    sys.path.insert(0, str(PHASES_SCRIPT.parent))
    import run_phases

    return run_phases.REPLAY, run_phases.WRITERS[0]


def peer_figures(reps: int) -> dict[str, Any]:
    """:func:`bench_peer.measure` in a fresh process (its own parse cache)."""
    result: dict[str, Any] = _in_fresh_process("measure", f"reps={reps}")
    return result


def floor_figures(eval_file: Path, set_dir: Path, limit: int = FLOOR_SAMPLE) -> list[float]:
    """:func:`bench_peer.floor_cpu` on ``limit`` episodes of a set, spread over it, in a fresh
    process: ms of CPU per episode of the live code path alone, one figure per pass."""
    found: list[float] = _in_fresh_process(
        "floor_cpu", f"Path({str(set_dir)!r}), Path({str(eval_file)!r}), {limit}, passes=2"
    )
    return found


def _in_fresh_process(function: str, arguments: str) -> Any:
    """``bench_peer.<function>(<arguments>)`` in a fresh interpreter (its own parse cache),
    its JSON result; SystemExit when it fails."""
    code = (
        "import json, sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
        f"import bench_peer; print(json.dumps(bench_peer.{function}({arguments})))"
    )
    tmp = tempfile.mkdtemp(prefix="bench-peer-cache-")
    out = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).resolve().parent)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env_with_cache(Path(tmp)),
    )
    shutil.rmtree(tmp, ignore_errors=True)
    if out.returncode != 0:
        raise SystemExit(f"bench_peer.{function} failed ({out.returncode}):\n{out.stderr}")
    return json.loads(out.stdout.splitlines()[-1])


def add_phase_rows(
    table: Table,
    name: str,
    runs: list[dict[str, Any]],
    cpu_target: float | None = None,
    rss_target: float | None = None,
    tail_target: float | None = None,
) -> None:
    """A whole run's rows: wall time, its phases, the serial tail's share of the wall time,
    CPU per episode and peak RSS (targets checked on the median)."""
    table.add(name, [r["wall"] for r in runs], " s")
    for phase in PHASES:
        table.add(f"    {phase}", [r["phases"][phase] for r in runs], " s")
    table.add(
        "    serial tail (last replay → exit), share of wall",
        [r["tail"] * 100 for r in runs], " %", tail_target, fmt="{:.1f}",
    )  # fmt: skip
    table.add(
        "    CPU per episode (user+sys, process tree)",
        [r["cpu_ms"] for r in runs], " ms", cpu_target, fmt="{:.1f}",
    )  # fmt: skip
    table.add(
        "    peak RSS, largest process", [r["rss"] for r in runs], " MiB", rss_target, fmt="{:.0f}"
    )


def add_paired_ratio(
    table: Table, name: str, top: list[float], bottom: list[float], target: float | None = None
) -> None:
    """``top ÷ bottom`` per repetition (both measured in it): min and median of the ratios."""
    ratios = [a / b for a, b in zip(top, bottom, strict=False)]
    if ratios:
        table.add(f"{name} (paired; max {max(ratios):.2f})", ratios, "", target, fmt="{:.2f}")


def parse_sizes(text: str) -> list[int]:
    """``--sizes``: comma-separated episode counts, each even (two configurations) and at
    most :data:`scale_sets.MAX_QUESTIONS` × 2; SystemExit otherwise."""
    try:
        sizes = sorted({int(x.replace("_", "")) for x in text.split(",") if x.strip()})
    except ValueError:
        raise SystemExit(f"--sizes {text}: comma-separated numbers of episodes") from None
    most = scale_sets.MAX_QUESTIONS * scale_sets.CONFIGURATIONS
    bad = [n for n in sizes if n < 2 or n % scale_sets.CONFIGURATIONS or n > most]
    if bad or not sizes:
        raise SystemExit(f"--sizes: each an even number of episodes from 2 to {most}: {bad}")
    return sizes


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
    parser.add_argument(
        "--sizes", default=None, help=f"figure 4's sets, in episodes [{DEFAULT_SIZES}; quick: "
        f"{QUICK_SIZES}]",
    )  # fmt: skip
    parser.add_argument("--skip-large", action="store_true", help="no figures 4 and 5")
    parser.add_argument("--jobs", type=int, default=None, help="recording processes [cores]")
    parser.add_argument("--startup-reps", type=int, default=None, help="default 10 (1 quick)")
    parser.add_argument("--startup-only", action="store_true", help="only figure 1")
    args = parser.parse_args()
    reps = max(1, args.reps if args.reps is not None else (1 if args.quick else 5))
    startup_reps = max(
        1, args.startup_reps if args.startup_reps is not None else (1 if args.quick else 10)
    )
    if args.startup_only:
        startup_only(reps, startup_reps)
        return
    peer_reps = max(1, args.peer_reps or (1 if args.quick else 15))
    large_reps = reps if args.large_reps is None else max(1, min(reps, args.large_reps))
    sizes = parse_sizes(args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES))
    started_all = time.perf_counter()
    print(f"python {sys.version.split()[0]}; before: {load_average()}", flush=True)
    large: dict[int, tuple[Path, Path]] = {}
    distinct: dict[int, tuple[int, int]] = {}
    if not args.skip_large:
        largest = max(sizes) // scale_sets.CONFIGURATIONS
        for n in sizes:
            large[n] = scale_sets.recorded_set(n // scale_sets.CONFIGURATIONS, largest, args.jobs)
            distinct[n] = scale_sets.distinct_cassettes(large[n][1])
    tmp = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    measured: dict[str, list[float]] = {}
    runs: dict[str, list[dict[str, Any]]] = {}
    audits: dict[str, set[str]] = {}
    floors: dict[int, list[float]] = {}  # the live path alone, ms of CPU per episode

    def fresh_cache() -> Path:
        return Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))

    def whole_run(name: str, args_: list[str], cache: Path, episodes: int) -> None:
        result = phased_process(args_, env_with_cache(cache), episodes)
        runs.setdefault(name, []).append(result)
        audit = next(
            (x.strip() for x in result["stdout"].splitlines() if x.startswith("fidelity:")), "?"
        )
        audits.setdefault(name, set()).add(f"exit {result['code']}; {audit}")
        print(  # as it ends: a long run's figures are not lost if a later one fails
            f"    {name}: {result['wall']:.1f} s, CPU {result['cpu_ms']:.1f} ms per episode, "
            f"tail {result['tail']:.0%}, peak RSS {result['rss']:.0f} MiB, exit {result['code']}",
            flush=True,
        )

    print(f"start-up: {startup_reps} run(s) of each command …", flush=True)
    measured.update(measure_startup(startup_reps, tmp / "startup", warm_up=not args.quick))
    print(f"per episode: {peer_reps} repetition(s) of parse, floor, replay, peers …", flush=True)
    peer = peer_figures(peer_reps)
    ref_episodes = set_episodes(REFERENCE)
    for rep in range(reps):  # alternated: every figure once per repetition
        print(f"repetition {rep + 1}/{reps} …", flush=True)
        for key, statement in IMPORTS:
            measured.setdefault(key, []).append(import_seconds(statement))
        cache = fresh_cache()
        out = tmp / "ref"
        whole_run("ref_cold", run_args(EVAL, REFERENCE, out, None), cache, ref_episodes)
        whole_run("ref_warm", run_args(EVAL, REFERENCE, out, None), cache, ref_episodes)
        if rep < large_reps:
            for n, (eval_file, set_dir) in large.items():
                print(f"  {n:,} episodes: empty, then warm parse cache …", flush=True)
                cache = fresh_cache()
                run = run_args(eval_file, set_dir, tmp / f"x{n}", None)
                whole_run(f"x{n}_cold", run, cache, n)
                whole_run(f"x{n}_warm", run, cache, n)
                floor = floor_figures(eval_file, set_dir)
                floors.setdefault(n, []).append(statistics.median(floor))
                print(f"    floor: CPU {statistics.median(floor):.1f} ms per episode", flush=True)
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
    table.note(
        f"3. whole-process `toolreplay run`, reference set ({ref_episodes} episodes: all "
        "trials + audit), by phase"
    )
    add_phase_rows(table, "  empty parse cache", runs["ref_cold"])
    add_phase_rows(table, "  parse cache warm (the previous run's)", runs["ref_warm"])
    add_paired_ratio(
        table, "  empty ÷ warm parse cache, wall",
        [r["wall"] for r in runs["ref_cold"]], [r["wall"] for r in runs["ref_warm"]],
        TARGET_COLD_WARM,
    )  # fmt: skip
    if large:
        add_large_rows(
            table, large, distinct, runs, floors, report_times, report_sizes, report_counts
        )
    table.print()
    print()
    for name, seen in sorted(audits.items()):
        print(f"  {name}: {' / '.join(sorted(seen))}")
    shutil.rmtree(tmp, ignore_errors=True)


def add_large_rows(
    table: Table,
    large: dict[int, tuple[Path, Path]],
    distinct: dict[int, tuple[int, int]],
    runs: dict[str, list[dict[str, Any]]],
    floors: dict[int, list[float]],
    report_times: dict[int, list[float]],
    report_sizes: dict[int, float],
    report_counts: dict[int, int],
) -> None:
    """Figures 4 and 5."""
    table.note("4. generated sets recorded with the stand-in (distinct questions and places;")
    table.note("   loop+oneshot, loop+atomic; one trial), empty then warm parse cache")
    for n in large:
        files, unique = distinct[n]
        table.note(f"  {n:,} episodes: {files:,} cassettes, {unique:,} distinct contents")
        for kind, words, cpu_target in (
            ("cold", "empty parse cache", TARGET_CPU_COLD_MS),
            ("warm", "warm parse cache", TARGET_CPU_WARM_MS),
        ):
            add_phase_rows(
                table, f"  toolreplay run, {n:,} episodes, {words}", runs[f"x{n}_{kind}"],
                cpu_target, TARGET_RSS_MIB, TARGET_TAIL_PERCENT,
            )  # fmt: skip
        table.add(
            f"  the floor alone, {min(n, FLOOR_SAMPLE):,} of these episodes "
            "(CPU per episode, one process)", floors[n], " ms", fmt="{:.1f}",
        )  # fmt: skip
        for kind in ("cold", "warm"):
            add_paired_ratio(
                table, f"    {kind} run's CPU per episode ÷ the floor's",
                [r["cpu_ms"] for r in runs[f"x{n}_{kind}"]], floors[n],
            )  # fmt: skip
    small, big = min(large), max(large)
    if big > small:
        scale = big / small
        for key, words in (("wall", "whole run"), ("replay", "replay phase")):

            def values(n: int, key: str = key) -> list[float]:
                rs = runs[f"x{n}_cold"]
                return [r["wall"] if key == "wall" else r["phases"][key] for r in rs]

            add_paired_ratio(
                table, f"  t({big:,})/t({small:,}), {words}, empty cache (episodes ×{scale:g})",
                values(big), values(small), scale * TARGET_LINEARITY,
            )  # fmt: skip
    table.note("5. report (write_report, in this process) on a run's results.json: every page")
    for n in large:
        table.add(
            f"  {n:,}-episode run ({report_counts[n]} episodes in results.json)",
            report_times[n],
            " s",
            REPORT_TARGET_S if n <= REPORT_TARGET_EPISODES else None,
        )
        mb = report_sizes[n]
        target = f"≤ {REPORT_PAGE_TARGET_MB:g} MB"
        table.row(
            "    report page (index.html)", f"{mb:.2f} MB", "", target,
            "✓" if mb <= REPORT_PAGE_TARGET_MB else "✗",
        )  # fmt: skip


if __name__ == "__main__":
    main()
