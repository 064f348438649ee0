"""A team's own agent on a real framework: a stock and price assistant built with pydantic-ai.

Its tools call an inventory API over HTTP (``GET /stock/<sku>``, ``GET /price/<sku>``); the
model is any OpenAI-compatible endpoint. Nothing here knows about toolreplay: the tests record
and replay its traffic through the pytest plugin, and ``toolreplay run`` judges the recorded
episodes from the cassettes alone.
"""

from __future__ import annotations

from typing import Any

import httpx2
import requests
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

INSTRUCTIONS = (
    "You answer questions about stock levels and prices. Look every SKU up with the tools; "
    "never guess a number."
)


def build_agent(
    base_url: str, model: str, api_key: str | None, http: httpx2.AsyncClient, inventory_url: str
) -> Agent[None, str]:
    """The agent: two tools over the inventory API at ``inventory_url``."""
    provider = OpenAIProvider(base_url=base_url, api_key=api_key or "unused", http_client=http)
    agent = Agent(
        OpenAIChatModel(model, provider=provider),
        instructions=INSTRUCTIONS,
        model_settings={"temperature": 0.0},
    )
    session = requests.Session()
    session.trust_env = False

    @agent.tool_plain
    def check_stock(sku: str) -> dict[str, Any]:
        """Units on hand of one SKU (e.g. ABC-1)."""
        reply = session.get(f"{inventory_url}/stock/{sku}", timeout=10)
        result: dict[str, Any] = reply.json()
        return result

    @agent.tool_plain
    def get_price(sku: str) -> dict[str, Any]:
        """The unit price of one SKU, in EUR."""
        reply = session.get(f"{inventory_url}/price/{sku}", timeout=10)
        result: dict[str, Any] = reply.json()
        return result

    return agent
