"""The audit reads no cassette again after a parallel replay (issue 33): each worker reads the
facts the parity and completeness checks need (the cassette's sha256, its model requests'
sampling fields, question and tools, its replies' provenance) from the cassette it replayed,
and sends them back; the checks read them. The facts are the ones this process reads itself,
and an edited or broken cassette is read again and judged as before."""

from __future__ import annotations

import pytest

from toolreplay.audit import traffic
from toolreplay.audit.checks import check_completeness, check_parity
from toolreplay.cassettes.manifest import cassette_path, read_manifest
from toolreplay.judging.verdicts import GROUNDED_JUDGE
from toolreplay.runs.configuration import study_configurations
from toolreplay.runs.replay import Job, replay_outcomes

from .conftest import REFERENCE


def _jobs(suite):
    return [Job(c, q.id) for c in study_configurations(suite) for q in suite.questions]


@pytest.fixture
def replayed(suite, reference_copy):
    """The study's episodes of a copy of the reference set replayed on two workers with the
    facts probe: ``(manifest, first configuration, its first question's cassette)``; the audit
    caches emptied before and after."""
    traffic.clear_audit_caches()
    manifest = read_manifest(reference_copy)
    replay_outcomes(reference_copy, manifest, suite, _jobs(suite), workers=2,
                    judge=GROUNDED_JUDGE, probe=traffic.FACTS_PROBE)  # fmt: skip
    config = study_configurations(suite)[0]
    yield manifest, config, cassette_path(reference_copy, config.name, suite.questions[0].id)
    traffic.clear_audit_caches()


def test_workers_send_the_facts_and_the_checks_read_no_cassette(suite, reference_copy, monkeypatch):
    traffic.clear_audit_caches()
    manifest = read_manifest(reference_copy)
    jobs = _jobs(suite)
    outcomes = replay_outcomes(reference_copy, manifest, suite, jobs, workers=2,
                               judge=GROUNDED_JUDGE, probe=traffic.FACTS_PROBE)  # fmt: skip
    assert not [o for o in outcomes if isinstance(o, BaseException)]
    kept = dict(traffic._FACTS)
    paths = {cassette_path(reference_copy, j.configuration.name, j.question_id) for j in jobs}
    for path in paths:  # the facts this process would read itself, by the bytes' sha256
        facts = traffic.facts_of(path.read_bytes(), traffic.read(path))
        assert kept[facts.sha256] == facts
        assert facts.requests and facts.replies >= 1

    def no_reading(*_a, **_k):
        raise AssertionError("a cassette was parsed again")

    monkeypatch.setattr(traffic, "read", no_reading)
    monkeypatch.setattr(traffic, "read_cassette", no_reading)
    configs = study_configurations(suite)
    parity = check_parity(reference_copy, suite, manifest, configs)
    complete = check_completeness(reference_copy, suite, manifest, configs, {})
    assert parity.passed and complete.passed, (parity, complete)
    traffic.clear_audit_caches()
    assert not traffic._FACTS


def test_a_cassette_edited_after_its_replay_is_read_again(suite, reference_copy, replayed):
    manifest, config, path = replayed
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    complete = check_completeness(reference_copy, suite, manifest, study_configurations(suite), {})
    assert not complete.passed
    assert any("edited since recording" in e and config.name in e for e in complete.evidence)
    traffic.clear_audit_caches()


def test_a_cassette_broken_after_its_replay_is_hashed_not_parsed(suite, replayed):
    manifest, config, path = replayed
    path.write_text("interactions: [\n", encoding="utf-8")  # not YAML any more
    key = f"{config.name}/{suite.questions[0].id}"
    assert traffic.cassette_sha256(path) != manifest.episodes[key].cassette_sha256
    traffic.clear_audit_caches()


def test_a_probe_that_cannot_read_sends_nothing_and_the_audit_reads_it(tmp_path):
    assert traffic.FACTS_PROBE.read(tmp_path / "missing.yaml") is None
    traffic.FACTS_PROBE.keep(None)  # nothing kept, nothing raised


def test_the_baseline_check_reads_each_cassette_once(suite, monkeypatch):
    """Its two passes over the full baseline's cassettes (the heuristics that acted, the calls
    held against the reference) share one reading: on 5,000 cassettes they read each twice."""
    from toolreplay.study.weather.baseline import check_baseline

    traffic.clear_audit_caches()
    monkeypatch.setattr(traffic, "_read_cached", traffic.audit_cache(maxsize=2)(
        traffic._read_cached.__wrapped__))  # fmt: skip
    reads: list[str] = []
    real = traffic.read_cassette

    def counted(path):
        reads.append(str(path))
        return real(path)

    monkeypatch.setattr(traffic, "read_cassette", counted)
    manifest = read_manifest(REFERENCE)
    configs = study_configurations(suite)
    oneshot = [c for c in configs if c.toolset == "oneshot"]
    check = check_baseline(REFERENCE, suite, manifest, oneshot, ())
    assert check.passed, check
    assert reads and len(reads) == len(set(reads)), sorted(reads)
    traffic.clear_audit_caches()


def test_an_edit_of_the_same_size_and_time_after_the_replay_is_still_told(
    suite, reference_copy, replayed
):
    """Facts are found by the sha256 of the bytes as they are at the audit, never by path,
    size and time alone: an edit that keeps all three is not hidden by the facts sent."""
    import os

    manifest, _, path = replayed
    st = path.stat()
    data = path.read_bytes()
    at = data.index(b"model")
    path.write_bytes(data[:at] + b"MODEL" + data[at + 5 :])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    complete = check_completeness(reference_copy, suite, manifest, study_configurations(suite), {})
    assert not complete.passed
    assert any("edited since recording" in e for e in complete.evidence)
    traffic.clear_audit_caches()
