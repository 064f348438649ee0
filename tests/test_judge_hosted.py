"""Which hosted tools make values not checkable, and which values they spare
(toolreplay.judging.checkable); hosted tools read from streamed Chat Completions and Responses
replies as from unstreamed ones, from choice 0 by its index (toolreplay.wire.hosted,
toolreplay.wire.stream)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from toolreplay.judging.assessment import assess
from toolreplay.judging.checkable import quotable
from toolreplay.judging.failures import FABRICATED_VALUE, classify
from toolreplay.judging.grounding import ground_answer
from toolreplay.wire.episode import ModelReply, Usage
from toolreplay.wire.replies import parse_chat_reply
from toolreplay.wire.responses import reply_from_response
from toolreplay.wire.responses_stream import assemble_response

from .test_failures import call, reply, run

DATA_TOOLS = ["web_search", "code_interpreter", "code_execution", "google_search", "file_search",
              "url_context", "web_fetch", "weather_mcp_lookup"]  # fmt: skip


def _judged(text: str, hosted: tuple[str, ...]) -> tuple[Any, Any]:
    final = ModelReply(text, (), "stop", Usage(10, 5), hosted_tools=hosted)
    episode = run("loop", [reply(None, call()), final])  # get_weather: 北京 today, max 28.6°C
    judged = assess(episode, "temperature")
    g = ground_answer(text, episode.transcript, "temperature", hosted=episode.hosted_tools)
    return judged, g


@pytest.mark.parametrize("hosted", [(), ("image_generation",), *[(t,) for t in DATA_TOOLS],
                                    ("web_search", "image_generation")])  # fmt: skip
@pytest.mark.parametrize(
    "text",
    [
        "北京现在 26.1°C，今天最高 35°C。",  # get_weather's maximum of today is 28.6°C
        "北京现在 26.1°C，今天降水量 9 毫米。",  # its precipitation of today is 2.6 mm
        "Beijing is 26.1°C now, with a high of 35°C today.",
        "北京今天最高 35°C。",
    ],
)
def test_a_value_the_function_tool_contradicts_is_fabricated_whatever_ran_beside(
    text: str, hosted: tuple[str, ...]
) -> None:
    judged, g = _judged(text, hosted)
    assert not judged.passed, judged.verdict.explanation
    assert [f.mode for f in judged.failure_modes] == [FABRICATED_VALUE]
    wrong = g.checks[-1]
    assert wrong.checkable and wrong.fabricated and "nearest" in wrong.reason


@pytest.mark.parametrize("tool", DATA_TOOLS)
@pytest.mark.parametrize(
    "text",
    [
        "北京现在 26.1°C，下午可能到 35°C。",  # no field said: an hour's may be the search's
        "北京现在 26.1°C，明天最高 35°C。",  # the tool result holds no day but today
        "北京现在 26.1°C，上海今天最高 35°C。",  # nor any place but 北京
        "It is 26.1°C in Beijing now; tomorrow's high is 35°C.",
    ],
)
def test_a_data_tool_spares_the_values_the_function_tool_holds_nothing_of(
    text: str, tool: str
) -> None:
    judged, g = _judged(text, (tool,))
    assert judged.passed and judged.failure_modes == (), judged.verdict.explanation
    assert [(c.grounded, c.checkable) for c in g.checks] == [(True, True), (False, False)]
    assert f"the hosted tool {tool}" in g.checks[1].reason


@pytest.mark.parametrize("hosted", [("image_generation",), ("tool_search_tool_regex",)])
def test_a_hosted_tool_that_returns_no_data_leaves_every_value_checkable(
    hosted: tuple[str, ...],
) -> None:
    text = "北京现在 26.1°C，明天最高 35°C。"
    judged, g = _judged(text, hosted)
    assert [f.mode for f in judged.failure_modes] == [FABRICATED_VALUE]
    assert all(c.checkable for c in g.checks)
    episode = run("loop", [ModelReply("A cake: 180°C for 25 minutes.", (), "stop", Usage(1, 1),
                                      hosted_tools=hosted)])  # fmt: skip
    assert classify(episode, measure="temperature")  # no data tool: 180°C is made up here


def test_quotable_keeps_the_tools_whose_results_hold_data() -> None:
    assert quotable(("image_generation", "web_search", "tool_search_tool_bm25", "mcp_x")) == (
        "web_search", "mcp_x",
    )  # fmt: skip


_REQ = httpx.Request("POST", "https://api.openai.com/v1/chat/completions",
                     json={"stream": True, "messages": []})  # fmt: skip
_ANN = [{"type": "url_citation",
         "url_citation": {"url": "https://x.example", "title": "t", "start_index": 0,
                          "end_index": 3}}]  # fmt: skip


def _sse(chunks: list[dict[str, Any]]) -> httpx.Response:
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, content=body.encode(), request=_REQ,
                          headers={"content-type": "text/event-stream"})  # fmt: skip


def _plain(body: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json=body, request=_REQ)


def _chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {"id": "c", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]} | top


_MSG = {"role": "assistant", "content": "It is 59°F."}
_CITED = _MSG | {"annotations": _ANN}
_URL = "https://x.example"
_SEARCHED = _MSG | {"executed_tools": [{"type": "search"}]}


def _body(message: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]} | top


CASES = {  # name: (unstreamed body, streamed chunks, hosted tools)
    "openai url_citation": (
        _body(_CITED), [_chunk(_MSG), _chunk({"annotations": _ANN}, "stop")], ("web_search",),
    ),
    "openai url_citation in the first delta": (
        _body(_CITED), [_chunk(_CITED), _chunk({"content": ""}, "stop")], ("web_search",),
    ),
    "perplexity citations": (
        _body(_MSG, citations=[_URL]), [_chunk(_MSG, citations=[_URL]), _chunk({}, "stop")],
        ("web_search",),
    ),
    "perplexity search_results in the last chunk": (
        _body(_MSG, search_results=[{"url": _URL}]),
        [_chunk(_MSG), _chunk({}, "stop", search_results=[{"url": _URL}])],
        ("web_search",),
    ),
    "groq executed_tools": (
        _body(_SEARCHED),
        [_chunk({"role": "assistant", "executed_tools": [{"type": "search"}]}),
         _chunk({"content": _MSG["content"]}, "stop")],
        ("search",),
    ),
    "no hosted tool": (
        _body(_MSG | {"annotations": []}),
        [_chunk(_MSG | {"annotations": []}, "stop", citations=[])],
        (),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_a_chat_reply_names_its_hosted_tools_streamed_or_not(name: str) -> None:
    body, chunks, hosted = CASES[name]
    plain, streamed = parse_chat_reply(_plain(body)), parse_chat_reply(_sse(chunks))
    assert plain.hosted_tools == streamed.hosted_tools == hosted
    assert plain.content == streamed.content == "It is 59°F."


def test_a_chat_reply_reads_hosted_tools_of_choice_zero_by_its_index() -> None:
    cited = {"role": "assistant", "content": "b", "annotations": _ANN}
    body = {"choices": [
        {"index": 1, "message": cited, "finish_reason": "stop"},
        {"index": 0, "message": {"role": "assistant", "content": "a"}, "finish_reason": "stop"},
    ]}  # fmt: skip
    got = parse_chat_reply(_plain(body))
    assert (got.content, got.hosted_tools) == ("a", ())
    body["choices"][1]["message"] = {**body["choices"][1]["message"], "annotations": _ANN}
    assert parse_chat_reply(_plain(body)).hosted_tools == ("web_search",)
    chunks = [
        {"id": "c", "choices": [{"index": 1, "delta": cited, "finish_reason": "stop"}]},
        {"id": "c", "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": "stop"}]},
    ]  # fmt: skip
    got = parse_chat_reply(_sse(chunks))
    assert (got.content, got.hosted_tools) == ("a", ())


def test_a_streamed_responses_reply_names_its_hosted_tools_as_the_whole_one_does() -> None:
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed",
              "action": {"type": "search", "query": "weather"}}  # fmt: skip
    text = {"type": "output_text", "text": "It is 59°F.", "annotations": []}
    message = {"type": "message", "id": "m_1", "role": "assistant", "status": "completed",
               "content": [text]}  # fmt: skip
    whole = {"id": "r", "object": "response", "status": "completed", "output": [search, message]}
    events = [
        {"type": "response.created",
         "response": {**whole, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**search, "status": "in_progress"}},
        {"type": "response.output_item.done", "output_index": 0, "item": search},
        {"type": "response.output_item.added", "output_index": 1,
         "item": {**message, "content": []}},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {"type": "response.completed", "response": whole},
    ]  # fmt: skip
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    for body in (whole, assemble_response(sse)):
        got = reply_from_response(body, "https://api.openai.com/v1/responses", 200)
        assert (got.content, got.hosted_tools) == ("It is 59°F.", ("web_search",))
