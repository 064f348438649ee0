"""``toolreplay`` command line: a thin layer over the library.

toolreplay run                            replay every configuration, judge, write reports/
toolreplay report                         re-render reports/index.html from results.json
toolreplay audit                          the fidelity audit
toolreplay record --model-source stand-in record offline (stand-in model + fixture server)
toolreplay record --model-source live     record against a real endpoint (needs
                                          DASHSCOPE_API_KEY or OPENAI_API_KEY)

Exit status: 0 success; 1 a failed check, a failed episode set or another failure that is not
a usage error (a bad eval file, a missing cassette, an unwritable folder); 2 usage errors
only (an unknown option, a bad option value, a missing required option).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from .audit import Audit, run_audit
from .cassettes import (
    CassetteError,
    CassetteMiss,
    UnplayedInteractions,
    check_set_name,
    read_manifest,
)
from .evals import EvalFileError, EvalSuite, load_eval
from .experiment import (
    DEFAULT_CASSETTES,
    DEFAULT_EVAL,
    Configuration,
    ablation_configurations,
    replay_set,
    study_configurations,
)
from .experiment import Progress as Progress_
from .judge import FULL_JUDGE, NARROW_JUDGE
from .model import model_settings
from .openmeteo import FORECAST_URL, GEOCODING_URL
from .record import RecordingError, record_live, record_stand_in
from .report import ReportError, write_report
from .results import build_results, write_results
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
    Usage errors are raised as click usage errors instead (exit 2)."""
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
    """Treat SIGTERM like Ctrl-C while recording, so the staging folder is removed."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _progress(total: int, label: str) -> Iterator[Progress_]:
    """A transient progress bar on stderr; yields ``step(key)``, called as each episode starts."""
    with Progress(
        TextColumn(f"{label} [progress.description]{{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,  # no bar in logs and pipes
    ) as bar:
        task = bar.add_task("", total=total)
        first = [True]

        def step(key: str) -> None:
            if not first[0]:
                bar.advance(task)
            first[0] = False
            bar.update(task, description=key)

        yield step
        bar.update(task, completed=total)


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
) -> None:
    """Replay a cassette set, judge it, write reports/.

    Replays every configuration from the cassette set (offline, no key), judges every answer,
    labels failure modes, runs the fidelity audit, prints the table and writes results.json
    and index.html. Exits 1 when an episode does not replay or the audit fails."""
    if out_dir is None:
        out_dir = Path("reports") if set_name == "reference" else Path("reports") / set_name
    suite = _load(eval_path)
    configs = study_configurations(suite)
    set_dir = cassettes / set_name
    try:
        manifest = read_manifest(set_dir)
        with _progress(len(configs) * len(suite.questions), "replaying") as step:
            episodes = replay_set(set_dir, suite, configs, progress=step)
    except (CassetteMiss, UnplayedInteractions, CassetteError) as exc:
        raise _fail(str(exc)) from None
    results = build_results(
        manifest, episodes, [c.name for c in configs], FULL_JUDGE, suite.measures
    )
    with _progress(len(ablation_configurations(suite)) * len(suite.questions), "auditing") as step:
        audit = run_audit(
            set_dir,
            suite,
            FULL_JUDGE,
            episodes={(e.configuration, e.question_id): e for e in episodes},
            progress=step,
        )
    results["fidelity"] = audit.to_dict()
    try:
        write_results(out_dir / "results.json", results)
        page = write_report(out_dir / "results.json", out_dir / "index.html")
    except ReportError as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write to {out_dir}: {exc.strerror or exc}") from None
    out.print(_table(results))
    _print_audit_summary(audit)
    out.print(f"wrote {out_dir / 'results.json'}")
    out.print(f"wrote {page}")
    if not audit.passed:
        raise _fail("fidelity audit failed (see above; `toolreplay audit` for the evidence)", 1)


@app.command()
def report(
    results: Annotated[Path, typer.Option("--results", help="Results file to render.")] = Path(
        "reports/results.json"
    ),
    out_path: Annotated[Path, typer.Option("--out", help="Where the HTML page goes.")] = Path(
        "reports/index.html"
    ),
) -> None:
    """Re-render the HTML report from a results file, without replaying."""
    if out_path.is_dir():
        raise typer.BadParameter(
            f"{out_path} is a folder; give the HTML file's path, e.g. {out_path}/index.html",
            param_hint="'--out'",
        )
    try:
        page = write_report(results, out_path)
    except ReportError as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write {out_path}: {exc.strerror or exc}") from None
    out.print(f"wrote {page}")


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
            result = run_audit(set_dir, suite, judge, progress=step)
    except CassetteError as exc:
        raise _fail(str(exc)) from None
    _print_audit(result)
    if not result.passed:
        raise _fail(
            "fidelity audit failed: " + ", ".join(c.name for c in result.checks if not c.passed), 1
        )


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
    set_name: SetOpt = "reference",
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
            help="Endpoint base URL (default: $TOOLREPLAY_BASE_URL, "
            "else DashScope compatible mode)."
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model name (default: $TOOLREPLAY_MODEL, else qwen-plus).")
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
    no_ablations: Annotated[
        bool,
        typer.Option(
            "--no-ablations",
            help="Skip the baseline variants with one heuristic off (recorded by default).",
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
    model or a live endpoint. Writes cassettes/SET/ only when every episode succeeded."""
    if model_source is None:  # checked here: typer releases differ on required options
        raise typer.BadParameter(
            "missing; choose stand-in or live", param_hint="'--model-source'"
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
    total = len(keys) or len(configs) * len(suite.questions)
    try:
        with _progress(total, "recording") as step, _terminate_as_interrupt():
            if model_source is ModelSource.stand_in:
                manifest = record_stand_in(set_dir, suite, configs, only=keys, progress=step)
            else:
                settings = model_settings(base_url, model)
                manifest = record_live(
                    set_dir,
                    suite,
                    configs,
                    settings,
                    geocoding_url=geocoding_url,
                    forecast_url=forecast_url,
                    only=keys,
                    progress=step,
                )
    except RecordingError as exc:
        raise _fail(str(exc)) from None
    except KeyboardInterrupt:
        raise _fail(f"interrupted; {set_dir} is unchanged", 130) from None
    out.print(
        f"recorded {total} episode(s) into {set_dir} "
        f"({manifest.provenance}, model {manifest.model}, prompt date {manifest.today})"
    )
    if update_snapshots_:
        pinned = [k for k in keys if k in pinned_keys(suite)]
        if keys and not pinned:
            out.print("no snapshot pins these episodes (ablated baselines); none updated")
        elif code := update_snapshots(Path.cwd(), pinned):
            raise _fail(f"updating snapshots failed (pytest exit code {code})", code)
        # The committed reports come from these cassettes too: regenerate them in the same step.
        _regenerate_reports(eval_path, cassettes, set_name)


def _regenerate_reports(eval_path: Path, cassettes: Path, set_name: str) -> None:
    out.print("regenerating reports/ from the re-recorded set")
    run(eval_path=eval_path, cassettes=cassettes, set_name=set_name, out_dir=Path("reports"))


def main() -> None:
    app(prog_name="toolreplay")
