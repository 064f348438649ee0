"""The HTML report: parsed with a real HTML parser (html5lib via BeautifulSoup) and checked
against the committed results, synthetic failure modes and fidelity audits, hostile text, the
``toolreplay report`` command and the committed page's freshness."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.report.episodes import PRETTY_WIDTH, pretty_json
from toolreplay.report.render import ReportError, load_results, render_report, write_report

from .conftest import committed_bytes

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "reports" / "results.json"
INDEX = REPO / "reports" / "index.html"
HOSTILE = "</script><img src=x onerror=alert(1)>\u2028<b>bold</b>"

PROMISE = "我将重新查询，明确指定「宁德市」以提高准确性。"
PROMISE_SH = "接下来我将查询明天的天气预报。"


def parse(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html5lib")


def text(tag: Tag) -> str:
    return " ".join(tag.get_text(" ").split())


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def episode(results: dict[str, Any], configuration: str, question_id: str) -> dict[str, Any]:
    return next(
        e
        for e in results["episodes"]
        if e["configuration"] == configuration and e["question_id"] == question_id
    )


def with_failure_modes(committed: dict[str, Any]) -> dict[str, Any]:
    """The committed results with failure modes as the classifier would add them."""
    results = copy.deepcopy(committed)
    for ep in results["episodes"]:
        ep["failure_modes"] = []
    for qid, sentence in (("ningde", PROMISE), ("shanghai-rain", PROMISE_SH)):
        ep = episode(results, "single+atomic", qid)
        start = ep["answer"].index(sentence)
        ep["failure_modes"].append(
            {
                "mode": "unfulfilled_promise",
                "explanation": "The reply promises another query; the host has stopped.",
                "evidence": {
                    "message_index": len(ep["transcript"]) - 1,
                    "span": [start, start + len(sentence)],
                    "text": sentence,
                    "tool_call": ep["pending_tool_calls"][0],
                },
            }
        )
    for qid in ("beijing", "hottest"):
        ep = episode(results, "single+atomic", qid)
        ep["failure_modes"].append(
            {
                "mode": "empty_answer",
                "explanation": "The second reply holds only tool calls; content is None.",
                "evidence": {
                    "message_index": len(ep["transcript"]) - 1,
                    "span": None,
                    "text": None,
                    "tool_call": ep["pending_tool_calls"][0],
                },
            }
        )
    # a value located by its quoted text only (no message index, no span)
    episode(results, "loop+oneshot", "beijing")["failure_modes"].append(
        {
            "mode": "fabricated_value",
            "explanation": "30.9°C appears in no tool message.",
            "evidence": {"message_index": None, "span": None, "text": "30.9°C", "tool_call": None},
        }
    )
    # a value in an intermediate assistant message, located by span
    ningde = episode(results, "loop+atomic", "ningde")
    middle = ningde["transcript"][6]["content"]
    at = middle.index("26.6617")
    ningde["failure_modes"].append(
        {
            "mode": "fabricated_value",
            "explanation": "Coordinates rounded differently from the tool message.",
            "evidence": {
                "message_index": 6,
                "span": [at, at + 7],
                "text": "26.6617",
                "tool_call": None,
            },
        }
    )
    # evidence that cannot be located: shown quoted, never silently dropped
    episode(results, "loop+atomic", "hottest")["failure_modes"].append(
        {
            "mode": "no_measurement",
            "explanation": "synthetic",
            "evidence": {
                "message_index": 99,
                "span": [500, 900],
                "text": "不存在的句子",
                "tool_call": None,
            },
        }
    )
    return results


FIDELITY = {
    "checks": [
        {
            "name": "faithful baseline",
            "passed": True,
            "explanation": "The oneshot baseline keeps all three heuristics.",
            "evidence": ["single+oneshot/ningde: 宁德 → 宁德市 retry used", "4/4 with all on"],
        },
        {
            "name": "broad judge",
            "passed": False,
            "explanation": "The narrow judge rejects a precipitation answer.",
            "evidence": ["shanghai-rain: 2.6 毫米 rejected by °C-only judge"],
        },
    ],
    "tables": {
        "full": {
            "title": "faithful baseline, full judge",
            "rows": [
                {"name": "single+oneshot", "passed": 4, "total": 4},
                {"name": "loop+atomic", "passed": 4, "total": 4},
            ],
        },
        "near_miss": {
            "title": "no 市 retry, °C-only judge",
            "rows": [
                {"name": "single+oneshot", "passed": 2, "total": 4},
                {"name": "loop+atomic", "passed": 3, "total": 4},
            ],
        },
    },
    "ablations": [
        {
            "heuristic": "shi_retry",
            "configuration": "single+oneshot-no_shi_retry",
            "passed": 3,
            "total": 4,
            "flips": [{"question_id": "ningde", "from": True, "to": False}],
        },
        {
            "heuristic": "population_order",
            "configuration": "single+oneshot-no_population_order",
            "passed": 4,
            "total": 4,
            "flips": [],
        },
    ],
}


@pytest.fixture(scope="module")
def committed_page() -> BeautifulSoup:
    return parse(INDEX.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def synthetic_page(committed: dict[str, Any]) -> BeautifulSoup:
    results = with_failure_modes(committed)
    results["fidelity"] = FIDELITY
    return parse(render_report(results))


# --------------------------------------------------------------------------- header and grid


@pytest.mark.slow
def test_grid_reads_like_the_study_table(committed_page: BeautifulSoup) -> None:
    grid = committed_page.select_one("#grid table.grid")
    assert grid is not None
    columns = [text(th).split()[0] for th in grid.select("thead th")[1:]]
    assert columns == ["oneshot", "atomic"]
    rows = grid.select("tbody tr")
    assert [text(r.th).split()[0] for r in rows] == ["single", "loop"]
    scores = [[c.select_one(".score").get_text() for c in r.select("td")] for r in rows]
    assert scores == [["4/4", "0/4"], ["4/4", "4/4"]]
    cells = {td["data-configuration"]: td for td in grid.select("td[data-configuration]")}
    # five trials: the colour is over trials; single+oneshot passes 4/4 in trial 1, not always
    assert "partial" in cells["single+oneshot"]["class"]
    assert "none" in cells["single+atomic"]["class"]
    assert "all" in cells["loop+atomic"]["class"]
    assert text(cells["single+oneshot"].select_one(".cap")) == "trial 1 · all passed"
    trials = cells["single+oneshot"].select_one(".cell-trials")
    assert text(trials.select_one(".score-trials")) == "19/20 trials"
    assert "3 of 4 questions always" in text(trials)
    assert text(trials.select_one(".trial-modes")) == "empty answer ×1"
    assert text(cells["loop+atomic"].select_one(".score-trials")) == "20/20 trials"


def single_trial(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` as a one-trial set (trial 1 only)."""
    out = copy.deepcopy(results)
    for key in ("trials", "trial_outcomes", "selection"):
        out.pop(key, None)
    for c in out["configurations"]:
        for key in ("trials", "pass_at_k", "pass_hat_k", "rounds_over_trials",
                    "tool_calls_over_trials", "failure_mode_rates", "questions"):  # fmt: skip
            c.pop(key, None)
    return out


@pytest.mark.slow
def test_partial_pass_is_amber(committed: dict[str, Any]) -> None:
    results = single_trial(committed)
    results["configurations"][3]["passed"] = 2
    cell = parse(render_report(results)).select_one('td[data-configuration="loop+atomic"]')
    assert cell is not None
    assert "partial" in cell["class"]
    assert cell.select_one(".score").get_text() == "2/4"
    assert cell.select_one(".cell-trials") is None  # one trial: trial 1 is the whole story


@pytest.mark.slow
def test_a_question_failing_one_trial_makes_the_cell_amber(committed: dict[str, Any]) -> None:
    results = copy.deepcopy(committed)
    loop_atomic = results["configurations"][3]
    loop_atomic["questions"][0]["passes"] = 3  # trial 1 (the study's 4/4) unchanged
    cell = parse(render_report(results)).select_one('td[data-configuration="loop+atomic"]')
    assert "partial" in cell["class"] and cell.select_one(".score").get_text() == "4/4"
    assert text(cell.select_one(".score-trials")) == "18/20 trials"
    assert "3 of 4 questions always" in text(cell.select_one(".cell-trials"))


@pytest.mark.slow
def test_stand_in_set_is_labelled_a_test_double(
    committed_page: BeautifulSoup, committed: dict[str, Any]
) -> None:
    banner = committed_page.select_one(".banner")
    assert banner is not None and "stand-in" in banner["class"]
    assert "Test double" in text(banner)
    # what the double's hints script vs. what the hosts decide
    assert "standin:" in text(banner)
    assert "empty answer or as an unfulfilled promise" in text(banner)
    assert "Whether a pending tool call is ever executed comes from host logic" in text(banner)
    facts = {text(d.dt): text(d.dd) for d in committed_page.select(".facts > div")}
    prov = committed["provenance"]
    assert facts["provenance"] == "stand-in"
    assert facts["model"] == prov["model"]
    assert facts["endpoint host"] == prov["endpoint_host"]
    assert facts["recorded on"] == prov["recorded_on"]
    assert facts["prompt date"] == prov["today"]
    for name, version in prov["packages"].items():
        assert f"{name} {version}" in facts["packages"]

    live = copy.deepcopy(committed)
    live["provenance"]["provenance"] = "live"
    banner = parse(render_report(live)).select_one(".banner")
    assert banner is not None and "live" in banner["class"]
    assert "Test double" not in text(banner)


@pytest.mark.slow
def test_banner_and_details_say_what_answered_at_each_endpoint(
    committed_page: BeautifulSoup, committed: dict[str, Any]
) -> None:
    """Judged from the manifest's URLs (provenance.endpoints): the reference set's model is the
    stand-in and its tools the fixture server; a live model with live tool URLs reads as live
    throughout; results that do not record the endpoints say so instead of guessing."""
    banner = text(committed_page.select_one(".banner"))
    assert "its tools answered by the fixture server on loopback (geocoding" in banner
    facts = {text(d.dt): text(d.dd) for d in committed_page.select(".facts > div")}
    assert facts["model endpoint"] == "http://127.0.0.1/v1 : the stand-in"  # code, then words
    assert facts["geocoding endpoint"] == "http://127.0.0.1/v1/search : the fixture server"

    live = copy.deepcopy(committed)
    live["provenance"]["provenance"] = "live"
    live["provenance"]["endpoint_host"] = "api.example.com"
    live["provenance"]["endpoints"] = [
        {"name": "model", "role": "model", "url": "https://api.example.com/v1",
         "host": "api.example.com", "loopback": False, "source": "live"},
        {"name": "geocoding_url", "role": "tool", "url": "https://geo.example.com/v1/search",
         "host": "geo.example.com", "loopback": False, "source": "live"},
    ]  # fmt: skip
    page = parse(render_report(live))
    banner = text(page.select_one(".banner"))
    assert banner.startswith("Live recording: a live model and live tools.")
    assert "the live tool endpoints (geocoding https://geo.example.com/v1/search )" in banner
    assert "fixture" not in banner and "loopback" not in banner
    assert "tools:" not in text(page.select_one("#verdict"))  # nothing to warn about

    unknown = copy.deepcopy(live)
    del unknown["provenance"]["endpoints"]
    page = parse(render_report(unknown))
    assert "what answered at its tool endpoints is not recorded" in text(page.select_one(".banner"))
    assert "Open-Meteo" not in text(page.select_one(".banner"))


def test_page_is_self_contained_and_readable_everywhere(committed_page: BeautifulSoup) -> None:
    head = committed_page.head
    assert head.select_one('meta[charset="utf-8"]') is not None
    assert head.select_one('meta[name="viewport"]') is not None
    assert committed_page.select('[lang="zh-CN"]'), "Chinese text carries lang=zh-CN"
    for tag in committed_page.select("[src], link[href]"):
        pytest.fail(f"external resource: {tag}")
    style = committed_page.style.string
    assert "@media print" in style and "@media (max-width" in style
    assert "Noto Sans CJK SC" in style and "url(" not in style


@pytest.mark.slow
def test_ids_are_unique_and_every_in_page_link_resolves(synthetic_page: BeautifulSoup) -> None:
    ids = [t["id"] for t in synthetic_page.select("[id]")]
    assert len(ids) == len(set(ids))
    # a "#f:..." link sets the filters (the script reads it), it names no element
    links = {
        a["href"][1:]
        for a in synthetic_page.select('a[href^="#"]')
        if not a["href"].startswith("#f:")
    }
    assert links and links <= set(ids)


def test_csp_admits_exactly_the_inline_style_and_script(committed_page: BeautifulSoup) -> None:
    csp = committed_page.select_one('meta[http-equiv="Content-Security-Policy"]')["content"]

    def digest(s: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"

    assert f"style-src {digest(committed_page.style.string)};" in csp
    assert f"script-src {digest(committed_page.script.string)};" in csp
    assert "default-src 'none'" in csp


def test_metrics_table_and_charts(committed_page: BeautifulSoup, committed: dict) -> None:
    rows = committed_page.select("#metrics table.metrics tbody tr")
    assert [text(r.th) for r in rows] == [c["name"] for c in committed["configurations"]]
    loop_atomic = [text(td) for td in rows[3].select("td")]
    assert loop_atomic[:4] == ["4/4", "none", "3.25", "3.25"]  # passed, failure modes, ...
    assert "converged ×4" in loop_atomic[-1]
    charts = committed_page.select("#metrics .charts:not(.charts-wide) figure.chart svg")
    assert len(charts) == 3  # wall time is not charted for a stand-in set
    # then the charts to look at: pass rate, rounds and tool calls as distributions, modes
    wide = [f["id"] for f in committed_page.select("#metrics .charts-wide figure.chart")]
    assert wide == [
        "chart-pass-rate",
        "chart-rounds-dist",
        "chart-tool-calls-dist",
        "chart-failure-modes",
    ]
    rounds = charts[0]
    widths = [float(r["width"]) for r in rounds.select("rect")]
    assert widths[3] == max(widths) and widths[0] == pytest.approx(widths[3] * 2.0 / 3.25, abs=0.1)


# --------------------------------------------------------------------------- chains


def chain_cell(page: BeautifulSoup, question_id: str, configuration: str) -> Tag:
    """The matrix cell of a question (row) under a configuration (column)."""
    row = page.select_one(f'#chains tr.question[data-q="{question_id}"]')
    assert row is not None, question_id
    cell = row.select_one(f'td.mcell[data-label="{configuration}"]')
    assert cell is not None, configuration
    return cell


def test_tool_call_chains_per_question(committed_page: BeautifulSoup) -> None:
    columns = [text(th) for th in committed_page.select("#chains table.matrix thead th")]
    assert columns == ["question", "single+oneshot", "loop+oneshot", "single+atomic", "loop+atomic"]
    assert len(committed_page.select("#chains tr.question")) == 4  # one row per question
    cell = chain_cell(committed_page, "ningde", "loop+atomic")
    rounds = cell.select(".round:not(.pending)")
    names = [[c.contents[0].strip() for c in r.select(".call")] for r in rounds]
    assert names == [["geocode_city"], ["geocode_city"], ["get_weather_by_coords"]]
    assert "(宁德市)" in rounds[1].get_text()
    assert text(cell.select_one(".badge.stop")) == "converged"
    assert cell.select_one("a.verdict-link")["href"] == "#ep-13-loop-atomic-ningde"
    assert "福建省宁德市" in text(cell.select_one(".mans"))  # the answer, side by side

    hottest = chain_cell(committed_page, "hottest", "loop+atomic")
    assert [len(r.select(".call")) for r in hottest.select(".round")] == [3, 3]

    failed = chain_cell(committed_page, "beijing", "single+atomic")
    pending = failed.select_one(".round.pending")
    assert pending is not None and "get_weather_by_coords" in text(pending)
    assert "never run" in text(failed)
    stop = failed.select_one(".badge.stop")
    assert text(stop) == "stopped after its one tool round" and "max_rounds" in stop["title"]
    assert "fail" in text(failed.select_one(".verdict-link"))


def test_large_run_matrix_is_compact(committed: dict[str, Any]) -> None:
    """Past LARGE_RUN episodes, matrix cells hold verdict and tool names only."""
    from toolreplay.report.table import LARGE_RUN, matrix
    from toolreplay.results.format import as_results

    typed = as_results(committed)
    episodes = typed.episodes
    anchors = [f"ep-{i}" for i in range(len(episodes))]
    small = matrix(episodes, typed.configurations, anchors, detail=True)
    large = matrix(episodes, typed.configurations, anchors, detail=False)
    assert LARGE_RUN >= 100
    assert small["rows"][0]["cells"][0]["answer"] is not None
    cell = large["rows"][0]["cells"][0]
    assert cell["answer"] is None
    assert all(c["args"] is None for rnd in cell["chain"]["rounds"] for c in rnd)


# --------------------------------------------------------------------------- failure gallery


def unclassified(committed: dict[str, Any]) -> dict[str, Any]:
    """The committed results as they would be before the classifier and the audit ran."""
    results = copy.deepcopy(committed)
    results.pop("fidelity", None)
    for e in results["episodes"]:
        e.pop("failure_modes", None)
    for c in results["configurations"]:
        c.pop("failure_modes", None)
    return results


def test_committed_gallery_shows_both_study_forms(committed_page: BeautifulSoup) -> None:
    section = committed_page.select_one("#failures")
    assert not section.select(".notice")
    found = sorted(
        (c["data-mode"], c["data-configuration"], c["data-question-id"])
        for c in section.select("article.failure")
    )
    assert found == [
        ("empty_answer", "single+atomic", "beijing"),
        ("empty_answer", "single+atomic", "hottest"),
        ("unfulfilled_promise", "single+atomic", "ningde"),
        ("unfulfilled_promise", "single+atomic", "shanghai-rain"),
    ]
    marks = [text(m) for m in section.select("mark")]
    assert PROMISE in marks


def test_committed_fidelity_section_shows_checks_and_both_tables(
    committed_page: BeautifulSoup,
) -> None:
    section = committed_page.select_one("#fidelity")
    checks = section.select("li.check")
    assert len(checks) == 7 and all(c["data-passed"] == "true" for c in checks)
    body = text(section)
    for name in ("baseline_heuristics", "baseline_properties", "ablation", "judge_breadth",
                 "near_miss", "arm_parity", "completeness"):  # fmt: skip
        assert name in body
    tables = section.select("table")
    assert len(tables) >= 2
    cells = [text(td) for td in section.select("td")]
    assert "2/4 differs" in cells and "3/4 differs" in cells


@pytest.mark.slow
def test_gallery_says_classifier_not_run_when_no_failure_modes(committed: dict[str, Any]) -> None:
    bare = unclassified(committed)
    page = parse(render_report(bare))
    section = page.select_one("#failures")
    assert "has not run" in text(section.select_one(".notice"))
    assert not section.select("article.failure")
    cards = section.select("article.unclassified")
    assert sorted(c["data-question-id"] for c in cards) == sorted(
        e["question_id"] for e in bare["episodes"] if not e["passed"]
    )
    assert "no failure" not in text(section).lower()


def cards(page: BeautifulSoup, mode: str) -> dict[tuple[str, str], Tag]:
    return {
        (c["data-configuration"], c["data-question-id"]): c
        for c in page.select(f'#failures article.failure[data-mode="{mode}"]')
    }


def test_gallery_groups_modes_in_order(synthetic_page: BeautifulSoup) -> None:
    section = synthetic_page.select_one("#failures")
    assert [h["id"] for h in section.select("h3")] == [
        "mode-empty_answer",
        "mode-unfulfilled_promise",
        "mode-fabricated_value",
        "mode-no_measurement",
    ]
    assert "ran on 16 of 16 episodes and found 7 failure modes" in text(section)
    assert not section.select(".notice")
    assert not section.select("article.unclassified")


def test_unfulfilled_promise_marks_the_sentence_and_shows_the_pending_call(
    synthetic_page: BeautifulSoup, committed: dict[str, Any]
) -> None:
    promises = cards(synthetic_page, "unfulfilled_promise")
    assert set(promises) == {("single+atomic", "ningde"), ("single+atomic", "shanghai-rain")}
    card = promises["single+atomic", "ningde"]
    answer = card.select_one(".quote.answer")
    assert answer.get_text() == episode(committed, "single+atomic", "ningde")["answer"]
    marks = answer.select("mark")
    assert [m.get_text() for m in marks] == [PROMISE]
    assert not card.select(".evidence-call"), "the evidence's call is the pending one"
    (call,) = card.select(".pending-call")
    assert "never run by the host" in text(call.find_previous_sibling(class_="label"))
    assert call.select_one(".name").get_text() == "geocode_city"
    assert json.loads(call.code.get_text()) == {"city": "宁德市"}
    assert [m.get_text() for m in promises["single+atomic", "shanghai-rain"].select("mark")] == [
        PROMISE_SH
    ]


def test_empty_answer_shows_empty_text_and_pending_calls(synthetic_page: BeautifulSoup) -> None:
    empty = cards(synthetic_page, "empty_answer")
    assert set(empty) == {("single+atomic", "beijing"), ("single+atomic", "hottest")}
    card = empty["single+atomic", "hottest"]
    empty_text = card.select_one(".quote.answer")
    assert "empty-text" in empty_text["class"] and "empty" in text(empty_text)
    pending = card.select(".pending-call")
    assert [json.loads(c.code.get_text())["latitude"] for c in pending] == [
        39.9075,
        31.2222,
        23.1167,
    ]


def test_fabricated_values_are_marked_where_they_occur(synthetic_page: BeautifulSoup) -> None:
    fabricated = cards(synthetic_page, "fabricated_value")
    by_text = fabricated["loop+oneshot", "beijing"]
    assert [m.get_text() for m in by_text.select(".quote.answer mark")] == ["30.9°C"]
    assert "mode-fabricated_value" in by_text.select_one("mark")["class"]

    in_message = fabricated["loop+atomic", "ningde"]
    assert not in_message.select(".quote.answer mark")
    evidence = in_message.select_one(".quote.evidence")
    assert [m.get_text() for m in evidence.select("mark")] == ["26.6617"]
    assert "message #6 (assistant)" in text(in_message)


def test_unlocated_evidence_is_quoted_not_dropped(synthetic_page: BeautifulSoup) -> None:
    card = cards(synthetic_page, "no_measurement")["loop+atomic", "hottest"]
    assert not card.select("mark")
    assert "不存在的句子" in text(card.select_one(".quote.evidence"))


@pytest.mark.slow
def test_partly_classified_results_say_so(committed: dict[str, Any]) -> None:
    results = with_failure_modes(committed)
    del episode(results, "single+atomic", "beijing")["failure_modes"]
    section = parse(render_report(results)).select_one("#failures")
    assert "ran on 15 of 16 episodes" in text(section)
    assert "1 episode carry no failure_modes" in text(section.select_one(".notice"))
    unclassified = section.select("article.unclassified")
    assert [c["data-question-id"] for c in unclassified] == ["beijing"]


# --------------------------------------------------------------------------- fidelity


@pytest.mark.slow
def test_fidelity_absent_says_audit_not_run(committed: dict[str, Any]) -> None:
    section = parse(render_report(unclassified(committed))).select_one("#fidelity")
    assert "has not run" in text(section.select_one(".notice"))
    assert not section.select(".badge")
    assert not section.select("table")


def test_fidelity_checks_tables_and_ablations(synthetic_page: BeautifulSoup) -> None:
    section = synthetic_page.select_one("#fidelity")
    assert not section.select(".notice")
    checks = section.select("li.check")
    assert [c["data-passed"] for c in checks] == ["true", "false"]
    assert text(checks[0].select_one(".badge")) == "pass"
    assert text(checks[1].select_one(".badge")) == "fail"
    assert "The narrow judge rejects" in text(checks[1])
    assert [text(li) for li in checks[1].select("ul li")] == [
        "shanghai-rain: 2.6 毫米 rejected by °C-only judge"
    ]
    assert "1 of 2 checks passed" in text(section)

    tables = section.select(".tables figure.fidelity-table")
    assert [t["data-key"] for t in tables] == ["full", "near_miss"]
    near = {text(r.th): text(r.td) for r in tables[1].select("tbody tr")}
    assert near == {"single+oneshot": "2/4", "loop+atomic": "3/4"}
    assert "partial" in tables[1].select_one("tbody td")["class"]

    ablations = section.select("table.ablations tbody tr")
    assert text(ablations[0].select("td")[-1]) == "ningde: pass → fail"
    assert text(ablations[1].select("td")[-1]) == "none"


@pytest.mark.slow
def test_empty_fidelity_is_not_a_pass(committed: dict[str, Any]) -> None:
    results = copy.deepcopy(committed)
    results["fidelity"] = {"checks": [], "tables": {}, "ablations": []}
    section = parse(render_report(results)).select_one("#fidelity")
    assert "0 of 0 checks passed" in text(section)
    assert "recorded no checks" in text(section)
    assert not section.select(".badge.pass")


# --------------------------------------------------------------------------- transcripts


def test_every_transcript_is_collapsible_and_pretty_printed(
    committed_page: BeautifulSoup, committed: dict[str, Any]
) -> None:
    details = committed_page.select("#transcripts details.episode")
    # every episode's, and every later trial's that results keep
    assert len(details) == len(committed["episodes"]) + len(committed.get("trial_episodes", []))
    assert all(not d.has_attr("open") for d in details)
    ningde = next(d for d in details if d["id"].endswith("-loop-atomic-ningde"))
    messages = ningde.select(".msg")
    assert len(messages) == len(episode(committed, "loop+atomic", "ningde")["transcript"])
    tool = messages[3]
    assert "role-tool" in tool["class"] and "geocode_city" in text(tool.select_one(".msg-head"))
    pretty = tool.pre.get_text()
    assert '\n  "query": "宁德",' in pretty
    assert json.loads(pretty)["candidates"][0]["admin2"] == "那曲市"
    call = messages[2].select_one(".tc pre").get_text()
    assert call == '{"city": "宁德"}'  # short enough for one line
    assert "content: null" in text(messages[2])


def test_pretty_json_keeps_short_parts_on_one_line(committed: dict[str, Any]) -> None:
    forecast = json.loads(episode(committed, "loop+atomic", "ningde")["transcript"][7]["content"])
    pretty = pretty_json(forecast)
    assert json.loads(pretty) == forecast
    lines = pretty.splitlines()
    assert len(lines) > 5
    assert all(len(line) <= PRETTY_WIDTH for line in lines)
    assert '    "temperature_2m": {"value": 28.3, "unit": "°C"},' in lines
    assert pretty_json({"city": "宁德"}) == '{"city": "宁德"}'
    assert pretty_json([]) == "[]"


@pytest.mark.slow
def test_non_json_tool_message_is_shown_raw(committed: dict[str, Any]) -> None:
    results = copy.deepcopy(committed)
    ep = results["episodes"][0]
    ep["transcript"][3]["content"] = "error: upstream said {not json"
    page = parse(render_report(results))
    assert page.select("#transcripts .msg")[3].pre.get_text() == "error: upstream said {not json"


# --------------------------------------------------------------------------- escaping


@pytest.mark.slow
def test_hostile_text_is_escaped_everywhere(committed: dict[str, Any]) -> None:
    results = with_failure_modes(committed)
    results["cassette_set"] = HOSTILE
    results["provenance"]["model"] = HOSTILE
    ep = episode(results, "single+atomic", "ningde")
    ep["question"] = HOSTILE
    ep["answer"] = f"前文。{HOSTILE}"
    ep["transcript"][-1]["content"] = ep["answer"]
    ep["transcript"][3]["content"] = json.dumps({"note": HOSTILE}, ensure_ascii=False)
    ep["transcript"][2]["tool_calls"][0]["function"]["arguments"] = HOSTILE
    ep["pending_tool_calls"] = [{"name": HOSTILE, "arguments": {"x": HOSTILE}}]
    ep["failure_modes"][0]["evidence"] = {
        "message_index": len(ep["transcript"]) - 1,
        "span": [3, 3 + len(HOSTILE)],
        "text": HOSTILE,
        "tool_call": {"name": HOSTILE, "arguments": HOSTILE},
    }
    ep["calls"][0]["arguments"] = {"city": HOSTILE}
    results["fidelity"] = copy.deepcopy(FIDELITY)
    results["fidelity"]["checks"][0]["evidence"] = [HOSTILE]
    results["fidelity"]["tables"]["full"]["title"] = HOSTILE

    html = render_report(results)
    page = parse(html)
    assert len(page.find_all("script")) == 1  # ours, in <head>
    assert page.find_all("img") == []
    assert page.find_all("b") == []
    assert "<img" not in html and "</script><" not in html.split("</head>", 1)[1]
    assert "\u2028" in page.get_text()
    body = page.body.get_text()
    assert body.count(HOSTILE) >= 8
    card = cards(page, "unfulfilled_promise")["single+atomic", "ningde"]
    for marker in card.select(".invis"):  # the visible ⟨U+2028 LS⟩ next to the character
        marker.decompose()
    assert "".join(m.get_text() for m in card.select(".answer mark")) == HOSTILE
    assert HOSTILE in page.title.get_text()


# --------------------------------------------------------------------------- files, CLI


def test_rerender_is_byte_identical(committed: dict[str, Any], tmp_path: Path) -> None:
    results = with_failure_modes(committed)
    results["fidelity"] = FIDELITY
    assert render_report(results) == render_report(copy.deepcopy(results))
    src = tmp_path / "results.json"
    src.write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")
    write_report(src, tmp_path / "a.html")
    # the page links its CSV and its results by name: the same names in another folder
    (tmp_path / "b").mkdir()
    src_b = tmp_path / "b" / "results.json"
    src_b.write_bytes(src.read_bytes())
    write_report(src_b, tmp_path / "b" / "a.html")
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b" / "a.html").read_bytes()
    assert (tmp_path / "a-episodes.csv").read_bytes() == (
        tmp_path / "b" / "a-episodes.csv"
    ).read_bytes()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "results file not found"),
        ("{\n", "not valid JSON"),
        ('{"format": 1, "cassette_set": "x"}', "the required field 'provenance' is missing at $"),
        ("[]", "not a toolreplay results file"),
    ],
)
def test_bad_results_file_names_the_file(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ReportError) as info:
        load_results(path)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)


def test_malformed_failure_mode_is_rejected_with_its_path(committed: dict[str, Any]) -> None:
    results = copy.deepcopy(committed)
    results["episodes"][2]["failure_modes"] = [{"mode": "empty_answer", "evidence": {"span": 3}}]
    with pytest.raises(ReportError, match=r"\$\.episodes\[2\]\.failure_modes\[0\]"):
        render_report(results)


def test_report_command(tmp_path: Path, committed: dict[str, Any]) -> None:
    out = tmp_path / "site" / "index.html"
    result = CliRunner().invoke(app, ["report", "--results", str(RESULTS), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output
    # the page links the CSV written beside it; the results sit elsewhere: no link to them
    assert out.read_text(encoding="utf-8") == render_report(
        committed, downloads={"csv": "index-episodes.csv"}
    )
    assert (out.parent / "index-episodes.csv").is_file()

    missing = tmp_path / "nope.json"
    result = CliRunner().invoke(app, ["report", "--results", str(missing), "--out", str(out)])
    assert result.exit_code == 1
    assert "nope.json" in " ".join(result.output.split())


@pytest.mark.slow
def test_committed_report_is_fresh(committed_run) -> None:
    """`toolreplay run` on the committed cassettes reproduces the committed reports/ exactly.
    Fails when reports/index.html or reports/results.json is stale: run `toolreplay run`."""
    result, out = committed_run
    assert result.exit_code == 0, result.output
    assert (out / "results.json").read_bytes() == committed_bytes(RESULTS), "stale results.json"
    assert (out / "index.html").read_bytes() == committed_bytes(INDEX), "stale index.html"


@pytest.mark.slow
def test_committed_hard_report_is_fresh(hard_run) -> None:
    """The same for the harder eval's set: reports/hard/ from cassettes/hard/. Fails when
    stale: run `toolreplay run --eval evals/weather-hard.yaml --set hard`."""
    result, out = hard_run
    assert result.exit_code == 0, result.output
    hard = REPO / "reports" / "hard"
    assert (out / "results.json").read_bytes() == (hard / "results.json").read_bytes()
    assert (out / "index.html").read_bytes() == (hard / "index.html").read_bytes()


def _poison(node: Any) -> Any:
    """Every string in ``node`` with hostile markup appended."""
    if isinstance(node, str):
        return node + HOSTILE
    if isinstance(node, list):
        return [_poison(v) for v in node]
    if isinstance(node, dict):
        return {k: _poison(v) for k, v in node.items()}
    return node


@pytest.mark.slow
def test_hostile_text_in_every_string_field_stays_text(committed: dict[str, Any]) -> None:
    """Not a chosen list of fields: every string of the results, including verdicts, stop
    reasons, question ids, hosts, package versions, evidence and table titles."""
    results = with_failure_modes(committed)
    results["fidelity"] = copy.deepcopy(FIDELITY)
    html = render_report(_poison(results))
    page = parse(html)
    assert len(page.find_all("script")) == 1
    assert page.find_all("img") == [] and page.find_all("b") == []
    assert "<img" not in html
    for tag in page.find_all(True):
        assert not any(attr.lower().startswith("on") for attr in tag.attrs), tag.name


@pytest.mark.slow
def test_trials_section_charts_pass_hat_k(committed: dict[str, Any]) -> None:
    page = parse(render_report(committed))
    section = page.find("section", id="trials")
    assert section is not None
    n = committed["trials"]
    assert f"Consistency over {n} trials" in section.get_text()
    assert len(section.find_all("polyline")) == len(committed["configurations"])
    headers = [th.get_text() for th in section.find("table").find_all("th", scope="col")]
    assert [f"pass^{k}" for k in range(1, n + 1)] == [h for h in headers if h.startswith("pass^")]
    # results without trial fields (an older results.json) render without the section
    plain = {**committed, "configurations": [
        {k: v for k, v in c.items() if k not in ("pass_hat_k", "pass_at_k")}
        for c in committed["configurations"]
    ]}  # fmt: skip
    assert parse(render_report(plain)).find("section", id="trials") is None


# --------------------------------------------------------------------------- typed input


def test_the_page_reads_the_typed_results_and_a_mapping_alike(committed: dict[str, Any]) -> None:
    """The report reads :class:`~toolreplay.results.format.Results`; a mapping shaped like
    results.json is validated into one first, so both give the committed page."""
    from toolreplay.diff import Run
    from toolreplay.results.format import as_results

    typed = load_results(RESULTS)
    page = render_report(typed)
    # toolreplay run wrote the committed page with the CSV and results.json beside it
    beside = {"csv": "index-episodes.csv", "results": "results.json"}
    page = render_report(typed, downloads=beside)
    assert page == render_report(committed, downloads=beside) == INDEX.read_text(encoding="utf-8")
    # the comparison section too: a Run holds the model, whatever it was given
    before = Run("before.json", committed)
    assert before.results == typed
    assert render_report(typed, compare=before) == render_report(
        committed, compare=Run("before.json", as_results(committed))
    )


def test_a_malformed_mapping_is_refused_before_rendering(committed: dict[str, Any]) -> None:
    bad = copy.deepcopy(committed)
    bad["episodes"][1]["failure_modes"] = [{"mode": 3}]
    with pytest.raises(ReportError, match=r"at \$\.episodes\[1\]\.failure_modes\[0\]\.mode"):
        render_report(bad)
