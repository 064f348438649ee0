"""``toolreplay diff`` of cassette sets recorded from different eval files says so, naming
both, that a diff compares runs of one eval file, and what to do, before anything is replayed
(``cli.diff.check_one_eval_file``), instead of a cassette miss advising a re-recording
(issue 34)."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from toolreplay.cli.diff import check_one_eval_file, recorded_eval_file
from toolreplay.cli.main import app

from .conftest import REPO

runner = CliRunner()

REFERENCE = REPO / "cassettes" / "reference"  # recorded from evals/weather.yaml
HARD = REPO / "cassettes" / "hard"  # recorded from evals/weather-hard.yaml
RESULTS = REPO / "reports" / "results.json"


def _diff(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["diff", *args], env={"COLUMNS": "400"})
    return result.exit_code, " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())


def test_diff_of_sets_from_different_eval_files_names_both_and_says_what_to_do() -> None:
    code, said = _diff(str(REFERENCE), str(HARD))
    assert code == 2
    assert "different eval files" in said
    assert "evals/weather.yaml" in said and "evals/weather-hard.yaml" in said
    assert "a diff compares two runs of one eval file" in said
    assert "same --eval" in said
    assert "record it" not in said and "cassette not found" not in said  # no re-record advice


def test_diff_of_sets_judged_with_another_eval_file_gives_the_command() -> None:
    code, said = _diff(str(HARD), str(HARD))
    assert code == 2
    assert "recorded from evals/weather-hard.yaml, not evals/weather.yaml" in said
    assert f"toolreplay diff {HARD} {HARD} --eval evals/weather-hard.yaml" in said


def test_a_set_against_results_is_checked_too() -> None:
    code, said = _diff(str(HARD), str(RESULTS))
    assert code == 2 and "--eval evals/weather-hard.yaml" in said


def test_sets_of_the_eval_file_in_use_pass_the_check(tmp_path: Path) -> None:
    assert recorded_eval_file(REFERENCE) == "evals/weather.yaml"
    assert recorded_eval_file(RESULTS) is None and recorded_eval_file(tmp_path) is None
    check_one_eval_file(REFERENCE, REFERENCE, None)  # the default eval file: nothing raised
    check_one_eval_file(HARD, RESULTS, REPO / "evals" / "weather-hard.yaml")


def test_report_compare_with_a_set_of_another_eval_file_gives_the_command(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["report", "--compare", str(HARD), "--out", str(tmp_path / "i.html")],
        env={"COLUMNS": "400"},
    )
    said = " ".join(result.output.split())
    assert result.exit_code == 2
    assert "recorded from evals/weather-hard.yaml, not evals/weather.yaml" in said
    assert f"toolreplay report --compare {HARD} --eval evals/weather-hard.yaml" in said
    assert "cassette not found" not in said and not (tmp_path / "i.html").exists()


def test_run_of_a_set_of_another_eval_file_also_offers_its_eval_file(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["run", "--cassettes", str(REPO / "cassettes"), "--set", "hard", "-j", "1",
         "--out", str(tmp_path / "out")],
        env={"COLUMNS": "400"},
    )  # fmt: skip
    said = " ".join(result.output.split())
    assert result.exit_code == 1
    assert "to replay hard as recorded, give the eval file it was recorded from" in said
    assert "--eval evals/weather-hard.yaml" in said
