"""``toolreplay run``: replay a cassette set, judge, audit, print the table, write results and
report.
"""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolreplay.cli.app import app
from toolreplay.cli.audit import publish_run
from toolreplay.cli.common import (
    CassettesOrSuiteOpt,
    EvalOrDefaultOpt,
    MutationBudgetOpt,
    MutationSeedOpt,
    SetOpt,
    WorkersOpt,
    cannot_write,
    check_output_folder,
    fail,
    not_stdout,
    out,
    progress,
    rare_full_collections,
    split_names,
    terminate_as_interrupt,
    worker_count,
)
from toolreplay.defaults import DEFAULT_EVAL

if TYPE_CHECKING:
    from toolreplay.evals import EvalSuite
    from toolreplay.evaluation import EpisodeSource, ReplayedSet, Selection


@app.command()
def run(
    eval_path: EvalOrDefaultOpt = None,
    cassettes_given: CassettesOrSuiteOpt = None,
    set_name: SetOpt = "reference",
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Output folder, not - \\[default: reports/ or reports/SET/]",
            show_default=False,
            callback=not_stdout("--out", "an output folder"),
        ),
    ] = None,
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
            "--questions",
            help="Only these question ids, comma-separated.",
            show_default=False,
        ),
    ] = None,
    workers: WorkersOpt = None,
    mutate_too: Annotated[
        bool,
        typer.Option(
            "--mutate",
            help="Also compute the mutation score.",
        ),
    ] = False,
    seed: MutationSeedOpt = None,
    budget: MutationBudgetOpt = None,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            metavar="I/N",
            help="Replay one shard of N; toolreplay merge joins them.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Replay a cassette set, judge it, write reports/.

    Offline, every configuration and trial: judges, audits, prints the table, writes
    results.json and index.html; exits 1 when an episode does not replay or the audit fails.
    A folder your tests recorded (`--cassettes DIR`) is judged the same way."""
    from toolreplay.cli.sources import episodes_input
    from toolreplay.evaluation import ReplayedSet, SuiteCassettes
    from toolreplay.runs.pool import WorkerDied
    from toolreplay.runs.replay import parse_shard
    from toolreplay.runs.replay import shard as shard_of

    for option, value in (("--seed", seed), ("--budget", budget)):
        if value is not None and not mutate_too:
            raise typer.BadParameter(
                "for the mutation score: only with --mutate", param_hint=f"'{option}'"
            )
    try:
        part = parse_shard(shard) if shard is not None else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--shard'") from None
    n_workers = worker_count(workers)
    selection = parse_selection(configurations, questions)
    whole, folder, cassettes = episodes_input(eval_path, cassettes_given, set_name)
    source: EpisodeSource
    if folder is not None:  # a set recorded by the pytest plugin: episodes from the wire
        if part is not None:
            raise typer.BadParameter(
                "a folder your tests recorded is read, not replayed: run it whole",
                param_hint="'--shard'",
            )
        # named after the folder itself, never after a relative path (`--cassettes ..`)
        out_dir = out_dir if out_dir is not None else Path("reports") / folder.resolve().name
        check_output_folder(out_dir, inputs=(folder,))
        source = SuiteCassettes(folder)
        return evaluate_and_publish(
            source, whole, selection, out_dir, total=0, detail=True,
            mutate_workers=n_workers if mutate_too else None, mutate_seed=seed or 0,
            mutate_budget=budget,
        )  # fmt: skip
    if out_dir is None:
        out_dir = Path("reports") if set_name == "reference" else Path("reports") / set_name
    replayed = ReplayedSet(cassettes / set_name, workers=n_workers)
    jobs, _ = replay_jobs(replayed, whole, selection)
    if part is not None and part[1] > len(jobs):
        raise typer.BadParameter(
            f"{shard}: this run replays {len(jobs)} episodes, so N can be at most {len(jobs)}",
            param_hint="'--shard'",
        )
    from toolreplay.runs.shards import shard_file_name

    # before replaying, not after (and after every usage check: a refused run creates nothing)
    names = (
        (shard_file_name(*part),)
        if part
        else ("results.json", "index.html", "index-transcripts.html", "index-episodes.html")
    )
    check_output_folder(out_dir, names, inputs=(cassettes / set_name,))
    if part is None:
        return evaluate_and_publish(
            replayed, whole, selection, out_dir, total=len(jobs),
            mutate_workers=n_workers if mutate_too else None, mutate_seed=seed or 0,
            mutate_budget=budget,
        )  # fmt: skip
    if mutate_too:
        raise typer.BadParameter(
            "a shard is not judged: mutate the whole run", param_hint="'--mutate'"
        )
    from toolreplay.runs.replay import replay_outcomes

    mine = shard_of(jobs, *part)
    try:
        with progress(len(mine), "replaying", delay=2.0) as step, terminate_as_interrupt():
            outcomes = replay_outcomes(
                replayed.set_dir, replayed.manifest(), whole, mine, workers=n_workers,
                progress=step,
            )  # fmt: skip
    except WorkerDied as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise fail("interrupted; nothing was written", 130) from None
    from toolreplay.runs.shards import ShardSpec, write_shard

    path = out_dir / shard_file_name(*part)
    spec = ShardSpec(eval_path or DEFAULT_EVAL, cassettes, set_name, configurations, questions)
    try:
        write_shard(path, spec, *part, mine, outcomes)
    except OSError as exc:
        raise fail(cannot_write(path, exc, "--out")) from None
    failed = sum(1 for o in outcomes if isinstance(o, BaseException))
    out.print(
        f"shard {part[0]}/{part[1]}: replayed {len(mine) - failed} of {len(mine)} episodes"
        + (f" ({failed} did not replay; merge reports them)" if failed else "")
    )
    out.print(f"wrote {path}", highlight=False, markup=False, soft_wrap=True)
    out.print(f"when every shard is done: toolreplay merge {out_dir}/shard-*-of-{part[1]}.json")


def parse_selection(configurations: str | None, questions: str | None) -> "Selection":
    """The ``--configurations``/``--questions`` options as a selection; exit 2 for an option
    given empty."""
    from toolreplay.evaluation import Selection

    for option, value in (("--configurations", configurations), ("--questions", questions)):
        if value is not None and not split_names(value):
            raise fail(f"{option}: empty; name at least one, or leave the option out for all", 2)
    return Selection(tuple(split_names(configurations)), tuple(split_names(questions)))


def replay_jobs(
    replayed: "ReplayedSet", whole: "EvalSuite", selection: "Selection"
) -> tuple[list, int]:
    """The run's replay jobs; exit 2 for an unknown selected name, 1 for a bad manifest."""
    from toolreplay.evaluation import SelectionError, SourceError

    try:
        return replayed.jobs(whole, selection)
    except SelectionError as exc:
        raise fail(str(exc), 2) from None
    except SourceError as exc:
        raise fail(str(exc)) from None


def evaluate_and_publish(
    source: "EpisodeSource",
    whole: "EvalSuite",
    selection: "Selection",
    out_dir: Path,
    total: int,
    detail: bool = False,
    mutate_workers: int | None = None,
    mutate_seed: int = 0,
    mutate_budget: int | None = None,
) -> None:
    """Evaluate (:func:`toolreplay.evaluation.evaluate`), write and print the results, and
    pick the exit code: 2 for a bad selection, 1 for an episode that does not replay, a
    source that cannot be read, or a failed audit (with ``detail``, what failed and why
    printed: a test suite's set has no `toolreplay audit` of its own to show it). With
    ``mutate_workers``, the mutation score of the episodes judged
    (:func:`toolreplay.mutation.run.mutate_collected` in that many processes, with
    ``mutate_seed`` and at most ``mutate_budget`` mutants an episode, None: all) goes into the
    results' ``mutation`` section, hence the report, and is printed."""
    from toolreplay.evaluation import SelectionError, SourceError, evaluate
    from toolreplay.runs.pool import WorkerDied

    try:
        with (
            progress(total, "replaying", delay=2.0) as step,
            terminate_as_interrupt(),
            rare_full_collections(),
        ):
            evaluation = evaluate(source, whole, selection, progress=step if total else None)
    except SelectionError as exc:
        raise fail(str(exc), 2) from None
    except (SourceError, WorkerDied) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise fail("interrupted; nothing was written", 130) from None
    for note in evaluation.notes:
        out.print(note, highlight=False, soft_wrap=True)
    for unread in evaluation.collected.unread:  # loud: a cassette no reader understood
        out.print(f"not read: {unread}", highlight=False, markup=False, soft_wrap=True)
    results = evaluation.results
    mutation = None
    if mutate_workers is not None:
        from toolreplay.mutation.record import mutation_record
        from toolreplay.mutation.run import mutate_collected

        try:
            with terminate_as_interrupt():
                mutation = mutate_collected(
                    evaluation.collected, seed=mutate_seed, budget=mutate_budget,
                    workers=mutate_workers,
                )  # fmt: skip
        except WorkerDied as exc:
            raise fail(str(exc)) from None
        except KeyboardInterrupt:
            raise fail("interrupted; nothing was written", 130) from None
        results = results.model_copy(update={"mutation": mutation_record(mutation)})
    from toolreplay.runs.replay import collector_frozen

    # What was built so far lives until the results are written: the cycle collector need not
    # walk it again while the report is made (its full passes over 10,000 episodes were
    # seconds of the serial tail). Objects made from here on are collected as usual.
    with collector_frozen(), rare_full_collections():
        publish_run(out_dir, results, evaluation.audit)
    if mutation is not None:
        from toolreplay.mutation.console import print_run

        print_run(mutation, out, show=20)
    if not evaluation.audit.passed:
        if detail:
            for check in evaluation.audit.checks:  # what failed and why, not only the name
                if check.applicable and not check.passed:
                    out.print(f"  {check.name}: {check.explanation}", highlight=False, markup=False)
                    for line in check.evidence[:5]:
                        out.print(f"    {line}", highlight=False, markup=False, soft_wrap=True)
            raise fail("fidelity audit failed (see above)", 1)
        raise fail("fidelity audit failed (see above; `toolreplay audit` for the evidence)", 1)
