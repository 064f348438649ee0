"""Streamed Chat Completions replies: the assembler against the openai SDK's own accumulation on
real providers' bodies, cut-off and broken streams, the model client streaming, the streamed
cassette set."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from toolreplay.hosts import run_loop
from toolreplay.models.base import ModelSettings
from toolreplay.models.openai_chat import OpenAIChatModel
from toolreplay.tools.toolset import Toolset
from toolreplay.wire.replies import ModelReplyError, parse_chat_reply
from toolreplay.wire.stream import (
    StreamError,
    assemble_chat_stream,
    event_chunks,
    split_events,
)

from . import stream_bodies as sb

ROOT = Path(__file__).resolve().parent.parent
STREAM_SET = ROOT / "cassettes" / "reference-stream"
URL = "https://api.example.test/v1/chat/completions"


def _sdk_final(events: list[str]):
    """The completion the openai SDK's own stream accumulation makes of these events."""
    from openai._models import construct_type
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state = ChatCompletionStreamState()
    for event in split_events(sb.body(events)):
        if event.data == "[DONE]":
            break
        chunk = construct_type(type_=ChatCompletionChunk, value=json.loads(event.data))
        state.handle_chunk(chunk)
    return state.get_final_completion()


def _response(events_or_body, *, asked: bool = True, ctype: str = "text/event-stream"):
    content = sb.body(events_or_body) if isinstance(events_or_body, list) else events_or_body
    request_body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    if asked:
        request_body["stream"] = True
    request = httpx.Request("POST", URL, json=request_body)
    return httpx.Response(200, headers={"content-type": ctype}, content=content, request=request)


@pytest.mark.parametrize("name", sorted(sb.GOOD))
def test_assembly_equals_the_sdks_accumulation(name):
    events = sb.GOOD[name]
    ours = assemble_chat_stream(sb.body(events))["choices"][0]
    sdk = _sdk_final(events).choices[0]
    assert ours["message"]["content"] == sdk.message.content
    assert [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in ours["message"].get("tool_calls", [])
    ] == [(c.id, c.function.name, c.function.arguments) for c in sdk.message.tool_calls or []]
    assert ours["finish_reason"] == sdk.finish_reason
    reply = parse_chat_reply(_response(events))
    sdk_usage = _sdk_final(events).usage
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (
        sdk_usage.prompt_tokens,
        sdk_usage.completion_tokens,
    )


def test_real_bodies_hand_checked():
    deepseek = parse_chat_reply(_response(sb.DEEPSEEK_TOOL_CALL))  # arguments in eight pieces
    (call,) = deepseek.tool_calls
    assert (call.id, call.name, call.parsed_arguments()) == (
        "call_0_00213ae3-c4bc-4497-8f41-52bf4f76c3b9",
        "read_file",
        {"path": "./test.txt"},
    )
    assert deepseek.finish_reason == "tool_calls" and deepseek.usage.prompt_tokens == 1716
    # Mistral sends the whole call in one chunk; a later chunk repeats the name as "".
    (call,) = parse_chat_reply(_response(sb.MISTRAL_SPLIT_ARGUMENTS)).tool_calls
    assert (call.id, call.name, call.arguments) == ("", "lookup", '{"value":42}')
    (call,) = parse_chat_reply(_response(sb.MISTRAL_TOOL_CALL)).tool_calls
    assert (call.id, call.name, call.arguments) == ("4dI1Jw6NX", "llm_version", "{}")
    answer = parse_chat_reply(_response(sb.MISTRAL_ANSWER))
    assert answer.content == "The installed version of LLM is 0.26." and not answer.tool_calls
    # OpenAI: the include_usage chunk comes after the finish_reason, with empty choices.
    openai = parse_chat_reply(_response(sb.OPENAI_TOOL_CALL))
    assert (openai.content, openai.tool_calls[0].arguments) == (None, '{"country":"UK"}')
    assert (openai.usage.prompt_tokens, openai.usage.completion_tokens) == (53, 15)


def test_reasoning_fields_are_kept_and_sent_back():
    groq = parse_chat_reply(_response(sb.GROQ_TOOL_CALL))
    assert groq.reasoning["reasoning"].startswith("We need")
    assert groq.to_message()["reasoning"] == groq.reasoning["reasoning"]
    deepseek = parse_chat_reply(_response(sb.DEEPSEEK_REASONING))
    assert deepseek.reasoning["reasoning_content"].startswith("Hmm")
    assert deepseek.content == "Hello there! 😊"


def test_a_stream_to_a_request_that_did_not_ask_keeps_its_message():
    with pytest.raises(ModelReplyError, match="did not ask for one"):
        parse_chat_reply(_response(sb.OPENAI_ANSWER, asked=False))


def _cut(events: list[str], keep: int) -> bytes:
    return sb.body(events[:keep])


@pytest.mark.parametrize(
    ("body", "chunk", "words"),
    [
        (_cut(sb.OPENAI_TOOL_CALL, 4), 3, "cut off: it ends without data: [DONE]"),
        (_cut(sb.DEEPSEEK_TOOL_CALL, 10), 9, "cut off"),
        (sb.body(sb.GROQ_ERROR_EVENT), 3, "the server sent an error event"),
        (sb.body(sb.OPENROUTER_ERROR_CHUNK), 3, "the chunk reports an error"),
        (
            sb.body(sb.MISTRAL_ANSWER[:3]) + b'data: {"id":"394ba88c55a44d4593f7c5',
            3,
            "not valid JSON",
        ),
    ],
)
def test_cut_off_and_broken_streams_name_the_chunk(body, chunk, words):
    with pytest.raises(StreamError) as caught:
        assemble_chat_stream(body)
    assert caught.value.chunk == chunk and words in str(caught.value)
    assert f"chunk {chunk}: " in str(caught.value) and caught.value.snippet
    with pytest.raises(ModelReplyError, match=f"streamed reply is unusable: chunk {chunk}: "):
        parse_chat_reply(_response(body))


def test_an_empty_stream_is_refused():
    with pytest.raises(StreamError, match="empty"):
        assemble_chat_stream(b"")


def test_event_chunks_keep_the_boundaries_and_the_bytes():
    body = sb.body(sb.OPENAI_TOOL_CALL)
    pieces = event_chunks(body)
    assert b"".join(pieces) == body and len(pieces) == len(sb.OPENAI_TOOL_CALL)
    crlf = body.replace(b"\n", b"\r\n")
    assert b"".join(event_chunks(crlf)) == crlf
    assert assemble_chat_stream(crlf) == assemble_chat_stream(body)


class _ChunkStream(httpx.SyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces
        self.served = 0

    def __iter__(self) -> Iterator[bytes]:
        for piece in self.pieces:
            self.served += 1
            yield piece


def _streaming_model(pieces: list[bytes], seen: list[dict]) -> OpenAIChatModel:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=_ChunkStream(pieces)
        )

    http = httpx.Client(transport=httpx.MockTransport(handler))
    settings = ModelSettings(base_url="https://api.example.test/v1", model="m", stream=True)
    return OpenAIChatModel(settings, http)


def test_the_model_client_streams_when_asked_and_gives_the_same_reply():
    seen: list[dict] = []
    model = _streaming_model(event_chunks(sb.body(sb.OPENAI_TOOL_CALL)), seen)
    reply = model.complete([{"role": "user", "content": "capital?"}], [_TOOL])
    assert seen[0]["stream"] is True and seen[0]["stream_options"] == {"include_usage": True}
    unstreamed = parse_chat_reply(
        httpx.Response(
            200,
            json=assemble_chat_stream(sb.body(sb.OPENAI_TOOL_CALL)),
            request=httpx.Request("POST", URL),
        )
    )
    assert reply == unstreamed and reply.tool_calls[0].name == "get_capital"


_TOOL = {
    "type": "function",
    "function": {
        "name": "get_capital",
        "parameters": {"type": "object", "properties": {"country": {"type": "string"}}},
    },
}


def _capitals() -> Toolset:
    return Toolset("capital", (_TOOL,), {"get_capital": lambda country: {"capital": "London"}})


def test_a_stream_cut_off_mid_way_is_an_error_outcome_naming_the_chunk():
    seen: list[dict] = []
    model = _streaming_model(event_chunks(_cut(sb.OPENAI_TOOL_CALL, 5)), seen)
    episode = run_loop(model, _capitals(), [{"role": "user", "content": "capital?"}])
    assert episode.stop_reason == "error" and episode.answer == ""
    assert "cut off" in episode.error and "chunk 4: " in episode.error


def test_the_streamed_set_replays_chunk_by_chunk(monkeypatch):
    from toolreplay.cassettes import transport

    served: list[int] = []
    original = transport._EventChunks.__iter__

    def counting(self):
        served.append(len(self._chunks))
        yield from original(self)

    monkeypatch.setattr(transport._EventChunks, "__iter__", counting)
    from toolreplay.evals import load_eval
    from toolreplay.runs.configuration import Configuration
    from toolreplay.runs.replay import replay_set

    suite = load_eval(ROOT / "evals" / "weather-stream.yaml")
    (episode,) = replay_set(
        STREAM_SET, replace(suite, questions=suite.questions[:1]), [Configuration("loop", "atomic")]
    )
    assert episode.stop_reason == "converged" and len(episode.rounds) == 4
    assert len(served) == 4 and min(served) > 3  # every reply streamed in several chunks


def test_the_streamed_set_gives_the_reference_episodes(suite, reference_episodes):
    from toolreplay.evals import load_eval
    from toolreplay.runs.configuration import study_configurations
    from toolreplay.runs.replay import replay_set

    stream_suite = load_eval(ROOT / "evals" / "weather-stream.yaml")
    assert stream_suite.experiment.stream and not suite.experiment.stream
    episodes = replay_set(STREAM_SET, stream_suite, study_configurations(stream_suite))
    assert len(episodes) == 16
    for episode in episodes:
        ref = reference_episodes[(episode.configuration, episode.question_id)]
        assert replace(episode, wall_time_s=0.0) == replace(ref, wall_time_s=0.0)


def test_the_streamed_cassettes_keep_one_event_per_line():
    text = (STREAM_SET / "loop+atomic" / "beijing.yaml").read_text(encoding="utf-8")
    assert "- text/event-stream; charset=utf-8" in text
    assert "      string: |+\n        data: {" in text
    data_lines = [line.strip() for line in text.splitlines() if line.strip().startswith("data:")]
    assert data_lines.count("data: [DONE]") == 3  # one stream per model request
    assert all(line == "data: [DONE]" or json.loads(line[6:]) for line in data_lines)


def test_the_report_marks_the_streamed_set():
    results = json.loads((ROOT / "reports" / "stream" / "results.json").read_text("utf-8"))
    assert results["provenance"]["streamed"] is True
    reference = json.loads((ROOT / "reports" / "results.json").read_text("utf-8"))
    assert "streamed" not in reference["provenance"]
    assert "streamed replies" in (ROOT / "reports" / "stream" / "index.html").read_text("utf-8")
    assert "streamed replies" not in (ROOT / "reports" / "index.html").read_text("utf-8")
    rows = {c["name"]: (c["passed"], c["avg_rounds"], c["avg_tool_calls"])
            for c in results["configurations"]}  # fmt: skip
    assert rows == {
        "single+oneshot": (4, 2.0, 1.5),
        "loop+oneshot": (4, 2.0, 1.5),
        "single+atomic": (0, 2.0, 1.5),
        "loop+atomic": (4, 3.25, 3.25),
    }


@pytest.mark.slow
def test_committed_stream_report_is_fresh(tmp_path):
    """`toolreplay run --eval evals/weather-stream.yaml --set reference-stream --out
    reports/stream` reproduces the committed reports/stream/ exactly (run it when stale)."""
    from .conftest import _cli_run

    eval_file = str(ROOT / "evals" / "weather-stream.yaml")
    result = _cli_run(tmp_path, "--eval", eval_file, "--set", "reference-stream")
    assert result.exit_code == 0, result.output
    committed = ROOT / "reports" / "stream"
    for name in ("results.json", "index.html"):
        assert (tmp_path / name).read_bytes() == (committed / name).read_bytes(), name


def test_the_serializer_stores_an_event_stream_one_event_per_line():
    from toolreplay.cassettes.format import JsonBodySerializer

    body = sb.body(sb.DEEPSEEK_TOOL_CALL).decode("utf-8")
    cassette = {
        "version": 1,
        "interactions": [
            {
                "request": {"method": "POST", "uri": URL, "headers": {}, "body": "{}"},
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": ["text/event-stream"]},
                    "body": {"string": body},
                },
            }
        ],
    }
    text = JsonBodySerializer.serialize(cassette)
    lines = text.splitlines()
    start = lines.index("      string: |+")
    stored = lines[start + 1 : start + 1 + 2 * len(sb.DEEPSEEK_TOOL_CALL)]
    assert [line.strip() for line in stored[::2]] == sb.DEEPSEEK_TOOL_CALL
    assert all(not line.strip() for line in stored[1::2])  # the blank line between events
    back = JsonBodySerializer.deserialize(text)["interactions"][0]["response"]["body"]
    assert back["string"] == body


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_sdks_own_streaming_reads_a_replayed_stream(mode):
    """Frameworks iterate the SDK's stream (pydantic-ai's run_stream, AsyncOpenAI): over the
    replay clients they get the recorded chunks, one event at a time, and the SDK's own
    accumulation makes of them what the assembler makes."""
    import asyncio

    from openai import AsyncOpenAI, OpenAI
    from openai.lib.streaming.chat import ChatCompletionStreamState

    from toolreplay.cassettes.store import load_cassette
    from toolreplay.cassettes.transport import Player, Tape

    path = STREAM_SET / "loop+atomic" / "hottest.yaml"
    interactions = load_cassette(path)
    first = interactions[0]
    request = dict(first["request"]["parsed_body"])
    expected = assemble_chat_stream(first["response"]["body"]["string"])["choices"][0]
    state = ChatCompletionStreamState()
    with Player() as player, player.use(Tape(path, interactions)):
        kwargs = {"api_key": "unused", "base_url": "http://127.0.0.1/v1", "max_retries": 0}
        if mode == "sync":
            client = OpenAI(http_client=player.http, **kwargs)
            chunks = list(client.chat.completions.create(**request))
        else:

            async def read() -> list:
                client = AsyncOpenAI(http_client=player.async_http, **kwargs)
                stream = await client.chat.completions.create(**request)
                return [chunk async for chunk in stream]

            chunks = asyncio.run(read())
    for chunk in chunks:
        state.handle_chunk(chunk)
    assert len(chunks) > 5  # one per recorded event, not one blob
    message = state.get_final_completion().choices[0].message
    calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
    assert calls == [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in expected["message"]["tool_calls"]
    ]
    assert [name for _, name, _ in calls] == ["geocode_city"] * 3


def test_the_stand_in_streams_when_asked(suite, loopback):
    """Over loopback, the stand-in's event stream assembles into the reply it sends
    unstreamed (ids, calls, content, usage), in several chunks."""
    from toolreplay.study.weather.standin import STANDIN_MODEL, standin_server
    from toolreplay.study.weather.toolsets import atomic_toolset

    question = suite.questions[2]  # three places: three parallel calls
    messages = [{"role": "user", "content": question.text}]
    schemas = list(atomic_toolset(None).schemas)  # type: ignore[arg-type]
    replies = {}
    with standin_server(suite) as base, httpx.Client(trust_env=False) as http:
        for stream in (False, True):
            settings = ModelSettings(base_url=base, model=STANDIN_MODEL, stream=stream)
            replies[stream] = OpenAIChatModel(settings, http).complete(messages, schemas)
    assert replies[True] == replies[False]
    assert [c.name for c in replies[True].tool_calls] == ["geocode_city"] * 3
    assert replies[True].usage.prompt_tokens > 0


def test_openrouters_comment_lines_and_encrypted_reasoning_details():
    reply = parse_chat_reply(_response(sb.OPENROUTER_ENCRYPTED_REASONING))
    assert reply.content == "I’m ChatGPT," and reply.finish_reason == "stop"
    (item,) = reply.reasoning["reasoning_details"]
    assert item["type"] == "reasoning.encrypted" and item["data"].startswith("gAAAAAB")
    assert reply.reasoning_text == "(encrypted reasoning, not readable)"
    assert reply.to_message()["reasoning_details"] == [item]  # sent back as received
    assert reply.usage.prompt_tokens > 0
