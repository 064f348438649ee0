"""Results checked for internal consistency before `report` and `diff` (issue 34): each
configuration's summary is recomputed from its episodes; a summary edited by hand ("4/4" over
failing episodes) is refused with one line naming the file, the configuration and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.results.validate import read_results

from .conftest import REPO

COMMITTED = sorted(
    [REPO / "reports" / "results.json", *(REPO / "examples").glob("*/report/results.json")]
)


def _edit(tmp_path: Path, change) -> Path:
    data = json.loads((REPO / "reports" / "results.json").read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _failing(data: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in data["configurations"] if c["passed"] < c["total"])


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.parent.parent.name)
def test_every_committed_results_file_is_consistent(path: Path) -> None:
    read_results(path)


def _flip_episode(data: dict[str, Any]) -> None:
    """An episode's verdict flipped, its summary left: the summary no longer matches."""
    episode = next(e for e in data["episodes"] if not e["passed"])
    episode["passed"] = True
    episode.pop("failure_modes", None)


EDITS = {
    "passed": (lambda d: _failing(d).update(passed=_failing(d)["total"]), "passed is"),
    "total": (lambda d: d["configurations"][0].update(total=9), "total is 9"),
    "avg_rounds": (lambda d: d["configurations"][0].update(avg_rounds=1.0), "avg_rounds"),
    "stop_reasons": (
        lambda d: d["configurations"][0].update(stop_reasons={"stop": 99}), "stop_reasons"
    ),
    "failure_modes": (
        lambda d: d["configurations"][0].update(failure_modes={"empty_answer": 3}),
        "failure_modes",
    ),
    "episode passed": (_flip_episode, "passed is"),
    "summary dropped": (lambda d: d["configurations"].pop(0), "has no summary"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_summary_is_refused_by_report_and_diff(tmp_path: Path, edit: str) -> None:
    change, said = EDITS[edit]
    path = _edit(tmp_path, change)
    runner = CliRunner()
    shown = runner.invoke(app, ["report", "--results", str(path), "--out", str(tmp_path / "x")])
    assert shown.exit_code == 2, shown.output
    assert said in shown.output and str(path) in " ".join(shown.output.split())
    assert not (tmp_path / "x").exists()
    compared = runner.invoke(app, ["diff", str(REPO / "reports" / "results.json"), str(path)])
    assert compared.exit_code == 2, compared.output
    assert "no differences" not in compared.output
