"""The report's first screen, fidelity wording, evidence in transcripts, navigation, long and
invisible content, accessibility markup and the comparison section; the page is parsed with
html5lib (as a browser would) and checked against the committed results."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag

from toolreplay.diff import Run
from toolreplay.report.render import build_page, render_report
from toolreplay.report.text import CLIP_AT

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "reports" / "results.json"


def parse(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html5lib")


def text(tag: Tag) -> str:
    return " ".join(tag.get_text().split())


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def page(committed: dict[str, Any]) -> BeautifulSoup:
    return parse(render_report(committed))


def episode(results: dict[str, Any], configuration: str, question_id: str) -> dict[str, Any]:
    return next(
        e
        for e in results["episodes"]
        if e["configuration"] == configuration and e["question_id"] == question_id
    )


# --------------------------------------------------------------------------- first screen


def scorecard(verdict: Tag) -> dict[str, dict[str, str]]:
    """The scorecard's rows, in page order: configuration → its cells' text by column."""
    out = {}
    for tr in verdict.select("table.scorecard tbody tr"):
        cells = {td["data-label"]: text(td) for td in tr.select("td")}
        out[tr["data-configuration"]] = {"row": text(tr.th), **cells}
    return out


@pytest.mark.slow
def test_scorecard_comes_first_worst_configuration_first(page: BeautifulSoup) -> None:
    verdict = page.select_one("#verdict")
    assert verdict is not None
    # nothing but the title and subtitle before it; the bar (contents, filters), then the grid
    main = page.select_one("main")
    assert [t.name for t in main.find_all(recursive=False)][:3] == ["header", "div", "section"]
    assert main.find("div", recursive=False)["id"] == "bar"
    assert main.find("section", recursive=False)["id"] == "grid"
    assert verdict.find_parent("header") is not None
    # five trials: trial 1 (the study's run) and the passes over every trial
    assert text(verdict.select_one(".verdict-line")) == (
        "12 of 16 episodes passed in trial 1 (the study's run); 59 of 80 over 5 trials."
    )
    rows = scorecard(verdict)
    # the configuration that fails every trial first, then the partial failure, then the rest
    assert list(rows) == ["single+atomic", "single+oneshot", "loop+oneshot", "loop+atomic"]
    assert rows["single+atomic"] == {
        "row": "single+atomic failed",
        "trial 1": "0/4",
        "over 5 trials": "0/20 0 of 4 questions always 95% interval 0–49%",
        "pass rate": "0%",
        "why it fails": "empty answer ×13 over trials, unfulfilled promise ×7",
    }
    assert rows["single+oneshot"]["row"] == "single+oneshot partly failed"
    assert rows["single+oneshot"]["trial 1"] == "4/4"
    assert rows["single+oneshot"]["over 5 trials"] == (
        "19/20 3 of 4 questions always 95% interval 46–100%"
    )
    assert rows["single+oneshot"]["pass rate"] == "95%"
    assert rows["single+oneshot"]["why it fails"] == "empty answer ×1 over trials"
    assert rows["loop+atomic"]["row"] == "loop+atomic passed"
    # each figure is coloured by its own status: trial 1's 4/4 green beside an amber 19/20
    tr = verdict.select_one("tr[data-configuration='single+oneshot']")
    assert "all" in tr.select_one(".sc-t1 .sc-num")["class"]
    assert "partial" in tr.select_one(".sc-over .sc-num")["class"]
    badges = text(verdict.select_one(".sc-badges"))
    assert badges.startswith("baseline audit passed 7/7 (reference: evals/weather.yaml)")
    assert "stand-in model: a test double tools: the fixture server" in badges
    # a reason lands on its gallery group, and with the script on the filtered episode table
    link = tr.select_one("a.sc-reason")
    assert link["href"] == "#mode-empty_answer"
    assert link["data-filter"] == "#f:fail=1&c=single%2Boneshot&m=empty_answer&t=all"
    assert verdict.select_one("a.audit-badge")["href"] == "#fidelity"


@pytest.mark.slow
def test_one_trial_scorecard_says_why_by_trial_one(committed: dict[str, Any]) -> None:
    from .test_report import single_trial

    verdict = parse(render_report(single_trial(committed))).select_one("#verdict")
    assert text(verdict.select_one(".verdict-line")) == "12 of 16 episodes passed."
    rows = scorecard(verdict)
    assert rows["single+atomic"] == {
        "row": "single+atomic failed",
        "trial 1": "0/4",
        "pass rate": "0%",
        "why it fails": "empty answer ×2, unfulfilled promise ×2",
    }
    assert [r["row"] for r in rows.values()][1:] == [
        "single+oneshot passed",
        "loop+oneshot passed",
        "loop+atomic passed",
    ]
    filters = [a["data-filter"] for a in verdict.select("a[data-filter]")]
    assert filters == [
        "#f:fail=1&c=single%2Batomic&m=empty_answer",
        "#f:fail=1&c=single%2Batomic&m=unfulfilled_promise",
    ]


def test_grid_cells_carry_failure_mode_counts(page: BeautifulSoup) -> None:
    cells = {
        td["data-configuration"]: td for td in page.select("#grid td.cell[data-configuration]")
    }
    assert text(cells["single+atomic"].select_one(".cell-modes")) == (
        "empty answer ×2, unfulfilled promise ×2"
    )
    for name in ("single+oneshot", "loop+oneshot", "loop+atomic"):  # none failed in trial 1
        assert cells[name].select_one(".cell-modes:not(.trial-modes)") is None
    # over the five trials: what the trials section counts, linked to the filtered episodes
    assert text(cells["single+atomic"].select_one(".trial-modes")) == (
        "empty answer ×13, unfulfilled promise ×7"
    )
    assert text(cells["single+oneshot"].select_one(".trial-modes")) == "empty answer ×1"
    link = cells["single+oneshot"].select_one(".trial-modes a")
    assert link["href"] == "#mode-empty_answer"  # without the script: the gallery's group
    assert link["data-filter"] == "#f:fail=1&c=single%2Boneshot&m=empty_answer&t=all"
    for name in ("loop+oneshot", "loop+atomic"):
        assert cells[name].select_one(".trial-modes") is None


def test_metrics_table_has_failure_modes_and_labels(page: BeautifulSoup) -> None:
    table = page.select_one("#metrics table.metrics")
    heads = [text(th) for th in table.select("thead th")]
    assert heads[:3] == ["configuration", "passed", "failure modes"]
    rows = {text(tr.th): tr for tr in table.select("tbody tr")}
    assert text(rows["single+atomic"].select_one("td.modes")) == (
        "empty answer ×2, unfulfilled promise ×2"
    )
    assert text(rows["loop+atomic"].select_one("td.modes")) == "none"
    # each cell names its column, so the row still reads when it becomes a card on a phone
    for td in table.select("tbody td"):
        assert td.get("data-label") in heads
    # token counts without ".0"; the single host's max_rounds said honestly
    tokens = heads.index("avg tokens per episode")
    assert text(rows["single+oneshot"].select("th, td")[tokens]) == "1891"
    assert text(rows["loop+atomic"].select("th, td")[tokens]) == "4117.2"
    stops = text(rows["single+atomic"].select_one("td.stops"))
    assert stops == "stopped after its one tool round ×4"
    assert "max_rounds" in rows["single+atomic"].select_one("td.stops .badge")["title"]


def test_facts_fold_into_details_and_dates_are_explained(page: BeautifulSoup) -> None:
    facts = page.select_one("details.facts-box")
    assert facts is not None and not facts.has_attr("open")  # folded on phones; CSS opens wide
    assert facts.select_one("dl.facts") is not None
    note = text(facts.select_one(".note"))
    assert "“recorded on” is the day the cassettes were made" in note
    assert "“prompt date” is the “today” written into the system prompt" in note


@pytest.mark.slow
def test_wall_time_is_not_charted_for_a_stand_in_set(committed: dict[str, Any]) -> None:
    page = parse(render_report(committed))
    assert page.select_one("#chart-recorded_wall_time_s") is None
    assert "wall time measures nothing" in text(page.select_one("#metrics"))
    live = copy.deepcopy(committed)
    live["provenance"]["provenance"] = "live"
    assert parse(render_report(live)).select_one("#chart-recorded_wall_time_s") is not None


# --------------------------------------------------------------------------- fidelity


def test_fidelity_reads_for_people(page: BeautifulSoup) -> None:
    section = page.select_one("#fidelity")
    glossary = {
        text(dt): text(dd)
        for dt, dd in zip(
            section.select("dl.glossary dt"), section.select("dl.glossary dd"), strict=True
        )
    }
    for term in ("heuristics", "ablation", "near miss", "judge breadth", "admin seat, PPLC"):
        assert glossary[term]
    checks = {li["id"]: li for li in section.select("li.check")}
    assert len(checks) == 7
    for li in checks.values():
        assert li.select_one("p.lead") is not None
    assert text(checks["check-baseline_heuristics"].h3).startswith(
        "pass Is the baseline the reference's best version?"
    )
    body = text(section)
    assert "changed the place chosen in 0" not in body
    assert "never changed the place chosen" in body
    assert "(s)" not in body


def test_near_miss_table_sits_beside_its_check_with_the_takeaway(page: BeautifulSoup) -> None:
    check = page.select_one("#check-near_miss")
    takeaway = text(check.select_one(".takeaway"))
    assert takeaway == (
        "Takeaway: A sloppier baseline and a narrower judge would have scored single+oneshot 2/4 "
        "against loop+oneshot 3/4, where the faithful run gives 4/4 against 4/4: the loop would "
        "have seemed to win with the oneshot toolset. Also changed: loop+atomic 4/4 → 3/4."
    )
    rows = {text(tr.th): tr for tr in check.select("table.near-miss tbody tr")}
    assert set(rows) == {"single+oneshot", "loop+oneshot", "single+atomic", "loop+atomic"}
    differing = {name for name, tr in rows.items() if "differs" in (tr.get("class") or [])}
    assert differing == {"single+oneshot", "loop+oneshot", "loop+atomic"}
    assert rows["single+atomic"].select_one("td.changed") is None
    assert text(rows["single+oneshot"].select_one("td.changed")) == "2/4 differs"
    # shown once: no separate tables block repeats it, and the ablation rows are not listed twice
    section = page.select_one("#fidelity")
    assert len(section.select("table.near-miss")) == 1
    assert not section.select("figure.fidelity-table")
    assert len(section.select("table.ablations")) == 1
    assert page.select_one("#check-ablation table.ablations") is not None
    assert page.select_one("#check-ablation ul.evidence") is None


# --------------------------------------------------------------------------- evidence


def test_transcripts_carry_badges_marked_promise_and_never_run(page: BeautifulSoup) -> None:
    ningde = page.select_one("details.episode[id$='-single-atomic-ningde']")
    assert text(ningde.summary.select_one(".badge.mode")) == "Unfulfilled promise"
    last = ningde.select("div.msg")[-1]
    assert "has-evidence" in last["class"]
    assert text(last.select_one(".msg-head .badge.mode")) == "Unfulfilled promise"
    assert text(last.select_one("mark")) == "我将重新查询，明确指定「宁德市」以提高准确性。"
    pending = last.select_one(".tc.not-run")
    assert pending is not None and text(pending.select_one(".badge.never-run")) == "never run"
    # a call the host ran is not flagged
    assert not ningde.select("div.msg")[2].select(".never-run")


def test_gallery_cards_link_to_the_exact_message(page: BeautifulSoup) -> None:
    ids = {tag["id"] for tag in page.select("[id]")}
    links = page.select("#failures article.card .evidence-link a")
    assert len(links) == 4
    for a in links:
        target = a["href"][1:]
        assert target in ids and re.fullmatch(r"ep-\d+-[a-z0-9-]+-m\d+", target)
        assert page.find(id=target).find_parent("details", class_="episode") is not None


# --------------------------------------------------------------------------- navigation


def test_filters_and_navigation_need_no_script_to_read(page: BeautifulSoup) -> None:
    bar = page.select_one("#filters")
    assert bar.has_attr("hidden")  # shown by the script only; without it nothing is hidden
    assert [o["value"] for o in bar.select("#f-configuration option")][1:] == [
        "single+oneshot",
        "loop+oneshot",
        "single+atomic",
        "loop+atomic",
    ]
    assert [o["value"] for o in bar.select("#f-mode option")][1:] == [
        "empty_answer",
        "unfulfilled_promise",
    ]
    assert page.select_one("#expand-all") and page.select_one("#collapse-all")
    assert page.select_one("#transcript-buttons").has_attr("hidden")
    assert page.select_one("a.to-top")["href"] == "#top" and page.select_one("#top")
    assert not page.select(".filtered-out")
    # every filterable element names its episode; the table rows carry what the filters test
    rows = page.select("#episode-table tbody tr")
    assert len(rows) == 80  # 16 episodes × 5 trials
    assert {r["data-p"] for r in rows} == {"1", "0"}
    promise = [
        r for r in rows if "unfulfilled_promise" in r["data-m"].split() and r["data-t"] == "1"
    ]
    assert {r["data-q"] for r in promise} == {"ningde", "shanghai-rain"}
    kept = len(page.select("#episode-table td.q a"))  # every row with a transcript has one
    assert len(page.select("details.episode[data-k]")) == kept >= 16
    assert all(c.get("data-k") for c in page.select("#failures article.card"))


# --------------------------------------------------------------------------- long and odd text


@pytest.mark.slow
def test_long_values_are_shortened_with_a_way_to_see_all(committed: dict[str, Any]) -> None:
    results = copy.deepcopy(committed)
    ep = episode(results, "loop+atomic", "beijing")
    long_answer = "北京今天阴。" + "很长的回答。" * 1000  # 6,006 characters
    ep["answer"] = long_answer
    ep["transcript"][-1]["content"] = long_answer
    long_city = "x" * 5000
    ep["transcript"][2]["tool_calls"][0]["function"]["arguments"] = json.dumps({"city": long_city})
    ep["calls"][0]["arguments"] = {"city": long_city}
    page = parse(render_report(results))
    item = page.select_one("details.episode[id$='-loop-atomic-beijing']")
    folded = item.select("div.long")
    # long tool results are folded after their first lines too
    tool = [b for b in folded if "role-tool" in b.find_parent("div", class_="msg")["class"]]
    assert tool and all(len(b.select_one(".head").get_text()) <= CLIP_AT for b in tool)
    blocks = [b for b in folded if b not in tool]
    assert len(blocks) == 2
    for block in blocks:
        head = block.select_one(".head")
        assert len(head.get_text()) <= CLIP_AT
        more = block.select_one("details.more")
        whole = head.get_text().removesuffix("…") + more.select_one(".rest").get_text()
        assert text(more.summary) == f"show all {len(whole):,} characters"
        assert whole == long_answer or json.loads(whole) == {"city": long_city}
    assert text(blocks[1].select_one("details.more").summary) == "show all 6,006 characters"
    # the chain shows a cut argument and says where the rest is
    row = page.select_one(
        "#chains tr.question[data-q='beijing'] td.mcell[data-label='loop+atomic']"
    )
    assert "(5,000 characters; all in the transcript)" in text(row)
    assert len(text(row)) < 1000


@pytest.mark.slow
def test_invisible_separators_get_a_visible_marker(committed: dict[str, Any]) -> None:
    results = copy.deepcopy(committed)
    ep = episode(results, "loop+atomic", "beijing")
    answer = "北京今天阴\u2028当前气温 30.9°C\u2029最高\u200b31.1°C\u202e。"
    ep["answer"] = answer
    ep["transcript"][-1]["content"] = answer
    page = parse(render_report(results))
    item = page.select_one("details.episode[id$='-loop-atomic-beijing']")
    markers = [text(m) for m in item.select("div.msg")[-1].select(".invis")]
    assert markers == ["⟨U+2028 LS⟩", "⟨U+2029 PS⟩", "⟨U+200B ZWSP⟩", "⟨U+202E⟩"]
    shown = item.select("div.msg")[-1].select_one("pre[lang]").get_text()
    # the characters stay (copying gives the original text), except the bidi override
    assert "\u2028" in shown and "\u2029" in shown and "\u200b" in shown
    assert "\u202e" not in shown


# --------------------------------------------------------------------------- accessibility


def test_scroll_regions_are_focusable_and_named(page: BeautifulSoup) -> None:
    regions = page.select("div.scroll")
    assert len(regions) > 5
    for region in regions:
        assert region["tabindex"] == "0" and region["role"] == "region" and region["aria-label"]
    for pre in page.select("pre.json"):
        assert pre["tabindex"] == "0"


def test_lang_is_set_per_block(page: BeautifulSoup) -> None:
    assert page.html["lang"] == "en"
    # Chinese prose is zh-CN; JSON blocks and English evidence are not
    for pre in page.select("pre.json"):
        assert not pre.has_attr("lang")
    answers = page.select("details.episode div.msg.role-assistant > pre[lang]")
    assert answers and all(p["lang"] == "zh-CN" for p in answers)
    system = page.select("details.episode div.msg.role-system > pre")
    assert system and all(p.get("lang") == "zh-CN" for p in system)
    for li in page.select("#fidelity ul.evidence li"):
        assert not li.has_attr("lang")
        for span in li.select("[lang]"):
            assert span["lang"] == "zh-CN" and re.fullmatch(
                r"[\u3000-\u9fff\uff00-\uffef]+", span.get_text()
            )


def test_chart_bars_keep_three_to_one_contrast() -> None:
    css = (REPO / "src" / "toolreplay" / "report" / "templates" / "report.css.j2").read_text()

    def luminance(hex_colour: str) -> float:
        channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (0, 2, 4)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    bars = re.findall(r"svg \.bar-\w+ \{ fill: #([0-9a-f]{6}); \}", css)
    assert len(bars) == 3
    for bar in bars:
        assert (1.05) / (luminance(bar) + 0.05) >= 3.0, bar


# --------------------------------------------------------------------------- comparison


@pytest.mark.slow
def test_compare_section_lists_the_flip(committed: dict[str, Any]) -> None:
    after = copy.deepcopy(committed)
    ep = episode(after, "loop+atomic", "beijing")
    ep["passed"] = False
    ep["answer"] = "我再查一下。"
    ep["transcript"][-1]["content"] = ep["answer"]
    ep["failure_modes"] = [{"mode": "no_measurement", "explanation": "", "evidence": None}]
    page = parse(render_report(after, compare=Run("before.json", committed)))
    section = page.select_one("#compare")
    rows = section.select("table.changes tbody tr")
    assert len(rows) == 1
    assert text(rows[0].th) == "loop+atomic/beijing"
    assert "flip" in rows[0]["class"]
    assert text(rows[0].select_one("td[data-label='verdict']")) == "pass → fail"
    assert text(rows[0].select_one("td[data-label='failure modes']")) == "gained no measurement"
    link = rows[0].select_one("td[data-label='first differing message'] a")
    assert page.find(id=link["href"][1:]) is not None
    assert "1 flip since before.json" in text(page.select_one("#verdict"))
    # identical runs: no differences
    same = parse(render_report(committed, compare=Run("before.json", committed)))
    assert "No differences" in text(same.select_one("#compare"))
    # without --compare there is no such section
    assert build_page(committed)["compare"] is None
