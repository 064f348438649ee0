"""The scripted model server speaks every protocol (``toolreplay.doubles.scripted``): the
Responses API, Anthropic Messages and Gemini as well as Chat Completions, on one port, from the
same script, streamed or not.

Held against the outside:

- each vendor's own SDK reads the replies into its own types (openai ``responses.create``,
  ``responses.stream``; anthropic ``messages.create``, ``messages.stream``; google-genai
  ``generate_content``, ``generate_content_stream``), and the SDKs' own tool loops (anthropic's
  ``tool_runner``, google-genai's automatic function calling, pydantic-ai's agents over each
  protocol) run against it;
- every body and every streamed event validates against the SDK's pydantic type for it;
- the events' shapes and order are those of real recorded traffic: pydantic-ai's cassettes
  (MIT), copied to ``tests/data/foreign``: ``pydantic-ai-responses-phase-stream.yaml``
  (``tests/models/cassettes/test_openai_responses/
  test_openai_responses_phase_streamed_on_part_start.yaml``),
  ``pydantic-ai-anthropic-tool-search-stream.yaml``
  (``tests/cassettes/test_tool_search/test_anthropic_native_tool_search_streaming.yaml``) and
  ``pydantic-ai-gemini-stream-chunks.yaml``
  (``tests/models/cassettes/test_google/test_google_model_iter_stream.yaml``).

httpx flavours: openai 3.x takes an ``httpx.Client``; anthropic 2.x refuses one ("this SDK
uses httpx2") and takes an ``httpx2.Client``; google-genai takes either; pydantic-ai's
providers take ``httpx2.AsyncClient`` (an ``httpx.AsyncClient`` is deprecated there). Every
client is built with ``trust_env=False`` (loopback, no proxy) and without retries, so that a 500
fails the test instead of being retried into the next scripted reply.
"""

from __future__ import annotations

import json
from itertools import groupby
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from toolreplay.doubles.chat_form import ConversationError, conversation, protocol_path
from toolreplay.doubles.replies import (
    anthropic_reply,
    assistant_message,
    gemini_reply,
    responses_reply,
)
from toolreplay.doubles.scripted import scripted_chat_server
from toolreplay.doubles.sse import anthropic_events, gemini_chunks, responses_events
from toolreplay.wire.interactions import read_exchanges
from toolreplay.wire.stream import split_events

FOREIGN = Path(__file__).parent / "data" / "foreign"

CALL = {
    "content": "Checking.",
    "tool_calls": [
        {"id": "call_1", "function": {"name": "check_stock", "arguments": '{"sku": "ABC-1"}'}}
    ],
}
ANSWER = {"content": "ABC-1: 12 units on hand, more than enough for the order."}
THINKING = {
    **ANSWER,
    "reasoning_details": [
        # base64, as Gemini's thoughtSignature is (google-genai decodes it to bytes)
        {"type": "reasoning.text", "text": "The tool said 12 units.", "signature": "c2lnLTE="}
    ],
}


def _openai(server: Any, http: httpx.Client) -> Any:
    import openai

    return openai.OpenAI(base_url=server.base_url, api_key="x", http_client=http, max_retries=0)


def _anthropic(server: Any) -> Any:
    anthropic = pytest.importorskip("anthropic")
    httpx2 = pytest.importorskip("httpx2")
    return anthropic.Anthropic(
        base_url=server.root_url,
        api_key="x",
        http_client=httpx2.Client(trust_env=False),
        max_retries=0,
    )


def _genai(server: Any, http: httpx.Client) -> Any:
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    options = types.HttpOptions(base_url=server.root_url, httpx_client=http)
    return genai.Client(api_key="x", http_options=options)


# --- the Responses API -----------------------------------------------------------------------


def test_the_openai_sdk_reads_responses_replies_streamed_and_not() -> None:
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage

    with scripted_chat_server([CALL, CALL, ANSWER]) as server, httpx.Client(trust_env=False) as h:
        client = _openai(server, h)
        plain = client.responses.create(model="gpt-x", input="stock of ABC-1?")
        events = list(client.responses.create(model="gpt-x", input="stock?", stream=True))
        with client.responses.stream(model="gpt-x", input="stock?") as stream:
            text_deltas = [e for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
    message, call = plain.output
    assert isinstance(message, ResponseOutputMessage) and message.content[0].text == "Checking."
    assert isinstance(call, ResponseFunctionToolCall)
    assert (call.call_id, call.name, call.arguments) == (
        "call_1",
        "check_stock",
        '{"sku": "ABC-1"}',
    )
    assert call.id == "fc_scripted_1_0" and call.status == "completed"
    assert (plain.id, plain.object, plain.status, plain.model) == (
        "resp_scripted_1",
        "response",
        "completed",
        "gpt-x",
    )
    assert plain.usage is not None and plain.usage.input_tokens > 0
    assert plain.usage.total_tokens == plain.usage.input_tokens + plain.usage.output_tokens
    # streamed: the events in the API's order, numbered, pieces that assemble into the reply
    assert [e.sequence_number for e in events] == list(range(len(events)))
    kinds = [k for k, _ in groupby(e.type for e in events)]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    arguments = "".join(
        e.delta for e in events if e.type == "response.function_call_arguments.delta"
    )
    assert (text, arguments) == ("Checking.", '{"sku": "ABC-1"}')
    streamed = events[-1].response
    assert [type(item) for item in streamed.output] == [
        ResponseOutputMessage,
        ResponseFunctionToolCall,
    ]
    assert streamed.output[1].call_id == "call_1"
    # the SDK's own accumulation (responses.stream) gives the reply back, in several pieces
    final_text = "".join(  # Response.output_text joins these (a property since openai 1.x)
        part.text
        for item in final.output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    )
    assert final_text == ANSWER["content"] and len(text_deltas) > 1
    assert server.paths == ["/v1/responses"] * 3
    assert server.requests[1]["stream"] is True and server.requests[0]["input"] == "stock of ABC-1?"


def test_every_responses_body_and_event_is_one_the_sdk_types() -> None:
    from openai.types.responses import Response, ResponseStreamEvent
    from pydantic import TypeAdapter

    reply = {
        **CALL,
        "reasoning_details": [
            {"type": "reasoning.summary", "summary": "Look the SKU up."},
            {"type": "reasoning.text", "text": "ABC-1 is a SKU.", "signature": "enc-1"},
        ],
    }
    body = responses_reply({"model": "m", "input": "stock?"}, assistant_message(reply, 1), 1)
    parsed = Response.model_validate(body)
    reasoning = parsed.output[0]
    assert reasoning.type == "reasoning"
    assert [s.text for s in reasoning.summary] == ["Look the SKU up."]
    assert reasoning.content is not None and reasoning.content[0].text == "ABC-1 is a SKU."
    assert reasoning.encrypted_content == "enc-1"
    adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    events = responses_events(body)
    for name, data in events:
        assert adapter.validate_python(data).type == name
    names = {name for name, _ in events}
    assert {
        "response.reasoning_summary_text.delta",
        "response.reasoning_text.delta",
        "response.function_call_arguments.done",
    } <= names


def _real_events(name: str) -> list[list[tuple[str, dict[str, Any]]]]:
    """The streamed replies of a foreign cassette, each as its (event name, data) list."""
    interactions = yaml.safe_load((FOREIGN / name).read_text(encoding="utf-8"))["interactions"]
    streams = []
    for exchange in read_exchanges(interactions):
        events = split_events(exchange.response_body)
        streams.append([(e.event, json.loads(e.data)) for e in events])
    return streams


def _shape(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Event names in order, each run of one name kept once (pieces vary in number)."""
    return [name for name, _ in groupby(name for name, _ in events)]


def test_responses_events_are_shaped_like_the_apis() -> None:
    """A reply like the real one (encrypted reasoning, commentary text, one function call)
    streams the same events in the same order, each with the real event's fields (its
    ``obfuscation`` padding aside) and items holding no field the real ones lack."""
    real_call, real_answer = _real_events("pydantic-ai-responses-phase-stream.yaml")
    reply = {
        **CALL,
        "reasoning_details": [{"type": "reasoning.encrypted", "signature": "gAAAA-enc"}],
    }
    ours = responses_events(responses_reply({}, assistant_message(reply, 1), 1))
    assert _shape(ours) == _shape(real_call)
    answer = responses_events(responses_reply({}, assistant_message(ANSWER, 2), 2))
    assert _shape(answer) == _shape(real_answer)

    def kind(name: str, data: dict[str, Any]) -> tuple[str, Any]:
        return name, (data.get("item") or data.get("part") or {}).get("type")

    real = {}
    for name, data in real_call + real_answer:
        real.setdefault(kind(name, data), data)
    for name, data in ours + answer:
        like = real[kind(name, data)]
        assert set(data) == set(like) - {"obfuscation"}, name
        for key in ("item", "part", "response"):
            if key in data and isinstance(data[key], dict):
                extra = set(data[key]) - set(like[key])
                assert not extra, (name, key, extra)


# --- Anthropic Messages ----------------------------------------------------------------------


def test_the_anthropic_sdk_reads_messages_streamed_and_not() -> None:
    anthropic = pytest.importorskip("anthropic")
    from anthropic.types import TextBlock, ToolUseBlock

    with pytest.raises(TypeError, match="httpx2"):  # anthropic 2.x refuses an httpx client
        anthropic.Anthropic(api_key="x", http_client=httpx.Client(trust_env=False))
    ask = {"model": "claude-x", "max_tokens": 200, "messages": [{"role": "user", "content": "?"}]}
    with scripted_chat_server([CALL, CALL, CALL, THINKING, THINKING]) as server:
        client = _anthropic(server)
        plain = client.messages.create(**ask)
        raw = list(client.messages.create(**ask, stream=True))
        with client.messages.stream(**ask) as stream:
            streamed = stream.get_final_message()
        thought = client.messages.create(**ask)
        with client.messages.stream(**ask) as stream:
            thought_streamed = stream.get_final_message()
    text, use = plain.content
    assert isinstance(text, TextBlock) and text.text == "Checking."
    assert isinstance(use, ToolUseBlock)
    assert (use.id, use.name, use.input) == ("toolu_call_1", "check_stock", {"sku": "ABC-1"})
    assert (plain.id, plain.type, plain.role, plain.stop_reason) == (
        "msg_scripted_1",
        "message",
        "assistant",
        "tool_use",
    )
    assert plain.usage.input_tokens > 0 and plain.usage.output_tokens > 0
    assert [k for k, _ in groupby(e.type for e in raw)] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    pieces = [e.delta for e in raw if e.type == "content_block_delta"]
    assert "".join(p.partial_json for p in pieces if p.type == "input_json_delta") == (
        '{"sku":"ABC-1"}'
    )
    assert len([p for p in pieces if p.type == "input_json_delta"]) > 1
    # the SDK's accumulation gives the same message as the unstreamed reply (the id aside)
    assert streamed.model_dump(exclude={"id"}) == plain.model_dump(exclude={"id"})
    assert streamed.id == "msg_scripted_3"
    thinking, answer = thought.content
    assert (thinking.type, thinking.thinking, thinking.signature) == (
        "thinking",
        "The tool said 12 units.",
        "c2lnLTE=",
    )
    assert answer.text == ANSWER["content"] and thought.stop_reason == "end_turn"
    assert thought_streamed.model_dump(exclude={"id"}) == thought.model_dump(exclude={"id"})
    assert server.paths == ["/v1/messages"] * 5


def test_every_anthropic_body_and_event_is_one_the_sdk_types() -> None:
    pytest.importorskip("anthropic")
    from anthropic.types import Message, RawMessageStreamEvent
    from pydantic import TypeAdapter

    reply = {
        **CALL,
        "reasoning_details": [
            {"type": "reasoning.text", "text": "Look it up.", "signature": "s"},
            {"type": "reasoning.encrypted", "signature": "redacted-data"},
        ],
    }
    body = anthropic_reply({"model": "m", "messages": []}, assistant_message(reply, 1), 1)
    parsed = Message.model_validate(body)
    assert [b.type for b in parsed.content] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
    ]
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    events = anthropic_events(body)
    for name, data in events:
        if name != "ping":  # sent by the API, not a type of the SDK (it skips it)
            assert adapter.validate_python(data).type == name


def test_anthropic_events_are_shaped_like_the_apis() -> None:
    """A text-only reply streams the real one's events in order; a tool_use block starts and
    fills as the real one does; every event holds no field the real one lacks."""
    real_tool, real_answer = _real_events("pydantic-ai-anthropic-tool-search-stream.yaml")
    answer = anthropic_events(anthropic_reply({}, assistant_message(ANSWER, 1), 1))
    assert _shape(answer) == _shape(real_answer)
    ours = anthropic_events(anthropic_reply({}, assistant_message(CALL, 2), 2))
    real_use = next(
        d
        for n, d in real_tool
        if n == "content_block_start" and d["content_block"]["type"] == "tool_use"
    )
    our_use = next(
        d
        for n, d in ours
        if n == "content_block_start" and d["content_block"]["type"] == "tool_use"
    )
    assert set(our_use["content_block"]) <= set(real_use["content_block"])
    assert our_use["content_block"]["input"] == real_use["content_block"]["input"] == {}

    def kind(name: str, data: dict[str, Any]) -> tuple[str, Any]:
        part = data.get("delta") or data.get("content_block") or {}
        return name, part.get("type")

    real_by_kind = {kind(n, d): d for n, d in real_tool + real_answer}
    for name, data in answer + ours:
        real = real_by_kind[kind(name, data)]
        assert set(data) == set(real), name
        for key in ("delta", "content_block"):
            if isinstance(data.get(key), dict) and isinstance(real.get(key), dict):
                assert set(data[key]) <= set(real[key]), (name, key)


# --- Gemini ----------------------------------------------------------------------------------


def test_google_genai_reads_gemini_replies_streamed_and_not() -> None:
    pytest.importorskip("google.genai")
    unnamed = {"tool_calls": [{"function": {"name": "check_stock", "arguments": "{}"}}]}
    script = [CALL, unnamed, CALL, ANSWER]
    with scripted_chat_server(script) as server, httpx.Client(trust_env=False) as h:
        client = _genai(server, h)
        plain = client.models.generate_content(model="gemini-x", contents="stock of ABC-1?")
        second = client.models.generate_content(model="gemini-x", contents="again")
        chunks = list(client.models.generate_content_stream(model="gemini-x", contents="?"))
        answer = list(client.models.generate_content_stream(model="gemini-x", contents="?"))
    (call,) = plain.function_calls
    assert (call.id, call.name, call.args) == ("call_1", "check_stock", {"sku": "ABC-1"})
    assert plain.candidates[0].content.parts[0].text == "Checking."
    assert plain.candidates[0].finish_reason == "STOP"
    assert (plain.model_version, plain.response_id) == ("gemini-x", "scripted-1")
    usage = plain.usage_metadata
    assert usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count
    # a call the script gave no id goes without one, as Gemini's own do
    assert second.function_calls[0].id is None and second.function_calls[0].name == "check_stock"
    streamed_calls = [c for chunk in chunks for c in chunk.function_calls or []]
    assert [(c.id, c.args) for c in streamed_calls] == [("call_1", {"sku": "ABC-1"})]
    assert chunks[-1].candidates[0].finish_reason == "STOP"
    assert "".join(c.text or "" for c in answer) == ANSWER["content"] and len(answer) > 1
    assert server.paths[0].endswith("/models/gemini-x:generateContent")
    assert server.paths[2].endswith("/models/gemini-x:streamGenerateContent")


def test_gemini_streamed_without_sse_is_a_json_array_of_chunks() -> None:
    pytest.importorskip("google.genai")
    from google.genai import types

    with scripted_chat_server([THINKING]) as server:
        reply = httpx.post(
            f"{server.root_url}/v1beta/models/gemini-x:streamGenerateContent",
            json={"contents": [{"role": "user", "parts": [{"text": "?"}]}]},
        )
    assert reply.headers["content-type"] == "application/json"
    chunks = [types.GenerateContentResponse.model_validate(c) for c in reply.json()]
    parts = [p for c in chunks for p in c.candidates[0].content.parts]
    assert parts[0].thought is True and parts[0].thought_signature == b"sig-1"
    assert "".join(p.text for p in parts[1:]) == ANSWER["content"]


def test_every_gemini_body_and_chunk_is_one_the_sdk_types() -> None:
    pytest.importorskip("google.genai")
    from google.genai import types

    body = gemini_reply({"contents": []}, assistant_message(THINKING, 1), 1, "gemini-x")
    parsed = types.GenerateContentResponse.model_validate(body)  # unknown fields are refused
    assert parsed.candidates[0].content.parts[0].thought is True
    for chunk in gemini_chunks(body):
        types.GenerateContentResponse.model_validate(chunk)


def test_gemini_chunks_are_shaped_like_the_apis() -> None:
    """Each chunk holds the real chunks' fields (their response id aside, and the index the
    newer API sends); a function call comes whole in one chunk; the finish reason on the
    last."""
    streams = _real_events("pydantic-ai-gemini-stream-chunks.yaml")
    real = [data for stream in streams for _, data in stream]
    body = gemini_reply({}, assistant_message(CALL, 1), 1, "gemini-2.0-flash", frozenset({0}))
    ours = gemini_chunks(body)
    real_keys = set().union(*(set(c) for c in real))
    for chunk in ours:
        assert set(chunk) - real_keys <= {"responseId"}
        candidate_keys = set().union(*(set(c["candidates"][0]) for c in real))
        assert set(chunk["candidates"][0]) - candidate_keys <= {"index"}
    real_call = real[0]["candidates"][0]["content"]["parts"][0]["functionCall"]
    our_call = ours[-1]["candidates"][0]["content"]["parts"][0]["functionCall"]
    assert set(our_call) - set(real_call) == {"id"}  # the script named its call
    assert [("finishReason" in c["candidates"][0]) for c in ours] == [False, True]


# --- the SDKs' own tool loops ----------------------------------------------------------------


def _stock_script(body: dict[str, Any]) -> dict[str, Any]:
    """Call check_stock first; answer with what the tool returned once it is in the request."""
    sent = json.dumps(body)
    if "12 units" not in sent:
        return {
            "tool_calls": [{"function": {"name": "check_stock", "arguments": '{"sku": "ABC-1"}'}}]
        }
    return {"content": "ABC-1: 12 units on hand."}


def check_stock(sku: str) -> str:
    """Units on hand of a SKU."""
    return f"{sku}: 12 units"


def test_googles_automatic_function_calling_runs_its_loop() -> None:
    pytest.importorskip("google.genai")
    from google.genai import types

    with scripted_chat_server(_stock_script) as server, httpx.Client(trust_env=False) as h:
        client = _genai(server, h)
        config = types.GenerateContentConfig(tools=[check_stock])
        reply = client.models.generate_content(model="gemini-x", contents="?", config=config)
    assert reply.text == "ABC-1: 12 units on hand."
    assert len(server.requests) == 2
    answered = server.requests[1]["contents"][-1]["parts"][0]["functionResponse"]
    assert answered["name"] == "check_stock" and "ABC-1: 12 units" in json.dumps(answered)


def test_anthropics_tool_runner_runs_its_loop() -> None:
    anthropic = pytest.importorskip("anthropic")

    tool = anthropic.beta_tool(check_stock)
    with scripted_chat_server(_stock_script) as server:
        client = _anthropic(server)
        runner = client.beta.messages.tool_runner(
            model="claude-x",
            max_tokens=200,
            tools=[tool],
            messages=[{"role": "user", "content": "stock of ABC-1?"}],
        )
        final = runner.until_done()
    assert final.content[0].text == "ABC-1: 12 units on hand."
    result = server.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_call_1_0"
    assert "ABC-1: 12 units" in json.dumps(result["content"])


@pytest.mark.parametrize("protocol", ["responses", "anthropic", "google"])
@pytest.mark.parametrize("streamed", [False, True])
def test_pydantic_ai_agents_run_their_loop_over_each_protocol(
    protocol: str, streamed: bool
) -> None:
    """pydantic-ai's agent loop (its model classes for each API, its tool calling) recorded
    against the server: the tool runs with the scripted arguments, its result travels back,
    the answer is the script's."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent

    seen: list[str] = []

    with scripted_chat_server(_stock_script) as server:
        model = _pydantic_ai_model(protocol, server)
        agent = Agent(model)

        @agent.tool_plain
        def check_stock(sku: str) -> str:
            """Units on hand of a SKU."""
            seen.append(sku)
            return f"{sku}: 12 units"

        if streamed:

            async def run() -> str:
                async with agent.run_stream("stock of ABC-1?") as result:
                    return await result.get_output()

            import asyncio

            output = asyncio.run(run())
        else:
            output = agent.run_sync("stock of ABC-1?").output
    assert output == "ABC-1: 12 units on hand."
    assert seen == ["ABC-1"] and len(server.requests) == 2


def _pydantic_ai_model(protocol: str, server: Any) -> Any:
    httpx2 = pytest.importorskip("httpx2")  # pydantic-ai's providers: httpx is deprecated there
    if protocol == "responses":
        from pydantic_ai.models.openai import OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        provider = OpenAIProvider(
            base_url=server.base_url, api_key="x", http_client=httpx2.AsyncClient(trust_env=False)
        )
        return OpenAIResponsesModel("gpt-x", provider=provider)
    if protocol == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        provider = AnthropicProvider(
            base_url=server.root_url, api_key="x", http_client=httpx2.AsyncClient(trust_env=False)
        )
        return AnthropicModel("claude-x", provider=provider)
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    provider = GoogleProvider(
        api_key="x",
        base_url=server.root_url,
        http_client=httpx2.AsyncClient(trust_env=False, timeout=30),
    )
    return GoogleModel("gemini-x", provider=provider)


# --- what the server serves ------------------------------------------------------------------


def test_a_whole_body_is_served_as_it_is_and_streams_too() -> None:
    anthropic_body = {
        "id": "msg_given",
        "type": "message",
        "role": "assistant",
        "model": "claude-given",
        "content": [{"type": "text", "text": "Given as a whole."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    gemini_body = {
        "candidates": [
            {"content": {"parts": [{"text": "Whole."}], "role": "model"}, "finishReason": "STOP"}
        ],
        "modelVersion": "gemini-given",
    }
    script = [anthropic_body, anthropic_body, gemini_body]
    with scripted_chat_server(script) as server, httpx.Client(trust_env=False) as h:
        ask = {"model": "c", "max_tokens": 10, "messages": [{"role": "user", "content": "?"}]}
        plain = h.post(f"{server.root_url}/v1/messages", json=ask)
        streamed = h.post(f"{server.root_url}/v1/messages", json={**ask, "stream": True})
        gemini = h.post(f"{server.root_url}/v1beta/models/g:generateContent", json={})
    assert plain.json() == anthropic_body
    deltas = [json.loads(e.data) for e in split_events(streamed.content)]
    assert "".join(
        d["delta"].get("text", "") for d in deltas if d["type"] == "content_block_delta"
    ) == ("Given as a whole.")
    assert deltas[0]["message"]["id"] == "msg_given"
    assert gemini.json() == gemini_body


def test_a_body_of_another_protocol_and_a_bad_call_are_named() -> None:
    chat_body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}}]}
    bad = {"tool_calls": [{"function": {"name": "f", "arguments": "[1, 2]"}}]}
    with scripted_chat_server([chat_body, bad]) as server, httpx.Client(trust_env=False) as h:
        wrong = h.post(f"{server.base_url}/responses", json={"input": "?"})
        refused = h.post(f"{server.root_url}/v1/messages", json={"messages": []})
    assert wrong.status_code == 500
    assert "whole Chat Completions body, but the request is a Responses API one" in wrong.text
    assert refused.status_code == 500
    assert "tool call call_2_0 (f): arguments '[1, 2]' are not a JSON object" in refused.text


def test_unknown_paths_are_404_naming_the_path_and_an_exhausted_script_names_the_request() -> None:
    with scripted_chat_server([]) as server, httpx.Client(trust_env=False) as h:
        post = h.post(f"{server.root_url}/v1/embeddings", json={})
        get = h.get(f"{server.root_url}/v1/models")
        gemini = h.post(f"{server.root_url}/v1beta/models/g:countTokens", json={})
        exhausted = h.post(f"{server.root_url}/v1/messages", json={"messages": []})
        one_input = h.post(f"{server.base_url}/responses", json={"input": "stock?"})
    assert post.status_code == get.status_code == gemini.status_code == 404
    assert post.json()["error"]["message"] == "no POST /v1/embeddings"
    assert get.json()["error"]["message"] == "no GET /v1/models"
    assert "countTokens" in gemini.text
    assert exhausted.status_code == 500
    assert "no reply for request 1 (POST /v1/messages" in exhausted.text
    assert "no reply for request 2 (POST /v1/responses, 1 messages)" in one_input.text
    assert server.paths == ["/v1/messages", "/v1/responses"]  # what was not routed is not logged


def test_replies_are_byte_identical_from_one_run_to_the_next() -> None:
    asks = [
        ("/v1/chat/completions", {"messages": [], "stream": True}),
        ("/v1/responses", {"input": "?", "stream": True}),
        ("/v1/messages", {"messages": [], "stream": True}),
        ("/v1beta/models/g:streamGenerateContent?alt=sse", {"contents": []}),
        ("/v1/responses", {"input": "?"}),
    ]

    def run() -> list[bytes]:
        with scripted_chat_server([CALL] * len(asks)) as server:
            with httpx.Client(trust_env=False) as h:
                return [h.post(server.root_url + path, json=body).content for path, body in asks]

    first, second = run(), run()
    assert first == second
    assert first[3].startswith(b"data: {") and b"\r\n\r\n" in first[3]


# --- the conversation in Chat Completions form -----------------------------------------------


def test_a_script_reads_a_chat_request_as_its_conversation() -> None:
    seen: list[list[dict[str, Any]]] = []

    def script(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(conversation(body))
        return ANSWER

    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "?"}]
    with scripted_chat_server(script) as server:
        httpx.post(f"{server.base_url}/chat/completions", json={"messages": messages})
    assert seen == [messages]


#: One request of each protocol carrying the same conversation: a question, a tool call, its
#: result. (The request shapes: each API's reference for a tool result turn.)
SAME_CONVERSATION = {
    "/v1/responses": {
        "model": "m",
        "input": [
            {"role": "user", "content": "stock?"},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "check_stock",
                "arguments": '{"sku": "ABC-1"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "12"},
        ],
    },
    "/v1/messages": {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "stock?"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "check_stock",
                        "input": {"sku": "ABC-1"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "12"}],
            },
        ],
    },
    "/v1beta/models/m:generateContent": {
        "contents": [
            {"role": "user", "parts": [{"text": "stock?"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {
                            "id": "call_1",
                            "name": "check_stock",
                            "args": {"sku": "ABC-1"},
                        }
                    }
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "call_1",
                            "name": "check_stock",
                            "response": {"result": "12"},
                        }
                    }
                ],
            },
        ],
    },
}


@pytest.mark.parametrize("path", sorted(SAME_CONVERSATION))
def test_a_script_reads_any_protocols_request_as_its_conversation(path: str) -> None:
    """The same conversation in each protocol reads as one Chat Completions conversation
    (the wire readers'; a protocol whose reader is not written yet is skipped)."""
    from toolreplay.doubles.chat_form import exchange_of
    from toolreplay.wire.reader import protocol_of

    body = SAME_CONVERSATION[path]
    if protocol_of(exchange_of(body, path)) is None:
        pytest.skip(f"no wire reader reads POST {path} yet")
    assert protocol_path(body).split("/")[-1].split(":")[-1] == path.split("/")[-1].split(":")[-1]
    seen: list[list[dict[str, Any]]] = []

    def script(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(conversation(request))
        return ANSWER

    with scripted_chat_server(script) as server:
        httpx.post(server.root_url + path, json=body)
    (messages,) = seen
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    (call,) = messages[1]["tool_calls"]
    assert call["function"]["name"] == "check_stock"
    assert json.loads(call["function"]["arguments"]) == {"sku": "ABC-1"}
    assert messages[2]["tool_call_id"] == call["id"]
    assert "12" in json.dumps(messages[2]["content"])


def test_the_protocol_is_told_from_the_body_outside_a_script() -> None:
    assert protocol_path({"messages": []}) == "/v1/chat/completions"
    assert protocol_path(SAME_CONVERSATION["/v1/messages"]) == "/v1/messages"
    assert protocol_path({"model": "m", "system": "x", "messages": []}) == "/v1/messages"
    assert protocol_path(SAME_CONVERSATION["/v1/responses"]) == "/v1/responses"
    assert protocol_path({"contents": []}).endswith(":generateContent")
    assert conversation({"messages": [{"role": "user", "content": "?"}]}) == [
        {"role": "user", "content": "?"}
    ]
    with pytest.raises(ConversationError, match="POST /v1/chat/completions"):
        conversation({"prompt": "?"})


def test_a_responses_request_continuing_a_reply_reads_the_whole_conversation() -> None:
    """A request naming ``previous_response_id`` (the server keeps the history) reads as the
    conversation that reply ended, then its own input (skipped until the Responses API
    reader is written)."""
    from toolreplay.doubles.chat_form import exchange_of
    from toolreplay.wire.reader import protocol_of

    first = {"model": "m", "input": [{"role": "user", "content": "stock?"}]}
    if protocol_of(exchange_of(first, "/v1/responses")) is None:
        pytest.skip("no wire reader reads POST /v1/responses yet")
    seen: list[list[dict[str, Any]]] = []

    def script(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(conversation(request))
        return CALL if len(seen) == 1 else ANSWER

    follow = {
        "model": "m",
        "previous_response_id": "resp_scripted_1",
        "input": [{"type": "function_call_output", "call_id": "call_1", "output": "12"}],
    }
    with scripted_chat_server(script) as server, httpx.Client(trust_env=False) as h:
        assert h.post(f"{server.base_url}/responses", json=first).status_code == 200
        assert h.post(f"{server.base_url}/responses", json=follow).status_code == 200
    assert [m["role"] for m in seen[1]] == ["user", "assistant", "tool"]
    assert seen[1][1]["tool_calls"][0]["id"] == "call_1"
    assert seen[1][2]["tool_call_id"] == "call_1"
