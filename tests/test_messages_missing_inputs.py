"""An input that is not there says what to do, not only that it is missing (issue 34): a
test suite's cassette folder an eval file names (``run``, ``mutate``: record it, or name the
folder your tests recorded; ``cli.common.FOLDER_TODO``), and a cassette ``convert`` is given
(``convert``: what to give, and where a set with trials keeps its cassettes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app

from .conftest import REPO

runner = CliRunner()


def _cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "400"})
    return result.exit_code, " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())


@pytest.mark.parametrize("command", ["run", "mutate"])
def test_a_missing_test_suite_folder_says_how_to_record_or_name_it(
    tmp_path: Path, command: str
) -> None:
    text = (REPO / "examples" / "stock_agent" / "eval.yaml").read_text(encoding="utf-8")
    eval_file = tmp_path / "eval.yaml"
    eval_file.write_text(re.sub(r"(?m)^cassettes: .*$", "cassettes: nowhere", text), "utf-8")
    code, said = _cli(command, "--eval", str(eval_file), "--out" if command == "run" else
                      "--show", str(tmp_path / "out") if command == "run" else "1")  # fmt: skip
    assert code == 2
    assert f"cassette folder {tmp_path / 'nowhere'} does not exist" in said
    assert "pytest --record-mode=once" in said and "--cassettes DIR" in said
    assert not (tmp_path / "out").exists()


def test_convert_of_a_missing_cassette_says_what_to_give(tmp_path: Path) -> None:
    code, said = _cli("convert", str(tmp_path / "ningde.yaml"))
    assert code == 1
    assert f"{tmp_path / 'ningde.yaml'} does not exist" in said
    assert "give cassette files or folders of them" in said and "trial-<i>.yaml" in said


def test_report_of_a_cassette_set_says_how_to_get_its_results(tmp_path: Path) -> None:
    code, said = _cli("report", "--results", str(REPO / "cassettes" / "hard"),
                      "--out", str(tmp_path / "i.html"))  # fmt: skip
    assert code == 1
    assert "is a cassette set, not a results file" in said
    assert f"toolreplay run --cassettes {REPO / 'cassettes'} --set hard" in said
    assert not (tmp_path / "i.html").exists()


def test_diff_of_a_folder_of_sets_says_to_name_one() -> None:
    code, said = _cli("diff", str(REPO / "reports" / "results.json"), str(REPO / "cassettes"))
    assert code == 2
    assert "neither a results file nor a cassette set" in said
    assert f"it holds cassette sets: name one, e.g. {REPO / 'cassettes'}/" in said


def test_a_file_that_is_not_results_says_what_to_give(tmp_path: Path) -> None:
    code, said = _cli("report", "--results", str(REPO / "evals" / "weather.yaml"),
                      "--out", str(tmp_path / "i.html"))  # fmt: skip
    assert code == 2
    assert "not valid JSON" in said and "give the results.json `toolreplay run` writes" in said


def test_a_missing_shard_file_says_which_files_to_give(tmp_path: Path) -> None:
    code, said = _cli("merge", str(tmp_path / "shard-1-of-2.json"))
    assert code != 0
    assert "shard file not found" in said and "toolreplay run --shard I/N" in said


def test_a_run_with_selected_episodes_missing_says_so_before_replaying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Selected episodes that were never recorded (questions added to the eval file since)
    end the run before anything is replayed, not after every other episode replayed: the
    first one's error (where it was looked for, how to record it) and how many lack one."""
    text = (REPO / "evals" / "weather.yaml").read_text(encoding="utf-8")
    added = "".join(
        f"  - id: {qid}\n    text: {words}今天天气怎么样？\n    measure: temperature\n"
        f"    day: today\n    places:\n      - {{query: {words}, region: {region}}}\n"
        for qid, words, region in [("fuzhou", "福州", "福建省"), ("xiamen", "厦门", "福建省")]
    )
    eval_file = tmp_path / "weather.yaml"
    eval_file.write_text(text.replace("questions:\n", "questions:\n" + added, 1), "utf-8")
    import toolreplay.runs.replay as replay

    replayed: list[int] = []
    real = replay.replay_outcomes

    def counting(*args: object, **kwargs: object) -> list[object]:
        replayed.append(len(args[3]))  # type: ignore[arg-type]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(replay, "replay_outcomes", counting)
    out = tmp_path / "out"
    code, said = _cli("run", "--eval", str(eval_file), "--cassettes", str(REPO / "cassettes"),
                      "--configurations", "loop+atomic", "--out", str(out))  # fmt: skip
    assert code == 1, said
    # where recording this several-trial set puts it, not the one-trial layout's file
    first = REPO / "cassettes" / "reference" / "loop+atomic" / "fuzhou" / "trial-1.yaml"
    assert f"cassette not found: {first} (episode loop+atomic/fuzhou)" in said, said
    assert "record it: toolreplay record" in said
    trials = len(list((REPO / "cassettes/reference/loop+atomic/ningde").glob("trial-*.yaml")))
    assert f"({2 * trials:,} of the {6 * trials:,} episodes to replay have no cassette)" in said
    assert replayed == [1]  # the one that says why; nothing else
    assert not (tmp_path / "out").exists()
