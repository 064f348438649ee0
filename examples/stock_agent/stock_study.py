"""The stock-lookup domain as a toolreplay study: what a team supplies so that the engine's
configurations, hosts, judge, stand-in recording and report run on its own tools. A second
study beside the bundled weather one, in a few dozen lines.

Register it (``toolreplay.register_study(STUDY)``; this folder's conftest has a ``stock_study``
fixture that does) and name it in an eval file (``study: stock``, toolset ``inventory``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import requests
from servers import inventory_api, stock_policy

from toolreplay import Study
from toolreplay.doubles.loopback import serve
from toolreplay.doubles.scripted import reply_body, scripted_chat_server
from toolreplay.evals import MeasureDeclaration, UnitDeclaration
from toolreplay.judging.measures import measure_vocabulary
from toolreplay.tools.functions import toolset_from_functions
from toolreplay.tools.toolset import Toolset

#: Units on hand and prices in EUR, as the judge reads them in answers and tool results.
STOCK = MeasureDeclaration(
    "stock",
    (UnitDeclaration("units", ("unit", "pcs")),),
    words=("on hand", "in stock"),
    fields=("on_hand",),
    entity=("sku",),
)
PRICE = MeasureDeclaration(
    "price",
    (UnitDeclaration("EUR", ("euro", "euros"), before=("€",)),),
    words=("costs", "price"),
    fields=("$.price.amount",),
    entity=("sku",),
)


class InventoryClient:
    """The inventory API (``GET /stock/<sku>``, ``GET /price/<sku>``) over the
    ``requests.Session`` the engine passes in (live, fixture server or cassette replay)."""

    def __init__(self, session: requests.Session, url: str) -> None:
        self.session, self.url = session, url.rstrip("/")

    def get(self, kind: str, sku: str) -> dict[str, Any]:
        """The API's JSON answer for one SKU (an ``{"error": ...}`` body for an unknown one)."""
        result: dict[str, Any] = self.session.get(f"{self.url}/{kind}/{sku}", timeout=10).json()
        return result


def make_toolset(name: str, client: InventoryClient, heuristics: tuple[str, ...] | None) -> Toolset:
    """The ``inventory`` toolset (``check_stock``, ``get_price``) over ``client``."""
    if name != "inventory":
        raise ValueError(f"unknown toolset {name!r}; known: inventory")

    def check_stock(sku: str) -> dict[str, Any]:
        """Units on hand for a SKU."""
        return client.get("stock", sku)

    def get_price(sku: str) -> dict[str, Any]:
        """The price of a SKU, in EUR."""
        return client.get("price", sku)

    return toolset_from_functions("inventory", [check_stock, get_price])


@contextmanager
def fixture_server() -> Iterator[tuple[Mapping[str, str], str]]:
    """The inventory API on loopback, and the date its data is about."""
    with serve(inventory_api) as url:
        yield {"inventory_url": url}, "2026-12-01"


class _Standin:
    """The scripted model of ``servers.stock_policy`` in process, one trial."""

    def __init__(self, trial: int) -> None:
        self.policy = stock_policy(trial)

    def reply(self, body: Mapping[str, Any]) -> dict[str, Any]:
        request = dict(body)
        return reply_body(request, {"role": "assistant", **self.policy(request)}, 1)


@contextmanager
def standin_server(suite: Any, seed: int, trial: int) -> Iterator[str]:
    """The same scripted model on loopback; yields its ``.../v1`` URL."""
    with scripted_chat_server(stock_policy(trial)) as server:
        yield server.base_url


STUDY: Study[InventoryClient] = Study(
    name="stock",
    toolsets=("inventory",),
    make_toolset=make_toolset,
    tool_schemas=lambda: {"inventory": make_toolset("inventory", _NO_CLIENT, None).schemas},
    tool_client=lambda session, urls: InventoryClient(session, urls["inventory_url"]),
    tool_urls={"inventory_url": "https://inventory.example/api"},
    toolset_labels={"inventory": "check_stock, get_price"},
    vocabulary=measure_vocabulary((STOCK, PRICE), "stock"),
    fixture_server=fixture_server,
    standin_policy=lambda suite, seed, trial: _Standin(trial),
    standin_server=standin_server,
)
_NO_CLIENT = InventoryClient(requests.Session(), "")  # schemas only: never called
