"""``toolreplay report``: render results.json again, without replaying.
"""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

import sys
from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.app import app
from toolreplay.cli.common import LOCK_WAIT_S, cannot_write, out, rare_full_collections
from toolreplay.cli.common import check_output_folder as _check_output_folder
from toolreplay.cli.common import fail as _fail
from toolreplay.cli.common import print_note as _note
from toolreplay.defaults import DEFAULT_EVAL


@app.command()
def report(
    results: Annotated[
        Path,
        typer.Option("--results", help="Results file, or its folder."),
    ] = Path("reports/results.json"),
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="The page; - for standard output \\[default: beside --results]",
            show_default=False,
        ),
    ] = None,
    compare: Annotated[
        Path | None,
        typer.Option(
            "--compare",
            help="An earlier run to compare with: results or a set.",
        ),
    ] = None,
    eval_path: Annotated[
        Path,
        typer.Option(
            "--eval",
            help="Eval file judging a --compare set.",
        ),
    ] = DEFAULT_EVAL,
) -> None:
    """Re-render the HTML report from a results file, without replaying.

    With --compare, the page also shows what changed since another run."""
    from toolreplay.cli.diff import check_one_eval_file
    from toolreplay.diff import DiffError, load_run
    from toolreplay.folders import LockedError, folder_lock
    from toolreplay.outputs import (
        JOURNAL,
        OutputPathError,
        check_name_lengths,
        check_output_file,
        publish,
        recover_outputs,
    )
    from toolreplay.report.downloads import relative_href
    from toolreplay.report.pages import episodes_path, remove_stale, stale_pages
    from toolreplay.report.render import (
        ReportError,
        report_pages,
        splits_table,
        splits_transcripts,
        stream_report,
        transcripts_path,
    )
    from toolreplay.results.validate import read_results

    if results.is_dir():
        if (results / "manifest.json").is_file() and not (results / "results.json").exists():
            raise _fail(  # a set where its results belong: say how to get them
                f"{results} is a cassette set, not a results file: `toolreplay run --cassettes "
                f"{results.parent} --set {results.name}` replays it and writes its results "
                "(report renders those again; --compare takes a set as it is)"
            )
        results = results / "results.json"
    if out_path is None:  # beside the results it renders, never a folder of its own
        out_path = results.with_name("index.html")
    to_stdout = str(out_path) == "-"
    if not to_stdout:
        try:
            check_name_lengths(out_path, "--out")
        except OutputPathError as exc:
            raise _fail(str(exc), 2) from None
        if out_path.is_dir() and not out_path.is_symlink():
            raise typer.BadParameter(
                f"{out_path} is a folder; give the HTML file's path, e.g. {out_path}/index.html",
                param_hint="'--out'",
            )
        try:
            check_output_file(out_path, "page")
        except OutputPathError as exc:
            raise _fail(str(exc), 2) from None
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
        if (results.parent / JOURNAL).exists():
            # a run killed while publishing results.json and index.html: finish it first
            with folder_lock(
                results.parent, wait=LOCK_WAIT_S, inside=True, what="writing reports into"
            ):
                for note in recover_outputs(results.parent):
                    _note(note)
        with rare_full_collections():  # a large run's results held to the end
            try:
                data = read_results(results)
            except ReportError as exc:  # missing: 1; there but not one we trust: bad input, 2
                raise _fail(str(exc), 2 if results.exists() else 1) from None
            try:
                if compare is not None:  # a set of another eval file: said before it is replayed
                    again = f"toolreplay report --compare {compare}"
                    check_one_eval_file(compare, compare, eval_path, again)
                baseline = None if compare is None else load_run(compare, eval_path)
            except DiffError as exc:  # as for --results: missing 1, there but not trusted 2
                there = compare is not None and compare.exists()
                raise _fail(str(exc), 2 if there else 1) from None
            if to_stdout:
                stream_report(data, sys.stdout.write, compare=baseline)
                return
            with folder_lock(
                out_path.parent, wait=LOCK_WAIT_S, inside=True, what="writing reports into"
            ):
                for note in recover_outputs(out_path.parent):
                    _note(note)
                # the same pages as every report writer: many transcripts go on a page of their own
                # the page links the results it was rendered from when they sit beside or below it
                href = relative_href(results, out_path)
                pages = report_pages(data, out_path.name, baseline, href)
                stale = stale_pages(out_path, pages)  # a smaller run's leftover pages, if ours
                publish(out_path.parent, pages, alongside=(transcripts_path(out_path).name,))
                remove_stale(stale)
    except OutputPathError as exc:
        raise _fail(str(exc), 2) from None
    except (ReportError, LockedError, DiffError) as exc:
        raise _fail(str(exc)) from None
    except BrokenPipeError:
        raise  # the reader of standard output went away: quiet (toolreplay.cli.main)
    except OSError as exc:
        raise _fail(cannot_write(out_path, exc, "--out")) from None
    wrote = [out_path]
    if not to_stdout and splits_transcripts(data):
        wrote.append(transcripts_path(out_path))
    if not to_stdout and splits_table(data):
        wrote.append(episodes_path(out_path))
    for path in wrote:  # one line each, whatever the width: a path to copy
        out.print(f"wrote {path}", highlight=False, markup=False, soft_wrap=True)
