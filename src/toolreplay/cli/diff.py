"""``toolreplay diff``: compare two runs episode by episode.
"""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.app import app
from toolreplay.cli.common import fail as _fail
from toolreplay.cli.common import out


@app.command()
def diff(
    before: Annotated[
        Path,
        typer.Argument(metavar="A", help="Run A: results, their folder, or a cassette set."),
    ],
    after: Annotated[Path, typer.Argument(metavar="B", help="Run B, the same kinds as A.")],
    eval_path: Annotated[
        Path | None,
        typer.Option(
            "--eval",
            help="Eval file judging cassette sets \\[default: evals/weather.yaml]",
            show_default=False,
        ),
    ] = None,
) -> None:
    """What changed from run A to run B, episode by episode.

    Pass/fail flips, failure modes, rounds and tool calls, the first differing message, and
    the paired difference in pass rate B − A with its 95% interval ("not distinguishable from
    noise" when p ≥ 0.05). Exits 1 on a flip or when the runs are not comparable, 2 on bad
    input."""
    from toolreplay.diff import DiffError, check_one_eval_file, diff_runs, load_run
    from toolreplay.diff_text import format_diff

    try:
        check_one_eval_file(before, after, eval_path)
        a = load_run(before, eval_path)
        b = load_run(after, eval_path)
    except DiffError as exc:
        raise _fail(str(exc), 2) from None
    result = diff_runs(a, b)
    for line in format_diff(result):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    from toolreplay.results.mutation import compare_line

    if (scores := compare_line(a.results.mutation, b.results.mutation)) is not None:
        out.print(scores, highlight=False, markup=False, soft_wrap=True)
    empty = [r.label for r in (a, b) if not r.results.episodes]
    if empty:
        raise _fail(f"nothing to compare: {' and '.join(empty)} hold(s) no episode")
    if not result.comparable:
        raise _fail(
            "the runs are not comparable (" + ", ".join(result.differing) + " differ); "
            "a flip between them may come from that difference"
        )
    if result.flips:
        raise typer.Exit(1)
