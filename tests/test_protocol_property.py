"""Protocol rules the hosts hold by construction, checked on every request body they send over
random reply sequences (hypothesis; in-process model and tools, no HTTP)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolreplay.hosts import LoopLimits, run_loop, run_single
from toolreplay.models.scripted import ScriptedModel
from toolreplay.tools.toolset import Toolset
from toolreplay.wire.episode import ModelReply, ToolCall, Usage
from toolreplay.wire.replies import ModelReplyError


def _schema(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"],
        "additionalProperties": False}}}  # fmt: skip


def _boom(x: int) -> dict[str, Any]:
    raise RuntimeError(f"tool fault {x}")


TOOLSET = Toolset(
    "t", (_schema("echo"), _schema("boom")), {"echo": lambda x: {"x": x}, "boom": _boom}
)

IDS = ("", "a", "b", "call_r1_0", "call_r2_0", "dup")
NAMES = ("echo", "boom", "nope", "")
ARGUMENTS = ('{"x": 1}', '{"x": 2}', "", "{", "[1]", "3", '{"x": "one"}', '{"y": 1}', "null")
#: Every tool call the model may send: ids missing, reused or clashing with the host's own,
#: unknown names, arguments that are not JSON or break the schema, and a tool that raises.
CALLS = tuple(ToolCall(i, n, a) for i in IDS for n in NAMES for a in ARGUMENTS)
FINISH = ("stop", "tool_calls", "stop", "tool_calls", "length", "content_filter")
TEXTS = (None, "", "21°C")
USAGE = tuple(Usage(p, 5) for p in (0, 10, 900, 5000))


def _error(messages: Sequence[Any], tools: Any) -> ModelReply:
    raise ModelReplyError("http://model.test/v1/chat/completions", 200, "'choices' is empty")


class Choices:
    """Reads an episode's choices from a byte string hypothesis generates (and shrinks toward
    zero bytes, i.e. toward the plainest reply): ``pick(n)`` is the next byte modulo ``n``,
    0 once the bytes run out."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def pick(self, n: int) -> int:
        value = self.data[self.at] if self.at < len(self.data) else 0
        self.at += 1
        return value % n

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.pick(len(items))]


def draw_reply(c: Choices) -> Any:
    """One model reply: text (the plainest), tool calls (1-4, often parallel), empty, a
    refusal, or an API error (a callable that raises)."""
    kind = c.pick(20)
    if kind < 6:
        return ModelReply(c.choice(TEXTS[::-1]), (), c.choice(FINISH), c.choice(USAGE))
    if kind < 17:
        calls = tuple(c.choice(CALLS) for _ in range(1 + c.pick(4)))
        return ModelReply(c.choice(TEXTS), calls, c.choice(FINISH[::-1]), c.choice(USAGE))
    if kind < 19:
        return ModelReply(None, (), "stop", c.choice(USAGE), refusal="no")
    return _error


def lazy_script(c: Choices, n: int = 8) -> list[Any]:
    """``n`` scripted steps, each drawing its reply when the host asks for it."""

    def step(messages: Sequence[Any], tools: Any) -> ModelReply:
        drawn = draw_reply(c)
        return drawn(messages, tools) if callable(drawn) else drawn

    return [step] * n


def check_request(messages: list[Mapping[str, Any]], tools: Any) -> None:
    """Every assistant tool call is answered by exactly one tool message, directly after the
    assistant message, in call order; no id is missing or used twice; no stray tool message."""
    seen_ids: set[str] = set()
    i = 0
    while i < len(messages):
        m = messages[i]
        if m["role"] == "tool":
            raise AssertionError(f"tool message {i} answers no assistant message directly")
        if m["role"] == "assistant" and m.get("tool_calls"):
            call_ids = [c["id"] for c in m["tool_calls"]]
            assert all(isinstance(c, str) and c for c in call_ids), call_ids
            assert len(set(call_ids)) == len(call_ids), call_ids
            assert not seen_ids & set(call_ids), (seen_ids, call_ids)
            seen_ids |= set(call_ids)
            answers = messages[i + 1 : i + 1 + len(call_ids)]
            assert [a["role"] for a in answers] == ["tool"] * len(call_ids), answers
            assert [a["tool_call_id"] for a in answers] == call_ids
            assert all(isinstance(a["content"], str) and a["content"] for a in answers)
            i += 1 + len(call_ids)
            continue
        i += 1


def check_episode(model: ScriptedModel, episode: Any, host: str) -> None:
    requests = model.requests
    assert requests, "no request sent"
    for k, (messages, tools) in enumerate(requests):
        check_request(messages, tools)
        if k:
            previous = requests[k - 1][0]
            assert messages[: len(previous)] == previous  # the conversation only grows
    # The transcript holds every request's messages plus at most one final reply.
    transcript = list(episode.transcript)
    check_request(transcript[:-1] if transcript[-1]["role"] == "assistant" else transcript, None)
    if host == "single":
        assert len(requests) <= 2 and all(tools is not None for _, tools in requests)
    if episode.stop_reason in ("repeated", "budget", "max_rounds") and host == "loop":
        assert requests[-1][1] is None, "the forced final request still offered tools"
    if episode.stop_reason in ("repeated", "budget"):
        assert requests[-2][1] is not None
    # Every executed call got exactly one result, in call order.
    for rnd in episode.rounds:
        if rnd.results:
            assert [r.call.id for r in rnd.results] == [c.id for c in rnd.reply.tool_calls]


PROPERTY = settings(
    max_examples=500, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


EPISODE = st.binary(min_size=80, max_size=80)


@pytest.mark.slow
@PROPERTY
@given(data=EPISODE)
def test_loop_host_keeps_the_protocol(data):
    c = Choices(data)
    max_rounds, window = 2 + c.pick(5), 1 + c.pick(3)
    budget = c.choice([20000, 1000, 1])
    model = ScriptedModel(lazy_script(c))
    limits = LoopLimits(max_rounds=max_rounds, token_budget=budget, repeat_window=window)
    episode = run_loop(model, TOOLSET, [{"role": "user", "content": "q"}], limits)
    check_episode(model, episode, "loop")


@pytest.mark.slow
@PROPERTY
@given(data=EPISODE)
def test_single_host_keeps_the_protocol(data):
    model = ScriptedModel(lazy_script(Choices(data)))
    episode = run_single(model, TOOLSET, [{"role": "user", "content": "q"}])
    check_episode(model, episode, "single")
