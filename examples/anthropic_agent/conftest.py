"""Fixtures of the example: an anthropic client over the recorded (or, when recording, the
scripted loopback) model and tracking API, and the loop bound to them. Replay needs no server,
key or environment variable: the model name is fixed, and the cassettes match on neither
host nor port."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from parcel_loop import ask
from parcel_servers import parcel_policy, tracking_api

from toolreplay.doubles.loopback import serve

MODEL = "parcels-demo"


@pytest.fixture
def servers(record_mode: str, toolreplay_chat_server: Any, request: Any) -> Iterator[Any]:
    """``(model root URL, tracking URL)``: any hosts in replay; when recording, the scripted
    model (this test's trial) and the tracking API on loopback."""
    if record_mode == "none":
        yield "http://model.invalid", "http://tracking.invalid"
        return
    from toolreplay.doubles import conversation

    callspec = getattr(request.node, "callspec", None)
    policy = parcel_policy(callspec.params.get("trial", 1) if callspec else 1)
    server = toolreplay_chat_server(lambda body: policy(conversation(body)), model=MODEL)
    with serve(tracking_api) as url:
        yield server.root_url, url


@pytest.fixture
def client(servers: Any) -> Iterator[anthropic.Anthropic]:
    """The anthropic client (the SDK takes the root URL; it builds on httpx2)."""
    with httpx2.Client(trust_env=False) as http:
        yield anthropic.Anthropic(base_url=servers[0], api_key="unused", http_client=http)


@pytest.fixture
def parcels(client: Any, servers: Any) -> Any:
    """The loop bound to its client, model and API: ``parcels(question, stream=False)``
    returns the conversation (``parcel_loop.ask``)."""
    return functools.partial(ask, client, MODEL, servers[1])
