"""``toolreplay run`` on a set recorded by the pytest plugin (an eval file with ``cassettes:``
or questions mapped to ``tests:``): episodes read from the cassettes, judged with the eval
file's questions and expectations, pass^k over repeated tests, the audit's checks that apply,
results.json and the report. See :mod:`toolreplay.runs.anyset`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolreplay.cli.common import (
    _check_output_folder,
    _fail,
    _names,
    _rates_lines,
    _table,
    _trials_table,
    out,
    write_outputs,
)

if TYPE_CHECKING:
    from toolreplay.evals import EvalSuite


def any_set_results(
    whole: EvalSuite,
    folder: Path,
    configurations: str | None = None,
    questions: str | None = None,
) -> tuple[dict[str, Any], Any, bool]:
    """``(results, audit, manifest_written)`` for the plugin-recorded set at ``folder``
    judged with the eval file ``whole`` (selection by configuration and question ids, comma-
    separated). Raises :class:`~toolreplay.runs.anyset.AnySetError` or
    :class:`~toolreplay.cassettes.errors.CassetteError` with one line."""
    from toolreplay.audit.anyset import run_any_set_audit
    from toolreplay.judging.verdicts import FULL_JUDGE
    from toolreplay.results.build import build_results
    from toolreplay.runs.anyset import ensure_manifest, read_any_set
    from toolreplay.runs.trials import add_trial_metrics, trial_outcome

    found = read_any_set(folder, whole)
    manifest, written = ensure_manifest(found, whole)
    audit = run_any_set_audit(found, whole, FULL_JUDGE, manifest)
    want_q, want_c = _names(questions), _names(configurations)
    known_q = [q.id for q in whole.questions]
    if bad := [q for q in want_q if q not in known_q]:
        raise ValueError(f"--questions: unknown {', '.join(bad)}; {whole.path} has {known_q}")
    if bad := [c for c in want_c if c not in found.configurations]:
        raise ValueError(
            f"--configurations: unknown {', '.join(bad)}; {folder} holds "
            f"{', '.join(found.configurations)}"
        )
    suite = whole
    if want_q:
        suite = replace(whole, questions=tuple(q for q in whole.questions if q.id in want_q))
    names = [c for c in found.configurations if not want_c or c in want_c]
    chosen = [
        e
        for e in found.episodes
        if e.episode.configuration in names
        and e.episode.question_id in {q.id for q in suite.questions}
    ]
    results = build_results(
        manifest, [e.episode for e in chosen if e.trial == 1], names, FULL_JUDGE, suite.by_id
    )
    try:
        shown = Path(whole.path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = Path(whole.path).name
    results["selection"] = {
        "eval_file": shown,
        "configurations": names,
        "questions": [q.id for q in suite.questions],
        "all_configurations": len(names) == len(found.configurations),
        "all_questions": len(suite.questions) == len(whole.questions),
    }
    outcomes = [
        trial_outcome(e.trial, e.episode, FULL_JUDGE, suite.by_id.get(e.episode.question_id))
        for e in chosen
    ]
    add_trial_metrics(results, outcomes, [q.id for q in suite.questions], found.trials)
    results["fidelity"] = audit.to_dict()
    return results, audit, written


def run_any_set(
    whole: EvalSuite,
    cassettes: Path | None,
    out_dir: Path | None,
    configurations: str | None,
    questions: str | None,
) -> None:
    """The ``toolreplay run`` path for a plugin-recorded set (module docstring)."""
    from toolreplay.cassettes.errors import CassetteError
    from toolreplay.cli.audit import _print_audit_summary
    from toolreplay.files import LockedError
    from toolreplay.report.render import ReportError
    from toolreplay.runs.anyset import AnySetError, cassettes_folder

    try:
        folder = cassettes_folder(whole, cassettes)
    except AnySetError as exc:
        raise _fail(str(exc), 2) from None
    out_dir = out_dir if out_dir is not None else Path("reports") / folder.name
    _check_output_folder(out_dir)
    try:
        results, audit, written = any_set_results(whole, folder, configurations, questions)
    except ValueError as exc:  # AnySetError, CassetteError, a bad selection
        code = 2 if str(exc).startswith("--") else 1
        raise _fail(str(exc), code) from None
    except OSError as exc:
        raise _fail(f"cannot write {folder / 'manifest.json'}: {exc.strerror or exc}") from None
    if written:
        out.print(f"wrote {folder / 'manifest.json'} (provenance pytest)", highlight=False)
    try:
        page = write_outputs(out_dir, results)
    except (ReportError, LockedError, CassetteError, AnySetError) as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write to {out_dir}: {exc.strerror or exc}") from None
    out.print(_table(results))
    out.print(_trials_table(results))
    for line in _rates_lines(results):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    _print_audit_summary(audit)
    out.print(f"wrote {out_dir / 'results.json'}", highlight=False, soft_wrap=True)
    out.print(f"wrote {page}", highlight=False, soft_wrap=True)
    if not audit.passed:
        raise _fail("fidelity audit failed (see above)", 1)
