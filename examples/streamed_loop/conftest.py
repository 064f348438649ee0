"""Fixtures of the example: an openai client over the recorded (or, when recording, the
scripted loopback) model. Replay needs no server, key or environment variable."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from openai import OpenAI


def order_policy(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model (a test double): looks up every order id in the question, then
    answers from the results; asked for an item count it does not look up, it guesses."""
    messages = body["messages"]
    question = next(m["content"] for m in messages if m["role"] == "user")
    results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    ids = re.findall(r"A-\d{4}", question)
    if not results and ids:
        calls = [
            {"id": f"call_{i}", "function": {"name": "get_order",
             "arguments": json.dumps({"order_id": i})}}
            for i in ids
        ]  # fmt: skip
        return {"content": "Let me look that up.", "tool_calls": calls}
    if "how many items" in question.lower():
        return {"content": "Your order has 4 items."}  # guessed, on purpose
    return {
        "content": " ".join(
            f"Order {r['order_id']} is {r['status']} and arrives in {r['eta_days']} days."
            for r in results
        )
    }


@pytest.fixture
def model_server(record_mode: str, toolreplay_chat_server: Any) -> None:
    """When recording, the scripted model on loopback (it sets TOOLREPLAY_BASE_URL and
    TOOLREPLAY_MODEL for the test); in replay, nothing."""
    if record_mode != "none":
        toolreplay_chat_server(order_policy, model="orders-demo")


@pytest.fixture
def settings(model_server: None, toolreplay_model_settings: Any) -> Any:
    """Base URL and model: the cassette's in replay, the scripted server's when recording."""
    return toolreplay_model_settings


@pytest.fixture
def client(settings: Any) -> Iterator[OpenAI]:
    with httpx.Client(trust_env=False) as http:
        yield OpenAI(base_url=settings.base_url, api_key=settings.api_key or "unused",
                     http_client=http)  # fmt: skip
