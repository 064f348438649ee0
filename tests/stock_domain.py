"""A non-weather domain for judging tests: a stock look-up (``lookup_sku``, units on hand) and a
price look-up (``get_price``, EUR), with episodes built as the hosts build them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolreplay.evals import MeasureDeclaration, UnitDeclaration
from toolreplay.wire.episode import Episode, ModelReply, Round, ToolCall, ToolResult, Usage

#: Units on hand: "12 units", "12 件"; the count sits in a tool result's ``on_hand``.
STOCK = MeasureDeclaration(
    "stock",
    (UnitDeclaration("units", ("unit", "pcs", "pieces", "件")),),
    words=("on hand", "in stock", "available", "库存", "stock"),
    fields=("on_hand", "$.items[*].qty"),
    entity=("sku",),
)

#: A price in EUR (cents converted): "€12.50", "12.50 EUR", "1250 cents".
PRICE = MeasureDeclaration(
    "price",
    (
        UnitDeclaration("EUR", ("euro", "euros", "€"), before=("€", "EUR")),
        UnitDeclaration("cents", ("cent",), scale=0.01),
    ),
    words=("price", "costs", "cost", "€", "EUR"),
    fields=("$.price.amount",),
    entity=("sku",),
)

STOCK_QUESTION = "How many ABC-1 and XYZ-2 are on hand?"


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id, name, json.dumps(arguments))


def episode(
    rounds: Sequence[tuple[Sequence[ToolCall], Sequence[dict[str, Any]] | None, str | None]],
    answer: str | None,
    *,
    question: str = STOCK_QUESTION,
    stop_reason: str = "converged",
    pending: Sequence[ToolCall] = (),
    refusal: str | None = None,
    error: str | None = None,
) -> Episode:
    """An episode: each of ``rounds`` is (tool calls, their results, narration); then a final
    reply with ``answer`` (None: no final reply, e.g. an API error) carrying ``pending`` tool
    calls the host never ran."""
    transcript: list[dict[str, Any]] = [{"role": "user", "content": question}]
    done_rounds: list[Round] = []
    for n, (calls, results, text) in enumerate(rounds, 1):
        reply = ModelReply(text, tuple(calls), "tool_calls")
        done = tuple(
            ToolResult(c, json.dumps(r, ensure_ascii=False))
            for c, r in zip(calls, results or (), strict=True)
        )
        transcript += [reply.to_message(), *(d.to_message() for d in done)]
        done_rounds.append(Round(n, True, reply, done))
    if answer is not None:
        final = ModelReply(
            answer or None,
            tuple(pending),
            "tool_calls" if pending else "stop",
            refusal=refusal,
        )
        transcript.append(final.to_message())
        done_rounds.append(Round(len(done_rounds) + 1, True, final))
    return Episode(
        "loop+lookup", "stock", question, tuple(transcript), tuple(done_rounds), stop_reason,
        answer or "", Usage(), error=error,
    )  # fmt: skip


ABC = call("c1", "lookup_sku", sku="ABC-1")
XYZ = call("c2", "lookup_sku", sku="XYZ-2")
ABC_RESULT = {"sku": "ABC-1", "on_hand": 12, "warehouse_id": 7}
XYZ_RESULT = {"sku": "XYZ-2", "on_hand": 0, "warehouse_id": 7}


def stock_episode(answer: str, **kw: Any) -> Episode:
    """Both SKUs looked up in one round (12 and 0 on hand), then ``answer``."""
    return episode([((ABC, XYZ), (ABC_RESULT, XYZ_RESULT), None)], answer, **kw)


CORRECT = "ABC-1: 12 units on hand; XYZ-2: 0 units on hand."
INVENTED = "ABC-1: 12 units on hand; XYZ-2: 0 units on hand; ZZZ-9: 99 units."
