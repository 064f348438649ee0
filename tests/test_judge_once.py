"""Judge once: a run assesses each episode once, in the process that replayed it (a worker, or
the run's own process with one worker), and everything after the replay reads those
assessments; the audit's narrow judge, a judgment of its own, is made there too. That the
results and report are the same whatever the workers: tests/test_parallel.py."""

from __future__ import annotations

import os
import pickle
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.evals import load_eval
from toolreplay.evaluation import ReplayedSet, Selection
from toolreplay.judging import assessment
from toolreplay.judging.verdicts import FULL_JUDGE, NARROW_JUDGE
from toolreplay.runs.replay import replay_outcomes

from .conftest import EVAL_FILE, REFERENCE

runner = CliRunner()


def _count_assessments(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    """Every call of ``assess`` or ``passed_by`` (wherever it was imported) appends ``PID JUDGE
    KEY`` to ``log``: a file, so that calls made in forked workers are counted too."""
    for name in ("assess", "passed_by"):
        real = getattr(assessment, name)

        def counted(episode, question=None, judge=FULL_JUDGE, real=real):
            key = f"{episode.configuration}/{episode.question_id}/{episode.trial}"
            with log.open("a", encoding="utf-8") as f:
                f.write(f"{os.getpid()} {judge.name} {key}\n")
            return real(episode, question, judge)

        for module in list(sys.modules.values()):
            if getattr(module, "__name__", "").startswith("toolreplay") and (
                getattr(module, name, None) is real
            ):
                monkeypatch.setattr(module, name, counted)


def _calls(log: Path) -> list[tuple[int, str, str]]:
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [(int(pid), judge, key) for pid, judge, key in (line.split(" ") for line in lines)]


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])  # a pool
def test_a_run_assesses_each_episode_once_where_it_was_replayed(monkeypatch, tmp_path, workers):
    log = tmp_path / "assess.log"
    _count_assessments(monkeypatch, log)
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["run", "--workers", str(workers), "--out", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    calls = _calls(log)
    jobs, _ = ReplayedSet(REFERENCE).jobs(load_eval(EVAL_FILE), Selection())
    every = {f"{j.configuration.name}/{j.question_id}/{j.trial}" for j in jobs}
    by_run_judge = Counter(key for _, judge, key in calls if judge == FULL_JUDGE.name)
    # every episode the run replayed (its trials and the audit's), each assessed exactly once
    assert set(by_run_judge) == every
    assert set(by_run_judge.values()) == {1}
    # the audit's narrow judge: trial 1 only, once each; no other judge judges an episode
    by_narrow = Counter(key for _, judge, key in calls if judge == NARROW_JUDGE.name)
    assert set(by_narrow) == {k for k in every if k.endswith("/1")}
    assert set(by_narrow.values()) == {1}
    assert {judge for _, judge, _ in calls} == {FULL_JUDGE.name, NARROW_JUDGE.name}
    here = [key for pid, _, key in calls if pid == os.getpid()]
    if workers == 1:
        assert len(here) == len(calls)
    else:  # the workers judged: here only the episode replayed before the pool started
        assert len({key for key in here}) <= 1
        assert len({pid for pid, _, _ in calls}) >= 2
    assert (out / "results.json").is_file()


def test_an_assessed_episode_pickles_as_it_was():
    suite = load_eval(EVAL_FILE)
    manifest_jobs, _ = ReplayedSet(REFERENCE, audit=False).jobs(suite, Selection())
    from toolreplay.cassettes.manifest import read_manifest

    outcomes = replay_outcomes(
        REFERENCE, read_manifest(REFERENCE), suite, manifest_jobs[:3], judge=FULL_JUDGE,
        others=(NARROW_JUDGE,),
    )  # fmt: skip
    for outcome in outcomes:
        assert isinstance(outcome, assessment.AssessedEpisode)
        assert outcome.others if outcome.trial == 1 else not outcome.others
        if outcome.trial == 1:  # the narrow judge's pass rule, without its whole assessment
            question = suite.question(outcome.episode.question_id)
            narrow = assessment.assess(outcome.episode, question, NARROW_JUDGE)
            assert outcome.others == (narrow.passed,)
        assert pickle.loads(pickle.dumps(outcome)) == outcome
        question = suite.question(outcome.episode.question_id)
        assert outcome.assessment == assessment.assess(outcome.episode, question, FULL_JUDGE)


def _collected(which: str):
    from toolreplay.evaluation import SuiteCassettes

    if which == "reference":
        return ReplayedSet(REFERENCE, audit=False).collect(
            load_eval(EVAL_FILE), Selection(), FULL_JUDGE, None
        )
    example = Path(__file__).resolve().parents[1] / "examples" / "stock_agent"
    module = example / "cassettes" / "test_agent"
    cassettes = [("test_agent", p) for p in sorted(module.glob("*.yaml"))]
    source = SuiteCassettes(example / "cassettes", cassettes, write_manifest=False)
    return source.collect(load_eval(example / "eval.yaml"), Selection(), FULL_JUDGE, None)


@pytest.mark.parametrize("which", ["reference", "stock_agent"])
def test_passed_by_is_the_pass_rule_of_a_whole_assessment(which):
    """``passed_by`` decides no more than the pass rule needs (no classification after a
    failed verdict) and agrees with ``assess(...).passed`` on every episode, by every judge:
    the reference set's (passes and failures of each kind) and an example's, whose questions
    carry expectations (tool used, order, arguments)."""
    collected = _collected(which)
    seen: Counter[tuple[bool, bool]] = Counter()
    for item in collected.episodes:
        question = collected.suite.by_id.get(item.episode.question_id)
        for judge in (FULL_JUDGE, NARROW_JUDGE):
            whole = assessment.assess(item.episode, question, judge)
            assert assessment.passed_by(item.episode, question, judge) is whole.passed
            seen[whole.passed, whole.verdict.passed] += 1
    assert seen[True, True] and seen[False, False]  # passes, and failures by the verdict
    if which == "stock_agent":  # and verdicts that passed, failed by a mode or expectation
        assert seen[False, True]
