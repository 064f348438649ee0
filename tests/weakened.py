"""Weakened baselines for the audit's tests: a oneshot toolset whose get_weather differs from
the real one only in its 市 retry, as a careless reimplementation would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def weakened_oneshot(
    real: Callable[..., Any],
    *,
    retry_due: Callable[[Any, Any], bool] | None = None,
    keep_retry: bool = True,
    retry_count: int = 10,
) -> Callable[..., Any]:
    """``oneshot_toolset`` over the real one's schemas whose 市 retry is sent when
    ``retry_due(chosen, heuristics)`` says (default: the reference's rule, no admin seat
    chosen) and whose answer is kept, or sent and thrown away (``keep_retry=False``), asking
    for ``retry_count`` candidates. Otherwise as the real one (candidates without coordinates
    are left out)."""
    from toolreplay.study.weather.openmeteo import NoMatch
    from toolreplay.study.weather.toolsets import (
        Heuristics,
        choose_place,
        describe_place,
        is_admin_seat,
        summarize_forecast,
    )
    from toolreplay.tools.toolset import ToolError, Toolset

    def due(chosen: Any, h: Any) -> bool:
        return chosen is None or not is_admin_seat(chosen)

    retry_due = retry_due or due

    def oneshot_toolset(client: Any, heuristics: Any = None) -> Any:
        h = heuristics or Heuristics()

        def search(name: str, count: int = 10) -> list[dict[str, Any]]:
            try:
                found = client.search(name, count=count, language="zh")
            except NoMatch:
                return []
            return [c for c in found if "latitude" in c and "longitude" in c]

        def get_weather(city: str) -> dict[str, Any]:
            chosen = choose_place(search(city), h)
            if h.shi_retry and retry_due(chosen, h) and not city.endswith("市"):
                retried = choose_place(search(city + "市", retry_count), h)
                if keep_retry and retried is not None:
                    chosen = retried
            if chosen is None:
                raise ToolError(f"找不到名为「{city}」的地点")
            body = client.forecast(chosen["latitude"], chosen["longitude"])
            return {"place": describe_place(chosen), **summarize_forecast(body)}

        return Toolset("oneshot", real(client, h).schemas, {"get_weather": get_weather})

    return oneshot_toolset
