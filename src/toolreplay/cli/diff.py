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
        Path, typer.Argument(help="Run A: a results file, a folder holding one, or a cassette set.")
    ],
    after: Annotated[Path, typer.Argument(help="Run B, the same kinds as A.")],
    eval_path: Annotated[
        Path | None,
        typer.Option(
            "--eval",
            help="Eval file judging cassette folders \\[default: evals/weather.yaml for a "
            "recorded set; for a folder your tests recorded, one question per test]",
            show_default=False,
        ),
    ] = None,
) -> None:
    """What changed from run A to run B: pass/fail flips per episode, failure modes gained or
    lost, rounds and tool-call deltas, the first differing message of each changed transcript,
    per configuration the passes in trial 1 and over every trial with regressions and
    improvements, the paired difference in pass rate B − A with its 95% interval and p-value
    (exact McNemar on trial 1; a paired bootstrap and permutation test over trials when both
    recorded as many), saying "not distinguishable from noise" when p ≥ 0.05, and whether the
    runs are comparable. Runs that recorded different numbers
    of trials are compared on trial 1, and the output names the difference. Cassette sets are
    replayed offline first.

    Exits 0 when no verdict flipped ("no differences" when nothing changed), 1 when at least
    one episode flipped between pass and fail, when the runs are not comparable or when a
    side holds no episode, 2 on bad input (a results file that breaks the format's invariants
    included)."""
    from toolreplay.diff import DiffError, diff_runs, load_run
    from toolreplay.diff_text import format_diff

    try:
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
