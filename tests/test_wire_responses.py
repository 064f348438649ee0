# ruff: noqa: E501  (input items and stream events are kept one per line, as the API reference lists them)
"""The Responses API wire reader (``toolreplay.wire.responses``) on traffic nobody on this
project wrote, and on cases written from OpenAI's API reference for ``POST /v1/responses``.

Real recordings, copied from pydantic/pydantic-ai (MIT), ``tests/models/cassettes/
test_openai_responses/`` (each file's header names its source file; only the content-type
headers are kept):

- ``pydantic-ai-responses-reasoning-tool-call.yaml``
  (``test_openai_responses_requires_function_call_status_none.yaml``): a reasoning model
  (encrypted reasoning) calls a tool, then answers;
- ``pydantic-ai-responses-stream.yaml`` (``test_openai_responses_stream.yaml``): the same loop
  streamed; pydantic-ai sent the call back under its item id (``fc_...``), not its call_id;
- ``pydantic-ai-responses-chain.yaml``
  (``test_openai_previous_response_id_seed_auto_chains_through_retries.yaml``): four requests
  chained by ``previous_response_id``, each sending only its new input, a tool retried;
- ``pydantic-ai-responses-openrouter-reasoning-stream.yaml``
  (``test_openai_responses_raw_cot_stream_openrouter.yaml``): OpenRouter streaming
  ``reasoning_text`` deltas, an ``: OPENROUTER PROCESSING`` comment and a final ``[DONE]``.

And from DataDog/dd-trace-py (BSD-3-Clause / Apache-2.0), ``tests/contrib/openai/cassettes/v1/``:
``ddtrace-responses-prompt.yaml`` (``response_with_prompt.yaml``): a request holding only a
stored ``prompt`` template (no ``input``), answered by a completed Response.

And from vercel/ai (Apache-2.0, Copyright 2023 Vercel, Inc.), at ``ed857f50f112``:
``vercel-xai-responses-server-side-tools.yaml`` holds
``packages/xai/src/responses/__fixtures__/xai-x-search-tool.chunks.txt``, xAI's grok-4-fast
streaming a reply after running its own ``x_search`` and ``web_search`` tools (reported as
``custom_tool_call`` items, ``status: completed``, and ``web_search_call`` items), as one
cassette reply to the request vercel/ai's test makes; to keep the file small, 1,698 of its
1,701 ``response.output_text.delta`` events and its 20 ``annotation.added`` events are left
out (the reply is read from ``response.completed``, kept whole).

Expected values are read from the recorded bodies through the openai SDK's own types
(``Response`` built as the SDK builds a body it receives, ``construct_type``) and its own
stream accumulation (``ResponseStreamState``), or by eye from the files, never from this
reader's output. The hand-written events and bodies follow the API reference's shapes
(``openai.types.responses``: ``Response``, ``ResponseStreamEvent``, ``ResponseInputItemParam``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from openai._models import construct_type
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.responses import Response, ResponseStreamEvent

from toolreplay.wire.interactions import read_exchanges
from toolreplay.wire.reader import episodes_from_interactions, protocol_of, read_wire_episodes
from toolreplay.wire.replies import ModelReplyError
from toolreplay.wire.responses import RESPONSES
from toolreplay.wire.stream import split_events

try:
    from openai import omit  # "not given", as the stream state takes it
except ImportError:  # openai before 2.x names it NOT_GIVEN
    from openai import NOT_GIVEN as omit  # type: ignore[assignment]

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"
URI = "https://api.openai.com/v1/responses"


def _yaml(name: str) -> list[dict[str, Any]]:
    data = yaml.safe_load((FOREIGN / name).read_text(encoding="utf-8"))
    return list(data["interactions"])


def _output_text(response: Response) -> str:
    """The text of the response's ``output_text`` parts, joined, as the openai SDK's
    ``Response.output_text`` gives it (a property the lowest SDK versions lack)."""
    return "".join(
        part.text
        for item in response.output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    )


def _sdk_response(body: Any) -> Response:
    """A response body as the openai SDK builds it from what it receives."""
    return construct_type(type_=Response, value=body)  # type: ignore[no-any-return]


def _sdk_stream(body: str) -> Response:
    """The response the openai SDK's own stream accumulation completes with."""
    state = ResponseStreamState(input_tools=omit, text_format=omit)
    final = None
    for event in split_events(body):
        if event.data.strip() == "[DONE]":
            continue
        raw = construct_type(type_=ResponseStreamEvent, value=json.loads(event.data))
        for out in state.handle_event(raw):  # type: ignore[arg-type]
            if out.type in ("response.completed", "response.incomplete"):
                final = out.response
    assert final is not None
    return final  # type: ignore[return-value]


def _sdk_replies(interactions: list[dict[str, Any]]) -> list[Response]:
    found = []
    for item in interactions:
        response = item["response"]
        if "parsed_body" in response:
            found.append(_sdk_response(response["parsed_body"]))
        else:
            found.append(_sdk_stream(response["body"]["string"]))
    return found


def _calls(response: Response) -> list[tuple[str, str, str]]:
    return [(o.call_id, o.name, o.arguments) for o in response.output if o.type == "function_call"]


# -- real recordings -----------------------------------------------------------------------


def test_a_reasoning_model_s_tool_loop_reads_as_the_sdk_reads_its_responses():
    interactions = _yaml("pydantic-ai-responses-reasoning-tool-call.yaml")
    first, last = _sdk_replies(interactions)
    (wire,) = read_wire_episodes(interactions)
    episode = wire.episode
    assert [len(r.results) for r in episode.rounds] == [1, 0] and not episode.streamed
    (call,) = episode.tool_calls
    assert [(call.id, call.name, call.arguments)] == _calls(first)
    assert episode.rounds[0].results[0].content == "42"  # function_call_output, by eye
    assert episode.answer == _output_text(last) == "42"
    assert episode.stop_reason == "converged" and episode.error is None
    assert [r.reply.finish_reason for r in episode.rounds] == ["tool_calls", "stop"]
    assert episode.usage.prompt_tokens == first.usage.input_tokens + last.usage.input_tokens
    assert episode.usage.completion_tokens == (first.usage.output_tokens + last.usage.output_tokens)
    (reasoning,) = [o for o in first.output if o.type == "reasoning"]
    details = episode.rounds[0].reply.reasoning["reasoning_details"]
    assert [d["type"] for d in details] == ["reasoning.encrypted"]
    assert (details[0]["data"], details[0]["id"]) == (reasoning.encrypted_content, reasoning.id)
    # the echoed reasoning and call are ONE assistant message, then the tool's output
    assert [m["role"] for m in episode.transcript] == ["user", "assistant", "tool", "assistant"]
    assert episode.transcript[1]["reasoning_details"] == details
    assert episode.question == "What is the meaning of life?"


def test_a_streamed_tool_loop_reads_as_the_sdk_accumulates_it():
    interactions = _yaml("pydantic-ai-responses-stream.yaml")
    first, last = _sdk_replies(interactions)
    (wire,) = read_wire_episodes(interactions)
    episode = wire.episode
    assert episode.streamed and not episode.faults and episode.error is None
    (call,) = episode.tool_calls
    ((_, name, arguments),) = _calls(first)
    assert (
        (call.name, call.arguments) == (name, arguments) == ("get_capital", '{"country":"France"}')
    )
    # pydantic-ai sent the call back under its item id: the id it sent back names the call
    assert call.id == first.output[0].id == "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2"
    assert episode.rounds[0].results[0].content == "Paris"
    assert episode.answer == _output_text(last) == "The capital of France is Paris."
    assert (len(episode.rounds), episode.stop_reason) == (2, "converged")
    assert episode.usage.prompt_tokens == first.usage.input_tokens + last.usage.input_tokens
    assert (
        episode.usage.completion_tokens
        == 16 + 9
        == (first.usage.output_tokens + last.usage.output_tokens)
    )
    assert RESPONSES.reply_id(read_exchanges(interactions)[0]) == first.id


def test_a_previous_response_id_chain_is_one_conversation():
    interactions = _yaml("pydantic-ai-responses-chain.yaml")
    replies = _sdk_replies(interactions)
    bodies = [i["request"]["parsed_body"] for i in interactions]
    assert [b.get("previous_response_id") for b in bodies[1:]] == [r.id for r in replies[:3]]
    assert all(len(b["input"]) == 1 for b in bodies)  # each request sends its new input only
    (wire,) = read_wire_episodes(interactions)
    episode = wire.episode
    assert len(episode.rounds) == 4 and episode.stop_reason == "converged"
    calls = [c for r in replies for c in _calls(r)]
    assert [(c.id, c.name, c.arguments) for c in episode.tool_calls] == calls
    assert [c.parsed_arguments() for c in episode.tool_calls] == [
        {"city": "New York"}, {"city": "NYC"},
    ]  # fmt: skip
    results = [r.content for rnd in episode.rounds for r in rnd.results]
    assert results[0].startswith("Location not recognized.") and results[1] == "Sunny, 72F"
    assert (
        episode.answer == _output_text(replies[-1]) == "The weather in New York is sunny and 72°F."
    )
    assert episode.question == "Say hi in one word, no punctuation."
    assert episode.usage.prompt_tokens == sum(r.usage.input_tokens for r in replies)
    assert episode.usage.completion_tokens == sum(r.usage.output_tokens for r in replies)
    roles = [m["role"] for m in episode.transcript]
    assert roles == [
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert episode.transcript[1]["content"] == _output_text(replies[0]) == "Hello"


def test_openrouter_s_streamed_reasoning_text_is_kept_on_the_reply():
    interactions = _yaml("pydantic-ai-responses-openrouter-reasoning-stream.yaml")
    (sdk,) = _sdk_replies(interactions)
    (episode,) = episodes_from_interactions(interactions)
    assert episode.streamed and episode.answer == _output_text(sdk) == "4"
    (reasoning,) = [o for o in sdk.output if o.type == "reasoning"]
    assert reasoning.content is not None
    (reply,) = [r.reply for r in episode.rounds]
    assert reply.reasoning_text == reasoning.content[0].text
    assert reply.reasoning_text.startswith('The user asks: "What is 2+2?"')
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (78, 37)
    assert episode.stop_reason == "converged" and not episode.rounds[0].tools_offered


def test_chat_completions_and_responses_interactions_in_one_cassette():
    chat = yaml.safe_load((FOREIGN / "pydantic-ai-openai-tool-call.yaml").read_text())
    both = [*chat["interactions"], *_yaml("pydantic-ai-responses-stream.yaml")]
    assert [protocol_of(x).name for x in read_exchanges(both)] == [  # type: ignore[union-attr]
        "Chat Completions", "Chat Completions", "Responses API", "Responses API",
    ]  # fmt: skip
    episodes = episodes_from_interactions(both)
    assert [e.answer for e in episodes] == [
        "The temperature in Tokyo is currently 20.0 degrees Celsius.",
        "The capital of France is Paris.",
    ]
    assert [e.tool_chain for e in episodes] == [["get_temperature"], ["get_capital"]]


# -- hand-written, from the API reference ---------------------------------------------------


def _interaction(body: dict[str, Any], reply: Any, status: int = 200, uri: str = URI) -> dict:
    """One recorded exchange; ``reply`` a Response dict (JSON) or an SSE body (str)."""
    if isinstance(reply, str):
        response: dict[str, Any] = {
            "headers": {"content-type": ["text/event-stream; charset=utf-8"]},
            "body": {"string": reply},
        }
    else:
        response = {"headers": {"content-type": ["application/json"]}, "parsed_body": reply}
    response["status"] = {"code": status}
    return {"request": {"method": "POST", "uri": uri, "parsed_body": body}, "response": response}


def _response(rid: str, output: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body = {
        "id": rid, "object": "response", "created_at": 1, "model": "gpt-5", "status": "completed",
        "error": None, "incomplete_details": None, "output": output,
        "usage": {"input_tokens": 20, "output_tokens": 7, "total_tokens": 27},
    }  # fmt: skip
    return {**body, **extra}


def _text(text: str, mid: str = "msg_1") -> dict[str, Any]:
    return {
        "type": "message", "id": mid, "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }  # fmt: skip


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call", "id": "fc_" + call_id, "call_id": call_id, "name": name,
        "arguments": arguments, "status": "completed",
    }  # fmt: skip


def _sse(*events: dict[str, Any]) -> str:
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n"
        for n, e in enumerate(events)
    )


def _reply(body: dict[str, Any], reply: Any, status: int = 200):
    (exchange,) = read_exchanges([_interaction(body, reply, status)])
    return RESPONSES.reply(exchange)


@pytest.mark.parametrize(
    ("method", "uri", "body", "expected"),
    [
        ("POST", URI, {"model": "m", "input": "hi"}, True),
        ("POST", URI + "?api-version=preview", {"input": [{"role": "user", "content": "x"}]}, True),
        ("POST", URI, {"model": "m", "previous_response_id": "resp_1"}, True),
        ("POST", URI + "/compact", {"model": "m", "input": "hi"}, False),
        ("POST", URI + "/input_tokens", {"model": "m", "input": "hi"}, False),
        ("GET", URI + "/resp_1", None, False),
        ("POST", URI, {"model": "m", "prompt": {"id": "pmpt_1"}}, True),
        ("POST", URI, {"model": "m", "prompt": {"variables": {"q": "x"}}}, False),
        ("POST", URI, {"model": "m", "prompt": "pmpt_1"}, False),
        ("POST", "https://api.openai.com/v1/chat/completions", {"messages": []}, False),
    ],
)
def test_what_is_a_responses_request(method, uri, body, expected):
    item = _interaction(body, _response("r", []), uri=uri)
    item["request"]["method"] = method
    (exchange,) = read_exchanges([item])
    assert RESPONSES.is_request(exchange) is expected


def test_input_items_read_in_chat_completions_form():
    """Each item shape of ``ResponseInputItemParam`` the module docstring lists."""
    body = {
        "model": "gpt-5", "instructions": "Be brief.", "tools": [{"type": "function", "name": "f"}],
        "input": [
            {"role": "developer", "content": "Use metric units."},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "Weather in "}, {"type": "input_text", "text": "Oslo?"},
            ]},
            {"role": "user", "content": [
                {"type": "input_text", "text": "and this:"},
                {"type": "input_image", "image_url": "https://x/a.png", "detail": "auto"},
            ]},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look up."}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
            {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search"}},
            {"type": "function_call", "call_id": "c1", "name": "geocode", "arguments": '{"q":"Oslo"}'},
            {"type": "custom_tool_call", "call_id": "c2", "name": "sql", "input": "SELECT 1"},
            {"type": "function_call_output", "call_id": "c1", "output": '{"lat":59.9}'},
            {"type": "custom_tool_call_output", "call_id": "c2", "output": [
                {"type": "input_text", "text": "1"},
            ]},
            {"type": "item_reference", "id": "msg_0"},
            {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't."}]},
        ],
    }  # fmt: skip
    (exchange,) = read_exchanges([_interaction(body, _response("r", []))])
    request = RESPONSES.request(exchange, {})
    assert request.tools_offered and not request.streamed
    assert list(request.messages) == [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "Use metric units."},
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "user", "content": [
            {"type": "text", "text": "and this:"},
            {"type": "input_image", "image_url": "https://x/a.png", "detail": "auto"},
        ]},
        {"role": "assistant", "content": "Checking.",
         "reasoning_details": [{"type": "reasoning.summary", "summary": "Look up.",
                                "format": "openai-responses-v1", "id": "rs_1"}],
         "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "geocode", "arguments": '{"q":"Oslo"}'}},
            {"id": "c2", "type": "function", "function": {"name": "sql", "arguments": "SELECT 1"}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"lat":59.9}'},
        {"role": "tool", "tool_call_id": "c2", "content": "1"},
        {"role": "assistant", "content": None, "refusal": "I can't."},
    ]  # fmt: skip


def test_a_chain_resolves_its_history_and_does_not_repeat_the_instructions():
    first = {"model": "m", "instructions": "Be brief.", "input": "Capital of France?"}
    second = {"model": "m", "instructions": "Be brief.", "previous_response_id": "resp_a",
              "input": [{"role": "user", "content": "And Italy?"}], "stream": False}  # fmt: skip
    interactions = [
        _interaction(first, _response("resp_a", [_text("Paris.")])),
        _interaction(second, _response("resp_b", [_text("Rome.")])),
    ]
    (episode,) = episodes_from_interactions(interactions)
    assert list(episode.transcript) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "And Italy?"},
        {"role": "assistant", "content": "Rome."},
    ]
    assert len(episode.rounds) == 2 and episode.answer == "Rome."
    # a chain begun before the cassette: the request's own input is the conversation
    (alone,) = read_exchanges([interactions[1]])
    assert [m["content"] for m in RESPONSES.request(alone, {}).messages] == [
        "Be brief.", "And Italy?",
    ]  # fmt: skip


def test_a_conversation_of_the_conversations_api_continues_like_a_chain():
    tools = [{"type": "function", "name": "code"}]
    first = {"model": "m", "conversation": "conv_1", "tools": tools, "input": "Get the code."}
    second = {"model": "m", "conversation": {"id": "conv_1"}, "tools": tools,
              "input": [{"type": "function_call_output", "call_id": "c1", "output": "X-1"}]}  # fmt: skip
    (episode,) = episodes_from_interactions([
        _interaction(first, _response("resp_a", [_call("c1", "code", "{}")])),
        _interaction(second, _response("resp_b", [_text("X-1")])),
    ])  # fmt: skip
    assert episode.tool_chain == ["code"] and episode.rounds[0].results[0].content == "X-1"
    assert (episode.answer, episode.stop_reason) == ("X-1", "converged")


@pytest.mark.parametrize(
    ("reason", "finish", "stop"),
    [
        ("max_output_tokens", "length", "truncated"),
        ("content_filter", "content_filter", "filtered"),
    ],
)
def test_an_incomplete_response_ends_the_episode_as_its_reason_says(reason, finish, stop):
    body = _response(
        "resp_i", [_text("The answer is")], status="incomplete",
        incomplete_details={"reason": reason},
    )  # fmt: skip
    (episode,) = episodes_from_interactions([_interaction({"input": "Q?"}, body)])
    assert episode.rounds[0].reply.finish_reason == finish
    assert (episode.stop_reason, episode.answer) == (stop, "The answer is")


def test_a_failed_response_is_an_error_naming_its_code_and_message():
    error = {"code": "server_error", "message": "The model failed to generate a response."}
    body = _response("resp_f", [], status="failed", error=error)
    with pytest.raises(ModelReplyError, match="server_error: The model failed to generate"):
        _reply({"input": "Q?"}, body)
    (episode,) = episodes_from_interactions([_interaction({"input": "Q?"}, body)])
    assert episode.stop_reason == "error" and "server_error" in (episode.error or "")


def test_an_error_status_reads_as_the_sdk_words_it():
    error = {"error": {"message": "Invalid 'input'.", "type": "invalid_request_error",
                       "param": "input", "code": None}}  # fmt: skip
    with pytest.raises(ModelReplyError, match="BadRequestError: Error code: 400"):
        _reply({"input": "Q?"}, error, status=400)


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (_response("resp_q", [], status="queued"), "the response is queued"),
        ({"id": "resp_x", "object": "response"}, "'output' is missing"),
        ([1, 2], "the JSON body is list, not a Response object"),
    ],
)
def test_a_body_that_is_no_reply_is_named(reply, words):
    with pytest.raises(ModelReplyError, match=words):
        _reply({"input": "Q?"}, reply)


def test_an_event_stream_to_a_request_that_did_not_ask_for_one_is_named():
    body = _sse({"type": "response.created", "response": _response("r", [], status="in_progress")})
    with pytest.raises(ModelReplyError, match="did not ask for one"):
        _reply({"input": "Q?"}, body)


def _streamed_call(*, output_in_completed: bool) -> str:
    """A streamed function call as the API reference's streaming events give it: reasoning
    (its ``encrypted_content`` whole only in ``output_item.done``, as the SDK's
    ``ResponseReasoningItem`` documents), text, then a call whose arguments come in two
    deltas."""
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [],
        "encrypted_content": "gAAAB-whole",
    }
    message = _text("Let me check.")
    item = _call("call_9", "get_weather", '{"city":"Oslo"}')
    completed = _response("resp_s", [reasoning, message, item])
    if not output_in_completed:
        del completed["output"]
    return _sse(
        {"type": "response.created", "response": _response("resp_s", [], status="in_progress")},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**reasoning, "encrypted_content": "gAA"}},
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        {"type": "response.output_item.added", "output_index": 1,
         "item": {**message, "content": [], "status": "in_progress"}},
        {"type": "response.content_part.added", "output_index": 1, "item_id": "msg_1",
         "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}},
        {"type": "response.output_text.delta", "output_index": 1, "item_id": "msg_1",
         "content_index": 0, "delta": "Let me ", "logprobs": []},
        {"type": "response.output_text.delta", "output_index": 1, "item_id": "msg_1",
         "content_index": 0, "delta": "check.", "logprobs": []},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {"type": "response.output_item.added", "output_index": 2,
         "item": {**item, "arguments": "", "status": "in_progress"}},
        {"type": "response.function_call_arguments.delta", "output_index": 2,
         "item_id": "fc_call_9", "delta": '{"city":'},
        {"type": "response.function_call_arguments.delta", "output_index": 2,
         "item_id": "fc_call_9", "delta": '"Oslo"}'},
        {"type": "response.function_call_arguments.done", "output_index": 2,
         "item_id": "fc_call_9", "arguments": '{"city":"Oslo"}'},
        {"type": "response.output_item.done", "output_index": 2, "item": item},
        {"type": "response.completed", "response": completed},
    )  # fmt: skip


@pytest.mark.parametrize("output_in_completed", [True, False])
def test_a_streamed_reply_reads_like_the_sdk_s_accumulation(output_in_completed):
    """``response.completed`` may leave ``output`` out: the SDK then takes the items of
    ``response.output_item.done``; the reader does the same."""
    body = _streamed_call(output_in_completed=output_in_completed)
    try:
        sdk = _sdk_stream(body)
    except TypeError:  # openai 1.x read a completed response's output only
        pytest.skip("this openai SDK does not take the items of response.output_item.done")
    reply = _reply({"input": "Weather?", "stream": True}, body)
    assert reply.content == _output_text(sdk) == "Let me check."
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == _calls(sdk)
    assert reply.finish_reason == "tool_calls"
    (reasoning,) = [o for o in sdk.output if o.type == "reasoning"]
    (detail,) = reply.reasoning["reasoning_details"]
    assert detail["data"] == reasoning.encrypted_content == "gAAAB-whole"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (20, 7)
    (exchange,) = read_exchanges([_interaction({"input": "Q", "stream": True}, body)])
    assert RESPONSES.reply_id(exchange) == sdk.id == "resp_s"


def test_a_stream_without_done_items_is_assembled_from_its_deltas():
    events = [e for e in split_events(_streamed_call(output_in_completed=False))]
    kept = [e for e in events if e.event != "response.output_item.done"]
    completed = json.loads(kept[-1].data)
    completed["response"]["output"] = []  # a server that sends an empty output at the end
    body = "".join(f"{e.text}\n\n" for e in kept[:-1]) + f"data: {json.dumps(completed)}\n\n"
    reply = _reply({"input": "Weather?", "stream": True}, body)
    assert reply.content == "Let me check."
    assert [(c.id, c.arguments) for c in reply.tool_calls] == [("call_9", '{"city":"Oslo"}')]


@pytest.mark.parametrize(
    ("tail", "words"),
    [
        ([{"type": "error", "code": "rate_limit_exceeded", "message": "Slow down.", "param": None}],
         r"error event \(rate_limit_exceeded: Slow down.\)"),
        ([{"type": "response.failed", "response": _response(
            "resp_s", [], status="failed", error={"code": "server_error", "message": "Boom."})}],
         r"response.failed: server_error: Boom."),
        ([], "cut off: it ends without response.completed"),
    ],
)  # fmt: skip
def test_a_stream_that_does_not_end_with_a_response_is_an_error(tail, words):
    head = split_events(_streamed_call(output_in_completed=True))[:10]  # mid-arguments
    body = "".join(f"{e.text}\n\n" for e in head) + _sse(*tail)
    with pytest.raises(ModelReplyError, match=words):
        _reply({"input": "Weather?", "stream": True}, body)
    (episode,) = episodes_from_interactions(
        [_interaction({"input": "Weather?", "stream": True}, body)]
    )
    assert episode.stop_reason == "error" and episode.rounds == () and episode.answer == ""


def test_an_empty_stream_and_a_broken_event_are_named():
    with pytest.raises(ModelReplyError, match="the event stream is empty"):
        _reply({"input": "Q", "stream": True}, "\n\n")
    with pytest.raises(ModelReplyError, match="chunk 1: the event is not valid JSON"):
        _reply(
            {"input": "Q", "stream": True}, 'data: {"type":"response.created"}\n\ndata: {oops\n\n'
        )


def test_shapes_the_reader_does_not_know_are_skipped_not_crashed_on():
    body = {
        "input": [
            1, "x", None, {"type": "message"}, {"role": "user", "content": 5},
            {"type": "reasoning", "summary": "not a list", "content": [None]},
            {"type": "function_call"}, {"type": "mcp_call", "id": "mcp_1"},
        ],
        "instructions": ["not", "a", "string"], "tools": [],
    }  # fmt: skip
    odd = _response("resp_o", [
        None, "x", {"type": "web_search_call"}, {"type": "message", "content": "Hi"},
        {"type": "message", "content": [None, {"type": "output_text", "text": 5}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": {"a": 1}},
    ], usage={"input_tokens": "7", "output_tokens": True})  # fmt: skip
    (exchange,) = read_exchanges([_interaction(body, odd)])
    request = RESPONSES.request(exchange, {})
    assert list(request.messages) == [
        {"role": "user", "content": "5"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "", "type": "function", "function": {"name": "", "arguments": "{}"}},
        ]},
    ]  # fmt: skip
    assert not request.tools_offered
    reply = RESPONSES.reply(exchange)
    assert (reply.content, reply.finish_reason) == ("Hi", "tool_calls")
    assert [(c.id, c.parsed_arguments()) for c in reply.tool_calls] == [("c1", {"a": 1})]
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (0, 0)


def test_a_background_response_is_read_from_the_poll_that_finished_it() -> None:
    """pydantic-ai's background mode (``"background": true``): each POST answers ``queued``
    and the program polls ``GET /v1/responses/{id}`` until ``completed``. Expected values
    read from the cassette: the tool call and its arguments in the first completed poll,
    the answer and usage (51 + 15 and 78 + 17 tokens) in the polls' bodies."""
    from toolreplay.cassettes.episodes import episodes_from_cassette
    from toolreplay.wire.reader import read_wire_episodes

    path = FOREIGN / "pydantic-ai-responses-background-tool.yaml"
    (episode,) = episodes_from_cassette(path)
    assert episode.stop_reason == "converged"
    assert episode.tool_chain == ["get_weather"]
    assert episode.tool_calls[0].parsed_arguments() == {"city": "Paris"}
    assert episode.tool_calls[0].id == "call_JcaYgcpgGGTn4GjzjNDDB1xE"
    assert episode.answer.startswith("The weather in Paris is currently sunny")
    assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (51 + 78, 15 + 17)
    (wire,) = read_wire_episodes(yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"])
    assert [r.exchange.number for r in wire.rounds] == [1, 3]
    assert wire.tool_traffic == ()  # the polls belong to their model exchange


def test_a_background_response_never_finished_stays_an_error() -> None:
    """A background request whose polls never saw it finish is an unusable reply, named."""
    from toolreplay.wire.reader import episodes_from_interactions

    queued = {"id": "resp_1", "object": "response", "status": "queued", "output": []}
    interactions = [
        {
            "request": {
                "method": "POST",
                "uri": "https://api.openai.com/v1/responses",
                "parsed_body": {"model": "m", "input": "hi", "background": True},
            },
            "response": {"status": {"code": 200}, "parsed_body": queued},
        },
        {
            "request": {"method": "GET", "uri": "https://api.openai.com/v1/responses/resp_1"},
            "response": {
                "status": {"code": 200},
                "parsed_body": {**queued, "status": "in_progress"},
            },
        },
    ]
    (episode,) = episodes_from_interactions(interactions)
    assert episode.stop_reason == "error"
    assert "in_progress" in (episode.error or "")


# -- a stored prompt template (``prompt``: id, version, variables) ----------------------------


def test_a_request_with_only_a_stored_prompt_is_a_model_request():
    interactions = _yaml("ddtrace-responses-prompt.yaml")
    sent = json.loads(interactions[0]["request"]["body"])
    assert "input" not in sent  # the conversation is the template's, held server-side
    (wire,) = read_wire_episodes(interactions)
    episode = wire.episode
    (exchange,) = read_exchanges(interactions)
    sdk = _sdk_response(exchange.response_json())
    assert episode.error is None and len(episode.rounds) == 1
    question = sent["prompt"]["variables"]["question"]
    assert episode.transcript[0] == {
        "role": "user",
        "prompt": {"id": sent["prompt"]["id"], "version": sent["prompt"]["version"]},
        "content": [{"type": "text", "text": question, "variable": "question"}],
    }
    assert episode.question == question
    assert episode.answer == _output_text(sdk)
    assert sdk.usage is not None
    assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (
        sdk.usage.input_tokens, sdk.usage.output_tokens,
    )  # fmt: skip
    assert (episode.stop_reason, episode.rounds[0].reply.finish_reason) == ("converged", "stop")


#: dd-trace-py's response_with_mixed_prompt_url_stripped.yaml request: variables that are
#: input items (ResponseInputText, ResponseInputImage, ResponseInputFile).
MIXED_PROMPT = {
    "id": "pmpt_69201db75c4c81959c01ea6987ab023c070192cd2843dec0", "version": "2",
    "variables": {
        "user_message": {"text": "Analyze these images and document", "type": "input_text"},
        "user_image_1": {"detail": "auto", "type": "input_image", "image_url": "https://raw.githubusercontent.com/github/explore/main/topics/python/python.png"},
        "user_file": {"type": "input_file", "file_url": "https://www.berkshirehathaway.com/letters/2024ltr.pdf"},
        "user_image_2": {"detail": "auto", "type": "input_image", "file_id": "file-BCuhT1HQ24kmtsuuzF1mh2"},
    },
}  # fmt: skip


def test_prompt_variables_that_are_input_items_are_kept_as_parts():
    (exchange,) = read_exchanges([_interaction({"prompt": MIXED_PROMPT}, _response("r", []))])
    (turn,) = RESPONSES.request(exchange, {}).messages
    variables = MIXED_PROMPT["variables"]
    assert turn == {
        "role": "user",
        "prompt": {"id": MIXED_PROMPT["id"], "version": "2"},
        "content": [
            {"type": "text", "text": variables["user_message"]["text"], "variable": "user_message"},
            {**variables["user_image_1"], "variable": "user_image_1"},
            {**variables["user_file"], "variable": "user_file"},
            {**variables["user_image_2"], "variable": "user_image_2"},
        ],
    }


def test_a_prompt_comes_after_the_instructions_and_before_the_input_and_is_not_repeated():
    prompt = {"id": "pmpt_1", "variables": {"city": "Paris"}}
    first = {"model": "m", "instructions": "Be brief.", "prompt": prompt, "input": "Now?"}
    second = {"model": "m", "prompt": prompt, "previous_response_id": "resp_a",
              "input": "And later?"}  # fmt: skip
    (episode,) = episodes_from_interactions([
        _interaction(first, _response("resp_a", [_text("Sunny.")])),
        _interaction(second, _response("resp_b", [_text("Rain.")])),
    ])  # fmt: skip
    turn = {"role": "user", "prompt": {"id": "pmpt_1"}, "content": [
        {"type": "text", "text": "Paris", "variable": "city"}]}  # fmt: skip
    assert list(episode.transcript) == [
        {"role": "system", "content": "Be brief."},
        turn,
        {"role": "user", "content": "Now?"},
        {"role": "assistant", "content": "Sunny."},
        {"role": "user", "content": "And later?"},
        {"role": "assistant", "content": "Rain."},
    ]
    bare = _interaction({"prompt": {"id": "pmpt_2"}}, _response("r", []))
    (no_variables,) = read_exchanges([bare])
    assert RESPONSES.request(no_variables, {}).messages == (
        {"role": "user", "prompt": {"id": "pmpt_2"}, "content": ""},
    )


def test_a_handoff_to_an_agent_without_tools_converges():
    """The OpenAI Agents SDK hands off (``transfer_to_agent2``) and agent2, with instructions of
    its own and no tools, answers: the conversation ended on its own, no limit was hit. The
    same last request from the same agent (its instructions unchanged) is tools withheld at
    a round limit, as the study's single host sends it: ``max_rounds``."""
    interactions = _yaml("logfire-agents-handoff.yaml")
    (wire,) = read_wire_episodes(interactions)
    episode = wire.episode
    assert [c.name for c in episode.rounds[0].reply.tool_calls] == [
        "random_number", "transfer_to_agent2",
    ]  # fmt: skip
    assert not episode.rounds[1].tools_offered and episode.answer
    assert episode.stop_reason == "converged"
    same_agent = copy.deepcopy(interactions)
    request = same_agent[1]["request"]
    body = json.loads(request["body"])
    del body["instructions"]  # the first request sent none either
    request["body"] = json.dumps(body)
    (wire,) = read_wire_episodes(same_agent)
    assert wire.episode.stop_reason == "max_rounds"


def test_an_ordinary_transfer_tool_before_a_reprompt_at_a_limit_is_still_max_rounds():
    """A banking agent's ``transfer_to_savings(amount=100)``, then the framework withholds
    tools and re-prompts with a system prompt of its own (as smolagents does after its last
    step, or a prompt with a timestamp): a limit, not a handoff."""
    uri = "https://api.openai.com/v1/chat/completions"

    def interaction(body: dict[str, Any], message: dict[str, Any], finish: str) -> dict:
        reply = {"id": "c", "object": "chat.completion", "created": 0, "model": "gpt-4o",
                 "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        return {"request": {"method": "POST", "uri": uri, "parsed_body": body,
                            "headers": {"content-type": ["application/json"]}},
                "response": {"status": {"code": 200, "message": "OK"}, "body": {"parsed_body": reply},
                             "headers": {"content-type": ["application/json"]}}}  # fmt: skip

    tool = {"type": "function", "function": {"name": "transfer_to_savings",
            "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}}}}
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "t1", "type": "function",
            "function": {"name": "transfer_to_savings", "arguments": '{"amount": 100}'}}]}
    user = {"role": "user", "content": "Move 100 EUR to savings, then tell me my balance"}
    first = interaction({"model": "gpt-4o", "tools": [tool], "messages": [
        {"role": "system", "content": "You are a bank agent. Now: 10:00:00"}, user,
    ]}, call, "tool_calls")
    last = interaction({"model": "gpt-4o", "messages": [
        {"role": "system", "content": "An agent got stuck; answer now. Now: 10:00:05"}, user, call,
        {"role": "tool", "tool_call_id": "t1", "content": "error: insufficient funds"},
    ]}, {"role": "assistant", "content": "I could not finish."}, "stop")  # fmt: skip
    (wire,) = read_wire_episodes([first, last])
    assert wire.episode.stop_reason == "max_rounds"


# -- xAI's server-side tools ---------------------------------------------------------------


def test_xai_server_side_tool_calls_already_completed_are_not_the_programs_to_run():
    """xAI reports the calls its server-side tools made (``x_keyword_search``,
    ``view_x_video`` for the ``x_search`` tool) as ``custom_tool_call`` items already
    ``completed``; the request offered no function or custom tool: they are read as hosted
    tools' items, as OpenAI's ``web_search_call`` items are, not as calls left pending."""
    (interaction,) = _yaml("vercel-xai-responses-server-side-tools.yaml")
    events = interaction["response"]["body"]["string"].split("\n\n")
    (completed,) = [e for e in events if e.startswith("event: response.completed\n")]
    output = json.loads(completed.split("\ndata: ", 1)[1])["response"]["output"]
    assert [(i["type"], i.get("name"), i["status"]) for i in output] == [
        ("custom_tool_call", "x_keyword_search", "completed"),
        ("custom_tool_call", "view_x_video", "completed"),
        *[("web_search_call", None, "completed")] * 4,
        ("message", None, "completed"),
    ]
    (text,) = [p["text"] for p in output[-1]["content"] if p["type"] == "output_text"]
    (episode,) = episodes_from_interactions([interaction])
    (only,) = episode.rounds
    assert only.reply.tool_calls == () and only.reply.finish_reason == "stop"
    assert only.reply.content == text
    assert text.startswith("### Latest Videos and Images from xAI on X")
    assert episode.stop_reason == "converged"


@pytest.mark.parametrize(
    ("tools", "status", "read_as_call"),
    [
        ([{"type": "custom", "name": "x_keyword_search"}], "completed", True),
        ([{"type": "function", "name": "x_keyword_search", "parameters": {}}], "completed", True),
        ([{"type": "x_search"}], None, True),
        ([{"type": "x_search"}], "in_progress", True),
        ([{"type": "x_search"}], "completed", False),
        ([{"type": "custom", "name": "sql"}], "completed", False),
    ],
)
def test_only_a_completed_custom_call_of_a_tool_not_offered_is_the_servers(
    tools: list[dict[str, Any]], status: str | None, read_as_call: bool
) -> None:
    item = {"type": "custom_tool_call", "call_id": "xs_1", "name": "x_keyword_search", "input": "q"}
    if status is not None:
        item["status"] = status
    body = {"model": "grok-4-fast", "input": "latest?", "tools": tools}
    reply = _reply(body, _response("r1", [item, _text("Done.")]))
    assert [c.name for c in reply.tool_calls] == (["x_keyword_search"] if read_as_call else [])
    assert reply.content == "Done."
