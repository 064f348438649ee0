"""``toolreplay`` command line: a thin layer over the library.

toolreplay run                            replay every configuration, judge, write reports/
                                          (--workers N processes; --shard I/N for one slice)
toolreplay merge SHARD...                 combine the shard files of a run into its report
toolreplay report                         re-render reports/index.html from results.json
toolreplay audit                          the fidelity audit
toolreplay diff A B                       what changed between two runs (results or sets)
toolreplay record --model-source stand-in record offline (stand-in model + fixture server)
toolreplay record --model-source live     record against a real endpoint (a key paired with
                                          its endpoint: DASHSCOPE_API_KEY → DashScope,
                                          OPENAI_API_KEY → $OPENAI_BASE_URL or the OpenAI
                                          API, --base-url with --api-key-env NAME)

Exit status: 0 success; 1 a failed check, a failed episode set or another failure that is not
a usage error (a bad eval file, a missing cassette, an unwritable folder); 2 usage errors
only (an unknown option, a bad option value, a missing required option).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from .audit import Audit, run_audit
from .cassettes import (
    CassetteError,
    check_set_name,
    read_manifest,
)
from .diff import DiffError, diff_runs, format_diff, load_run
from .evals import EvalFileError, EvalSuite, load_eval
from .experiment import (
    DEFAULT_CASSETTES,
    DEFAULT_EVAL,
    Configuration,
    ablation_configurations,
    study_configurations,
)
from .experiment import Progress as Progress_
from .files import LockedError, check_writable, folder_lock
from .judge import FULL_JUDGE, NARROW_JUDGE
from .model import EndpointError, resolve_endpoint
from .openmeteo import FORECAST_URL, GEOCODING_URL
from .record import (
    RecordingError,
    RecordingInterrupted,
    record_live,
    record_stand_in,
    trials_and_seed,
)
from .report import ReportError, write_report
from .results import write_results
from .snapshots import SnapshotUpdateError, check_can_update, pinned_keys, update_snapshots

app = typer.Typer(
    help="Record, replay and evaluate LLM tool-calling loops, offline and deterministically.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="markdown",  # paragraphs reflow; a docstring line break is not a break
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        out.print(f"toolreplay {version('toolreplay')}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool | None,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = None,
) -> None:
    """Record, replay and evaluate LLM tool-calling loops, offline and deterministically.

    Exit status: 0 success; 1 a failed check, a failed episode set or another failure that
    is not a usage error; 2 usage errors only."""


class ModelSource(str, Enum):
    """Where a recording's model replies come from."""

    stand_in = "stand-in"
    live = "live"
# Piped output (CI logs, files) gets 120 columns rather than rich's 80, so tables do not fold.
_WIDTH = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS") or 120)
out = Console(width=_WIDTH)
err = Console(stderr=True)

EvalOpt = Annotated[Path, typer.Option("--eval", help="Eval file: questions and expectations.")]
CassettesOpt = Annotated[Path, typer.Option(help="Folder holding cassette sets.")]


def _set_name(value: str) -> str:
    try:
        return check_set_name(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


SetOpt = Annotated[
    str,
    typer.Option(
        "--set", help="Cassette set name (a folder under --cassettes).", callback=_set_name
    ),
]


def _fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``error: message`` on stderr; exit 1 (an operational failure or a failed check).
    Usage errors are raised as typer usage errors instead (exit 2)."""
    # soft_wrap: a command in the message stays on one line, ready to copy
    err.print("[bold red]error:[/] ", end="", highlight=False)
    err.print(message, highlight=False, markup=False, soft_wrap=True)
    return typer.Exit(code)


def _load(eval_path: Path) -> EvalSuite:
    try:
        return load_eval(eval_path)
    except EvalFileError as exc:
        raise _fail(str(exc)) from None


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C while recording (so the staging folder is removed) or
    replaying (so the workers are shut down with the run)."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _progress(total: int, label: str, delay: float = 0.0) -> Iterator[Progress_]:
    """A transient progress bar on stderr; yields ``step(key)``, called as each episode starts.
    With ``delay`` the bar appears only once that many seconds have passed (short runs show
    none); never in logs and pipes."""
    bar = Progress(
        TextColumn(f"{label} [progress.description]{{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,  # no bar in logs and pipes
    )
    task = bar.add_task("", total=total)
    started_at = time.monotonic()
    state = {"first": True, "shown": False}

    def step(key: str) -> None:
        if not state["first"]:
            bar.advance(task)
        state["first"] = False
        bar.update(task, description=key)
        # Never started off a terminal (rich's own `disable` still writes a blank line when
        # a started bar stops, in some releases).
        if not state["shown"] and err.is_terminal and time.monotonic() - started_at >= delay:
            bar.start()
            state["shown"] = True

    try:
        yield step
        bar.update(task, completed=total)
    finally:
        if state["shown"]:
            bar.stop()


def _table(results: dict) -> Table:
    """The summary table; fits 80 columns without cutting a word (one stop reason and one
    failure mode per line, no vertical rules)."""
    table = Table(
        title=f"cassette set: {results['cassette_set']} "
        f"({results['provenance']['provenance']}, model {results['provenance']['model']})",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    left = ("configuration", "stop reasons", "failure modes")
    for col in ("configuration", "passed", "avg\nrounds", "avg\ntool\ncalls", *left[1:]):
        table.add_column(col, justify="left" if col in left else "right", no_wrap=True)
    for c in results["configurations"]:
        reasons = "\n".join(f"{k} {v}" for k, v in c["stop_reasons"].items())
        modes = "\n".join(f"{k} {v}" for k, v in c["failure_modes"].items()) or "-"
        table.add_row(
            c["name"],
            f"{c['passed']}/{c['total']}",
            f"{c['avg_rounds']:.2f}",
            f"{c['avg_tool_calls']:.2f}",
            reasons,
            modes,
        )
    return table


def _trials_table(results: dict) -> Table:
    """pass^k for k = 1..n in one column, pass@n, rounds and tool calls (mean±sd) over every
    trial; fits 80 columns like :func:`_table` (failure-mode rates follow the table, see
    :func:`_rates_lines`)."""
    n = results.get("trials", 1)
    table = Table(
        title=f"consistency over {n} trial(s) per configuration × question",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    table.add_column("configuration", no_wrap=True)
    table.add_column(f"pass^k, k=1..{n}", no_wrap=True)
    table.add_column(f"pass@{n}", justify="right", no_wrap=True)
    table.add_column("rounds", justify="right", no_wrap=True)
    table.add_column("tool calls", justify="right", no_wrap=True)
    for c in results["configurations"]:
        hat, at = c.get("pass_hat_k", {}), c.get("pass_at_k", {})
        r, t = c.get("rounds_over_trials", {}), c.get("tool_calls_over_trials", {})
        table.add_row(
            c["name"],
            " ".join(f"{hat[str(k)]:.2f}" if str(k) in hat else "-" for k in range(1, n + 1)),
            f"{at[str(n)]:.2f}" if str(n) in at else "-",
            f"{r.get('mean', 0):.2f}±{r.get('sd', 0):.2f}",
            f"{t.get('mean', 0):.2f}±{t.get('sd', 0):.2f}",
        )
    return table


def _rates_lines(results: dict) -> list[str]:
    """One line per configuration with failure modes: their rates over the trials."""
    lines = []
    for c in results["configurations"]:
        rates = c.get("failure_mode_rates", {})
        if rates:
            shown = ", ".join(f"{m} {v:.0%}" for m, v in rates.items())
            lines.append(f"  {c['name']}: {shown}")
    return ["failure-mode rates over trials:", *lines] if lines else []


def _names(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _select(
    suite: EvalSuite, configurations: str | None, questions: str | None
) -> tuple[EvalSuite, list[Configuration], dict]:
    """The suite restricted to ``questions`` (ids, comma-separated), the study configurations
    restricted to ``configurations`` (names), and the selection as results.json records it."""
    configs = study_configurations(suite)
    known_c = [c.name for c in configs]
    want_c = _names(configurations)
    if bad := [c for c in want_c if c not in known_c]:
        raise _fail(
            f"--configurations: unknown {', '.join(bad)}; this eval runs {', '.join(known_c)}",
            2,
        )
    known_q = [q.id for q in suite.questions]
    want_q = _names(questions)
    if bad := [q for q in want_q if q not in known_q]:
        raise _fail(
            f"--questions: unknown {', '.join(bad)}; {suite.path} has {', '.join(known_q)}", 2
        )
    if want_c:
        configs = [c for c in configs if c.name in want_c]
    if want_q:
        suite = replace(suite, questions=tuple(q for q in suite.questions if q.id in want_q))
    path = Path(suite.path)
    try:
        shown = path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = path.name
    selection = {
        "eval_file": shown,
        "configurations": [c.name for c in configs],
        "questions": [q.id for q in suite.questions],
        "all_configurations": len(configs) == len(known_c),
        "all_questions": len(suite.questions) == len(known_q),
    }
    return suite, configs, selection


def _workers(value: int | None) -> int:
    from .replay import default_workers

    if value is None:
        return default_workers()
    if value < 1:
        raise typer.BadParameter("must be at least 1", param_hint="'--workers'")
    return value


WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        "-j",
        help="Processes replaying episodes in parallel \\[default: the number of cores]. The "
        "results are the same whatever the number.",
        show_default=False,
    ),
]


def _run_jobs(
    whole: EvalSuite, suite: EvalSuite, configs: list[Configuration], trials: int
) -> tuple[list[Any], int]:
    """Every episode a run replays, in a fixed order: every trial of the selected study
    configurations × questions, then the episodes the fidelity audit adds (trial 1 of every
    configuration × question of the whole eval file not already in the first part). Returns
    the jobs and how many belong to the first part."""
    from .replay import Job
    from .trials import trial_jobs

    jobs = trial_jobs(suite, configs, trials)
    have = {(j.configuration.name, j.question_id) for j in jobs if j.trial == 1}
    extra = [
        Job(c, q.id)
        for c in [*study_configurations(whole), *ablation_configurations(whole)]
        for q in whole.questions
        if (c.name, q.id) not in have
    ]
    return [*jobs, *extra], len(jobs)


@app.command()
def run(
    eval_path: EvalOpt = DEFAULT_EVAL,
    cassettes: CassettesOpt = DEFAULT_CASSETTES,
    set_name: SetOpt = "reference",
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where results.json and index.html go "
            "\\[default: reports/ for the reference set, reports/SET/ for any other]",
            show_default=False,
        ),
    ] = None,
    configurations: Annotated[
        str | None,
        typer.Option(
            "--configurations",
            help="Only these configurations, comma-separated (e.g. single+oneshot,loop+atomic).",
            show_default=False,
        ),
    ] = None,
    questions: Annotated[
        str | None,
        typer.Option(
            "--questions",
            help="Only these question ids, comma-separated (e.g. ningde,beijing).",
            show_default=False,
        ),
    ] = None,
    workers: WorkersOpt = None,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="Replay only shard I of N (e.g. 2/4: every 4th episode from the 2nd) and write "
            "OUT/shard-I-of-N.json instead of the report; `toolreplay merge` combines the N "
            "shard files into the same results and report as a whole run.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Replay a cassette set, judge it, write reports/.

    Replays every configuration from the cassette set (offline, no key), every trial, judges
    every answer, labels failure modes, runs the fidelity audit, prints the table (trial 1) and
    pass^k over the trials, and writes results.json and index.html. Episodes are replayed by
    --workers processes; --shard splits the run across machines (see `toolreplay merge`).
    Exits 1 when an episode does not replay or the audit fails."""
    from .replay import parse_shard, replay_outcomes
    from .replay import shard as shard_of

    if out_dir is None:
        out_dir = Path("reports") if set_name == "reference" else Path("reports") / set_name
    try:
        part = parse_shard(shard) if shard is not None else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--shard'") from None
    n_workers = _workers(workers)
    whole = _load(eval_path)
    suite, configs, selection = _select(whole, configurations, questions)
    set_dir = cassettes / set_name
    _check_output_folder(out_dir)  # before replaying, not after
    try:
        manifest = read_manifest(set_dir)
    except CassetteError as exc:
        raise _fail(str(exc)) from None
    jobs, n_trial_jobs = _run_jobs(whole, suite, configs, manifest.trials)
    if part is not None and part[1] > len(jobs):
        raise typer.BadParameter(
            f"{shard}: this run replays {len(jobs)} episodes, so N can be at most {len(jobs)}",
            param_hint="'--shard'",
        )
    mine = shard_of(jobs, *part) if part else jobs
    with _progress(len(mine), "replaying", delay=2.0) as step, _terminate_as_interrupt():
        outcomes = replay_outcomes(
            set_dir, manifest, whole, mine, workers=n_workers, progress=step
        )
    if part is not None:
        from .shards import ShardSpec, shard_file_name, write_shard

        path = out_dir / shard_file_name(*part)
        spec = ShardSpec(eval_path, cassettes, set_name, configurations, questions)
        try:
            write_shard(path, spec, *part, mine, outcomes)
        except OSError as exc:
            raise _fail(f"cannot write {path}: {exc.strerror or exc}") from None
        failed = sum(1 for o in outcomes if isinstance(o, BaseException))
        out.print(
            f"shard {part[0]}/{part[1]}: replayed {len(mine) - failed} of {len(mine)} episodes"
            + (f" ({failed} did not replay; merge reports them)" if failed else "")
        )
        out.print(f"wrote {path}")
        out.print(f"when every shard is done: toolreplay merge {out_dir}/shard-*-of-{part[1]}.json")
        return
    _finish(
        whole, suite, configs, selection, manifest, set_dir, jobs, outcomes, n_trial_jobs, out_dir
    )


def _finish(
    whole: EvalSuite,
    suite: EvalSuite,
    configs: list[Configuration],
    selection: dict,
    manifest: Any,
    set_dir: Path,
    jobs: list[Any],
    outcomes: list[Any],
    n_trial_jobs: int,
    out_dir: Path,
) -> None:
    """Judge replayed episodes, run the audit, write and print the results (run and merge)."""
    from .results import build_results
    from .trials import add_trial_metrics, trial_outcome

    replayed = []
    for job, outcome in zip(jobs[:n_trial_jobs], outcomes[:n_trial_jobs], strict=True):
        if isinstance(outcome, BaseException):
            raise _fail(str(outcome))
        replayed.append((job.trial, outcome))
    episodes = [e for t, e in replayed if t == 1]
    results = build_results(
        manifest, episodes, [c.name for c in configs], FULL_JUDGE, suite.by_id
    )
    results["selection"] = selection
    trial_outcomes = [
        trial_outcome(t, e, FULL_JUDGE, suite.by_id.get(e.question_id)) for t, e in replayed
    ]
    add_trial_metrics(results, trial_outcomes, [q.id for q in suite.questions], manifest.trials)
    # The audit is about the set, not the selection: it always covers the whole eval file,
    # from the episodes replayed above (one that did not replay is replayed again to say why).
    have = {(e.configuration, e.question_id): e for e in episodes}
    for job, outcome in zip(jobs[n_trial_jobs:], outcomes[n_trial_jobs:], strict=True):
        if not isinstance(outcome, BaseException):
            have[(job.configuration.name, job.question_id)] = outcome
    audit = run_audit(set_dir, whole, FULL_JUDGE, episodes=have)
    results["fidelity"] = audit.to_dict()
    try:
        page = write_outputs(out_dir, results)
    except (ReportError, LockedError) as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write to {out_dir}: {exc.strerror or exc}") from None
    out.print(_table(results))
    out.print(_trials_table(results))
    for line in _rates_lines(results):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    _print_audit_summary(audit)
    out.print(f"wrote {out_dir / 'results.json'}")
    out.print(f"wrote {page}")
    if not audit.passed:
        raise _fail("fidelity audit failed (see above; `toolreplay audit` for the evidence)", 1)


@app.command()
def merge(
    shard_files: Annotated[
        list[Path],
        typer.Argument(
            help="The shard files of one run (OUT/shard-I-of-N.json from `toolreplay run "
            "--shard I/N`), every I from 1 to N.",
            show_default=False,
            metavar="SHARD",
        ),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where results.json and index.html go "
            "\\[default: the folder of the first shard file]",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Combine the shard files of a sharded run into one results file and report.

    Checks that the files are shards 1..N of one run (same eval file, selection and
    recording of the set) and cover every episode, then judges, audits, prints and writes
    exactly what an unsharded `toolreplay run` would. The eval file and the cassette set the
    shards name must be readable here (the audit reads the recorded traffic)."""
    from .shards import ShardError, read_shards, read_spec

    try:
        spec = read_spec(shard_files)
    except ShardError as exc:
        raise _fail(str(exc)) from None
    if out_dir is None:
        out_dir = shard_files[0].parent
    if not spec.eval_file.is_file():
        raise _fail(
            f"the shard files name the eval file {spec.eval_file}, which is not here: run "
            "merge from the folder `toolreplay run --shard` ran in"
        )
    whole = _load(spec.eval_file)
    suite, configs, selection = _select(whole, spec.configurations, spec.questions)
    set_dir = spec.cassettes / spec.cassette_set
    _check_output_folder(out_dir)
    try:
        manifest = read_manifest(set_dir)
        jobs, n_trial_jobs = _run_jobs(whole, suite, configs, manifest.trials)
        outcomes = read_shards(shard_files, spec, jobs)
    except (CassetteError, ShardError) as exc:
        raise _fail(str(exc)) from None
    _finish(
        whole, suite, configs, selection, manifest, set_dir, jobs, outcomes, n_trial_jobs, out_dir
    )


@app.command()
def report(
    results: Annotated[Path, typer.Option("--results", help="Results file to render.")] = Path(
        "reports/results.json"
    ),
    out_path: Annotated[Path, typer.Option("--out", help="Where the HTML page goes.")] = Path(
        "reports/index.html"
    ),
    compare: Annotated[
        Path | None,
        typer.Option(
            "--compare",
            help="An earlier run to compare with: a results file, a folder holding one, or a "
            "cassette set (replayed offline).",
        ),
    ] = None,
    eval_path: EvalOpt = DEFAULT_EVAL,
) -> None:
    """Re-render the HTML report from a results file, without replaying. With --compare, the
    page also shows what changed since another run."""
    if out_path.is_dir():
        raise typer.BadParameter(
            f"{out_path} is a folder; give the HTML file's path, e.g. {out_path}/index.html",
            param_hint="'--out'",
        )
    if out_path.resolve() == results.resolve() or (
        out_path.exists() and results.exists() and out_path.samefile(results)
    ):
        raise _fail(
            f"--out {out_path} is the results file itself; the page would overwrite the "
            "results it is rendered from. Give another path, e.g. "
            f"{results.with_name('index.html')}",
            2,
        )
    _check_output_folder(out_path.parent)
    try:
        baseline = None if compare is None else load_run(compare, eval_path)
        with folder_lock(
            out_path.parent, wait=LOCK_WAIT_S, inside=True, what="writing reports into"
        ):
            page = write_report(results, out_path, compare=baseline)
    except (ReportError, LockedError, DiffError) as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write {out_path}: {exc.strerror or exc}") from None
    out.print(f"wrote {page}")


#: How long `run` and `report` wait for another process writing the same reports folder.
LOCK_WAIT_S = 60.0


def write_outputs(out_dir: Path, results: dict[str, Any], wait: float | None = None) -> Path:
    """Write ``out_dir/results.json`` and ``out_dir/index.html``; returns the page's path.
    One writer of the folder at a time (a file lock; another writer is waited for up to
    ``wait`` seconds, default :data:`LOCK_WAIT_S`, then :class:`LockedError`), so the two files
    stay a pair; each is replaced atomically, so a reader never sees a partial file."""
    wait = LOCK_WAIT_S if wait is None else wait
    with folder_lock(out_dir, wait=wait, inside=True, what="writing reports into"):
        write_results(out_dir / "results.json", results)
        return write_report(out_dir / "results.json", out_dir / "index.html")


def _check_output_folder(folder: Path) -> None:
    """Fail now, before any work, when ``folder`` cannot hold our output files."""
    try:
        check_writable(folder)
    except OSError as exc:
        raise _fail(f"cannot write to {folder}: {exc.strerror or exc}") from None


@app.command()
def diff(
    before: Annotated[
        Path, typer.Argument(help="Run A: a results file, a folder holding one, or a cassette set.")
    ],
    after: Annotated[Path, typer.Argument(help="Run B, the same kinds as A.")],
    eval_path: EvalOpt = DEFAULT_EVAL,
) -> None:
    """What changed from run A to run B: pass/fail flips per episode, failure modes gained or
    lost, rounds and tool-call deltas, the first differing message of each changed transcript,
    and whether the runs are comparable. Cassette sets are replayed offline first.

    Exits 0 when no verdict flipped ("no differences" when nothing changed), 1 when at least
    one episode flipped between pass and fail, 2 on bad input."""
    try:
        a = load_run(before, eval_path)
        b = load_run(after, eval_path)
    except DiffError as exc:
        raise _fail(str(exc), 2) from None
    result = diff_runs(a, b)
    for line in format_diff(result):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    if result.flips:
        raise typer.Exit(1)


def _print_audit_summary(audit: Audit) -> None:
    failed = [c for c in audit.checks if not c.passed]
    if failed:
        out.print(
            f"[red]fidelity: {len(failed)} of {len(audit.checks)} checks failed:[/] "
            + ", ".join(c.name for c in failed)
        )
    else:
        out.print(f"[green]fidelity: all {len(audit.checks)} checks passed[/]")


def _print_audit(audit: Audit) -> None:
    for check in audit.checks:
        mark = "[green]PASS[/]" if check.passed else "[bold red]FAIL[/]"
        out.print(
            f"{mark} [bold]{check.name}[/]: {check.explanation}", highlight=False, soft_wrap=True
        )
        for line in check.evidence:
            out.print(f"       - {line}", highlight=False, markup=False, soft_wrap=True)
    tables = audit.tables
    faithful, near = tables["faithful"], tables["near_miss"]
    table = Table(title="faithful vs. near-miss")
    table.add_column("configuration")
    table.add_column(f"faithful\n({faithful['judge']} judge)", justify="right")
    table.add_column(f"near-miss\n(no 市 retry, {near['judge']} judge)", justify="right")
    for a, b in zip(faithful["rows"], near["rows"], strict=True):
        table.add_row(a["name"], f"{a['passed']}/{a['total']}", f"{b['passed']}/{b['total']}")
    out.print(table)


@app.command()
def audit(
    eval_path: EvalOpt = DEFAULT_EVAL,
    cassettes: CassettesOpt = DEFAULT_CASSETTES,
    set_name: SetOpt = "reference",
    narrow_judge: Annotated[
        bool, typer.Option(help="Audit as if the narrow (°C only) judge were in use.")
    ] = False,
    workers: WorkersOpt = None,
) -> None:
    """Prove the comparison is fair (the fidelity audit).

    Checks the baseline heuristics are present and exercised, replays the ablations, checks
    judge breadth, prints the near-miss table, arm parity and completeness. Exits 1 when a
    check fails."""
    suite = _load(eval_path)
    set_dir = cassettes / set_name
    judge = NARROW_JUDGE if narrow_judge else FULL_JUDGE
    total = (len(study_configurations(suite)) + len(ablation_configurations(suite))) * len(
        suite.questions
    )
    try:
        with _progress(total, "auditing") as step:
            result = run_audit(set_dir, suite, judge, progress=step, workers=_workers(workers))
    except CassetteError as exc:
        raise _fail(str(exc)) from None
    _print_audit(result)
    if not result.passed:
        raise _fail(
            "fidelity audit failed: " + ", ".join(c.name for c in result.checks if not c.passed), 1
        )


class OpenMeteoSource(str, Enum):
    """Where ``record --model-source live`` sends the tools' Open-Meteo requests."""

    live = "live"
    fixture = "fixture"


@app.command()
def record(
    model_source: Annotated[
        ModelSource | None,
        typer.Option(
            "--model-source",
            help="Required. stand-in: the bundled stand-in model and Open-Meteo fixture server, "
            "offline. live: a real endpoint and Open-Meteo (needs a key).",
            case_sensitive=False,
            show_default=False,
        ),
    ] = None,
    eval_path: EvalOpt = DEFAULT_EVAL,
    cassettes: CassettesOpt = DEFAULT_CASSETTES,
    set_name: Annotated[
        str | None,
        typer.Option(
            "--set",
            help="Cassette set to record into (a folder under --cassettes); required, so the "
            "committed set `toolreplay run` replays by default (reference) is only rewritten "
            "when named.",
            callback=lambda v: None if v is None else _set_name(v),
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace a set of another provenance (stand-in/live, model, endpoint host), "
            "or a folder that is not a readable set.",
        ),
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            help="Re-record just this episode (CONFIGURATION/QUESTION-ID); repeatable.",
            metavar="CONFIG/QUESTION",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="live: endpoint base URL (default: $TOOLREPLAY_BASE_URL, else the endpoint "
            "the key belongs to). Its key: DASHSCOPE_API_KEY for DashScope, OPENAI_API_KEY for "
            "api.openai.com or $OPENAI_BASE_URL; any other endpoint needs --api-key-env."
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            "--api-key-env",
            metavar="NAME",
            help="live: the environment variable holding the endpoint's key (its value is "
            "sent to that endpoint only, never written).",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="live: model name (default: $TOOLREPLAY_MODEL, else qwen-plus on DashScope; "
            "other endpoints need one named)."
        ),
    ] = None,
    geocoding_url: Annotated[
        str,
        typer.Option(
            help="live: Open-Meteo geocoding endpoint, for a mirror or self-host "
            "(default: the public API).",
            show_default=False,
        ),
    ] = GEOCODING_URL,
    forecast_url: Annotated[
        str,
        typer.Option(
            help="live: Open-Meteo forecast endpoint (default: the public API).",
            show_default=False,
        ),
    ] = FORECAST_URL,
    open_meteo: Annotated[
        OpenMeteoSource,
        typer.Option(
            "--open-meteo",
            help="live: the tools' Open-Meteo: the real API (live) or the bundled fixture "
            "server on loopback (fixture; fixed data, only the model is live).",
        ),
    ] = OpenMeteoSource.live,
    no_ablations: Annotated[
        bool,
        typer.Option(
            "--no-ablations",
            help="Skip the baseline variants with one heuristic off (recorded by default).",
        ),
    ] = False,
    trials: Annotated[
        int | None,
        typer.Option(
            "--trials",
            min=1,
            help="Record each configuration × question this many times (default 1; with "
            "--only, the set's). Several trials go to CONFIG/QUESTION/trial-<i>.yaml.",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            min=0,
            help="stand-in: seed of the stand-in's per-trial variation, kept in the "
            "manifest (default 0; with --only, the set's).",
            show_default=False,
        ),
    ] = None,
    keep_errors: Annotated[
        bool,
        typer.Option(
            "--keep-errors",
            help="live: keep episodes that end with stop reason error (a server's real "
            "failures) instead of refusing the recording; requests are then not retried.",
        ),
    ] = False,
    update_snapshots_: Annotated[
        bool,
        typer.Option(
            "--update-snapshots",
            help="Then rewrite the recorded episodes' snapshots (pytest --snapshot-update on "
            "tests/test_snapshots.py; reference set only, run from the repo root).",
        ),
    ] = False,
) -> None:
    """Record a cassette set.

    Records every configuration × question (and the ablated baselines) against the stand-in
    model or a live endpoint. Writes cassettes/SET/ only when every episode succeeded. --set is
    required (there is no default: `--set reference` re-records the committed set); a set of
    another provenance is replaced only with --force."""
    if model_source is None:  # checked here: typer releases differ on required options
        raise typer.BadParameter(
            "missing: choose stand-in or live", param_hint="'--model-source'"
        )
    if set_name is None:
        raise _fail(
            "name the cassette set to record with --set NAME; `--set reference` re-records "
            f"the committed set `toolreplay run` replays by default ({cassettes / 'reference'})",
            2,
        )
    suite = _load(eval_path)
    if update_snapshots_:
        try:
            check_can_update(Path.cwd(), cassettes / set_name)
        except SnapshotUpdateError as exc:
            raise typer.BadParameter(str(exc), param_hint="'--update-snapshots'") from None
    configs: list[Configuration] = study_configurations(suite)
    if not no_ablations:
        configs += ablation_configurations(suite)
    set_dir = cassettes / set_name
    keys = list(dict.fromkeys(only or []))
    try:
        n_trials, _ = trials_and_seed(set_dir, keys, trials, seed)
    except RecordingError as exc:
        raise _fail(str(exc)) from None
    total = (len(keys) or len(configs) * len(suite.questions)) * n_trials
    endpoint = None
    if model_source is ModelSource.live:
        try:  # before any request: which endpoint, which model, whose key
            endpoint = resolve_endpoint(base_url, model, api_key_env)
        except EndpointError as exc:
            raise _fail(str(exc)) from None
        out.print(f"recording live: {endpoint.describe()}", highlight=False, soft_wrap=True)
    elif base_url or model or api_key_env:
        raise _fail("--base-url, --model and --api-key-env apply to --model-source live only")
    try:
        with _progress(total, "recording") as step, _terminate_as_interrupt():
            extra: dict[str, Any] = {"notify": _notice}
            if force:
                extra["force"] = True
            if endpoint is None:
                manifest = record_stand_in(
                    set_dir,
                    suite,
                    configs,
                    only=keys,
                    progress=step,
                    trials=trials,
                    seed=seed,
                    **extra,
                )
            else:
                manifest = record_live(
                    set_dir,
                    suite,
                    configs,
                    endpoint.settings,
                    geocoding_url=geocoding_url,
                    forecast_url=forecast_url,
                    open_meteo_fixture=open_meteo is OpenMeteoSource.fixture,
                    keep_errors=keep_errors,
                    only=keys,
                    progress=step,
                    trials=trials,
                    **extra,
                )
    except RecordingError as exc:
        raise _fail(str(exc)) from None
    except RecordingInterrupted as exc:  # says whether the set was replaced
        raise _fail(str(exc), 130) from None
    except KeyboardInterrupt:
        raise _fail(f"interrupted; {set_dir} is unchanged", 130) from None
    out.print(
        f"recorded {total} episode(s) into {set_dir} "
        + (f"({manifest.trials} trials each, seed {manifest.seed}) " if manifest.trials > 1 else "")
        + f"({manifest.provenance}, model {manifest.model}, prompt date {manifest.today})"
    )
    if update_snapshots_:
        pinned = [k for k in keys if k in pinned_keys(suite)]
        if keys and not pinned:
            out.print("no snapshot pins these episodes (ablated baselines); none updated")
        elif code := update_snapshots(Path.cwd(), pinned):
            raise _fail(f"updating snapshots failed (pytest exit code {code})", code)
        # The committed reports come from these cassettes too: regenerate them in the same step.
        _regenerate_reports(eval_path, cassettes, set_name)


def _notice(message: str) -> None:
    err.print(f"note: {message}", highlight=False, markup=False, soft_wrap=True)


def _regenerate_reports(eval_path: Path, cassettes: Path, set_name: str) -> None:
    out.print("regenerating reports/ from the re-recorded set")
    run(eval_path=eval_path, cassettes=cassettes, set_name=set_name, out_dir=Path("reports"))


def main() -> None:
    app(prog_name="toolreplay")
