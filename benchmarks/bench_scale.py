"""Replay speed from 40 to 2,500 episodes, measured in one run: min and median of alternated
repetitions (every figure once per repetition), on the live code path (the openai SDK over
httpx and requests; only the transport is served from cassettes).

    python benchmarks/bench_scale.py [--reps 5] [--large-reps N] [--recorded] [--skip-large]
                                     [--startup-reps 10]
    python benchmarks/bench_scale.py --quick        # smoke test: 1 repetition, small sets
    python benchmarks/bench_scale.py --startup-only # figure 1 alone (under a minute)

Figures:

1. start-up: import time of ``toolreplay.cli`` and of the openai SDK (fresh interpreters), and
   the wall time of whole commands that answer without replaying (fresh processes, min and
   median of ``--startup-reps`` alternated runs after one warm-up run each, each with its ratio
   to ``python -c pass``): ``toolreplay --help`` and ``--version`` (target ≤ 0.2 s), ``report``
   on reports/results.json and ``diff`` of reports/results.json with itself, beside the floor
   the command line cannot go under (importing typer and a rich console; for ``--help``,
   typer's rich help formatter); byte code cached, as installed (``PYTHONDONTWRITEBYTECODE``
   is dropped for these processes);
2. bare parse, ``yaml.load(CSafeLoader)`` of each reference cassette (trial 1 of the 40
   episodes), and ``experiment.replay_episode`` of the same episodes in one process with shared
   clients (ms per episode), and their ratio, after the code is warmed on other cassettes (one
   episode of each configuration of the hard set: imports and the SDK's lazy modules, which the
   whole-process figures include): "cold" (first pass in a fresh process, parse cache
   ``TOOLREPLAY_CACHE_DIR`` a new empty folder), "warm" (second pass, same process) and "disk
   cache warm" (first pass of a new process reusing that folder);
3. whole-process ``toolreplay run`` on the reference set (every trial, plus the audit): with a
   new empty parse cache and with the cache the previous run left; with ``--workers 1`` and the
   default when ``toolreplay run`` has ``--workers``; peak RSS of the largest process of its
   tree (``wait4``);
4. 100, 1,000 and 2,500 episodes (10, 100, 250 questions × the 10 configurations of
   evals/weather.yaml: the 2×2 and the six ablated baselines; one trial each), kept in
   ``.bench/`` (git-ignored): by default the reference cassettes (trial 1) copied under new
   question ids with a generated eval and manifest; with ``--recorded``, a generated eval
   (numbered question texts) recorded once with the stand-in (~8 min for 2,500 episodes; again
   only when the generated eval or the fingerprint changes). Whole-process ``toolreplay run``
   (new empty parse cache), its peak RSS, and t(1000)/t(100);
5. the report (``report.write_report``) on the results files of the 1,000- and 2,500-episode
   runs (results.json holds the 2×2's episodes: 400 and 1,000 of them): time and size;
6. replay against the wall time recorded in the manifest (the reference set is recorded with
   the stand-in model on loopback, so its "live" time is the stand-in's, not a real model's).

Targets (the 1,000-episode figures also apply to the 2,500-episode report) are printed beside
the figures, checked on the median. A full run takes ~20 min on 2 cores with the replay of
main at the time of writing (the 2,500-episode runs are most of it; ``--large-reps 2`` for a
shorter run), ``--quick`` under a minute. The load average is printed
before and after: on a shared machine compare figures only within one run.
"""

from __future__ import annotations

import argparse
import hashlib
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

import yaml

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / ".bench"
EVAL = ROOT / "evals" / "weather.yaml"
PHRASINGS = ROOT / "evals" / "phrasings.yaml"
REFERENCE = ROOT / "cassettes" / "reference"
HARD_EVAL = ROOT / "evals" / "weather-hard.yaml"
LIVE_EVAL = ROOT / "evals" / "llama-gemma3-270m.yaml"
LIVE_SET = ROOT / "cassettes" / "llama-gemma3-270m"
HARD_SET = ROOT / "cassettes" / "hard"
CACHE_ENV = "TOOLREPLAY_CACHE_DIR"
#: The ``toolreplay`` console script of this interpreter (what users run), else the same entry.
_SCRIPT = Path(sys.executable).with_name("toolreplay")
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
SIZES = {100: 10, 1000: 100, 2500: 250}  # episodes: questions (× 10 configurations)
QUICK_SIZES = {20: 2, 100: 10}
CONFIGURATIONS = 10


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


# ---- generated evals and sets --------------------------------------------------------------


def _write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generated_eval(name: str, questions: int, numbered: bool) -> Path:
    """The weather eval with ``questions`` questions: the four study questions repeated under
    new ids (``numbered``: with numbered texts, so the stand-in, which finds a question by its
    text, can record them; otherwise the same texts, so the reference cassettes match), beside
    a copy of the phrasing corpus the audit reads."""
    data = yaml.safe_load(EVAL.read_text(encoding="utf-8"))
    base = data["questions"]
    data["name"] = name
    prefix = "q" if numbered else "r"
    data["questions"] = [
        {
            **base[k % len(base)],
            "id": f"{prefix}{k + 1:03d}-{base[k % len(base)]['id']}",
            "text": (f"第{k + 1}题：" if numbered else "") + base[k % len(base)]["text"],
        }
        for k in range(questions)
    ]
    path = BENCH / "evals" / f"{name}.yaml"
    _write_if_changed(path, yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    _write_if_changed(path.with_name(PHRASINGS.name), PHRASINGS.read_text(encoding="utf-8"))
    return path


def _stale(set_dir: Path, eval_file: Path, stamp_text: str) -> bool:
    """Whether the set must be made again: missing, made from another stamp, or stale for
    today's code (:func:`toolreplay.experiment.stale_parts`)."""
    from toolreplay.cassettes.errors import CassetteError
    from toolreplay.cassettes.manifest import read_manifest
    from toolreplay.evals import load_eval
    from toolreplay.runs.configuration import stale_parts

    stamp = set_dir.with_name(set_dir.name + ".stamp")
    if not stamp.exists() or stamp.read_text(encoding="utf-8") != stamp_text:
        return True
    try:
        return bool(stale_parts(read_manifest(set_dir), load_eval(eval_file)))
    except (CassetteError, OSError, ValueError):
        return True


def _cut_manifest(manifest: dict[str, Any], keep: dict[str, Any], qids: list[str]) -> None:
    hints = manifest["settings"].get("standin_hints") or {}
    manifest["settings"]["standin_hints"] = {q: hints[q] for q in qids if q in hints}
    manifest["episodes"] = keep


def replicated_set(questions: int) -> tuple[Path, Path]:
    """``(eval file, set folder)`` without recording: each episode's cassette a byte copy of
    the reference cassette (trial 1) of its configuration and study question, so the
    manifest's sha256 entries stay those of the reference; one trial per episode."""
    from toolreplay.cassettes.manifest import read_manifest

    eval_file = generated_eval(f"replicated-x{questions}", questions, numbered=False)
    set_dir = BENCH / "cassettes" / f"replicated-x{questions}"
    stamp_text = hashlib.sha256(
        eval_file.read_bytes() + (REFERENCE / "manifest.json").read_bytes()
    ).hexdigest()
    if not _stale(set_dir, eval_file, stamp_text):
        return eval_file, set_dir
    shutil.rmtree(set_dir, ignore_errors=True)
    ref = read_manifest(REFERENCE)
    manifest = json.loads((REFERENCE / "manifest.json").read_text(encoding="utf-8"))
    qids = [q["id"] for q in yaml.safe_load(eval_file.read_text(encoding="utf-8"))["questions"]]
    episodes: dict[str, Any] = {}
    for key, record in ref.episodes.items():
        if key.count("/") != 1:  # later trials: CONFIG/QUESTION/trial-i
            continue
        config, qid = key.split("/")
        for new in qids:
            if new.split("-", 1)[1] == qid:
                name = f"{config}/{new}.yaml"
                (set_dir / config).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(REFERENCE / record.cassette, set_dir / name)
                episodes[f"{config}/{new}"] = {**record.model_dump(), "cassette": name}
    manifest["trials"] = 1
    manifest["eval_file"] = str(eval_file.relative_to(ROOT))
    _cut_manifest(manifest, episodes, qids)
    hints = manifest["settings"]["standin_hints"]
    base_hints = ref.settings.get("standin_hints") or {}
    for new in qids:
        hints[new] = base_hints[new.split("-", 1)[1]]
    text = json.dumps(manifest, ensure_ascii=False, indent=2)
    (set_dir / "manifest.json").write_text(text + "\n", encoding="utf-8")
    set_dir.with_name(set_dir.name + ".stamp").write_text(stamp_text, encoding="utf-8")
    return eval_file, set_dir


def recorded_set(questions: int, largest: int) -> tuple[Path, Path]:
    """``(eval file, set folder)`` for the first ``questions`` of a generated eval of
    ``largest`` questions recorded once with the stand-in (one trial); smaller sets are copies
    of its first questions' cassettes with the manifest cut to them (the same recordings)."""
    cassettes = BENCH / "cassettes"
    full_eval = generated_eval(f"recorded-x{largest}", largest, numbered=True)
    full = cassettes / f"recorded-x{largest}"
    stamp_text = hashlib.sha256(full_eval.read_bytes()).hexdigest()
    if _stale(full, full_eval, stamp_text):
        print(
            f"recording {largest * CONFIGURATIONS} episodes with the stand-in into {full} …",
            flush=True,
        )
        started = time.perf_counter()
        subprocess.run(
            [
                *TOOLREPLAY,
                "record",
                "--model-source",
                "stand-in",
                "--eval",
                str(full_eval),
                "--cassettes",
                str(cassettes),
                "--set",
                full.name,
                "--trials",
                "1",
                "--force",
            ],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        full.with_name(full.name + ".stamp").write_text(stamp_text, encoding="utf-8")
        print(f"  recorded in {time.perf_counter() - started:.0f} s", flush=True)
    if questions == largest:
        return full_eval, full
    eval_file = generated_eval(f"recorded-x{questions}", questions, numbered=True)
    subset = cassettes / f"recorded-x{questions}-of-{largest}"
    sub_stamp = hashlib.sha256(
        eval_file.read_bytes() + (full / "manifest.json").read_bytes()
    ).hexdigest()
    if _stale(subset, eval_file, sub_stamp):
        shutil.rmtree(subset, ignore_errors=True)
        qids = [q["id"] for q in yaml.safe_load(eval_file.read_text("utf-8"))["questions"]]
        manifest = json.loads((full / "manifest.json").read_text(encoding="utf-8"))
        keep = {k: v for k, v in manifest["episodes"].items() if k.split("/")[1] in qids}
        for record in keep.values():
            dest = subset / record["cassette"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(full / record["cassette"], dest)
        _cut_manifest(manifest, keep, qids)
        manifest["eval_file"] = str(eval_file.relative_to(ROOT))
        text = json.dumps(manifest, ensure_ascii=False, indent=2)
        (subset / "manifest.json").write_text(text + "\n", encoding="utf-8")
        subset.with_name(subset.name + ".stamp").write_text(sub_stamp, encoding="utf-8")
    return eval_file, subset


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


def has_workers_option() -> bool:
    env = env_with_cache(None)
    env["COLUMNS"] = "200"
    out = subprocess.run(
        [*TOOLREPLAY, "run", "--help"], capture_output=True, text=True, cwd=ROOT, env=env
    )
    return "--workers" in out.stdout


def run_args(eval_file: Path, set_dir: Path, out: Path, workers: int | None) -> list[str]:
    args = [
        *TOOLREPLAY,
        "run",
        "--eval",
        str(eval_file),
        "--cassettes",
        str(set_dir.parent),
        "--set",
        set_dir.name,
        "--out",
        str(out),
    ]
    return args + (["--workers", str(workers)] if workers else [])


def child_inprocess() -> None:
    """In a fresh process: two passes of (bare parse, replay) over trial 1 of the reference
    episodes; prints JSON with ms per episode for each."""
    import gc

    from toolreplay.cassettes.manifest import cassette_path, read_manifest
    from toolreplay.evals import load_eval
    from toolreplay.runs.configuration import ablation_configurations, study_configurations
    from toolreplay.runs.episode import replay_clients, replay_episode

    suite = load_eval(EVAL)
    configs = [*study_configurations(suite), *ablation_configurations(suite)]
    manifest = read_manifest(REFERENCE)
    jobs = [(c, q) for c in configs for q in suite.questions]
    texts = [cassette_path(REFERENCE, c.name, q.id).read_text("utf-8") for c, q in jobs]
    out: dict[str, Any] = {"episodes": len(jobs)}
    with replay_clients() as (http, session):
        # Warm the code (imports, the SDK's lazy modules, caches of compiled schemas) on
        # other cassettes, the hard set's, so the first pass measures a cold *parse cache*,
        # not the one-time import of the SDK (the whole-process figures include that).
        hard = load_eval(HARD_EVAL)
        hard_manifest = read_manifest(HARD_SET)
        for config in configs:
            question = hard.questions[0]
            replay_episode(
                HARD_SET, hard_manifest, hard, config, question, http=http, session=session
            )
        for label in ("first", "second"):
            gc.collect()
            started = time.perf_counter()
            for text in texts:
                yaml.load(text, Loader=yaml.CSafeLoader)
            out[f"parse_{label}"] = (time.perf_counter() - started) / len(jobs) * 1000
            gc.collect()
            started = time.perf_counter()
            for config, question in jobs:
                replay_episode(
                    REFERENCE, manifest, suite, config, question, http=http, session=session
                )
            out[f"replay_{label}"] = (time.perf_counter() - started) / len(jobs) * 1000
    out["recorded_s"] = sum(
        r.wall_time_s for k, r in manifest.episodes.items() if k.count("/") == 1
    )
    if LIVE_SET.is_dir():  # a set recorded against a real server (llama-cpp-python on loopback)
        live = load_eval(LIVE_EVAL)
        live_manifest = read_manifest(LIVE_SET)
        live_jobs = [(c, q) for c in study_configurations(live) for q in live.questions]
        with replay_clients() as (http, session):
            for _pass in ("warm-up", "timed"):
                started = time.perf_counter()
                for config, question in live_jobs:
                    replay_episode(
                        LIVE_SET, live_manifest, live, config, question, http=http,
                        session=session,
                    )  # fmt: skip
                out["live_replay_s"] = time.perf_counter() - started
        out["live_episodes"] = len(live_jobs)
        out["live_recorded_s"] = sum(r.wall_time_s for r in live_manifest.episodes.values())
    print(json.dumps(out))


def inprocess(cache: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child-inprocess"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env_with_cache(cache),
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 5)")
    parser.add_argument(
        "--large-reps",
        type=int,
        default=None,
        help="repetitions of the 100/1,000/2,500-episode runs [--reps]",
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke test: 1 repetition, sets of 20 and 100 episodes"
    )
    parser.add_argument("--skip-large", action="store_true", help="no generated sets")
    parser.add_argument(
        "--startup-reps",
        type=int,
        default=None,
        help="runs of each start-up command (default 10; 3 with --quick)",
    )
    parser.add_argument(
        "--startup-only", action="store_true", help="only figure 1, the start-up figures"
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--replicated",
        action="store_true",
        help="generated sets of reference cassettes under new question ids (the default)",
    )
    source.add_argument(
        "--recorded",
        action="store_true",
        help="generated sets recorded with the stand-in (once; ~8 min)",
    )
    parser.add_argument("--child-inprocess", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_inprocess:
        child_inprocess()
        return
    reps = max(1, args.reps if args.reps is not None else (1 if args.quick else 5))
    startup_reps = max(
        1, args.startup_reps if args.startup_reps is not None else (3 if args.quick else 10)
    )
    if args.startup_only:
        startup_only(reps, startup_reps)
        return
    large_reps = reps if args.large_reps is None else max(1, min(reps, args.large_reps))
    sizes = QUICK_SIZES if args.quick else SIZES
    started_all = time.perf_counter()
    print(f"python {sys.version.split()[0]}; before: {load_average()}", flush=True)

    workers_option = has_workers_option()
    run_variants: list[int | None] = [None, 1] if workers_option else [None]
    large: dict[int, tuple[Path, Path]] = {}
    if not args.skip_large:
        largest = max(sizes.values())
        for n, q in sizes.items():
            large[n] = recorded_set(q, largest) if args.recorded else replicated_set(q)
    tmp = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    measured: dict[str, list[float]] = {}
    cache_used: list[bool] = []
    exit_codes: dict[str, set[int]] = {}
    audits: dict[str, str] = {}

    def add(name: str, value: float) -> None:
        measured.setdefault(name, []).append(value)

    def fresh_cache() -> Path:
        return Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))

    def whole_run(name: str, args_: list[str], cache: Path) -> None:
        seconds, peak, code, text = timed_process(args_, env_with_cache(cache))
        add(f"{name}_s", seconds)
        add(f"{name}_rss", peak)
        exit_codes.setdefault(name, set()).add(code)
        audits[name] = next(
            (line.strip() for line in text.splitlines() if line.startswith("fidelity:")), "?"
        )

    print(f"start-up: {startup_reps} run(s) of each command …", flush=True)
    measured.update(measure_startup(startup_reps, tmp / "startup"))
    recorded_ref = 0.0
    live_recorded: tuple[int, float] | None = None
    for rep in range(reps):  # alternated: every figure once per repetition
        print(f"repetition {rep + 1}/{reps} …", flush=True)
        for key, statement in IMPORTS:
            add(key, import_seconds(statement))
        cache = fresh_cache()
        cold = inprocess(cache)
        cache_used.append(any(cache.iterdir()))
        disk = inprocess(cache)
        recorded_ref = cold["recorded_s"]
        if "live_replay_s" in cold:
            add("live_replay_s", cold["live_replay_s"])
            live_recorded = (cold["live_episodes"], cold["live_recorded_s"])
        for key, value in (
            ("parse_cold", cold["parse_first"]),
            ("replay_cold", cold["replay_first"]),
            ("parse_warm", cold["parse_second"]),
            ("replay_warm", cold["replay_second"]),
            ("parse_disk", disk["parse_first"]),
            ("replay_disk", disk["replay_first"]),
        ):
            add(key, value)
        for workers in run_variants:
            label = f"w{workers or 'default'}"
            cache = fresh_cache()
            out = tmp / "ref"
            whole_run(f"ref_cold_{label}", run_args(EVAL, REFERENCE, out, workers), cache)
            whole_run(f"ref_disk_{label}", run_args(EVAL, REFERENCE, out, workers), cache)
        if rep < large_reps:
            for n, (eval_file, set_dir) in large.items():
                out = tmp / f"x{n}"
                whole_run(f"x{n}", run_args(eval_file, set_dir, out, None), fresh_cache())
        for old in tmp.glob("cache-*"):
            shutil.rmtree(old, ignore_errors=True)

    report_times: dict[int, list[float]] = {}
    report_sizes: dict[int, float] = {}
    report_counts: dict[int, int] = {}
    if large:
        from toolreplay.report.render import write_report

        for _ in range(reps):
            for n in large:
                results = tmp / f"x{n}" / "results.json"
                page = tmp / f"report-x{n}.html"
                started = time.perf_counter()
                write_report(results, page)
                report_times.setdefault(n, []).append(time.perf_counter() - started)
                report_sizes[n] = page.stat().st_size / 1e6
        for n in large:
            doc = json.loads((tmp / f"x{n}" / "results.json").read_text(encoding="utf-8"))
            report_counts[n] = len(doc.get("episodes", []))

    elapsed = time.perf_counter() - started_all
    print(f"\nafter: {load_average()}")
    print(
        f"{reps} repetition(s), alternated"
        + (f" ({large_reps} of the generated sets)" if large else "")
        + f"; whole benchmark {elapsed:.0f} s; ✓/✗ on the median\n"
    )

    table = Table()
    add_startup_rows(table, measured, tmp / "startup")
    table.note("2. one process, trial 1 of the 40 reference episodes (ms per episode)")
    for phase, words in (
        ("cold", "cold parse cache (new process; code warmed on the hard set)"),
        ("warm", "warm (second pass, same process: in-memory parse cache)"),
        ("disk", "disk parse cache warm (new process; code warmed)"),
    ):
        p, r = measured[f"parse_{phase}"], measured[f"replay_{phase}"]
        table.note(f"  {words}")
        table.add("    bare parse, yaml CSafeLoader", p, " ms", fmt="{:.2f}")
        table.add("    replay_episode", r, " ms", fmt="{:.2f}")
        ratios = [statistics.median(r) / statistics.median(p)]
        table.row(
            "    ratio replay/parse (min/min, median/median)",
            f"{min(r) / min(p):.2f}",
            f"{ratios[0]:.2f}",
            "≤ 2",
            "✓" if ratios[0] <= 2.0 else "✗",
        )
    table.note("3. whole-process `toolreplay run`, reference set (all trials + audit)")
    for workers in run_variants:
        label = f"w{workers or 'default'}"
        shown = "--workers 1" if workers else ("default workers" if workers_option else "")
        for phase, words in (("cold", "new parse cache"), ("disk", "parse cache warm")):
            name = f"ref_{phase}_{label}"
            table.add(f"  {shown + ', ' if shown else ''}{words}", measured[f"{name}_s"], " s", 1.5)
            table.add(
                "    peak RSS, largest process", measured[f"{name}_rss"], " MiB", fmt="{:.0f}"
            )
    if large:
        kind = "recorded with the stand-in" if args.recorded else "replicated reference cassettes"
        table.note(f"4. generated sets ({kind}; one trial; new parse cache)")
        for n in large:
            target_s = {1000: 8.0, 2500: 20.0}.get(n)
            table.add(f"  toolreplay run, {n:,} episodes", measured[f"x{n}_s"], " s", target_s)
            table.add(
                "    peak RSS, largest process",
                measured[f"x{n}_rss"],
                " MiB",
                200.0 if n == 1000 else None,
                fmt="{:.0f}",
            )
        small, big = min(large), max(k for k in large if k <= 1000)
        if small != big:
            ts, tb = measured[f"x{small}_s"], measured[f"x{big}_s"]
            ratio = statistics.median(tb) / statistics.median(ts)
            target = 11.0 if (small, big) == (100, 1000) else None
            table.row(
                f"  t({big})/t({small})",
                f"{min(tb) / min(ts):.2f}",
                f"{ratio:.2f}",
                "" if target is None else f"≤ {target:g}",
                "" if target is None else ("✓" if ratio <= target else "✗"),
            )
        table.note("5. report (write_report, in this process) on a run's results.json")
        for n in large:
            mb = report_sizes[n]
            table.add(
                f"  {n:,}-episode run ({report_counts[n]} episodes in results.json)",
                report_times[n],
                " s",
                5.0 if n >= 1000 else None,
            )
            table.row(
                "    HTML size",
                f"{mb:.2f} MB",
                "",
                "≤ 10 MB" if n >= 1000 else "",
                ("✓" if mb <= 10 else "✗") if n >= 1000 else "",
            )
    table.note("6. replay vs recorded wall time (reference set: recorded with the stand-in on")
    table.note("   loopback, so the recorded time is the stand-in's, not a live model's)")
    table.row("  recorded wall time, trial 1 of 40 episodes", f"{recorded_ref:.2f} s")
    for phase in ("cold", "warm"):
        r = measured[f"replay_{phase}"]
        table.row(
            f"  replay {phase}, same 40: × faster",
            f"{recorded_ref / (min(r) * 40 / 1000):.1f}×",
            f"{recorded_ref / (statistics.median(r) * 40 / 1000):.1f}×",
        )
    if live_recorded is not None:
        n_live, rec_live = live_recorded
        r = measured["live_replay_s"]
        table.note("   a set recorded live (llama-cpp-python + gemma-3-270m on loopback):")
        table.row(f"  recorded wall time, {n_live} live episodes", f"{rec_live:.2f} s")
        table.row(
            "  replay, same episodes: × faster",
            f"{rec_live / min(r):.0f}×",
            f"{rec_live / statistics.median(r):.0f}×",
        )
    from toolreplay.cassettes.manifest import read_manifest

    whole_rec = sum(r.wall_time_s for r in read_manifest(REFERENCE).episodes.values())
    runs = measured["ref_cold_wdefault_s"]
    table.row(
        f"  recorded wall time, all {len(read_manifest(REFERENCE).episodes)} reference cassettes",
        f"{whole_rec:.2f} s",
    )
    table.row(
        "  whole `toolreplay run` (cold cache): × faster",
        f"{whole_rec / min(runs):.1f}×",
        f"{whole_rec / statistics.median(runs):.1f}×",
    )
    table.print()
    print()
    print(
        f"{CACHE_ENV}: the new cache folder was "
        + (
            "filled by the first process"
            if all(cache_used)
            else "left empty (no parse cache in this version)"
            if not any(cache_used)
            else "filled in some repetitions only"
        )
    )
    print("toolreplay run --workers: " + ("measured" if workers_option else "not available"))
    for name, codes in sorted(exit_codes.items()):
        print(f"  {name}: exit {'/'.join(map(str, sorted(codes)))}; {audits[name]}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
