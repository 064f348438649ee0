"""What the example records against, on loopback: the rooms API and a scripted model
(``toolreplay.doubles.scripted``, answering the Responses API). Only needed to (re-)record;
replay uses the cassettes.

The scripted model's reply is a function of the conversation (in Chat Completions form) and
of the trial, so that some trials fail on purpose (a round too many, a number invented)."""

from __future__ import annotations

import json
import re
from typing import Any

ROOMS = {
    "R-12": {"room": "R-12", "capacity": 8, "floor": 1},
    "R-30": {"room": "R-30", "capacity": 20, "floor": 3},
}


def rooms_api(method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
    """``GET /rooms/<id>`` → ``{"room", "capacity", "floor"}``; 404 ``{"error"}`` for an
    unknown room."""
    match = re.fullmatch(r"/rooms/(R-\d+)", path)
    if method != "GET" or match is None:
        return 404, {"error": f"no {method} {path}"}
    room = ROOMS.get(match.group(1))
    if room is None:
        return 404, {"error": f"no room {match.group(1)}"}
    return 200, room


def _call(room: str, n: int) -> dict[str, Any]:
    return {"id": f"call_{room}_{n}", "function": {"name": "room_info",
            "arguments": json.dumps({"room": room})}}  # fmt: skip


def room_policy(trial: int = 1) -> Any:
    """The scripted model for one trial: a function of the conversation returning the next
    assistant message."""

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        question = next(m["content"] for m in messages if m["role"] == "user")
        if isinstance(question, list):  # content parts
            question = "".join(p.get("text", "") for p in question)
        rooms = re.findall(r"R-\d+", question)
        results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        looked_up = len(results)
        if looked_up < len(rooms):
            if trial == 2:  # this trial looks the rooms up one round at a time
                return {"content": None, "tool_calls": [_call(rooms[looked_up], looked_up + 1)]}
            return {"content": None, "tool_calls": [_call(r, 1) for r in rooms]}
        known = [r for r in results if "capacity" in r]
        if not known:  # an unknown room: this double invents a capacity, on purpose
            return {"content": f"Room {rooms[0]} seats 12 people."}
        known.sort(key=lambda r: -r["capacity"])
        text = "; ".join(f"Room {r['room']} seats {r['capacity']} people" for r in known)
        return {"content": text + "."}

    return reply
