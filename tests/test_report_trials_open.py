"""Every trial open (issue 30): results.json keeps every later trial's full record
(``trial_episodes``) with the cassette (and test) it came from, the figures unchanged; the report
shows every trial's transcript, headed by its configuration, question and trial, its test and
cassette and the command that replays it, with previous/next failure links; the episode table
links every trial's row to it; "why" over trials opens the filtered episode table; and every
path that writes a report splits the transcripts onto their own page by one rule, decided on
the number of transcripts. The browser part (the "why" link of single+oneshot to the trial-3
``hottest`` transcript) needs node, chromium and playwright-core; without them it skips."""

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
from typer.testing import CliRunner

from toolreplay.cli.common import write_outputs
from toolreplay.cli.main import app
from toolreplay.evals import load_eval
from toolreplay.evaluation import ReplayedSet, Selection, evaluate
from toolreplay.evaluation.wire import shown_path, test_id_of
from toolreplay.report.origins import replay_command, trial_anchor
from toolreplay.report.render import (
    render_report,
    splits_transcripts,
    transcript_count,
    transcripts_path,
    write_report,
)
from toolreplay.report.table import LARGE_RUN
from toolreplay.results.format import Results, ResultsError, as_results, results_json_text
from toolreplay.results.validate import check_invariants

from .conftest import committed_bytes

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "reports" / "results.json"
EXAMPLE = REPO / "examples" / "stock_agent"
TOOLS = Path(os.environ.get("TOOLS", REPO / "tools"))
NEW_FIELDS = ("cassette", "test_id", "trial")


def _page(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def _figures(doc: dict[str, Any]) -> dict[str, Any]:
    """A results document without what this change adds (trial_episodes, each episode's
    cassette, test id and trial): the figures and trial 1's records."""
    doc = copy.deepcopy(doc)
    doc.pop("trial_episodes", None)
    for ep in doc["episodes"]:
        for name in NEW_FIELDS:
            ep.pop(name, None)
    return doc


@pytest.fixture(scope="module")
def regenerated(committed_run: tuple[Any, Path]) -> dict[str, Any]:
    result, out = committed_run
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page(committed_run: tuple[Any, Path]) -> BeautifulSoup:
    return _page((committed_run[1] / "index.html").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- results.json


@pytest.mark.slow
def test_every_later_trial_is_kept_whole_and_the_figures_do_not_change(
    regenerated: dict[str, Any],
) -> None:
    committed = json.loads(committed_bytes(COMMITTED).decode("utf-8"))
    assert _figures(regenerated) == _figures(committed)
    later = regenerated["trial_episodes"]
    assert len(regenerated["episodes"]) == 16 and len(later) == 16 * 4
    # the order of trial_outcomes' later trials, each with its trial, outcome and cassette
    outcomes = [o for o in regenerated["trial_outcomes"] if o["trial"] > 1]
    assert [(e["configuration"], e["question_id"], e["trial"]) for e in later] == [
        (o["configuration"], o["question_id"], o["trial"]) for o in outcomes
    ]
    assert [e["passed"] for e in later] == [o["passed"] for o in outcomes]
    assert [e["rounds"] for e in later] == [o["rounds"] for o in outcomes]
    hottest = next(
        e
        for e in later
        if (e["configuration"], e["question_id"], e["trial"]) == ("single+oneshot", "hottest", 3)
    )
    assert not hottest["passed"] and [f["mode"] for f in hottest["failure_modes"]] == [
        "empty_answer"
    ]
    assert hottest["cassette"] == "cassettes/reference/single+oneshot/hottest/trial-3.yaml"
    assert list(hottest)[:5] == ["configuration", "question_id", "trial", "cassette", "question"]
    assert hottest["transcript"][1]["content"] == hottest["question"]
    # trial 1's records carry no trial number; a stand-in set names no test
    assert all("trial" not in e and "test_id" not in e for e in regenerated["episodes"])
    assert regenerated["episodes"][0]["cassette"] == (
        "cassettes/reference/single+oneshot/ningde/trial-1.yaml"
    )
    # read into the models and written back: the same bytes
    assert json.loads(results_json_text(regenerated)) == regenerated


def test_a_one_trial_run_keeps_no_trial_episodes() -> None:
    suite = load_eval(REPO / "evals" / "weather.yaml")
    source = ReplayedSet(REPO / "cassettes" / "reference", trials=1, audit=False)
    results = evaluate(source, suite, Selection(("single+oneshot",), ("hottest",))).results
    doc = json.loads(results_json_text(results))
    assert "trial_episodes" not in doc and doc["trials"] == 1
    assert [e["cassette"] for e in doc["episodes"]] == [
        "cassettes/reference/single+oneshot/hottest/trial-1.yaml"
    ]


@pytest.mark.slow
def test_the_invariants_refuse_a_misnumbered_or_repeated_trial(regenerated: dict[str, Any]) -> None:
    doc = copy.deepcopy(regenerated)
    doc["trial_episodes"][0]["trial"] = 1
    with pytest.raises(ResultsError, match="numbered from 2"):
        check_invariants(doc)
    doc = copy.deepcopy(regenerated)
    doc["trial_episodes"].append(copy.deepcopy(doc["trial_episodes"][0]))
    with pytest.raises(ResultsError, match="trial 2 appears more than once"):
        check_invariants(doc)
    doc = copy.deepcopy(regenerated)
    doc["trial_episodes"][3]["rounds"] = -1
    with pytest.raises(ResultsError, match="trial 5: rounds is -1"):
        check_invariants(doc)


# --------------------------------------------------------------------------- the page


@pytest.mark.slow
def test_every_trial_row_opens_its_own_transcript(page: BeautifulSoup) -> None:
    rows = page.select("#episode-table tbody tr")
    assert len(rows) == 80
    ids = {t["id"] for t in page.select("[id]")}
    links = [r.select_one("td.q a") for r in rows]
    assert all(a is not None for a in links), "every trial's row links to its transcript"
    targets = [a["href"][1:] for a in links]
    assert len(set(targets)) == 80 and set(targets) <= ids
    assert targets[:3] == [
        "ep-1-single-oneshot-ningde",
        "ep-1-single-oneshot-ningde-t2",
        "ep-1-single-oneshot-ningde-t3",
    ]
    assert "not kept" not in page.select_one("#episodes").get_text()
    # the filters key each row by the transcript it opens
    assert all(not r.has_attr("data-k") for r in rows)
    hottest = page.select_one(
        "#episode-table tr[data-q='hottest'][data-t='3'][data-c='single+oneshot']"
    )
    assert hottest["data-p"] == "0" and "Empty answer" in hottest.get_text()
    assert len(page.select("details.episode")) == 80


@pytest.mark.slow
def test_a_transcript_is_headed_by_where_it_came_from(page: BeautifulSoup) -> None:
    d = page.select_one("details#ep-3-single-oneshot-hottest-t3")
    assert d is not None and d["data-k"] == "ep-3-single-oneshot-hottest-t3"
    assert "trial 3" in d.select_one("summary .trial-no").get_text()
    head = d.select_one(".messages > .ep-origin")
    assert head is d.select_one(".messages").find("div", recursive=False)
    title = head.select_one(".ep-title").get_text(" ", strip=True)
    assert title.startswith("single+oneshot · hottest · trial 3 of 5")
    facts = {
        div.select_one("dt").get_text(): div.select_one("dd").get_text(" ", strip=True)
        for div in head.select(".ep-facts > div")
    }
    assert set(facts) == {"cassette", "replay"}  # a stand-in set: no test
    assert facts["cassette"] == "cassettes/reference/single+oneshot/hottest/trial-3.yaml"
    assert facts["replay"].startswith(
        "toolreplay run --eval evals/weather.yaml --set reference --configurations "
        "single+oneshot --questions hottest --out reports/replay"
    )
    assert "all 5 trials" in facts["replay"]


@pytest.mark.slow
def test_failed_transcripts_link_to_the_previous_and_next_failure(page: BeautifulSoup) -> None:
    order = [d["id"] for d in page.select("details.episode")]
    failed = [
        d["id"] for d in page.select("details.episode") if d.select_one("summary .badge.fail")
    ]
    assert len(failed) == 1 + 20  # single+oneshot's hottest trial 3, every single+atomic trial
    assert failed[0] == "ep-3-single-oneshot-hottest-t3"
    for n, anchor in enumerate(failed):
        nav = page.select_one(f"details#{anchor} .fail-nav")
        prev, nxt = nav.select_one("a[rel=prev]"), nav.select_one("a[rel=next]")
        assert (prev is None) == (n == 0) and (nxt is None) == (n == len(failed) - 1)
        if prev is not None:
            assert prev["href"] == f"#{failed[n - 1]}"
        if nxt is not None:
            assert nxt["href"] == f"#{failed[n + 1]}"
            assert order.index(failed[n + 1]) > order.index(anchor)
    # a passed transcript has none
    assert page.select_one("details#ep-1-single-oneshot-ningde .fail-nav") is None


@pytest.mark.slow
def test_why_over_trials_opens_the_filtered_episode_table(page: BeautifulSoup) -> None:
    verdict = [a["data-filter"] for a in page.select("#verdict a.sc-reason[data-filter]")]
    grid = [a["data-filter"] for a in page.select("#grid .trial-modes a[data-filter]")]
    assert "#f:fail=1&c=single%2Boneshot&m=empty_answer&t=all" in verdict
    assert sorted(verdict) == sorted(grid)  # the same views, from either place
    assert all(h.startswith("#f:") and h.endswith("&t=all") for h in verdict)
    # the script's fragment keys (report.js.j2), nothing else
    keys = {kv.split("=")[0] for h in verdict for kv in h[3:].split("&")}
    assert keys == {"fail", "c", "m", "t"}
    # without the script, each lands on its failure-gallery group
    hrefs = {a["href"] for a in page.select("#verdict a.sc-reason, #grid .trial-modes a")}
    assert hrefs <= {"#mode-empty_answer", "#mode-unfulfilled_promise"}


def test_results_without_trial_episodes_render_as_before() -> None:
    committed = json.loads(committed_bytes(COMMITTED).decode("utf-8"))
    page = _page(render_report(_figures(committed)))
    later = page.select("#episode-table tbody tr[data-t]:not([data-t='1'])")
    assert later and all(r.select_one("td.q a") is None for r in later)
    assert "not kept" in later[0].select_one("td.q .ans").get_text()
    assert len(page.select("details.episode")) == 16
    assert not page.select(".ep-facts")  # no cassette known: nothing to show or replay


# --------------------------------------------------------------------------- origins


@pytest.mark.slow
def test_a_test_suites_episode_names_its_test_and_pytest_replays_it(tmp_path: Path) -> None:
    out = tmp_path / "stock"
    result = CliRunner().invoke(
        app,
        [
            "run", "--eval", "examples/stock_agent/eval.yaml",
            "--cassettes", "examples/stock_agent/cassettes", "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    first = doc["episodes"][0]
    assert first["test_id"] == "examples/stock_agent/test_agent.py::test_stock_levels[1]"
    assert first["cassette"] == (
        "examples/stock_agent/cassettes/test_agent/test_stock_levels[1].yaml"
    )
    # later trials in the recorded order of their tests' repeats, each its own test
    later = [e for e in doc["trial_episodes"] if e["question_id"] == "stock-levels"]
    assert [(e["trial"], e["test_id"].rsplit("::", 1)[1]) for e in later] == [
        (2, "test_stock_levels[2]"),
        (3, "test_stock_levels[3]"),
    ]
    page = _page((out / "index.html").read_text(encoding="utf-8"))
    head = page.select_one(f"details#{trial_anchor('ep-1-test-agent-stock-levels', 2)} .ep-origin")
    facts = {
        div.select_one("dt").get_text(): div.select_one("dd").get_text(" ", strip=True)
        for div in head.select(".ep-facts > div")
    }
    assert facts["test"] == "examples/stock_agent/test_agent.py::test_stock_levels[2]"
    assert facts["replay"].startswith(
        "pytest 'examples/stock_agent/test_agent.py::test_stock_levels[2]'"
    )


def test_a_test_is_named_from_its_cassette(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tests" / "cassettes" / "test_mod").mkdir(parents=True)
    (tmp_path / "tests" / "test_mod.py").write_text("", encoding="utf-8")
    folder = tmp_path / "tests" / "cassettes"
    # outside the working folder: the module's name alone, never a temporary path
    assert test_id_of(folder, "test_mod/test_x[2].yaml") == "test_mod.py::test_x[2]"
    monkeypatch.chdir(tmp_path)
    assert test_id_of(folder, "test_mod/test_x[2].yaml") == "tests/test_mod.py::test_x[2]"
    assert test_id_of(folder, "test_mod/TestA.test_y.yaml") == "tests/test_mod.py::TestA::test_y"
    assert test_id_of(folder, "other/test_z.yaml") == "other.py::test_z"
    assert test_id_of(folder, "test_top.yaml") == "test_top"
    given = {"test_mod/test_x[2].yaml": "tests/test_mod.py::test_x[2]"}
    assert test_id_of(folder, "test_mod/test_x[2].yaml", given) == "tests/test_mod.py::test_x[2]"
    assert shown_path(folder / "test_mod" / "a.yaml", folder) == "tests/cassettes/test_mod/a.yaml"
    monkeypatch.chdir(REPO)  # outside it: the set folder's name, never a temporary path
    assert shown_path(folder / "test_mod" / "a.yaml", folder) == "cassettes/test_mod/a.yaml"


@pytest.mark.slow
def test_the_replay_command_selects_the_episode(regenerated: dict[str, Any]) -> None:
    results = as_results(regenerated)
    hottest = next(e for e in results.episodes if e.question_id == "hottest")
    elsewhere = hottest.model_copy(
        update={"cassette": "/data/sets/reference/x/hottest/trial-1.yaml"}
    )
    command = replay_command(elsewhere, results)
    assert command is not None
    assert "--cassettes /data/sets --set reference" in command["command"]
    assert replay_command(hottest.model_copy(update={"cassette": None}), results) is None
    quoted = hottest.model_copy(update={"test_id": "t.py::test_a[x y]"})
    assert replay_command(quoted, results) == {
        "command": "pytest 't.py::test_a[x y]'",
        "note": "runs the test that recorded it, replaying its cassette",
    }


# --------------------------------------------------------------------------- scale


def _many_transcripts(regenerated: dict[str, Any]) -> Results:
    """The regenerated results with trials repeated until they hold more than LARGE_RUN
    transcripts (fewer than LARGE_RUN episodes: only the trials make it large)."""
    doc = copy.deepcopy(regenerated)
    later, outcomes = [], [o for o in doc["trial_outcomes"] if o["trial"] == 1]
    for trial in range(2, 16):
        for ep in doc["episodes"]:
            later.append({**copy.deepcopy(ep), "trial": trial})
            outcomes.append({"configuration": ep["configuration"], "question_id": ep["question_id"],
                             "trial": trial, "passed": ep["passed"]})  # fmt: skip
    doc["trial_episodes"], doc["trial_outcomes"] = later, outcomes
    results = as_results(doc)
    assert len(results.episodes) < LARGE_RUN < transcript_count(results)
    return results


@pytest.mark.slow
def test_every_report_writer_splits_many_transcripts_alike(
    regenerated: dict[str, Any], tmp_path: Path
) -> None:
    assert not splits_transcripts(regenerated)  # 80 transcripts: one page
    results = _many_transcripts(regenerated)
    run_dir = tmp_path / "run"  # toolreplay run / merge
    write_outputs(run_dir, results)
    page = run_dir / "index.html"
    side = transcripts_path(page)
    assert side.name == "index-transcripts.html" and side.is_file()
    report_dir = tmp_path / "report"  # toolreplay report
    report_dir.mkdir()
    shutil.copy(run_dir / "results.json", report_dir / "results.json")
    result = CliRunner().invoke(app, ["report", "--results", str(report_dir)])
    assert result.exit_code == 0, result.output
    assert "index-transcripts.html" in result.output
    library = tmp_path / "library"  # write_report (pytest --toolreplay-report)
    library.mkdir()
    shutil.copy(run_dir / "results.json", library / "results.json")
    write_report(library / "results.json", library / "index.html")
    for name in ("index.html", "index-transcripts.html", "index-episodes.csv"):
        written = (run_dir / name).read_bytes()
        assert written == (report_dir / name).read_bytes() == (library / name).read_bytes(), name
    html = _page(page.read_text(encoding="utf-8"))
    assert not html.select("details.episode")
    assert f"{transcript_count(results)} transcripts" in html.select_one("#transcripts").get_text()
    row = html.select_one("#episode-table tr[data-t='15'] td.q a")
    assert row["href"].startswith("index-transcripts.html#ep-") and row["href"].endswith("-t15")
    other = _page(side.read_text(encoding="utf-8"))
    assert len(other.select("details.episode")) == transcript_count(results)
    assert other.select_one("#transcripts.lean") is not None


# --------------------------------------------------------------------------- in a browser


def _browser() -> tuple[str, str] | None:
    node, chromium = shutil.which("node"), shutil.which("chromium")
    if node is None or chromium is None:
        return None
    if not (TOOLS / "node_modules" / "playwright-core").is_dir():
        return None
    return node, chromium


@pytest.mark.slow
def test_why_leads_to_the_trial_3_failure_and_its_transcript(
    committed_run: tuple[Any, Path],
) -> None:
    found = _browser()
    if found is None:
        pytest.skip("node, chromium or playwright-core (cd tools && npm install) not found")
    node, chromium = found
    url = (committed_run[1] / "index.html").as_uri()
    done = subprocess.run(
        [node, str(REPO / "tests" / "report_trials_driver.mjs"), url, chromium],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={**os.environ, "TOOLS": str(TOOLS)},
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["errors"] == []
    assert out["why_links"] == [
        ["empty answer ×1", "#f:fail=1&c=single%2Boneshot&m=empty_answer&t=all"]
    ]
    assert out["controls"] == ["single+oneshot", "empty_answer", True]
    # the filtered view: exactly the failing trial, and the reader is taken to it
    assert out["rows"] == [["single+oneshot", "hottest", "3", "0"]]
    assert 0 <= out["episodes_top"] < 400
    assert out["row_link"] == "#ep-3-single-oneshot-hottest-t3"
    t = out["transcript"]
    assert t["open"] and t["shown"] and 0 <= t["top"] < 400
    assert t["title"].startswith("single+oneshot · hottest · trial 3 of 5")
    assert t["facts"][0] == "cassettecassettes/reference/single+oneshot/hottest/trial-3.yaml"
    assert t["badges"][:2] == ["fail", "Empty answer"]
    assert t["nav"] == [["next failure →", "#ep-9-single-atomic-ningde"]]
    assert out["next"]["open"] and 0 <= out["next"]["top"] < 400
    assert out["phone_overflow"] is False
