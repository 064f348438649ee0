"""``toolreplay diff``: two results files or two cassette sets; exactly the episode that changed
is listed, identical runs say "no differences" and exit 0, a flip exits 1, and runs that differ
in questions, prompt or judge are called not comparable."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolreplay.cassettes.manifest import cassette_path
from toolreplay.cli.main import app
from toolreplay.diff import (
    DiffError,
    MessageDifference,
    Run,
    diff_runs,
    first_difference,
    load_run,
)
from toolreplay.diff_text import format_diff

from .conftest import with_summaries

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "reports" / "results.json"
REFERENCE = REPO / "cassettes" / "reference"
EVAL = REPO / "evals" / "weather.yaml"
ANSWER = "北京今天阴，当前气温 30.9°C，最高 31.1°C，最低 20.5°C。"
HEDGED = "北京今天阴，我再查一下具体气温。"

runner = CliRunner()


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def episode(results: dict[str, Any], configuration: str, question_id: str) -> dict[str, Any]:
    return next(
        e
        for e in results["episodes"]
        if e["configuration"] == configuration and e["question_id"] == question_id
    )


def write(path: Path, results: dict[str, Any]) -> Path:
    """``results`` as a run would write them: summaries recomputed from the edited episodes."""
    path.write_text(json.dumps(with_summaries(results), ensure_ascii=False), encoding="utf-8")
    return path


def test_identical_results_say_no_differences(tmp_path: Path) -> None:
    copy_ = tmp_path / "copy.json"
    shutil.copy(RESULTS, copy_)
    result = runner.invoke(app, ["diff", str(RESULTS), str(copy_)])
    assert result.exit_code == 0, result.output
    assert "no differences" in result.output
    assert "comparable: yes" in result.output


def test_one_flipped_episode_is_listed_exactly(committed: dict[str, Any], tmp_path: Path) -> None:
    after = copy.deepcopy(committed)
    ep = episode(after, "loop+atomic", "beijing")
    ep.update(passed=False, answer=HEDGED, rounds=4, tool_calls=3)
    ep["transcript"][-1]["content"] = HEDGED
    ep["failure_modes"] = [{"mode": "no_measurement", "explanation": "", "evidence": None}]
    result = runner.invoke(app, ["diff", str(RESULTS), str(write(tmp_path / "b.json", after))])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert [line for line in lines if line.startswith("FLIP")] == [
        "FLIP loop+atomic/beijing: pass → fail"
    ]
    assert "1 flip, 1 changed episode" in lines
    assert "    failure modes gained: no_measurement" in lines
    assert "    rounds: 3 → 4 (+1)" in lines
    assert "    tool calls: 2 → 3 (+1)" in lines
    at = lines.index("    first differing message #6:")
    assert lines[at + 1] == f'      A assistant: "{ANSWER}"'
    assert lines[at + 2] == f'      B assistant: "{HEDGED}"'


def test_changes_without_a_flip_exit_zero(committed: dict[str, Any]) -> None:
    after = copy.deepcopy(committed)
    ep = episode(after, "single+atomic", "beijing")
    ep["failure_modes"] = []  # the failure stays, its label is lost
    d = diff_runs(Run("a", committed), Run("b", after))
    assert [c.key for c in d.changes] == ["single+atomic/beijing"]
    assert d.changes[0].lost == ("empty_answer",) and not d.flips
    assert "     single+atomic/beijing: still fail" in format_diff(d)


def test_runs_that_differ_in_prompt_questions_or_judge_are_not_comparable(
    committed: dict[str, Any],
) -> None:
    after = copy.deepcopy(committed)
    after["judge"] = "celsius-only"
    for ep in after["episodes"]:
        ep["transcript"][0]["content"] += " 请简洁。"
        if ep["question_id"] == "hottest":
            ep["question"] = "北京、上海、广州哪里最热？"
    d = diff_runs(Run("a", committed), Run("b", after))
    assert not d.comparable
    assert d.differing == ["questions", "system prompt", "judge"]
    text = "\n".join(format_diff(d))
    assert "comparable: NO, these differ: questions, system prompt, judge" in text
    assert "worded differently: hottest" in text


def test_first_difference_past_the_end() -> None:
    a = [{"role": "user", "content": "q"}]
    b = [*a, {"role": "assistant", "content": None, "tool_calls": []}]
    assert first_difference(a, b) == MessageDifference(
        index=1, a="(no message)", b="assistant: content null"
    )
    assert first_difference(a, list(a)) is None


def test_bad_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DiffError, match="neither a results file nor a cassette set"):
        load_run(tmp_path)
    result = runner.invoke(app, ["diff", str(RESULTS), str(tmp_path / "missing.json")])
    assert result.exit_code == 2
    assert "results file not found" in result.output


@pytest.mark.slow
def test_cassette_sets_are_replayed_and_the_changed_episode_is_the_only_flip(
    tmp_path: Path,
) -> None:
    """A copy of the reference set whose loop+atomic/beijing cassette now holds a hedged final
    reply (as a re-recording with a different model reply would): the diff replays both sets
    and lists exactly that flip, with the comparable fingerprint read from both manifests."""
    other = tmp_path / "other"
    shutil.copytree(REFERENCE, other)
    cassette = cassette_path(other, "loop+atomic", "beijing")
    body = cassette.read_text(encoding="utf-8")
    assert body.count(ANSWER) == 1
    cassette.write_text(body.replace(ANSWER, HEDGED), encoding="utf-8")
    # as a re-recording would: the manifest holds the new cassette's sha256
    manifest = json.loads((other / "manifest.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256(cassette.read_bytes()).hexdigest()
    manifest["episodes"]["loop+atomic/beijing"]["cassette_sha256"] = digest
    manifest["cassette_set"] = "other"  # a set is named by its folder
    (other / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = runner.invoke(app, ["diff", str(REFERENCE), str(other), "--eval", str(EVAL)])
    assert result.exit_code == 1, result.output
    assert [line for line in result.output.splitlines() if line.startswith("FLIP")] == [
        "FLIP loop+atomic/beijing: pass → fail"
    ]
    assert "1 flip, 1 changed episode" in result.output
    assert "passed: loop+atomic 4/4 → 3/4" in result.output
    assert "comparable: yes (same questions, system prompt, prompt date, tool schemas" in (
        result.output
    )
    # and the page renders the comparison
    out = tmp_path / "reports" / "index.html"  # not beside the set: among cassettes
    result = runner.invoke(
        app,
        ["report", "--results", str(RESULTS), "--out", str(out), "--compare", str(other)],
    )
    assert result.exit_code == 0, result.output
    assert "loop+atomic/beijing" in out.read_text(encoding="utf-8")


def test_cassette_sets_are_compared_over_every_trial_they_recorded(tmp_path: Path) -> None:
    """Both sets hold 5 trials: the diff replays every trial, so a drop in trials 2–5 alone
    (loop+atomic's final replies hedged there, trial 1 untouched) is seen over trials and
    judged by the paired test over questions and trials, not hidden behind trial 1."""
    other = tmp_path / "other"
    shutil.copytree(REFERENCE, other)
    manifest = json.loads((other / "manifest.json").read_text(encoding="utf-8"))
    changed = 0
    for key, record in manifest["episodes"].items():
        if not key.startswith("loop+atomic/") or record["cassette"].endswith("trial-1.yaml"):
            continue
        cassette = other / record["cassette"]
        lines = cassette.read_text(encoding="utf-8").splitlines(keepends=True)
        last = max(
            i
            for i, line in enumerate(lines)
            if line.lstrip().startswith("content:") and "null" not in line
        )  # the final reply's text
        indent = lines[last][: len(lines[last]) - len(lines[last].lstrip())]
        lines[last] = f"{indent}content: I could not find the weather for that city.\n"
        cassette.write_text("".join(lines), encoding="utf-8")
        record["cassette_sha256"] = hashlib.sha256(cassette.read_bytes()).hexdigest()
        changed += 1
    assert changed == 16  # 4 questions × trials 2–5
    manifest["cassette_set"] = "other"
    (other / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = runner.invoke(app, ["diff", str(REFERENCE), str(other), "--eval", str(EVAL)])
    out = result.output
    assert "loop+atomic: trial 1 4/4 → 4/4; over trials 20/20 (100%, 5 trials) → 4/20 (20%" in out
    line = next(x for x in out.splitlines() if "−0.80" in x)
    assert "paired bootstrap over questions and 5 trials" in line
    assert line.endswith("a real difference")
    assert "no differences in trial 1" in out
    assert result.exit_code == 1, out  # a real drop fails the diff, as a flip would


def test_a_real_drop_over_the_trials_exits_one_without_a_flip(
    committed: dict[str, Any], tmp_path: Path
) -> None:
    """loop+oneshot failing trials 3-5 of every question leaves trial 1 unchanged (no flip) but
    is a real drop in pass rate for the paired bootstrap: exit 1, the drop named; the same
    edit to passing trials of a configuration that improves exits 0."""
    after = copy.deepcopy(committed)
    for t in after["trial_outcomes"]:
        if t["configuration"] == "loop+oneshot" and t["trial"] >= 3:
            t["passed"] = False
    result = runner.invoke(app, ["diff", str(RESULTS), str(write(tmp_path / "b.json", after))])
    assert result.exit_code == 1, result.output
    assert "no differences in trial 1" in result.output and "0 flips" in result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("a real drop")]
    assert line == "a real drop in pass rate (paired test, p < 0.05): loop+oneshot −0.60"
    d = diff_runs(Run("a", committed), Run("b", after))
    assert [s.name for s in d.real_drops] == ["loop+oneshot"] and not d.flips
    # the other way round, B − A is +0.60: a real difference, but not a drop
    better = runner.invoke(app, ["diff", str(tmp_path / "b.json"), str(RESULTS)])
    assert better.exit_code == 0, better.output
    assert "a real difference" in better.output and "a real drop" not in better.output
    help_text = " ".join(runner.invoke(app, ["diff", "--help"]).output.split())
    assert "a real drop in pass rate (B − A below 0, p < 0.05" in help_text
