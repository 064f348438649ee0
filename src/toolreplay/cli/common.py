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

    from toolreplay.evals import EvalSuite
    from toolreplay.results.format import Results
    from toolreplay.runs.configuration import Progress as Progress_



class ModelSource(str, Enum):  # noqa: UP042 (typer shows and parses it as before)
    """Where a recording's model replies come from."""

    stand_in = "stand-in"
    live = "live"


#: The narrowest the tables are laid out: a narrower terminal (``COLUMNS=20``) lets lines run
#: on rather than fold names two characters a line.
MIN_WIDTH = 60


def _width(stream: object) -> int | None:
    """Columns to lay out for: piped output (CI logs, files) gets ``$COLUMNS`` or 120 rather
    than rich's 80, so tables do not fold; a terminal its own width; never fewer than
    :data:`MIN_WIDTH` (and an unreadable ``$COLUMNS`` is ignored)."""
    try:
        columns = int(os.environ.get("COLUMNS") or 0)
    except ValueError:
        columns = 0
    tty = getattr(stream, "isatty", lambda: False)()
    if not tty:
        return max(columns or 120, MIN_WIDTH)
    if columns:
        return max(columns, MIN_WIDTH)
    import shutil

    return None if shutil.get_terminal_size().columns >= MIN_WIDTH else MIN_WIDTH


#: Where results go. ``markup=False``: what is printed (paths, names, explanations, test ids
#: such as ``test_x[a-b]``, ``[redacted]``) is shown as it is; a line styled on purpose says
#: ``markup=True`` and escapes what it interpolates (:func:`rich.markup.escape`).
out = Console(width=_width(sys.stdout), markup=False)


err = Console(stderr=True, width=_width(sys.stderr), markup=False)


EvalOpt = Annotated[Path, typer.Option("--eval", help="Eval file.")]


def not_stdout(option: str, what: str = "a folder") -> Any:
    """The callback of an option naming where files are written (``--out`` of run, merge and
    convert, ``--json`` of mutate, ``--cassettes`` of record): ``-``, the usual name of standard
    output, is a usage error (exit 2, before anything is read or written) rather than a folder
    or file called ``-`` made where the user did not ask. ``what`` says what the option names.
    (``report --out -`` writes its one page to standard output instead.)"""

    def check(value: Path | None) -> Path | None:
        if value is not None and str(value) == "-":
            raise typer.BadParameter(
                f"- (standard output) cannot take {what}: give a path (nothing was written)",
                param_hint=f"'{option}'",
            )
        return value

    return check


CassettesOpt = Annotated[Path, typer.Option(help="Folder of cassette sets.")]


def check_set_name_option(value: str) -> str:
    """The ``--set`` option's callback: ``value`` if it is a valid cassette set name
    (:func:`toolreplay.cassettes.manifest.check_set_name`), else a usage error (exit 2)."""
    from toolreplay.cassettes.manifest import check_set_name

    try:
        return check_set_name(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


SetOpt = Annotated[
    str,
    typer.Option(
        "--set",
        help="Cassette set in --cassettes.",
        callback=check_set_name_option,
    ),
]


#: ``--cassettes`` of the commands that replay a set or a test suite's folder (run, mutate).
EvalOrDefaultOpt = Annotated[
    Path | None,
    typer.Option(
        "--eval",
        help="Eval file \\[default: evals/weather.yaml]",
        show_default=False,
    ),
]

CassettesOrSuiteOpt = Annotated[
    Path | None,
    typer.Option(
        "--cassettes",
        help="Sets' folder or a test suite's \\[default: cassettes]",
        show_default=False,
    ),
]


#: ``--seed`` of the mutation score (mutate, run --mutate); None: 0.
MutationSeedOpt = Annotated[
    int | None,
    typer.Option(
        "--seed",
        help="Seed of the mutants' sites and choice \\[default: 0]",
        show_default=False,
    ),
]


#: ``--budget`` of the mutation score (mutate, run --mutate); None: every mutant.
MutationBudgetOpt = Annotated[
    int | None,
    typer.Option(
        "--budget",
        min=1,
        show_default=False,
        metavar="N",
        help="At most N mutants an episode \\[default: all]",
    ),
]


#: What to do about a test suite's cassette folder that is missing (run, mutate).
FOLDER_TODO = (
    "record it (pytest --record-mode=once), or name the folder your tests recorded with "
    "--cassettes DIR (or cassettes: in the eval file)"
)


def cannot_write(path: Path, exc: OSError, option: str | None = None) -> str:
    """What to say when ``path`` cannot be written (``exc``, the error writing it; ``option``
    the option that named it, e.g. ``"--out"``): ``"cannot write PATH: "``, what happened in
    words (a part of the path that is not a folder, named; permission denied; a read-only
    file system; no space left; a name too long) and what to do; the system's own words for
    any other error."""
    import errno

    give = f"give {option} " if option else "give "
    code = exc.errno
    if code == errno.ENOTDIR:
        blocker = next((p for p in Path(path).parents if p.exists() and not p.is_dir()), None)
        what = f"{blocker} is not a folder" if blocker else "a part of the path is not a folder"
        todo = f"{give}a path inside a folder"
    elif code in (errno.EACCES, errno.EPERM):
        what, todo = "permission denied", f"{give}a folder you may write, or change its mode"
    elif code == errno.EROFS:
        what, todo = "the file system is read-only", f"{give}a folder on a writable one"
    elif code in (errno.ENOSPC, errno.EDQUOT):
        what, todo = "no space left on the device", "free some space and run again"
    elif code == errno.ENAMETOOLONG:
        what, todo = "a name is too long for the file system", f"{give}a shorter path"
    else:
        return f"cannot write {path}: {exc.strerror or exc}"
    return f"cannot write {path}: {what}; {todo}"


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``error: message`` on stderr; exit 1 (an operational failure or a failed check).
    Usage errors are raised as typer usage errors instead (exit 2)."""
    # soft_wrap: a command in the message stays on one line, ready to copy
    err.print("[bold red]error:[/] ", end="", highlight=False, markup=True)
    err.print(message, highlight=False, markup=False, soft_wrap=True)
    return typer.Exit(code)


def load_suite(eval_path: Path) -> EvalSuite:
    """The eval file at ``eval_path``, loaded; exit 1 with the file's error otherwise."""
    from toolreplay.evals import EvalFileError, load_eval

    try:
        return load_eval(eval_path)
    except EvalFileError as exc:
        raise fail(str(exc)) from None


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
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
def progress(total: int, label: str, delay: float = 0.0) -> Iterator[Progress_]:
    """A transient progress bar on stderr; yields ``step(key)``, called as each episode starts.
    With ``delay`` the bar appears only once that many seconds have passed (short runs show
    none); never in logs and pipes."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    bar = Progress(
        TextColumn(f"{label} {{task.description}}", markup=False),  # a key as it is
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


def split_names(value: str | None) -> list[str]:
    """A comma-separated option value as its names, stripped, empty ones left out."""
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def worker_count(value: int | None) -> int:
    """The ``--workers`` option: ``value``, or the default number of workers when not given;
    a usage error (exit 2) below 1."""
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
        help="Processes \\[default: the number of cores]",
        show_default=False,
    ),
]


#: How long `run` and `report` wait for another process writing the same reports folder.
LOCK_WAIT_S = 60.0


def write_outputs(
    out_dir: Path, results: Results | Mapping[str, Any], wait: float | None = None
) -> Path:
    """Write ``out_dir/results.json`` and ``out_dir/index.html`` (with, for more than
    :data:`~toolreplay.report.table.LARGE_RUN` transcripts, ``index-transcripts.html``, and
    past :data:`~toolreplay.report.render.TABLE_ROWS` table rows ``index-episodes.html``:
    :func:`toolreplay.report.render.report_pages`, as every report writer) as one generation
    (:func:`toolreplay.outputs.publish`: all or none, a kill included); returns the page's
    path. Those side pages that an earlier, larger report wrote there and this one does not are
    removed after, only when ours (:func:`toolreplay.report.pages.stale_pages`). One writer of
    the folder at a time (a file lock; another writer is waited for up to ``wait`` seconds,
    default :data:`LOCK_WAIT_S`, then :class:`LockedError`); what a killed earlier run left
    there is completed or removed first, and said on stderr."""
    from toolreplay.folders import folder_lock
    from toolreplay.outputs import publish, recover_outputs
    from toolreplay.report.pages import remove_stale, stale_pages, transcripts_path
    from toolreplay.report.render import report_pages
    from toolreplay.results.format import as_results, results_document

    wait = LOCK_WAIT_S if wait is None else wait
    # Validated first (a mapping); results.json holds its document (plain JSON values, made
    # as it is written, beside the child writing the transcripts page, and written without
    # the file's text held whole); the pages are rendered from the same model (not validated
    # again from the document: seconds at 10,000 episodes).
    model = as_results(results)
    with folder_lock(out_dir, wait=wait, inside=True, what="writing reports into"):
        for note in recover_outputs(out_dir):
            print_note(note)
        pages = report_pages(model, "index.html", results_href="results.json")
        stale = stale_pages(out_dir / "index.html", pages)  # a smaller run's leftovers, if ours
        writers = {"results.json": lambda f: write_json(results_document(model), f), **pages}
        # the transcripts page, the largest, by a second process beside this one (results.json
        # too in a third was slower on two cores: its encoding touches every object, and a
        # child pays for copying the pages those live on)
        publish(out_dir, writers, alongside=(transcripts_path(out_dir / "index.html").name,))
        remove_stale(stale)
    return out_dir / "index.html"


def write_json(document: Any, f: Any, batch: int = 4096) -> None:
    """Write ``document`` to the text file ``f`` as :func:`toolreplay.results.format.
    results_json_text` gives it (2-space indent, ``ensure_ascii=False``, a final newline),
    byte for byte, in pieces of about ``batch`` tokens
    (:func:`toolreplay.results.json_text.write_indented`): never the whole text in memory (at
    10,000 episodes that text and its chunk list were more than half the run's peak)."""
    from toolreplay.results.json_text import write_indented

    write_indented(document, f.write, batch)
    f.write("\n")


def print_note(message: str) -> None:
    """Print ``note: message`` on stderr."""
    err.print(f"note: {message}", highlight=False, markup=False, soft_wrap=True)


def check_output_folder(
    folder: Path, files: tuple[str, ...] = (), inputs: tuple[Path, ...] = ()
) -> None:
    """Fail now, before any work, when ``folder`` cannot hold our output files, one of
    ``files`` there is not a regular file (a device, FIFO, socket, folder or link), or
    ``folder`` lies among cassettes (inside ``inputs``, the folders the command reads, or any
    cassette set or folder of cassettes: :func:`toolreplay.outputs.check_outside_cassettes`):
    exit 2."""
    from toolreplay.outputs import (
        OutputPathError,
        check_name_lengths,
        check_output_file,
        check_outside_cassettes,
        check_writable,
    )

    try:
        check_name_lengths(folder, "--out")
        check_outside_cassettes(folder, inputs)
    except OutputPathError as exc:
        raise fail(str(exc), 2) from None
    if folder.exists() and not folder.is_dir():
        raise fail(f"--out {folder}: is not a folder; give a folder for the output files", 2)
    for name in files:
        try:
            check_output_file(folder / name, name)
        except OutputPathError as exc:
            raise fail(str(exc), 2) from None
    try:
        check_writable(folder)
    except OSError as exc:
        raise fail(cannot_write(folder, exc, "--out")) from None


@contextmanager
def rare_full_collections() -> Iterator[None]:
    """The cycle collector's oldest generation collected at most every 1,000 younger
    collections rather than every 10 (``gc.set_threshold``), restored after: ``run`` and
    ``report`` hold a run's episodes to the end, and full passes over them were 12 s of a
    10,000-episode run's serial tail; young garbage is collected as before."""
    import gc

    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], max(before[2], 1000))
    try:
        yield
    finally:
        gc.set_threshold(*before)
