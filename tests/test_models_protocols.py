"""A model client per wire protocol: the hosts run the same episode over Chat Completions, the
Responses API and Anthropic Messages.

Outside references: the request conversions are checked against the vendor SDKs' own request
types (``openai.types.responses.ResponseInputParam``/``FunctionToolParam``,
``anthropic.types.MessageParam``/``ToolParam``/``ToolChoiceParam``), against what
pydantic-ai sent in real recorded traffic, and read back by the protocols' wire readers; the
servers' bodies are written from the API references (:mod:`tests.protocol_servers`), and
real recorded replies (pydantic-ai's cassettes) are served to the clients.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from pydantic import TypeAdapter

from tests.protocol_servers import BASE_URLS, ScriptedServer
from toolreplay.hosts import LoopLimits, run_loop
from toolreplay.models import chat_model
from toolreplay.models.anthropic_messages import AnthropicMessagesModel, anthropic_request
from toolreplay.models.base import ConversionError, ModelSettings
from toolreplay.models.openai_chat import OpenAIChatModel
from toolreplay.models.openai_responses import OpenAIResponsesModel, responses_request
from toolreplay.tools.toolset import Toolset
from toolreplay.wire.episode import ToolCall, ToolResult
from toolreplay.wire.interactions import Exchange, read_exchanges
from toolreplay.wire.replies import ModelReplyError
from toolreplay.wire.responses import RESPONSES

PROTOCOLS = ("chat_completions", "responses", "anthropic_messages")

#: The Anthropic client's tests need its SDK (the ``anthropic`` extra; the lowest-versions
#: job installs the suite without it).
needs_anthropic = pytest.mark.skipif(
    importlib.util.find_spec("anthropic") is None,
    reason="the anthropic SDK is not installed (pip install 'toolreplay[anthropic]')",
)


def _each(protocols: tuple[str, ...]) -> list[Any]:
    """``protocols`` as parameters, the Anthropic one skipped without its SDK."""
    return [pytest.param(p, marks=needs_anthropic) if p == "anthropic_messages" else p
            for p in protocols]  # fmt: skip


FOREIGN = Path(__file__).parent / "data" / "foreign"

GEO = {
    "type": "function",
    "function": {
        "name": "geocode",
        "description": "Coordinates of a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
MESSAGES = [
    {"role": "system", "content": "Answer from the tools."},
    {"role": "user", "content": "Where are Paris and Rome?"},
]


def geo_toolset() -> Toolset:
    places = {"Paris": (48.85, 2.35), "Rome": (41.89, 12.48)}
    return Toolset(
        "geo", (GEO,), {"geocode": lambda city: dict(zip("xy", places[city], strict=True))}
    )


def calls(*cities: str, round_: int = 1) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{round_}_{i}",
            "type": "function",
            "function": {"name": "geocode", "arguments": json.dumps({"city": c})},
        }
        for i, c in enumerate(cities)
    ]


#: Round 1: two parallel calls with some text; round 2: one call; round 3: the answer.
SCRIPT = [
    {"content": "Looking them up.", "tool_calls": calls("Paris", "Rome")},
    {"content": None, "tool_calls": calls("Paris", round_=2)},
    {"content": "Paris is at 48.85, 2.35; Rome at 41.89, 12.48."},
]


def run(protocol: str, script: list[dict[str, Any]], stream: bool, **limits: Any) -> Any:
    server = ScriptedServer(protocol, script)
    settings = ModelSettings(BASE_URLS[protocol], "m", stream=stream, protocol=protocol)
    with httpx.Client(transport=httpx.MockTransport(server)) as http:
        model = chat_model(settings, http)
        episode = run_loop(model, geo_toolset(), MESSAGES, LoopLimits(**limits))
    return episode, server


def outline(episode: Any) -> Any:
    """What must not depend on the protocol: rounds (tools offered, reply, results), the
    tool chain, answer, stop reason, usage, transcript and error."""
    return (
        [(r.index, r.tools_offered, r.reply, r.results) for r in episode.rounds],
        episode.tool_chain,
        episode.answer,
        episode.stop_reason,
        episode.usage,
        episode.transcript,
        episode.error,
    )


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("protocol", _each(PROTOCOLS[1:]))
def test_the_loop_gives_the_chat_completions_episode_on_every_protocol(protocol, stream):
    expected, _ = run("chat_completions", SCRIPT, stream=False)
    episode, server = run(protocol, SCRIPT, stream)
    assert expected.stop_reason == "converged" and len(expected.rounds) == 3
    assert expected.tool_chain == ["geocode", "geocode", "geocode"]
    assert outline(episode) == outline(expected)
    assert all(b.get("stream", False) is stream for b in server.requests)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("protocol", _each(PROTOCOLS))
def test_the_last_round_withholds_tools_on_every_protocol(protocol, stream):
    script = [SCRIPT[0], {"content": "Rome then.", "tool_calls": calls("Rome", round_=2)}]
    episode, server = run(protocol, script, stream, max_rounds=2)
    assert episode.stop_reason == "max_rounds" and episode.rounds[-1].tools_offered is False
    last = server.requests[-1]
    if protocol == "anthropic_messages":  # tools declared by name, none callable
        assert last["tool_choice"] == {"type": "none"}
        assert last["tools"] == [{"name": "geocode", "input_schema": {"type": "object"}}]
    else:
        assert "tools" not in last and "tool_choice" not in last
    assert "tools" in server.requests[0]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("protocol", _each(PROTOCOLS))
def test_a_reply_cut_off_is_truncated_on_every_protocol(protocol, stream):
    script = [{"content": "Paris is at", "finish_reason": "length"}]
    episode, _ = run(protocol, script, stream)
    assert episode.stop_reason == "truncated" and episode.answer == "Paris is at"
    assert episode.rounds[0].reply.finish_reason == "length"


ERRORS = {
    "chat_completions": {"error": {"message": "Rate limit reached", "type": "requests"}},
    "responses": {"error": {"message": "Rate limit reached", "type": "requests"}},
    "anthropic_messages": {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "Rate limit reached"},
    },
}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("protocol", _each(PROTOCOLS))
def test_an_error_status_ends_the_episode_with_its_words(protocol, stream):
    script = [SCRIPT[0], {"status": 429, "error": ERRORS[protocol]}]
    episode, server = run(protocol, script, stream)
    path = server.paths[-1]
    assert episode.stop_reason == "error" and episode.answer == ""
    assert len(episode.rounds) == 1 and episode.tool_chain == ["geocode", "geocode"]
    assert episode.error == (
        f"http://model.test{path}: HTTP 429: RateLimitError: Error code: 429 - {ERRORS[protocol]}"
    )


# -- request conversion, checked against the SDKs' own types --------------------------------

CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Where is Paris?"},
    {"role": "assistant", "content": "Looking.", "tool_calls": calls("Paris", "Rome")},
    {"role": "tool", "tool_call_id": "call_1_0", "content": '{"x": 48.85}'},
    {"role": "tool", "tool_call_id": "call_1_1", "content": "no such city", "is_error": True},
    {"role": "user", "content": [{"type": "text", "text": "And "}, {"type": "text", "text": "?"}]},
    {"role": "assistant", "content": "Paris: 48.85."},
    {"role": "user", "content": "Thanks."},
]


def test_the_responses_request_is_what_the_openai_sdk_types_describe():
    from openai.types.responses import FunctionToolParam, ResponseInputParam

    request = responses_request(CONVERSATION, [GEO], "required")
    assert request["instructions"] == "Be brief." and request["store"] is False
    items = request["input"]
    TypeAdapter(ResponseInputParam).validate_python(items)
    TypeAdapter(list[FunctionToolParam]).validate_python(request["tools"])
    assert [i.get("type") or i["role"] for i in items] == [
        "user", "assistant", "function_call", "function_call", "function_call_output",
        "function_call_output", "user", "assistant", "user",
    ]  # fmt: skip
    assert items[2] == {
        "type": "function_call",
        "call_id": "call_1_0",
        "name": "geocode",
        "arguments": '{"city": "Paris"}',
    }
    assert items[5] == {"type": "function_call_output", "call_id": "call_1_1",
                        "output": "no such city"}  # fmt: skip
    assert items[6]["content"] == [
        {"type": "input_text", "text": "And "},
        {"type": "input_text", "text": "?"},
    ]
    assert request["tools"] == [
        {
            "type": "function",
            "name": "geocode",
            "description": "Coordinates of a city.",
            "parameters": GEO["function"]["parameters"],
            "strict": False,  # the Responses API's default is strict: Chat Completions' is not
        }
    ]
    assert request["tool_choice"] == "required" and request["parallel_tool_calls"] is True
    named = {"type": "function", "function": {"name": "geocode"}}
    assert responses_request(MESSAGES, [GEO], named)["tool_choice"] == {
        "type": "function",
        "name": "geocode",
    }
    assert "tools" not in responses_request(CONVERSATION, None)


def test_the_responses_reader_reads_the_conversation_back():
    request = responses_request(CONVERSATION[:5], [GEO])
    exchange = Exchange(1, "POST", "https://api.openai.com/v1/responses", 200,
                        {"model": "m", **request}, "application/json", b"{}")  # fmt: skip
    assert RESPONSES.is_request(exchange)
    read = RESPONSES.request(exchange, {})
    expected = [dict(m) for m in CONVERSATION[:5]]
    del expected[4]["is_error"]  # the Responses API has no error flag on a function output
    assert list(read.messages) == expected and read.tools_offered


def anthropic_blocks_valid(request: dict[str, Any]) -> None:
    """Validate against the anthropic SDK's request types: each turn against its role's
    message type, each block against the type its ``type`` names (a turn's content is an
    iterable in the union type, which pydantic validates lazily)."""
    from anthropic import types as t

    blocks = {
        "text": t.TextBlockParam,
        "image": t.ImageBlockParam,
        "thinking": t.ThinkingBlockParam,
        "redacted_thinking": t.RedactedThinkingBlockParam,
        "tool_use": t.ToolUseBlockParam,
        "tool_result": t.ToolResultBlockParam,
    }
    roles = {"user": t.UserMessageParam, "assistant": t.AssistantMessageParam}
    for turn in request["messages"]:
        TypeAdapter(roles[turn["role"]]).validate_python({**turn, "content": "x"})
        for block in [] if isinstance(turn["content"], str) else turn["content"]:
            TypeAdapter(blocks[block["type"]]).validate_python(block)
    TypeAdapter(list[t.ToolParam]).validate_python(request.get("tools", []))
    if "tool_choice" in request:
        TypeAdapter(t.ToolChoiceParam).validate_python(request["tool_choice"])


def test_the_anthropic_request_is_what_the_anthropic_sdk_types_describe():
    pytest.importorskip("anthropic")
    request = anthropic_request(CONVERSATION, [GEO], "required")
    anthropic_blocks_valid(request)
    assert request["system"] == "Be brief."
    turns = request["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[1]["content"] == [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "call_1_0", "name": "geocode", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "call_1_1", "name": "geocode", "input": {"city": "Rome"}},
    ]
    # both results and the user's next words in one user turn, the results first
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1_0", "content": '{"x": 48.85}'},
        {"type": "tool_result", "tool_use_id": "call_1_1", "content": "no such city",
         "is_error": True},
        {"type": "text", "text": "And "},
        {"type": "text", "text": "?"},
    ]  # fmt: skip
    assert turns[3]["content"] == "Paris: 48.85." and turns[4]["content"] == "Thanks."
    assert request["tools"] == [
        {
            "name": "geocode",
            "description": "Coordinates of a city.",
            "input_schema": GEO["function"]["parameters"],
        }
    ]
    assert request["tool_choice"] == {"type": "any"}
    assert anthropic_request(MESSAGES, [GEO])["tool_choice"] == {"type": "auto"}
    named = {"type": "function", "function": {"name": "geocode"}}
    assert anthropic_request(MESSAGES, [GEO], named)["tool_choice"] == {
        "type": "tool",
        "name": "geocode",
    }
    assert "tools" not in anthropic_request(MESSAGES, None)  # no tool block: nothing declared
    withheld = anthropic_request(CONVERSATION, None)
    anthropic_blocks_valid(withheld)
    assert withheld["tool_choice"] == {"type": "none"}


def test_several_system_messages_and_signed_reasoning_reach_anthropic():
    pytest.importorskip("anthropic")
    signed = {"type": "reasoning.text", "text": "Think.", "signature": "sig"}
    unsigned = {"type": "reasoning.text", "text": "Unsigned."}
    redacted = {"type": "reasoning.encrypted", "data": "opaque"}
    messages = [
        {"role": "system", "content": "One."},
        {"role": "user", "content": "q"},
        {"role": "developer", "content": "Two."},
        {"role": "assistant", "content": None, "tool_calls": calls("Paris"),
         "reasoning_details": [signed, unsigned, redacted]},
        {"role": "tool", "tool_call_id": "call_1_0", "content": "{}"},
    ]  # fmt: skip
    request = anthropic_request(messages, [GEO])
    anthropic_blocks_valid(request)
    assert request["system"] == [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}]
    assert [b["type"] for b in request["messages"][1]["content"]] == [
        "thinking", "redacted_thinking", "tool_use",
    ]  # fmt: skip
    assert request["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "Think.",
        "signature": "sig",
    }


@pytest.mark.parametrize("convert", [responses_request, anthropic_request])
def test_what_a_protocol_cannot_carry_is_named(convert):
    audio = [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]
    with pytest.raises(ConversionError, match=r"message 1: a content part of type 'input_audio'"):
        convert(audio, None)
    with pytest.raises(ConversionError, match=r"message 2: role 'function'"):
        convert([MESSAGES[1], {"role": "function", "name": "f", "content": "x"}], None)
    with pytest.raises(ConversionError, match=r"tool 1: type 'custom' is not a function tool"):
        convert(MESSAGES, [{"type": "custom", "custom": {"name": "x"}}])


def test_tool_call_arguments_that_are_no_object_cannot_be_a_tool_use_block():
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "[1]"}}
    bad = [MESSAGES[1], {"role": "assistant", "content": None, "tool_calls": [call]}]
    with pytest.raises(ConversionError, match=r"message 2: the arguments of tool call 'c'"):
        anthropic_request(bad, None)


# -- settings and the choice of client ------------------------------------------------------


@needs_anthropic
def test_the_settings_protocol_chooses_the_client():
    with httpx.Client() as http:
        for protocol, kind in zip(
            PROTOCOLS, (OpenAIChatModel, OpenAIResponsesModel, AnthropicMessagesModel),
            strict=True,
        ):  # fmt: skip
            settings = ModelSettings(BASE_URLS[protocol], "m", protocol=protocol)
            assert type(chat_model(settings, http)) is kind
    with pytest.raises(ValueError, match="unknown model protocol 'gemini'; known: chat_comp"):
        ModelSettings(protocol="gemini")
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        ModelSettings(max_tokens=0)


@needs_anthropic
def test_max_tokens_reaches_each_protocol_under_its_name():
    sent = {}
    for protocol in PROTOCOLS:
        server = ScriptedServer(protocol, [SCRIPT[2], SCRIPT[2]])
        with httpx.Client(transport=httpx.MockTransport(server)) as http:
            settings = ModelSettings(BASE_URLS[protocol], "m", protocol=protocol)
            chat_model(settings, http).complete(MESSAGES, None)
            settings = ModelSettings(BASE_URLS[protocol], "m", protocol=protocol, max_tokens=99)
            chat_model(settings, http).complete(MESSAGES, None)
        sent[protocol] = server.requests
    assert "max_tokens" not in sent["chat_completions"][0]
    assert sent["chat_completions"][1]["max_tokens"] == 99
    assert "max_output_tokens" not in sent["responses"][0]
    assert sent["responses"][1]["max_output_tokens"] == 99
    assert [b["max_tokens"] for b in sent["anthropic_messages"]] == [1024, 99]  # required


def test_a_missing_anthropic_sdk_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "anthropic", None)
    settings = ModelSettings("http://model.test", "m", protocol="anthropic_messages")
    with httpx.Client() as http, pytest.raises(ImportError, match=r"toolreplay\[anthropic\]"):
        AnthropicMessagesModel(settings, http)


# -- the anthropic SDK over httpx2, and over an httpx.Client through the bridge -------------


@needs_anthropic
def test_the_anthropic_client_takes_an_httpx2_client_too():
    httpx2 = pytest.importorskip("httpx2")
    server = ScriptedServer("anthropic_messages", SCRIPT)
    settings = ModelSettings(BASE_URLS["anthropic_messages"], "m", protocol="anthropic_messages")
    with httpx2.Client(transport=httpx2.MockTransport(server)) as http:
        episode = run_loop(AnthropicMessagesModel(settings, http), geo_toolset(), MESSAGES)
    expected, _ = run("chat_completions", SCRIPT, stream=False)
    assert outline(episode) == outline(expected)


@needs_anthropic
def test_no_response_is_an_error_naming_the_endpoint():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    settings = ModelSettings("http://model.test", "m", protocol="anthropic_messages")
    with httpx.Client(transport=httpx.MockTransport(refuse)) as http:
        episode = run_loop(chat_model(settings, http), geo_toolset(), MESSAGES)
    assert episode.stop_reason == "error"
    assert episode.error is not None
    assert episode.error.startswith("http://model.test/v1/messages: APIConnectionError")
    assert "ConnectError: connection refused" in episode.error


@needs_anthropic
def test_a_cassette_miss_is_raised_as_itself():
    from toolreplay.cassettes.miss import ReplayMiss

    def miss(request: httpx.Request) -> httpx.Response:
        raise ReplayMiss("no recorded request matches", None, request)

    for protocol in PROTOCOLS[1:]:
        settings = ModelSettings(BASE_URLS[protocol], "m", protocol=protocol)
        with httpx.Client(transport=httpx.MockTransport(miss)) as http:
            with pytest.raises(ReplayMiss, match="no recorded request matches"):
                chat_model(settings, http).complete(MESSAGES, [GEO])


@needs_anthropic
def test_a_stream_that_breaks_off_is_an_error_not_a_hang():
    class Broken(httpx.SyncByteStream):
        def __iter__(self):
            yield b'event: response.created\ndata: {"type": "response.created"'
            raise httpx.ReadError("connection reset")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Broken())

    for protocol in PROTOCOLS[1:]:
        settings = ModelSettings(BASE_URLS[protocol], "m", protocol=protocol, stream=True)
        with httpx.Client(transport=httpx.MockTransport(handler)) as http:
            with pytest.raises(ModelReplyError, match=r"broke off mid-stream .*ReadError"):
                chat_model(settings, http).complete(MESSAGES, [GEO])


# -- real recorded traffic (pydantic-ai's cassettes, MIT) -----------------------------------


class TextToolset(Toolset):
    """Tools answering with fixed text, as the recorded program's tools did."""

    def execute(self, call: ToolCall) -> ToolResult:
        return ToolResult(call, self.functions[call.name]())


def serve_recorded(name: str) -> tuple[list[dict[str, Any]], Any, list[Exchange]]:
    """A handler serving the recorded responses of ``tests/data/foreign/<name>`` in order;
    the bodies the client sent, the handler, and the recorded exchanges."""
    interactions = yaml.safe_load((FOREIGN / name).read_text(encoding="utf-8"))["interactions"]
    recorded = read_exchanges(interactions)
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        x = recorded[len(sent) - 1]
        headers = {"content-type": x.content_type} if x.content_type else {}
        return httpx.Response(x.status, headers=headers, content=x.response_body)

    return sent, handler, recorded


def test_recorded_responses_traffic_plays_through_the_responses_client():
    """``pydantic-ai-responses-stream.yaml``: pydantic-ai's
    ``tests/models/cassettes/test_openai_responses/test_openai_responses_stream.yaml`` (gpt-4o
    over the Responses API, streamed: a ``get_capital`` call, then the answer)."""
    sent, handler, recorded = serve_recorded("pydantic-ai-responses-stream.yaml")
    schema = {"type": "function", "function": {"name": "get_capital", "description": "",
              "parameters": recorded[0].request_body["tools"][0]["parameters"]}}  # fmt: skip
    tools = TextToolset("capitals", (schema,), {"get_capital": lambda: "Paris"})
    settings = ModelSettings("https://api.openai.com/v1", "gpt-4o", stream=True,
                             protocol="responses")  # fmt: skip
    question = [{"role": "user", "content": "What is the capital of France?"}]
    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        episode = run_loop(chat_model(settings, http), tools, question)
    assert episode.stop_reason == "converged" and episode.tool_chain == ["get_capital"]
    assert episode.rounds[0].reply.tool_calls[0].arguments == '{"country":"France"}'
    assert episode.answer == "The capital of France is Paris."
    assert episode.usage.prompt_tokens == 255 + 278 and episode.usage.completion_tokens == 16 + 9
    # what the client sent back is what pydantic-ai sent: the call, then its output
    ours, theirs = sent[1]["input"], recorded[1].request_body["input"]
    shape = [(i.get("type"), i.get("role"), i.get("name"), i.get("arguments"), i.get("output"))
             for i in theirs]  # fmt: skip
    assert [(i.get("type"), i.get("role"), i.get("name"), i.get("arguments"), i.get("output"))
            for i in ours] == shape  # fmt: skip
    call_id = episode.rounds[0].reply.tool_calls[0].id
    assert call_id.startswith("call_") and ours[1]["call_id"] == ours[2]["call_id"] == call_id


@needs_anthropic
def test_recorded_anthropic_traffic_plays_through_the_anthropic_client():
    """``pydantic-ai-anthropic-tool-call.yaml``: pydantic-ai's
    ``tests/models/cassettes/test_tool_choice_matrix/test_tool_choice_matrix[auto-anthropic].yaml``
    (claude-sonnet-4-5: a ``get_weather`` call, then the answer), unstreamed."""
    sent, handler, recorded = serve_recorded("pydantic-ai-anthropic-tool-call.yaml")
    schema = {"type": "function", "function": {"name": "get_weather",
              "description": "Get the current weather for a city.",
              "parameters": recorded[0].request_body["tools"][0]["input_schema"]}}  # fmt: skip
    tools = TextToolset("weather", (schema,), {"get_weather": lambda: "Sunny, 22C in Paris"})
    settings = ModelSettings("https://api.anthropic.com", "claude-sonnet-4-5",
                             protocol="anthropic_messages", max_tokens=4096)  # fmt: skip
    question = [{"role": "user", "content": "What's the weather in Paris?"}]
    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        episode = run_loop(chat_model(settings, http), tools, question)
    assert episode.stop_reason == "converged" and episode.tool_chain == ["get_weather"]
    assert episode.answer.startswith("The weather in Paris is currently sunny")
    # the second request holds what pydantic-ai's held (its text as a block, is_error false)
    theirs = recorded[1].request_body
    ours = sent[1]

    def blocks(turns: list[dict[str, Any]]) -> list[Any]:
        return [
            [{k: v for k, v in b.items() if not (k == "is_error" and v is False)} for b in c]
            if isinstance(c, list) else [{"type": "text", "text": c}]
            for c in (t["content"] for t in turns)
        ]  # fmt: skip

    assert blocks(ours["messages"]) == blocks(theirs["messages"])
    assert [t["role"] for t in ours["messages"]] == [t["role"] for t in theirs["messages"]]
    assert (ours["tools"], ours["tool_choice"], ours["max_tokens"]) == (
        theirs["tools"], theirs["tool_choice"], theirs["max_tokens"],
    )  # fmt: skip


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("protocol", _each(PROTOCOLS))
@pytest.mark.parametrize("max_rounds", [6, 2], ids=["converged", "withheld"])
def test_the_wire_reads_back_the_episode_the_host_ran(protocol, stream, max_rounds):
    """The traffic a client sent and received, read as a cassette by the protocol's wire
    reader, gives the episode the host ran: what a replay will read."""
    from toolreplay.wire.reader import episode_from_interactions

    episode, server = run(protocol, SCRIPT, stream, max_rounds=max_rounds)
    read = episode_from_interactions(server.interactions)
    assert episode.stop_reason == ("converged" if max_rounds == 6 else "max_rounds")
    assert [(r.index, r.tools_offered, r.reply, r.results) for r in read.rounds] == [
        (r.index, r.tools_offered, r.reply, r.results) for r in episode.rounds
    ]
    assert (read.stop_reason, read.answer, read.usage, read.streamed) == (
        episode.stop_reason, episode.answer, episode.usage, stream,
    )  # fmt: skip
    assert list(read.transcript) == list(episode.transcript)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("protocol", _each(PROTOCOLS[1:]))
def test_the_scripted_server_gives_the_chat_completions_episode(protocol, stream):
    """The loopback scripted model (:mod:`toolreplay.doubles.scripted`) answers each
    protocol: the same script gives the same episode over each."""
    from toolreplay.doubles.scripted import scripted_chat_server

    def loop(protocol: str, stream: bool) -> Any:
        with scripted_chat_server(SCRIPT) as server, httpx.Client() as http:
            url = server.root_url if protocol == "anthropic_messages" else server.base_url
            settings = ModelSettings(url, "m", stream=stream, protocol=protocol)
            return run_loop(chat_model(settings, http), geo_toolset(), MESSAGES), server.paths

    expected, _ = loop("chat_completions", False)
    episode, paths = loop(protocol, stream)
    assert paths == [{"responses": "/v1/responses"}.get(protocol, "/v1/messages")] * 3
    assert expected.stop_reason == "converged" and expected.tool_chain == ["geocode"] * 3
    same = ("tool_chain", "answer", "stop_reason", "error")
    assert {k: getattr(episode, k) for k in same} == {k: getattr(expected, k) for k in same}

    def rounds(episode: Any) -> list[Any]:  # the server names calls its protocol's way
        return [
            (r.tools_offered, r.reply.content, [(c.name, c.arguments) for c in r.reply.tool_calls],
             [x.content for x in r.results])
            for r in episode.rounds
        ]  # fmt: skip

    assert rounds(episode) == rounds(expected)
    assert [m.get("content") for m in episode.transcript] == [
        m.get("content") for m in expected.transcript
    ]


def test_the_bridge_streams_raw_bytes_and_translates_transport_errors():
    """An ``httpx2`` client over an ``httpx`` one: a gzip body streamed unread is decoded by
    ``httpx2`` as ``httpx`` would; an ``httpx`` timeout is ``httpx2``'s of the same name."""
    import gzip

    httpx2 = pytest.importorskip("httpx2")
    from toolreplay.models.httpx_bridge import httpx2_client

    class Raw(httpx.SyncByteStream):
        def __iter__(self):
            data = gzip.compress(b'{"ok": true}')
            yield data[:5]
            yield data[5:]

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/slow":
            raise httpx.ReadTimeout("timed out", request=request)
        assert request.headers["x-check"] == "1" and request.content == b"body"
        return httpx.Response(200, headers={"content-encoding": "gzip"}, stream=Raw())

    with httpx.Client(transport=httpx.MockTransport(handler)) as inner:
        client = httpx2_client(inner)
        assert isinstance(client, httpx2.Client) and httpx2_client(client) is client
        response = client.post("http://x.test/ok", content=b"body", headers={"x-check": "1"})
        assert response.json() == {"ok": True}
        with pytest.raises(httpx2.ReadTimeout, match="timed out"):
            client.get("http://x.test/slow")
    with pytest.raises(TypeError, match=r"expected an httpx2\.Client or an httpx\.Client"):
        httpx2_client(object())
