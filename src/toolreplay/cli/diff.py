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
    noise" when p ≥ 0.05).

    Exit status: 0 when no verdict flipped and no pass rate really dropped; 1 when an episode
    flipped in trial 1, when a configuration's paired test finds a real drop in pass rate
    (B − A below 0, p < 0.05: a regression spread over the trials), when the runs are not
    comparable or a side holds no episode; 2 on bad input."""
    from toolreplay.diff import DiffError, diff_runs, load_run
    from toolreplay.diff_text import format_diff
    from toolreplay.paired import signed

    try:
        check_one_eval_file(before, after, eval_path)  # before anything is replayed
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
    if drops := result.real_drops:
        out.print(
            "a real drop in pass rate (paired test, p < 0.05): "
            + ", ".join(f"{s.name} {signed(s.paired.difference)}" for s in drops if s.paired),
            highlight=False, markup=False, soft_wrap=True,
        )  # fmt: skip
    if result.flips or drops:
        raise typer.Exit(1)


def recorded_eval_file(path: Path) -> str | None:
    """The eval file the cassette set at ``path`` (a folder holding ``manifest.json``) was
    recorded from, as its manifest names it; None for anything else (a results file, a folder
    your tests recorded: each test is judged as a question) or a manifest that cannot be read
    (:func:`toolreplay.diff.load_run` reports that)."""
    manifest = Path(path) / "manifest.json"
    if not manifest.is_file():
        return None  # a results file: nothing more is loaded to tell
    from toolreplay.evaluation.folder import holds_test_suite
    from toolreplay.inputs import InputFileError, read_checked

    if holds_test_suite(Path(path)):
        return None
    try:
        data = read_checked(manifest, what="manifest", limit=_MANIFEST_LIMIT, parse="json")
    except (InputFileError, OSError, ValueError):
        return None
    name = data.get("eval_file") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else None


#: The largest manifest :func:`recorded_eval_file` reads (bytes).
_MANIFEST_LIMIT = 64 * 2**20


def check_one_eval_file(
    a: Path, b: Path, eval_path: Path | None, again: str | None = None
) -> None:
    """Refuse, before anything is replayed, to diff cassette sets recorded from another eval
    file than the one they would be judged with (``eval_path``, default
    ``evals/weather.yaml``): two sets recorded from different eval files (a diff compares runs
    of one eval file), or sets of one eval file judged with another. Compared by file name,
    so a set recorded from ``evals/weather.yaml`` elsewhere still matches; ``again`` is the
    command to give again with ``--eval`` (default: ``toolreplay diff A B``). Raises
    :class:`~toolreplay.diff.DiffError` naming each set, its eval file, and what to do."""
    from toolreplay.defaults import DEFAULT_EVAL
    from toolreplay.diff import DiffError

    ea, eb = recorded_eval_file(a), recorded_eval_file(b)
    if ea and eb and Path(ea).name != Path(eb).name:
        raise DiffError(
            f"cannot diff {a} and {b}: they come from different eval files ({a} from {ea}, "
            f"{b} from {eb}), and a diff compares two runs of one eval file. Diff two sets "
            f"recorded with the same --eval (one to match {a}: toolreplay record "
            f"--model-source stand-in|live --eval {ea} --set NAME)"
        )
    used = Path(eval_path or DEFAULT_EVAL)
    recorded = ea or eb
    if recorded and Path(recorded).name != used.name:
        sets = list(dict.fromkeys(str(p) for p, e in ((a, ea), (b, eb)) if e))
        raise DiffError(
            f"{' and '.join(sets)} {'were' if len(sets) > 1 else 'was'} recorded from "
            f"{recorded}, not {used}: judge {'them' if len(sets) > 1 else 'it'} with the eval "
            f"file {'they were' if len(sets) > 1 else 'it was'} recorded from: "
            f"{again or f'toolreplay diff {a} {b}'} --eval {recorded}"
        )
