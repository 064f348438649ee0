"""A team's own agent on pydantic-ai over the OpenAI Responses API (``OpenAIResponsesModel``):
a meeting-room assistant whose tool calls a rooms API over HTTP (``GET /rooms/<id>``).
Nothing here knows about toolreplay."""

from __future__ import annotations

from typing import Any

import httpx2
import requests
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider

INSTRUCTIONS = (
    "You answer questions about meeting rooms. Look every room up with room_info; never "
    "guess a capacity."
)


def build_agent(
    base_url: str, model: str, http: httpx2.AsyncClient, rooms_url: str
) -> Agent[None, str]:
    """The agent: one tool over the rooms API at ``rooms_url``, its model ``model`` on the
    Responses API at ``base_url``."""
    provider = OpenAIProvider(base_url=base_url, api_key="unused", http_client=http)
    agent = Agent(
        OpenAIResponsesModel(model, provider=provider),
        instructions=INSTRUCTIONS,
        model_settings={"temperature": 0.0},
    )
    session = requests.Session()
    session.trust_env = False

    @agent.tool_plain
    def room_info(room: str) -> dict[str, Any]:
        """Capacity (people) and floor of one meeting room (e.g. R-12)."""
        reply = session.get(f"{rooms_url}/rooms/{room}", timeout=10)
        result: dict[str, Any] = reply.json()
        return result

    return agent
