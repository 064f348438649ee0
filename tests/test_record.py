"""Recording with the stand-in model and fixture server on loopback, then replaying."""

from __future__ import annotations

import shutil

import pytest

import toolreplay.runs.record as record_mod
from toolreplay.cassettes.manifest import cassette_path, read_manifest
from toolreplay.judging.verdicts import FULL_JUDGE
from toolreplay.models.base import ModelSettings
from toolreplay.results.build import build_results
from toolreplay.results.format import results_document
from toolreplay.runs.configuration import Configuration, study_configurations
from toolreplay.runs.record import record_live, record_stand_in
from toolreplay.runs.replay import replay_set
from toolreplay.runs.target import RecordingError

from .conftest import REFERENCE


def comparable(results: dict) -> dict:
    """Results without provenance and recorded wall times (they differ per recording)."""
    out = {k: v for k, v in results.items() if k != "provenance"}
    out["configurations"] = [
        {k: v for k, v in c.items() if k != "recorded_wall_time_s"}
        for c in results["configurations"]
    ]
    out["episodes"] = [
        {k: v for k, v in e.items() if k != "recorded_wall_time_s"} for e in results["episodes"]
    ]
    return out


@pytest.mark.slow
def test_stand_in_recording_replays_to_the_committed_results(
    suite, tmp_path, loopback, reference_results
):
    configs = study_configurations(suite)
    set_dir = tmp_path / "reference"
    manifest = record_stand_in(set_dir, suite, configs)
    assert manifest.provenance == "stand-in" and len(manifest.episodes) == 16
    episodes = replay_set(set_dir, suite, configs)
    fresh = build_results(
        read_manifest(set_dir), episodes, [c.name for c in configs], FULL_JUDGE, suite.by_id
    )
    assert comparable(results_document(fresh)) == comparable(results_document(reference_results))
    # and the cassettes themselves are byte-identical to the committed ones (trial 1 of them)
    for config in configs:
        for q in suite.questions:
            path = set_dir / config.name / f"{q.id}.yaml"
            assert path.read_bytes() == cassette_path(REFERENCE, config.name, q.id).read_bytes()


@pytest.mark.slow
def test_failed_recording_leaves_the_set_untouched(suite, tmp_path, loopback, monkeypatch):
    set_dir = tmp_path / "reference"
    shutil.copytree(REFERENCE, set_dir)
    before = {p: p.read_bytes() for p in set_dir.rglob("*") if p.is_file()}
    real = record_mod.run_episode
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("endpoint went away")
        return real(*args, **kwargs)

    monkeypatch.setattr(record_mod, "run_episode", flaky)
    with pytest.raises(RuntimeError, match="went away"):
        # --force: the 2×2 alone would remove the set's ablations and later trials
        record_stand_in(set_dir, suite, study_configurations(suite), force=True)
    after = {p: p.read_bytes() for p in set_dir.rglob("*") if p.is_file()}
    assert after == before
    assert not list(tmp_path.glob(".recording-*")), "staging folder left behind"


@pytest.mark.slow
def test_rerecord_only_chosen_episodes(suite, tmp_path, loopback):
    set_dir = tmp_path / "reference"
    shutil.copytree(REFERENCE, set_dir)
    target = cassette_path(set_dir, "loop+atomic", "ningde")
    target.write_text(
        target.read_text(encoding="utf-8").replace("宁德", "宁得", 1), encoding="utf-8"
    )
    other = (cassette_path(set_dir, "loop+atomic", "beijing")).stat().st_mtime_ns
    record_stand_in(set_dir, suite, [Configuration("loop", "atomic")], only=["loop+atomic/ningde"])
    assert target.read_bytes() == (cassette_path(REFERENCE, "loop+atomic", "ningde")).read_bytes()
    assert (cassette_path(set_dir, "loop+atomic", "beijing")).stat().st_mtime_ns == other
    assert len(read_manifest(set_dir).episodes) == len(read_manifest(REFERENCE).episodes)


def test_unknown_only_key_is_refused(suite, tmp_path):
    with pytest.raises(RecordingError, match="unknown episode"):
        record_stand_in(
            tmp_path / "s", suite, study_configurations(suite), only=["loop+atomic/nope"]
        )


def test_live_recording_without_key_refuses(suite, tmp_path):
    with pytest.raises(RecordingError, match="DASHSCOPE_API_KEY or OPENAI_API_KEY"):
        record_live(
            tmp_path / "live", suite, study_configurations(suite), ModelSettings(api_key=None)
        )
    assert not (tmp_path / "live").exists()


def test_manifest_records_provenance_and_hashes():
    m = read_manifest(REFERENCE)
    assert m.provenance == "stand-in" and m.model == "toolreplay-standin"
    assert m.endpoint_host == "127.0.0.1" and m.today == "2026-09-17"
    assert set(m.tool_schemas_sha256) == {"oneshot", "atomic"}
    assert len(m.system_prompt_sha256) == 64
    assert m.trials >= 5  # 40 episodes (the 2×2 and six ablated baselines), 5+ trials each
    assert len(m.episodes) == 40 * m.trials
    assert all(e.prompt_tokens > 0 and e.rounds >= 1 for e in m.episodes.values())


@pytest.mark.slow
def test_live_path_never_writes_the_key(suite, tmp_path, loopback):
    """The live recording path, pointed at the stand-in and fixture servers with a fake key."""
    from toolreplay.study.weather.fixture_server import open_meteo_fixture_server
    from toolreplay.study.weather.standin import standin_server

    key = "-".join(["sk", "test", "0123456789abcdefghijklmnop"])  # built: no key-like literal
    with standin_server(suite) as model_url, open_meteo_fixture_server() as om:
        manifest = record_live(
            tmp_path / "live",
            suite,
            [Configuration("loop", "atomic")],
            ModelSettings(base_url=model_url, model="toolreplay-standin", api_key=key),
            tool_urls={"geocoding_url": f"{om}/v1/search", "forecast_url": f"{om}/v1/forecast"},
            only=(),
        )
    assert manifest.provenance == "live" and len(manifest.episodes) == 4
    for path in (tmp_path / "live").rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert key not in text and "authorization" not in text.lower(), path


@pytest.mark.slow
def test_unreachable_endpoint_is_a_clean_recording_error(suite, tmp_path, loopback):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = ModelSettings(base_url=f"http://127.0.0.1:{port}/v1", api_key="k")
    endpoint = rf"http://127\.0\.0\.1:{port}/v1"  # a connection error names the endpoint
    with pytest.raises(
        RecordingError, match=rf"single\+oneshot/ningde failed at the model endpoint {endpoint}: "
    ):
        record_live(tmp_path / "live", suite, [Configuration("single", "oneshot")], settings)
    assert not (tmp_path / "live").exists()


def test_partial_rerecord_refuses_to_mix_settings(suite, tmp_path, loopback):
    from dataclasses import replace

    set_dir = tmp_path / "reference"
    shutil.copytree(REFERENCE, set_dir)
    before = (set_dir / "manifest.json").read_bytes()
    changed = replace(suite, experiment=replace(suite.experiment, max_rounds=8))
    with pytest.raises(RecordingError, match="different settings"):
        record_stand_in(
            set_dir, changed, [Configuration("loop", "atomic")], only=["loop+atomic/ningde"]
        )
    assert (set_dir / "manifest.json").read_bytes() == before
