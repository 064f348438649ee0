"""The Anthropic Messages wire reader, against the outside.

Recorded traffic: four of pydantic-ai's test cassettes (MIT licence), copied whole into
``tests/data/foreign/``:

- ``pydantic-ai-anthropic-tool-call.yaml``: pydantic-ai's
  ``tests/models/cassettes/test_tool_choice_matrix/test_tool_choice_matrix[auto-anthropic].yaml``
  (a tool-use loop, unstreamed);
- ``pydantic-ai-anthropic-stream.yaml``:
  ``tests/cassettes/test_tool_search/test_anthropic_native_tool_search_streaming.yaml``
  (streamed, ``ping`` events, a server tool's blocks between texts, usage replaced by
  ``message_delta``);
- ``pydantic-ai-anthropic-thinking.yaml``:
  ``tests/models/cassettes/test_anthropic/test_anthropic_tool_with_thinking.yaml``
  (a thinking block with its signature, sent back in the next request);
- ``pydantic-ai-anthropic-tool-error.yaml``:
  ``tests/cassettes/test_tool_search/test_tool_search_eval[anthropic].yaml`` (four
  conversations in one cassette, a ``tool_result`` with ``is_error: true``).

And two of vercel/ai's recorded streams (Apache-2.0, Copyright 2023 Vercel, Inc.;
``packages/anthropic/src/__fixtures__/`` at ``ed857f50f112``), their events kept verbatim as
one cassette's reply each (a placeholder request around them):

- ``vercel-anthropic-spliced-message-start.yaml``: ``spliced-message-start.chunks.txt``
  (vercel/ai#18402: a second generation's ``message_start`` while the first one's
  ``tool_use`` block is still open);
- ``vercel-anthropic-duplicate-message-start.yaml``: ``duplicate-message-start.chunks.txt``
  (the same ``message_start`` sent twice, then one text block).

Expected values are read from the cassette files themselves (the blocks the program sent
back, the ``usage`` the server sent) or from the anthropic SDK's own types and stream
accumulation (``anthropic.types.beta.BetaMessage``, ``accumulate_event``), never from this
reader's output. Spec cases follow Anthropic's API reference ("Messages", "Streaming
Messages", "Errors": the ``error`` event and body shapes, the ``stop_reason`` values).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolreplay.judging.failures import classify
from toolreplay.wire.anthropic_messages import (
    ANTHROPIC_MESSAGES,
    assemble_message_stream,
    conversation,
)
from toolreplay.wire.interactions import Exchange, read_exchanges
from toolreplay.wire.reader import episodes_from_interactions, protocol_of, read_wire_episodes
from toolreplay.wire.replies import ModelReplyError
from toolreplay.wire.stream import StreamError, is_event_stream, split_events

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"
CASSETTES = [
    "pydantic-ai-anthropic-tool-call.yaml",
    "pydantic-ai-anthropic-stream.yaml",
    "pydantic-ai-anthropic-thinking.yaml",
    "pydantic-ai-anthropic-tool-error.yaml",
]


def _yaml(name: str) -> list[dict[str, Any]]:
    data = yaml.safe_load((FOREIGN / name).read_text(encoding="utf-8"))
    return list(data["interactions"])


def _blocks(turn: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [b for b in turn["content"] if isinstance(b, dict) and b.get("type") == kind]


def _input_tokens(usage: dict[str, Any]) -> int:
    return sum(
        usage.get(k) or 0
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )


# --- recorded traffic ------------------------------------------------------------------------


def test_every_request_of_the_cassettes_is_read_as_anthropic_messages():
    for name in CASSETTES:
        for exchange in read_exchanges(_yaml(name)):
            assert protocol_of(exchange) is ANTHROPIC_MESSAGES, (name, exchange.number)


def test_a_tool_use_loop_reads_as_an_episode():
    interactions = _yaml("pydantic-ai-anthropic-tool-call.yaml")
    first, second = (i["response"]["parsed_body"] for i in interactions)
    (use,) = _blocks(first, "tool_use")
    (result,) = _blocks(interactions[1]["request"]["parsed_body"]["messages"][-1], "tool_result")
    (wire,) = read_wire_episodes(interactions)
    episode = wire.episode
    (call,) = episode.tool_calls
    assert (call.id, call.name, call.parsed_arguments()) == (use["id"], use["name"], use["input"])
    assert result["tool_use_id"] == call.id
    (answer,) = episode.rounds[0].results
    assert (answer.content, answer.error) == (result["content"], None)
    assert episode.answer == second["content"][0]["text"]
    assert episode.question == first_user_text(interactions)
    assert [r.reply.finish_reason for r in episode.rounds] == ["tool_calls", "stop"]
    assert episode.stop_reason == "converged" and not episode.streamed
    assert episode.usage.prompt_tokens == _input_tokens(first["usage"]) + _input_tokens(
        second["usage"]
    )
    assert (
        episode.usage.completion_tokens
        == first["usage"]["output_tokens"] + (second["usage"]["output_tokens"])
    )
    assert all(r.tools_offered for r in episode.rounds)
    assert [m["role"] for m in episode.transcript] == ["user", "assistant", "tool", "assistant"]


def first_user_text(interactions: list[dict[str, Any]]) -> str:
    turn = interactions[0]["request"]["parsed_body"]["messages"][0]
    return "".join(b["text"] for b in _blocks(turn, "text"))


def test_a_streamed_tool_use_loop_reads_as_the_program_sent_it_back():
    interactions = _yaml("pydantic-ai-anthropic-stream.yaml")
    echoed = interactions[1]["request"]["parsed_body"]["messages"][1]  # the assistant turn
    assert echoed["role"] == "assistant"
    (use,) = _blocks(echoed, "tool_use")
    texts = [b["text"] for b in _blocks(echoed, "text")]
    (result,) = _blocks(interactions[1]["request"]["parsed_body"]["messages"][2], "tool_result")
    (wire,) = read_wire_episodes(interactions)
    episode = wire.episode
    assert episode.streamed and not episode.faults
    (call,) = episode.tool_calls  # the server tool (tool search) is not a call of the program
    assert (call.id, call.name, call.parsed_arguments()) == (use["id"], use["name"], use["input"])
    first = episode.rounds[0].reply
    assert first.content == "\n\n".join(texts)  # two texts, a server tool's blocks between
    (sent,) = result["content"]  # one text block
    assert episode.rounds[0].results[0].content == sent["text"]
    assert episode.answer.startswith("The current exchange rate is **1 USD = 0.92 EUR**.")
    # usage: message_delta's cumulative counts replace message_start's (1591, not 702)
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (1591, 175)
    assert episode.stop_reason == "converged"


def test_thinking_is_kept_as_reasoning_details_with_its_signature():
    interactions = _yaml("pydantic-ai-anthropic-thinking.yaml")
    (thinking,) = _blocks(interactions[0]["response"]["parsed_body"], "thinking")
    (wire,) = read_wire_episodes(interactions)
    first = wire.episode.rounds[0].reply
    item = {"type": "reasoning.text", "text": thinking["thinking"]}
    assert first.reasoning == {"reasoning_details": [{**item, "signature": thinking["signature"]}]}
    assert first.reasoning_text == thinking["thinking"]
    (sent_back,) = _blocks(interactions[1]["request"]["parsed_body"]["messages"][1], "thinking")
    request = conversation(interactions[1]["request"]["parsed_body"])
    assert request[1]["reasoning_details"] == [
        {
            "type": "reasoning.text",
            "text": sent_back["thinking"],
            "signature": sent_back["signature"],
        }
    ]
    assert request[1]["tool_calls"][0]["function"]["name"] == "get_user_country"
    assert wire.episode.rounds[0].results[0].content == "Mexico"


def test_a_tool_result_marked_is_error_is_the_results_error():
    interactions = _yaml("pydantic-ai-anthropic-tool-error.yaml")
    failed = [
        b
        for i in interactions
        for m in i["request"]["parsed_body"]["messages"]
        if isinstance(m["content"], list)
        for b in _blocks(m, "tool_result")
        if b.get("is_error") is True
    ]
    assert failed and {b["tool_use_id"] for b in failed} == {failed[0]["tool_use_id"]}
    questions = [
        i["request"]["parsed_body"]["messages"][0]["content"][0]["text"] for i in interactions
    ]
    episodes = episodes_from_interactions(interactions)
    assert [e.question for e in episodes] == list(dict.fromkeys(questions))  # 4, in order
    (stock,) = [e for e in episodes if "AAPL" in e.question]
    results = {r.call.id: r for rd in stock.rounds for r in rd.results}
    error = results[failed[0]["tool_use_id"]]
    assert error.error == failed[0]["content"] and error.content == failed[0]["content"]
    assert error.call.name == "stock_lookup"
    others = [r for r in results.values() if r is not error]
    assert others and all(r.error is None for r in others)
    assert stock.stop_reason == "converged" and "$150.00" in stock.answer


# --- against the anthropic SDK ---------------------------------------------------------------


def _sdk_stream(body: bytes) -> Any:
    streaming = pytest.importorskip("anthropic.lib.streaming._messages")
    snapshot, buffers = None, {}  # type: ignore[var-annotated]
    for event in split_events(body):
        data = json.loads(event.data)
        if data["type"] != "ping":
            snapshot = streaming.accumulate_event(
                event=data, current_snapshot=snapshot, json_bufs=buffers
            )
    return snapshot


@pytest.mark.parametrize("name", CASSETTES)
def test_every_reply_reads_as_the_anthropic_sdk_reads_it(name):
    beta = pytest.importorskip("anthropic.types.beta")
    for exchange in read_exchanges(_yaml(name)):
        if is_event_stream(exchange.response_body, exchange.content_type):
            message = _sdk_stream(exchange.response_body)
        else:
            message = beta.BetaMessage.model_validate_json(exchange.response_body)
        reply = ANTHROPIC_MESSAGES.reply(exchange)
        calls = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
        assert [(c.id, c.name, c.parsed_arguments()) for c in reply.tool_calls] == calls
        texts = [b.text for b in message.content if b.type == "text"]
        assert (reply.content or "").replace("\n\n", "") == "".join(texts).replace("\n\n", "")
        usage = message.usage
        assert reply.usage.prompt_tokens == usage.input_tokens + (
            usage.cache_creation_input_tokens or 0
        ) + (usage.cache_read_input_tokens or 0)
        assert reply.usage.completion_tokens == usage.output_tokens
        finish = {"tool_use": "tool_calls", "end_turn": "stop"}[message.stop_reason]
        assert reply.finish_reason == finish
        thinking = [b.thinking for b in message.content if b.type == "thinking"]
        assert [i["text"] for i in reply.reasoning.get("reasoning_details", [])] == thinking


# --- the specification's cases ---------------------------------------------------------------


def _exchange(
    body: dict[str, Any] | None = None,
    reply: Any = None,
    *,
    uri: str = "https://api.anthropic.com/v1/messages",
    status: int = 200,
    method: str = "POST",
) -> Exchange:
    if body is None:
        body = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": []}
    raw = reply if isinstance(reply, (str, bytes)) else json.dumps(reply or {})
    return Exchange(
        number=1,
        method=method,
        uri=uri,
        status=status,
        request_body=body,
        content_type="text/event-stream" if isinstance(reply, str) else "application/json",
        response_body=raw.encode("utf-8") if isinstance(raw, str) else raw,
    )


def _message(content: list[dict[str, Any]], stop: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
        **extra,
    }


MESSAGES = [{"role": "user", "content": "Hello"}]


@pytest.mark.parametrize(
    ("uri", "body", "claimed"),
    [
        ("https://api.anthropic.com/v1/messages", {"max_tokens": 9, "messages": MESSAGES}, True),
        ("https://api.anthropic.com/v1/messages/", {"messages": MESSAGES}, True),
        ("http://localhost:4000/anthropic/messages", {"max_tokens": 9, "messages": MESSAGES}, True),
        (
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-sonnet"
            "-20241022-v2:0/invoke",
            {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9, "messages": MESSAGES},
            True,
        ),
        (
            "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/"
            "publishers/anthropic/models/claude-sonnet-4-5:streamRawPredict",
            {"anthropic_version": "vertex-2023-10-16", "max_tokens": 9, "messages": MESSAGES},
            True,
        ),
        # not Messages requests
        ("https://api.openai.com/v1/chat/completions", {"messages": MESSAGES}, False),
        (
            "https://proxy/v1/chat/completions",
            {"anthropic_version": "x", "max_tokens": 9, "messages": MESSAGES},
            False,
        ),
        ("https://api.anthropic.com/v1/messages/count_tokens", {"messages": MESSAGES}, False),
        ("https://api.anthropic.com/v1/messages/batches", {"requests": []}, False),
        ("https://api.anthropic.com/v1/messages", {"prompt": "Hello"}, False),
        ("https://x/v1/threads/t/messages", {"role": "user", "content": "Hi"}, False),
        (
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse",
            {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]},
            False,
        ),
    ],
)
def test_which_requests_are_messages_requests(uri, body, claimed):
    exchange = _exchange(body, uri=uri)
    assert ANTHROPIC_MESSAGES.is_request(exchange) is claimed
    assert (protocol_of(exchange) is ANTHROPIC_MESSAGES) is claimed


def test_a_get_or_a_body_that_is_not_json_is_not_claimed():
    assert not ANTHROPIC_MESSAGES.is_request(_exchange(method="GET"))
    exchange = Exchange(1, "POST", "https://api.anthropic.com/v1/messages", 200, "x", "", b"")
    assert not ANTHROPIC_MESSAGES.is_request(exchange)


def test_a_request_in_chat_completions_form():
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "stream": True,
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
        "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Use the tool.", "signature": "sig"},
                    {"type": "redacted_thinking", "data": "EmwKAhgB"},
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_1",
                        "name": "web_search",
                        "input": {"query": "paris"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srvtoolu_1",
                        "content": [],
                    },
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "get_weather",
                        "input": {"city": "Paris", "unit": "°C"},
                    },
                    {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "Sunny"}],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "is_error": True,
                        "content": "clock unavailable",
                    },
                    {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}},
                    {"type": "text", "text": "Also this."},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_3", "is_error": False},
                ],
            },
            {"role": "assistant", "content": "Done."},
        ],
    }
    request = ANTHROPIC_MESSAGES.request(_exchange(body), {})
    assert request.tools_offered and request.streamed
    assert list(request.messages) == [
        {"role": "system", "content": "Be brief.\n\nBe kind."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "reasoning_details": [
                {"type": "reasoning.text", "text": "Use the tool.", "signature": "sig"},
                {"type": "reasoning.encrypted", "data": "EmwKAhgB"},
            ],
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": '{"city": "Paris", "unit": "°C"}',
                    },
                },
                {
                    "id": "toolu_2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "Sunny"},
        {
            "role": "tool",
            "tool_call_id": "toolu_2",
            "content": "clock unavailable",
            "is_error": True,
        },
        {
            "role": "user",
            "content": [
                {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}},
                {"type": "text", "text": "Also this."},
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_3", "content": ""},
        {"role": "assistant", "content": "Done."},
    ]


def test_no_tools_and_no_stream_are_read_as_such():
    request = ANTHROPIC_MESSAGES.request(
        _exchange({"max_tokens": 9, "messages": MESSAGES, "tools": [], "stream": False}), {}
    )
    assert not request.tools_offered and not request.streamed
    assert request.messages == ({"role": "user", "content": "Hello"},)


def test_an_is_error_tool_result_is_the_episodes_tool_error():
    call = {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "X"}}
    said = [{"type": "text", "text": "ConnectionError: weather service down"}]
    failure = {"type": "tool_result", "tool_use_id": "toolu_9", "is_error": True, "content": said}
    turns = [{"role": "user", "content": "Weather in X?"}]
    then = [
        *turns,
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [failure]},
    ]
    interactions = [
        _interaction({"max_tokens": 9, "messages": turns, "tools": [{"name": "get_weather"}]},
                     _message([call], "tool_use")),
        _interaction({"max_tokens": 9, "messages": then, "tools": [{"name": "get_weather"}]},
                     _message([{"type": "text", "text": "The service is down."}], "end_turn")),
    ]  # fmt: skip
    (episode,) = episodes_from_interactions(interactions)
    (result,) = episode.rounds[0].results
    assert result.error == "ConnectionError: weather service down"
    assert episode.answer == "The service is down." and episode.stop_reason == "converged"


def test_a_cache_mark_moved_to_a_later_turn_does_not_split_the_episode():
    # "Prompt caching": cache_control marks a block; a program moves the mark to the newest
    # turn on every request, so the first turn's blocks change between requests.
    mark = {"type": "ephemeral"}
    image = {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}}
    question = [image, {"type": "text", "text": "What is this?", "cache_control": mark}]
    call = {"type": "tool_use", "id": "toolu_1", "name": "look", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a cat",
              "cache_control": mark}  # fmt: skip
    unmarked = [image, {"type": "text", "text": "What is this?"}]
    later = [{"role": "user", "content": unmarked}, {"role": "assistant", "content": [call]},
             {"role": "user", "content": [result]}]  # fmt: skip
    interactions = [
        _interaction({"max_tokens": 9, "messages": [{"role": "user", "content": question}]},
                     _message([call], "tool_use")),
        _interaction({"max_tokens": 9, "messages": later},
                     _message([{"type": "text", "text": "A cat."}], "end_turn")),
    ]  # fmt: skip
    (episode,) = episodes_from_interactions(interactions)
    assert len(episode.rounds) == 2 and episode.rounds[0].results[0].content == "a cat"
    assert episode.transcript[0] == {"role": "user", "content": unmarked}


def _interaction(body: dict[str, Any], reply: Any, status: int = 200) -> dict[str, Any]:
    text = reply if isinstance(reply, str) else json.dumps(reply)
    return {
        "request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages",
                    "body": json.dumps(body)},
        "response": {"status": {"code": status}, "body": {"string": text}},
    }  # fmt: skip


@pytest.mark.parametrize("stop", ["max_tokens", "model_context_window_exceeded"])
def test_a_reply_cut_by_the_token_limit_is_truncated(stop):
    body = {"max_tokens": 5, "messages": MESSAGES}
    reply = _message([{"type": "text", "text": "Hello, how"}], stop)
    assert ANTHROPIC_MESSAGES.reply(_exchange(body, reply)).finish_reason == "length"
    (episode,) = episodes_from_interactions([_interaction(body, reply)])
    assert episode.stop_reason == "truncated" and episode.answer == "Hello, how"


@pytest.mark.parametrize(
    ("stop", "content", "finish"),
    [
        ("end_turn", [{"type": "text", "text": "Hi"}], "stop"),
        ("stop_sequence", [{"type": "text", "text": "Hi"}], "stop"),
        ("pause_turn", [{"type": "server_tool_use", "id": "s", "name": "web_search"}], "stop"),
        ("tool_use", [{"type": "tool_use", "id": "t", "name": "f", "input": {}}], "tool_calls"),
        ("end_turn", [{"type": "tool_use", "id": "t", "name": "f", "input": {}}], "tool_calls"),
        (None, [{"type": "text", "text": "Hi"}], "unknown"),  # none sent: not told
        (None, [{"type": "tool_use", "id": "t", "name": "f", "input": {}}], "unknown"),
    ],
)
def test_stop_reasons_in_chat_completions_terms(stop, content, finish):
    assert ANTHROPIC_MESSAGES.reply(_exchange(None, _message(content, stop))).finish_reason == (
        finish
    )


def test_a_refusal_is_filtered_with_its_text():
    text = "I can't help with that."
    reply = ANTHROPIC_MESSAGES.reply(
        _exchange(None, _message([{"type": "text", "text": text}], "refusal"))
    )
    assert (reply.finish_reason, reply.refusal, reply.content) == ("content_filter", text, None)
    (episode,) = episodes_from_interactions(
        [_interaction({"max_tokens": 9, "messages": MESSAGES}, _message([], "refusal"))]
    )
    assert episode.stop_reason == "filtered"
    # refused without a word: the refusal is empty, not words of toolreplay's given as the
    # model's; the failure mode says it refused, in toolreplay's own voice
    assert episode.rounds[0].reply.refusal == ""
    assert episode.transcript[-1]["refusal"] == ""
    (mode,) = classify(episode)
    assert (mode.mode, mode.explanation) == (
        "refusal", "the model refused (stop reason filtered), saying nothing more",
    )  # fmt: skip


def test_a_refusal_without_text_keeps_what_its_stop_details_say():
    details = {"type": "refusal", "category": "cyber", "explanation": "Exploit development."}
    reply = ANTHROPIC_MESSAGES.reply(_exchange(None, _message([], "refusal", stop_details=details)))
    assert reply.refusal == "cyber; Exploit development."


def test_usage_counts_cached_input_tokens_as_input():
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 100,
             "cache_read_input_tokens": 2000, "output_tokens": 7}  # fmt: skip
    reply = ANTHROPIC_MESSAGES.reply(_exchange(None, _message([], "end_turn", usage=usage)))
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (2103, 7)


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        # the error body of Anthropic's "Errors" page, with an error status and without one
        (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
         "HTTP 529: InternalServerError"),
        (200, {"type": "error", "error": {"type": "api_error", "message": "Internal error"}},
         "the body reports an error: api_error: Internal error"),
        (200, [1, 2], "the JSON body is list, not a Message object"),
        (200, {"type": "completion", "completion": "Hi"}, "not a Message"),
        (200, "<html><body>Bad gateway</body></html>", "the body is HTML"),
        (200, "", "the body is empty"),
    ],
)  # fmt: skip
def test_an_unusable_reply_is_a_model_reply_error(status, body, said):
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    exchange = Exchange(1, "POST", "https://api.anthropic.com/v1/messages?beta=true", status,
                        {"max_tokens": 9, "messages": MESSAGES}, "", raw)  # fmt: skip
    with pytest.raises(ModelReplyError) as caught:
        ANTHROPIC_MESSAGES.reply(exchange)
    assert said in str(caught.value)
    assert caught.value.endpoint == "https://api.anthropic.com/v1/messages"


def _stream_body() -> str:
    interactions = _yaml("pydantic-ai-anthropic-stream.yaml")
    return str(interactions[0]["response"]["body"]["string"])


def test_an_error_event_mid_stream_is_a_model_reply_error_naming_it():
    events = _stream_body().split("\n\n")
    # the error event of the "Streaming Messages" reference, sent after the fourth event
    error = "event: error\ndata: " + json.dumps(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    body = "\n\n".join([*events[:4], error, *events[4:]])
    with pytest.raises(StreamError, match=r"chunk 4: .*overloaded_error: Overloaded"):
        assemble_message_stream(body)
    request = {"max_tokens": 9, "messages": MESSAGES, "stream": True}
    (episode,) = episodes_from_interactions([_interaction(request, body)])
    assert episode.stop_reason == "error" and episode.answer == ""
    assert "error event" in (episode.error or "") and "overloaded_error" in (episode.error or "")


def test_a_stream_cut_off_is_a_model_reply_error():
    body = _stream_body()
    cut = body[: body.index("event: message_delta")]
    with pytest.raises(StreamError, match="cut off"):
        assemble_message_stream(cut)
    request = {"max_tokens": 9, "messages": MESSAGES, "stream": True}
    (episode,) = episodes_from_interactions([_interaction(request, cut)])
    assert episode.stop_reason == "error" and "cut off" in (episode.error or "")
    with pytest.raises(StreamError, match="empty"):
        assemble_message_stream("")


def test_a_stream_ending_at_message_delta_keeps_its_reply():
    body = _stream_body()
    whole = assemble_message_stream(body)
    assert assemble_message_stream(body[: body.index("event: message_stop")]) == whole


def _events(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


START = {"type": "message_start", "message": _message([], None)}
STOP = {"type": "message_stop"}


def _delta(stop: str, output: int) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": output}}  # fmt: skip


def test_a_streamed_input_that_is_not_json_is_kept_as_sent():
    body = _events(
        START,
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"city": "Par'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "future_event", "x": 1},  # an event added later: skipped
        _delta("max_tokens", 9), STOP,
    )  # fmt: skip
    reply = ANTHROPIC_MESSAGES.reply(_exchange(None, body))
    assert reply.tool_calls[0].arguments == '{"city": "Par'
    assert (reply.finish_reason, reply.usage.completion_tokens) == ("length", 9)


def test_a_streamed_redacted_thinking_block_is_encrypted_reasoning():
    body = _events(
        START,
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "redacted_thinking", "data": "EmwKAhgB"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 1},
        _delta("end_turn", 3), STOP,
    )  # fmt: skip
    reply = ANTHROPIC_MESSAGES.reply(_exchange(None, body))
    assert reply.content == "Hi"
    assert reply.reasoning == {
        "reasoning_details": [{"type": "reasoning.encrypted", "data": "EmwKAhgB"}]
    }
    assert reply.reasoning_text == "(encrypted reasoning, not readable)"


@pytest.mark.parametrize(
    ("events", "said"),
    [
        ([{"type": "content_block_stop", "index": 0}], "before message_start"),
        ([START, {"type": "content_block_delta", "index": 3,
                  "delta": {"type": "text_delta", "text": "x"}}], "never started"),
        ([START, {"type": "message_start"}], "no message object"),
    ],
)  # fmt: skip
def test_a_broken_stream_names_the_event(events, said):
    with pytest.raises(StreamError, match=said):
        assemble_message_stream(_events(*events))
    with pytest.raises(StreamError, match="not valid JSON"):
        assemble_message_stream("event: message_start\ndata: {broken\n\n")


def test_reply_id_is_none():
    assert ANTHROPIC_MESSAGES.reply_id(_exchange()) is None


def test_claude_through_bedrock_invoke_with_response_stream_is_read() -> None:
    """openllmetry's recording of Claude 3 through Bedrock's ``invoke-with-response-stream``:
    the reply is AWS event-stream frames whose payloads carry Anthropic's events in base64.
    The expected text and usage come from the frames decoded by botocore's own event-stream
    parser (``botocore.eventstream.EventStreamBuffer``) and the events read as the Streaming
    Messages reference gives them, not from this reader."""
    eventstream = pytest.importorskip("botocore.eventstream")
    import base64

    path = FOREIGN / "openllmetry-bedrock-anthropic-stream.yaml"
    interactions = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    raw = interactions[0]["response"]["body"]["string"]
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(raw)
    events = [json.loads(base64.b64decode(json.loads(m.payload)["bytes"])) for m in buffer]
    text = "".join(
        e["delta"]["text"]
        for e in events
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
    )
    start = next(e for e in events if e["type"] == "message_start")
    delta = next(e for e in events if e["type"] == "message_delta")

    (episode,) = episodes_from_interactions(interactions)
    assert episode.answer == text and text
    assert episode.stop_reason == "converged"
    assert episode.streamed
    assert episode.usage.prompt_tokens == start["message"]["usage"]["input_tokens"]
    assert episode.usage.completion_tokens == delta["usage"]["output_tokens"]


def test_a_broken_or_exception_bedrock_frame_is_a_named_fault() -> None:
    """A frame cut short, or an exception frame, is an unusable reply naming what broke."""
    from toolreplay.wire.anthropic_stream import assemble_bedrock_stream
    from toolreplay.wire.stream import StreamError

    path = FOREIGN / "openllmetry-bedrock-anthropic-stream.yaml"
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"][0]["response"]
    body = raw["body"]["string"]
    with pytest.raises(StreamError, match="AWS event stream is broken"):
        assemble_bedrock_stream(body[:-7])


def test_a_second_generation_spliced_into_the_stream_makes_it_unusable():
    """Read merged, the two generations' streamed inputs gave one broken input,
    ``{"value":"Spark{"value":"Sparkle Day"}``; the stream is refused instead."""
    (episode,) = episodes_from_interactions(_yaml("vercel-anthropic-spliced-message-start.yaml"))
    assert episode.stop_reason == "error" and not episode.rounds
    assert "the streamed reply is unusable: chunk 7: a second message_start" in (
        episode.error or ""
    )
    assert "message 'msg_second' while 'msg_first' was read" in (episode.error or "")


def test_a_message_start_sent_twice_is_read_once():
    (episode,) = episodes_from_interactions(_yaml("vercel-anthropic-duplicate-message-start.yaml"))
    (only,) = episode.rounds
    assert episode.error is None and episode.stop_reason == "converged"
    assert only.reply.content == "Hello, World!" and only.reply.finish_reason == "stop"
