"""The weather study's baseline check reads no cassette again after a parallel replay (issue
33): each replay worker reads the Open-Meteo traffic of every oneshot cassette it replayed
(every trial, ablated configurations too) and sends it back with the trial-1 facts
(:class:`toolreplay.runs.replay.ProbeSet`); the check's result is the one it reaches reading
every cassette itself, and a cassette edited since its replay is read again."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from toolreplay.audit import traffic
from toolreplay.cassettes.manifest import cassette_path, read_manifest
from toolreplay.judging.verdicts import GROUNDED_JUDGE
from toolreplay.runs.configuration import ablation_configurations, study_configurations
from toolreplay.runs.replay import Job, ProbeSet, replay_outcomes
from toolreplay.studies import load_study
from toolreplay.study.weather import calls as weather_calls
from toolreplay.study.weather import traffic as weather_traffic
from toolreplay.study.weather.baseline import HEURISTICS, check_baseline
from toolreplay.study.weather.calls import CallsProbe, audit_traffic
from toolreplay.study.weather.traffic import RequestsProbe, recorded_requests


def _oneshot(suite):
    oneshot = [c for c in study_configurations(suite) if c.toolset == "oneshot"]
    return oneshot, ablation_configurations(suite)


def _check(reference_copy, suite, manifest):
    oneshot, ablated = _oneshot(suite)
    return check_baseline(reference_copy, suite, manifest, oneshot, ablated)


def test_the_check_reads_what_the_workers_sent_and_reaches_the_same_result(
    suite, reference_copy, monkeypatch
):
    manifest = read_manifest(reference_copy)
    traffic.clear_audit_caches()
    expected = _check(reference_copy, suite, manifest)  # every cassette read here
    traffic.clear_audit_caches()
    assert not weather_traffic._SENT

    configs = [*study_configurations(suite), *ablation_configurations(suite)]
    jobs = [
        Job(c, q.id, t)
        for c in configs
        for q in suite.questions
        for t in range(1, manifest.trials + 1)
        if cassette_path(reference_copy, c.name, q.id, t).exists()
    ]
    probe = ProbeSet([traffic.FACTS_PROBE, CallsProbe("oneshot")])
    outcomes = replay_outcomes(reference_copy, manifest, suite, jobs, workers=2,
                               judge=GROUNDED_JUDGE, probe=probe)  # fmt: skip
    assert not [o for o in outcomes if isinstance(o, BaseException)]
    oneshot = {
        cassette_path(reference_copy, j.configuration.name, j.question_id, j.trial)
        for j in jobs
        if j.configuration.toolset == "oneshot"
    }
    assert len(oneshot) == 160  # 8 configurations (2 full, 6 ablated) × 4 questions × 5
    # one reading per content: the stand-in's trials and ablations record the same bytes
    contents = {hashlib.sha256(p.read_bytes()).hexdigest() for p in oneshot}
    assert set(weather_traffic._SENT) == contents
    assert traffic._FACTS  # the trial-1 facts came back beside them

    def no_reading(*_a, **_k):
        raise AssertionError("a oneshot cassette's traffic was read again")

    # every cassette's calls held against the reference by the heuristics of each
    # configuration that recorded those bytes, made in the workers (not walked again here)
    for job in jobs:
        if job.configuration.toolset == "oneshot":
            path = cassette_path(reference_copy, job.configuration.name, job.question_id, job.trial)
            sent = weather_traffic.sent_traffic(path)
            on = tuple(h for h in HEURISTICS if h != job.configuration.ablated)
            assert sent.audits[on] == audit_traffic(sent.requests, sent.tool_results, on)
    monkeypatch.setattr(weather_traffic, "_requests_cached", no_reading)
    monkeypatch.setattr(weather_traffic, "recorded_tool_results", no_reading)
    monkeypatch.setattr(weather_calls, "audit_traffic", no_reading)
    assert _check(reference_copy, suite, manifest) == expected
    traffic.clear_audit_caches()
    assert not weather_traffic._SENT  # kept only while the audit runs


def test_a_cassette_edited_since_its_reading_was_sent_is_read_again(suite, reference_copy):
    traffic.clear_audit_caches()
    path = cassette_path(reference_copy, "single+oneshot", suite.questions[0].id)
    probe = RequestsProbe("oneshot")
    job = Job(next(c for c in study_configurations(suite) if c.name == "single+oneshot"),
              suite.questions[0].id)  # fmt: skip
    found = probe.read(path, job)
    requests = found.requests
    assert requests == weather_traffic._requests_of(traffic.read(path))
    assert found.tool_results == traffic.recorded_tool_results(path)
    probe.keep(replace(found, requests=[]))  # differs from the file's, to tell them apart
    assert recorded_requests(path) == []  # found by the bytes' sha256
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert recorded_requests(path) == requests  # other bytes: read from the file again
    traffic.clear_audit_caches()


def test_the_probe_reads_only_the_baseline_toolset_and_survives_a_broken_cassette(
    suite, reference_copy
):
    probe = RequestsProbe("oneshot")
    atomic = next(c for c in study_configurations(suite) if c.toolset == "atomic")
    question = suite.questions[0].id
    atomic_cassette = cassette_path(reference_copy, atomic.name, question)
    assert probe.read(atomic_cassette, Job(atomic, question)) is None
    oneshot = next(c for c in study_configurations(suite) if c.toolset == "oneshot")
    broken = cassette_path(reference_copy, oneshot.name, question)
    broken.write_text("interactions: [\n", encoding="utf-8")
    assert probe.read(broken, Job(oneshot, question)) is None  # the check reads it and says why


def test_the_weather_study_offers_its_probe_to_the_replay():
    probe = load_study("weather").baseline_audit.cassette_probe
    assert isinstance(probe, CallsProbe) and probe.toolset == "oneshot"


def test_what_the_workers_sent_is_not_kept_past_a_failed_evaluation(suite, reference_copy):
    """A selected episode that does not replay stops the evaluation before the audit: what the
    workers sent for it (the facts, the baseline traffic) is dropped all the same."""
    from toolreplay.evaluation import ReplayedSet, SourceError, evaluate

    traffic.clear_audit_caches()
    broken = cassette_path(reference_copy, "loop+atomic", "beijing")
    broken.write_text("interactions: [\n", encoding="utf-8")
    with pytest.raises(SourceError):
        evaluate(ReplayedSet(reference_copy, workers=2), suite)
    assert not weather_traffic._SENT and not traffic._FACTS


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_properties_check_is_made_while_the_workers_replay(workers, tmp_path, monkeypatch):
    """``toolreplay run``: the baseline properties check, which reads no episode, is made once,
    while the replay runs (``prepare_audit`` as ``replay_outcomes``' ``meanwhile``), not in the
    serial tail after it; the audit then takes it (the same check as one made there), and
    nothing of it is kept after the run."""
    from typer.testing import CliRunner

    from toolreplay.audit import run as audit_run
    from toolreplay.cli.main import app
    from toolreplay.runs import replay as replay_mod

    study = load_study("weather")
    real_check = type(study.baseline_audit).check_properties
    real_replay = replay_mod.replay_outcomes
    events: list[str] = []

    def check(self):
        events.append("properties")
        return real_check(self)

    def replay(*args, **kwargs):
        events.append("replay " + ("meanwhile" if kwargs.get("meanwhile") else "plain"))
        try:
            return real_replay(*args, **kwargs)
        finally:
            events.append("replayed")

    monkeypatch.setattr(type(study.baseline_audit), "check_properties", check)
    monkeypatch.setattr(replay_mod, "replay_outcomes", replay)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", "--workers", workers, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert events.count("properties") == 1
    start = events.index("replay meanwhile")
    assert events[start + 1 : start + 3] == ["properties", "replayed"]
    assert audit_run._PREPARED == {}
    import json

    checks = json.loads((out / "results.json").read_text(encoding="utf-8"))["fidelity"]["checks"]
    made = next(c for c in checks if c["name"] == "baseline_properties")
    assert made["passed"] and made["explanation"] == real_check(study.baseline_audit).explanation
