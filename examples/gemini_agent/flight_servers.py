"""What the example records against, on loopback: the flights API and a scripted model
(``toolreplay.doubles.scripted``, answering the Gemini API). Only needed to (re-)record;
replay uses the cassettes.

The scripted model's reply is a function of the conversation (in Chat Completions form) and
of the trial. Its function calls carry no id, as the Gemini API sends them."""

from __future__ import annotations

import json
import re
from typing import Any

FLIGHTS = {
    "LH-400": {"flight": "LH-400", "delay_minutes": 25, "gate": "B12"},
    "BA-117": {"flight": "BA-117", "delay_minutes": 0, "gate": "A3"},
}


def flights_api(method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
    """``GET /flights/<id>`` → ``{"flight", "delay_minutes", "gate"}``; 404 ``{"error"}``
    for an unknown flight."""
    match = re.fullmatch(r"/flights/([A-Z]{2}-\d+)", path)
    if method != "GET" or match is None:
        return 404, {"error": f"no {method} {path}"}
    flight = FLIGHTS.get(match.group(1))
    if flight is None:
        return 404, {"error": f"no flight {match.group(1)}"}
    return 200, flight


def flight_policy(trial: int = 1) -> Any:
    """The scripted model for one trial: a function of the conversation returning the next
    assistant message. It looks up every flight in the question at once, then answers; for
    an unknown flight it invents a delay (on purpose: the eval file catches it)."""

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        question = next(m["content"] for m in messages if m["role"] == "user")
        if isinstance(question, list):  # content parts
            question = "".join(p.get("text", "") for p in question)
        flights = re.findall(r"[A-Z]{2}-\d+", question)
        results = [
            {"error": m["content"]} if m.get("is_error") else json.loads(m["content"])
            for m in messages
            if m["role"] == "tool"
        ]
        if not results:
            calls = [{"id": "", "function": {"name": "flight_status",
                      "arguments": json.dumps({"flight": f})}} for f in flights]  # fmt: skip
            return {"content": None, "tool_calls": calls}
        parts = []
        for r in results:
            if "delay_minutes" not in r:
                parts.append(f"Flight {flights[0]} is delayed by 40 minutes")  # invented
            elif r["delay_minutes"]:
                parts.append(f"Flight {r['flight']} is delayed by {r['delay_minutes']} "
                             f"minutes (gate {r['gate']})")  # fmt: skip
            else:
                parts.append(f"Flight {r['flight']} is on time (gate {r['gate']})")
        return {"content": "; ".join(parts) + "."}

    return reply
