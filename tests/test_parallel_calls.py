"""Parallel tool calls of one assistant message run at the same time; their tool messages
follow in call order, and replay stays deterministic."""

from __future__ import annotations

import json
import threading
import time

import pytest

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


def _three_calls_then(answer: str) -> list[ModelReply]:
    calls = tuple(ToolCall(f"c{x}", "slow", json.dumps({"x": x})) for x in range(3))
    return [ModelReply(None, calls, "tool_calls", Usage(1, 1)), ModelReply(answer, (), "stop")]


def test_the_threads_of_parallel_calls_are_started_once_and_reused():
    """Starting threads for every message was 4 % of a replay's CPU: the process keeps them."""
    threads: list[threading.Thread] = []  # the objects, kept: an ident or a name is reused

    def where(x: int) -> dict:
        threads.append(threading.current_thread())
        time.sleep(0.05)
        return {"x": x}

    for _ in range(5):
        run_single(
            ScriptedModel(_three_calls_then("ok")), Toolset("t", (SCHEMA,), {"slow": where}), []
        )
    assert len(threads) == 15
    assert 3 <= len({id(t) for t in threads}) <= 8, threads  # never more than the pool's


def test_a_tool_call_that_runs_a_host_of_its_own_gets_threads_of_its_own():
    """The shared threads are busy with the outer calls; the inner host must not wait for
    them (it would wait forever)."""
    inner_answers: list[str] = []

    def agent(x: int) -> dict:
        ep = run_single(ScriptedModel(_three_calls_then(f"inner {x}")), slow_toolset([]), [])
        inner_answers.append(ep.answer)
        return {"x": x}

    outer = Toolset("t", (SCHEMA,), {"slow": agent})
    done: list[str] = []
    worker = threading.Thread(
        target=lambda: done.append(run_single(ScriptedModel(_three_calls_then("outer")), outer, [])
                                   .answer), daemon=True)  # fmt: skip
    worker.start()
    worker.join(10)
    assert done == ["outer"]
    assert sorted(inner_answers) == ["inner 0", "inner 1", "inner 2"]


def test_hosts_on_two_threads_at_once_both_run_their_calls_concurrently():
    logs: list[list] = [[], []]
    barrier = threading.Barrier(2)

    def host(i: int) -> None:
        barrier.wait()
        run_single(ScriptedModel(_three_calls_then("ok")), slow_toolset(logs[i]), [])

    threads = [threading.Thread(target=host, args=(i,)) for i in (0, 1)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert time.perf_counter() - started < 0.55  # each host's three calls at the same time
    for log in logs:
        first_end = log.index(next(e for e in log if e[0] == "end"))
        assert first_end >= 3, log


def test_a_forked_child_runs_parallel_calls_and_no_thread_is_copied_into_it():
    import os

    run_single(ScriptedModel(_three_calls_then("ok")), slow_toolset([]), [])  # threads started
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no tool-call thread came with it, and calls still run
        try:
            copied = [t.name for t in threading.enumerate() if t.name.startswith("tool-call")]
            log: list = []
            ep = run_single(ScriptedModel(_three_calls_then("child")), slow_toolset(log), [])
            ok = not copied and ep.answer == "child" and len(log) == 6
            os.write(write, b"ok" if ok else repr((copied, log)).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 4096) == b"ok"


def test_a_failed_call_lets_the_others_of_its_message_finish_before_the_host_goes_on():
    """As with threads of its own: no call of a message still runs when its host has moved on
    (it could meet the next episode's cassette)."""

    class Stop(BaseException):  # not a tool's failure: propagates (as a cassette miss does)
        pass

    finished: list[int] = []

    def call(x: int) -> dict:
        if x == 0:
            raise Stop
        time.sleep(0.2)
        finished.append(x)
        return {"x": x}

    model = ScriptedModel(_three_calls_then("never"))
    with pytest.raises(Stop):
        run_single(model, Toolset("t", (SCHEMA,), {"slow": call}), [])
    assert sorted(finished) == [1, 2]  # both had finished when the miss reached the caller


def test_an_interrupted_host_still_waits_for_the_calls_of_its_message(monkeypatch):
    """Ctrl-C or SIGTERM (a KeyboardInterrupt in the host's wait) while calls run: they end
    before the interrupt reaches the caller, as a pool of the message's own did."""
    from toolreplay import hosts

    running: set[int] = set()

    def call(x: int) -> dict:
        running.add(x)
        time.sleep(0.3)
        running.discard(x)
        return {"x": x}

    real_wait, interrupted = hosts.wait, []

    def interrupted_wait(futures):
        if not interrupted:
            interrupted.append(True)
            raise KeyboardInterrupt
        return real_wait(futures)

    monkeypatch.setattr(hosts, "wait", interrupted_wait)
    with pytest.raises(KeyboardInterrupt):
        run_single(
            ScriptedModel(_three_calls_then("x")), Toolset("t", (SCHEMA,), {"slow": call}), []
        )
    assert interrupted and not running


def test_a_tool_call_that_forks_neither_waits_for_the_others_nor_breaks_the_pool(capfd):
    """The fork hook leaves threads in use alone (it used to join them, its own included)."""
    import os

    forked = threading.Event()

    def call(x: int) -> dict:
        if x == 0:
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            forked.set()
            return {"x": x}
        return {"x": x, "ok": forked.wait(3)}

    started = time.perf_counter()
    ep = run_single(
        ScriptedModel(_three_calls_then("ok")), Toolset("t", (SCHEMA,), {"slow": call}), []
    )
    assert time.perf_counter() - started < 2
    assert [json.loads(r.content).get("ok", True) for r in ep.rounds[0].results] == [True] * 3
    assert "Exception ignored" not in capfd.readouterr().err


def test_forks_from_another_thread_never_break_a_running_host():
    import os

    stop = threading.Event()

    def forking() -> None:
        while not stop.is_set():
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)

    forker = threading.Thread(target=forking, daemon=True)
    forker.start()
    try:
        for _ in range(60):
            calls = tuple(ToolCall(f"c{x}", "slow", json.dumps({"x": x})) for x in range(8))
            model = ScriptedModel([ModelReply(None, calls, "tool_calls"), ModelReply("ok")])
            ep = run_single(model, Toolset("t", (SCHEMA,), {"slow": lambda x: {"x": x}}), [])
            assert ep.answer == "ok"
    finally:
        stop.set()
        forker.join(5)
