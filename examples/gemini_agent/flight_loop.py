"""A hand-written function-calling loop on the google-genai SDK: a flight-status assistant.

Automatic function calling is off (``automatic_function_calling.disable``), so the loop is
the manual one of Google's function-calling guide
(https://ai.google.dev/gemini-api/docs/function-calling): send ``contents`` with the
function declarations; while the reply's content holds ``function_call`` parts, append it
as the model turn, run each call, and answer them in one user turn of ``function_response``
parts (the call's name, its id when the model gave one, and the API's JSON as
``response``). The tool calls a flights API over HTTP (``GET /flights/<id>``). Replies are
read whole (``generate_content``) or streamed (``generate_content_stream``: the parts of
every chunk, adjacent text joined). Nothing here knows about toolreplay.
"""

from __future__ import annotations

from typing import Any

import requests
from google import genai
from google.genai import types

SYSTEM = "You report flight delays. Look every flight up with flight_status; never guess."

FLIGHT_STATUS = types.FunctionDeclaration(
    name="flight_status",
    description="Delay (minutes) and gate of one flight.",
    parameters_json_schema={
        "type": "object",
        "properties": {"flight": {"type": "string", "description": "e.g. LH-400"}},
        "required": ["flight"],
    },
)

CONFIG = types.GenerateContentConfig(
    system_instruction=SYSTEM,
    temperature=0.0,
    tools=[types.Tool(function_declarations=[FLIGHT_STATUS])],
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)


def flight_status(session: requests.Session, flights_url: str, flight: str) -> dict[str, Any]:
    """The flights API's JSON for one flight (``{"error"}`` for an unknown one)."""
    result: dict[str, Any] = session.get(f"{flights_url}/flights/{flight}", timeout=10).json()
    return result


def _streamed(client: genai.Client, model: str, contents: list[types.Content]) -> types.Content:
    parts: list[types.Part] = []
    for chunk in client.models.generate_content_stream(
        model=model, contents=contents, config=CONFIG
    ):
        for part in chunk.candidates[0].content.parts or []:  # type: ignore[index,union-attr]
            if part.text is not None and parts and parts[-1].text is not None:
                parts[-1] = types.Part(text=parts[-1].text + part.text)
            else:
                parts.append(part)
    return types.Content(role="model", parts=parts)


def ask(
    client: genai.Client,
    model: str,
    flights_url: str,
    question: str,
    *,
    stream: bool = False,
    max_rounds: int = 4,
) -> list[types.Content]:
    """Run the loop; returns ``contents`` (the last one the answer's model turn)."""
    session = requests.Session()
    session.trust_env = False
    contents = [types.Content(role="user", parts=[types.Part(text=question)])]
    for _ in range(max_rounds):
        if stream:
            content = _streamed(client, model, contents)
        else:
            reply = client.models.generate_content(model=model, contents=contents, config=CONFIG)
            content = reply.candidates[0].content  # type: ignore[index,assignment]
        contents.append(content)
        calls = [p.function_call for p in content.parts or [] if p.function_call]
        if not calls:
            break
        answers = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id,
                    name=call.name,
                    response=flight_status(session, flights_url, **(call.args or {})),
                )
            )
            for call in calls
        ]
        contents.append(types.Content(role="user", parts=answers))
    return contents


def answer_of(contents: list[types.Content]) -> str:
    """The text of the last model turn."""
    return "".join(p.text or "" for p in contents[-1].parts or [])
