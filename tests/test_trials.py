"""Repeated trials: the stand-in's per-trial variation, the trials layout, their metrics."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from toolreplay.cassettes.manifest import cassette_path, read_manifest
from toolreplay.cassettes.store import read_cassette
from toolreplay.evals import EvalSuite
from toolreplay.judging.assessment import assess
from toolreplay.judging.verdicts import FULL_JUDGE
from toolreplay.results.format import TrialOutcome
from toolreplay.results.trials import summarize_trials, trial_outcome
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.record import record_stand_in
from toolreplay.runs.trials import replay_trials
from toolreplay.study.weather.hints import Variation, hints_of
from toolreplay.study.weather.standin import StandinPolicy

from .conftest import REFERENCE

ALWAYS = Variation(
    narrate=1.0, shuffle_parallel=1.0, split_parallel=1.0, wrong_pick=1.0, rephrase=1.0
)


def with_variation(suite: EvalSuite, variation: Variation, *ids: str) -> EvalSuite:
    qs = tuple(
        replace(q, extension=replace(hints_of(q), variation=variation))
        for q in suite.questions
        if not ids or q.id in ids
    )
    return replace(suite, questions=qs)


def first_request(config: str, question_id: str) -> dict:
    path = cassette_path(REFERENCE, config, question_id)
    return next(
        i["request"]["parsed_body"]
        for i in read_cassette(path)
        if i["request"]["uri"].endswith("/chat/completions")
    )


def test_trial_one_draws_nothing_whatever_the_probabilities(suite):
    """Trial 1 is the study's behaviour: every recorded trial-1 reply comes back unchanged
    even when every variation is certain."""
    policy = StandinPolicy(with_variation(suite, ALWAYS), seed=7, trial=1)
    count = 0
    for config in ("single+oneshot", "loop+atomic", "single+atomic"):
        for q in suite.questions:
            for i in read_cassette(cassette_path(REFERENCE, config, q.id)):
                if i["request"]["uri"].endswith("/chat/completions"):
                    assert (
                        policy.reply(i["request"]["parsed_body"])
                        == (i["response"]["body"]["parsed_body"])
                    )
                    count += 1
    assert count >= 25


def test_variation_is_a_function_of_request_seed_and_trial(suite):
    body = first_request("loop+oneshot", "hottest")
    always = with_variation(suite, ALWAYS)

    def calls(seed: int, trial: int) -> list[str]:
        reply = StandinPolicy(always, seed=seed, trial=trial).reply(body)
        return [c["function"]["arguments"] for c in reply["choices"][0]["message"]["tool_calls"]]

    study = calls(0, 1)
    assert [json.loads(a)["city"] for a in study] == ["北京", "上海", "广州"]
    for trial in (2, 3, 4):
        varied = calls(0, trial)
        assert varied == calls(0, trial)  # deterministic
        assert len(varied) == 2  # split: the last place waits a round
        assert varied != study[:2]  # shuffled (certain): another order
    # with no variation declared, a later trial is the study's behaviour too
    plain = with_variation(suite, Variation())
    reply = StandinPolicy(plain, seed=0, trial=5).reply(body)
    assert [c["function"]["arguments"] for c in reply["choices"][0]["message"]["tool_calls"]] == (
        study
    )


def test_draws_differ_between_trials_and_seeds(suite):
    body = first_request("loop+atomic", "beijing")
    half = with_variation(suite, Variation(wrong_pick=0.5, rephrase=0.5, narrate=0.5))
    # the first reply geocodes; the second (after the candidates) picks; compare picks
    second = None
    for i in read_cassette(cassette_path(REFERENCE, "loop+atomic", "beijing")):
        if (
            i["request"]["uri"].endswith("/chat/completions")
            and second is None
            and len(i["request"]["parsed_body"]["messages"]) > len(body["messages"])
        ):
            second = i["request"]["parsed_body"]
    assert second is not None
    picks = {
        (seed, trial): json.dumps(
            StandinPolicy(half, seed=seed, trial=trial).reply(second)["choices"][0]["message"],
            ensure_ascii=False,
        )
        for seed in (0, 1)
        for trial in range(2, 12)
    }
    assert len(set(picks.values())) >= 2
    assert any(picks[(0, t)] != picks[(1, t)] for t in range(2, 12))


@pytest.mark.slow
def test_record_trials_layout_and_replay(suite, tmp_path, loopback):
    """--trials 3: CONFIG/QUESTION/trial-<i>.yaml, trial 1 byte-identical to the study's
    cassette, later trials varied as the eval file says; replay reads every trial."""
    small = with_variation(suite, Variation(split_parallel=1.0, shuffle_parallel=0.0), "hottest")
    config = Configuration("single", "oneshot")
    set_dir = tmp_path / "reference"
    manifest = record_stand_in(set_dir, small, [config], trials=3, seed=4)
    assert (manifest.trials, manifest.seed) == (3, 4)
    assert sorted(manifest.episodes) == [
        "single+oneshot/hottest",
        "single+oneshot/hottest/trial-2",
        "single+oneshot/hottest/trial-3",
    ]
    folder = set_dir / "single+oneshot" / "hottest"
    assert sorted(p.name for p in folder.iterdir()) == [
        "trial-1.yaml",
        "trial-2.yaml",
        "trial-3.yaml",
    ]
    assert (folder / "trial-1.yaml").read_bytes() == cassette_path(
        REFERENCE, "single+oneshot", "hottest"
    ).read_bytes()
    assert read_manifest(set_dir).trials == 3
    episodes = replay_trials(set_dir, small, [config])
    assert [t for t, _ in episodes] == [1, 2, 3]
    hottest = small.question("hottest")
    outcomes = [trial_outcome(t, e, assess(e, hottest, FULL_JUDGE)) for t, e in episodes]
    # trial 1 passes (three calls in one round); the split trials leave the single host
    # holding the third call: an empty answer
    assert [o.passed for o in outcomes] == [True, False, False]
    assert [o.tool_calls for o in outcomes] == [3, 2, 2]
    assert outcomes[1].failure_modes == ["empty_answer"]
    summary = summarize_trials(outcomes, [config.name], ["hottest"])[config.name]
    assert summary["pass_hat_k"] == {"1": 0.3333, "2": 0.0, "3": 0.0}
    assert summary["pass_at_k"] == {"1": 0.3333, "2": 0.6667, "3": 1.0}
    assert summary["failure_mode_rates"] == {"empty_answer": 0.6667}


def test_summary_means_over_questions_and_spreads():
    def o(q: str, t: int, passed: bool, rounds: int, modes=()) -> TrialOutcome:
        return TrialOutcome(
            configuration="c", question_id=q, trial=t, passed=passed,
            rounds=rounds, tool_calls=rounds - 1, stop_reason="converged",
            failure_modes=list(modes),
        )  # fmt: skip

    outcomes = [
        o("a", 1, True, 2), o("a", 2, True, 2),
        o("b", 1, True, 3), o("b", 2, False, 5, ["empty_answer"]),
    ]  # fmt: skip
    s = summarize_trials(outcomes, ["c", "absent"], ["a", "b"])
    c = s["c"]
    assert c["trials"] == 2
    assert c["pass_hat_k"] == {"1": 0.75, "2": 0.5}  # mean of (1, 1) and (0.5, 0)
    assert c["pass_at_k"] == {"1": 0.75, "2": 1.0}
    assert c["rounds_over_trials"].model_dump() == {
        "mean": 3.0,
        "sd": pytest.approx(1.2247, abs=1e-4),
        "min": 2,
        "max": 5,
    }
    assert c["failure_mode_rates"] == {"empty_answer": 0.25}
    assert [q.passes for q in c["questions"]] == [2, 1]
    assert s["absent"]["trials"] == 0 and s["absent"]["pass_hat_k"] == {}


def test_committed_sets_hold_every_trial_unedited():
    """≥ 5 trials of every study and ablated-baseline episode of the reference set, ≥ 1 of
    the hard set; every cassette the manifest lists exists with its recorded sha256 (the
    runs replay trial 1 of the ablated baselines only, so this is their completeness check)."""
    import hashlib

    from toolreplay.evals import load_eval
    from toolreplay.runs.configuration import ablation_configurations, study_configurations

    from .conftest import EVAL_FILE, HARD_EVAL_FILE, REPO

    for set_dir, eval_file, least in (
        (REFERENCE, EVAL_FILE, 5),
        (REPO / "cassettes" / "hard", HARD_EVAL_FILE, 1),
    ):
        manifest = read_manifest(set_dir)
        suite = load_eval(eval_file)
        assert manifest.trials >= least
        configs = study_configurations(suite) + ablation_configurations(suite)
        for config in configs:
            for q in suite.questions:
                for trial in range(1, manifest.trials + 1):
                    path = cassette_path(set_dir, config.name, q.id, trial)
                    key = f"{config.name}/{q.id}" + (f"/trial-{trial}" if trial > 1 else "")
                    record = manifest.episodes[key]
                    assert set_dir / record.cassette == path
                    assert hashlib.sha256(path.read_bytes()).hexdigest() == record.cassette_sha256
        assert len(manifest.episodes) == len(configs) * len(suite.questions) * manifest.trials
