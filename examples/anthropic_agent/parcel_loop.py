"""A hand-written tool-use loop on the anthropic SDK: a parcel-tracking assistant.

The loop follows Anthropic's tool-use guide
(https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use): send the
conversation with the tools; while the reply stops for ``tool_use``, append the reply's
content as the assistant turn, run each ``tool_use`` block, and answer them all in one user
turn of ``tool_result`` blocks (``tool_use_id``, ``content``; ``is_error: true`` with the
error text when the tool failed). The tool calls a tracking API over HTTP
(``GET /parcels/<id>``). Replies are read whole (``messages.create``) or streamed
(``messages.stream(...).get_final_message()``). Nothing here knows about toolreplay.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import requests

SYSTEM = "You track parcels. Look every parcel up with track_parcel; never guess a date."

TOOLS = [
    {
        "name": "track_parcel",
        "description": "Status and days until delivery of one parcel.",
        "input_schema": {
            "type": "object",
            "properties": {"parcel_id": {"type": "string", "description": "e.g. P-100"}},
            "required": ["parcel_id"],
        },
    }
]


def track_parcel(session: requests.Session, tracking_url: str, parcel_id: str) -> dict[str, Any]:
    """The ``tool_result`` block for one lookup: the API's JSON, or its error text with
    ``is_error`` when it answers 404."""
    reply = session.get(f"{tracking_url}/parcels/{parcel_id}", timeout=10)
    data = reply.json()
    if reply.status_code != 200:
        return {"content": str(data.get("error")), "is_error": True}
    return {"content": json.dumps(data)}


def ask(
    client: anthropic.Anthropic,
    model: str,
    tracking_url: str,
    question: str,
    *,
    stream: bool = False,
    max_rounds: int = 4,
) -> list[dict[str, Any]]:
    """Run the loop; returns the conversation (``messages`` as sent, the last one the
    answer's assistant turn)."""
    session = requests.Session()
    session.trust_env = False
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(max_rounds):
        request: dict[str, Any] = {"model": model, "max_tokens": 1024, "system": SYSTEM,
                                   "tools": TOOLS, "messages": messages}  # fmt: skip
        if stream:
            with client.messages.stream(**request) as events:
                reply = events.get_final_message()
        else:
            reply = client.messages.create(**request)
        messages.append({"role": "assistant", "content": [b.to_dict() for b in reply.content]})
        if reply.stop_reason != "tool_use":
            break
        results = []
        for block in reply.content:
            if block.type == "tool_use":
                result = track_parcel(session, tracking_url, **block.input)
                results.append({"type": "tool_result", "tool_use_id": block.id, **result})
        messages.append({"role": "user", "content": results})
    return messages


def answer_of(messages: list[dict[str, Any]]) -> str:
    """The text of the last assistant turn."""
    return "".join(b["text"] for b in messages[-1]["content"] if b["type"] == "text")
