"""A 1,000-episode run as ``toolreplay report`` writes it: the report page stays under 1.2 MB
(its transcripts on a page of their own), and in a browser the episode table and the question
matrix show a page of rows at a time (100 rows and 50 questions; 25 and 10 on a phone) with a
pager, a filter narrows what is paged, "show all" and printing show every row. The browser side
is ``tests/report_pages_driver.mjs``; it needs node, chromium and ``cd tools && npm install``
(playwright-core) and skips without them."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app

from .conftest import with_summaries
from .test_report_script import TOOLS, _browser

RESULTS = Path(__file__).resolve().parents[1] / "reports" / "results.json"

DRIVER = Path(__file__).with_name("report_pages_driver.mjs")


def thousand_episodes() -> dict[str, Any]:
    """The committed reference set's 16 episodes (trial 1) repeated as 250 questions × 4
    configurations: 1,000 episodes, each question id and text its own."""
    committed = json.loads(RESULTS.read_text(encoding="utf-8"))
    trial_fields = ("trials", "trial_outcomes", "trial_episodes", "selection", "mutation")
    doc = {k: v for k, v in committed.items() if k not in trial_fields}
    base = {(e["configuration"], e["question_id"]): e for e in committed["episodes"]}
    question_ids = list(dict.fromkeys(e["question_id"] for e in committed["episodes"]))
    episodes = []
    for n in range(250):
        source = question_ids[n % len(question_ids)]
        for c in committed["configurations"]:
            ep = copy.deepcopy(base[(c["name"], source)])
            ep["question_id"] = f"q{n:04d}"
            ep["question"] = f"{ep['question']} ({n})"
            episodes.append(ep)
    doc["episodes"] = episodes
    for c in doc["configurations"]:
        c.pop("questions", None)
    return with_summaries(doc)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("large")
    (folder / "results.json").write_text(json.dumps(thousand_episodes()), encoding="utf-8")
    result = CliRunner().invoke(app, ["report", "--results", str(folder)])
    assert result.exit_code == 0, result.output
    return folder / "index.html"


@pytest.mark.slow
def test_a_thousand_episode_page_stays_under_1_2_mb(written: Path) -> None:
    assert written.stat().st_size <= 1_200_000
    assert (written.parent / "index-transcripts.html").is_file()  # the transcripts apart
    assert (written.parent / "index-episodes.csv").read_text("utf-8").count("\n") == 1001


@pytest.fixture(scope="module")
def seen(written: Path) -> dict[str, Any]:
    found = _browser()
    if found is None:
        pytest.skip("needs node, chromium and `cd tools && npm install` (playwright-core)")
    node, chromium = found
    done = subprocess.run(
        [node, str(DRIVER), written.as_uri(), chromium],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TOOLS": str(TOOLS)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.slow
def test_the_table_and_matrix_show_a_page_at_a_time(seen: dict[str, Any]) -> None:
    wide, phone = seen["1280"], seen["390"]
    assert wide["errors"] == [] and phone["errors"] == []
    assert (wide["rows"], wide["questions"]) == (100, 50)
    assert wide["pagers"] == ["rows 1–100 of 1000", "questions 1–50 of 250"]
    assert (phone["rows"], phone["questions"]) == (25, 10)
    assert phone["pagers"] == ["rows 1–25 of 1000", "questions 1–10 of 250"]
    # the whole page stays a few dozen screens tall, not a hundred
    assert wide["height"] < 30 * 800 and phone["height"] < 30 * 844


@pytest.mark.slow
def test_the_pager_moves_and_a_filter_narrows_what_is_paged(seen: dict[str, Any]) -> None:
    wide = seen["1280"]
    label, rows, first_after, first_before = wide["next"]
    assert (label, rows) == ("rows 101–200 of 1000", 100)
    assert first_after != first_before
    # 250 episodes of single+atomic: the first page of them, all of that configuration
    assert wide["filtered"] == ["rows 1–100 of 250", 100, True]
    assert wide["all"] == [250]  # "show all"
    assert wide["printed"] == 1000  # printing shows every row
