"""Every reply shape a real server sends has an outcome: through the real openai SDK over
``httpx.MockTransport``, and from a hand-made cassette set replayed by ``toolreplay run``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import pytest
import requests
import yaml
from typer.testing import CliRunner

from toolreplay.cassettes.manifest import EpisodeRecord, Manifest, write_manifest
from toolreplay.cli.main import app
from toolreplay.evals import load_eval
from toolreplay.hosts import run_loop, run_single
from toolreplay.judging.failures import classify
from toolreplay.judging.verdicts import FULL_JUDGE
from toolreplay.models.base import ModelSettings
from toolreplay.models.openai_chat import OpenAIChatModel
from toolreplay.results.build import episode_record
from toolreplay.runs.configuration import Configuration, fingerprint
from toolreplay.runs.episode import run_episode
from toolreplay.study.weather.openmeteo import OpenMeteoClient
from toolreplay.tools.toolset import Toolset
from toolreplay.wire.episode import Episode

from .wire_shapes import SHAPES, Shape, completion

BASE_URL = "http://model.test/v1"
SCHEMA = {
    "type": "function",
    "function": {
        "name": "echo",
        "description": "echo",
        "parameters": {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
            "additionalProperties": False,
        },
    },
}
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]


def echo_toolset() -> Toolset:
    return Toolset("echo", (SCHEMA,), {"echo": lambda x: {"x": x}})


def respond(shape: Shape, body: str) -> httpx.Response:
    return httpx.Response(
        shape.status, headers={"content-type": shape.content_type}, content=body.encode()
    )


def run_shape(shape: Shape, host=run_loop) -> tuple[Episode, list[dict]]:
    """One episode whose first reply is ``shape`` (echo tool, ``x`` = 3) and whose second
    reply, if asked for, is ``shape.answer``; returns it and every request body sent."""
    sent: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        if len(sent) == 1:
            return respond(shape, shape.text("echo", "x", 3))
        return httpx.Response(200, json=completion({"role": "assistant", "content": shape.answer}))

    settings = ModelSettings(BASE_URL, "m", None)
    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        episode = host(OpenAIChatModel(settings, http), echo_toolset(), MESSAGES)
    return episode, sent


def check_outcome(shape: Shape, episode: Episode) -> None:
    assert episode.stop_reason == shape.stop, episode.error
    labels = [f.mode for f in classify(episode)]
    if shape.label:
        assert shape.label in labels
    else:
        assert not {"empty_answer", "refusal"} & set(labels), labels
    final = episode.transcript[-1] if episode.transcript else {}
    said = " ".join([episode.error or "", episode.answer, str(final.get("refusal") or "")])
    for text in shape.says:
        assert text in said
    if shape.stop == "error":
        assert (episode.error or "").startswith(f"{BASE_URL}/chat/completions: HTTP ")
        assert "Traceback" not in (episode.error or "")


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
@pytest.mark.parametrize("host", [run_loop, run_single], ids=["loop", "single"])
def test_every_shape_has_an_outcome_over_the_sdk(shape, host):
    episode, sent = run_shape(shape, host)
    check_outcome(shape, episode)
    assert len(sent) == (2 if shape.answer is not None else 1)


def _shape(name: str) -> Shape:
    return next(s for s in SHAPES if s.name == name)


def test_arguments_given_as_an_object_are_executed_as_parsed_arguments():
    episode, sent = run_shape(_shape("arguments-object"))
    assistant, tool = sent[1]["messages"][2:4]
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"x": 3}'  # a string again
    assert tool == {"role": "tool", "tool_call_id": "call_a", "content": '{"x": 3}'}
    assert episode.rounds[0].results[0].error is None


@pytest.mark.parametrize("name", ["arguments-list", "arguments-number"])
def test_arguments_that_are_not_an_object_get_the_schema_message(name):
    _, sent = run_shape(_shape(name))
    tool = sent[1]["messages"][3]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_a"
    assert "invalid arguments for echo" in tool["content"]
    assert "is not of type 'object'" in tool["content"]


@pytest.mark.parametrize("name", ["tool-call-without-id", "legacy-function-call"])
def test_a_call_without_id_gets_one_the_host_made_up(name):
    _, sent = run_shape(_shape(name))
    assistant, tool = sent[1]["messages"][2:4]
    assert assistant["tool_calls"][0]["id"] == "call_r1_0"
    assert tool["tool_call_id"] == "call_r1_0" and tool["content"] == '{"x": 3}'


def test_a_refusal_is_kept_in_transcript_results_and_label():
    episode, _ = run_shape(_shape("refusal"))
    assert episode.answer == ""
    assert episode.transcript[-1]["refusal"] == "I can't help with that request."
    record = episode_record(episode, FULL_JUDGE).model_dump(mode="json", exclude_unset=True)
    (mode,) = record["failure_modes"]
    assert mode["mode"] == "refusal"
    assert mode["evidence"]["text"] == "I can't help with that request."
    assert record["transcript"][-1]["refusal"] == "I can't help with that request."


@pytest.mark.parametrize(
    "name, finish", [("finish-length", "length"), ("finish-content-filter", "content_filter")]
)
def test_finish_reason_reaches_the_results(name, finish):
    episode, _ = run_shape(_shape(name))
    record = episode_record(episode, FULL_JUDGE)
    assert record.finish_reason == finish
    assert record.stop_reason == {"length": "truncated", "content_filter": "filtered"}[finish]


def test_a_truncated_reply_with_tool_calls_is_not_executed():
    shape = _shape("arguments-object")
    cut = Shape("cut", shape.body | {"choices": [{**shape.body["choices"][0],
                                                  "finish_reason": "length"}]},
                "truncated", None, ())  # fmt: skip
    episode, sent = run_shape(cut)
    assert episode.stop_reason == "truncated" and len(sent) == 1
    assert episode.pending_tool_calls and not episode.tool_calls


# ---- the same shapes in a cassette set, replayed by `toolreplay run` --------------------------


def _eval_file(tmp_path: Path) -> Path:
    questions = [
        {
            "id": shape.name,
            "text": f"北京今天多少度？({shape.name})",
            "measure": "temperature",
            "places": [{"query": "北京", "region": "北京市"}],
        }
        for shape in SHAPES
    ]
    doc = {
        "version": 1,
        "name": "shapes",
        "system_prompt": "今天是 {today}。",
        "experiment": {"hosts": ["single", "loop"], "toolsets": ["oneshot"]},
        "questions": questions,
    }
    path = tmp_path / "shapes.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _interaction(request: dict, response: httpx.Response) -> dict:
    return {
        "request": {
            "method": "POST",
            "uri": "http://127.0.0.1/v1/chat/completions",
            "headers": {},
            "parsed_body": request,
        },
        "response": {
            "status": {"code": response.status_code, "message": response.reason_phrase},
            "headers": {"content-type": [response.headers["content-type"]]},
            "body": {"string": response.content.decode()},
        },
    }


def make_shape_set(tmp_path: Path) -> tuple[Path, Path]:
    """A cassette set ``shapes`` written by hand: for each shape, the exact request bodies the
    hosts send and the shape's wire body as the reply (no Open-Meteo traffic: the tool calls
    carry ``city: ""``, which the schema refuses)."""
    eval_path = _eval_file(tmp_path)
    suite = load_eval(eval_path)
    set_dir = tmp_path / "cassettes" / "shapes"
    settings = ModelSettings("http://127.0.0.1/v1", "m", None, 0.0)
    records = {}
    for shape in SHAPES:
        interactions: list[dict] = []

        def handler(
            request: httpx.Request, shape: Shape = shape, interactions: list = interactions
        ) -> httpx.Response:
            if not interactions:
                response = respond(shape, shape.text("get_weather", "city", ""))
            else:
                reply = {"role": "assistant", "content": shape.answer}
                response = httpx.Response(200, json=completion(reply))
            interactions.append(_interaction(json.loads(request.content), response))
            return response

        question = suite.question(shape.name)
        with httpx.Client(transport=httpx.MockTransport(handler)) as http:
            client = OpenMeteoClient(requests.Session())
            run_episode(suite, Configuration("loop", "oneshot"), question,
                        model=OpenAIChatModel(settings, http), tool_client=client,
                        today="2026-09-17")  # fmt: skip
        text = yaml.safe_dump({"interactions": interactions, "version": 1}, allow_unicode=True)
        for config in ("single+oneshot", "loop+oneshot"):
            path = set_dir / config / f"{shape.name}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            records[f"{config}/{shape.name}"] = EpisodeRecord(
                cassette=f"{config}/{shape.name}.yaml",
                cassette_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                wall_time_s=0.1,
                prompt_tokens=0,
                completion_tokens=0,
                rounds=len(interactions),
            )
    write_manifest(
        set_dir,
        Manifest(
            cassette_set="shapes",
            provenance="live",
            model="m",
            model_base_url="http://127.0.0.1/v1",
            endpoint_host="127.0.0.1",
            geocoding_url="http://127.0.0.1/v1/search",
            forecast_url="http://127.0.0.1/v1/forecast",
            recorded_on="2026-09-17",
            today="2026-09-17",
            eval_file=str(eval_path),
            packages={},
            episodes=records,
            **fingerprint(suite),
        ),
    )
    return eval_path, set_dir


@pytest.mark.slow
def test_toolreplay_run_replays_every_shape_into_a_table(tmp_path):
    eval_path, set_dir = make_shape_set(tmp_path)
    out_dir = tmp_path / "out"
    args = ["run", "--eval", str(eval_path), "--cassettes", str(set_dir.parent),
            "--set", "shapes", "--out", str(out_dir)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    assert "single+oneshot" in result.output and "loop+oneshot" in result.output
    results = json.loads((out_dir / "results.json").read_text(encoding="utf-8"))
    by_key = {(e["configuration"], e["question_id"]): e for e in results["episodes"]}
    assert len(by_key) == 2 * len(SHAPES)
    for shape in SHAPES:
        for config in ("single+oneshot", "loop+oneshot"):
            ep = by_key[(config, shape.name)]
            assert ep["stop_reason"] == shape.stop, (config, shape.name)
            modes = [f["mode"] for f in ep["failure_modes"]]
            if shape.label:
                assert shape.label in modes, (config, shape.name, modes)
            if shape.stop == "error":  # its own mode, with the status the server answered
                assert modes == ["error"], (config, shape.name, modes)
                assert ep["error"]["status"] == shape.status
                assert ep["error"]["endpoint"].endswith("/v1/chat/completions")
    html = (out_dir / "index.html").read_text(encoding="utf-8")
    assert "I can&#39;t help with that request." in html or "I can't help" in html
    assert "finish_reason length" in html
