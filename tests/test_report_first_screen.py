"""The report's first screen in a browser: the scorecard (every configuration's row and the
baseline-audit badge) fits the first screen at 1280 × 800 and 390 × 844 px on every committed
report, and a failure reason in it opens the episode table filtered to that configuration and
reason. The browser side is ``tests/report_first_screen_driver.mjs``; it needs node, chromium
and ``cd tools && npm install`` (playwright-core) and skips without them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from toolreplay.report.render import render_report

from .test_report_script import TOOLS, _browser

REPO = Path(__file__).resolve().parents[1]

#: Every committed report's results: the pages are rendered from them, so they are current.
SETS = {
    "reference": REPO / "reports" / "results.json",
    "hard": REPO / "reports" / "hard" / "results.json",
    "llama": REPO / "reports" / "llama-gemma3-270m" / "results.json",
    "stream": REPO / "reports" / "stream" / "results.json",
    **{
        name: REPO / "examples" / name / "report" / "results.json"
        for name in (
            "stock_agent",
            "streamed_loop",
            "agents_responses",
            "anthropic_agent",
            "pydantic_ai_responses",
            "gemini_agent",
        )
    },
}

DRIVER = Path(__file__).with_name("report_first_screen_driver.mjs")

HEIGHT = {"1280": 800, "390": 844}

pytestmark = pytest.mark.slow  # a browser on every committed report, as the other browser tests


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    found = _browser()
    if found is None:
        pytest.skip("needs node, chromium and `cd tools && npm install` (playwright-core)")
    node, chromium = found
    folder = tmp_path_factory.mktemp("first-screen")
    urls = {}
    for name, results in SETS.items():
        page = folder / f"{name}.html"
        page.write_text(render_report(json.loads(results.read_text("utf-8"))), "utf-8")
        urls[page.as_uri()] = name
    done = subprocess.run(
        [node, str(DRIVER), chromium, *urls],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TOOLS": str(TOOLS)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {urls[u]: v for u, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}


@pytest.mark.parametrize("name", list(SETS))
@pytest.mark.parametrize("width", ["1280", "390"])
def test_the_scorecard_is_on_the_first_screen(seen: dict[str, Any], name: str, width: str) -> None:
    page = seen[name][width]
    assert page["errors"] == []
    assert page["rows"], "a scorecard row per configuration"
    assert max(page["rows"]) <= HEIGHT[width], page["rows"]
    assert page["badge"] <= HEIGHT[width]
    assert page["scroll_width"] <= int(width)


@pytest.mark.parametrize("width", ["1280", "390"])
def test_a_reason_opens_the_filtered_episode_table(seen: dict[str, Any], width: str) -> None:
    page = seen["reference"][width]
    # the worst configuration first: single+atomic, its top reason counted over five trials
    assert page["filter"] == "#f:fail=1&c=single%2Batomic&m=empty_answer&t=all"
    assert page["hash"] == "#f:fail=1&c=single+atomic&m=empty_answer&t=all"
    assert page["controls"] == ["single+atomic", "empty_answer", True]
    shown = page["shown"]
    # 13 trials of single+atomic ended on an empty answer (the scorecard's "×13")
    assert len(shown) == 13
    assert all(c == "single+atomic" and p == "0" and "empty_answer" in m for c, _, _, p, m in shown)
    assert {t for _, _, t, _, _ in shown} > {"1"}  # later trials are listed too
    assert abs(page["table_top"]) < 200  # scrolled to the table
