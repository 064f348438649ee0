"""``toolreplay`` command line: a thin layer over the library.

    toolreplay run                 replay every configuration from cassettes, judge, write reports/
    toolreplay report              re-render reports/index.html from reports/results.json
    toolreplay record --stand-in   record a cassette set offline (stand-in model + fixture server)
    toolreplay record --live       record against a real endpoint (needs DASHSCOPE_API_KEY or
                                   OPENAI_API_KEY)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from .cassettes import CassetteError, CassetteMiss, UnplayedInteractions
from .evals import EvalFileError, EvalSuite, load_eval
from .experiment import Configuration, ablation_configurations, replay_set, study_configurations
from .judge import FULL_JUDGE
from .model import model_settings
from .record import RecordingError, record_live, record_stand_in
from .report import ReportError, write_report
from .results import build_results, write_results

app = typer.Typer(
    help="Record, replay and evaluate LLM tool-calling loops, offline and deterministically.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

EvalOpt = Annotated[Path, typer.Option("--eval", help="Eval file: questions and expectations.")]
CassettesOpt = Annotated[Path, typer.Option(help="Folder holding cassette sets.")]
SetOpt = Annotated[str, typer.Option("--set", help="Cassette set name (a folder under --cassettes).")]


def _fail(message: str, code: int = 2) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}", highlight=False, markup=True)
    return typer.Exit(code)


def _load(eval_path: Path) -> EvalSuite:
    try:
        return load_eval(eval_path)
    except EvalFileError as exc:
        raise _fail(str(exc)) from None


@contextmanager
def _progress(total: int, label: str) -> Iterator[callable]:  # type: ignore[valid-type]
    with Progress(
        TextColumn(f"{label} [progress.description]{{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err,
        transient=True,
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
    table = Table(title=f"cassette set: {results['cassette_set']} "
                        f"({results['provenance']['provenance']}, model {results['provenance']['model']})")
    for col in ("configuration", "passed", "avg rounds", "avg tool calls", "stop reasons"):
        table.add_column(col, justify="left" if col in ("configuration", "stop reasons") else "right")
    for c in results["configurations"]:
        reasons = ", ".join(f"{k} {v}" for k, v in c["stop_reasons"].items())
        table.add_row(
            c["name"], f"{c['passed']}/{c['total']}", f"{c['avg_rounds']:.2f}",
            f"{c['avg_tool_calls']:.2f}", reasons,
        )
    return table


@app.command()
def run(
    eval_path: EvalOpt = Path("evals/weather.yaml"),
    cassettes: CassettesOpt = Path("cassettes"),
    set_name: SetOpt = "reference",
    out_dir: Annotated[
        Path, typer.Option("--out", help="Where results.json and index.html go.")
    ] = Path("reports"),
) -> None:
    """Replay all configurations from a cassette set (offline, no key), judge every answer,
    print the table and write reports/results.json and reports/index.html."""
    suite = _load(eval_path)
    configs = study_configurations(suite)
    set_dir = cassettes / set_name
    try:
        with _progress(len(configs) * len(suite.questions), "replaying") as step:
            episodes = replay_set(set_dir, suite, configs, progress=step)
        from .cassettes import read_manifest

        manifest = read_manifest(set_dir)
    except (CassetteMiss, UnplayedInteractions, CassetteError) as exc:
        raise _fail(str(exc)) from None
    results = build_results(manifest, episodes, [c.name for c in configs], FULL_JUDGE)
    write_results(out_dir / "results.json", results)
    try:
        page = write_report(out_dir / "results.json", out_dir / "index.html")
    except ReportError as exc:
        raise _fail(str(exc)) from None
    out.print(_table(results))
    out.print(f"wrote {out_dir / 'results.json'}")
    out.print(f"wrote {page}")


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
    try:
        page = write_report(results, out_path)
    except ReportError as exc:
        raise _fail(str(exc)) from None
    out.print(f"wrote {page}")


@app.command()
def record(
    stand_in: Annotated[bool, typer.Option("--stand-in", help="Record offline against the bundled stand-in model and Open-Meteo fixture server.")] = False,
    live: Annotated[bool, typer.Option("--live", help="Record against a real OpenAI-compatible endpoint and Open-Meteo (needs a key).")] = False,
    eval_path: EvalOpt = Path("evals/weather.yaml"),
    cassettes: CassettesOpt = Path("cassettes"),
    set_name: SetOpt = "reference",
    only: Annotated[list[str] | None, typer.Option("--only", help="Re-record just this episode (CONFIGURATION/QUESTION-ID); repeatable.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Endpoint base URL (default: $TOOLREPLAY_BASE_URL, else DashScope compatible mode).")] = None,
    model: Annotated[str | None, typer.Option(help="Model name (default: $TOOLREPLAY_MODEL, else qwen-plus).")] = None,
    ablations: Annotated[bool, typer.Option(help="Also record the baseline variants with one heuristic off.")] = True,
) -> None:
    """Record a cassette set: every configuration × question (and the ablated baselines).
    Writes cassettes/<set>/ only when every episode succeeded."""
    if stand_in == live:
        raise _fail("choose exactly one of --stand-in or --live")
    suite = _load(eval_path)
    configs: list[Configuration] = study_configurations(suite)
    if ablations:
        configs += ablation_configurations(suite)
    set_dir = cassettes / set_name
    keys = only or []
    total = len(keys) or len(configs) * len(suite.questions)
    try:
        with _progress(total, "recording") as step:
            if stand_in:
                manifest = record_stand_in(set_dir, suite, configs, only=keys, progress=step)
            else:
                settings = model_settings(base_url, model)
                manifest = record_live(set_dir, suite, configs, settings, only=keys, progress=step)
    except RecordingError as exc:
        raise _fail(str(exc)) from None
    out.print(
        f"recorded {total} episode(s) into {set_dir} "
        f"({manifest.provenance}, model {manifest.model}, prompt date {manifest.today})"
    )


def main() -> None:
    app()
