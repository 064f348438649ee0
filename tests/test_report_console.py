"""The terminal tables read the typed results (:mod:`toolreplay.report.console`): the same text
as the command line's tables for every committed results file, at every width."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console

from toolreplay.report.console import rates_lines, summary_table, trials_table
from toolreplay.results.format import as_results, load_results

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted(
    [*(REPO / "reports").rglob("results.json"), *(REPO / "examples").glob("*/report*/results.json")]
)


def shown(renderable: Any, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_a_mapping_is_read_like_the_model() -> None:
    doc = json.loads((REPO / "reports" / "results.json").read_text(encoding="utf-8"))
    for width in (60, 100):
        assert shown(summary_table(doc, width), width) == shown(
            summary_table(as_results(doc), width), width
        )
    assert rates_lines(doc) == [
        "failure-mode rates over trials:",
        "  single+oneshot: empty_answer 5%",
        "  single+atomic: empty_answer 65%, unfulfilled_promise 35%",
    ]


def test_narrow_tables_keep_the_essential_columns() -> None:
    typed = load_results(REPO / "reports" / "results.json")
    text = shown(summary_table(typed, 60), 60)
    assert "4/4" in text and "3.25" in text and "failure" not in text
    text = shown(trials_table(typed, 60), 60)
    assert "pass@5" in text and "pass^k" not in text
