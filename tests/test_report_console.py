"""The terminal tables read the typed results (:mod:`toolreplay.report.console`): the same text
as the command line's tables for every committed results file, at every width."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console

from toolreplay.report.console import interval_lines, rates_lines, summary_table, trials_table
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


REFERENCE_INTERVALS = [
    "95% intervals of pass^k (Wilson over the questions):",
    "  single+oneshot: pass^1 0.95 [0.46, 1.00], pass^5 0.75 [0.30, 0.95]",
    "  loop+oneshot: pass^1 1.00 [0.51, 1.00], pass^5 1.00 [0.51, 1.00]",
    "  single+atomic: pass^1 0.00 [0.00, 0.49], pass^5 0.00 [0.00, 0.49]",
    "  loop+atomic: pass^1 1.00 [0.51, 1.00], pass^5 1.00 [0.51, 1.00]",
]


def test_pass_hat_k_is_printed_with_its_interval() -> None:
    """pass^1 and pass^n of each configuration with results.json's ``pass_hat_k_interval``
    (docs/intervals.md's table: 0.46–1.00, 0.30–0.95, ...), in 80 columns, as the README and
    the docs' front page show the run's output; the method per line when configurations
    differ in it; nothing for results without intervals."""
    doc = json.loads((REPO / "reports" / "results.json").read_text(encoding="utf-8"))
    assert interval_lines(doc) == REFERENCE_INTERVALS
    assert all(len(line) <= 80 for line in REFERENCE_INTERVALS)
    for page in ("README.md", "docs/index.md"):
        text = (REPO / page).read_text(encoding="utf-8")
        assert "\n".join(REFERENCE_INTERVALS) + "\nfailure-mode rates over trials:" in text
    mixed = json.loads(json.dumps(doc))
    for span in mixed["configurations"][1]["pass_hat_k_interval"].values():
        span["method"] = "bootstrap"
    lines = interval_lines(mixed)
    assert lines[0] == "95% intervals of pass^k:"
    assert lines[1].endswith("[0.30, 0.95] (Wilson)")
    assert lines[2].endswith("[0.51, 1.00] (bootstrap)")
    one_trial = json.loads(json.dumps(doc))
    for c in one_trial["configurations"]:
        c["pass_hat_k"] = {"1": c["pass_hat_k"]["1"]}
        c["pass_hat_k_interval"] = {"1": c["pass_hat_k_interval"]["1"]}
    assert interval_lines(one_trial)[1] == "  single+oneshot: pass^1 0.95 [0.46, 1.00]"
    for c in doc["configurations"]:
        del c["pass_hat_k_interval"]  # an older run's results
    assert interval_lines(doc) == []


def test_every_committed_run_prints_its_intervals_in_80_columns() -> None:
    for path in DOCUMENTS:
        typed = load_results(path)
        lines = interval_lines(typed)
        assert lines, path
        assert all(len(line) <= 80 for line in lines), path
