"""``toolreplay merge``: combine shard files into one results file and report.
"""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.app import app
from toolreplay.cli.common import _check_output_folder, _fail, _load
from toolreplay.cli.run import _evaluate_and_publish, _jobs, _selection


@app.command()
def merge(
    shard_files: Annotated[
        list[Path],
        typer.Argument(
            help="The shard files of one run (OUT/shard-I-of-N.json from `toolreplay run "
            "--shard I/N`), every I from 1 to N.",
            show_default=False,
            metavar="SHARD",
        ),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where results.json and index.html go "
            "\\[default: the folder of the first shard file]",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Combine the shard files of a sharded run into one results file and report.

    Checks that the files are shards 1..N of one run (same eval file, selection and
    recording of the set) and cover every episode, then judges, audits, prints and writes
    exactly what an unsharded `toolreplay run` would. The eval file and the cassette set the
    shards name must be readable here (the audit reads the recorded traffic)."""
    from toolreplay.evaluation import ReplayedSet
    from toolreplay.runs.shards import ShardError, read_shards, read_spec

    try:
        spec = read_spec(shard_files)
    except ShardError as exc:
        raise _fail(str(exc)) from None
    if out_dir is None:
        out_dir = shard_files[0].parent
    if not spec.eval_file.is_file():
        raise _fail(
            f"the shard files name the eval file {spec.eval_file}, which is not here: run "
            "merge from the folder `toolreplay run --shard` ran in"
        )
    whole = _load(spec.eval_file)
    selection = _selection(spec.configurations, spec.questions)
    replayed = ReplayedSet(spec.cassettes / spec.cassette_set)
    jobs, _ = _jobs(replayed, whole, selection)
    _check_output_folder(out_dir, ("results.json", "index.html"))
    try:
        outcomes = read_shards(shard_files, spec, jobs)
    except ShardError as exc:
        raise _fail(str(exc)) from None
    from dataclasses import replace

    whole_run = replace(replayed, outcomes=outcomes)
    _evaluate_and_publish(whole_run, whole, selection, out_dir, total=0)
