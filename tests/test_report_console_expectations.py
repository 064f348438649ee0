"""The terminal names the expectations episodes failed (report.console.expectation_lines, printed
by run after its tables): which configuration, question and trial, which expectation, and why,
at most 10 lines and a count of the rest; nothing when none failed, so the reference run's
printed output is unchanged (found by review: only a failure-mode count used to show)."""

from __future__ import annotations

from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.report.console import EXPECTATIONS_SHOWN, expectation_lines
from toolreplay.results.format import load_results

from .conftest import REPO

STOCK = REPO / "examples" / "stock_agent"


def test_failed_expectations_are_named_in_order_and_capped() -> None:
    results = load_results(STOCK / "report" / "results.json")
    every = expectation_lines(results, limit=100)
    assert every[0] == "failed expectations (12):" and len(every) == 13
    assert every[2] == (
        '  test_agent / stock-levels trial 3: tool_arguments: expected any call of check_stock '
        'with {"sku": "XYZ-2"} — check_stock({"sku": "ABC-1"}) in round 1: sku is "ABC-1", '
        'expected "XYZ-2"'
    )
    assert every[4] == (
        "  test_agent / stock-and-price trial 1: max_rounds: expected at most 2 rounds — 3 "
        "rounds, more than 2; round 3 is over the limit"
    )
    assert every[8].startswith(
        "  test_agent / unknown-sku trial 1: strict_grounding: expected every value of stock is "
        "grounded — fabricated value: no tool result holds 99 units"
    )
    capped = expectation_lines(results, limit=3)
    assert capped == [*every[:4], "  and 9 more (every one in results.json and the report)"]
    assert expectation_lines(results) == [
        *every[: 1 + EXPECTATIONS_SHOWN], "  and 2 more (every one in results.json and the report)"
    ]
    assert EXPECTATIONS_SHOWN == 10


def test_a_run_without_failed_expectations_prints_none() -> None:
    for path in (REPO / "reports").rglob("results.json"):
        assert expectation_lines(load_results(path)) == [], path


def test_run_prints_them_after_the_tables(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(
        app,
        ["run", "--eval", str(STOCK / "eval.yaml"), "--cassettes", str(STOCK / "cassettes"),
         "--out", str(tmp_path / "out")],
        env={"COLUMNS": "300"},
    )  # fmt: skip
    lines = result.output.splitlines()
    head = lines.index("failed expectations (12):")
    assert lines.index("failure-mode rates over trials:") < head
    assert lines[head : head + 12] == expectation_lines(
        load_results(tmp_path / "out" / "results.json")
    )
    assert lines[head + 11] == "  and 2 more (every one in results.json and the report)"
    assert lines[head + 12].startswith("fidelity:")
