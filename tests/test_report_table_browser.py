"""The episode table, search and filters in headless Chromium (tests/report_table_driver.mjs):
the search finds a failure mode and a tool name, "sort by" sorts at 390 px, one filter state
("failures only" + "every trial" + ``single+oneshot``) gives the same counts in the table, the
grid, the metrics, the question matrix and the gallery, the skip link is the first tab stop, the
back-to-top link covers no text, axe-core finds nothing. Needs node, chromium and
``cd tools && npm install`` (playwright-core, axe-core); without them the tests skip."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from toolreplay.report.render import render_report, write_report

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "reports" / "results.json"
STOCK = REPO / "examples" / "stock_agent" / "report" / "results.json"
TOOLS = REPO / "tools"
DRIVER = Path(__file__).with_name("report_table_driver.mjs")
FILTERED = "single+oneshot"


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def seen(committed: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    node, chromium = shutil.which("node"), shutil.which("chromium")
    if (
        node is None
        or chromium is None
        or not (TOOLS / "node_modules" / "playwright-core").is_dir()
    ):
        pytest.skip("needs node, chromium and `cd tools && npm install` (playwright-core)")
    folder = tmp_path_factory.mktemp("table")
    src = folder / "results.json"
    # results written before later trials were kept whole (no trial_episodes): their rows
    # have cells with nothing recorded, which the sort puts last
    older = {k: v for k, v in committed.items() if k != "trial_episodes"}
    src.write_text(json.dumps(older, ensure_ascii=False), encoding="utf-8")
    page = write_report(src, folder / "index.html")
    stock = folder / "stock" / "index.html"
    stock.parent.mkdir()
    stock.write_text(render_report(json.loads(STOCK.read_text("utf-8"))), encoding="utf-8")
    done = subprocess.run(
        [node, str(DRIVER), page.as_uri(), chromium, stock.as_uri()],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "TOOLS": str(TOOLS)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["errors"] == []
    return out


def _failed_rows(committed: dict[str, Any], configuration: str) -> list[tuple[str, str, str]]:
    """(configuration, question, trial) of every failed trial, in the table's order."""
    later = [o for o in committed["trial_outcomes"] if o["trial"] > 1]
    rows = []
    for ep in committed["episodes"]:
        key = (ep["configuration"], ep["question_id"])
        if not ep["passed"]:
            rows.append((*key, "1"))
        trials = sorted(
            (o for o in later if (o["configuration"], o["question_id"]) == key),
            key=lambda o: o["trial"],
        )
        rows += [(*key, str(o["trial"])) for o in trials if not o["passed"]]
    return [r for r in rows if r[0] == configuration]


def test_search_finds_a_failure_mode_by_its_label(
    committed: dict[str, Any], seen: dict[str, Any]
) -> None:
    found = [(r["c"], r["q"]) for r in seen["search_mode"]]
    expected = [
        (e["configuration"], e["question_id"])
        for e in committed["episodes"]
        if any(f["mode"] == "empty_answer" for f in e.get("failure_modes") or [])
    ]
    assert found == expected and expected
    assert all("empty_answer" in r["m"].split() for r in seen["search_mode"])


def test_search_finds_a_tool_name(committed: dict[str, Any], seen: dict[str, Any]) -> None:
    found = [(r["c"], r["q"]) for r in seen["search_tool"]]
    expected = [
        (e["configuration"], e["question_id"])
        for e in committed["episodes"]
        if "geocode_city" in e["tool_chain"]
    ]
    assert found == expected and len(expected) == 8
    # the tool name is in no row's visible text: only the search text finds it
    assert not any("geocode_city" in " ".join(r["cells"]) for r in seen["search_tool"])
    assert seen["search_count"] == f"showing {len(expected)} of 16 episodes"


def test_sort_by_on_a_phone(seen: dict[str, Any]) -> None:
    phone = seen["phone"]
    assert phone["heads_hidden"] and phone["pick_shown"] and phone["pick_label"] == "sort by"
    desc = [int(v) for v in phone["sorted_desc"]]
    asc = [int(v) for v in phone["sorted_asc"]]
    assert desc == sorted(desc, reverse=True) and asc == sorted(asc) and desc != asc
    assert phone["hash"] == "#f:sort=6-desc"  # the same sort as the header's, in the URL
    assert phone["aria_sort"] == "ascending"
    assert phone["scroll_width"] <= 390


def test_nothing_recorded_sorts_last_both_ways(seen: dict[str, Any]) -> None:
    for values, reverse in ((seen["tokens_asc"], False), (seen["tokens_desc"], True)):
        known = [int(v) for v in values if v]
        assert values[: len(known)] == [str(v) for v in sorted(known, reverse=reverse)]
        assert all(v == "" for v in values[len(known) :]) and len(known) < len(values)


def test_one_filter_state_every_count_follows_it(
    committed: dict[str, Any], seen: dict[str, Any]
) -> None:
    f = seen["filtered"]
    expected = _failed_rows(committed, FILTERED)
    assert expected == [(FILTERED, "hottest", "3")]  # the failure that makes it amber
    assert [(r["c"], r["q"], r["t"]) for r in f["rows"]] == expected
    assert f["count"] == "showing 1 of 80 rows"
    # grid and metrics: what the table shows, coloured by it; nothing left is neutral
    for where in (f["grid"], f["metrics"]):
        score, cls = where[FILTERED]
        assert score == f"0/{len(expected)}" and cls.split()[-1] == "none"
        for name, (score, cls) in where.items():
            if name != FILTERED:
                assert score == "0/0" and cls.split()[-1] == "empty", (name, cls)
    assert f["metrics_unfiltered"] > 0  # the columns it cannot recount are marked
    assert "not filtered" in f["notes"]["metrics"]
    assert "every trial" in f["notes"]["grid"]
    # the matrix: the question of that row, its configuration's cell naming the trial
    assert f["matrix"] == [
        {"q": "hottest", "cells": [[FILTERED, "trial 3 matches; shown: trial 1"]]}
    ]
    # the gallery: counts over the rows shown; its cards are trial 1's, and it says so
    counts = {(m, c): int(n) for m, c, n in f["gallery_counts"]}
    assert counts[("empty_answer", "")] == len(expected)
    assert counts[("unfulfilled_promise", "")] == 0
    assert f["gallery_cards"] == 0
    assert "1 failing row of a later trial matches" in f["notes"]["failures"]
    # no section claims that nothing matches
    assert f["empty_notes"] == []


def test_unmet_expectation_filters_rows_cards_and_counts_alike(seen: dict[str, Any]) -> None:
    results = json.loads(STOCK.read_text("utf-8"))
    unmet = {
        e["question_id"]: sum(not x["passed"] for x in e.get("expectations") or [])
        for e in results["episodes"]
    }
    expected = [q for q, n in unmet.items() if n]
    assert seen["unmet"]["rows"] == expected == ["stock-and-price", "unknown-sku"]
    # one card per unmet expectation, and the group's count says as many
    cards = [f"unmet_expectation {q}" for q in expected for _ in range(unmet[q])]
    assert seen["unmet"]["cards"] == cards
    assert seen["unmet"]["count"] == str(len(cards)) == "3"


def test_skip_link_is_the_first_tab_stop(seen: dict[str, Any]) -> None:
    assert seen["first_tab"] == {"text": "skip to content", "href": "#grid", "shown": True}
    assert seen["after_skip"] == "#grid"
    assert seen["after_skip_focus"] == {"in_bar": False, "section": "grid"}


def test_back_to_top_covers_no_text(seen: dict[str, Any]) -> None:
    assert seen["phone"]["to_top"] == {"position": "static", "below_footer": True}
    assert seen["to_top_1280"] == {"position": "fixed", "clear": True}


def test_axe_finds_nothing(seen: dict[str, Any]) -> None:
    if seen["axe_1280"] is None:
        pytest.skip("needs axe-core (`cd tools && npm install`)")
    assert seen["axe_1280"] == []
    assert seen["axe_390"] == []
    assert seen["axe_filtered"] == []
