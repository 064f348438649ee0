"""Toolsets: the tool schemas offered to the model and the functions that execute tool calls.

Two toolsets, as in the reference study:

- ``oneshot``: ``get_weather(city)`` geocodes and forecasts in one call, choosing the place
  with the reference heuristics (a reconstruction from the study's description; the original
  code is not public). Each heuristic is a named switch in :class:`Heuristics`.
- ``atomic``: ``geocode_city(city)`` returns the candidates as Open-Meteo ranked them and
  chooses nothing; ``get_weather_by_coords(latitude, longitude)`` accepts coordinates only.

Tool results are JSON text whose measured values carry units: ``{"value": 30.9, "unit": "°C"}``
(units from Open-Meteo's ``current_units``/``daily_units``). Failures (bad arguments, an
Open-Meteo error) become a tool message ``{"error": ..., "reason": ...}`` for the model to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from toolreplay.study.weather.openmeteo import NoMatch, OpenMeteoClient
from toolreplay.tools.toolset import ToolError, Toolset

#: What the tools call, as tool error messages name it.
SERVICE = "Open-Meteo"

#: GeoNames feature codes of administrative seats, capital first.
ADMIN_SEAT_CODES = ("PPLC", "PPLA", "PPLA2", "PPLA3", "PPLA4")


#: WMO weather interpretation codes (Open-Meteo ``weather_code``), in Chinese.
WMO_CODES_ZH = {
    0: "晴", 1: "基本晴朗", 2: "局部多云", 3: "阴", 45: "雾", 48: "冻雾",
    51: "小毛毛雨", 53: "毛毛雨", 55: "强毛毛雨", 56: "冻毛毛雨", 57: "强冻毛毛雨",
    61: "小雨", 63: "中雨", 65: "大雨", 66: "冻雨", 67: "强冻雨",
    71: "小雪", 73: "中雪", 75: "大雪", 77: "雪粒",
    80: "小阵雨", 81: "阵雨", 82: "强阵雨", 85: "阵雪", 86: "强阵雪",
    95: "雷暴", 96: "雷暴伴小冰雹", 99: "雷暴伴大冰雹",
}  # fmt: skip


PLACE_FIELDS = (
    "name", "country", "admin1", "admin2", "latitude", "longitude", "feature_code", "population",
)  # fmt: skip


@dataclass(frozen=True)
class Heuristics:
    """The reference ``get_weather`` place-choice heuristics, each switchable for ablation.

    - ``admin_seat``: prefer candidates whose ``feature_code`` is an admin seat
      (``PPLC, PPLA, PPLA2, PPLA3, PPLA4``);
    - ``population_order``: order candidates by ``population``, largest first;
    - ``shi_retry``: when no admin seat was found and the name does not end in 市,
      geocode ``city + "市"`` and choose again.
    """

    admin_seat: bool = True
    population_order: bool = True
    shi_retry: bool = True

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def without(self, name: str) -> Heuristics:
        """A copy with heuristic ``name`` switched off (:class:`ValueError` if unknown)."""
        if name not in self.names():
            raise ValueError(f"unknown heuristic {name!r}; known: {', '.join(self.names())}")
        return replace(self, **{name: False})

    @property
    def disabled(self) -> tuple[str, ...]:
        return tuple(n for n in self.names() if not getattr(self, n))


def is_admin_seat(candidate: Mapping[str, Any]) -> bool:
    return candidate.get("feature_code") in ADMIN_SEAT_CODES


def choose_place(candidates: list[dict[str, Any]], heuristics: Heuristics) -> dict[str, Any] | None:
    """Pick one geocoding candidate the way the reference baseline does.

    Population order (a stable sort, largest first; missing population counts as 0) comes
    first, then the first admin seat in that order is taken; with ``admin_seat`` off, or when no
    candidate is an admin seat, the first candidate is taken. None when ``candidates`` is empty.
    """
    pool = list(candidates)
    if not pool:
        return None
    if heuristics.population_order:
        pool.sort(key=lambda c: -(c.get("population") or 0))
    if heuristics.admin_seat:
        seats = [c for c in pool if is_admin_seat(c)]
        if seats:
            return seats[0]
    return pool[0]


def describe_place(candidate: Mapping[str, Any]) -> dict[str, Any]:
    """The candidate's fields a model needs, in a stable order (absent or null fields
    omitted)."""
    return {k: candidate[k] for k in PLACE_FIELDS if candidate.get(k) is not None}


def _has_coordinates(candidate: Any) -> bool:
    return isinstance(candidate, Mapping) and all(
        isinstance(candidate.get(k), (int, float)) and not isinstance(candidate.get(k), bool)
        for k in ("latitude", "longitude")
    )


def _with_unit(value: Any, unit: str | None) -> Any:
    if unit is None or unit in ("iso8601", "wmo code", "seconds") or value is None:
        return value
    return {"value": value, "unit": unit}


def _weather(code: Any) -> str | None:
    """The WMO code in Chinese; None (left out) when the code is missing or not a number."""
    if isinstance(code, bool) or not isinstance(code, (int, float)):
        return None
    return WMO_CODES_ZH.get(int(code), f"WMO {int(code)}")


def summarize_forecast(body: Mapping[str, Any]) -> dict[str, Any]:
    """Turn an Open-Meteo forecast body into the tool result's weather part.

    ``current``: the ``current`` block, each measured value as ``{"value", "unit"}`` from
    ``current_units``, plus ``weather`` (the WMO code in Chinese). ``daily``: one dict per day
    (``date`` from ``daily.time``), same conventions with ``daily_units``.

    Gaps never reach the model as placeholders: a variable whose value is null (or whose
    series is missing, null or too short) is left out of its block and named in that block's
    ``missing`` list; a block the body lacks is left out. :class:`ToolError` when the body
    holds neither current nor daily values."""
    out: dict[str, Any] = {
        k: body[k] for k in ("latitude", "longitude", "timezone") if body.get(k) is not None
    }
    current = body.get("current")
    units = body.get("current_units")
    units = units if isinstance(units, Mapping) else {}
    if isinstance(current, Mapping) and current:
        cur: dict[str, Any] = {}
        missing: list[str] = []
        for key, value in current.items():
            if key == "interval":
                continue
            if value is None:
                missing.append(key)
                continue
            cur[key] = _with_unit(value, units.get(key))
            if key == "weather_code" and _weather(value) is not None:
                cur["weather"] = _weather(value)
        if missing:
            cur["missing"] = missing
        if set(cur) - {"time", "missing"}:
            out["current"] = cur
    daily = body.get("daily")
    daily = daily if isinstance(daily, Mapping) else {}
    dunits = body.get("daily_units")
    dunits = dunits if isinstance(dunits, Mapping) else {}
    dates = daily.get("time")
    days = []
    for i, date in enumerate(dates if isinstance(dates, list) else []):
        if date is None:
            continue
        day: dict[str, Any] = {"date": date}
        gaps: list[str] = []
        for key, series in daily.items():
            if key == "time":
                continue
            value = series[i] if isinstance(series, list) and i < len(series) else None
            if value is None:
                gaps.append(key)
                continue
            day[key] = _with_unit(value, dunits.get(key))
            if key == "weather_code" and _weather(value) is not None:
                day["weather"] = _weather(value)
        if gaps:
            day["missing"] = gaps
        days.append(day)
    if any(set(d) - {"date", "missing"} for d in days):
        out["daily"] = days
    if "current" not in out and "daily" not in out:
        raise ToolError("Open-Meteo returned no weather values for this point")
    return out


CITY_PARAM = {
    "type": "string",
    "description": "城市或地点的中文名，例如：北京、宁德市、广州",
    "minLength": 1,
}


GET_WEATHER_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": (
            "用户询问某个城市的天气、气温、降水时调用。按城市名查询该城市今天起 3 天的天气："
            "当前气温、湿度、风速，以及每天的最高/最低气温和降水量（带单位）。"
            "同名地点会自动选择行政中心。多个城市请分别调用。"
        ),
        "parameters": {
            "type": "object",
            "properties": {"city": CITY_PARAM},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


GEOCODE_CITY_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "geocode_city",
        "description": (
            "需要某个地点的经纬度时调用（查天气之前先调用它）。返回地理编码服务按相关度排好的"
            "候选地点列表：名称、国家、省份(admin1)、经纬度、类型(feature_code)、人口；"
            "不替你做选择，同名地点请根据省份自己判断。查不到时候选列表为空，可换个写法再查。"
        ),
        "parameters": {
            "type": "object",
            "properties": {"city": CITY_PARAM},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


GET_WEATHER_BY_COORDS_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather_by_coords",
        "description": (
            "已经知道经纬度、需要该地天气时调用。只接受坐标，不接受地名（地名请先用 "
            "geocode_city 查坐标）。返回当前气温、湿度、风速，以及今天起 3 天每天的最高/最低"
            "气温和降水量（带单位）。"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "latitude": {
                    "type": "number",
                    "minimum": -90,
                    "maximum": 90,
                    "description": "纬度（度），例如 39.9075",
                },
                "longitude": {
                    "type": "number",
                    "minimum": -180,
                    "maximum": 180,
                    "description": "经度（度），例如 116.3972",
                },
            },
            "required": ["latitude", "longitude"],
            "additionalProperties": False,
        },
    },
}


TOOLSET_NAMES = ("oneshot", "atomic")


def oneshot_toolset(client: OpenMeteoClient, heuristics: Heuristics | None = None) -> Toolset:
    """``get_weather(city)`` with the reference heuristics (all on unless ``heuristics`` says)."""
    h = heuristics or Heuristics()

    def search(name: str) -> list[dict[str, Any]]:
        try:
            return [c for c in client.search(name, count=10, language="zh") if _has_coordinates(c)]
        except NoMatch:
            return []

    def get_weather(city: str) -> dict[str, Any]:
        chosen = choose_place(search(city), h)
        if (
            h.shi_retry
            and (chosen is None or not is_admin_seat(chosen))
            and not city.endswith("市")
        ):
            retry = choose_place(search(city + "市"), h)
            if retry is not None:
                chosen = retry
        if chosen is None:
            raise ToolError(f"找不到名为「{city}」的地点")
        body = client.forecast(chosen["latitude"], chosen["longitude"])
        return {"place": describe_place(chosen), **summarize_forecast(body)}

    return Toolset("oneshot", (GET_WEATHER_SCHEMA,), {"get_weather": get_weather}, service=SERVICE)


def atomic_toolset(client: OpenMeteoClient) -> Toolset:
    """``geocode_city`` (all candidates, as ranked) and ``get_weather_by_coords``."""

    def geocode_city(city: str) -> dict[str, Any]:
        try:
            results = [c for c in client.search(city, count=10, language="zh")
                       if _has_coordinates(c)]  # fmt: skip
        except NoMatch:
            results = []
        if not results:
            return {"query": city, "candidates": [], "note": "没有找到这个名字的地点"}
        return {"query": city, "candidates": [describe_place(r) for r in results]}

    def get_weather_by_coords(latitude: float, longitude: float) -> dict[str, Any]:
        return summarize_forecast(client.forecast(latitude, longitude))

    return Toolset(
        "atomic",
        (GEOCODE_CITY_SCHEMA, GET_WEATHER_BY_COORDS_SCHEMA),
        {"geocode_city": geocode_city, "get_weather_by_coords": get_weather_by_coords},
        service=SERVICE,
    )


def make_toolset(
    name: str, client: OpenMeteoClient, heuristics: Heuristics | None = None
) -> Toolset:
    """The toolset called ``name`` (``oneshot`` or ``atomic``) over ``client``."""
    if name == "oneshot":
        return oneshot_toolset(client, heuristics)
    if name == "atomic":
        if heuristics is not None and heuristics.disabled:
            raise ValueError("heuristics only apply to the oneshot toolset")
        return atomic_toolset(client)
    raise ValueError(f"unknown toolset {name!r}; known: {', '.join(TOOLSET_NAMES)}")


def all_tool_schemas() -> dict[str, tuple[dict[str, Any], ...]]:
    """Every toolset's schemas, for hashing into the cassette manifest."""
    return {
        "oneshot": (GET_WEATHER_SCHEMA,),
        "atomic": (GEOCODE_CITY_SCHEMA, GET_WEATHER_BY_COORDS_SCHEMA),
    }
