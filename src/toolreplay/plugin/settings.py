"""Where the pytest plugin's ``chat_model`` sends its requests, in replay and when recording.

**Replay** (record mode ``none``): the base URL and model are the cassette's own: those of
the first model request recorded in the test's cassette (:func:`recorded_settings`; Chat
Completions, the Responses API or Anthropic Messages, whose protocol it takes too),
so a CI replay needs no environment variable, and whatever ``TOOLREPLAY_BASE_URL`` or
``TOOLREPLAY_MODEL`` say on the CI machine changes nothing. No key is read. A test without a
cassette yet falls back to the environment's defaults (its requests then miss, and the miss
says how to record).

**Recording** (any other record mode): :data:`RECORDING_SETTINGS`, one table; the key is
paired with its endpoint (:func:`toolreplay.models.endpoint.resolve_endpoint`) and an error
names the variable to set (:func:`recording_settings`). A fixture of your own named
``toolreplay_model_settings`` replaces both (return a
:class:`~toolreplay.models.base.ModelSettings`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from toolreplay.models.base import ModelSettings

#: The settings a recording reads: (variable, what it sets, when it is needed).
RECORDING_SETTINGS = (
    ("TOOLREPLAY_BASE_URL", "the endpoint's base URL (`…/v1`)",
     "unless the key variable implies it: DashScope for `DASHSCOPE_API_KEY`, "
     "`$OPENAI_BASE_URL` or the OpenAI API for `OPENAI_API_KEY`"),
    ("TOOLREPLAY_MODEL", "the model name",
     "for any endpoint but DashScope (default `qwen-plus`)"),
    ("DASHSCOPE_API_KEY", "the key sent to DashScope (`dashscope*.aliyuncs.com`) only",
     "for DashScope"),
    ("OPENAI_API_KEY", "the key sent to `$OPENAI_BASE_URL`, else to the OpenAI API, only",
     "for the OpenAI API or `$OPENAI_BASE_URL`"),
    ("OPENAI_BASE_URL", "the endpoint `OPENAI_API_KEY` belongs to", "optional"),
    ("TOOLREPLAY_API_KEY_ENV", "the name of the variable holding the key of "
     "`$TOOLREPLAY_BASE_URL` (e.g. `GROQ_API_KEY`): that key goes to that endpoint",
     "for any other endpoint; on loopback (`127.0.0.1`, `localhost`) no key is sent "
     "without it"),
)  # fmt: skip

#: How an endpoint error's command-line wording reads under pytest, longest first.
_UNDER_PYTEST = (
    ("--model NAME (or $TOOLREPLAY_MODEL)", "TOOLREPLAY_MODEL=NAME"),
    ("(--base-url or $TOOLREPLAY_BASE_URL)", "($TOOLREPLAY_BASE_URL)"),
    (
        "(or name another variable with --api-key-env NAME and --base-url URL)",
        "(or name another variable with TOOLREPLAY_API_KEY_ENV=NAME and TOOLREPLAY_BASE_URL=URL)",
    ),
    (
        "To record offline instead, use `toolreplay record --model-source stand-in`.",
        "To record offline instead, point TOOLREPLAY_BASE_URL at a server on loopback (the "
        "toolreplay_chat_server fixture starts a scripted one).",
    ),
    ("pass --base-url URL with it", "set TOOLREPLAY_BASE_URL=URL with it"),
    ("--api-key-env NAME", "TOOLREPLAY_API_KEY_ENV=NAME"),
    ("--api-key-env ", "TOOLREPLAY_API_KEY_ENV="),
    ("--base-url URL", "TOOLREPLAY_BASE_URL=URL"),
    ("--model NAME", "TOOLREPLAY_MODEL=NAME"),
)


def under_pytest(message: str) -> str:
    """An endpoint error reworded for the plugin: the ``toolreplay record`` flags it names
    become the environment variables that set the same thing under pytest."""
    for flag, variable in _UNDER_PYTEST:
        message = message.replace(flag, variable)
    return message


def recording_settings(env: Mapping[str, str] | None = None) -> ModelSettings:
    """Settings for recording from the environment (:data:`RECORDING_SETTINGS`);
    :class:`ValueError` saying which variable to set, in the plugin's terms, when the key and
    the endpoint cannot be paired. Nothing is sent."""
    from toolreplay.models.endpoint import EndpointError, model_settings

    try:
        return model_settings(env=os.environ if env is None else env)
    except EndpointError as exc:
        raise ValueError(
            "cannot record: "
            + under_pytest(str(exc))
            + " (or override the toolreplay_model_settings fixture)"
        ) from None


#: The wire protocols a ModelSettings can name, by the reader's protocol name.
_SETTINGS_PROTOCOL = {
    "Chat Completions": "chat_completions",
    "Responses API": "responses",
    "Anthropic Messages": "anthropic_messages",
}


def recorded_endpoint(requests: Any) -> tuple[str, str, str] | None:
    """``(base_url, model, protocol)`` of the first model request among ``requests`` (vcrpy
    requests: ``uri``, ``method`` and ``body``) of a protocol the model clients speak (Chat
    Completions, the Responses API, Anthropic Messages; ``protocol`` as
    :attr:`ModelSettings.protocol` names it), or None when none holds a model name."""
    from toolreplay.wire.interactions import Exchange
    from toolreplay.wire.reader import model_endpoint, protocol_of

    for number, request in enumerate(requests or (), 1):
        body: Any = getattr(request, "body", None)
        try:
            parsed = json.loads(body) if body else None
        except (ValueError, TypeError):
            continue
        method = str(getattr(request, "method", "POST"))
        exchange = Exchange(number, method, str(getattr(request, "uri", "")), 200, parsed, "", b"")
        protocol = protocol_of(exchange)
        name = _SETTINGS_PROTOCOL.get(protocol.name) if protocol is not None else None
        if name is None:
            continue
        base_url, model = model_endpoint(exchange)
        if model:
            return base_url, model, name
    return None


def recorded_settings(cassette: Any, env: Mapping[str, str] | None = None) -> ModelSettings:
    """Settings for replaying ``cassette`` (vcrpy's, or None): its recorded base URL and model
    (:func:`recorded_endpoint`) and protocol, no key; the environment's defaults when it holds no
    model request of those protocols."""
    from toolreplay.models.endpoint import model_settings

    found = recorded_endpoint(getattr(cassette, "requests", None))
    if found is None:
        return model_settings(env=os.environ if env is None else env, read_key=False)
    return ModelSettings(base_url=found[0], model=found[1], api_key=None, protocol=found[2])
