"""The Gemini wire reader (``generateContent``, Gemini API and Vertex AI) on traffic nobody on
this project wrote, and on the cases the API reference names.

Recorded traffic, copied from pydantic/pydantic-ai (MIT), tests/models/cassettes/:

- ``pydantic-ai-gemini-iter-stream.yaml``: test_google/test_google_model_iter_stream.yaml
  (``:streamGenerateContent?alt=sse``, get_capital then get_temperature; the replies' calls
  carry no id, pydantic-ai sends its own back);
- ``pydantic-ai-gemini-vertex-tool-error.yaml``: test_multimodal_tool_returns/
  test_multimodal_tool_return_matrix[direct-url-image-google_vertex].yaml (Vertex AI,
  gemini-3-flash-preview, snake_case request parts, thought signatures on calls, a
  ``function_response`` reporting an ``error``, the last request answered HTTP 400);
- ``pydantic-ai-gemini-safety.yaml``: test_google/test_google_model_safety_settings.yaml
  (``finishReason: SAFETY``, no content).

``spec-gemini-two-candidates-stream.yaml`` is not recorded by a program but written from the
reference (``generationConfig.candidateCount: 2``, ``Candidate.index``): a stream whose chunks
each hold one candidate, 0 then 1.

And from Arize-ai/openinference (Apache-2.0), ``openinference-gemini-int-enums-stream.yaml``:
langchain-google-vertexai on Vertex AI asking for enums as integers (``"finishReason": 1``),
streamed as a JSON array.

Expected values come from the files themselves, read through google-genai's own
``GenerateContentResponse`` (``model_validate``, ``.text``, ``.function_calls``,
``usage_metadata``) where it applies, never from the reader's output. The spec cases
(https://ai.google.dev/api/generate-content) are written here from the reference; the enum
integers from the proto definitions (googleapis/googleapis
``google/cloud/aiplatform/v1/content.proto`` and ``prediction_service.proto`` for Vertex AI,
``google/ai/generativelanguage/v1beta/generative_service.proto`` for the Gemini API).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolreplay.cassettes.episodes import episode_from_cassette
from toolreplay.wire.gemini import FILTER_REASONS, GEMINI
from toolreplay.wire.gemini_enums import api_of
from toolreplay.wire.interactions import read_exchanges
from toolreplay.wire.reader import episodes_from_interactions, protocol_of, read_wire_episodes
from toolreplay.wire.replies import ModelReplyError

genai_types = pytest.importorskip("google.genai.types")

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"
STREAM = FOREIGN / "pydantic-ai-gemini-iter-stream.yaml"
VERTEX = FOREIGN / "pydantic-ai-gemini-vertex-tool-error.yaml"
SAFETY = FOREIGN / "pydantic-ai-gemini-safety.yaml"
INT_ENUMS = FOREIGN / "openinference-gemini-int-enums-stream.yaml"
TWO_CANDIDATES = FOREIGN / "spec-gemini-two-candidates-stream.yaml"
URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
VERTEX_URL = (
    "https://us-central1-aiplatform.googleapis.com/v1beta1/projects/p/locations/us-central1"
    "/publishers/google/models/gemini-2.5-flash"
)


def _interactions(path: Path) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]


def _sse_chunks(body: str) -> list[dict[str, Any]]:
    """The JSON chunks of an ``alt=sse`` body, cut by hand (blank-line separated
    ``data:`` lines), not by the reader's parser."""
    pieces = [p.strip() for p in body.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return [json.loads(p.removeprefix("data:")) for p in pieces]


def _sdk(chunk: dict[str, Any]) -> Any:
    return genai_types.GenerateContentResponse.model_validate(chunk)


def _exchange(
    contents: list[Any],
    reply: Any,
    *,
    stream: str = "",
    status: int = 200,
    url: str = URL,
    **body: Any,
) -> dict[str, Any]:
    """One interaction in vcrpy's shape: a request with ``contents`` to ``url`` and the
    reply body (a dict or list as JSON, a str as sent)."""
    method = ":streamGenerateContent" if stream else ":generateContent"
    text = reply if isinstance(reply, str) else json.dumps(reply)
    return {
        "request": {
            "method": "POST",
            "uri": url + method + stream,
            "body": json.dumps({"contents": contents, **body}),
        },
        "response": {"status": {"code": status}, "headers": {}, "body": {"string": text}},
    }


def _reply(parts: list[Any], finish: str | None = "STOP", **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **extra}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


# --- recorded traffic -------------------------------------------------------------------


def test_a_streamed_tool_chain_reads_as_the_sdk_reads_its_chunks():
    interactions = _interactions(STREAM)
    replies = [_sse_chunks(i["response"]["body"]["string"]) for i in interactions]
    sdk = [[_sdk(c) for c in chunks] for chunks in replies]
    (wire,) = read_wire_episodes(interactions)
    episode = wire.episode
    assert episode.streamed and episode.error is None and not episode.faults
    assert len(episode.rounds) == len(interactions) == 3
    expected_calls = [
        (f.name, f.args) for chunks in sdk[:2] for c in chunks for f in c.function_calls or []
    ]
    assert [(c.name, c.parsed_arguments()) for c in episode.tool_calls] == expected_calls
    # the answers pydantic-ai sent back (functionResponse.response of the next requests)
    sent = [
        p["functionResponse"]
        for i in interactions[1:]
        for c in i["request"]["parsed_body"]["contents"][-1:]
        for p in c["parts"]
    ]
    assert [json.loads(r.content) for rnd in episode.rounds for r in rnd.results] == [
        s["response"] for s in sent
    ]
    # the calls carry pydantic-ai's ids from the next request, as sent back
    assert [c.id for c in episode.tool_calls] == [s["id"] for s in sent]
    assert episode.answer == "".join(c.text or "" for c in sdk[2])
    last_usage = [chunks[-1].usage_metadata for chunks in sdk]
    assert episode.usage.prompt_tokens == sum(u.prompt_token_count for u in last_usage)
    assert episode.usage.completion_tokens == sum(u.candidates_token_count for u in last_usage)
    assert episode.stop_reason == "converged"
    assert [r.reply.finish_reason for r in episode.rounds] == ["tool_calls", "tool_calls", "stop"]
    system = interactions[0]["request"]["parsed_body"]["systemInstruction"]["parts"][0]["text"]
    assert episode.transcript[0] == {"role": "system", "content": system}
    assert (
        episode.question
        == interactions[0]["request"]["parsed_body"]["contents"][0]["parts"][0]["text"]
    )
    assert [m["role"] for m in episode.transcript] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]


def test_the_same_chunks_as_a_json_array_read_the_same():
    interactions = _interactions(STREAM)
    for item in interactions:
        chunks = _sse_chunks(item["response"]["body"]["string"])
        item["request"]["uri"] = item["request"]["uri"].replace("?alt=sse", "")
        item["response"]["body"]["string"] = json.dumps(chunks)
    as_array = episodes_from_interactions(interactions)[0]
    as_sse = episodes_from_interactions(_interactions(STREAM))[0]
    assert as_array == as_sse and as_array.streamed


def test_vertex_with_snake_case_parts_an_error_result_and_a_failed_last_request():
    interactions = _interactions(VERTEX)
    assert "aiplatform.googleapis.com" in interactions[0]["request"]["uri"]
    (wire,) = read_wire_episodes(interactions)
    episode = wire.episode
    # two replies read, the third request answered 400: the episode's error
    assert len(episode.rounds) == 2 and episode.stop_reason == "error"
    assert episode.error is not None and "HTTP 400" in episode.error
    assert "Cannot fetch content from the provided URL" in episode.error
    sdk = [_sdk(i["response"]["parsed_body"]) for i in interactions[:2]]
    assert [(c.name, c.parsed_arguments()) for c in episode.tool_calls] == [
        (f.name, f.args) for r in sdk for f in r.function_calls
    ]
    contents = interactions[2]["request"]["parsed_body"]["contents"]
    first, second = (c["parts"][0]["function_response"] for c in (contents[2], contents[4]))
    (failed,), (answered,) = (r.results for r in episode.rounds)
    assert failed.error == first["response"]["error"] and failed.call.id == first["id"]
    assert answered.error is None and json.loads(answered.content) == second["response"]
    usage = [r.usage_metadata for r in sdk]
    assert episode.usage.completion_tokens == sum(
        u.candidates_token_count + u.thoughts_token_count for u in usage
    )
    # the thought signature on each sent-back call is kept as encrypted reasoning
    signature = contents[1]["parts"][0]["thought_signature"]
    assistant = next(m for m in episode.transcript if m["role"] == "assistant")
    assert assistant["reasoning_details"] == [
        {"type": "reasoning.encrypted", "signature": signature}
    ]


def test_a_reply_withheld_for_safety_is_filtered():
    episode = episode_from_cassette(SAFETY)
    body = _interactions(SAFETY)[0]["response"]["parsed_body"]
    assert _sdk(body).candidates[0].finish_reason == genai_types.FinishReason.SAFETY
    assert episode.stop_reason == "filtered" and episode.answer == ""
    assert episode.rounds[0].reply.content is None
    assert episode.usage.prompt_tokens == body["usageMetadata"]["promptTokenCount"]


def test_requests_are_told_by_path_and_body():
    stream, vertex = (read_exchanges(_interactions(p))[0] for p in (STREAM, VERTEX))
    assert protocol_of(stream) is GEMINI and protocol_of(vertex) is GEMINI
    assert GEMINI.request(stream, {}).streamed and not GEMINI.request(vertex, {}).streamed
    assert GEMINI.request(vertex, {}).tools_offered
    (no_contents,) = read_exchanges([_exchange([], {})])
    assert GEMINI.is_request(no_contents)  # an empty contents list is still a request
    (other,) = read_exchanges(
        [
            {
                **_exchange([_user("hi")], {}),
                "request": {
                    "method": "POST",
                    "uri": URL + ":countTokens",
                    "body": json.dumps({"contents": []}),
                },
            }
        ]
    )
    assert not GEMINI.is_request(other)


# --- ids, as the reference leaves them out ----------------------------------------------


def test_calls_without_ids_get_ids_from_their_turn_and_place():
    calls = [
        {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}},
        {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
    ]
    answers = [
        {"functionResponse": {"name": "weather", "response": {"output": "rain"}}},
        {"functionResponse": {"name": "weather", "response": {"output": "sun"}}},
    ]
    first = [_user("Weather in Oslo and Rome?")]
    second = [*first, {"role": "model", "parts": calls}, {"role": "user", "parts": answers}]
    episode = episodes_from_interactions(
        [_exchange(first, _reply(calls)), _exchange(second, _reply([{"text": "Rain, sun."}]))]
    )[0]
    assert [c.id for c in episode.tool_calls] == ["weather#1.0", "weather#1.1"]
    results = episode.rounds[0].results
    assert [(r.call.parsed_arguments()["city"], json.loads(r.content)) for r in results] == [
        ("Oslo", {"output": "rain"}),
        ("Rome", {"output": "sun"}),
    ]
    assert episode.answer == "Rain, sun." and episode.stop_reason == "converged"


def test_ids_sent_by_the_model_are_kept():
    call = {"functionCall": {"id": "fc_1", "name": "lookup", "args": {}}}
    answer = {"functionResponse": {"id": "fc_1", "name": "lookup", "response": {"error": "gone"}}}
    first = [_user("Look it up")]
    second = [*first, {"role": "model", "parts": [call]}, {"role": "user", "parts": [answer]}]
    episode = episodes_from_interactions(
        [_exchange(first, _reply([call])), _exchange(second, _reply([{"text": "It is gone."}]))]
    )[0]
    ((result,),) = [r.results for r in episode.rounds[:1]]
    assert result.call.id == "fc_1" and result.error == "gone"


def test_a_response_before_its_user_text_becomes_a_tool_message_first():
    call = {"functionCall": {"name": "clock", "args": {}}}
    turn = {
        "role": "user",
        "parts": [
            {"text": "And now?"},
            {"functionResponse": {"name": "clock", "response": {"t": 1}}},
        ],
    }
    request = _exchange([_user("Time?"), {"role": "model", "parts": [call]}, turn], _reply([]))
    (exchange,) = read_exchanges([request])
    messages = GEMINI.request(exchange, {}).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[2]["tool_call_id"] == messages[1]["tool_calls"][0]["id"] == "clock#1.0"


# --- finish reasons, usage, thoughts ----------------------------------------------------


@pytest.mark.parametrize(
    ("finish", "stop_reason"),
    [("MAX_TOKENS", "truncated"), ("SAFETY", "filtered"), ("RECITATION", "filtered"),
     ("PROHIBITED_CONTENT", "filtered"), ("MALFORMED_FUNCTION_CALL", "converged"),
     ("OTHER", "converged")],
)  # fmt: skip
def test_finish_reasons_give_the_stop_reason(finish, stop_reason):
    reply = _reply([{"text": "Partial"}], finish)
    (episode,) = episodes_from_interactions([_exchange([_user("Go")], reply)])
    assert episode.stop_reason == stop_reason


def test_a_malformed_call_leaves_no_call():
    reply = _reply([{"functionCall": {"name": "f", "args": {}}}], "MALFORMED_FUNCTION_CALL")
    (episode,) = episodes_from_interactions([_exchange([_user("Go")], reply, tools=[{}])])
    assert (
        episode.rounds[0].reply.tool_calls == () and episode.rounds[0].reply.finish_reason == "stop"
    )


def test_every_finish_reason_of_the_sdk_reads_without_fault():
    for reason in genai_types.FinishReason:
        (exchange,) = read_exchanges(
            [_exchange([_user("x")], _reply([{"text": "y"}], reason.value))]
        )
        finish = GEMINI.reply(exchange).finish_reason
        assert finish == (
            "content_filter"
            if reason.value in FILTER_REASONS
            else "length"
            if reason.value == "MAX_TOKENS"
            else "stop"
        )


def test_a_blocked_prompt_is_filtered_with_no_content():
    reply = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 7}}
    (episode,) = episodes_from_interactions([_exchange([_user("bad")], reply)])
    assert episode.stop_reason == "filtered" and episode.rounds[0].reply.content is None
    assert episode.usage.prompt_tokens == 7


def test_no_candidate_and_no_block_reason_is_an_error():
    (episode,) = episodes_from_interactions([_exchange([_user("x")], {"usageMetadata": {}})])
    assert episode.stop_reason == "error" and "no candidate" in (episode.error or "")


def test_thoughts_are_reasoning_with_their_signature_and_usage_counts_them():
    reply = _reply(
        [
            {"text": "Think", "thought": True},
            {"text": "ing.", "thought": True, "thoughtSignature": "c2ln"},
            {"text": "Answer."},
        ],
        usageMetadata={"promptTokenCount": 10, "candidatesTokenCount": 3, "thoughtsTokenCount": 20},
    )
    (exchange,) = read_exchanges([_exchange([_user("Q")], reply)])
    read = GEMINI.reply(exchange)
    sdk = _sdk(reply)
    assert read.content == sdk.text == "Answer."
    assert read.reasoning == {
        "reasoning_details": [{"type": "reasoning.text", "text": "Thinking.", "signature": "c2ln"}]
    }
    usage = sdk.usage_metadata
    assert (read.usage.prompt_tokens, read.usage.completion_tokens) == (
        usage.prompt_token_count,
        usage.candidates_token_count + usage.thoughts_token_count,
    )


# --- streams and faults -----------------------------------------------------------------


def _sse(chunks: list[Any]) -> str:
    return "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks)


def test_an_error_chunk_in_a_stream_is_the_replys_fault():
    chunks = [_reply([{"text": "Hel"}], None), {"error": {"code": 503, "message": "overloaded"}}]
    (episode,) = episodes_from_interactions(
        [_exchange([_user("x")], _sse(chunks), stream="?alt=sse")]
    )
    assert episode.stop_reason == "error"
    assert "chunk 1" in (episode.error or "") and "overloaded" in (episode.error or "")


def test_a_stream_cut_before_its_finish_reason_is_an_error():
    chunks = [_reply([{"text": "Hel"}], None), _reply([{"text": "lo"}], None)]
    (episode,) = episodes_from_interactions(
        [_exchange([_user("x")], _sse(chunks), stream="?alt=sse")]
    )
    assert episode.stop_reason == "error" and "cut off" in (episode.error or "")


def test_streamed_calls_and_texts_are_merged_in_order():
    chunks = [
        _reply([{"text": "Let me ", "thought": True}], None),
        _reply([{"text": "check.", "thought": True}], None),
        _reply([{"text": "One "}], None),
        _reply(
            [{"text": "moment."}, {"functionCall": {"name": "f", "args": {"a": 1}}}],
            "STOP",
            usageMetadata={"promptTokenCount": 5, "candidatesTokenCount": 9},
        ),
    ]
    (exchange,) = read_exchanges([_exchange([_user("x")], _sse(chunks), stream="?alt=sse")])
    read = GEMINI.reply(exchange)
    assert read.content == "".join(_sdk(c).text or "" for c in chunks) == "One moment."
    assert read.reasoning["reasoning_details"] == [
        {"type": "reasoning.text", "text": "Let me check."}
    ]
    assert [(c.id, c.name, c.arguments) for c in read.tool_calls] == [("f#1.0", "f", '{"a": 1}')]
    assert read.finish_reason == "tool_calls" and read.usage.completion_tokens == 9


def test_an_error_status_and_a_broken_body_are_named():
    error = {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}
    (limited,) = read_exchanges([_exchange([_user("x")], error, status=429)])
    with pytest.raises(ModelReplyError, match=r"RateLimitError.*quota"):
        GEMINI.reply(limited)
    (broken,) = read_exchanges([_exchange([_user("x")], "<html>oops</html>")])
    with pytest.raises(ModelReplyError, match="not JSON"):
        GEMINI.reply(broken)


# --- enums sent as integers (enum-encoding=int) -------------------------------------------

INT_QUERY = "?%24alt=json%3Benum-encoding%3Dint"


def test_a_stream_with_an_integer_finish_reason_is_read_whole():
    interactions = _interactions(INT_ENUMS)
    (chunk,) = json.loads(interactions[0]["response"]["body"]["string"])
    (wire,) = read_wire_episodes(interactions)
    episode = wire.episode
    assert episode.streamed and episode.error is None and not episode.faults
    # finishReason 1 is STOP in Vertex AI's Candidate.FinishReason
    assert chunk["candidates"][0]["finishReason"] == 1
    assert episode.stop_reason == "converged"
    assert episode.rounds[0].reply.finish_reason == "stop"
    assert episode.answer == chunk["candidates"][0]["content"]["parts"][0]["text"]
    usage = chunk["usageMetadata"]
    assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (
        usage["promptTokenCount"],
        usage["candidatesTokenCount"] + usage["thoughtsTokenCount"],
    )


# (url, integer, the stop reason its proto name gives); names from the proto files.
INT_FINISH_CASES = [
    (VERTEX_URL, 1, "converged"),  # STOP
    (VERTEX_URL, 2, "truncated"),  # MAX_TOKENS
    (VERTEX_URL, 3, "filtered"),  # SAFETY
    (VERTEX_URL, 5, "converged"),  # OTHER
    (VERTEX_URL, 6, "filtered"),  # BLOCKLIST (Vertex AI)
    (VERTEX_URL, 8, "filtered"),  # SPII (Vertex AI)
    (VERTEX_URL, 10, "filtered"),  # MODEL_ARMOR
    (URL, 2, "truncated"),  # MAX_TOKENS
    (URL, 6, "converged"),  # LANGUAGE (Gemini API)
    (URL, 7, "filtered"),  # BLOCKLIST (Gemini API)
    (URL, 9, "filtered"),  # SPII (Gemini API)
    (URL, 11, "filtered"),  # IMAGE_SAFETY
    (URL, 13, "converged"),  # TOO_MANY_TOOL_CALLS
    (URL, 17, "filtered"),  # IMAGE_RECITATION
    ("http://localhost:8080/gemini", 2, "truncated"),  # MAX_TOKENS in both
]


@pytest.mark.parametrize(("url", "finish", "stop_reason"), INT_FINISH_CASES)
@pytest.mark.parametrize("streamed", [False, True])
def test_an_integer_finish_reason_reads_as_its_protos_name(url, finish, stop_reason, streamed):
    reply = _reply([{"text": "Partial"}], finish)
    if streamed:  # a JSON array of chunks, as without alt=sse
        interaction = _exchange([_user("Go")], [reply], url=url, stream=INT_QUERY)
    else:
        interaction = _exchange([_user("Go")], reply, url=url)
        interaction["request"]["uri"] += INT_QUERY
    (episode,) = episodes_from_interactions([interaction])
    assert episode.error is None and episode.stop_reason == stop_reason


def test_the_converted_max_tokens_reply_is_truncated():
    # the example found: Vertex AI, finishReason 2 (MAX_TOKENS), unstreamed
    reply = _reply([{"text": "I'm on a seafood diet."}], 2)
    interaction = _exchange([_user("Joke")], reply, url=VERTEX_URL)
    interaction["request"]["uri"] += INT_QUERY
    (episode,) = episodes_from_interactions([interaction])
    assert episode.stop_reason == "truncated"
    assert episode.rounds[0].reply.finish_reason == "length"


@pytest.mark.parametrize(
    ("url", "finish", "calls"),
    [(VERTEX_URL, 9, 0),  # MALFORMED_FUNCTION_CALL (Vertex AI): calls dropped
     (URL, 10, 0),  # MALFORMED_FUNCTION_CALL (Gemini API)
     (URL, 12, 1),  # UNEXPECTED_TOOL_CALL (Gemini API): the call stands
     (VERTEX_URL, 1, 1)],  # STOP
)  # fmt: skip
def test_integer_finish_reasons_keep_or_drop_calls_by_name(url, finish, calls):
    reply = _reply([{"functionCall": {"name": "f", "args": {}}}], finish)
    (exchange,) = read_exchanges([_exchange([_user("Go")], reply, url=url, tools=[{}])])
    read = GEMINI.reply(exchange)
    assert len(read.tool_calls) == calls
    assert read.finish_reason == ("tool_calls" if calls else "stop")


@pytest.mark.parametrize(
    ("url", "finish", "named"),
    [(VERTEX_URL, 15, r"finishReason 15 is no value of Vertex AI's enum \(it names 0–10\)"),
     (URL, 18, r"finishReason 18 is no value of the Gemini API's enum \(it names 0–17\)"),
     ("http://proxy.local/gemini", 7,
      "finishReason 7 is PROHIBITED_CONTENT on Vertex AI, BLOCKLIST on the Gemini API")],
)  # fmt: skip
def test_an_integer_no_table_names_is_an_error_naming_it(url, finish, named):
    reply = _reply([{"text": "y"}], finish)
    (exchange,) = read_exchanges([_exchange([_user("x")], reply, url=url)])
    with pytest.raises(ModelReplyError, match=named):
        GEMINI.reply(exchange)
    chunks = [_reply([{"text": "y"}], None), _reply([], finish)]
    (streamed,) = read_exchanges([_exchange([_user("x")], chunks, stream=INT_QUERY, url=url)])
    with pytest.raises(ModelReplyError, match="chunk 1: " + named):
        GEMINI.reply(streamed)


@pytest.mark.parametrize(
    ("url", "reason"),
    [(VERTEX_URL, 1),  # SAFETY
     (VERTEX_URL, 6),  # JAILBREAK (Vertex AI's BlockedReason)
     (URL, 5)],  # IMAGE_SAFETY (the Gemini API's BlockReason)
)  # fmt: skip
def test_an_integer_block_reason_is_a_filtered_prompt(url, reason):
    reply = {"promptFeedback": {"blockReason": reason}, "usageMetadata": {"promptTokenCount": 3}}
    (episode,) = episodes_from_interactions([_exchange([_user("bad")], reply, url=url)])
    assert episode.stop_reason == "filtered" and episode.rounds[0].reply.content is None


def test_an_integer_block_reason_no_table_names_is_an_error():
    reply = {"promptFeedback": {"blockReason": 6}}  # the Gemini API's BlockReason ends at 5
    (episode,) = episodes_from_interactions([_exchange([_user("bad")], reply)])
    assert episode.stop_reason == "error"
    assert "blockReason 6 is no value of the Gemini API's enum" in (episode.error or "")


@pytest.mark.parametrize(
    ("uri", "api"),
    [("https://aiplatform.googleapis.com/v1/publishers/google/models/m:generateContent", "vertex"),
     ("https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/l/endpoints/1"
      ":generateContent", "vertex"),
     ("http://127.0.0.1:9/v1/projects/p/locations/l/publishers/google/models/m:generateContent",
      "vertex"),
     ("https://generativelanguage.googleapis.com/v1beta/models/m:generateContent", "gemini"),
     ("http://localhost/v1alpha/tunedModels/t:generateContent", "gemini"),
     ("http://localhost/gemini/m:generateContent", None)],
)  # fmt: skip
def test_the_api_is_told_by_the_request_url(uri, api):
    assert api_of(uri) == api


def test_a_boolean_is_no_enum_integer():
    # JSON true is no enum value: the reply reads as one without finishReason (as sent),
    # whose finish is not told
    (exchange,) = read_exchanges([_exchange([_user("x")], _reply([{"text": "y"}], True))])
    assert GEMINI.reply(exchange).finish_reason == "unknown"


def test_the_candidate_read_is_candidate_0_by_its_index_in_every_chunk():
    chunks = _sse_chunks(_interactions(TWO_CANDIDATES)[0]["response"]["body"]["string"])
    assert [[c.index for c in _sdk(chunk).candidates] for chunk in chunks] == [[0], [1]]
    episode = episode_from_cassette(TWO_CANDIDATES)
    (only,) = episode.rounds
    assert (only.reply.content, only.reply.finish_reason) == ("A", "stop")
    assert only.reply.usage.prompt_tokens == 4 and episode.stop_reason == "converged"
