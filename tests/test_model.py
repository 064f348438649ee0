"""Model settings resolution and the OpenAI-compatible client over a passed-in httpx client."""

from __future__ import annotations

import json

import httpx

from toolreplay.models.base import DEFAULT_BASE_URL, DEFAULT_MODEL
from toolreplay.models.endpoint import model_settings
from toolreplay.models.openai_chat import OpenAIChatModel


def test_flag_beats_environment_beats_default():
    env = {
        "TOOLREPLAY_BASE_URL": "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        "TOOLREPLAY_MODEL": "env-model",
        "OPENAI_API_KEY": "k-openai",
        "DASHSCOPE_API_KEY": "k-dashscope",
    }
    s = model_settings("https://api.openai.com/v1", "flag-model", env)
    assert (s.base_url, s.model, s.api_key) == (
        "https://api.openai.com/v1", "flag-model", "k-openai",
    )  # fmt: skip
    s = model_settings(None, None, env)
    assert (s.base_url, s.model, s.api_key) == (env["TOOLREPLAY_BASE_URL"], "env-model",
                                                "k-dashscope")  # fmt: skip
    s = model_settings(None, None, {"DASHSCOPE_API_KEY": "k"})
    assert (s.base_url, s.model, s.api_key) == (DEFAULT_BASE_URL, DEFAULT_MODEL, "k")
    s = model_settings(None, None, env, read_key=False)
    assert s.api_key is None and s.model == "env-model"
    assert model_settings(None, None, {}, read_key=False).base_url == DEFAULT_BASE_URL


def test_request_body_and_reply_parsing_over_a_mock_transport():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": "c1",
                                    "type": "function",
                                    "function": {"name": "f", "arguments": '{"a": 1}'},
                                }
                            ],
                        },
                    }
                ],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
            },
        )

    settings = model_settings("http://model.test/v1", "m", {}, read_key=False)
    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        model = OpenAIChatModel(settings, http)
        tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
        reply = model.complete([{"role": "user", "content": "q"}], tools)
        model.complete([{"role": "user", "content": "q"}], None)
    assert reply.content is None and reply.tool_calls[0].name == "f"
    assert reply.usage.total_tokens == 10 and reply.finish_reason == "tool_calls"
    assert seen[0]["tool_choice"] == "auto" and seen[0]["parallel_tool_calls"] is True
    assert "tools" not in seen[1] and "tool_choice" not in seen[1]  # tools withheld
    assert seen[0]["temperature"] == 0.0
