"""Fixtures of the example: a google-genai client over the recorded (or, when recording, the
scripted loopback) model and flights API, and the loop bound to them. Replay needs no server,
key or environment variable: the model name is fixed, and the cassettes match on neither
host nor port. The key google-genai sends in a header never reaches a cassette."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from flight_loop import ask
from flight_servers import flight_policy, flights_api
from google import genai
from google.genai import types

from toolreplay.doubles.loopback import serve

MODEL = "flights-demo"


@pytest.fixture
def servers(record_mode: str, toolreplay_chat_server: Any, request: Any) -> Iterator[Any]:
    """``(model root URL, flights URL)``: any hosts in replay; when recording, the scripted
    model (this test's trial) and the flights API on loopback."""
    if record_mode == "none":
        yield "http://model.invalid", "http://flights.invalid"
        return
    from toolreplay.doubles import conversation

    callspec = getattr(request.node, "callspec", None)
    policy = flight_policy(callspec.params.get("trial", 1) if callspec else 1)
    server = toolreplay_chat_server(lambda body: policy(conversation(body)), model=MODEL)
    with serve(flights_api) as url:
        yield server.root_url, url


@pytest.fixture
def client(servers: Any) -> Iterator[genai.Client]:
    """The google-genai client (it takes the root URL and appends ``/v1beta/models/...``)."""
    with httpx2.Client(trust_env=False) as http:
        options = types.HttpOptions(base_url=servers[0], httpx_client=http)
        yield genai.Client(api_key="unused", http_options=options)


@pytest.fixture
def flights(client: Any, servers: Any) -> Any:
    """The loop bound to its client, model and API: ``flights(question, stream=False)``
    returns the conversation (``flight_loop.ask``)."""
    return functools.partial(ask, client, MODEL, servers[1])
