"""Hosts: the programs that run the model ⇄ tool exchange for one question.

- :func:`run_single` is faithful to the reference's one-round host (the ``if``): request 1 with
  tools; if the reply has tool calls, execute all of them (parallel calls allowed), append the
  results, send request 2 *still with tools*; the answer is ``content or ""``.
- :func:`run_loop` is the ``while``: request → execute → append until the model stops calling
  tools, with a round cap (the last round is sent *without* tools), a repeated-signature check
  and a token budget (both force one final round without tools), and a stop reason.

Both return an :class:`~toolreplay.wire.episode.Episode`. Protocol rules hold by construction:

- every tool call the host executes gets exactly one tool message, appended directly after its
  assistant message and before the next request; a tool that raises still answers (its
  error text is the tool message); the calls of one message run concurrently and their
  tool messages follow in call order;
- a tool call without an id (or with an id already used in the episode) is given one the host
  makes up from the round and the call's position (``call_r{round}_{i}``), so no
  ``tool_call_id`` is ever null and replay sends the same ids;
- a reply cut off by the server (``finish_reason`` ``length`` or ``content_filter``) ends the
  episode with stop reason ``truncated`` or ``filtered``, its calls unexecuted; a last reply
  that named no finish reason (``finish_reason`` null or missing) ends it ``unknown`` where it
  would end ``converged``: whether the model finished or was cut off cannot be told.

Model API errors (:class:`~toolreplay.wire.replies.ModelReplyError`: an error status or a reply that
is no usable chat completion; ``openai.APIError``: connection failures) end the episode with
stop reason ``error``; anything else (e.g. a cassette miss, which the model client unwraps)
propagates.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, replace

from toolreplay.cassettes import callorder
from toolreplay.models.base import ChatModel
from toolreplay.tools.toolset import Toolset, is_cassette_miss
from toolreplay.wire.episode import (
    FINISH_STOP_REASONS,
    Episode,
    Message,
    ModelReply,
    Round,
    ToolCall,
    ToolResult,
    Usage,
    ended_stop_reason,
)
from toolreplay.wire.replies import ModelReplyError

HOST_NAMES = ("single", "loop")
#: Parallel tool calls of one assistant message run in a thread pool of at most this many
#: threads. The tools share one Open-Meteo ``requests.Session``: they only send GETs with
#: per-call parameters, and its urllib3 connection pool (10 connections per host by
#: default, more than this) is thread-safe.
MAX_PARALLEL_CALLS = 8


class _CallPool:
    """The process's threads for parallel tool calls, started once rather than for every
    message (starting them was 4 % of a replay's CPU): one host at a time uses them; a host
    that finds them busy (another thread's host, or a tool call that runs a host of its own)
    uses threads of its own as before. Every call of a message ends before its host goes on,
    interrupted or not. Stopped before a fork when idle, so no thread of it is copied into a
    child; a child forgets it and makes its own on next use."""

    _lock: threading.Lock
    _in_use: threading.Lock
    _pool: ThreadPoolExecutor | None

    def __init__(self) -> None:
        self.after_fork_in_child()

    def map(self, fn: Callable[[_Job], ToolResult], jobs: Sequence[_Job]) -> tuple[ToolResult, ...]:
        """``fn`` over ``jobs`` on at most :data:`MAX_PARALLEL_CALLS` threads, in order."""
        if not self._in_use.acquire(blocking=False):
            width = min(len(jobs), MAX_PARALLEL_CALLS)
            with ThreadPoolExecutor(width, thread_name_prefix="tool-call") as own:
                return tuple(own.map(fn, jobs))
        try:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(MAX_PARALLEL_CALLS, "tool-call")
                pool = self._pool
            futures = [pool.submit(fn, job) for job in jobs]
            try:
                wait(futures)
            except BaseException:  # Ctrl-C, SIGTERM: the calls still end first, as before
                wait(futures)
                raise
            return tuple(f.result() for f in futures)
        finally:
            self._in_use.release()

    def before_fork(self) -> None:
        """Stop the threads if no host is using them (they are idle: they stop at once); else
        (a tool call that forks, a fork from another thread meanwhile) leave them be."""
        if not self._in_use.acquire(blocking=False):
            return
        try:
            with self._lock:
                pool, self._pool = self._pool, None
            if pool is not None:
                pool.shutdown(wait=True)
        finally:
            self._in_use.release()

    def after_fork_in_child(self) -> None:
        """No pool, new locks (a thread that held them was not copied into the child)."""
        self._lock = threading.Lock()
        self._in_use = threading.Lock()
        self._pool = None


_Job = tuple[int, int, "ToolCall"]
_CALL_POOL = _CallPool()
os.register_at_fork(before=_CALL_POOL.before_fork, after_in_child=_CALL_POOL.after_fork_in_child)


@dataclass(frozen=True)
class LoopLimits:
    """``max_rounds``: model requests at most (the last without tools);
    ``token_budget``: total tokens (prompt + completion) after which tools are withdrawn;
    ``repeat_window``: how many preceding rounds a round's call signatures are compared with
    (1: only the previous round; 2 also catches an A/B/A/B alternation at its second A)."""

    max_rounds: int = 6
    token_budget: int = 20000
    repeat_window: int = 2


class _Run:
    """Shared bookkeeping for one episode."""

    def __init__(self, model: ChatModel, toolset: Toolset, messages: Sequence[Message]) -> None:
        self.model = model
        self.toolset = toolset
        self.messages: list[Message] = [dict(m) for m in messages]
        self.rounds: list[Round] = []
        self.usage = Usage()
        self.started = time.perf_counter()
        self.used_ids: set[str] = set()

    def ask(self, offer_tools: bool, index: int) -> ModelReply:
        reply = self.model.complete(self.messages, self.toolset.schemas if offer_tools else None)
        self.usage = self.usage + reply.usage
        return self._with_ids(reply, index)

    def _with_ids(self, reply: ModelReply, index: int) -> ModelReply:
        """``reply`` with every tool call holding an id unique in the episode: a missing or
        reused id is replaced by ``call_r{index}_{i}`` (deterministic, so replay matches)."""
        calls = []
        changed = False
        for i, call in enumerate(reply.tool_calls):
            cid = call.id if isinstance(call.id, str) else ""
            if not cid or cid in self.used_ids:
                cid = f"call_r{index}_{i}"
                n = 0
                while cid in self.used_ids:
                    n += 1
                    cid = f"call_r{index}_{i}_{n}"
                call = replace(call, id=cid)
                changed = True
            self.used_ids.add(cid)
            calls.append(call)
        return replace(reply, tool_calls=tuple(calls)) if changed else reply

    def execute(self, reply: ModelReply) -> tuple[ToolResult, ...]:
        """Append the assistant message, run its tool calls (at the same time when there are
        several, see :data:`MAX_PARALLEL_CALLS`) and append one tool message per call, in
        call order whatever order they finish in."""
        self.messages.append(reply.to_message())
        batch = callorder.new_batch()
        jobs = [(batch, i, call) for i, call in enumerate(reply.tool_calls)]
        if len(jobs) > 1:
            results = _CALL_POOL.map(self._execute_tagged, jobs)
        else:
            results = tuple(self._execute_tagged(job) for job in jobs)
        self.messages.extend(r.to_message() for r in results)
        return results

    def _execute_tagged(self, job: tuple[int, int, ToolCall]) -> ToolResult:
        batch, index, call = job
        with callorder.executing(batch, index):
            return self._execute_one(call)

    def _execute_one(self, call: ToolCall) -> ToolResult:
        try:
            return self.toolset.execute(call)
        except Exception as exc:  # a toolset must answer every call, whatever it raised
            if is_cassette_miss(exc):
                raise  # replay met a request it never recorded: not the tool's fault
            text = f"tool {call.name!r} failed: {type(exc).__name__}: {exc}"
            return ToolResult(call, json.dumps({"error": text}, ensure_ascii=False), error=text)

    def finish(
        self, stop_reason: str, answer: str, final: ModelReply | None, error: str | None = None
    ) -> Episode:
        transcript = list(self.messages)
        if final is not None:
            transcript.append(final.to_message())
        user = next((m.get("content") for m in transcript if m.get("role") == "user"), "")
        return Episode(
            configuration="",
            question_id="",
            question=str(user or ""),
            transcript=tuple(transcript),
            rounds=tuple(self.rounds),
            stop_reason=stop_reason,
            answer=answer,
            usage=self.usage,
            wall_time_s=round(time.perf_counter() - self.started, 3),
            error=error,
        )


def _api_errors() -> tuple[type[Exception], ...]:
    from openai import APIError

    return (APIError, ModelReplyError)


def _guard(body: Callable[[_Run], Episode], run: _Run) -> Episode:
    try:
        return body(run)
    except _api_errors() as exc:
        text = str(exc) if isinstance(exc, ModelReplyError) else f"{type(exc).__name__}: {exc}"
        return run.finish("error", "", None, error=text)


def _cut_off(run: _Run, index: int, offered: bool, reply: ModelReply) -> Episode | None:
    """End the episode when the server cut the reply off (``finish_reason`` ``length`` or
    ``content_filter``); None otherwise."""
    stop = FINISH_STOP_REASONS.get(reply.finish_reason)
    if stop is None:
        return None
    run.rounds.append(Round(index, offered, reply))
    return run.finish(stop, reply.content or "", reply)


def run_single(model: ChatModel, toolset: Toolset, messages: Sequence[Message]) -> Episode:
    """The reference one-round host (see module docstring). Stop reason: ``converged`` when
    the last reply has no tool calls, ``max_rounds`` when request 2 still asks for tools,
    ``truncated``/``filtered``/``error`` as the module docstring says."""

    def body(run: _Run) -> Episode:
        reply = run.ask(offer_tools=True, index=1)
        if (ended := _cut_off(run, 1, True, reply)) is not None:
            return ended
        if reply.tool_calls:
            results = run.execute(reply)
            run.rounds.append(Round(1, True, reply, results))
            reply = run.ask(offer_tools=True, index=2)
            if (ended := _cut_off(run, 2, True, reply)) is not None:
                return ended
            run.rounds.append(Round(2, True, reply))
        else:
            run.rounds.append(Round(1, True, reply))
        stop = "max_rounds" if reply.tool_calls else ended_stop_reason(reply)
        return run.finish(stop, reply.content or "", reply)

    return _guard(body, _Run(model, toolset, messages))


def run_loop(
    model: ChatModel,
    toolset: Toolset,
    messages: Sequence[Message],
    limits: LoopLimits | None = None,
) -> Episode:
    """The loop host (see module docstring).

    Stop reasons: ``converged`` (the model stopped calling tools while it could still call
    them), ``repeated`` (a round's call signatures equal those of one of the
    ``repeat_window`` rounds before it; one final round without tools follows), ``budget``
    (usage reached ``token_budget``; one final round without tools follows), ``max_rounds``
    (round ``max_rounds`` was reached, sent without tools), ``truncated``/``filtered`` (the
    server cut a reply off), ``error`` (the model API failed).
    """
    lim = limits or LoopLimits()

    def body(run: _Run) -> Episode:
        forced: str | None = None
        recent: list[list[str]] = []
        for index in range(1, lim.max_rounds + 1):
            offer = forced is None and index < lim.max_rounds
            reply = run.ask(offer_tools=offer, index=index)
            if (ended := _cut_off(run, index, offer, reply)) is not None:
                return ended
            if not reply.tool_calls or not offer:
                # Tool calls in a reply to a request without tools cannot be honoured.
                run.rounds.append(Round(index, offer, reply))
                stop = ended_stop_reason(reply) if offer else (forced or "max_rounds")
                return run.finish(stop, reply.content or "", reply)
            results = run.execute(reply)
            run.rounds.append(Round(index, offer, reply, results))
            signatures = sorted(c.signature() for c in reply.tool_calls)
            if signatures in recent[-max(lim.repeat_window, 1) :]:
                forced = "repeated"
            elif run.usage.total_tokens >= lim.token_budget:
                forced = "budget"
            recent.append(signatures)
        raise AssertionError("unreachable: the last round is sent without tools")

    return _guard(body, _Run(model, toolset, messages))


def run_host(
    host: str,
    model: ChatModel,
    toolset: Toolset,
    messages: Sequence[Message],
    limits: LoopLimits | None = None,
) -> Episode:
    """Dispatch on ``host`` (``single`` or ``loop``); :class:`ValueError` for other names."""
    if host == "single":
        return run_single(model, toolset, messages)
    if host == "loop":
        return run_loop(model, toolset, messages, limits)
    raise ValueError(f"unknown host {host!r}; known: {', '.join(HOST_NAMES)}")
