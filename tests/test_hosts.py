"""Host control flow with an in-process scripted model (no HTTP)."""

from __future__ import annotations

import json

import pytest

from toolreplay.hosts import LoopLimits, run_loop, run_single
from toolreplay.models.scripted import ScriptedModel
from toolreplay.tools.toolset import Toolset
from toolreplay.wire.episode import ModelReply, ToolCall, Usage

SCHEMA = {
    "type": "function",
    "function": {
        "name": "echo",
        "description": "echo",
        "parameters": {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
        },
    },
}
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]


def echo_toolset() -> Toolset:
    return Toolset("echo", (SCHEMA,), {"echo": lambda x: {"x": x, "unit": "°C"}})


def call(x: int, cid: str = "c") -> ToolCall:
    return ToolCall(f"{cid}{x}", "echo", json.dumps({"x": x}))


def tools_reply(*calls: ToolCall, content: str | None = None, tokens: int = 10) -> ModelReply:
    return ModelReply(content, calls, "tool_calls", Usage(tokens, 1))


def text(content: str | None, tokens: int = 10) -> ModelReply:
    return ModelReply(content, (), "stop", Usage(tokens, 1))


def test_single_executes_parallel_calls_and_asks_again_with_tools():
    model = ScriptedModel([tools_reply(call(1), call(2)), text("21°C")])
    ep = run_single(model, echo_toolset(), MESSAGES)
    assert [tools is not None for _, tools in model.requests] == [True, True]
    assert ep.tool_chain == ["echo", "echo"]
    assert ep.answer == "21°C" and ep.stop_reason == "converged" and len(ep.rounds) == 2
    # request 2 holds the assistant message and both tool messages
    roles = [m["role"] for m in model.requests[1][0]]
    assert roles == ["system", "user", "assistant", "tool", "tool"]


def test_single_returns_empty_string_when_second_reply_still_calls_tools():
    model = ScriptedModel([tools_reply(call(1)), tools_reply(call(2))])
    ep = run_single(model, echo_toolset(), MESSAGES)
    assert ep.answer == ""
    assert ep.stop_reason == "max_rounds"
    assert [c.name for c in ep.pending_tool_calls] == ["echo"]
    assert len(ep.tool_calls) == 1  # the second call was never executed


def test_single_keeps_narration_alongside_unexecuted_calls():
    model = ScriptedModel([tools_reply(call(1)), tools_reply(call(2), content="我将重新查询。")])
    ep = run_single(model, echo_toolset(), MESSAGES)
    assert ep.answer == "我将重新查询。"
    assert ep.transcript[-1]["tool_calls"][0]["function"]["name"] == "echo"


def test_single_without_tool_calls_is_one_round():
    model = ScriptedModel([text("你好")])
    ep = run_single(model, echo_toolset(), MESSAGES)
    assert (len(ep.rounds), ep.answer, ep.stop_reason) == (1, "你好", "converged")


def test_loop_chains_until_the_model_stops_calling_tools():
    model = ScriptedModel([tools_reply(call(1)), tools_reply(call(2)), text("done 3°C")])
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=6))
    assert ep.stop_reason == "converged"
    assert len(ep.rounds) == 3 and ep.tool_chain == ["echo", "echo"]
    assert all(tools is not None for _, tools in model.requests)


def test_loop_sends_the_last_round_without_tools():
    model = ScriptedModel([tools_reply(call(1)), tools_reply(call(2)), text("final")])
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=3))
    assert [tools is not None for _, tools in model.requests] == [True, True, False]
    assert ep.stop_reason == "max_rounds" and ep.answer == "final"
    assert ep.rounds[-1].tools_offered is False


def test_loop_detects_repeated_signatures_and_forces_an_answer():
    # same call with the same arguments (keys reordered) in two consecutive rounds
    a = ToolCall("a", "echo", '{"x": 1}')
    b = ToolCall("b", "echo", '{ "x":1 }')
    model = ScriptedModel([tools_reply(a), tools_reply(b), text("forced")])
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=10))
    assert ep.stop_reason == "repeated"
    assert [tools is not None for _, tools in model.requests] == [True, True, False]
    assert ep.answer == "forced"


def test_loop_stops_on_token_budget():
    model = ScriptedModel([tools_reply(call(1), tokens=600), tools_reply(call(2)), text("x")])
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=10, token_budget=500))
    assert ep.stop_reason == "budget"
    assert [tools is not None for _, tools in model.requests] == [True, False]
    assert ep.usage.total_tokens == 601 + 11


def test_loop_token_budget_is_reached_at_exactly_the_budget():
    """Usage equal to the budget withdraws the tools (``>=``); one token below does not."""
    at = ScriptedModel([tools_reply(call(1), tokens=499), tools_reply(call(2)), text("x")])
    ep = run_loop(at, echo_toolset(), MESSAGES, LoopLimits(max_rounds=10, token_budget=500))
    assert ep.rounds[0].reply.usage.total_tokens == 500
    assert ep.stop_reason == "budget"
    assert [tools is not None for _, tools in at.requests] == [True, False]
    below = ScriptedModel([tools_reply(call(1), tokens=498), text("x")])
    ep = run_loop(below, echo_toolset(), MESSAGES, LoopLimits(max_rounds=10, token_budget=500))
    assert ep.stop_reason == "converged"
    assert [tools is not None for _, tools in below.requests] == [True, True]


def test_loop_forced_final_round_that_still_calls_tools_gives_empty_answer():
    model = ScriptedModel([tools_reply(call(1)), tools_reply(call(1))])
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=2))
    assert ep.answer == "" and ep.stop_reason == "max_rounds"
    assert len(ep.pending_tool_calls) == 1


def test_tool_errors_go_back_to_the_model_as_tool_messages():
    bad = ToolCall("bad", "echo", '{"x": "not an int"}')
    broken = ToolCall("broken", "echo", "{not json")
    unknown = ToolCall("u", "nope", "{}")
    model = ScriptedModel([tools_reply(bad, broken, unknown), text("ok")])
    ep = run_loop(model, echo_toolset(), MESSAGES)
    results = ep.rounds[0].results
    assert all(r.error for r in results)
    assert "invalid arguments" in results[0].content
    assert "not valid JSON" in results[1].content
    assert "unknown tool" in results[2].content
    assert ep.stop_reason == "converged"


def test_model_api_error_ends_episode_with_stop_reason_error():
    import httpx
    from openai import APIStatusError

    def boom(messages, tools):
        request = httpx.Request("POST", "http://x/v1/chat/completions")
        raise APIStatusError("overloaded", response=httpx.Response(503, request=request), body=None)

    ep = run_loop(ScriptedModel([boom]), echo_toolset(), MESSAGES)
    assert ep.stop_reason == "error" and ep.answer == "" and "overloaded" in (ep.error or "")


def test_scripted_model_refuses_unscripted_requests():
    with pytest.raises(AssertionError):
        run_loop(ScriptedModel([tools_reply(call(1))]), echo_toolset(), MESSAGES)


def test_loop_repeat_check_compares_consecutive_rounds_only():
    a, b = call(1, "a"), call(2, "b")
    b2 = call(2, "again")
    model = ScriptedModel([tools_reply(a), tools_reply(b), tools_reply(b2), text("forced")])
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=10))
    assert ep.stop_reason == "repeated" and len(ep.rounds) == 4
    assert [tools is not None for _, tools in model.requests] == [True, True, True, False]


def test_loop_repeat_check_ignores_the_order_of_parallel_calls():
    model = ScriptedModel(
        [
            tools_reply(call(1, "a"), call(2, "b")),
            tools_reply(call(2, "c"), call(1, "d")),
            text("x"),
        ]
    )
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=10))
    assert ep.stop_reason == "repeated"


def test_loop_different_calls_are_not_a_repeat():
    model = ScriptedModel(
        [tools_reply(call(1)), tools_reply(call(2)), tools_reply(call(3)), text("x")]
    )
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=10))
    assert ep.stop_reason == "converged"


def test_a_window_of_one_compares_the_previous_round_only():
    model = ScriptedModel(
        [tools_reply(call(1)), tools_reply(call(2)), tools_reply(call(1)), text("x")]
    )
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=10, repeat_window=1))
    assert ep.stop_reason == "converged"


def test_the_default_window_catches_an_a_b_a_b_alternation():
    a, b = call(1, "a"), call(2, "b")
    a2, b2 = call(1, "a2"), call(2, "b2")
    model = ScriptedModel(
        [tools_reply(a), tools_reply(b), tools_reply(a2), text("forced"), tools_reply(b2)]
    )
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=10))
    assert ep.stop_reason == "repeated" and len(ep.rounds) == 4  # caught at the second A
    assert [tools is not None for _, tools in model.requests] == [True, True, True, False]


def test_a_wider_window_catches_longer_cycles():
    script = [tools_reply(call(x, f"r{i}")) for i, x in enumerate([1, 2, 3, 1])] + [text("f")]
    ep = run_loop(ScriptedModel(list(script)), echo_toolset(), MESSAGES,
                  LoopLimits(max_rounds=10, repeat_window=2))  # fmt: skip
    assert ep.stop_reason == "converged"  # A/B/C/A: A is 3 rounds back
    ep = run_loop(ScriptedModel(list(script)), echo_toolset(), MESSAGES,
                  LoopLimits(max_rounds=10, repeat_window=3))  # fmt: skip
    assert ep.stop_reason == "repeated" and len(ep.rounds) == 5


def test_missing_and_reused_ids_are_made_up_by_the_host_deterministically():
    model = ScriptedModel(
        [
            tools_reply(ToolCall("", "echo", '{"x": 1}'), ToolCall("", "echo", '{"x": 2}')),
            tools_reply(ToolCall("dup", "echo", '{"x": 3}'), ToolCall("dup", "echo", '{"x": 4}')),
            tools_reply(ToolCall("dup", "echo", '{"x": 5}')),
            text("done"),
        ]
    )
    ep = run_loop(model, echo_toolset(), MESSAGES, LoopLimits(max_rounds=10))
    ids = [c.id for c in ep.tool_calls]
    assert ids == ["call_r1_0", "call_r1_1", "dup", "call_r2_1", "call_r3_0"]
    last_request = model.requests[-1][0]
    assert [m["tool_call_id"] for m in last_request if m["role"] == "tool"] == ids


def test_a_tool_that_raises_still_answers_its_call():
    def boom(x: int) -> dict:
        raise RuntimeError("disk full")

    toolset = Toolset("t", (SCHEMA,), {"echo": boom})
    model = ScriptedModel([tools_reply(call(1)), text("sorry")])
    ep = run_loop(model, toolset, MESSAGES)
    tool = model.requests[1][0][-1]
    assert tool["role"] == "tool" and "RuntimeError: disk full" in tool["content"]
    assert ep.stop_reason == "converged"
