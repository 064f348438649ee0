"""Replay at the speed of reading the cassettes: the replay transport gives what vcrpy gives,
each cassette is parsed once per content, workers and shards change nothing in the results."""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
from pathlib import Path

import httpx
import pytest
import requests
import yaml
from typer.testing import CliRunner

from toolreplay.cassettes import format as cassettes_format
from toolreplay.cassettes import store as cassettes_mod
from toolreplay.cassettes.errors import CassetteMiss, UnplayedInteractions
from toolreplay.cassettes.manifest import cassette_path, episode_key, read_manifest
from toolreplay.cassettes.store import CassetteDamaged, ParseCache, load_cassette
from toolreplay.cassettes.transport import Player, Tape
from toolreplay.cassettes.vcr import replay_cassette
from toolreplay.cli.main import app
from toolreplay.evals import EvalSuite, load_eval
from toolreplay.models.base import ModelSettings
from toolreplay.models.openai_chat import OpenAIChatModel
from toolreplay.runs.configuration import (
    Configuration,
    ablation_configurations,
    study_configurations,
)
from toolreplay.runs.episode import run_episode
from toolreplay.runs.replay import Job, parse_shard, replay_outcomes, shard
from toolreplay.study.weather.openmeteo import OpenMeteoClient

from .conftest import EVAL_FILE, HARD_EVAL_FILE, REFERENCE, REPO

runner = CliRunner()


def _vcrpy_replay(suite: EvalSuite, config: Configuration, qid: str, set_dir: Path = REFERENCE):
    """The same episode through vcrpy's patches and plain clients (the recording path)."""
    manifest = read_manifest(set_dir)
    settings = ModelSettings(manifest.model_base_url, manifest.model, None, 0.0)
    with httpx.Client(trust_env=False) as http, requests.Session() as session:
        model = OpenAIChatModel(settings, http, tool_choice=suite.experiment.tool_choice)
        client = OpenMeteoClient(session, **manifest.tool_urls)
        key = episode_key(config.name, qid)
        path = cassette_path(set_dir, config.name, qid, 1)
        with replay_cassette(path, key, "RERECORD"):
            return run_episode(
                suite, config, suite.question(qid), model=model, tool_client=client,
                today=manifest.today,
            )  # fmt: skip


def _transport_replay(suite: EvalSuite, config: Configuration, qid: str, set_dir=REFERENCE):
    manifest = read_manifest(set_dir)
    with Player() as player:
        settings = ModelSettings(manifest.model_base_url, manifest.model, None, 0.0)
        model = OpenAIChatModel(settings, player.http, tool_choice=suite.experiment.tool_choice)
        client = OpenMeteoClient(player.session, **manifest.tool_urls)
        key = episode_key(config.name, qid)
        path = cassette_path(set_dir, config.name, qid, 1)
        with replay_cassette(path, key, "RERECORD", player=player):
            return run_episode(
                suite, config, suite.question(qid), model=model, tool_client=client,
                today=manifest.today,
            )  # fmt: skip


@pytest.mark.slow
def test_the_replay_transport_gives_what_vcrpy_gives(suite: EvalSuite) -> None:
    configs = study_configurations(suite) + ablation_configurations(suite)
    for config in configs:
        for q in suite.questions:
            fast = _transport_replay(suite, config, q.id)
            slow = _vcrpy_replay(suite, config, q.id)
            # wall time is measured, not replayed; everything else must be equal
            assert dataclasses.replace(fast, wall_time_s=0) == dataclasses.replace(
                slow, wall_time_s=0
            ), (config.name, q.id)


@pytest.mark.slow
def test_a_miss_and_an_unplayed_interaction_read_the_same_on_both_paths(
    suite: EvalSuite, tmp_path: Path
) -> None:
    template = suite.system_prompt_template.replace("天气助手", "天气助理", 1)
    stale = dataclasses.replace(suite, system_prompt_template=template)
    config = Configuration.parse("loop+atomic")
    texts = []
    for replay in (_transport_replay, _vcrpy_replay):
        with pytest.raises(CassetteMiss) as info:
            replay(stale, config, "ningde")
        texts.append(str(info.value))
    assert texts[0] == texts[1]
    assert "system prompt content differs at character 7" in texts[0]

    # one more recorded interaction than the host asks for: the same unplayed message
    set_dir = tmp_path / "reference"  # a set is named by its folder
    shutil.copytree(REFERENCE, set_dir)
    path = cassette_path(set_dir, config.name, "ningde", 1)
    data = load_cassette(path)
    data.append(copy.deepcopy(data[-1]))
    text = cassettes_format.JsonBodySerializer.serialize({"version": 1, "interactions": data})
    path.write_text(text, encoding="utf-8")
    texts = []
    for replay in (_transport_replay, _vcrpy_replay):
        with pytest.raises(UnplayedInteractions) as info:
            replay(suite, config, "ningde", set_dir)
        texts.append(str(info.value))
    assert texts[0] == texts[1] and "left 1 recorded interaction(s)" in texts[0]


# ---- parse once ---------------------------------------------------------------------------


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TOOLREPLAY_CACHE_DIR", str(folder))
    return folder


def test_a_cassette_is_parsed_once_per_content(cache_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    shutil.copy(cassette_path(REFERENCE, "loop+atomic", "ningde", 1), path)
    cache = cassettes_mod.parse_cache()
    before = cache.parsed
    first = load_cassette(path)
    second = load_cassette(path)
    assert cache.parsed == before + 1
    assert first == second and first is not second  # each caller gets its own copy
    second[0]["request"]["method"] = "PUT"
    assert load_cassette(path)[0]["request"]["method"] == "POST"
    # an edited file is read and parsed again, whatever the cache holds
    path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert load_cassette(path) == first
    assert cache.parsed == before + 2


def test_the_disk_cache_serves_a_new_process_and_ignores_damaged_entries(
    cache_dir: Path, tmp_path: Path
) -> None:
    path = cassette_path(REFERENCE, "single+atomic", "beijing", 1)
    expected = load_cassette(path)
    entries = list(cache_dir.rglob("*.marshal"))
    assert len(entries) >= 1
    fresh = ParseCache(cache_dir)  # what a new process starts with
    import hashlib

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert fresh.get(digest) == expected and fresh.parsed == 0
    entry = next(e for e in entries if e.name.startswith(digest))
    blob = entry.read_bytes()
    for damaged in (blob[: len(blob) // 2], blob[:-1] + b"\x00", b""):
        entry.write_bytes(damaged)
        assert ParseCache(cache_dir).get(digest) is None  # ignored, never trusted
    cassettes_mod._parse_caches.clear()
    assert load_cassette(path) == expected  # parsed again and the entry rewritten
    assert ParseCache(cache_dir).get(digest) == expected


def test_an_unwritable_or_disabled_cache_only_costs_a_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("TOOLREPLAY_CACHE_DIR", str(blocker / "cache"))
    path = cassette_path(REFERENCE, "loop+oneshot", "hottest", 1)
    # what a plain libyaml parse of the file holds: the reference the cached path must equal
    raw = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)["interactions"]
    loaded = load_cassette(path)  # the cache folder cannot be made: parsed, served, not kept
    assert [i["request"]["uri"] for i in loaded] == [i["request"]["uri"] for i in raw]
    assert [i["response"]["status"]["code"] for i in loaded] == [
        i["response"]["status"]["code"] for i in raw
    ]
    assert not (blocker / "cache").exists()
    monkeypatch.setenv("TOOLREPLAY_CACHE_DIR", "")
    assert cassettes_mod.default_cache_dir() is None
    again = load_cassette(path)
    assert again == loaded and again[0]["request"]["method"] == "POST"


@pytest.mark.slow
def test_a_cached_cassette_edited_since_recording_is_still_damaged(
    cache_dir: Path, tmp_path: Path
) -> None:
    path = tmp_path / "one.yaml"
    shutil.copy(cassette_path(REFERENCE, "loop+atomic", "ningde", 1), path)
    import hashlib

    recorded = hashlib.sha256(path.read_bytes()).hexdigest()
    load_cassette(path, recorded)
    data = path.read_bytes()
    assert b"POST" in data
    path.write_bytes(data.replace(b"POST", b"PUT", 1))  # still a valid cassette
    with pytest.raises(CassetteDamaged, match="edited or damaged since recording"):
        load_cassette(path, recorded)


# ---- workers and shards ---------------------------------------------------------------------


def test_parse_shard_and_shards_partition_the_jobs() -> None:
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "2", "a/b", "1/0", "-1/2"):
        with pytest.raises(ValueError, match="bad shard"):
            parse_shard(bad)
    jobs = list(range(23))
    parts = [shard(jobs, i, 4) for i in range(1, 5)]
    assert sorted(x for part in parts for x in part) == jobs
    assert parts[0] == [0, 4, 8, 12, 16, 20]


@pytest.mark.slow
def test_workers_give_the_same_episodes_in_the_same_order() -> None:
    suite = load_eval(HARD_EVAL_FILE)
    set_dir = REPO / "cassettes" / "hard"
    manifest = read_manifest(set_dir)
    jobs = [Job(c, q.id) for c in study_configurations(suite) for q in suite.questions]
    seen: list[str] = []
    serial = replay_outcomes(set_dir, manifest, suite, jobs, workers=1)
    parallel = replay_outcomes(set_dir, manifest, suite, jobs, workers=2, progress=seen.append)
    assert parallel == serial
    assert seen == [j.key for j in jobs]  # progress in job order


@pytest.mark.slow
def test_a_worker_reports_a_damaged_cassette_as_a_serial_run_does(tmp_path: Path) -> None:
    suite = load_eval(EVAL_FILE)
    set_dir = tmp_path / "reference"
    shutil.copytree(REFERENCE, set_dir)
    path = cassette_path(set_dir, "loop+atomic", "shanghai-rain", 3)
    data = path.read_bytes()
    assert b"POST" in data
    path.write_bytes(data.replace(b"POST", b"PUT", 1))
    manifest = read_manifest(set_dir)
    jobs = [
        Job(Configuration.parse(c), q.id, t)
        for c in ("single+oneshot", "loop+atomic")
        for q in suite.questions
        for t in range(1, 6)
    ]
    serial = replay_outcomes(set_dir, manifest, suite, jobs, workers=1)
    parallel = replay_outcomes(set_dir, manifest, suite, jobs, workers=2)
    errors = [(i, str(o)) for i, o in enumerate(serial) if isinstance(o, BaseException)]
    assert len(errors) == 1 and "edited or damaged since recording" in errors[0][1]
    assert [(i, str(o)) for i, o in enumerate(parallel) if isinstance(o, BaseException)] == errors
    assert type(parallel[errors[0][0]]) is CassetteDamaged


def _run(*args: str):
    return runner.invoke(app, ["run", "--eval", str(EVAL_FILE), "--cassettes",
                               str(REPO / "cassettes"), *args])  # fmt: skip


@pytest.mark.slow
def test_workers_and_shards_write_the_same_results_and_report(tmp_path: Path) -> None:
    outputs = {}
    # two questions (one with parallel tool calls), every configuration, trial and audit
    selection = ["--questions", "hottest,ningde"]
    for name, args in {"one": ["--workers", "1"], "two": ["--workers", "2"]}.items():
        result = _run("--out", str(tmp_path / name), *selection, *args)
        assert result.exit_code == 0, result.output
        outputs[name] = result.output.replace(str(tmp_path / name), "OUT")
    assert outputs["one"] == outputs["two"]
    shards = tmp_path / "shards"
    for i in (1, 2, 3):
        result = _run("--out", str(shards), *selection, "--shard", f"{i}/3", "--workers", "1")
        assert result.exit_code == 0, result.output
        assert f"wrote {shards / f'shard-{i}-of-3.json'}" in result.output.replace("\n", "")
    files = sorted(shards.glob("shard-*.json"))
    merged = runner.invoke(app, ["merge", *map(str, files), "--out", str(tmp_path / "mrg")])
    assert merged.exit_code == 0, merged.output
    assert merged.output.replace(str(tmp_path / "mrg"), "OUT") == outputs["one"]
    for name in ("results.json", "index.html"):
        one = (tmp_path / "one" / name).read_bytes()
        assert (tmp_path / "two" / name).read_bytes() == one, name
        assert (tmp_path / "mrg" / name).read_bytes() == one, name

    # what merge refuses, naming the file and what is wrong
    def refuse(*paths: Path) -> str:
        result = runner.invoke(app, ["merge", *map(str, paths), "--out", str(tmp_path / "x")])
        assert result.exit_code == 1, result.output
        return result.output.replace("\n", " ")

    assert "missing shard(s) 2/3" in refuse(files[0], files[2])
    assert "given twice" in refuse(files[0], files[0], files[1], files[2])
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert "not a shard file" in refuse(bad)
    doc = json.loads(files[1].read_text(encoding="utf-8"))
    doc["configurations"] = "loop+atomic"
    other = tmp_path / "other" / files[1].name
    other.parent.mkdir()
    other.write_text(json.dumps(doc), encoding="utf-8")
    assert "come from different runs" in refuse(files[0], other, files[2])
    doc = json.loads(files[1].read_text(encoding="utf-8"))
    doc["jobs"].pop()
    other.write_text(json.dumps(doc), encoding="utf-8")
    assert "do not cover 1 episode(s)" in refuse(files[0], other, files[2])

    # an episode filed under another episode's key (a hand edit) is refused, not counted
    doc = json.loads(files[1].read_text(encoding="utf-8"))
    first = doc["jobs"][0]
    episode_of = first["key"].split("/")[:2]
    elsewhere = next(j for j in doc["jobs"] if j["key"].split("/")[:2] != episode_of)
    first["episode"] = elsewhere["episode"]
    other.write_text(json.dumps(doc), encoding="utf-8")
    assert "the file was edited" in refuse(files[0], other, files[2])
    # a shard count far beyond the files given is reported at once, not enumerated
    doc = json.loads(files[0].read_text(encoding="utf-8"))
    doc["shard"] = [1, 10**9]
    other.write_text(json.dumps(doc), encoding="utf-8")
    said = refuse(other)
    assert "missing shard(s) 2/1000000000" in said and "more" in said
    doc["shard"] = [True, 3]  # not an integer
    other.write_text(json.dumps(doc), encoding="utf-8")
    assert "not a shard file" in refuse(other)
    # an error a shard met names that shard; the same selection in another order is one run
    doc = json.loads(files[1].read_text(encoding="utf-8"))
    doc["questions"] = "ningde,hottest"
    doc["jobs"][0] = {"key": doc["jobs"][0]["key"], "episode": None,
                      "error": {"type": "CassetteError", "message": "damaged"}}  # fmt: skip
    other.write_text(json.dumps(doc), encoding="utf-8")
    said = refuse(files[0], other, files[2])
    assert "damaged" in said and f"recorded by {other}" in said.replace(" \n", "")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--workers", "0"], "must be at least 1"),
        (["--shard", "4/3"], "bad shard"),
        (["--shard", "1/105"], "this run replays 104 episodes"),
    ],
)
def test_bad_workers_or_shard_is_a_usage_error(args: list[str], says: str, tmp_path) -> None:
    result = _run("--out", str(tmp_path / "r"), *args)
    assert result.exit_code == 2
    assert says in result.output


def test_the_requests_adapter_reads_file_and_generator_bodies(tmp_path: Path) -> None:
    interactions = [
        {
            "request": {"method": "POST", "uri": "http://h/form", "headers": {}, "body": "abc"},
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {},
                "body": {"string": "ok"},
            },
        }
        for _ in range(3)
    ]
    body = tmp_path / "body"
    body.write_bytes(b"abc")
    with Player() as player, player.use(Tape(tmp_path / "c.yaml", interactions)):
        assert player.session.post("http://h/form", data=b"abc").text == "ok"
        with body.open("rb") as f:
            assert player.session.post("http://h/form", data=f).text == "ok"
        chunks = (c for c in [b"a", b"bc"])
        assert player.session.post("http://h/form", data=chunks).text == "ok"


def test_a_miss_on_a_body_that_is_not_json_says_the_body_differs(tmp_path: Path) -> None:
    from toolreplay.cassettes.miss import explain_miss, find_miss

    interactions = [
        {
            "request": {"method": "POST", "uri": "http://h/form", "headers": {}, "body": "a=1"},
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {},
                "body": {"string": "ok"},
            },
        }
    ]
    with Player() as player, player.use(Tape(tmp_path / "c.yaml", interactions)):
        with pytest.raises(Exception) as info:
            player.session.post("http://h/form", data=b"a=2")
    miss = find_miss(info.value)
    assert miss is not None
    text = str(explain_miss(miss, "demo/episode", "toolreplay record --only demo/episode"))
    assert "request body (not JSON) differs: sent 'a=2', recorded 'a=1'" in text
    assert "nothing the matchers compare differs" not in text


@pytest.mark.parametrize("workers", [1, 2])
def test_meanwhile_is_called_once_here_while_the_workers_replay(workers: int) -> None:
    """``replay_outcomes(..., meanwhile=f)``: ``f`` runs once, in this process; with a pool,
    after the workers have their episodes and before their results are taken (progress is
    said as results are taken: only the episode replayed here before the fork comes first);
    replayed here, after every episode. The outcomes are the same."""
    import os

    suite = load_eval(EVAL_FILE)
    manifest = read_manifest(REFERENCE)
    jobs = [Job(c, q.id) for c in study_configurations(suite) for q in suite.questions]
    events: list[str] = []
    calls: list[int] = []

    def meanwhile() -> None:
        calls.append(os.getpid())
        events.append("meanwhile")

    plain = replay_outcomes(REFERENCE, manifest, suite, jobs, workers=workers)
    got = replay_outcomes(
        REFERENCE, manifest, suite, jobs, workers=workers, progress=events.append,
        meanwhile=meanwhile,
    )  # fmt: skip
    assert got == plain
    assert calls == [os.getpid()]
    assert events.index("meanwhile") == (1 if workers == 2 else len(jobs))


def test_meanwhile_raising_stops_the_workers() -> None:
    suite = load_eval(EVAL_FILE)
    manifest = read_manifest(REFERENCE)
    jobs = [Job(c, q.id) for c in study_configurations(suite) for q in suite.questions]

    def broken() -> None:
        raise RuntimeError("broken meanwhile")

    with pytest.raises(RuntimeError, match="broken meanwhile"):
        replay_outcomes(REFERENCE, manifest, suite, jobs, workers=2, meanwhile=broken)
    import multiprocessing

    assert multiprocessing.active_children() == []  # nothing left running


def test_an_error_in_the_callers_loop_stops_the_workers_at_once() -> None:
    """Ctrl-C while the replay takes its workers' results (here, in ``progress``): the workers
    are stopped before the error reaches the caller, not when the caller drops it (one that
    keeps it, a log or a test report, would leave them running)."""
    import multiprocessing

    suite = load_eval(EVAL_FILE)
    manifest = read_manifest(REFERENCE)
    jobs = [Job(c, q.id) for c in study_configurations(suite) for q in suite.questions] * 4
    taken = []

    def progress(key: str) -> None:
        taken.append(key)
        if len(taken) == 20:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as kept:
        replay_outcomes(REFERENCE, manifest, suite, jobs, workers=2, progress=progress)
    assert kept.value is not None  # still held here
    assert multiprocessing.active_children() == []
