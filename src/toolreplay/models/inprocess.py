"""In-process chat models: no HTTP, for unit tests of a host or a toolset.

- :class:`~toolreplay.models.scripted.ScriptedModel` (re-exported here) returns scripted
  replies, each a :class:`~toolreplay.wire.episode.ModelReply` or a function of
  ``(messages, tools)``, like pydantic-ai's ``FunctionModel`` or inspect's ``mockllm``.
- :class:`StandinModel` is the eval file's study's stand-in policy
  (:attr:`toolreplay.studies.Study.standin_policy`; the weather study's is
  :mod:`toolreplay.study.weather.standin`) called directly: the same deterministic replies the
  stand-in server gives over HTTP, for the questions of an eval file, without a server.
- :func:`reply_from_completion` turns a ``/chat/completions`` response body into a
  :class:`~toolreplay.wire.episode.ModelReply`, for writing other in-process doubles.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.evals import EvalSuite
from toolreplay.models.scripted import ScriptedModel
from toolreplay.wire.episode import NO_FINISH_REASON, Message, ModelReply, ToolCall, Usage

__all__ = ["ScriptedModel", "StandinModel", "reply_from_completion"]


def reply_from_completion(body: Mapping[str, Any]) -> ModelReply:
    """The first choice of a chat-completions response body as a :class:`ModelReply`.

    Tool calls keep their ``id`` and their ``arguments`` string (a dict is JSON-encoded); a
    missing ``usage`` counts as zero tokens; a missing or null ``finish_reason`` reads
    :data:`~toolreplay.wire.episode.NO_FINISH_REASON` (``unknown``), as over HTTP. Raises
    :class:`ValueError` when the body has no
    choice."""
    choices = body.get("choices") or []
    if not choices:
        raise ValueError("chat completion has no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    calls = []
    for tc in message.get("tool_calls") or []:
        fn = tc.get("function") or {}
        args = fn.get("arguments")
        if args is None:  # missing or null (OpenRouter): no arguments, as a JSON object
            args = "{}"
        elif not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        calls.append(ToolCall(str(tc.get("id", "")), str(fn.get("name", "")), args))
    usage = body.get("usage") or {}
    return ModelReply(
        message.get("content"),
        tuple(calls),
        choice.get("finish_reason") or NO_FINISH_REASON,
        Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
    )


class StandinModel:
    """The stand-in policy as a :class:`~toolreplay.models.base.ChatModel`, in process.

    ``suite`` is the eval file whose per-question hints the policy reads (questions it does
    not know get a polite refusal); its study supplies the policy (:class:`ValueError` when
    the study has no stand-in model). Each :meth:`complete` builds the request body the HTTP
    client would send (``model``, ``messages``, ``temperature``, and ``tools`` when offered)
    and answers it exactly as the stand-in server would. ``requests`` keeps every body sent."""

    def __init__(self, suite: EvalSuite, name: str | None = None) -> None:
        from toolreplay.doubles import STANDIN_MODEL
        from toolreplay.studies import load_study

        study = load_study(suite.study)
        if study.standin_policy is None:
            raise ValueError(f"the {study.name} study has no stand-in model")
        self.policy = study.standin_policy(suite, 0, 1)
        self.name = name or STANDIN_MODEL
        self.temperature = suite.experiment.temperature
        self.requests: list[dict[str, Any]] = []

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply:
        body: dict[str, Any] = {
            "model": self.name,
            "messages": [dict(m) for m in messages],
            "temperature": self.temperature,
        }
        if tools:
            body["tools"] = [dict(t) for t in tools]
            body.update(tool_choice="auto", parallel_tool_calls=True)
        # The HTTP path round-trips through JSON; do the same so replies are identical.
        body = json.loads(json.dumps(body, ensure_ascii=False))
        self.requests.append(body)
        return reply_from_completion(self.policy.reply(body))
