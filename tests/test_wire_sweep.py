"""The public-cassette sweep (``benchmarks/wire_sweep.py``): each cassette's protocols told by
request method and URI path alone, whatever the readers recognise, and its table and JSON
output, on cassettes other projects recorded (``tests/data/foreign/``: pydantic-ai's
``tests/models/cassettes/test_openai/test_request_tool_call.yaml`` and
``test_groq/test_tool_use_failed_error_in_stream.yaml``, ``llm``'s
``tests/cassettes/test_tools/test_tool_use_chain_of_two_calls.yaml``, and the Anthropic and
Gemini cassettes named in ``test_wire_anthropic.py`` and ``test_wire_gemini.py``:
``test_tool_choice_matrix[auto-anthropic].yaml``,
``test_multimodal_tool_return_matrix[direct-url-image-google_vertex].yaml``) and on small cassettes
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
import shutil
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
ANTHROPIC = FOREIGN / "pydantic-ai-anthropic-tool-call.yaml"
VERTEX = FOREIGN / "pydantic-ai-gemini-vertex-tool-error.yaml"


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


#: A vcrpy cassette's text whose request names ``URI``, holding ``TAG`` on a header name.
_UNLOADABLE = """interactions:
- request:
    body: '{"messages": [{"role": "user", "content": "hi"}], "model": "m"}'
    headers:
      ? TAG
      - Accept
      : - application/json
    method: POST
    uri: URI
  response:
    body:
      string: '{"choices": []}'
    headers: {}
    status:
      code: 200
      message: OK
version: 1
"""


def test_a_cassette_that_cannot_be_loaded_is_not_read_under_its_protocol(
    sweep: ModuleType, tmp_path: Path
) -> None:
    """A file no safe loader loads (a ``python/…`` tag other than multidict's ``istr``, or
    broken YAML): its protocol told from the request URIs in its text, counted as not read
    with the loader's error, never as "no model protocol"."""
    cases = [
        ("!!python/object/apply:os.system", "https://api.openai.com/v1/chat/completions", "chat"),
        ("!!python/object/apply:os.system", "'https://api.anthropic.com/v1/messages'", "anthropic"),
        ("[unclosed", "https://api.openai.com/v1/responses", "responses"),
    ]
    for n, (tag, uri, key) in enumerate(cases):
        path = tmp_path / f"unloadable-{n}.yaml"
        path.write_text(_UNLOADABLE.replace("TAG", tag).replace("URI", uri), encoding="utf-8")
        result = sweep.sweep_cassette(path)
        assert result.requests == {key: 1}
        assert result.outcome == {key: "not read"}
        assert result.reason[key].startswith(f"CassetteError: {path}: not valid YAML: ")
        row = sweep.summarise([result])[""][sweep.PROTOCOLS[key]]
        assert (row["cassettes"], row["read"], row["not_read"]) == (1, 0, 1)
    # one that names no model endpoint stays "no model protocol", the load error as what it is
    path = tmp_path / "embeddings.yaml"
    text = _UNLOADABLE.replace("TAG", "!!python/object/apply:os.system")
    path.write_text(text.replace("URI", "https://api.openai.com/v1/embeddings"), encoding="utf-8")
    result = sweep.sweep_cassette(path)
    assert result.outcome == {sweep.NO_MODEL: "no model protocol"}
    assert result.reason[sweep.NO_MODEL].startswith("ConstructorError: could not determine")


def test_requests_told_from_a_cassettes_text(sweep: ModuleType) -> None:
    text = (
        "interactions:\n"
        "- request:\n    body: ''\n    method: GET\n"
        "    uri: https://api.openai.com/v1/responses/resp_1\n"
        "  response:\n    uri: https://api.openai.com/v1/chat/completions\n"
        '- request:\n    body: \'{"anthropic_version": "bedrock-2023-05-31"}\'\n'
        "    method: POST\n"
        "    uri: https://bedrock-runtime.us-east-1.amazonaws.com/model/claude/invoke\n"
        '- request:\n    method: "POST"\n'
        '    uri: "https://x.googleapis.com/v1/models/g:streamGenerateContent?alt=sse"\n'
    )
    assert sweep.raw_request_protocols(text) == {2: "anthropic", 3: "gemini"}


def test_aiohttp_cassettes_with_istr_header_names_are_read(sweep: ModuleType) -> None:
    """dd-trace-py's cassettes recorded through aiohttp (``tests/data/foreign/ddtrace-*``)."""
    for name, key in [
        ("ddtrace-openai-aiohttp-istr-new.yaml", "chat"),
        ("ddtrace-anthropic-aiohttp-istr.yaml", "anthropic"),
    ]:
        result = sweep.sweep_cassette(FOREIGN / name)
        assert (result.requests, result.outcome) == ({key: 1}, {key: "read"})


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
    """Three cassettes of three protocols (Chat Completions, Anthropic Messages, Gemini on
    Vertex AI), a source named on the command line: one row each, all read; the Gemini one
    ends on the HTTP 400 pydantic-ai recorded, counted as an episode in error, not refused."""
    folder = tmp_path / "three"
    folder.mkdir()
    for name in (TOOL_CALL.name, ANTHROPIC.name, VERTEX.name):
        shutil.copy(FOREIGN / name, folder / name)
    out = tmp_path / "sweep.json"
    assert sweep.main([f"three={folder}", "--json", str(out), "--list", "in-error"]) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text(encoding="utf-8"))
    assert len(data["cassettes"]) == 3
    rows = data["summary"]["three"]
    assert list(rows) == ["Chat Completions", "Anthropic Messages", "Gemini"]
    for row in rows.values():
        assert (row["cassettes"], row["read"], row["not_read"], row["crashed"]) == (1, 1, 0, 0)
    assert (rows["Gemini"]["ending_in_error"], rows["Gemini"]["refused"]) == (1, 0)
    assert list(rows["Gemini"]["errors"]) == ["URL: HTTP 400: BadRequestError: Error code: N -"]
    assert rows["Gemini"]["stop_reasons"] == {"error": 1}
    assert rows["Chat Completions"]["ending_in_error"] == 0
    assert rows["Anthropic Messages"]["stop_reasons"] == {"converged": 1}
    line = next(x for x in printed.splitlines() if x.startswith("three") and "Gemini" in x)
    assert line.split()[2:5] == ["1", "1", "100.0"]
    assert f"{VERTEX.name} [Gemini]: https://aiplatform.googleapis.com/" in printed


def _chat(messages: list[dict[str, object]], reply: dict[str, object]) -> dict[str, object]:
    body = {"model": "m", "messages": messages, "tools": [{"type": "function"}]}
    return {
        "request": {
            "method": "POST",
            "uri": "https://api.openai.com/v1/chat/completions",
            "body": json.dumps(body),
        },
        "response": {
            "status": {"code": 200},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": json.dumps(reply)},
        },
    }


def _completion(message: dict[str, object], finish: str, usage: tuple[int, int]) -> dict:
    return {
        "id": "c",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
    }


def test_doubts_on_rounds_read(sweep: ModuleType, tmp_path: Path) -> None:
    """A round whose two calls the next request answers once, and a final reply with no
    text that still counts output tokens: read, and both named as doubts."""
    calls = [
        {"id": f"call_{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for n in (1, 2)
    ]
    first = {"role": "assistant", "content": None, "tool_calls": calls}
    user = {"role": "user", "content": "hi"}
    answer = {"role": "tool", "tool_call_id": "call_1", "content": "1"}
    interactions = [
        _chat([user], _completion(first, "tool_calls", (10, 5))),
        _chat([user, first, answer], _completion({"role": "assistant"}, "stop", (20, 7))),
    ]
    path = tmp_path / "doubtful.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions}), encoding="utf-8")
    result = sweep.sweep_cassette(path)
    assert result.outcome == {"chat": "read"}
    assert result.doubts == {
        "chat": [
            "interaction 1: calls unanswered (1 results for 2 calls)",
            "interaction 2: empty reply (7 output tokens)",
        ]
    }
    row = sweep.summarise([result])[""]["Chat Completions"]
    assert row["doubted"] == 1
    assert row["doubts"] == {"calls unanswered (N": 1, "empty reply (N": 1}


def test_cassette_files_found(sweep: ModuleType, tmp_path: Path) -> None:
    """Files by pattern under a folder, and with ``--within cassettes`` only those in a
    folder of that name (a repository's other YAML left out)."""
    (tmp_path / "pkg" / "tests" / "cassettes" / "t").mkdir(parents=True)
    (tmp_path / "pkg" / "cassettes.yaml").write_text("a: 1", encoding="utf-8")
    (tmp_path / "pkg" / "docker-compose.yml").write_text("a: 1", encoding="utf-8")
    deep = tmp_path / "pkg" / "tests" / "cassettes" / "t" / "x.yaml"
    shutil.copy(TOOL_CALL, deep)
    assert sweep.cassettes_in(tmp_path, ["*.yaml"], "cassettes") == [deep]
    assert len(sweep.cassettes_in(tmp_path, ["*.yaml", "*.yml"])) == 3
    assert sweep.cassettes_in(deep, ["*.json"]) == [deep]  # a file is taken as given
