"""A user's own tool-calling loop, tested with toolreplay.

The tool is a unit converter behind a small HTTP API (``GET /convert?value=&from=&to=``,
answering ``{"value": ..., "unit": ...}``); the loop is toolreplay's :func:`run_loop` host
with a toolset made from a plain Python function. Nothing here is specific to weather.
"""

from __future__ import annotations

from typing import Annotated, Any

import requests
from pydantic import Field

from toolreplay import ChatModel, Episode, LoopLimits, Toolset, run_loop, toolset_from_functions

SYSTEM = (
    "You convert units. Call convert_units for every conversion; never compute it yourself. "
    "Answer with the number and its unit."
)


def converter_toolset(session: requests.Session, base_url: str) -> Toolset:
    """One tool, ``convert_units``, calling the converter API at ``base_url``."""

    def convert_units(
        value: Annotated[float, Field(description="The quantity to convert.")],
        from_unit: Annotated[str, Field(description="Unit of value, e.g. mi, km, lb, kg.")],
        to_unit: Annotated[str, Field(description="Unit wanted.")],
    ) -> dict[str, Any]:
        """Convert a quantity from one unit to another."""
        response = session.get(
            f"{base_url}/convert",
            params={"value": value, "from": from_unit, "to": to_unit},
            timeout=10,
        )
        if response.status_code == 400:
            raise ValueError(response.json()["reason"])  # the model reads the reason
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    return toolset_from_functions("converter", [convert_units])


def ask(model: ChatModel, session: requests.Session, base_url: str, question: str) -> Episode:
    """Run one question through the loop (at most 4 rounds)."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
    return run_loop(model, converter_toolset(session, base_url), messages, LoopLimits(4, 4000))
