"""Replay every committed episode and check the study's figures, offline."""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import replace

import pytest
import yaml

from toolreplay.cassettes.errors import CassetteError, CassetteMiss, UnplayedInteractions
from toolreplay.cassettes.manifest import cassette_path
from toolreplay.runs.configuration import (
    Configuration,
    ablation_configurations,
    study_configurations,
)
from toolreplay.runs.replay import replay_set

from .conftest import REFERENCE

STUDY_TABLE = {
    "single+oneshot": (4, 4, 2.0, 1.5),
    "loop+oneshot": (4, 4, 2.0, 1.5),
    "single+atomic": (0, 4, 2.0, 1.5),
    "loop+atomic": (4, 4, 3.25, 3.25),
}


def test_reference_set_reproduces_the_studys_table(reference_results):
    got = {
        c.name: (c.passed, c.total, c.avg_rounds, c.avg_tool_calls)
        for c in reference_results.configurations
    }
    assert got == STUDY_TABLE


def test_loop_atomic_chains(reference_episodes):
    ningde = reference_episodes[("loop+atomic", "ningde")]
    assert [(c.name, c.parsed_arguments()) for c in ningde.tool_calls] == [
        ("geocode_city", {"city": "宁德"}),
        ("geocode_city", {"city": "宁德市"}),
        ("get_weather_by_coords", {"latitude": 26.6617, "longitude": 119.5228}),
    ]
    assert len(ningde.rounds) == 4
    hottest = reference_episodes[("loop+atomic", "hottest")]
    assert hottest.tool_chain == ["geocode_city"] * 3 + ["get_weather_by_coords"] * 3
    assert len(hottest.rounds) == 3
    assert [len(r.results) for r in hottest.rounds] == [3, 3, 0]


def test_every_loop_episode_converged(reference_episodes):
    loops = [e for (c, _), e in reference_episodes.items() if c.startswith("loop")]
    assert len(loops) == 8 and {e.stop_reason for e in loops} == {"converged"}


def test_single_atomic_fails_in_both_forms(reference_episodes):
    answers = {q: reference_episodes[("single+atomic", q)].answer for q in
               ("ningde", "beijing", "hottest", "shanghai-rain")}  # fmt: skip
    assert answers["beijing"] == "" and answers["hottest"] == ""
    assert "我将重新查询" in answers["ningde"]
    assert "接下来我将查询" in answers["shanghai-rain"]


@pytest.mark.slow
@pytest.mark.parametrize("config", ["ablations"])
def test_every_ablation_episode_replays(suite, config):
    episodes = replay_set(REFERENCE, suite, ablation_configurations(suite))
    assert len(episodes) == 24
    flipped = {
        (e.configuration, e.question_id) for e in episodes if not e.answer or "我将" in e.answer
    }
    assert flipped == {("single+oneshot-no_shi_retry", "ningde")}


def test_replay_uses_the_manifests_date_not_the_clock(reference_episodes):
    system = reference_episodes[("loop+atomic", "beijing")].transcript[0]["content"]
    assert "2026-09-17" in system


def copy_set(tmp_path):
    dest = tmp_path / "reference"
    shutil.copytree(REFERENCE, dest)
    return dest


def rewrite(path, data):
    """Write cassette ``data`` to ``path`` and record its new sha256 in the manifest, as if it
    had been recorded that way (otherwise replay reports it edited since recording)."""
    import hashlib

    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    set_dir = next(p for p in path.parents if (p / "manifest.json").exists())
    manifest_file = set_dir / "manifest.json"
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    where = path.relative_to(set_dir).as_posix()
    key = next(k for k, e in manifest["episodes"].items() if e["cassette"] == where)
    manifest["episodes"][key]["cassette_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest_file.write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")


def test_changed_system_prompt_is_an_explained_miss(suite, tmp_path):
    changed = replace(
        suite, system_prompt_template=suite.system_prompt_template.replace("天气助手", "天气助理")
    )
    with pytest.raises(CassetteMiss) as exc:
        replay_set(REFERENCE, changed, [Configuration("single", "oneshot")])
    msg = str(exc.value)
    assert "single+oneshot/ningde" in msg
    assert "system prompt" in msg
    assert msg.endswith(
        "the whole set is stale; re-record it: "
        "toolreplay record --model-source stand-in --set reference --trials 5"
    )
    assert "Connection error" not in msg


def test_unplayed_interaction_fails(suite, tmp_path):
    dest = copy_set(tmp_path)
    path = cassette_path(dest, "loop+oneshot", "beijing")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["interactions"].append(copy.deepcopy(data["interactions"][-1]))
    rewrite(path, data)
    with pytest.raises(UnplayedInteractions, match="loop\\+oneshot/beijing"):
        replay_set(dest, suite, [Configuration("loop", "oneshot")])


@pytest.mark.slow
def test_extra_request_is_a_miss(suite, tmp_path):
    # the loop host replaying a single-host cassette makes more requests than recorded
    dest = copy_set(tmp_path)
    shutil.rmtree(dest / "loop+atomic")
    shutil.copytree(dest / "single+atomic", dest / "loop+atomic")
    for path in (dest / "loop+atomic").rglob("*.yaml"):  # as if recorded like this
        rewrite(path, yaml.safe_load(path.read_text(encoding="utf-8")))
    with pytest.raises(CassetteMiss, match="3 of 3 recorded interactions played"):
        replay_set(dest, suite, [Configuration("loop", "atomic")])


def test_malformed_cassette_names_file_and_interaction(suite, tmp_path):
    dest = copy_set(tmp_path)
    path = cassette_path(dest, "single+oneshot", "beijing")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    del data["interactions"][1]["request"]["method"]
    rewrite(path, data)
    with pytest.raises(CassetteError) as exc:
        replay_set(dest, suite, [Configuration("single", "oneshot")])
    assert "single+oneshot/beijing/trial-1.yaml: interaction 2: request.method" in str(exc.value)


def test_missing_set_says_how_to_record(suite, tmp_path):
    with pytest.raises(CassetteError, match="toolreplay record --model-source stand-in"):
        replay_set(tmp_path / "nope", suite, study_configurations(suite))


def test_cassettes_hold_no_secrets_or_volatile_headers():
    for path in REFERENCE.rglob("*.yaml"):
        text = path.read_text(encoding="utf-8").lower()
        for needle in (
            "authorization",
            "api-key",
            "x-stainless",
            "cookie",
            "date:",
            "sk-",
            "bearer",
        ):
            assert needle not in text, f"{needle} in {path}"


def _drop(path):
    def mutate(data):
        node = data["interactions"][0]
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return mutate


def _set(path, value):
    def mutate(data):
        node = data["interactions"][0]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


@pytest.mark.slow
@pytest.mark.parametrize(
    "mutate, where",
    [
        (_drop(["response", "headers"]), "response.headers"),
        (_drop(["request", "headers"]), "request.headers"),
        (_drop(["request", "parsed_body"]), "request"),
        (_set(["response", "status", "code"], "abc"), "response.status.code"),
        (_drop(["response", "status", "message"]), "response.status.message"),
        (_set(["request", "headers"], ["content-type"]), "request.headers"),
    ],
)
def test_malformed_interactions_are_named_not_crashes(suite, tmp_path, mutate, where):
    dest = copy_set(tmp_path)
    path = cassette_path(dest, "loop+atomic", "ningde")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    mutate(data)
    rewrite(path, data)
    with pytest.raises(CassetteError) as exc:
        replay_set(dest, suite, [Configuration("loop", "atomic")])
    message = str(exc.value)
    assert "loop+atomic/ningde/trial-1.yaml: interaction 1" in message and where in message


def test_non_utf8_cassette_is_named(suite, tmp_path):
    dest = copy_set(tmp_path)
    path = cassette_path(dest, "loop+atomic", "ningde")
    path.write_bytes(path.read_bytes()[:200] + b"\xff\xfe" + path.read_bytes()[200:])
    with pytest.raises(
        CassetteError,
        match=r"ningde/trial-1\.yaml: edited or damaged since recording .*it also fails to "
        r"load: cassette is not UTF-8 text: byte 0xff at line \d+, column \d+ \(byte 200\)",
    ):
        replay_set(dest, suite, [Configuration("loop", "atomic")])


def test_serializer_round_trips_line_separators_and_keeps_chinese_readable():
    import copy

    from toolreplay.cassettes.format import JsonBodySerializer

    text = "a\x85b\nc\u2028d\u2029e\r\nf 宁德"
    body = {"parsed": {"content": text}}
    data = {
        "version": 1,
        "interactions": [
            {
                "request": {"method": "POST", "uri": "u", "headers": {}, "body": None},
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {},
                    "body": {"string": json.dumps(body, ensure_ascii=False)},
                },
            }
        ],
    }
    stored = JsonBodySerializer.serialize(copy.deepcopy(data))
    assert "宁德" in stored  # unescaped
    back = JsonBodySerializer.deserialize(stored)["interactions"][0]["response"]["body"]
    assert json.loads(back["string"]) == body
