"""What the example records against, on loopback: the catalogue API and a scripted model.
Only needed to (re-)record; replay uses the cassettes.

The scripted model is a test double (``toolreplay.doubles.scripted``): its reply is a
function of the conversation (the question and the tool results so far, in Chat Completions
form whatever wire the agent speaks) and of the trial, so that some trials fail on purpose
(a lookup skipped, a number invented) and the report has something to show.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

BOOKS = {
    "B-101": {"book_id": "B-101", "title": "Dune", "copies": 3},
    "B-205": {"book_id": "B-205", "title": "Emma", "copies": 0},
    "B-310": {"book_id": "B-310", "title": "Middlemarch", "copies": 5},
}


def catalogue_api(method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
    """``GET /books/<id>`` → ``{"book_id", "title", "copies"}``; 404 ``{"error"}`` for an
    unknown id."""
    match = re.fullmatch(r"/books/([A-Z]-\d+)", path)
    if method != "GET" or match is None:
        return 404, {"error": f"no {method} {path}"}
    book = BOOKS.get(match.group(1))
    if book is None:
        return 404, {"error": f"no book {match.group(1)}"}
    return 200, book


def _data(text: Any) -> dict[str, Any]:
    """A tool message's content as data: JSON, or the ``str(dict)`` openai-agents sends."""
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
        except (TypeError, ValueError, SyntaxError):
            continue
        if isinstance(value, dict):
            return value
    return {"error": str(text)}


def _call(book_id: str, trial: int) -> dict[str, Any]:
    return {"id": f"call_{book_id}_{trial}", "function": {"name": "find_book",
            "arguments": json.dumps({"book_id": book_id})}}  # fmt: skip


def library_policy(trial: int = 1) -> Any:
    """The scripted model for one trial: a function of the conversation (Chat Completions
    messages) returning the next assistant message."""

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        question = next(m["content"] for m in messages if m["role"] == "user")
        if isinstance(question, list):  # content parts
            question = "".join(p.get("text", "") for p in question)
        ids = re.findall(r"[A-Z]-\d+", question)
        results = [_data(m["content"]) for m in messages if m["role"] == "tool"]
        if not results:
            if trial == 2 and len(ids) > 1:  # this trial forgets the second book
                ids = ids[:1]
            return {"content": None, "tool_calls": [_call(i, trial) for i in ids]}
        parts = []
        for r in results:
            if "copies" in r:
                parts.append(f"{r['book_id']} ({r['title']}): {r['copies']} copies available")
            else:  # an unknown book: this double invents a number, on purpose
                parts.append(f"{ids[0]}: 2 copies available")
        return {"content": "; ".join(parts) + "."}

    return reply
