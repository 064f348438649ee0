"""Unmet expectations are failure reasons in the report: labelled in the episode table, the
questions × configurations grid, the verdict's "why", the failure gallery (a group of their
own) and first in the transcript, before the failure modes and the passing checks.

The results are the committed ``examples/stock_agent/report/results.json`` (what
``toolreplay run --eval examples/stock_agent/eval.yaml`` writes): ``stock-and-price`` fails
only on ``max_rounds: 2`` (3 rounds), ``unknown-sku`` on two unmet expectations and a
``fabricated_value`` failure mode.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from toolreplay.report.render import render_report

RESULTS = Path(__file__).resolve().parents[1] / "examples/stock_agent/report/results.json"
ROUNDS = "not met: at most 2 rounds — 3 rounds, more than 2; round 3 is over the limit"


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def page(results: dict[str, Any]) -> BeautifulSoup:
    return BeautifulSoup(render_report(results), "html.parser")


def _row(page: BeautifulSoup, qid: str) -> Any:
    return page.select_one(f'#episode-table tr[data-q="{qid}"][data-t="1"]')


def test_the_table_cell_names_the_unmet_expectation(page: BeautifulSoup) -> None:
    cell = _row(page, "stock-and-price").find_all("td")[5]
    assert [b.get_text() for b in cell.select(".badge.mode")] == ["Unmet expectation"]
    assert cell.select_one(".reason").get_text() == ROUNDS
    # unmet expectations come before the failure modes
    labels = [b.get_text() for b in _row(page, "unknown-sku").find_all("td")[5].select(".badge")]
    assert labels == ["Unmet expectation", "Unmet expectation", "Fabricated value"]


def test_the_grid_cell_names_the_unmet_expectation(page: BeautifulSoup) -> None:
    row = page.select_one('#chains tr.question[data-q="stock-and-price"]')
    cell = row.select_one("td.mcell")
    assert cell.select_one(".badge.mode-unmet_expectation").get_text() == "Unmet expectation"
    assert cell.select_one(".reason").get_text() == ROUNDS


def test_the_verdicts_why_counts_unmet_expectations(page: BeautifulSoup) -> None:
    why = page.select_one("#verdict td.sc-why")
    links = why.find_all("a")
    # ranked by count: fabricated value over trials first, then the unmet expectations
    assert [a.get_text() for a in links] == ["fabricated value ×3", "unmet expectation ×2"]
    assert links[1]["href"] == "#mode-unmet_expectation"
    # two of the four questions miss an expectation in trial 1 (the set has three trials)
    assert " ".join(why.get_text().split()) == (
        "fabricated value ×3 over trials, unmet expectation ×2 trial 1"
    )


def test_the_gallery_has_a_group_of_unmet_expectations_first(page: BeautifulSoup) -> None:
    groups = page.select("#failures .mode-group")
    assert [g["data-mode"] for g in groups] == ["unmet_expectation", "fabricated_value"]
    cards = groups[0].select("article.card")
    assert [c["data-question-id"] for c in cards] == [
        "stock-and-price",
        "unknown-sku",
        "unknown-sku",
    ]
    assert cards[0].select_one(".badge").get_text() == "Unmet expectation"
    assert cards[0].select_one("p.small").get_text() == ROUNDS
    assert "3 expectations unmet" in page.select_one("#failures > p").get_text()


def test_the_transcript_opens_with_the_failure_reasons(page: BeautifulSoup) -> None:
    ep = page.select_one('details.episode[data-k$="unknown-sku"]')
    blocks = ep.select_one(".messages").find_all("div", recursive=False)
    # headed by where it came from (configuration, question, trial, test, cassette), then why
    assert blocks.pop(0)["class"] == ["ep-origin", "small"]
    assert blocks[0]["class"] == ["reasons", "small"]
    reasons = [li.select_one(".badge").get_text() for li in blocks[0].select("li")]
    assert reasons == ["Unmet expectation", "Unmet expectation", "Fabricated value"]
    assert (
        blocks[0]
        .select("li")[0]
        .get_text()
        .startswith("Unmet expectation not met: the answer contains none of '99'")
    )
    # then the passing checks, which no longer repeat the unmet ones; then the judge
    assert blocks[1]["class"] == ["expectations"]
    assert "passing checks" in blocks[1].get_text()
    assert "not met" not in blocks[1].get_text()
    assert len(blocks[1].select("li")) == 3
    assert blocks[2]["class"] == ["judge", "small"]
    assert len(ep.select(".expectations")) == 1


def test_an_episode_meeting_every_expectation_shows_no_reason(results: dict[str, Any]) -> None:
    met = copy.deepcopy(results)
    for ep in [*met["episodes"], *met.get("trial_episodes", [])]:  # every trial's
        for x in ep["expectations"]:
            x["passed"] = True
    page = BeautifulSoup(render_report(met), "html.parser")
    assert not page.select(".mode-unmet_expectation, .reasons, #mode-unmet_expectation")
    cell = _row(page, "stock-and-price").find_all("td")[5]
    assert cell.get_text() == ""
    # the expectations stay at the transcript's end, as before
    ep = page.select_one('details.episode[data-k$="stock-and-price"]')
    last = ep.select_one(".messages").find_all("div", recursive=False)[-1]
    assert last["class"] == ["expectations"]
    assert "5/5 met" in last.get_text()
