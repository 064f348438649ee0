"""The Bedrock Converse wire reader (``/model/{modelId}/converse`` and ``converse-stream``) on
traffic nobody on this project wrote, and on the cases the API reference names.

Recorded traffic, copied from pydantic/pydantic-ai (MIT), tests/models/cassettes/test_bedrock/:

- ``pydantic-ai-bedrock-retry.yaml``: test_bedrock_model_retry.yaml (a ``toolResult`` with
  ``status: error``, then the answer);
- ``pydantic-ai-bedrock-thinking-tool.yaml``: test_bedrock_anthropic_tool_with_thinking.yaml
  (Claude on Bedrock: ``reasoningContent`` with a signature, a text and a ``toolUse`` in one
  reply, sent back in the next request);
- ``pydantic-ai-bedrock-iter-stream.yaml``: test_bedrock_model_iter_stream.yaml
  (``converse-stream``: binary ``application/vnd.amazon.eventstream`` bodies).

Expected values come from the files (the JSON bodies), from pydantic-ai's own assertions on
the streamed run (tests/models/test_bedrock.py, ``test_bedrock_model_iter_stream``: its
snapshot of the parts and deltas) and, for the frame decoder, from the test vectors of
awslabs/aws-c-event-stream (tests/message_deserializer_test.c). The spec cases follow the
Bedrock API reference (``Converse``, ``ConverseStream``)."""

from __future__ import annotations

import json
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolreplay.cassettes.episodes import episode_from_cassette
from toolreplay.wire.bedrock_converse import (
    BEDROCK_CONVERSE,
    EventStreamError,
    event_stream_messages,
)
from toolreplay.wire.interactions import read_exchanges
from toolreplay.wire.reader import episodes_from_interactions, protocol_of
from toolreplay.wire.replies import ModelReplyError

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"
RETRY = FOREIGN / "pydantic-ai-bedrock-retry.yaml"
THINKING = FOREIGN / "pydantic-ai-bedrock-thinking-tool.yaml"
STREAM = FOREIGN / "pydantic-ai-bedrock-iter-stream.yaml"
URL = "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse"


def _interactions(path: Path) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]


def _bodies(path: Path) -> list[dict[str, Any]]:
    return [json.loads(i["request"]["body"]) for i in _interactions(path)]


def _exchange(
    messages: list[Any], reply: Any, *, stream: bool = False, status: int = 200, **body: Any
) -> dict[str, Any]:
    raw = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
    return {
        "request": {
            "method": "POST",
            "uri": URL + ("-stream" if stream else ""),
            "body": json.dumps({"messages": messages, **body}),
        },
        "response": {"status": {"code": status}, "headers": {}, "body": {"string": raw}},
    }


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


def _reply(content: list[Any], stop: str, usage: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": usage[0], "outputTokens": usage[1]},
    }


# --- recorded traffic -------------------------------------------------------------------


def test_a_tool_result_with_status_error_is_the_results_error():
    interactions = _interactions(RETRY)
    episode = episode_from_cassette(RETRY)
    replies = [i["response"]["parsed_body"] for i in interactions]
    (use,) = [b["toolUse"] for b in replies[0]["output"]["message"]["content"] if "toolUse" in b]
    ((call, result),) = [(r.call, r) for r in episode.rounds[0].results]
    assert (call.id, call.name, call.parsed_arguments()) == (
        use["toolUseId"],
        use["name"],
        use["input"],
    )
    sent = next(b["toolResult"] for b in _bodies(RETRY)[1]["messages"][-1]["content"])
    assert sent["status"] == "error" and result.error == sent["content"][0]["text"]
    assert episode.answer == replies[1]["output"]["message"]["content"][0]["text"]
    assert episode.stop_reason == "converged" and len(episode.rounds) == 2
    assert episode.usage.prompt_tokens == sum(r["usage"]["inputTokens"] for r in replies)
    assert episode.usage.completion_tokens == sum(r["usage"]["outputTokens"] for r in replies)
    assert episode.transcript[0] == {
        "role": "system",
        "content": _bodies(RETRY)[0]["system"][0]["text"],
    }
    tool_message = next(m for m in episode.transcript if m["role"] == "tool")
    assert tool_message["is_error"] is True and tool_message["tool_call_id"] == use["toolUseId"]


def test_reasoning_a_text_and_a_call_in_one_reply():
    interactions = _interactions(THINKING)
    episode = episode_from_cassette(THINKING)
    content = interactions[0]["response"]["parsed_body"]["output"]["message"]["content"]
    thought = content[0]["reasoningContent"]["reasoningText"]
    first = episode.rounds[0].reply
    assert first.reasoning == {
        "reasoning_details": [
            {"type": "reasoning.text", "text": thought["text"], "signature": thought["signature"]}
        ]
    }
    assert first.content == content[1]["text"]
    assert [(c.id, c.name, c.parsed_arguments()) for c in first.tool_calls] == [
        (content[2]["toolUse"]["toolUseId"], "get_user_country", {})
    ]
    assert first.finish_reason == "tool_calls"
    sent_back = _bodies(THINKING)[1]["messages"][-1]["content"][0]["toolResult"]
    assert episode.rounds[0].results[0].content == sent_back["content"][0]["text"] == "Mexico"
    # the next request sends the reasoning back: the transcript's assistant message holds it
    assistant = next(m for m in episode.transcript if m["role"] == "assistant")
    assert assistant["reasoning_details"] == first.reasoning["reasoning_details"]
    final = interactions[1]["response"]["parsed_body"]["output"]["message"]["content"][0]["text"]
    assert episode.answer == final and episode.stop_reason == "converged"


def test_a_streamed_run_reads_as_pydantic_ai_saw_it():
    episode = episode_from_cassette(STREAM)
    assert episode.streamed and episode.error is None and len(episode.rounds) == 2
    first = episode.rounds[0].reply
    # pydantic-ai's snapshot (test_bedrock_model_iter_stream): the parts it assembled
    assert first.content == (
        "<thinking> To find the temperature of the capital of France, I need to first determine "
        "the capital of France and then get the current temperature in that city. The capital of "
        'France is Paris. I will use the "get_temperature" tool to find the current temperature '
        "in Paris.</thinking>\n"
    )
    ((call, result),) = [(r.call, r) for r in episode.rounds[0].results]
    assert (call.name, call.arguments) == ("get_temperature", '{"city":"Paris"}')
    assert call.id.startswith("tooluse_") and result.content == "30°C"
    assert episode.answer == "The current temperature in Paris, the capital of France, is 30°C."
    assert [r.reply.finish_reason for r in episode.rounds] == ["tool_calls", "stop"]
    # usage: the metadata events' counts, found in the raw frames by a plain search
    raw = b"".join(i["response"]["body"]["string"] for i in _interactions(STREAM))
    counts = [
        tuple(map(int, m)) for m in re.findall(rb'"inputTokens":(\d+),"outputTokens":(\d+)', raw)
    ]
    assert len(counts) == 2
    assert episode.usage.prompt_tokens == sum(c[0] for c in counts)
    assert episode.usage.completion_tokens == sum(c[1] for c in counts)


def test_requests_are_told_by_path_and_body():
    stream, plain = (
        read_exchanges(_interactions(STREAM))[0],
        read_exchanges(_interactions(RETRY))[0],
    )
    assert protocol_of(stream) is BEDROCK_CONVERSE and protocol_of(plain) is BEDROCK_CONVERSE
    assert BEDROCK_CONVERSE.request(stream, {}).streamed
    assert not BEDROCK_CONVERSE.request(plain, {}).streamed
    assert BEDROCK_CONVERSE.request(plain, {}).tools_offered
    arn = "https://bedrock-runtime.us-east-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fx/converse"
    (by_arn,) = read_exchanges(
        [
            {
                **_exchange([_user("x")], {}),
                "request": {"method": "POST", "uri": arn, "body": json.dumps({"messages": []})},
            }
        ]
    )
    assert BEDROCK_CONVERSE.is_request(by_arn)
    (invoke,) = read_exchanges(
        [
            {
                **_exchange([_user("x")], {}),
                "request": {
                    "method": "POST",
                    "uri": URL.replace("/converse", "/invoke"),
                    "body": json.dumps({"messages": []}),
                },
            }
        ]
    )
    assert not BEDROCK_CONVERSE.is_request(invoke)


# --- stop reasons and blocks, as the reference lists them ------------------------------


@pytest.mark.parametrize(
    ("stop", "stop_reason"),
    [("end_turn", "converged"), ("stop_sequence", "converged"), ("max_tokens", "truncated"),
     ("model_context_window_exceeded", "truncated"), ("guardrail_intervened", "filtered"),
     ("content_filtered", "filtered")],
)  # fmt: skip
def test_stop_reasons_give_the_stop_reason(stop, stop_reason):
    (episode,) = episodes_from_interactions(
        [_exchange([_user("x")], _reply([{"text": "y"}], stop))]
    )
    assert episode.stop_reason == stop_reason


def test_server_side_tools_are_not_the_programs_calls():
    content = [
        {
            "toolUse": {
                "toolUseId": "s1",
                "name": "nova_code_interpreter",
                "input": {"snippet": "1+1"},
                "type": "server_tool_use",
            }
        },
        {
            "toolResult": {
                "toolUseId": "s1",
                "content": [{"json": {"stdOut": "2"}}],
                "status": "success",
            }
        },
        {"text": "It is 2."},
    ]
    (exchange,) = read_exchanges([_exchange([_user("1+1?")], _reply(content, "end_turn"))])
    reply = BEDROCK_CONVERSE.reply(exchange)
    assert reply.tool_calls == () and reply.content == "It is 2." and reply.finish_reason == "stop"


def test_tool_results_come_before_the_turns_text_and_json_items_read_as_json():
    messages = [
        _user("Weather?"),
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t1", "name": "w", "input": {}}}],
        },
        {
            "role": "user",
            "content": [
                {"text": "Thanks."},
                {
                    "toolResult": {
                        "toolUseId": "t1",
                        "content": [{"json": {"temp": 3}}, {"text": "cold"}],
                    }
                },
            ],
        },
    ]
    (exchange,) = read_exchanges([_exchange(messages, {})])
    read = BEDROCK_CONVERSE.request(exchange, {}).messages
    assert [m["role"] for m in read] == ["user", "assistant", "tool", "user"]
    assert read[2] == {"role": "tool", "tool_call_id": "t1", "content": '{"temp": 3}\ncold'}


def test_redacted_reasoning_is_kept_encrypted():
    content = [{"reasoningContent": {"redactedContent": "b3BhcXVl"}}, {"text": "Hi."}]
    (exchange,) = read_exchanges([_exchange([_user("x")], _reply(content, "end_turn"))])
    reasoning = BEDROCK_CONVERSE.reply(exchange).reasoning
    assert reasoning == {"reasoning_details": [{"type": "reasoning.encrypted", "data": "b3BhcXVl"}]}


def test_an_error_status_and_a_body_that_is_no_reply_are_named():
    (denied,) = read_exchanges([_exchange([_user("x")], {"message": "denied"}, status=403)])
    with pytest.raises(ModelReplyError, match=r"PermissionDeniedError.*denied"):
        BEDROCK_CONVERSE.reply(denied)
    (odd,) = read_exchanges([_exchange([_user("x")], {"hello": 1})])
    with pytest.raises(ModelReplyError, match=r"no output.message"):
        BEDROCK_CONVERSE.reply(odd)


# --- the event stream ---------------------------------------------------------------------

#: aws-c-event-stream's vectors (tests/message_deserializer_test.c): a frame with no headers
#: and no payload, one with the payload ``{'foo':'bar'}``, and one with that payload and the
#: header ``content-type: application/json`` (string type).
NO_OP = bytes.fromhex("000000100000000005c248eb7d98c8ff")
NO_HEADERS = (
    bytes.fromhex("0000001d00000000fd528c5a") + b"{'foo':'bar'}" + bytes.fromhex("c3653936")
)
ONE_HEADER = (
    bytes.fromhex("0000003d0000002007fd8396") + b"\x0ccontent-type\x07\x00\x10application/json"
    + b"{'foo':'bar'}" + bytes.fromhex("8d9c08b1")
)  # fmt: skip


def test_the_frame_decoder_reads_the_reference_vectors():
    assert event_stream_messages(NO_OP) == [({}, b"")]
    assert event_stream_messages(NO_HEADERS) == [({}, b"{'foo':'bar'}")]
    assert event_stream_messages(ONE_HEADER) == [
        ({"content-type": "application/json"}, b"{'foo':'bar'}")
    ]
    assert len(event_stream_messages(NO_OP + ONE_HEADER + NO_HEADERS)) == 3


def test_a_broken_frame_is_named():
    damaged = ONE_HEADER[:-1] + bytes([ONE_HEADER[-1] ^ 1])
    with pytest.raises(EventStreamError, match=r"frame 1 .*CRC"):
        event_stream_messages(NO_OP + damaged)
    with pytest.raises(EventStreamError, match="cut off"):
        event_stream_messages(ONE_HEADER[:-6])
    with pytest.raises(EventStreamError, match="shorter than a frame"):
        event_stream_messages(NO_OP + NO_OP[:8])


def _frame(headers: dict[str, str], payload: dict[str, Any]) -> bytes:
    """One frame encoded as the event stream encoding specifies (string headers)."""
    raw = b"".join(
        bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
        for k, v in headers.items()
    )
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 16 + len(raw) + len(body), len(raw))
    start = prelude + struct.pack(">I", zlib.crc32(prelude)) + raw + body
    return start + struct.pack(">I", zlib.crc32(start))


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return _frame({":event-type": name, ":message-type": "event"}, payload)


def test_an_exception_event_in_the_stream_is_the_replys_fault():
    body = _event("messageStart", {"role": "assistant"}) + _frame(
        {":exception-type": "throttlingException", ":message-type": "exception"},
        {"message": "Too many requests"},
    )
    (episode,) = episodes_from_interactions([_exchange([_user("x")], body, stream=True)])
    assert episode.stop_reason == "error"
    assert "throttlingException" in (episode.error or "") and "Too many requests" in (
        episode.error or ""
    )


def test_a_stream_without_message_stop_is_cut_off():
    body = _event("messageStart", {"role": "assistant"}) + _event(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hel"}}
    )
    (episode,) = episodes_from_interactions([_exchange([_user("x")], body, stream=True)])
    assert episode.stop_reason == "error" and "cut off" in (episode.error or "")


def test_streamed_reasoning_and_tool_input_are_joined():
    body = b"".join(
        [
            _event("messageStart", {"role": "assistant"}),
            _event(
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Hm"}}},
            ),
            _event(
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "m."}}},
            ),
            _event(
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig"}}},
            ),
            _event(
                "contentBlockStart",
                {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t9", "name": "f"}}},
            ),
            _event(
                "contentBlockDelta",
                {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a":'}}},
            ),
            _event(
                "contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "1}"}}}
            ),
            _event("messageStop", {"stopReason": "tool_use"}),
            _event("metadata", {"usage": {"inputTokens": 4, "outputTokens": 6}}),
        ]
    )
    (exchange,) = read_exchanges([_exchange([_user("x")], body, stream=True)])
    reply = BEDROCK_CONVERSE.reply(exchange)
    assert reply.reasoning == {
        "reasoning_details": [{"type": "reasoning.text", "text": "Hmm.", "signature": "sig"}]
    }
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("t9", "f", '{"a":1}')]
    assert reply.finish_reason == "tool_calls" and (
        reply.usage.prompt_tokens,
        reply.usage.completion_tokens,
    ) == (4, 6)
