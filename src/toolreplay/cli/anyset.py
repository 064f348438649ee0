"""``toolreplay run`` on a set recorded by the pytest plugin (an eval file with ``cassettes:``
or questions mapped to ``tests:``): episodes read from the cassettes, judged with the eval
file's questions and expectations, pass^k over repeated tests, the audit's checks that apply,
results.json and the report. See :mod:`toolreplay.runs.anyset`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from toolreplay.cli.common import (
    _check_output_folder,
    _fail,
    _names,
    out,
)

if TYPE_CHECKING:
    from toolreplay.evals import EvalSuite


def run_any_set(
    whole: EvalSuite,
    cassettes: Path | None,
    out_dir: Path | None,
    configurations: str | None,
    questions: str | None,
) -> None:
    """The ``toolreplay run`` path for a plugin-recorded set (module docstring)."""
    from toolreplay.audit.anyset import any_set_results
    from toolreplay.cassettes.errors import CassetteError
    from toolreplay.cli.audit import publish_run
    from toolreplay.runs.anyset import AnySetError, cassettes_folder

    try:
        folder = cassettes_folder(whole, cassettes)
    except AnySetError as exc:
        raise _fail(str(exc), 2) from None
    if not folder.is_dir():  # before the output folder is made: nothing written on bad input
        what = "does not exist" if not folder.exists() else "is not a folder"
        raise _fail(f"cassette folder {folder} {what}", 2)
    out_dir = out_dir if out_dir is not None else Path("reports") / folder.name
    _check_output_folder(out_dir)
    try:
        results, audit, written = any_set_results(
            whole, folder, _names(configurations), _names(questions)
        )
    except ValueError as exc:  # AnySetError, CassetteError, a bad selection
        code = 2 if str(exc).startswith("--") else 1
        raise _fail(str(exc), code) from None
    if written:
        out.print(
            f"wrote {folder / 'manifest.json'} (provenance pytest)", highlight=False, soft_wrap=True
        )
    publish_run(out_dir, results, audit, (CassetteError, AnySetError))
    if not audit.passed:
        for check in audit.checks:  # what failed and why, not only the check's name
            if check.applicable and not check.passed:
                out.print(f"  {check.name}: {check.explanation}", highlight=False, markup=False)
                for line in check.evidence[:5]:
                    out.print(f"    {line}", highlight=False, markup=False, soft_wrap=True)
        raise _fail("fidelity audit failed (see above)", 1)
