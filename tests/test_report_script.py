"""The report's episode table and filters: the page without its script (a plain table, parsed
with html5lib), and the page's own script run in headless Chromium (sorting, search, filters,
their state in the URL fragment, counts that follow them, the empty result). The browser tests
need node, chromium and ``cd tools && npm install`` (playwright-core); without them they skip."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from toolreplay.report.render import render_report, transcripts_path, write_report
from toolreplay.report.table import LARGE_RUN

# end to end (pytest run in-process, the CLI on copied sets, a browser): the inner loop
# `pytest -m "not slow"` leaves them to CI
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "reports" / "results.json"
TOOLS = REPO / "tools"


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def parse(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html5lib")


# --------------------------------------------------------------------------- without a script


def test_episode_table_is_a_plain_table_without_script(committed: dict[str, Any]) -> None:
    page = parse(render_report(committed))
    table = page.select_one("#episodes table#episode-table")
    heads = [th.get_text(" ", strip=True) for th in table.select("thead th")]
    assert heads == [
        "#",
        "question · answer (first line)",
        "configuration",
        "trial",
        "verdict",
        "failure modes",
        "rounds",
        "tool calls",
        "tokens",
        "time",
        "stop",
        "finish",
    ]
    assert not table.select("button")  # sort buttons are the script's
    rows = table.select("tbody tr")
    # one row per episode and trial, in results order, each trial after its episode
    assert len(rows) == 16 * 5
    first = rows[0]
    cells = [td.get_text(" ", strip=True) for td in first.select("td")]
    assert cells[0] == "1" and cells[2] == "single+oneshot" and cells[3] == "1"
    assert cells[4] == "pass" and cells[6] == "2" and cells[7] == "1"
    assert first.select_one("td.q .ans").get_text().startswith("福建省宁德市今天局部多云")
    assert cells[8:] == ["1474", "2.3 s", "converged", "stop"]
    assert first.select_one("td.q a")["href"] == "#ep-1-single-oneshot-ningde"
    assert [r.select("td")[3].get_text() for r in rows[:5]] == ["1", "2", "3", "4", "5"]
    # a later trial opens its own transcript when results keep it (trial_episodes), with every
    # column filled; else it is keyed to trial 1's and says it is not kept
    later = rows[1].select_one("td.q a")
    if committed.get("trial_episodes"):
        assert later["href"] == "#ep-1-single-oneshot-ningde-t2"
        assert [td.get_text() for td in rows[1].select("td")[8:]][2:] == ["converged", "stop"]
    else:
        assert later is None and rows[1]["data-k"] == "ep-1-single-oneshot-ningde"
        assert "not kept" in rows[1].select_one("td.q .ans").get_text()
        # nothing recorded for them beyond rounds, tool calls and the stop reason
        assert [td.get_text() for td in rows[1].select("td")[8:]] == ["", "", "converged", ""]
    # every transcript link resolves
    ids = {t["id"] for t in page.select("[id]")}
    assert all(a["href"][1:] in ids for a in table.select("a[href^='#']"))
    failed = [r for r in rows if r["data-t"] == "1" and r["data-p"] == "0"]
    assert len(failed) == 4 and {r["data-c"] for r in failed} == {"single+atomic"}


def test_single_trial_set_has_no_trials_section(committed: dict[str, Any]) -> None:
    from .test_report import single_trial

    page = parse(render_report(single_trial(committed)))
    assert page.select_one("#trials") is None
    assert page.select_one("#f-trials") is None
    assert not page.select("nav.toc a[href='#trials']")
    assert len(page.select("#episode-table tbody tr")) == 16


def test_judge_evidence_links_to_the_tool_message_and_marks_the_field(
    committed: dict[str, Any],
) -> None:
    page = parse(render_report(committed))
    episode = page.select_one("details.episode[id$='-loop-atomic-ningde']")
    values = episode.select(".judge-values li")
    assert [v.select_one(".stated").get_text() for v in values] == ["28.3°C", "30.2°C", "23.4°C"]
    link = values[0].select_one("a")
    assert link["href"] == f"#{episode['id']}-m7"
    assert values[0].select_one("code").get_text() == "$.current.temperature_2m"
    tool = page.find(id=link["href"][1:])
    assert "role-tool" in tool["class"]
    # the fields that matter first, then the whole result with them marked in place
    cited = [dt.get_text() for dt in tool.select("dl.cited dt")]
    assert cited[0] == "$.current.temperature_2m"
    assert tool.select_one("dl.cited mark.cited").get_text() == '{"value": 28.3, "unit": "°C"}'
    marked = [m.get_text() for m in tool.select("pre mark.mode-cited")]
    assert marked[0] == '{"value": 28.3, "unit": "°C"}' and len(marked) == 3


def test_large_run_puts_transcripts_on_their_own_page(
    committed: dict[str, Any], tmp_path: Path
) -> None:
    results = copy.deepcopy(committed)
    base = results["episodes"]
    results["episodes"] = []
    for n in range(LARGE_RUN // len(base) + 1):
        for ep in base:
            results["episodes"].append({**ep, "question_id": f"{ep['question_id']}-{n}"})
    results.pop("trial_outcomes")
    results.pop("trial_episodes", None)
    src = tmp_path / "results.json"
    src.write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")
    out = write_report(src, tmp_path / "index.html")
    side = transcripts_path(out)
    assert side.name == "index-transcripts.html" and side.exists()
    page = parse(out.read_text(encoding="utf-8"))
    assert not page.select("details.episode")
    hrefs = [a["href"] for a in page.select("#episode-table td.q a")]
    assert len(hrefs) == len(results["episodes"])
    transcripts = parse(side.read_text(encoding="utf-8"))
    ids = {t["id"] for t in transcripts.select("[id]")}
    assert all(h.startswith("index-transcripts.html#") and h.split("#")[1] in ids for h in hrefs)
    # the shared system prompt is shown once, not in every transcript
    assert transcripts.select_one("#system-prompt") is not None
    assert len(transcripts.select("details.episode")) == len(results["episodes"])
    assert transcripts.select_one("a[href='index.html']") is not None


def test_compare_shows_the_same_episode_side_by_side(committed: dict[str, Any]) -> None:
    from toolreplay.diff import Run

    before = copy.deepcopy(committed)
    ep = next(e for e in before["episodes"] if e["question_id"] == "beijing")
    ep["transcript"][-1] = {**ep["transcript"][-1], "content": "北京今天晴。"}
    page = parse(render_report(committed, compare=Run(label="run A", results=before)))
    (side,) = page.select("#compare details.side-by-side")
    rows = side.select("tbody tr")
    first = [r for r in rows if "first" in r["class"]]
    assert len(first) == 1 and "first difference" in first[0].get_text()
    assert "北京今天晴。" in first[0].select("td")[0].get_text()
    assert "北京今天阴" in first[0].select("td")[1].get_text()
    assert all("same" in r["class"] for r in rows if r is not first[0])


# --------------------------------------------------------------------------- in a browser


def _browser() -> tuple[str, str] | None:
    node, chromium = shutil.which("node"), shutil.which("chromium")
    if node is None or chromium is None:
        return None
    if not (TOOLS / "node_modules" / "playwright-core").is_dir():
        return None
    return node, chromium


#: The browser side of these tests: sorts, searches and filters the page, prints what it saw.
DRIVER = Path(__file__).with_name("report_page_driver.mjs")


@pytest.fixture(scope="module")
def in_browser(committed: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Any:
    found = _browser()
    if found is None:
        pytest.skip("needs node, chromium and `cd tools && npm install` (playwright-core)")
    node, chromium = found
    folder = tmp_path_factory.mktemp("page")
    page = folder / "index.html"
    page.write_text(render_report(committed), encoding="utf-8")
    done = subprocess.run(
        [node, str(DRIVER), page.as_uri(), chromium],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "TOOLS": str(TOOLS)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_script_shows_the_bar_and_trial_one_rows(in_browser: dict[str, Any]) -> None:
    assert in_browser["errors"] == []
    assert in_browser["bar_hidden"] is False
    assert len(in_browser["initial"]) == 16 and {r[2] for r in in_browser["initial"]} == {"1"}


def test_sorting_by_a_column_both_ways(in_browser: dict[str, Any]) -> None:
    asc = [int(r[3]) for r in in_browser["sorted_asc"]]
    desc = [int(r[3]) for r in in_browser["sorted_desc"]]
    assert asc == sorted(asc) and desc == sorted(desc, reverse=True) and asc != desc
    assert in_browser["aria_sort"] == "descending"
    assert in_browser["hash_after_sort"] == "#f:sort=6-desc"


def test_search_looks_through_questions_and_answers(in_browser: dict[str, Any]) -> None:
    # "天气毛毛雨" is only in the shanghai-rain answers that passed (not in a tool result)
    assert {r[1] for r in in_browser["search"]} == {"shanghai-rain"}
    assert {r[0] for r in in_browser["search"]} == {"single+oneshot", "loop+oneshot", "loop+atomic"}
    assert in_browser["hash_after_search"] == "#f:s=天气毛毛雨&sort=6-desc"
    assert in_browser["count"] == "showing 3 of 16 episodes"


def test_filters_recount_the_grid_and_say_when_nothing_matches(in_browser: dict[str, Any]) -> None:
    assert {r[0] for r in in_browser["failed"]} == {"single+atomic"}
    assert len(in_browser["failed"]) == 4
    assert in_browser["grid_single_atomic"] == "0/4"
    assert in_browser["grid_single_oneshot"] == "0/0"
    classes = in_browser["grid_classes"]
    assert classes["single+oneshot"] == "cell filtered empty"  # nothing of it is shown
    assert classes["single+atomic"] == "cell filtered none"
    assert in_browser["hash_failed"] == "#f:fail=1"
    assert in_browser["empty"] == []
    assert {"episodes", "chains", "failures", "transcripts"} <= set(in_browser["empty_notes"])


def test_filter_state_in_the_url_opens_the_same_view(in_browser: dict[str, Any]) -> None:
    assert in_browser["from_url_controls"] == ["single+atomic", "empty_answer"]
    assert sorted(in_browser["from_url"]) == [
        ["single+atomic", "beijing"],
        ["single+atomic", "hottest"],
    ]
    assert sorted(in_browser["gallery_cards"]) == ["empty_answer beijing", "empty_answer hottest"]
    assert in_browser["gallery_count"] == "2"


def test_print_fits_every_table_and_phone_cards_keep_labels_apart(
    in_browser: dict[str, Any],
) -> None:
    assert in_browser["print_too_wide"] == []
    assert in_browser["phone_scroll_width"] <= 390
    assert in_browser["phone_overlaps"] == []
