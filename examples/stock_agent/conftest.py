"""Fixtures of the example: the agent over the recorded (or, when recording, the loopback)
model and inventory API. In replay (the default) nothing here needs a server, a key or an
environment variable: ``toolreplay_model_settings`` comes from each test's cassette."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from agent import build_agent
from servers import inventory_api, stock_policy

from toolreplay import Study, register_study
from toolreplay.doubles.loopback import serve
from toolreplay.studies import unregister_study


@pytest.fixture
def inventory_url(record_mode: str, toolreplay_chat_server: Any, request: Any) -> Iterator[str]:
    """The inventory API: any host in replay (cassettes do not match on host or port); when
    recording, the loopback API and the scripted model (this test's trial) are started."""
    if record_mode == "none":
        yield "http://inventory.invalid"
        return
    callspec = getattr(request.node, "callspec", None)
    trial = callspec.params.get("trial", 1) if callspec else 1
    toolreplay_chat_server(stock_policy(trial), model="stock-demo")
    with serve(inventory_api) as url:
        yield url


@pytest.fixture
def agent(inventory_url: str, toolreplay_model_settings: Any) -> Iterator[Any]:
    """The pydantic-ai agent, its model the cassette's (replay) or the scripted one."""
    s = toolreplay_model_settings
    with_client = httpx2.AsyncClient(trust_env=False)  # pydantic-ai deprecates httpx's
    yield build_agent(s.base_url, s.model, s.api_key, with_client, inventory_url)


@pytest.fixture
def stock_study() -> Iterator[Study[Any]]:
    """This domain as a toolreplay study (``stock_study.STUDY``), registered for the test: an
    eval file naming ``study: stock`` runs the engine's configurations on its tools."""
    from stock_study import STUDY

    yield register_study(STUDY)
    unregister_study(STUDY.name)
