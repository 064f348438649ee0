"""What the example records against, on loopback: the inventory API and a scripted
OpenAI-compatible model. Only needed to (re-)record; replay uses the cassettes.

The scripted model is a test double (``toolreplay.doubles.scripted``): its replies are a
function of the request (the question and the tool results so far) and of the trial, so that
some trials fail on purpose (a lookup skipped, a number invented) and the report has
something to show.

pydantic-ai runs a reply's parallel tool calls concurrently, so a re-recording may hold the
two lookups' HTTP requests in the other order; replay matches each request wherever it is.
"""

from __future__ import annotations

import json
import re
from typing import Any

STOCK = {"ABC-1": 12, "XYZ-2": 0, "QRS-7": 40}
PRICE = {"ABC-1": 19.9, "XYZ-2": 5.5, "QRS-7": 2.25}


def inventory_api(method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
    """``GET /stock/<sku>`` → ``{"sku", "on_hand"}``; ``GET /price/<sku>`` →
    ``{"sku", "price": {"amount", "currency"}}``; 404 ``{"error"}`` for an unknown SKU."""
    match = re.fullmatch(r"/(stock|price)/([A-Z]{3}-\d+)", path)
    if method != "GET" or match is None:
        return 404, {"error": f"no {method} {path}"}
    kind, sku = match.groups()
    if sku not in STOCK:
        return 404, {"error": f"unknown SKU {sku}"}
    if kind == "stock":
        return 200, {"sku": sku, "on_hand": STOCK[sku]}
    return 200, {"sku": sku, "price": {"amount": PRICE[sku], "currency": "EUR"}}


def _call(n: int, name: str, sku: str) -> dict[str, Any]:
    return {"id": f"call_{sku}_{name}_{n}", "function": {"name": name,
            "arguments": json.dumps({"sku": sku})}}  # fmt: skip


def _results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        if m.get("role") == "tool":
            try:
                out.append(json.loads(m["content"]))
            except (TypeError, ValueError):
                out.append({"error": str(m.get("content"))})
    return out


def stock_policy(trial: int = 1) -> Any:
    """The scripted model's policy for one trial (a function of the request body)."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        question = next(m["content"] for m in messages if m["role"] == "user")
        skus = re.findall(r"[A-Z]{3}-\d+", question)
        results = _results(messages)
        wants_price = "cost" in question or "price" in question
        wants_stock = "on hand" in question or "in stock" in question
        if not results:
            if trial == 3:  # this trial forgets the second SKU
                skus = skus[:1]
            name = "check_stock" if wants_stock else "get_price"
            return {"content": None, "tool_calls": [_call(1, name, s) for s in skus]}
        if wants_stock and wants_price and not any("price" in r for r in results):
            return {"content": None, "tool_calls": [_call(2, "get_price", s) for s in skus]}
        parts = []
        for r in results:
            if "on_hand" in r:
                parts.append(f"{r['sku']}: {r['on_hand']} units on hand")
            elif "price" in r:
                parts.append(f"{r['sku']} costs €{r['price']['amount']:.2f}")
            else:  # an unknown SKU: this double invents a number, on purpose
                parts.append(f"{skus[0]}: 99 units on hand")
        return {"content": "; ".join(parts) + "."}

    return reply
