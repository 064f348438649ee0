"""The episode table's per-episode columns, what its search looks through, the mode filter's
"unmet expectation", and the downloads beside the page (the episode table as CSV, the results
JSON): without a browser (the page parsed with html5lib, the CSV with :mod:`csv`).

Results: the committed ``reports/results.json`` (16 episodes, 5 trials, tool results as JSON)
and ``examples/stock_agent/report/results.json`` (unmet expectations)."""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from toolreplay.report.downloads import (
    CSV_COLUMNS,
    csv_path,
    episodes_csv,
    relative_href,
)
from toolreplay.report.render import render_report, write_report
from toolreplay.report.table import SEARCH_CHARS, search_text
from toolreplay.results.format import as_results

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "reports" / "results.json"
STOCK = REPO / "examples" / "stock_agent" / "report" / "results.json"


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def page(committed: dict[str, Any]) -> BeautifulSoup:
    return BeautifulSoup(render_report(committed), "html5lib")


def _cells(row: Any) -> list[str]:
    return [td.get_text(" ", strip=True) for td in row.select("td")]


def test_rows_carry_tokens_wall_time_stop_and_finish_reason(
    committed: dict[str, Any], page: BeautifulSoup
) -> None:
    heads = [th.get_text(strip=True) for th in page.select("#episode-table thead th")]
    assert heads[8:] == ["tokens", "time", "stop", "finish"]
    rows = page.select("#episode-table tbody tr")
    firsts = [r for r in rows if r["data-t"] == "1"]
    for row, ep in zip(firsts, committed["episodes"], strict=True):
        tokens, time, stop, finish = _cells(row)[8:]
        assert tokens == str(ep["usage"]["total_tokens"])
        seconds = ep["recorded_wall_time_s"]
        assert time.endswith(" s") and abs(float(time[:-2]) - seconds) <= 0.05 + seconds * 0.01
        assert finish == ep["finish_reason"]
        # the single host's designed stop is worded as such; others are the recorded reason
        if ep["configuration"].startswith("single+") and ep["stop_reason"] == "max_rounds":
            assert stop == "after its tool round"
        else:
            assert stop == ep["stop_reason"]
    # a later trial kept whole (trial_episodes) fills its row from its own record
    later = [r for r in rows if r["data-t"] != "1"]
    kept = {
        (e["configuration"], e["question_id"], e["trial"]): e for e in committed["trial_episodes"]
    }
    for row in later:
        ep = kept[(row["data-c"], row["data-q"], int(row["data-t"]))]
        assert _cells(row)[8] == str(ep["usage"]["total_tokens"])
        assert _cells(row)[11] == ep["finish_reason"]
    # results without them record no usage, wall time or finish reason for later trials:
    # empty cells (the CSS shows "—" and the sort puts them last), never a zero
    older = {k: v for k, v in committed.items() if k != "trial_episodes"}
    rows = BeautifulSoup(render_report(older), "html5lib").select("#episode-table tbody tr")
    later = [r for r in rows if r["data-t"] != "1"]
    assert later and all(_cells(r)[8] == _cells(r)[9] == _cells(r)[11] == "" for r in later)


def test_each_row_searches_its_tool_calls_and_results(
    committed: dict[str, Any], page: BeautifulSoup
) -> None:
    rows = [r for r in page.select("#episode-table tbody tr") if r["data-t"] == "1"]
    for row, ep in zip(rows, committed["episodes"], strict=True):
        text = row.get("data-s", "")
        assert len(text) <= SEARCH_CHARS
        for call in ep["calls"]:
            assert call["name"] in text
    atomic = next(e for e in committed["episodes"] if e["configuration"] == "loop+atomic")
    text = search_text(as_results(committed).episodes[committed["episodes"].index(atomic)])
    city = atomic["calls"][0]["arguments"]["city"]
    assert text.startswith(f"geocode_city(city={city}) ")
    assert " get_weather_by_coords " in text  # its arguments are numbers: left out
    # strings of the tool results, without units and dates
    assert "°C" not in text and "2026-" not in text
    assert search_text(as_results(committed).episodes[0]) == search_text(
        as_results(copy.deepcopy(committed)).episodes[0]
    )


def test_unmet_expectation_is_a_mode_to_filter_by() -> None:
    results = json.loads(STOCK.read_text(encoding="utf-8"))
    page = BeautifulSoup(render_report(results), "html5lib")
    options = [o["value"] for o in page.select("#f-mode option")]
    assert options[:2] == ["", "unmet_expectation"] and "fabricated_value" in options
    rows = {r["data-q"]: r["data-m"].split() for r in page.select("#episode-table tr[data-t='1']")}
    assert rows["stock-and-price"] == ["unmet_expectation"]
    assert rows["unknown-sku"] == ["unmet_expectation", "fabricated_value"]
    assert rows["price"] == []
    # a set without unmet expectations does not offer the option
    plain = BeautifulSoup(render_report(json.loads(RESULTS.read_text("utf-8"))), "html5lib")
    assert "unmet_expectation" not in [o["value"] for o in plain.select("#f-mode option")]


def test_episodes_csv_is_the_table_row_for_row(
    committed: dict[str, Any], page: BeautifulSoup
) -> None:
    text = episodes_csv(as_results(committed))
    assert text == episodes_csv(as_results(copy.deepcopy(committed)))
    table = list(csv.DictReader(io.StringIO(text)))
    assert text.splitlines()[0] == ",".join(CSV_COLUMNS)
    rows = page.select("#episode-table tbody tr")
    assert [(r["configuration"], r["question_id"], r["trial"]) for r in table] == [
        (r["data-c"], r["data-q"], r["data-t"]) for r in rows
    ]
    assert [r["passed"] == "true" for r in table] == [r["data-p"] == "1" for r in rows]
    first = table[0]
    ep = committed["episodes"][0]
    assert first["episode"] == "1" and first["answer"] == ep["answer"]
    assert first["prompt_tokens"] == str(ep["usage"]["prompt_tokens"])
    assert first["total_tokens"] == str(ep["usage"]["total_tokens"])
    assert first["recorded_wall_time_s"] == str(ep["recorded_wall_time_s"])
    assert first["tool_chain"] == " ".join(ep["tool_chain"])
    # a later trial: its own verdict and failure modes, and what its kept record holds
    failed = next(r for r in table if r["trial"] == "3" and r["question_id"] == "hottest")
    assert failed["configuration"] == "single+oneshot" and failed["passed"] == "false"
    kept = next(
        e
        for e in committed["trial_episodes"]
        if (e["configuration"], e["question_id"], e["trial"]) == ("single+oneshot", "hottest", 3)
    )
    assert failed["failure_reasons"] == "empty_answer"
    assert failed["total_tokens"] == str(kept["usage"]["total_tokens"])
    assert failed["answer"] == kept["answer"]
    # results without kept later trials: nothing that was not recorded
    older = {k: v for k, v in committed.items() if k != "trial_episodes"}
    table = list(csv.DictReader(io.StringIO(episodes_csv(as_results(older)))))
    failed = next(r for r in table if r["trial"] == "3" and r["question_id"] == "hottest")
    assert failed["failure_reasons"] == "empty_answer" and failed["total_tokens"] == ""


def test_csv_names_unmet_expectations() -> None:
    results = as_results(json.loads(STOCK.read_text(encoding="utf-8")))
    table = csv.DictReader(io.StringIO(episodes_csv(results)))
    rows = {r["question_id"]: r for r in table if r["trial"] == "1"}
    assert rows["stock-and-price"]["failure_reasons"] == "unmet_expectation"
    assert rows["stock-and-price"]["unmet_expectations"] == (
        "at most 2 rounds — 3 rounds, more than 2; round 3 is over the limit"
    )


def test_write_report_puts_the_csv_beside_the_page_and_links_both(
    committed: dict[str, Any], tmp_path: Path
) -> None:
    src = tmp_path / "results.json"
    src.write_text(json.dumps(committed, ensure_ascii=False), encoding="utf-8")
    out = write_report(src, tmp_path / "index.html")
    assert csv_path(out).name == "index-episodes.csv"
    assert csv_path(out).read_text(encoding="utf-8") == episodes_csv(as_results(committed))
    links = BeautifulSoup(out.read_text(encoding="utf-8"), "html5lib").select(".downloads a")
    assert [(a["href"], a.get_text()) for a in links] == [
        ("index-episodes.csv", "this episode table as CSV"),
        ("results.json", "the results JSON this page was rendered from"),
    ]
    assert all((tmp_path / a["href"]).is_file() for a in links)


def test_a_page_away_from_its_results_links_only_the_csv(
    committed: dict[str, Any], tmp_path: Path
) -> None:
    src = tmp_path / "run" / "results.json"
    src.parent.mkdir()
    src.write_text(json.dumps(committed, ensure_ascii=False), encoding="utf-8")
    out = write_report(src, tmp_path / "elsewhere" / "my report.html")
    page = BeautifulSoup(out.read_text(encoding="utf-8"), "html5lib")
    hrefs = [a["href"] for a in page.select(".downloads a")]
    assert hrefs == ["my%20report-episodes.csv"]
    assert (out.parent / "my report-episodes.csv").is_file()
    # below the page's folder is fine; above it or elsewhere is not
    assert relative_href(tmp_path / "a" / "b.json", tmp_path / "index.html") == "a/b.json"
    assert relative_href(tmp_path / "b.json", tmp_path / "a" / "index.html") is None


def test_render_report_alone_offers_no_download(page: BeautifulSoup) -> None:
    # render_report writes no file beside the page: nothing to link to
    assert page.select_one(".downloads") is None


def test_phone_sort_skip_link_and_back_to_top_are_in_the_page(page: BeautifulSoup) -> None:
    body = page.select_one("body")
    first = body.find(["a", "button", "input", "select"])
    assert first["class"] == ["skip"] and first["href"] == "#grid"
    assert first.get_text() == "skip to content" and page.select_one("#grid") is not None
    assert page.select_one("#filters label.sort-pick select#f-sort") is not None
