"""``toolreplay audit``: the fidelity audit of a cassette set.
"""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from toolreplay.cli.app import app
from toolreplay.cli.common import (
    CassettesOrSuiteOpt,
    EvalOrDefaultOpt,
    SetOpt,
    WorkersOpt,
    cannot_write,
    fail,
    out,
    progress,
    terminate_as_interrupt,
    worker_count,
    write_outputs,
)

if TYPE_CHECKING:
    from toolreplay.audit.tables import Audit
    from toolreplay.results.format import Results


def publish_run(out_dir: Path, results: "Results", audit: "Audit", errors: tuple = ()) -> None:
    """Write ``results.json`` and the report into ``out_dir``, then print the run's tables,
    the audit's summary and what was written: shared by ``run`` on a recorded set and on a
    test suite's set. Exit 2 on an output path refused, 1 on a write that failed (or one of
    ``errors``, the caller's own)."""
    from toolreplay.folders import LockedError
    from toolreplay.outputs import OutputPathError
    from toolreplay.report.console import (
        expectation_lines,
        interval_lines,
        rates_lines,
        summary_table,
        trials_table,
    )
    from toolreplay.report.render import ReportError

    try:
        page = write_outputs(out_dir, results)
    except OutputPathError as exc:
        raise fail(str(exc), 2) from None
    except (ReportError, LockedError, *errors) as exc:
        raise fail(str(exc)) from None
    except OSError as exc:
        raise fail(cannot_write(out_dir, exc, "--out")) from None
    out.print(summary_table(results, out.width))
    out.print(trials_table(results, out.width))
    for line in [*interval_lines(results), *rates_lines(results), *expectation_lines(results)]:
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    _print_audit_summary(audit)
    out.print(f"wrote {out_dir / 'results.json'}", highlight=False, soft_wrap=True)
    out.print(f"wrote {page}", highlight=False, soft_wrap=True)
    from toolreplay.report.render import (
        episodes_path,
        splits_table,
        splits_transcripts,
        transcripts_path,
    )

    if splits_transcripts(results):  # many transcripts: on a page of their own
        out.print(f"wrote {transcripts_path(page)}", highlight=False, soft_wrap=True)
    if splits_table(results):  # a very long episode table: on a page of its own
        out.print(f"wrote {episodes_path(page)}", highlight=False, soft_wrap=True)


def _print_audit_summary(audit: "Audit") -> None:
    failed = [c for c in audit.checks if c.applicable and not c.passed]
    skipped = [c.name for c in audit.checks if not c.applicable]
    applied = len(audit.checks) - len(skipped)
    na = f"; not applicable: {', '.join(skipped)}" if skipped else ""
    if failed:
        out.print(
            f"[red]fidelity: {len(failed)} of {applied} checks failed:[/] "
            + escape(", ".join(c.name for c in failed) + na),
            markup=True,
        )
    elif skipped:
        passed = f"[green]fidelity: the {applied} applicable checks passed[/]"
        out.print(passed + escape(na), markup=True)
    else:
        out.print(f"[green]fidelity: all {len(audit.checks)} checks passed[/]", markup=True)


def _print_audit(audit: "Audit") -> None:
    from rich.table import Table

    for check in audit.checks:
        mark = (
            "[dim]N/A[/] "
            if not check.applicable
            else "[green]PASS[/]"
            if check.passed
            else "[bold red]FAIL[/]"
        )
        out.print(
            f"{mark} [bold]{escape(check.name)}[/]: {escape(check.explanation)}",
            highlight=False, soft_wrap=True, markup=True,
        )  # fmt: skip
        for line in check.evidence:
            out.print(f"       - {line}", highlight=False, markup=False, soft_wrap=True)
    tables = audit.tables
    if "near_miss" not in tables:  # a set recorded by the pytest plugin: no near-miss arm
        return
    faithful, near = tables["faithful"], tables["near_miss"]
    table = Table(title="faithful vs. near-miss")
    table.add_column("configuration")
    table.add_column(f"faithful\n({faithful.judge} judge)", justify="right")
    table.add_column(f"near-miss\n(no 市 retry, {near.judge} judge)", justify="right")
    for a, b in zip(faithful.rows, near.rows, strict=True):
        table.add_row(a.name, f"{a.passed}/{a.total}", f"{b.passed}/{b.total}")
    out.print(table)


@app.command()
def audit(
    eval_path: EvalOrDefaultOpt = None,
    cassettes_given: CassettesOrSuiteOpt = None,
    set_name: SetOpt = "reference",
    narrow_judge: Annotated[
        bool, typer.Option(help="Audit with the narrow (°C only) judge.", show_default=False)
    ] = False,
    workers: WorkersOpt = None,
) -> None:
    """Prove the comparison is fair (the fidelity audit).

    Baseline heuristics present and exercised, ablations, judge breadth, near misses, arm
    parity, completeness. Exits 1 when a check fails. Takes what run takes: a folder your
    tests recorded (`--cassettes DIR`) is audited without an eval file too."""
    from toolreplay.audit.run import run_audit
    from toolreplay.cassettes.errors import CassetteError
    from toolreplay.cli.sources import episodes_input
    from toolreplay.judging.verdicts import FULL_JUDGE, NARROW_JUDGE
    from toolreplay.runs.configuration import ablation_configurations, study_configurations
    from toolreplay.runs.pool import WorkerDied

    suite, folder, cassettes = episodes_input(eval_path, cassettes_given, set_name)
    set_dir = cassettes / set_name
    if folder is not None:  # a set recorded by the pytest plugin
        from toolreplay.runs.suite_folder import SuiteFolderError

        try:
            result = run_audit(folder, suite, NARROW_JUDGE if narrow_judge else FULL_JUDGE)
        except (SuiteFolderError, CassetteError) as exc:
            raise fail(str(exc)) from None
        _print_audit(result)
        if not result.passed:
            raise fail("fidelity audit failed: see the failed checks above and their evidence", 1)
        return
    judge = NARROW_JUDGE if narrow_judge else FULL_JUDGE
    total = (len(study_configurations(suite)) + len(ablation_configurations(suite))) * len(
        suite.questions
    )
    try:
        with progress(total, "auditing") as step, terminate_as_interrupt():
            result = run_audit(set_dir, suite, judge, progress=step, workers=worker_count(workers))
    except (CassetteError, WorkerDied) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the workers are stopped with it
        raise fail("interrupted", 130) from None
    _print_audit(result)
    if not result.passed:
        raise fail(
            "fidelity audit failed: " + ", ".join(c.name for c in result.checks if not c.passed), 1
        )
