"""``tool_choice: none`` reads the same in every protocol: tools declared but not offered.

Chat Completions ``"none"``, Responses ``"none"``, Anthropic ``{"type": "none"}`` and Gemini
``toolConfig.functionCallingConfig.mode: NONE`` each forbid every call; before, only
Anthropic's counted as withholding the tools, so the same last round read ``max_rounds`` on
Anthropic and ``converged`` on the others.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolreplay.wire.interactions import read_exchanges
from toolreplay.wire.reader import protocol_of, read_wire_episodes
from toolreplay.wire.request_settings import sent_settings
from toolreplay.wire.tool_choice import calls_forbidden, tool_choice_mode

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"

_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}


def _interaction(uri: str, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    return {
        "request": {"method": "POST", "uri": uri, "body": json.dumps(body)},
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"]},
            "body": {"string": json.dumps(reply)},
        },
    }


def _chat(choice: Any) -> dict[str, Any]:
    body = {
        "model": "gpt-4.1-mini",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "weather", "parameters": _SCHEMA}}],
        "tool_choice": choice,
    }
    reply = {"choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": "Sunny."}}]}  # fmt: skip
    return _interaction("https://api.openai.com/v1/chat/completions", body, reply)


def _responses(choice: Any) -> dict[str, Any]:
    body = {
        "model": "gpt-4.1-mini",
        "input": "Weather in Paris?",
        "tools": [{"type": "function", "name": "weather", "parameters": _SCHEMA}],
        "tool_choice": choice,
    }
    reply = {"id": "resp_1", "object": "response", "status": "completed", "output": [
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Sunny."}]}]}  # fmt: skip
    return _interaction("https://api.openai.com/v1/responses", body, reply)


def _anthropic(choice: Any) -> dict[str, Any]:
    body = {
        "model": "claude-haiku-4-5",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"name": "weather", "input_schema": _SCHEMA}],
        "tool_choice": {"type": choice},
    }
    reply = {"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "end_turn",
             "content": [{"type": "text", "text": "Sunny."}],
             "usage": {"input_tokens": 5, "output_tokens": 2}}  # fmt: skip
    return _interaction("https://api.anthropic.com/v1/messages", body, reply)


def _gemini(mode: Any) -> dict[str, Any]:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
        "tools": [{"functionDeclarations": [{"name": "weather", "parameters": _SCHEMA}]}],
        "toolConfig": {"functionCallingConfig": {"mode": mode}},
    }
    reply = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Sunny."}]},
                             "finishReason": "STOP"}]}  # fmt: skip
    uri = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    return _interaction(uri, body, reply)


#: provider → (builder, its "none", its "auto", its "must call one")
PROVIDERS = {
    "chat-completions": (_chat, "none", "auto", "required"),
    "responses": (_responses, "none", "auto", "required"),
    "anthropic": (_anthropic, "none", "auto", "any"),
    "gemini": (_gemini, "NONE", "AUTO", "ANY"),
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_tool_choice_none_offers_no_tool_in_every_protocol(provider):
    build, none, auto, required = PROVIDERS[provider]
    for sent, word, offered in ((none, "none", False), (auto, "auto", True),
                                (required, "required", True)):  # fmt: skip
        (exchange,) = read_exchanges([build(sent)])
        protocol = protocol_of(exchange)
        assert protocol is not None
        assert protocol.request(exchange, {}).tools_offered is offered, (provider, sent)
        settings = sent_settings(exchange)
        assert settings.tool_choice == word, (provider, sent)
        assert settings.tools is not None  # declared either way
        assert settings.tools_offered is offered


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_last_round_with_tool_choice_none_reads_alike_in_every_protocol(provider):
    build, none, _, _ = PROVIDERS[provider]
    (wire,) = read_wire_episodes([build(none)])
    # tools withheld (declared, not callable), as a host's last round sends them
    assert [r.tools_offered for r in wire.episode.rounds] == [False]
    assert wire.episode.answer == "Sunny."


def test_gemini_modes_by_number_and_in_snake_case():
    assert tool_choice_mode({"toolConfig": {"functionCallingConfig": {"mode": 3}}}) == "none"
    assert tool_choice_mode({"tool_config": {"function_calling_config": {"mode": "none"}}}) == (
        "none"
    )
    assert tool_choice_mode({"toolConfig": {"functionCallingConfig": {"mode": 1}}}) == "auto"


def test_other_forms_of_the_choice():
    assert tool_choice_mode({"tool_choice": {"type": "function", "function": {"name": "x"}}}) == (
        "named"
    )
    assert tool_choice_mode({"tool_choice": {"type": "allowed_tools", "mode": "required"}}) == (
        "required"
    )
    assert tool_choice_mode({"toolConfig": {"toolChoice": {"any": {}}}}) == "required"
    assert tool_choice_mode({"tools": []}) is None
    assert not calls_forbidden({"tool_choice": "auto"}) and calls_forbidden({"tool_choice": "none"})


def test_a_real_chat_completions_run_whose_last_round_forbids_calls():
    """pydantic-ai's recorded tool call, its second request sent with ``tool_choice: none``:
    the last round withheld the tools, so the episode stops as a host's forced last round
    does (``max_rounds``), as the same round on Anthropic always read."""
    path = FOREIGN / "pydantic-ai-openai-tool-call.yaml"
    interactions = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    (before,) = read_wire_episodes(interactions)
    assert before.episode.stop_reason == "converged"
    forced = copy.deepcopy(interactions)
    forced[-1]["request"]["parsed_body"]["tool_choice"] = "none"
    (after,) = read_wire_episodes(forced)
    assert [r.tools_offered for r in after.episode.rounds] == [True, False]
    assert after.episode.stop_reason == "max_rounds"
    assert after.episode.answer == before.episode.answer


@pytest.mark.parametrize(
    ("legacy", "mode"), [("none", "none"), ("auto", "auto"), ({"name": "weather"}, "named")]
)
def test_chat_completions_legacy_function_call_reads_as_a_tool_choice(legacy, mode):
    """The legacy ``functions`` + ``function_call`` form: the reader, the sent settings the
    audit compares and the mode agree on whether the tools were offered."""
    body = {
        "model": "gpt-3.5-turbo",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "functions": [{"name": "weather", "parameters": _SCHEMA}],
        "function_call": legacy,
    }
    reply = {"choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": "Sunny."}}]}  # fmt: skip
    (exchange,) = read_exchanges(
        [_interaction("https://api.openai.com/v1/chat/completions", body, reply)]
    )
    assert tool_choice_mode(exchange.request_body) == mode
    request = protocol_of(exchange).request(exchange, {})
    settings = sent_settings(exchange)
    assert request.tools_offered is (mode != "none")
    assert settings.tools_offered is request.tools_offered


@pytest.mark.parametrize("provider", ["chat-completions", "responses", "anthropic"])
def test_the_stand_in_gets_no_tool_when_the_choice_is_none(provider):
    """The stand-in (serving Chat Completions, Responses and Anthropic requests) hands the
    tools to its policy only when they may be called, in every protocol's form of none."""
    from toolreplay.runs.standin_protocols import chat_body

    build, none, auto, _ = PROVIDERS[provider]
    for choice, offered in ((none, False), (auto, True)):
        body = json.loads(build(choice)["request"]["body"])
        assert ("tools" in chat_body(body)) is offered, (provider, choice)
