"""The charts of ``report/charts.py`` on the committed reference set: pass rate per
configuration (trial 1 and over every trial), rounds and tool calls as distributions (how many
trials made each count), failure modes by configuration; every figure recomputed here from
results.json, not read back from the code."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from toolreplay.report.charts import charts_view
from toolreplay.report.render import render_report
from toolreplay.results.format import as_results

RESULTS = Path(__file__).resolve().parents[1] / "reports" / "results.json"


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def test_pass_rate_bars_give_trial_one_and_over_trials(committed: dict[str, Any]) -> None:
    chart = charts_view(as_results(committed))["pass_rate"]
    texts = {r["name"]: [b["text"] for b in r["bars"]] for r in chart["rows"]}
    assert texts == {
        "single+oneshot": ["100% (4/4)", "95% (19/20)"],
        "loop+oneshot": ["100% (4/4)", "100% (20/20)"],
        "single+atomic": ["0% (0/4)", "0% (0/20)"],
        "loop+atomic": ["100% (4/4)", "100% (20/20)"],
    }
    # a bar's length is its rate of the full width
    bars = {r["name"]: r["bars"] for r in chart["rows"]}
    assert float(bars["single+oneshot"][1]["w"]) == pytest.approx(0.95 * chart["full_w"], abs=0.1)
    assert float(bars["single+atomic"][0]["w"]) == 0.0


@pytest.mark.parametrize("field", ["rounds", "tool_calls"])
def test_distributions_count_every_trial(committed: dict[str, Any], field: str) -> None:
    expected = Counter((o["configuration"], str(o[field])) for o in committed["trial_outcomes"])
    chart = charts_view(as_results(committed))[field]
    names = [r["name"] for r in chart["rows"]]
    columns = [c["label"] for c in chart["columns"]]
    got = Counter()
    for i, cell in enumerate(chart["cells"]):
        got[(names[i // len(columns)], columns[i % len(columns)])] += cell["n"]
    assert +got == expected
    # the columns run without gaps from the smallest count to the largest
    values = sorted(int(v) for _, v in expected)
    assert columns == [str(v) for v in range(values[0], values[-1] + 1)]
    assert sum(c["n"] for c in chart["cells"]) == 80  # 16 episodes × 5 trials


def test_failure_modes_by_configuration_count_trials(committed: dict[str, Any]) -> None:
    expected = Counter()
    for o in committed["trial_outcomes"]:
        for mode in set(o["failure_modes"] or []):
            expected[(o["configuration"], mode)] += 1
    chart = charts_view(as_results(committed))["failure_modes"]
    modes = {m["key"]: m["mode"] for m in chart["modes"]}
    names = [r["name"] for r in chart["rows"]]
    keys = [c["label"] for c in chart["columns"]]
    got = Counter()
    for i, cell in enumerate(chart["cells"]):
        got[(names[i // len(keys)], modes[keys[i % len(keys)]])] += cell["n"]
    assert +got == expected
    assert expected[("single+atomic", "empty_answer")] == 13  # the grid's "empty answer ×13"


def test_charts_are_titled_in_words_and_need_no_script(committed: dict[str, Any]) -> None:
    page = BeautifulSoup(render_report(committed), "html5lib")
    for figure in page.select("#metrics .charts-wide figure.chart"):
        svg = figure.select_one("svg")
        assert svg["role"] == "img"
        title = page.find(id=svg["aria-labelledby"])
        assert title is not None and title.name == "title"
        # every count the grid draws is also written as text
        drawn = [t.get_text() for t in svg.select("text.n")]
        assert all(n.isdigit() for n in drawn)
    title = page.find(id="chart-failure-modes-title").get_text()
    assert "single+atomic: empty answer ×13, unfulfilled promise ×7" in title


def test_a_one_trial_set_counts_its_episodes(committed: dict[str, Any]) -> None:
    from .test_report import single_trial

    charts = charts_view(as_results(single_trial(committed)))
    assert charts["rounds"]["what"] == "over the episodes"
    assert sum(c["n"] for c in charts["rounds"]["cells"]) == 16
    assert [len(r["bars"]) for r in charts["pass_rate"]["rows"]] == [1, 1, 1, 1]
