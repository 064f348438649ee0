"""The public-cassette sweep (``benchmarks/wire_sweep.py``): each cassette's protocols told by
request method and URI path alone, whatever the readers recognise, and its table and JSON
output, on cassettes other projects recorded (``tests/data/foreign/``: pydantic-ai's
``tests/models/cassettes/test_openai/test_request_tool_call.yaml`` and
``test_groq/test_tool_use_failed_error_in_stream.yaml``, ``llm``'s
``tests/cassettes/test_tools/test_tool_use_chain_of_two_calls.yaml``) and on small cassettes
written here for the rows the foreign ones do not reach (no model request, a crash).

The paths classified are the protocols' documented endpoints: OpenAI's ``POST
/v1/chat/completions`` and ``POST /v1/responses`` (and not ``GET /v1/responses/{id}`` or
``POST /v1/responses/input_tokens``), Anthropic's ``POST /v1/messages`` (not
``/v1/messages/count_tokens``) and an ``anthropic_version`` body on Bedrock's ``InvokeModel``,
Gemini's ``models/{model}:generateContent`` / ``:streamGenerateContent`` (not
``:batchEmbedContents``), Bedrock's ``/model/{modelId}/converse`` and ``/converse-stream``
(not ``/count-tokens``)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
FOREIGN = REPO / "tests" / "data" / "foreign"
TOOL_CALL = FOREIGN / "pydantic-ai-openai-tool-call.yaml"
GROQ_ERROR = FOREIGN / "pydantic-ai-groq-error-event.yaml"
LLM_CHAIN = FOREIGN / "llm-tool-chain.yaml"


@pytest.fixture(scope="module")
def sweep() -> ModuleType:
    spec = importlib.util.spec_from_file_location("wire_sweep", REPO / "benchmarks/wire_sweep.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["wire_sweep"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("method", "uri", "body", "expected"),
    [
        ("POST", "https://api.openai.com/v1/chat/completions", {}, "chat"),
        ("POST", "https://api.groq.com/openai/v1/chat/completions/", None, "chat"),
        (
            "POST",
            "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=1",
            None,
            "chat",
        ),
        ("POST", "https://api.openai.com/v1/responses", {}, "responses"),
        ("GET", "https://api.openai.com/v1/responses/resp_123", None, None),
        ("POST", "https://api.openai.com/v1/responses/input_tokens", {}, None),
        ("POST", "https://api.anthropic.com/v1/messages", {}, "anthropic"),
        ("POST", "https://api.anthropic.com/v1/messages/count_tokens", {}, None),
        (
            "POST",
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3/invoke",
            {"anthropic_version": "bedrock-2023-05-31", "messages": []},
            "anthropic",
        ),
        (
            "POST",
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.titan-embed/invoke",
            {"inputText": "hi"},
            None,
        ),
        (
            "POST",
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
            {},
            "gemini",
        ),
        (
            "POST",
            "https://aiplatform.googleapis.com/v1beta1/projects/p/locations/global/publishers/"
            "google/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
            {},
            "gemini",
        ),
        (
            "POST",
            "https://generativelanguage.googleapis.com/v1beta/models/e:batchEmbedContents",
            {},
            None,
        ),
        (
            "POST",
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-pro-v1%3A0/converse",
            {},
            "bedrock",
        ),
        (
            "POST",
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream",
            {},
            "bedrock",
        ),
        ("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/count-tokens", {}, None),
        ("POST", "https://api.openai.com/v1/embeddings", {}, None),
        ("post", "https://api.cohere.com/v2/chat", {}, None),
    ],
)
def test_protocol_told_by_method_and_path(
    sweep: ModuleType, method: str, uri: str, body: object, expected: str | None
) -> None:
    assert sweep.request_protocol(method, uri, body) == expected


def test_protocols_of_recorded_interactions(sweep: ModuleType) -> None:
    """Numbered from 1 as the reader numbers exchanges, from the cassette's raw YAML; a body
    stored as text (vcrpy) is parsed for ``anthropic_version``."""
    interactions = yaml.safe_load(LLM_CHAIN.read_text(encoding="utf-8"))["interactions"]
    assert sweep.interaction_protocols(interactions) == {1: "chat", 2: "chat", 3: "chat"}
    invoke = {
        "request": {
            "method": "POST",
            "uri": "https://bedrock-runtime.eu-central-1.amazonaws.com/model/c/invoke",
            "body": json.dumps({"anthropic_version": "bedrock-2023-05-31"}),
        }
    }
    socket = {"kind": "message", "direction": "sent", "data": {"type": "session.update"}}
    assert sweep.interaction_protocols([socket, invoke]) == {2: "anthropic"}


def test_foreign_cassettes_read(sweep: ModuleType) -> None:
    tool_call = sweep.sweep_cassette(TOOL_CALL, "pydantic-ai")
    assert tool_call.requests == {"chat": 2}
    assert tool_call.outcome == {"chat": "read"}
    assert (tool_call.episodes, tool_call.ended_in_error, tool_call.faults) == (1, {}, [])
    groq = sweep.sweep_cassette(GROQ_ERROR, "pydantic-ai")
    assert groq.outcome == {"chat": "read"}
    assert groq.requests == {"chat": 3}
    # pydantic-ai retried after Groq's error event: a reply recovered from, named
    assert len(groq.faults) == 1 and "error event" in groq.faults[0]
    assert groq.ended_in_error == {} and groq.doubts == {}


def test_no_model_protocol_and_unread_requests(sweep: ModuleType, tmp_path: Path) -> None:
    embeddings = {
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "https://api.openai.com/v1/embeddings",
                    "body": '{"input": "hi", "model": "text-embedding-3-small"}',
                },
                "response": {"status": {"code": 200}, "body": {"string": '{"data": []}'}},
            }
        ]
    }
    path = tmp_path / "embeddings.yaml"
    path.write_text(yaml.safe_dump(embeddings), encoding="utf-8")
    result = sweep.sweep_cassette(path)
    assert result.outcome == {sweep.NO_MODEL: "no model protocol"}
    assert result.reason[sweep.NO_MODEL] == "POST api.openai.com …/embeddings"
    assert result.requests == {}

    # a chat request whose body has no messages: told Chat Completions by its path, but no
    # reader takes it: not read, the documented error named
    bare = {"interactions": [dict(embeddings["interactions"][0])]}
    bare["interactions"][0]["request"] = {
        "method": "POST",
        "uri": "https://api.openai.com/v1/chat/completions",
        "body": '{"prompt": "hi"}',
    }
    path = tmp_path / "bare.yaml"
    path.write_text(yaml.safe_dump(bare), encoding="utf-8")
    result = sweep.sweep_cassette(path)
    assert result.outcome == {"chat": "not read"}
    assert result.reason["chat"].startswith("WireEpisodeError: no model request")


def test_crash_is_counted_apart(
    sweep: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def broken(path: object) -> list[object]:
        raise KeyError("choices")

    monkeypatch.setattr(sweep, "episodes_from_cassette", broken)
    result = sweep.sweep_cassette(TOOL_CALL)
    assert result.outcome == {"chat": "crashed"}
    assert result.reason["chat"].startswith("KeyError: 'choices' at ")
    assert sweep.main([str(TOOL_CALL)]) == 1  # a crash fails the sweep
    assert "crashed" in capsys.readouterr().out


def test_table_and_json(
    sweep: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole foreign folder: every cassette there is Chat Completions, and read."""
    out = tmp_path / "sweep.json"
    assert sweep.main([f"foreign={FOREIGN}", "--json", str(out), "--list", "in-error"]) == 0
    printed = capsys.readouterr().out
    cassettes = sorted(FOREIGN.glob("*.yaml"))
    data = json.loads(out.read_text(encoding="utf-8"))
    assert len(data["cassettes"]) == len(cassettes)
    row = data["summary"]["foreign"]["Chat Completions"]
    assert row["cassettes"] == row["read"] == len(cassettes)
    assert row["not_read"] == row["crashed"] == 0
    # no reply there is unusable (Azure's filtered one is a reply: stop reason filtered)
    assert row["ending_in_error"] == 0 and row["errors"] == {}
    line = next(x for x in printed.splitlines() if x.startswith("foreign") and "Chat" in x)
    assert line.split()[3:7] == [str(len(cassettes)), str(len(cassettes)), "100.0", "%"]
    assert printed.rstrip().endswith("in-error:")  # --list: none to list
