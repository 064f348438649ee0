"""In replay the plugin's model settings are the cassette's own, whatever protocol it
recorded: the base URL a client is given, the model, and the protocol its ``chat_model``
fixture then speaks (the endpoint shapes from each API's reference)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from toolreplay.plugin.settings import recorded_endpoint, recorded_settings


@dataclass
class _Request:  # what vcrpy's Request offers that the plugin reads
    method: str
    uri: str
    body: bytes | None


@dataclass
class _Cassette:
    requests: list[_Request]


def _post(uri: str, body: dict[str, object]) -> _Request:
    return _Request("POST", uri, json.dumps(body).encode())


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (
            _post("http://127.0.0.1:9/v1/chat/completions", {"model": "m", "messages": []}),
            ("http://127.0.0.1:9/v1", "m", "chat_completions"),
        ),
        (
            _post("https://api.openai.com/v1/responses", {"model": "gpt-5", "input": "hi"}),
            ("https://api.openai.com/v1", "gpt-5", "responses"),
        ),
        (
            _post(
                "https://api.anthropic.com/v1/messages",
                {"model": "claude-x", "max_tokens": 5, "messages": []},
            ),
            ("https://api.anthropic.com", "claude-x", "anthropic_messages"),
        ),
    ],
)
def test_the_first_model_request_gives_endpoint_model_and_protocol(
    request_: _Request, expected: tuple[str, str, str]
) -> None:
    tool_call = _Request("GET", "http://inventory.invalid/stock?sku=A", None)
    assert recorded_endpoint([tool_call, request_]) == expected
    settings = recorded_settings(_Cassette([tool_call, request_]), env={})
    assert (settings.base_url, settings.model, settings.protocol) == expected
    assert settings.api_key is None


def test_a_protocol_no_model_client_speaks_falls_back_to_the_environment() -> None:
    gemini = _post(
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    )
    assert recorded_endpoint([gemini]) is None
    settings = recorded_settings(_Cassette([gemini]), env={"TOOLREPLAY_MODEL": "from-env"})
    assert settings.protocol == "chat_completions"
