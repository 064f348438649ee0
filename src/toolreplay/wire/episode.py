"""Episode data: what one question under one configuration produced.

All frozen dataclasses; :mod:`toolreplay.results.build` turns them into the records of
``reports/results.json`` (``Usage.to_dict`` is the usage a snapshot pins).
Messages are kept as the OpenAI chat format dicts the model saw
(``{"role": ..., "content": ..., "tool_calls": [...]}``, ``{"role": "tool", ...}``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]


STOP_REASONS = (
    "converged", "repeated", "max_rounds", "budget", "truncated", "filtered", "error",
    "unknown",
)  # fmt: skip


#: ``finish_reason`` values that end an episode, and the stop reason each gives.
FINISH_STOP_REASONS = {"length": "truncated", "content_filter": "filtered"}

#: The :attr:`ModelReply.finish_reason` of a reply that named none: a Chat Completions choice
#: without ``finish_reason`` (or null: some OpenAI-compatible servers, a stream ending in
#: ``[DONE]`` before any), an Anthropic ``Message`` with ``stop_reason`` null, a Gemini
#: candidate without ``finishReason``, a Bedrock reply without ``stopReason``, a Responses
#: API response without ``status``. Such a reply may have been finished or cut off: it is
#: never read as ``stop``.
NO_FINISH_REASON = "unknown"


def ended_stop_reason(reply: ModelReply) -> str:
    """The stop reason of an episode that ends on ``reply`` because the model called no tool
    while it could: ``converged``, or ``unknown`` when the reply named no finish reason
    (:data:`NO_FINISH_REASON`: whether the model finished or was cut off cannot be told)."""
    return "unknown" if reply.finish_reason == NO_FINISH_REASON else "converged"

#: Assistant-message fields in which OpenAI-compatible providers send the model's reasoning:
#: ``reasoning_content`` (DeepSeek, and servers that copy it), ``reasoning`` (Groq, Ollama,
#: Crusoe, OpenRouter) and ``reasoning_details`` (OpenRouter: a list of ``reasoning.text``,
#: ``reasoning.summary`` and ``reasoning.encrypted`` items). Kept as sent and sent back in the
#: same field: DeepSeek's thinking mode refuses a tool-call turn whose assistant message lacks
#: its ``reasoning_content``, and OpenRouter continues a model's reasoning from
#: ``reasoning_details``.
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")


def reasoning_text(message: Mapping[str, Any]) -> str | None:
    """The readable reasoning of an assistant message, or None when it holds none: the first
    of ``reasoning_content``, ``reasoning`` that is a non-empty string; else the ``text`` (or
    ``summary``) of each ``reasoning_details`` item, an encrypted item named as such."""
    for name in REASONING_FIELDS[:2]:
        value = message.get(name)
        if isinstance(value, str) and value:
            return value
    details = message.get("reasoning_details")
    if not isinstance(details, list):
        return None
    parts: list[str] = []
    for item in details:
        if not isinstance(item, Mapping):
            continue
        for key in ("text", "summary"):
            if isinstance(item.get(key), str) and item[key]:
                parts.append(item[key])
                break
        else:
            if item.get("type") == "reasoning.encrypted":
                parts.append("(encrypted reasoning, not readable)")
    return "\n\n".join(parts) or None


@dataclass(frozen=True)
class ToolCall:
    """``tool_calls[i]`` of an assistant message. ``arguments`` is the JSON *string* as sent."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> Any:
        """``arguments`` parsed as JSON, or the raw string when it is not valid JSON."""
        try:
            return json.loads(self.arguments)
        except ValueError:
            return self.arguments

    def signature(self) -> str:
        """``name(args)`` with arguments canonicalised (sorted keys), for repeat detection."""
        args = self.parsed_arguments()
        canon = (
            json.dumps(args, sort_keys=True, ensure_ascii=False)
            if not isinstance(args, str)
            else args
        )
        return f"{self.name}({canon})"

    def to_message(self) -> dict[str, Any]:
        """The OpenAI wire shape of this tool call."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Usage:
    """Token usage as reported by the model API (``usage.prompt_tokens`` etc.)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(frozen=True)
class ModelReply:
    """One assistant reply: ``content`` (None when the model wrote no text), its tool calls,
    the API's ``finish_reason`` (in Chat Completions terms; :data:`NO_FINISH_REASON` when the
    reply named none), token usage, ``refusal`` (the model's refusal text, None
    unless it refused) and ``reasoning``: the reasoning fields the provider sent (see
    :data:`REASONING_FIELDS`), by name, each value as sent; empty when it sent none."""

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)
    refusal: str | None = None
    reasoning: Mapping[str, Any] = field(default_factory=dict, hash=False)
    #: The tools the provider ran on its side for this reply (``web_search``,
    #: ``google_search``, ``code_execution``...; :mod:`toolreplay.wire.hosted`): their calls
    #: and results are not in the conversation, and never sent back as messages.
    hosted_tools: tuple[str, ...] = ()

    @property
    def reasoning_text(self) -> str | None:
        """The reasoning in readable form (see :func:`reasoning_text`), None when there is
        none."""
        return reasoning_text(self.reasoning)

    def to_message(self) -> Message:
        """The assistant message to append to the conversation: the reasoning fields the
        provider sent, under the same names, and ``refusal``, each only when set (so a reply
        without them gives the message it always gave)."""
        msg: Message = {"role": "assistant", "content": self.content}
        for name in REASONING_FIELDS:
            if self.reasoning.get(name) is not None:
                msg[name] = self.reasoning[name]
        if self.refusal is not None:
            msg["refusal"] = self.refusal
        if self.tool_calls:
            msg["tool_calls"] = [tc.to_message() for tc in self.tool_calls]
        return msg


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer to one call: ``content`` is the JSON text put in the tool message;
    ``error`` holds the error text when the tool failed (the content then says so too)."""

    call: ToolCall
    content: str
    error: str | None = None

    def to_message(self) -> Message:
        return {"role": "tool", "tool_call_id": self.call.id, "content": self.content}


@dataclass(frozen=True)
class Round:
    """One model request and what followed: whether tools were offered, the reply, and the
    results of the tool calls the host executed (empty when it executed none)."""

    index: int
    tools_offered: bool
    reply: ModelReply
    results: tuple[ToolResult, ...] = ()


@dataclass(frozen=True)
class Episode:
    """One question under one configuration.

    ``transcript`` is every message in order (system, user, assistant, tool...), including the
    final assistant reply. ``answer`` is what the host returned to the user. ``wall_time_s`` is
    seconds spent (live or recorded, as the caller sets it).

    Where it came from, not what happened (so left out of equality: the same exchange read
    from the wire and run by a host compares equal): ``trial`` (from 1: which repeat of its
    configuration × question), ``cassette`` (the cassette it was read from, relative to its
    set's folder; ``""`` when run or replayed by a host), ``streamed`` (its model replies
    were streamed) and ``faults`` (replies the program recovered from, read from the wire:
    ``"request N (interaction M): what was wrong"``; they are not rounds).
    """

    configuration: str
    question_id: str
    question: str
    transcript: tuple[Message, ...]
    rounds: tuple[Round, ...]
    stop_reason: str
    answer: str
    usage: Usage
    wall_time_s: float = 0.0
    error: str | None = None
    trial: int = field(default=1, compare=False)
    cassette: str = field(default="", compare=False)
    streamed: bool = field(default=False, compare=False)
    faults: tuple[str, ...] = field(default=(), compare=False)

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every tool call the host executed, in order."""
        return tuple(r.call for rnd in self.rounds for r in rnd.results)

    @property
    def tool_chain(self) -> list[str]:
        """Names of the executed tool calls, in order (e.g. ``["geocode_city", ...]``)."""
        return [c.name for c in self.tool_calls]

    @property
    def hosted_tools(self) -> tuple[str, ...]:
        """The tools the provider ran on its side in any round (each once, in order): their
        results are not in the transcript."""
        return tuple(dict.fromkeys(n for rnd in self.rounds for n in rnd.reply.hosted_tools))

    @property
    def pending_tool_calls(self) -> tuple[ToolCall, ...]:
        """Tool calls in the last reply that the host never executed."""
        if not self.rounds:
            return ()
        last = self.rounds[-1]
        return () if last.results else last.reply.tool_calls
