"""A team's own agent on openai-agents: a library assistant that looks books up in a
catalogue API over HTTP (``GET /books/<id>``).

``build_agent`` takes the model: ``OpenAIResponsesModel`` (openai-agents' default, the
Responses API) or ``OpenAIChatCompletionsModel`` (Chat Completions), each over an
``AsyncOpenAI`` client the caller builds. Its one tool, ``find_book``, returns the API's
dict, which openai-agents sends back to the model as ``str(dict)`` (a Python literal, not
JSON). Nothing here knows about toolreplay.
"""

from __future__ import annotations

from typing import Any

import requests
from agents import Agent, Model, ModelSettings, RunConfig, function_tool

INSTRUCTIONS = (
    "You answer questions about the library's books. Look every book id up with find_book; "
    "never guess a number of copies."
)

#: Runs send no traces anywhere (openai-agents exports them to the OpenAI API by default).
RUN_CONFIG = RunConfig(tracing_disabled=True)


def build_agent(model: Model, catalogue_url: str) -> Agent[None]:
    """The agent over ``model``, its tool calling the catalogue API at ``catalogue_url``."""
    session = requests.Session()
    session.trust_env = False

    @function_tool
    def find_book(book_id: str) -> dict[str, Any]:
        """Title and copies available of one book.

        Args:
            book_id: The book's id, e.g. B-101.
        """
        reply = session.get(f"{catalogue_url}/books/{book_id}", timeout=10)
        result: dict[str, Any] = reply.json()
        return result

    return Agent(
        name="librarian",
        instructions=INSTRUCTIONS,
        model=model,
        model_settings=ModelSettings(temperature=0.0),
        tools=[find_book],
    )
