"""``toolreplay merge``: combine shard files into one results file and report.
"""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.app import app
from toolreplay.cli.common import check_output_folder, fail, load_suite, not_stdout
from toolreplay.cli.run import evaluate_and_publish, parse_selection, replay_jobs


@app.command()
def merge(
    shard_files: Annotated[
        list[Path],
        typer.Argument(
            help="Every shard file of one run (shard-I-of-N.json).",
            show_default=False,
            metavar="SHARD",
        ),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Output folder, not - \\[default: the first shard's]",
            show_default=False,
            callback=not_stdout("--out", "an output folder"),
        ),
    ] = None,
) -> None:
    """Combine the shard files of a sharded run into one report.

    Writes exactly what an unsharded `toolreplay run` would; the eval file and the cassette
    set must be readable here."""
    from toolreplay.evaluation import ReplayedSet
    from toolreplay.runs.shards import ShardError, read_shards, read_spec

    try:
        spec = read_spec(shard_files)
    except ShardError as exc:
        raise fail(str(exc)) from None
    if out_dir is None:
        out_dir = shard_files[0].parent
    if not spec.eval_file.is_file():
        raise fail(
            f"the shard files name the eval file {spec.eval_file}, which is not here: run "
            "merge from the folder `toolreplay run --shard` ran in"
        )
    whole = load_suite(spec.eval_file)
    selection = parse_selection(spec.configurations, spec.questions)
    replayed = ReplayedSet(spec.cassettes / spec.cassette_set)
    jobs, _ = replay_jobs(replayed, whole, selection)
    check_output_folder(out_dir, ("results.json", "index.html"))
    try:
        outcomes = read_shards(shard_files, spec, jobs)
    except ShardError as exc:
        raise fail(str(exc)) from None
    from dataclasses import replace

    whole_run = replace(replayed, outcomes=outcomes)
    evaluate_and_publish(whole_run, whole, selection, out_dir, total=0)
