"""Comparing runs with trials (issue 30): the committed 5-trial reference set against a 1-trial
re-record of it (its cassette set with trials 2–5 removed, run by ``toolreplay run``). Neither
``toolreplay diff`` nor ``report --compare`` may call them "comparable, no differences": both
name the trial difference; the page shows trials and pass rates per configuration before →
after, regressions and improvements, the grid's cells before → after, runs of identical
messages folded and a word diff of the changed message; at 390 px no compare header overlaps
another (headless Chromium; skipped without node, chromium and playwright-core)."""

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

from toolreplay.cli.main import app
from toolreplay.diff import Run, diff_runs, load_run, trial_count
from toolreplay.diff_text import format_diff
from toolreplay.report.compare import word_diff
from toolreplay.report.render import render_report

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "reports" / "results.json"
REFERENCE = REPO / "cassettes" / "reference"
TOOLS = REPO / "tools"
NOTE = "5 trials before, 1 after: over-trials rates are not comparable; trial 1 compared"
HEDGED = "北京今天阴，我再查一下具体气温。"

runner = CliRunner()


@pytest.fixture(scope="module")
def five() -> dict[str, Any]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def one_trial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference set re-recorded with one trial: its cassettes with trials 2–5 removed
    and the manifest saying so, replayed and judged by ``toolreplay run``; its results.json."""
    root = tmp_path_factory.mktemp("one-trial")
    cassettes = root / "cassettes"
    shutil.copytree(REFERENCE, cassettes / "reference")
    for extra in (cassettes / "reference").rglob("trial-*.yaml"):
        if extra.name != "trial-1.yaml":
            extra.unlink()
    manifest_path = cassettes / "reference" / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["trials"] = 1
    manifest["episodes"] = {k: v for k, v in manifest["episodes"].items() if "/trial-" not in k}
    manifest_path.write_text(json.dumps(manifest, ensure_ascii=False, indent=2), "utf-8")
    out = root / "out"
    result = runner.invoke(
        app, ["run", "--cassettes", str(cassettes), "--out", str(out), "-j", "1"]
    )
    assert result.exit_code == 0, result.output
    return out / "results.json"


@pytest.fixture(scope="module")
def one(one_trial: Path) -> dict[str, Any]:
    return json.loads(one_trial.read_text(encoding="utf-8"))


def parse(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html5lib")


def text(node: Any) -> str:
    return " ".join(node.get_text(" ", strip=True).split())


def flipped(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` with loop+atomic/beijing failing (a hedged answer) and
    single+atomic/beijing passing, in its episodes, trial outcomes and summaries."""
    out = copy.deepcopy(results)
    for ep in out["episodes"]:
        key = (ep["configuration"], ep["question_id"])
        if key == ("loop+atomic", "beijing"):
            ep.update(passed=False, answer=HEDGED)
            ep["transcript"][-1] = {**ep["transcript"][-1], "content": HEDGED}
            ep["failure_modes"] = [{"mode": "no_measurement", "explanation": "", "evidence": None}]
        elif key == ("single+atomic", "beijing"):
            ep.update(passed=True)
            ep["failure_modes"] = []
    for t in out.get("trial_outcomes") or []:
        key = (t["configuration"], t["question_id"], t["trial"])
        if key == ("loop+atomic", "beijing", 1):
            t.update(passed=False, failure_modes=["no_measurement"])
        if key == ("single+atomic", "beijing", 1):
            t.update(passed=True, failure_modes=[])
    for c in out["configurations"]:
        if c["name"] == "loop+atomic":
            c["passed"] -= 1
        if c["name"] == "single+atomic":
            c["passed"] += 1
    return out


# --------------------------------------------------------------------------- toolreplay diff


def test_trial_counts_are_read_from_the_results(five: dict[str, Any], one: dict[str, Any]) -> None:
    a = load_run(RESULTS)
    b = Run(label="one", results=one)
    assert (trial_count(a.results), trial_count(b.results)) == (5, 1)
    legacy = {k: v for k, v in five.items() if k not in ("trials", "trial_outcomes", "selection")}
    legacy["configurations"] = [
        {k: v for k, v in c.items() if k in ("name", "passed", "total", "avg_rounds",
         "avg_tool_calls", "recorded_wall_time_s", "avg_tokens", "stop_reasons", "failure_modes")}
        for c in five["configurations"]
    ]  # fmt: skip
    assert trial_count(Run(label="old", results=legacy).results) == 1


def test_diff_names_the_trial_difference_instead_of_no_differences(one_trial: Path) -> None:
    result = runner.invoke(app, ["diff", str(RESULTS), str(one_trial)])
    assert result.exit_code == 0, result.output  # trial 1 compared: nothing flipped
    lines = result.output.splitlines()
    assert "no differences" not in lines
    assert lines[2].startswith("comparable: trial 1 only (same questions")
    assert f"  trials differ: {NOTE}" in lines
    assert "no differences in trial 1" in lines
    assert (
        "  single+oneshot: trial 1 4/4 → 4/4; over trials 19/20 (95%, 5 trials) → 4/4 (100%, "
        "1 trial); 0 regressions, 0 improvements"
    ) in lines


def test_same_trials_and_outcomes_are_still_no_differences() -> None:
    d = diff_runs(load_run(RESULTS), load_run(RESULTS))
    assert d.identical and d.trial_note is None
    assert format_diff(d)[-1] == "no differences"


def test_a_different_trial_outcome_is_a_difference(five: dict[str, Any]) -> None:
    later = copy.deepcopy(five)
    outcome = next(t for t in later["trial_outcomes"] if t["trial"] == 3 and not t["passed"])
    outcome["passed"] = True
    d = diff_runs(Run(label="a", results=five), Run(label="b", results=later))
    assert not d.changes and not d.identical  # trial 1 equal, trial 3 not
    (score,) = [s for s in d.scores if s.over_trials[0] != s.over_trials[1]]
    assert score.over_trials[1][0] == score.over_trials[0][0] + 1


def test_regressions_and_improvements_are_counted_per_configuration(
    one: dict[str, Any],
) -> None:
    d = diff_runs(Run(label="a", results=one), Run(label="b", results=flipped(one)))
    assert (d.regressions, d.improvements) == (1, 1)
    per = {s.name: (s.regressions, s.improvements) for s in d.scores}
    assert per == {
        "single+oneshot": (0, 0),
        "loop+oneshot": (0, 0),
        "single+atomic": (0, 1),
        "loop+atomic": (1, 0),
    }
    lines = format_diff(d)
    assert any(line.startswith("  loop+atomic: trial 1 4/4 → 3/4;") and
               line.endswith("1 regression, 0 improvements") for line in lines)  # fmt: skip


# --------------------------------------------------------------------------- the page


def test_page_names_the_trial_difference_and_rates_side_by_side(
    five: dict[str, Any], one: dict[str, Any]
) -> None:
    page = parse(render_report(one, compare=Run(label="reports/results.json", results=five)))
    section = page.select_one("#compare")
    assert NOTE in text(section.select_one(".trial-note"))
    assert "The two runs are comparable" not in text(section)
    assert "No differences" not in text(section)
    assert "Trial 1 of the two runs is comparable" in text(section)
    verdict = text(page.select_one("#verdict a[href='#compare']"))
    assert verdict == "0 flips in trial 1 since reports/results.json (5 trials before, 1 after)"
    rows = {
        tr["data-c"]: [text(td) for td in tr.select("td")]
        for tr in section.select("table.cmp-scores tbody tr")
    }
    assert rows["single+oneshot"] == [
        "5 → 1",
        "4/4 → 4/4",
        "19/20 (95%) → 4/4 (100%) (not comparable)",
        "0",
        "0",
        # issue 32: the paired test (no question changed its trial-1 verdict)
        "0.00 p = 1.00, not distinguishable from noise (exact McNemar on trial 1)",
    ]
    assert rows["single+atomic"][2].startswith("0/20 (0%) → 0/4 (0%)")
    # the grid: before → after in every cell
    cells = {
        td["data-configuration"]: text(td.select_one(".cmp-cell"))
        for td in page.select("#grid td.cell[data-configuration]")
    }
    assert cells["single+oneshot"] == (
        "before → after: 4/4 → 4/4 · over trials 95% → 100% (5 → 1 trials)"
    )
    assert len(cells) == 4


def test_identical_runs_say_no_differences_without_a_trial_note(five: dict[str, Any]) -> None:
    page = parse(render_report(five, compare=Run(label="copy", results=copy.deepcopy(five))))
    section = page.select_one("#compare")
    assert section.select_one(".trial-note") is None
    assert "No differences" in text(section)
    assert text(page.select_one("#verdict a[href='#compare']")) == "no differences since copy"


def test_regressions_show_in_the_table_and_the_grid(one: dict[str, Any]) -> None:
    page = parse(render_report(flipped(one), compare=Run(label="before", results=one)))
    section = page.select_one("#compare")
    assert "1 regression (pass → fail), 1 improvement (fail → pass)" in text(section)
    row = section.select_one("table.cmp-scores tr[data-c='loop+atomic']")
    assert text(row.select_one("td[data-label='regressions']")) == "1"
    assert "regress" in row.select_one("td[data-label='regressions']")["class"]
    flips = {
        text(tr.select_one("th")): tr["class"] for tr in section.select("table.changes tbody tr")
    }
    assert flips == {
        "loop+atomic/beijing": ["flip"],
        "single+atomic/beijing": ["flip", "improve"],
    }
    cell = page.select_one("#grid td[data-configuration='loop+atomic'] .cmp-cell")
    assert "changed" in cell["class"]
    assert text(cell) == "before → after: 4/4 → 3/4 · 1 pass → fail, 0 fail → pass"


def test_identical_leading_messages_fold_and_the_changed_one_is_diffed_word_by_word(
    one: dict[str, Any],
) -> None:
    after = flipped(one)
    ep = next(e for e in after["episodes"] if e["question_id"] == "beijing" and
              e["configuration"] == "loop+atomic")  # fmt: skip
    ep["transcript"][-1]["content"] = HEDGED + " <b>x</b> & 1"
    html = render_report(after, compare=Run(label="before", results=one))
    page = parse(html)
    (side,) = [
        d for d in page.select("#compare details.side-by-side")
        if "loop+atomic/beijing" in text(d.select_one("summary"))
    ]  # fmt: skip
    n = len(ep["transcript"]) - 1  # every message before the last one is identical
    folded = side.select_one("tr.folded details")
    assert text(folded.select_one("summary")) == f"{n} identical messages (#0–#{n - 1})"
    assert len(folded.select(".folded-msg")) == n
    rows = [r for r in side.select("table.sbs > tbody > tr")]
    assert len(rows) == 2 and "first" in rows[1]["class"]
    (wd,) = side.select(".word-diff")
    deleted = "".join(d.get_text() for d in wd.select(".wd del"))
    inserted = "".join(i.get_text() for i in wd.select(".wd ins"))
    assert "30.9°C" in deleted and "我再查一下具体" in inserted
    assert "<b>x</b>" in inserted and "&" in inserted  # escaped text, not markup
    assert wd.select_one(".wd b") is None and "&lt;b&gt;x&lt;/b&gt; &amp; 1" in html
    # deterministic
    assert render_report(after, compare=Run(label="before", results=one)) == html


def test_word_diff_marks_words_and_characters() -> None:
    assert word_diff("the cat sat", "the dog sat") == [
        {"op": "same", "text": "the "},
        {"op": "del", "text": "cat"},
        {"op": "ins", "text": "dog"},
        {"op": "same", "text": " sat"},
    ]
    # a number is one word; CJK characters are words of their own
    assert word_diff("气温 30.9°C", "气温 31.1°C") == [
        {"op": "same", "text": "气温 "},
        {"op": "del", "text": "30.9"},
        {"op": "ins", "text": "31.1"},
        {"op": "same", "text": "°C"},
    ]
    assert word_diff("same", "same") == [{"op": "same", "text": "same"}]


def test_word_diff_of_long_messages_keeps_their_common_ends_and_stays_quick() -> None:
    import time

    a = "start " + " ".join(f"a{n}" for n in range(3000)) + " end"
    b = "start " + " ".join(f"b{n}" for n in range(3000)) + " end"
    began = time.perf_counter()
    parts = word_diff(a, b)
    assert time.perf_counter() - began < 1.0  # the middle is too large to match: whole
    assert [p["op"] for p in parts] == ["same", "del", "ins", "same"]
    assert parts[0]["text"] == "start " and parts[-1]["text"] == "2999 end"
    assert "".join(p["text"] for p in parts if p["op"] != "ins") == a
    assert "".join(p["text"] for p in parts if p["op"] != "del") == b


# --------------------------------------------------------------------------- in a browser


def _browser() -> tuple[str, str] | None:
    node, chromium = shutil.which("node"), shutil.which("chromium")
    if node is None or chromium is None:
        return None
    if not (TOOLS / "node_modules" / "playwright-core").is_dir():
        return None
    return node, chromium


#: The browser side: opens every fold of the compare section at 1280 and 390 px and prints
#: what it says and which of its headers overlap or overflow.
DRIVER = Path(__file__).with_name("report_compare_driver.mjs")


@pytest.mark.slow
def test_compare_page_in_a_browser_names_trials_and_headers_do_not_overlap(
    one: dict[str, Any], five: dict[str, Any], tmp_path: Path
) -> None:
    found = _browser()
    if found is None:
        pytest.skip("needs node, chromium and `cd tools && npm install` (playwright-core)")
    node, chromium = found
    page = tmp_path / "index.html"
    page.write_text(
        render_report(flipped(one), compare=Run(label="reports/results.json", results=five)),
        encoding="utf-8",
    )
    done = subprocess.run(
        [node, str(DRIVER), page.as_uri(), chromium],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "TOOLS": str(TOOLS)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    for width in ("1280", "390"):
        at = seen[width]
        assert at["errors"] == []
        assert at["note_visible"] and NOTE in at["note"]
        assert at["verdict"] == (
            "2 flips in trial 1 since reports/results.json (5 trials before, 1 after)"
        )
        assert ["single+oneshot", "5 → 1", "19/20 (95%) → 4/4 (100%) (not comparable)"] in at[
            "trials_cells"
        ]
        assert at["grid_cells"]["loop+atomic"].startswith("before → after: 4/4 → 3/4")
        assert at["headers"] > 10
        assert at["overlapping"] == [], at["overlapping"]
        assert at["overflowing"] == [], at["overflowing"]
        assert at["scroll_width"] <= int(width)
        assert at["axe"] in (None, []), at["axe"]  # None: axe-core not installed
