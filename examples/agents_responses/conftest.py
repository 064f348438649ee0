"""Fixtures of the example: the agent over the recorded (or, when recording, the loopback)
model and catalogue API. In replay (the default) nothing here needs a server, a key or an
environment variable: the model name is fixed, and the cassettes match on neither host nor
port."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel
from library_agent import build_agent
from library_servers import catalogue_api, library_policy
from openai import AsyncOpenAI

from toolreplay.doubles.loopback import serve

MODEL = "library-demo"


@pytest.fixture
def servers(record_mode: str, toolreplay_chat_server: Any, request: Any) -> Iterator[Any]:
    """``(model base URL, catalogue URL)``: any hosts in replay; when recording, the scripted
    model (this test's trial, on every wire it speaks) and the catalogue API on loopback."""
    if record_mode == "none":
        yield "http://model.invalid/v1", "http://catalogue.invalid"
        return
    from toolreplay.doubles import conversation  # the request in Chat Completions form

    callspec = getattr(request.node, "callspec", None)
    policy = library_policy(callspec.params.get("trial", 1) if callspec else 1)
    server = toolreplay_chat_server(lambda body: policy(conversation(body)), model=MODEL)
    with serve(catalogue_api) as url:
        yield server.base_url, url


@pytest.fixture
def client(servers: Any) -> AsyncOpenAI:
    http = httpx2.AsyncClient(trust_env=False)
    return AsyncOpenAI(base_url=servers[0], api_key="unused", http_client=http)


@pytest.fixture
def responses_agent(client: AsyncOpenAI, servers: Any) -> Agent[None]:
    """The agent on the Responses API (openai-agents' default model class)."""
    return build_agent(OpenAIResponsesModel(MODEL, openai_client=client), servers[1])


@pytest.fixture
def chat_agent(client: AsyncOpenAI, servers: Any) -> Agent[None]:
    """The same agent on Chat Completions."""
    return build_agent(OpenAIChatCompletionsModel(MODEL, openai_client=client), servers[1])
