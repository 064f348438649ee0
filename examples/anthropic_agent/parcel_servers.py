"""What the example records against, on loopback: the tracking API and a scripted model
(``toolreplay.doubles.scripted``, answering the Anthropic Messages API). Only needed to
(re-)record; replay uses the cassettes.

The scripted model's reply is a function of the conversation (in Chat Completions form, the
tool results as ``tool`` messages, a failed one marked ``is_error``) and of the trial."""

from __future__ import annotations

import json
import re
from typing import Any

PARCELS = {
    "P-100": {"parcel_id": "P-100", "status": "in transit", "eta_days": 2},
    "P-200": {"parcel_id": "P-200", "status": "at the depot", "eta_days": 1},
}


def tracking_api(method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
    """``GET /parcels/<id>`` → ``{"parcel_id", "status", "eta_days"}``; 404 ``{"error"}``
    for an unknown id."""
    match = re.fullmatch(r"/parcels/(P-\d+)", path)
    if method != "GET" or match is None:
        return 404, {"error": f"no {method} {path}"}
    parcel = PARCELS.get(match.group(1))
    if parcel is None:
        return 404, {"error": f"no parcel {match.group(1)} in the tracking system"}
    return 200, parcel


def parcel_policy(trial: int = 1) -> Any:
    """The scripted model for one trial: a function of the conversation returning the next
    assistant message. It looks up every parcel id in the question, then answers from the
    results; told a lookup failed it says so, except in trial 2, where it guesses a date
    (on purpose: the eval file catches it)."""

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        question = next(m["content"] for m in messages if m["role"] == "user")
        if isinstance(question, list):  # content blocks
            question = "".join(p.get("text", "") for p in question)
        ids = re.findall(r"P-\d+", question)
        tools = [m for m in messages if m["role"] == "tool"]
        if not tools:
            calls = [
                {"id": f"toolu_{i.replace('-', '')}_{n}", "function": {"name": "track_parcel",
                 "arguments": json.dumps({"parcel_id": i})}}
                for n, i in enumerate(ids, 1)
            ]  # fmt: skip
            return {"content": "Let me look that up.", "tool_calls": calls}
        parts = []
        for m, parcel_id in zip(tools, ids, strict=False):
            if m.get("is_error"):
                if trial == 2:
                    parts.append(f"Parcel {parcel_id} arrives in 3 days")  # guessed
                else:
                    parts.append(f"I could not find parcel {parcel_id}: {m['content']}")
                continue
            r = json.loads(m["content"])
            parts.append(
                f"Parcel {r['parcel_id']} is {r['status']} and arrives in {r['eta_days']} "
                f"day{'s' if r['eta_days'] != 1 else ''}"
            )
        return {"content": "; ".join(parts) + "."}

    return reply
