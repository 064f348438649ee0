"""Hosts: the programs that run the model ⇄ tool exchange for one question.

- :func:`run_single` is faithful to the reference's one-round host (the ``if``): request 1 with
  tools; if the reply has tool calls, execute all of them (parallel calls allowed), append the
  results, send request 2 *still with tools*; the answer is ``content or ""``.
- :func:`run_loop` is the ``while``: request → execute → append until the model stops calling
  tools, with a round cap (the last round is sent *without* tools), a repeated-signature check
  and a token budget (both force one final round without tools), and a stop reason.

Both return an :class:`~toolreplay.episode.Episode`. Model API errors (``openai.APIError``:
HTTP status errors, connection failures, malformed responses) end the episode with stop
reason ``error``; anything else (e.g. a cassette miss, which the model client unwraps)
propagates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .episode import Episode, Message, ModelReply, Round, ToolResult, Usage
from .model import ChatModel
from .toolsets import Toolset

HOST_NAMES = ("single", "loop")


@dataclass(frozen=True)
class LoopLimits:
    """``max_rounds``: model requests at most (the last without tools);
    ``token_budget``: total tokens (prompt + completion) after which tools are withdrawn."""

    max_rounds: int = 6
    token_budget: int = 20000


class _Run:
    """Shared bookkeeping for one episode."""

    def __init__(self, model: ChatModel, toolset: Toolset, messages: Sequence[Message]) -> None:
        self.model = model
        self.toolset = toolset
        self.messages: list[Message] = [dict(m) for m in messages]
        self.rounds: list[Round] = []
        self.usage = Usage()
        self.started = time.perf_counter()

    def ask(self, offer_tools: bool) -> ModelReply:
        reply = self.model.complete(self.messages, self.toolset.schemas if offer_tools else None)
        self.usage = self.usage + reply.usage
        return reply

    def execute(self, reply: ModelReply) -> tuple[ToolResult, ...]:
        self.messages.append(reply.to_message())
        results = tuple(self.toolset.execute(call) for call in reply.tool_calls)
        self.messages.extend(r.to_message() for r in results)
        return results

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

    return (APIError,)


def _guard(body: Callable[[_Run], Episode], run: _Run) -> Episode:
    try:
        return body(run)
    except _api_errors() as exc:
        return run.finish("error", "", None, error=f"{type(exc).__name__}: {exc}")


def run_single(model: ChatModel, toolset: Toolset, messages: Sequence[Message]) -> Episode:
    """The reference one-round host (see module docstring). Stop reason: ``converged`` when
    the last reply has no tool calls, ``max_rounds`` when request 2 still asks for tools."""

    def body(run: _Run) -> Episode:
        reply = run.ask(offer_tools=True)
        if reply.tool_calls:
            results = run.execute(reply)
            run.rounds.append(Round(1, True, reply, results))
            reply = run.ask(offer_tools=True)
            run.rounds.append(Round(2, True, reply))
        else:
            run.rounds.append(Round(1, True, reply))
        stop = "max_rounds" if reply.tool_calls else "converged"
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
    them), ``repeated`` (the same call signatures in two consecutive rounds; one final round
    without tools follows), ``budget`` (usage reached ``token_budget``; one final round
    without tools follows), ``max_rounds`` (round ``max_rounds`` was reached, sent without
    tools), ``error`` (the model API failed).
    """
    lim = limits or LoopLimits()

    def body(run: _Run) -> Episode:
        forced: str | None = None
        last_signatures: list[str] | None = None
        for index in range(1, lim.max_rounds + 1):
            offer = forced is None and index < lim.max_rounds
            reply = run.ask(offer_tools=offer)
            if not reply.tool_calls or not offer:
                # Tool calls in a reply to a request without tools cannot be honoured.
                run.rounds.append(Round(index, offer, reply))
                stop = "converged" if offer else (forced or "max_rounds")
                return run.finish(stop, reply.content or "", reply)
            results = run.execute(reply)
            run.rounds.append(Round(index, offer, reply, results))
            signatures = sorted(c.signature() for c in reply.tool_calls)
            if signatures == last_signatures:
                forced = "repeated"
            elif run.usage.total_tokens >= lim.token_budget:
                forced = "budget"
            last_signatures = signatures
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
