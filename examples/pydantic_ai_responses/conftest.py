"""Fixtures of the example: the pydantic-ai agent over the recorded (or, when recording, the
scripted loopback) model and rooms API. Replay needs no server, key or environment
variable: the model name is fixed, and the cassettes match on neither host nor port."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from room_agent import build_agent
from room_servers import room_policy, rooms_api

from toolreplay.doubles.loopback import serve

MODEL = "rooms-demo"


@pytest.fixture
def servers(record_mode: str, toolreplay_chat_server: Any, request: Any) -> Iterator[Any]:
    """``(model base URL, rooms URL)``: any hosts in replay; when recording, the scripted
    model (this test's trial) and the rooms API on loopback."""
    if record_mode == "none":
        yield "http://model.invalid/v1", "http://rooms.invalid"
        return
    from toolreplay.doubles import conversation

    callspec = getattr(request.node, "callspec", None)
    policy = room_policy(callspec.params.get("trial", 1) if callspec else 1)
    server = toolreplay_chat_server(lambda body: policy(conversation(body)), model=MODEL)
    with serve(rooms_api) as url:
        yield server.base_url, url


@pytest.fixture
def agent(servers: Any) -> Any:
    """The pydantic-ai agent on the Responses API."""
    return build_agent(servers[0], MODEL, httpx2.AsyncClient(trust_env=False), servers[1])
