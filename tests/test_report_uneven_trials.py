"""The report's trial count is said as it is: "each recorded N times" only when every
configuration × question has N trials. A test suite's cassette may hold one conversation twice
and another once (now two questions, not three trials of one: test_suite_folder_conversations),
and the report used to say "each recorded 2 times" of both, from the most trials any question
had (found on crewAI's public cassettes). The study's reports, whose count is uniform, keep
their words (tools/regenerate-reports leaves them byte-identical)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.report.render import build_page, render_report
from toolreplay.report.summary import question_trials, trial_range, trials_text
from toolreplay.results.format import as_results

REPO = Path(__file__).resolve().parents[1]
FOREIGN = REPO / "tests" / "data" / "foreign"
RESULTS = REPO / "reports" / "results.json"
TOOL_CALL = "pydantic-ai-openai-tool-call.yaml"
STREAM = "pydantic-ai-openai-stream.yaml"


def _words(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _cassette(folder: Path, module: str, stem: str, *names: str) -> None:
    interactions = []
    for name in names:
        data = yaml.safe_load((FOREIGN / name).read_text(encoding="utf-8"))
        interactions += data["interactions"]
    (folder / module).mkdir(parents=True, exist_ok=True)
    path = folder / module / f"{stem}.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions}), encoding="utf-8")


@pytest.fixture(scope="module")
def uneven_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, dict[str, Any]]:
    """A suite folder whose one test recorded the Tokyo conversation twice, then the London
    one once: question test_x with 2 trials, test_x~2 with 1."""
    root = tmp_path_factory.mktemp("uneven")
    folder = root / "cassettes"
    _cassette(folder, "test_agent", "test_x", TOOL_CALL, TOOL_CALL, STREAM)
    out = root / "out"
    result = CliRunner().invoke(app, ["run", "--cassettes", str(folder), "--out", str(out)])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return (out / "index.html").read_text(encoding="utf-8"), result.output, doc


def test_the_questions_are_split_and_only_the_repeated_one_has_two_trials(uneven_run) -> None:
    _, _, doc = uneven_run
    assert question_trials(as_results(doc)) == {
        ("test_agent", "test_x"): 2,
        ("test_agent", "test_x~2"): 1,
    }
    assert trial_range(as_results(doc)) == (1, 2) and trials_text(as_results(doc)) == "1–2"


def test_the_report_does_not_say_each_was_recorded_twice(uneven_run) -> None:
    html, _, _ = uneven_run
    words = _words(html)
    assert "recorded 1–2 times (per question)" in words
    assert "each recorded" not in words
    assert "Every configuration × question was recorded" not in words
    assert "Consistency over 1–2 trials" in words
    assert "over all trials (1–2 a question)" in words  # the verdict line
    assert "over 2 trials" not in words


def test_a_transcript_says_its_own_questions_trial_count(uneven_run) -> None:
    words = _words(uneven_run[0])
    assert "test_x · trial 1 of 2" in words and "test_x · trial 2 of 2" in words
    assert "test_x~2 · trial" not in words  # one trial: no "trial 1 of 2"


def test_the_console_says_up_to(uneven_run) -> None:
    out = " ".join(uneven_run[1].split())
    assert "consistency over up to 2 trial(s)" in out


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def test_the_studys_uniform_count_keeps_its_words(committed: dict[str, Any]) -> None:
    page = build_page(committed)
    assert page["header"]["trials_uniform"] and page["header"]["trials_text"] == "5"
    assert page["trials"]["uniform"] and page["trials"]["text"] == "5"
    words = _words(render_report(committed))
    assert "each recorded 5 times" in words
    assert "Every episode was recorded 5 times" in words
    assert "(a cell: over all 5 trials; its boxed score: trial 1)" in words
    assert "Consistency over 5 trials" in words
    assert "times (per question)" not in words


def test_the_study_with_one_question_recorded_fewer_times_says_so(
    committed: dict[str, Any],
) -> None:
    """The grid's wording too (a study's page has one): one question of one configuration
    with 4 trials of 5."""
    doc = copy.deepcopy(committed)
    q = doc["configurations"][0]["questions"][0]
    q["trials"], q["passes"] = 4, min(q["passes"], 4)
    words = _words(render_report(doc))
    assert "recorded 4–5 times (per question)" in words
    assert "The episodes were recorded 4–5 times (per question)" in words
    assert "(a cell: over all trials; its boxed score: trial 1)" in words
    assert "Consistency over 4–5 trials" in words
    assert "each recorded" not in words and "Every episode was recorded" not in words


def test_results_without_per_question_counts_fall_back_to_the_sets(
    committed: dict[str, Any],
) -> None:
    doc = copy.deepcopy(committed)
    for c in doc["configurations"]:
        c.pop("questions", None)
    results = as_results(doc)
    counted = question_trials(results)  # from trial_outcomes
    assert set(counted.values()) == {5}
    doc.pop("trial_outcomes")
    doc.pop("trial_episodes", None)
    assert trial_range(as_results(doc)) == (5, 5)

