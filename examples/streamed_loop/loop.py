"""A hand-written tool-calling loop on the raw openai SDK, streaming every reply.

The loop asks for ``stream=True`` (with ``stream_options.include_usage``), assembles the text
and the tool calls from the deltas itself (a tool call's id and name come on its first chunk,
its arguments in pieces, by ``index``), runs the tools (plain Python, an order book) and sends
the results back, until the model answers. Nothing here knows about toolreplay.
"""

from __future__ import annotations

import json
from typing import Any

from openai import OpenAI

SYSTEM = "You track orders. Look every order up with the tools; never guess a date or a count."

ORDERS = {
    "A-1001": {"order_id": "A-1001", "status": "shipped", "eta_days": 2, "items": 3},
    "A-1002": {"order_id": "A-1002", "status": "packing", "eta_days": 5, "items": 1},
}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Status, delivery estimate (days) and item count of one order.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string", "description": "e.g. A-1001"}},
                "required": ["order_id"],
            },
        },
    }
]


def get_order(order_id: str) -> dict[str, Any]:
    return ORDERS.get(order_id) or {"error": f"no order {order_id}"}


def assemble(stream: Any) -> tuple[str | None, list[dict[str, Any]]]:
    """The text and the tool calls of a streamed reply."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in stream:
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                text.append(delta.content)
            for d in delta.tool_calls or []:
                call = calls.setdefault(
                    d.index,
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                call["id"] = d.id or call["id"]
                if d.function is not None:
                    call["function"]["name"] += d.function.name or ""
                    call["function"]["arguments"] += d.function.arguments or ""
    return ("".join(text) or None), [calls[i] for i in sorted(calls)]


def ask(client: OpenAI, model: str, question: str, max_rounds: int = 4) -> list[dict[str, Any]]:
    """Run the loop; returns the conversation (the last message is the answer)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": question},
    ]
    for _ in range(max_rounds):
        stream = client.chat.completions.create(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
        )
        content, calls = assemble(stream)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        messages.append(message)
        if not calls:
            break
        for call in calls:
            result = get_order(**json.loads(call["function"]["arguments"]))
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}
            )
    return messages
