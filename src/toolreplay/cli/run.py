"""``toolreplay run``: replay a cassette set, judge, audit, print the table, write results and
report.
"""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolreplay.cli.app import app
from toolreplay.cli.audit import publish_run
from toolreplay.cli.common import (
    CassettesOpt,
    EvalOpt,
    SetOpt,
    WorkersOpt,
    _check_output_folder,
    _fail,
    _load,
    _progress,
    _run_jobs,
    _select,
    _terminate_as_interrupt,
    _workers,
    out,
)
from toolreplay.defaults import DEFAULT_CASSETTES, DEFAULT_EVAL

if TYPE_CHECKING:
    from toolreplay.evals import EvalSuite
    from toolreplay.runs.configuration import Configuration


@app.command()
def run(
    eval_path: EvalOpt = DEFAULT_EVAL,
    cassettes: CassettesOpt = DEFAULT_CASSETTES,
    set_name: SetOpt = "reference",
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Where results.json and index.html go "
            "\\[default: reports/ for the reference set, reports/SET/ for any other]",
            show_default=False,
        ),
    ] = None,
    configurations: Annotated[
        str | None,
        typer.Option(
            "--configurations",
            help="Only these configurations, comma-separated (e.g. single+oneshot,loop+atomic).",
            show_default=False,
        ),
    ] = None,
    questions: Annotated[
        str | None,
        typer.Option(
            "--questions",
            help="Only these question ids, comma-separated (e.g. ningde,beijing).",
            show_default=False,
        ),
    ] = None,
    workers: WorkersOpt = None,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="Replay only shard I of N (e.g. 2/4: every 4th episode from the 2nd) and write "
            "OUT/shard-I-of-N.json instead of the report; `toolreplay merge` combines the N "
            "shard files into the same results and report as a whole run.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Replay a cassette set, judge it, write reports/.

    Replays every configuration from the cassette set (offline, no key), every trial, judges
    every answer, labels failure modes, runs the fidelity audit, prints the table (trial 1) and
    pass^k over the trials, and writes results.json and index.html. Episodes are replayed by
    --workers processes; --shard splits the run across machines (see `toolreplay merge`).
    Exits 1 when an episode does not replay or the audit fails.

    An eval file with `cassettes: PATH` (or questions mapped to `tests:`), or `--cassettes
    DIR` naming a folder of cassettes your tests recorded (no cassette set in it), judges a
    folder recorded by the pytest plugin instead: its episodes are read from the cassettes,
    whatever framework sent them; repeated tests are the trials (`--cassettes` names another
    folder; `--out` defaults to reports/FOLDER)."""
    from toolreplay.cassettes.errors import CassetteError
    from toolreplay.cassettes.manifest import read_manifest
    from toolreplay.runs.replay import WorkerDied, parse_shard, replay_outcomes
    from toolreplay.runs.replay import shard as shard_of

    try:
        part = parse_shard(shard) if shard is not None else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--shard'") from None
    n_workers = _workers(workers)
    whole = _load(eval_path)
    if whole.reads_cassettes or _recorded_by_tests(cassettes, set_name):
        # a set recorded by the pytest plugin: episodes from the wire
        from toolreplay.cli.anyset import run_any_set

        named = whole.cassettes is not None and cassettes == DEFAULT_CASSETTES
        given = None if named else cassettes  # None: the eval file's cassettes:
        return run_any_set(whole, given, out_dir, configurations, questions)
    suite, configs, selection = _select(whole, configurations, questions)
    if out_dir is None:
        out_dir = Path("reports") if set_name == "reference" else Path("reports") / set_name
    set_dir = cassettes / set_name
    try:
        manifest = read_manifest(set_dir)
    except CassetteError as exc:
        raise _fail(str(exc)) from None
    jobs, n_trial_jobs = _run_jobs(whole, suite, configs, manifest.trials)
    if part is not None and part[1] > len(jobs):
        raise typer.BadParameter(
            f"{shard}: this run replays {len(jobs)} episodes, so N can be at most {len(jobs)}",
            param_hint="'--shard'",
        )
    from toolreplay.runs.shards import shard_file_name

    # before replaying, not after (and after every usage check: a refused run creates nothing)
    names = (shard_file_name(*part),) if part else ("results.json", "index.html")
    _check_output_folder(out_dir, names)
    mine = shard_of(jobs, *part) if part else jobs
    try:
        with _progress(len(mine), "replaying", delay=2.0) as step, _terminate_as_interrupt():
            outcomes = replay_outcomes(
                set_dir, manifest, whole, mine, workers=n_workers, progress=step
            )
    except WorkerDied as exc:
        raise _fail(str(exc)) from None
    except KeyboardInterrupt:
        raise _fail("interrupted; nothing was written", 130) from None
    if part is not None:
        from toolreplay.runs.shards import ShardSpec, shard_file_name, write_shard

        path = out_dir / shard_file_name(*part)
        spec = ShardSpec(eval_path, cassettes, set_name, configurations, questions)
        try:
            write_shard(path, spec, *part, mine, outcomes)
        except OSError as exc:
            raise _fail(f"cannot write {path}: {exc.strerror or exc}") from None
        failed = sum(1 for o in outcomes if isinstance(o, BaseException))
        out.print(
            f"shard {part[0]}/{part[1]}: replayed {len(mine) - failed} of {len(mine)} episodes"
            + (f" ({failed} did not replay; merge reports them)" if failed else "")
        )
        out.print(f"wrote {path}")
        out.print(f"when every shard is done: toolreplay merge {out_dir}/shard-*-of-{part[1]}.json")
        return
    _finish(
        whole, suite, configs, selection, manifest, set_dir, jobs, outcomes, n_trial_jobs, out_dir
    )


def _recorded_by_tests(cassettes: Path, set_name: str) -> bool:
    """Whether ``--cassettes DIR`` is a folder of cassettes a test suite recorded, for an eval
    file that does not name it with ``cassettes:``: YAML files, and no cassette set of
    ``toolreplay record`` (``DIR/SET``, or any ``DIR/*/manifest.json``) in it."""
    if (cassettes / set_name).exists() or not cassettes.is_dir():
        return False
    if any(cassettes.glob("*/manifest.json")):
        return False
    return any(cassettes.rglob("*.yaml")) or any(cassettes.rglob("*.yml"))


def _finish(
    whole: "EvalSuite",
    suite: "EvalSuite",
    configs: "list[Configuration]",
    selection: dict,
    manifest: Any,
    set_dir: Path,
    jobs: list[Any],
    outcomes: list[Any],
    n_trial_jobs: int,
    out_dir: Path,
) -> None:
    """Judge replayed episodes, run the audit, write and print the results (run and merge)."""
    from toolreplay.audit.run import run_audit
    from toolreplay.judging.verdicts import FULL_JUDGE
    from toolreplay.results.build import build_results
    from toolreplay.runs.trials import add_trial_metrics, trial_outcome

    replayed = []
    for job, outcome in zip(jobs[:n_trial_jobs], outcomes[:n_trial_jobs], strict=True):
        if isinstance(outcome, BaseException):
            raise _fail(str(outcome))
        replayed.append((job.trial, outcome))
    episodes = [e for t, e in replayed if t == 1]
    results = build_results(
        manifest, episodes, [c.name for c in configs], FULL_JUDGE, suite.by_id
    )
    results["selection"] = selection
    trial_outcomes = [
        trial_outcome(t, e, FULL_JUDGE, suite.by_id.get(e.question_id)) for t, e in replayed
    ]
    add_trial_metrics(results, trial_outcomes, [q.id for q in suite.questions], manifest.trials)
    # The audit is about the set, not the selection: it always covers the whole eval file,
    # from the episodes replayed above (one that did not replay is replayed again to say why).
    have = {(e.configuration, e.question_id): e for e in episodes}
    for job, outcome in zip(jobs[n_trial_jobs:], outcomes[n_trial_jobs:], strict=True):
        if not isinstance(outcome, BaseException):
            have[(job.configuration.name, job.question_id)] = outcome
    audit = run_audit(set_dir, whole, FULL_JUDGE, episodes=have)
    results["fidelity"] = audit.to_dict()
    publish_run(out_dir, results, audit)
    if not audit.passed:
        raise _fail("fidelity audit failed (see above; `toolreplay audit` for the evidence)", 1)
