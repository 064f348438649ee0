"""The study recorded and replayed over every protocol the hosts speak: an eval file's
``experiment.protocol`` (``responses``, ``anthropic_messages``) records the reference study
against the stand-in (behind the scripted loopback server, which answers each protocol as its
API reference shapes it) into a temporary folder and replays it with record mode ``none``.

Expected values come from outside this test's own recording: the committed reference
report (``reports/results.json``, the Chat Completions reference set's trial 1: 4/4, 4/4,
0/4, 4/4; rounds 2.00/2.00/2.00/3.25; tool calls 1.50/1.50/1.50/3.25; single+atomic
failing as empty_answer ×2, unfulfilled_promise ×2) and the committed reference set's
episodes (``cassettes/reference``)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from toolreplay.cassettes.manifest import read_manifest
from toolreplay.cassettes.store import read_cassette
from toolreplay.evals import EvalFileError, EvalSuite, load_eval
from toolreplay.judging.verdicts import FULL_JUDGE
from toolreplay.models.base import MODEL_PROTOCOLS
from toolreplay.results.build import build_results
from toolreplay.runs.configuration import (
    ablation_configurations,
    fingerprint,
    stale_parts,
    study_configurations,
)
from toolreplay.runs.record import record_stand_in
from toolreplay.runs.replay import replay_set
from toolreplay.wire.episode import Episode

from .conftest import EVAL_FILE, REPO

#: The path each protocol's model requests are posted to (the API references:
#: platform.openai.com/docs/api-reference/responses/create, docs.anthropic.com/en/api/messages).
REQUEST_PATH = {"responses": "/v1/responses", "anthropic_messages": "/v1/messages"}


def eval_text(protocol: str, *, stream: bool = False) -> str:
    """evals/weather.yaml with ``experiment.protocol`` (and ``stream``) set."""
    text = EVAL_FILE.read_text(encoding="utf-8")
    extra = f"  protocol: {protocol}\n" + ("  stream: true\n" if stream else "")
    assert text.count("\nexperiment:\n") == 1
    return text.replace("\nexperiment:\n", "\nexperiment:\n" + extra)


def write_eval(folder: Path, protocol: str, *, stream: bool = False) -> Path:
    """The eval file in ``folder``, with the phrasing corpus the audit reads beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "evals" / "phrasings.yaml", folder / "phrasings.yaml")
    path = folder / f"weather-{protocol}{'-stream' if stream else ''}.yaml"
    path.write_text(eval_text(protocol, stream=stream), encoding="utf-8")
    return path


def recorded(root: Path, protocol: str, *, stream: bool = False) -> tuple[EvalSuite, Path]:
    """The study (and its ablations, for the audit) recorded against the stand-in over
    ``protocol``, one trial, into ``root/cassettes/<set>``."""
    suite = load_eval(write_eval(root, protocol, stream=stream))
    set_dir = root / "cassettes" / protocol.replace("_", "-")
    configs = study_configurations(suite) + ablation_configurations(suite)
    record_stand_in(set_dir, suite, configs)
    return suite, set_dir


#: The Anthropic client needs its SDK (the ``anthropic`` extra; the lowest-versions job
#: installs the suite without it).
needs_anthropic = pytest.mark.skipif(
    importlib.util.find_spec("anthropic") is None,
    reason="the anthropic SDK is not installed (pip install 'toolreplay[anthropic]')",
)


@pytest.fixture(
    scope="module",
    params=["responses", pytest.param("anthropic_messages", marks=needs_anthropic)],
)
def protocol_set(request, tmp_path_factory, loopback) -> tuple[str, EvalSuite, Path]:
    root = tmp_path_factory.mktemp(request.param)
    suite, set_dir = recorded(root, request.param)
    return request.param, suite, set_dir


def reference_summary() -> dict[str, tuple[Any, ...]]:
    """Per configuration ``(passed, total, avg_rounds, avg_tool_calls, failure_modes,
    stop_reasons)`` of the committed reference report."""
    report = json.loads((REPO / "reports" / "results.json").read_text(encoding="utf-8"))
    return {c["name"]: summary_row(c) for c in report["configurations"]}


def summary_row(c: dict[str, Any]) -> tuple[Any, ...]:
    return (
        c["passed"], c["total"], c["avg_rounds"], c["avg_tool_calls"],
        c.get("failure_modes") or {}, c.get("stop_reasons") or {},
    )  # fmt: skip


def conversation(episode: Episode) -> list[tuple[Any, ...]]:
    """The episode's transcript without the ids a protocol gives its tool calls: role,
    content, and each call's tool and parsed arguments."""
    return [
        (
            m.get("role"),
            m.get("content"),
            [
                (c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in m.get("tool_calls") or []
            ],
        )
        for m in episode.transcript
    ]


def test_the_committed_reference_is_the_2x2_the_study_reports():
    """The values every protocol must give (the reference's trial 1, as the brief states)."""
    got = reference_summary()
    assert {k: v[:4] for k, v in got.items()} == {
        "single+oneshot": (4, 4, 2.0, 1.5),
        "loop+oneshot": (4, 4, 2.0, 1.5),
        "single+atomic": (0, 4, 2.0, 1.5),
        "loop+atomic": (4, 4, 3.25, 3.25),
    }
    assert got["single+atomic"][4] == {"empty_answer": 2, "unfulfilled_promise": 2}


def test_a_set_over_another_protocol_replays_as_the_reference(protocol_set, reference_episodes):
    protocol, suite, set_dir = protocol_set
    assert suite.experiment.protocol == protocol
    configs = study_configurations(suite)
    episodes = replay_set(set_dir, suite, configs, record_mode="none")
    assert len(episodes) == 16
    results = build_results(
        read_manifest(set_dir), episodes, [c.name for c in configs], FULL_JUDGE, suite.by_id
    )
    got = {c.name: summary_row(c.model_dump()) for c in results.configurations}
    assert got == reference_summary()
    for episode in episodes:  # the same conversation, call for call, word for word
        ref = reference_episodes[(episode.configuration, episode.question_id)]
        assert conversation(episode) == conversation(ref)
        assert (episode.stop_reason, episode.answer) == (ref.stop_reason, ref.answer)
        assert len(episode.rounds) == len(ref.rounds)


def test_the_cassettes_hold_the_protocols_requests(protocol_set):
    protocol, _, set_dir = protocol_set
    manifest = read_manifest(set_dir)
    assert manifest.settings["protocol"] == protocol and manifest.provenance == "stand-in"
    interactions = read_cassette(set_dir / "loop+atomic" / "ningde.yaml")
    paths = {urlsplit(i["request"]["uri"]).path for i in interactions}
    assert "/v1/chat/completions" not in paths
    requests = [
        i for i in interactions if urlsplit(i["request"]["uri"]).path == REQUEST_PATH[protocol]
    ]
    assert len(requests) == 4  # four rounds, each one POST
    assert all(i["request"]["method"] == "POST" for i in requests)
    first = requests[0]["request"]["parsed_body"]
    if protocol == "responses":  # the whole conversation each round, nothing stored
        assert first["store"] is False and first["instructions"].startswith("你是一个天气助手")
        assert {t["type"] for t in first["tools"]} == {"function"}
        assert all("parameters" in t for t in first["tools"])
    else:
        assert first["system"] and first["max_tokens"] == 1024
        assert all("input_schema" in t for t in first["tools"])
        assert requests[1]["request"]["parsed_body"]["messages"][-1]["content"][0]["type"] == (
            "tool_result"
        )


@needs_anthropic
def test_a_streamed_set_over_anthropic_messages(tmp_path, loopback, reference_episodes):
    suite, set_dir = recorded(tmp_path, "anthropic_messages", stream=True)
    assert suite.experiment.stream
    assert read_manifest(set_dir).settings["stream"] is True
    text = (set_dir / "loop+atomic" / "beijing.yaml").read_text(encoding="utf-8")
    assert "text/event-stream" in text and "event: message_start" in text
    for path in set_dir.glob("*/*.yaml"):  # every reply came as Anthropic's event stream
        for i in read_cassette(path):
            if urlsplit(i["request"]["uri"]).path == REQUEST_PATH["anthropic_messages"]:
                assert i["request"]["parsed_body"]["stream"] is True
                headers = {k.lower(): v for k, v in i["response"]["headers"].items()}
                assert headers["content-type"] == ["text/event-stream"]
    configs = study_configurations(suite)
    episodes = replay_set(set_dir, suite, configs)
    results = build_results(
        read_manifest(set_dir), episodes, [c.name for c in configs], FULL_JUDGE, suite.by_id
    )
    assert {c.name: summary_row(c.model_dump()) for c in results.configurations} == (
        reference_summary()
    )
    for episode in episodes:
        ref = reference_episodes[(episode.configuration, episode.question_id)]
        assert conversation(episode) == conversation(ref)


@pytest.mark.slow  # a whole `toolreplay run`; the replay itself is held by the tests above
def test_the_cli_run_prints_the_reference_table(protocol_set):
    from typer.testing import CliRunner

    from toolreplay.cli.main import app

    _, suite, set_dir = protocol_set
    out = set_dir.parent.parent / "report"
    result = CliRunner().invoke(
        app,
        ["run", "--eval", suite.path, "--cassettes", str(set_dir.parent), "--set", set_dir.name,
         "--out", str(out), "--workers", "1"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = {
        line.split()[0]: line.split()[1:]
        for line in result.output.splitlines()
        if re.match(r"^(single|loop)\+\w+\s+\d+/\d+\s", line)
    }
    expected = {
        name: [f"{p}/{t}", f"{r:.2f}", f"{c:.2f}"]
        for name, (p, t, r, c, *_) in reference_summary().items()
    }
    assert {k: v[:3] for k, v in rows.items()} == expected
    assert "fidelity: all 7 checks passed" in result.output
    assert "empty_answer 2" in result.output and "unfulfilled_promise 2" in result.output
    assert (out / "results.json").exists()


def test_an_unknown_protocol_is_an_eval_file_error(tmp_path):
    path = tmp_path / "weather-gemini.yaml"
    path.write_text(eval_text("gemini"), encoding="utf-8")
    with pytest.raises(EvalFileError) as caught:
        load_eval(path)
    message = str(caught.value)
    assert str(path) in message and "experiment.protocol" in message
    assert "'chat_completions', 'responses' or 'anthropic_messages'" in message


def test_the_eval_files_protocols_are_the_model_clients():
    from typing import get_args

    from toolreplay.evals import DEFAULT_PROTOCOL, PROTOCOLS
    from toolreplay.evals.schema import ExperimentModel

    assert PROTOCOLS == MODEL_PROTOCOLS and DEFAULT_PROTOCOL == MODEL_PROTOCOLS[0]
    assert get_args(ExperimentModel.model_fields["protocol"].annotation) == MODEL_PROTOCOLS
    assert load_eval(EVAL_FILE).experiment.protocol == "chat_completions"


def test_the_protocol_is_part_of_the_fingerprint_only_when_not_the_default(
    tmp_path, suite, protocol_set
):
    protocol, other, set_dir = protocol_set
    assert "protocol" not in fingerprint(suite)["settings"]  # existing sets stay current
    assert stale_parts(read_manifest(REPO / "cassettes" / "reference"), suite) == []
    assert fingerprint(other)["settings"]["protocol"] == protocol
    manifest = read_manifest(set_dir)
    assert stale_parts(manifest, other) == []
    chat = replace(suite, path=other.path)
    assert f"setting protocol ({protocol!r} → default)" in stale_parts(manifest, chat)


#: Tools as the API references show them: the Responses API's function tool
#: (platform.openai.com/docs/guides/function-calling, "Defining functions") and Anthropic's
#: client tool (docs.anthropic.com/en/docs/agents-and-tools/tool-use/overview), each beside a
#: hosted tool of that API, which no Chat Completions function stands for.
WEATHER_PARAMETERS = {
    "type": "object",
    "properties": {"location": {"type": "string", "description": "City and country"}},
    "required": ["location"],
}
RESPONSES_TOOLS = [
    {"type": "function", "name": "get_weather", "description": "Get current temperature.",
     "parameters": WEATHER_PARAMETERS, "strict": False},
    {"type": "web_search_preview"},
]  # fmt: skip
ANTHROPIC_TOOLS = [
    {"name": "get_weather", "description": "Get current temperature.",
     "input_schema": WEATHER_PARAMETERS},
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
]  # fmt: skip
CHAT_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current temperature.",
        "parameters": WEATHER_PARAMETERS,
    },
}


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"model": "m", "input": [{"role": "user", "content": "Paris?"}], "temperature": 0,
          "tools": RESPONSES_TOOLS, "tool_choice": "auto"}, "/v1/responses"),
        ({"model": "m", "max_tokens": 1024, "system": "Be brief.", "temperature": 0,
          "messages": [{"role": "user", "content": "Paris?"}], "tools": ANTHROPIC_TOOLS},
         "/v1/messages"),
    ],
)  # fmt: skip
def test_a_request_of_any_protocol_becomes_the_chat_body_the_stand_in_reads(body, path):
    from toolreplay.doubles.chat_form import ServedRequest, serving
    from toolreplay.runs.standin_protocols import chat_body

    with serving(ServedRequest(path)):
        got = chat_body(body)
    assert got["tools"] == [CHAT_TOOL]  # the hosted tool is no function: left out
    assert got["model"] == "m" and got["temperature"] == 0
    assert got["messages"][-1] == {"role": "user", "content": "Paris?"}
    if "system" in body:
        assert got["messages"][0] == {"role": "system", "content": "Be brief."}
        # the last round without tools: declared, none callable, so none offered
        withheld = chat_body({**body, "tool_choice": {"type": "none"}})
        assert "tools" not in withheld


def test_a_stand_in_reply_without_a_message_fails_the_request_visibly(loopback):
    import httpx

    from toolreplay.runs.standin_protocols import standin_protocol_server

    class Broken:
        def reply(self, body):
            return {"choices": []}

    with standin_protocol_server(Broken(), "responses") as base_url:
        answer = httpx.post(f"{base_url}/responses", json={"model": "m", "input": "hi"}, timeout=10)
    assert answer.status_code == 500
    assert "the stand-in's reply holds no choices[0].message" in answer.text
