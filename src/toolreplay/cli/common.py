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
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

# Every other import is made where it is used: `--help`, `--version`, `report` and `diff` on
# results files load neither the runs, the audit, the hosts nor the openai SDK.
if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.table import Table

    from toolreplay.evals import EvalSuite
    from toolreplay.results.format import Results
    from toolreplay.runs.configuration import Progress as Progress_



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
    from toolreplay.cassettes.manifest import check_set_name

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
    from toolreplay.evals import EvalFileError, load_eval

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
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

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
    from rich import box
    from rich.table import Table

    table = Table(
        title=f"cassette set: {results['cassette_set']} "
        f"({results['provenance']['provenance']}, model {results['provenance']['model']})",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    left = ("configuration", "stop reasons", "failure modes")
    cols = ("configuration", "passed", "avg\nrounds", "avg\ntool\ncalls", *left[1:])
    # Under 80 columns the essential columns stay whole (configuration, passed, rounds) and
    # the rest are left out (the report and results.json have them): none is cut to nothing.
    narrow = out.width < 80
    keep = 3 if narrow else len(cols)
    for col in cols[:keep]:
        table.add_column(
            col,
            justify="left" if col in left else "right",
            no_wrap=not (narrow and col == "configuration"),
            overflow="fold",
        )
    for c in results["configurations"]:
        reasons = "\n".join(f"{k} {v}" for k, v in c["stop_reasons"].items())
        modes = "\n".join(f"{k} {v}" for k, v in c["failure_modes"].items()) or "-"
        row = (
            c["name"],
            f"{c['passed']}/{c['total']}",
            f"{c['avg_rounds']:.2f}",
            f"{c['avg_tool_calls']:.2f}",
            reasons,
            modes,
        )
        table.add_row(*row[:keep])
    return table


def _trials_table(results: dict) -> Table:
    """pass^k for k = 1..n in one column, pass@n, rounds and tool calls (mean±sd) over every
    trial; fits 80 columns like :func:`_table` (failure-mode rates follow the table, see
    :func:`_rates_lines`)."""
    from rich import box
    from rich.table import Table

    n = results.get("trials", 1)
    uneven = any(c.get("trials", n) < n for c in results["configurations"])
    title = f"consistency over {n} trial(s) per configuration × question"
    if uneven:  # a question asked by fewer tests has no pass^k beyond its trials
        title = f"consistency over up to {n} trial(s) per configuration × question"
    table = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    narrow = out.width < 80  # then configuration and pass@n only, none cut to nothing
    table.add_column("configuration", no_wrap=not narrow, overflow="fold")
    if not narrow:
        table.add_column(f"pass^k, k=1..{n}", no_wrap=True)
    table.add_column(f"pass@{n}", justify="right", no_wrap=True)
    if not narrow:
        table.add_column("rounds", justify="right", no_wrap=True)
        table.add_column("tool calls", justify="right", no_wrap=True)
    for c in results["configurations"]:
        hat, at = c.get("pass_hat_k", {}), c.get("pass_at_k", {})
        r, t = c.get("rounds_over_trials", {}), c.get("tool_calls_over_trials", {})
        row = (
            c["name"],
            " ".join(f"{hat[str(k)]:.2f}" if str(k) in hat else "-" for k in range(1, n + 1)),
            f"{at[str(n)]:.2f}" if str(n) in at else "-",
            f"{r.get('mean', 0):.2f}±{r.get('sd', 0):.2f}",
            f"{t.get('mean', 0):.2f}±{t.get('sd', 0):.2f}",
        )
        table.add_row(*((row[0], row[2]) if narrow else row))
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


def _workers(value: int | None) -> int:
    from toolreplay.runs.replay import default_workers

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


#: How long `run` and `report` wait for another process writing the same reports folder.
LOCK_WAIT_S = 60.0


def write_outputs(
    out_dir: Path, results: Results | Mapping[str, Any], wait: float | None = None
) -> Path:
    """Write ``out_dir/results.json`` and ``out_dir/index.html`` as one generation
    (:func:`toolreplay.outputs.publish`: both or neither, a kill included); returns the page's
    path. One writer of the folder at a time (a file lock; another writer is waited for up to
    ``wait`` seconds, default :data:`LOCK_WAIT_S`, then :class:`LockedError`); what a killed
    earlier run left there is completed or removed first, and said on stderr."""
    import json

    from toolreplay.folders import folder_lock
    from toolreplay.outputs import publish, recover_outputs
    from toolreplay.report.render import stream_report
    from toolreplay.results.format import results_json_text

    wait = LOCK_WAIT_S if wait is None else wait
    text = results_json_text(results)  # a mapping is validated first
    as_read = json.loads(text)  # the page is rendered from what results.json holds
    with folder_lock(out_dir, wait=wait, inside=True, what="writing reports into"):
        for note in recover_outputs(out_dir):
            _note(note)
        publish(
            out_dir,
            {
                "results.json": lambda f: f.write(text),
                "index.html": lambda f: stream_report(as_read, f.write),
            },
        )
    return out_dir / "index.html"


def _note(message: str) -> None:
    err.print(f"note: {message}", highlight=False, markup=False, soft_wrap=True)


def _check_output_folder(folder: Path, files: tuple[str, ...] = ()) -> None:
    """Fail now, before any work, when ``folder`` cannot hold our output files, or one of
    ``files`` there is not a regular file (a device, FIFO, socket, folder or link): exit 2."""
    from toolreplay.outputs import (
        OutputPathError,
        check_name_lengths,
        check_output_file,
        check_writable,
    )

    try:
        check_name_lengths(folder, "--out")
    except OutputPathError as exc:
        raise _fail(str(exc), 2) from None
    if folder.exists() and not folder.is_dir():
        raise _fail(f"--out {folder}: is not a folder; give a folder for the output files", 2)
    for name in files:
        try:
            check_output_file(folder / name, name)
        except OutputPathError as exc:
            raise _fail(str(exc), 2) from None
    try:
        check_writable(folder)
    except OSError as exc:
        raise _fail(f"cannot write to {folder}: {exc.strerror or exc}") from None
