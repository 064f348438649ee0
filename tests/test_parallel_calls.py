"""Parallel tool calls of one assistant message run at the same time; their tool messages
follow in call order, and replay stays deterministic."""

from __future__ import annotations

import json
import threading
import time

from toolreplay.cassettes.manifest import read_manifest
from toolreplay.hosts import run_loop, run_single
from toolreplay.models.scripted import ScriptedModel
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.episode import replay_episode
from toolreplay.tools.toolset import Toolset
from toolreplay.wire.episode import ModelReply, ToolCall, Usage

from .conftest import REFERENCE

SCHEMA = {"type": "function", "function": {"name": "slow", "parameters": {
    "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}  # fmt: skip


def slow_toolset(log: list) -> Toolset:
    def slow(x: int) -> dict:
        log.append(("start", x, threading.current_thread().name))
        time.sleep(0.3 - 0.1 * x)  # the first call finishes last
        log.append(("end", x))
        return {"x": x}

    return Toolset("t", (SCHEMA,), {"slow": slow})


def test_calls_of_one_message_run_concurrently_and_answer_in_call_order():
    log: list = []
    calls = tuple(ToolCall(f"c{x}", "slow", json.dumps({"x": x})) for x in range(3))
    model = ScriptedModel(
        [ModelReply(None, calls, "tool_calls", Usage(1, 1)), ModelReply("ok", (), "stop")]
    )
    started = time.perf_counter()
    ep = run_single(model, slow_toolset(log), [{"role": "user", "content": "q"}])
    elapsed = time.perf_counter() - started
    starts = [e for e in log if e[0] == "start"]
    first_end = log.index(next(e for e in log if e[0] == "end"))
    assert first_end >= 3, log  # all three started before any finished
    assert len({name for *_, name in starts}) == 3  # on three threads
    assert elapsed < 0.55  # sequential would be 0.6 s
    tool_messages = [m for m in model.requests[1][0] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["c0", "c1", "c2"]
    assert [json.loads(m["content"])["x"] for m in tool_messages] == [0, 1, 2]
    assert [r.call.id for r in ep.rounds[0].results] == ["c0", "c1", "c2"]


def test_a_single_call_runs_on_the_hosts_thread():
    log: list = []
    model = ScriptedModel(
        [ModelReply(None, (ToolCall("c", "slow", '{"x": 2}'),), "tool_calls"), ModelReply("ok")]
    )
    run_loop(model, slow_toolset(log), [{"role": "user", "content": "q"}])
    assert log[0][2] == threading.current_thread().name


def test_replaying_parallel_calls_is_deterministic(suite):
    """loop+atomic/hottest holds rounds of three parallel geocode and weather calls whose
    Open-Meteo requests reach the cassette in whatever order the threads run."""
    manifest = read_manifest(REFERENCE)
    question = suite.question("hottest")
    config = Configuration("loop", "atomic")
    runs = [
        replay_episode(REFERENCE, manifest, suite, config, question).transcript for _ in range(4)
    ]
    assert all(r == runs[0] for r in runs)
    assert sum(len(m.get("tool_calls") or []) for m in runs[0]) == 6


def test_a_recording_stores_each_tool_round_in_call_order():
    from toolreplay.cassettes.vcr import _in_call_order

    data = ["model1", "b-search", "a-search", "b-forecast", "a-forecast", "model2", "c", "model3"]
    tags = {1: (7, 1), 2: (7, 0), 3: (7, 1), 4: (7, 0), 6: (8, 0)}
    assert _in_call_order(data, tags) == [
        "model1", "a-search", "a-forecast", "b-search", "b-forecast", "model2", "c", "model3"
    ]  # fmt: skip
