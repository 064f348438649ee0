"""Model clients: one chat-completions request per round.

:class:`OpenAIChatModel` speaks to any OpenAI-compatible ``/chat/completions`` endpoint with
the openai SDK over an ``httpx.Client`` that the caller passes in (so vcrpy can record and
replay it). :class:`ScriptedModel` is an in-process double for host tests (no HTTP).

Settings: :func:`model_settings` resolves base URL, model name and key from flags, then the
environment (``TOOLREPLAY_BASE_URL``, ``TOOLREPLAY_MODEL``, ``DASHSCOPE_API_KEY`` or
``OPENAI_API_KEY``), then the defaults (DashScope compatible mode, ``qwen-plus``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from .episode import Message, ModelReply, ToolCall, Usage

DEFAULT_BASE_URL = "https://dashscope.aliyuncs.com/compatible-mode/v1"
DEFAULT_MODEL = "qwen-plus"
KEY_VARIABLES = ("DASHSCOPE_API_KEY", "OPENAI_API_KEY")


class ChatModel(Protocol):
    """Anything that answers one round: messages (+ tools, or None to withhold them)."""

    name: str

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply: ...


@dataclass(frozen=True)
class ModelSettings:
    """Where and what to ask. ``api_key`` may be None in replay (a placeholder is sent)."""

    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    api_key: str | None = None
    temperature: float = 0.0


def model_settings(
    base_url: str | None = None,
    model: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    read_key: bool = True,
) -> ModelSettings:
    """Resolve settings: flag > environment > default. With ``read_key=False`` no key is read
    (replay never needs one)."""
    e = os.environ if env is None else env
    key = None
    if read_key:
        key = next((e[k] for k in KEY_VARIABLES if e.get(k)), None)
    return ModelSettings(
        base_url=base_url or e.get("TOOLREPLAY_BASE_URL") or DEFAULT_BASE_URL,
        model=model or e.get("TOOLREPLAY_MODEL") or DEFAULT_MODEL,
        api_key=key,
    )


class OpenAIChatModel:
    """Chat completions through the openai SDK.

    ``http_client`` is the ``httpx.Client`` the SDK sends through. ``max_retries`` is 0 by
    default: in replay a retry would only hide a cassette miss behind "Connection error".
    Request body: ``model``, ``messages``, ``temperature``, and when tools are offered
    ``tools``, ``tool_choice="auto"``, ``parallel_tool_calls=true``.
    """

    def __init__(
        self, settings: ModelSettings, http_client: httpx.Client, *, max_retries: int = 0
    ) -> None:
        from openai import OpenAI  # imported here: the SDK import is the slowest part of start-up

        self.settings = settings
        self.name = settings.model
        self._client = OpenAI(
            api_key=settings.api_key or "replay-no-key",
            base_url=settings.base_url,
            http_client=http_client,
            max_retries=max_retries,
        )

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply:
        from openai.types.chat import ChatCompletionMessageFunctionToolCall

        kwargs: dict[str, Any] = {}
        if tools:
            kwargs = {"tools": list(tools), "tool_choice": "auto", "parallel_tool_calls": True}
        from openai import APIConnectionError
        from vcr.errors import CannotOverwriteExistingCassetteException

        try:
            resp = self._client.chat.completions.create(
                model=self.settings.model,
                messages=list(messages),  # type: ignore[arg-type]
                temperature=self.settings.temperature,
                **kwargs,
            )
        except APIConnectionError as exc:
            # The SDK reports a vcrpy cassette miss as "Connection error."; surface the miss.
            cause: BaseException | None = exc
            while cause is not None:
                if isinstance(cause, CannotOverwriteExistingCassetteException):
                    raise cause from None
                cause = cause.__cause__ or cause.__context__
            raise
        choice = resp.choices[0]
        msg = choice.message
        calls = tuple(
            ToolCall(tc.id, tc.function.name, tc.function.arguments or "")
            for tc in (msg.tool_calls or [])
            if isinstance(tc, ChatCompletionMessageFunctionToolCall)
        )
        usage = Usage(
            resp.usage.prompt_tokens if resp.usage else 0,
            resp.usage.completion_tokens if resp.usage else 0,
        )
        return ModelReply(msg.content, calls, choice.finish_reason or "stop", usage)


ScriptStep = (
    ModelReply | Callable[[Sequence[Message], Sequence[Mapping[str, Any]] | None], ModelReply]
)


@dataclass
class ScriptedModel:
    """In-process model double: returns ``script`` replies in order (each a :class:`ModelReply`
    or a function of ``(messages, tools)``), recording every request in ``requests``.
    Raises :class:`AssertionError` when asked for more replies than scripted."""

    script: list[ScriptStep]
    name: str = "scripted"
    requests: list[tuple[list[Message], list[Mapping[str, Any]] | None]] = field(
        default_factory=list
    )

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply:
        self.requests.append(([dict(m) for m in messages], list(tools) if tools else None))
        if len(self.requests) > len(self.script):
            raise AssertionError(f"scripted model asked for reply {len(self.requests)}")
        step = self.script[len(self.requests) - 1]
        return step(messages, tools) if callable(step) else step
