"""``toolreplay mutate``: the mutation score of an eval file on a set's recorded episodes."""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.app import app
from toolreplay.cli.common import (
    CassettesOrSuiteOpt,
    MutationBudgetOpt,
    MutationSeedOpt,
    SetOpt,
    WorkersOpt,
    cannot_write,
    fail,
    not_stdout,
    out,
    terminate_as_interrupt,
    worker_count,
)


@app.command()
def mutate(
    eval_path: Annotated[
        Path | None,
        typer.Option(
            "--eval",
            help="Eval file to score \\[default: evals/weather.yaml]",
            show_default=False,
        ),
    ] = None,
    cassettes_given: CassettesOrSuiteOpt = None,
    set_name: SetOpt = "reference",
    configurations: Annotated[
        str | None,
        typer.Option(
            "--configurations",
            help="Only these configurations, comma-separated.",
            show_default=False,
        ),
    ] = None,
    questions: Annotated[
        str | None,
        typer.Option(
            "--questions", help="Only these question ids, comma-separated.", show_default=False
        ),
    ] = None,
    seed: MutationSeedOpt = None,
    budget: MutationBudgetOpt = None,
    workers: WorkersOpt = None,
    show: Annotated[
        int, typer.Option("--show", min=0, metavar="N", help="Surviving mutants listed (0: all).")
    ] = 40,
    json_path: Annotated[
        Path | None,
        typer.Option(
            "--json",
            help="Also write scores and mutants as JSON here (a file, not -).",
            show_default=False,
            callback=not_stdout("--json", "the JSON file (the tables are printed there)"),
        ),
    ] = None,
    fail_under: Annotated[
        float | None,
        typer.Option(
            "--fail-under",
            min=0,
            max=100,
            show_default=False,
            metavar="PCT",
            help="Exit 1 when the score is below PCT %, or there is none.",
        ),
    ] = None,
) -> None:
    """Score an eval file by mutation: would it notice a worse agent?

    Every passing episode is mutated offline (tool results, answer, trajectory) and judged
    again: the score is killed / (killed + surviving). Ctrl-C or SIGTERM stops it and its
    workers (exit 130, nothing written). See docs/mutation.md."""
    from toolreplay.cli.run import parse_selection
    from toolreplay.cli.sources import episodes_input
    from toolreplay.evaluation import (
        EpisodeSource,
        ReplayedSet,
        SelectionError,
        SourceError,
        SuiteCassettes,
    )
    from toolreplay.mutation.run import mutate as mutate_set

    n_workers = worker_count(workers)
    selection = parse_selection(configurations, questions)
    if json_path is not None:  # before the work: a path that cannot be written is a usage error
        from toolreplay.outputs import OutputPathError, check_output_file

        try:
            check_output_file(json_path, "--json")
        except OutputPathError as exc:
            raise fail(str(exc), 2) from None
        from toolreplay.outputs import check_writable

        try:
            check_writable(json_path.parent)
        except OSError as exc:
            raise fail(cannot_write(json_path, exc, "--json")) from None
    whole, folder, cassettes = episodes_input(eval_path, cassettes_given, set_name)
    source: EpisodeSource
    if folder is not None:  # a test suite's folder: episodes from the wire
        source = SuiteCassettes(folder)
    else:
        source = ReplayedSet(cassettes / set_name, workers=n_workers)
    from toolreplay.runs.pool import WorkerDied

    try:
        with terminate_as_interrupt():  # SIGTERM as Ctrl-C: the workers end with the command
            result = mutate_set(
                source, whole, selection, seed=seed or 0, budget=budget, workers=n_workers
            )
    except SelectionError as exc:
        raise fail(str(exc), 2) from None
    except (SourceError, WorkerDied) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: no worker's traceback, nothing written
        raise fail("interrupted; nothing was written", 130) from None
    from toolreplay.mutation.console import print_run

    print_run(result, out, show)
    if json_path is not None:
        import json

        from toolreplay.outputs import atomic_write_text

        text = json.dumps(result.to_dict(), ensure_ascii=False, indent=1) + "\n"
        try:
            json_path.parent.mkdir(parents=True, exist_ok=True)  # the check made it and left none
            atomic_write_text(json_path, text)
        except OSError as exc:
            raise fail(cannot_write(json_path, exc, "--json")) from None
        out.print(f"wrote {json_path}", highlight=False, markup=False, soft_wrap=True)
    score = result.total.score
    if fail_under is not None and score is None:  # as diff's "nothing to compare": exit 1
        why = (
            f"no passing episode to mutate ({result.skipped} failing ones skipped)"
            if not result.mutated
            else f"no mutant was killed or survived ({result.total.equivalent} equivalent)"
        )
        raise fail(f"no mutation score to compare with --fail-under {fail_under:g}%: {why}")
    if fail_under is not None and score is not None and 100 * score < fail_under:
        raise fail(f"mutation score {_pct(score)} is below --fail-under {fail_under:g}%")


def _pct(score: float | None) -> str:
    from toolreplay.mutation.run import percent

    return percent(score)
