"""The reference ``get_weather(city)``, as a specification: what the study's baseline tool sends
to Open-Meteo and which place it returns, written from the study's description and kept apart
from the code it audits.

The audit (:mod:`toolreplay.study.weather.baseline`) holds every recorded ``get_weather`` call
of the oneshot baseline against this module. It shares no code with
:mod:`toolreplay.study.weather.toolsets` or :mod:`toolreplay.study.weather.openmeteo` (a test
checks the imports): if the reference were imported from the implementation, "the place the
reference picks" would be whatever the implementation picks, and a weakened baseline would
audit as faithful.

Sources
-------
The study (seed 000) names the teacher's heuristics in one line: "老师原版用启发式解决地名歧义
（PPLA 优先 → 人口排序 → 补「市」字重查）" (admin seat first → population order → re-query with
市 added), and gives the answers they act on: bare 宁德 → one candidate, a PPL in 西藏 那曲;
宁德市 → 福建省 宁德市, PPLA2 (地级市驻地), population 429,260; 北京 → the capital (PPLC) and two
same-name villages. It also tells the near-miss: a first reconstruction that lost the 市 retry
read single+oneshot 2/4 instead of 4/4. The project's design (DESIGN.md, "Baseline tool,
reconstructed from the study's description") makes it precise: ``get_weather(city)`` geocodes
with ``language=zh, count=10``; prefers admin seats (``PPLC, PPLA, PPLA2, PPLA3, PPLA4``);
among those, the largest population; if no admin seat is found and the name does not already
end in 市, it re-queries ``city + "市"`` and picks again; then it fetches the forecast for the
chosen coordinates. The tool's own description (what the model is promised) fixes the forecast:
"今天起 3 天的天气：当前气温、湿度、风速，以及每天的最高/最低气温和降水量（带单位）".

The specification
-----------------
1. **Geocoding query** (:func:`geocoding_query`): ``name=<city>``, ``count=10``,
   ``language=zh`` (``format`` absent or ``json``, the API's default); nothing else. Ten
   candidates, so the heuristics have the same-name places to choose among; Chinese names, so
   the 市 retry and the answers read as the study's.
2. **Admin seat** (:data:`ADMIN_SEATS`): a candidate whose GeoNames ``feature_code`` is one of
   ``PPLC`` (capital), ``PPLA`` (seat of a first-order division: a province), ``PPLA2``
   (second-order: a prefecture-level city such as 宁德市), ``PPLA3`` (a county), ``PPLA4``
   (a township). The study writes "PPLA 优先"; the design widens it to every seat level, as the
   study's own example needs: 宁德市 is a ``PPLA2``.
3. **Pick** (:func:`pick`): among the candidates with coordinates (one without cannot be
   forecast), in the order Open-Meteo ranked them: with ``admin_seat``, a seat beats any other
   place; with ``population_order``, a larger ``population`` beats a smaller one (missing counts
   as 0); a tie keeps Open-Meteo's order. The seat comes first: a seat of 95,647 people beats a
   village of 163,326 (the two 通州). With both off, the first candidate.
4. **The 市 retry** (:func:`retry_due`): due when ``shi_retry`` is on, the name does not end in
   市, and the place picked from the first answer is not an admin seat, or there is none
   (with every heuristic on that is the same as "no admin seat among the candidates"). The
   retry is the same query (1.) for ``city + "市"``. Its pick (3.) replaces the first one when
   it found anything; when it found nothing, the first pick stands. One retry at most.
5. **Forecast query** (:func:`forecast_query`): ``latitude`` and ``longitude`` of the place
   picked; ``current`` = temperature, relative humidity, weather code, wind speed (at 2 m and
   10 m as Open-Meteo names them); ``daily`` = weather code, maximum and minimum temperature,
   precipitation sum, maximum wind speed; ``timezone=auto`` (so "today" and "tomorrow" are the
   place's own days); ``forecast_days=3`` (today and the next two); units left at Open-Meteo's
   defaults (°C, km/h, mm; a ``*_unit`` parameter, if sent, must name that default); nothing
   else. Variables are compared as sets (their order does not matter to the API).
6. **Errors**: geocoding that answers without ``results`` is "nothing found"; any other failed
   request ends the call (the tool reports the error; no retry, no forecast).

Each heuristic can be switched off for the ablated baselines (``on``): the ablated baseline is
the reference without exactly that heuristic.

Worked examples (the recorded fixture answers; ``tests/test_audit_reference.py`` holds the
whole table): 宁德 → the 西藏 village (PPL, not a seat) → retry 宁德市 → 宁德市 (福建省 PPLA2).
北京 → 北京 (PPLC) over two villages, no retry. 长沙 → 长沙 (湖南省 PPLA, 3,093,980) over
长沙 (广东省 PPLA3, 688,242, ranked first): both are seats, population decides. 通州区 → 通州
(江苏省 PPLA3) over the larger 通州 (北京市 PPL): the seat decides; no retry. 厦门 → 厦门 (福建省
PPLA2): a seat, so no retry is due. 丽江 → the 湖南 village → retry 丽江市 → 丽江市 (云南 PPLA2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: The reference heuristics, in the study's order ("PPLA 优先 → 人口排序 → 补「市」字重查").
HEURISTICS = ("admin_seat", "population_order", "shi_retry")

#: GeoNames feature codes of administrative seats (2. above), capital first.
ADMIN_SEATS = ("PPLC", "PPLA", "PPLA2", "PPLA3", "PPLA4")

#: The suffix the 市 retry adds.
SHI = "市"

#: Geocoding parameters besides ``name`` (1. above); ``format`` may be left out.
GEOCODING = {"count": "10", "language": "zh", "format": "json"}
GEOCODING_OPTIONAL = {"format"}

#: Forecast variables (5. above).
FORECAST_CURRENT = frozenset(
    {"temperature_2m", "relative_humidity_2m", "weather_code", "wind_speed_10m"}
)
FORECAST_DAILY = frozenset(
    {
        "weather_code",
        "temperature_2m_max",
        "temperature_2m_min",
        "precipitation_sum",
        "wind_speed_10m_max",
    }
)
#: Forecast parameters besides the coordinates and the variables (5. above); the unit
#: parameters and ``timeformat`` may be left out (their values here are Open-Meteo's defaults).
FORECAST = {
    "timezone": "auto",
    "forecast_days": "3",
    "temperature_unit": "celsius",
    "wind_speed_unit": "kmh",
    "precipitation_unit": "mm",
    "timeformat": "iso8601",
}
FORECAST_OPTIONAL = {"temperature_unit", "wind_speed_unit", "precipitation_unit", "timeformat"}


def is_seat(candidate: Mapping[str, Any]) -> bool:
    """The candidate is an administrative seat (2. above)."""
    return candidate.get("feature_code") in ADMIN_SEATS


def population(candidate: Mapping[str, Any]) -> int:
    """The candidate's ``population``; 0 when missing or not a number."""
    value = candidate.get("population")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value)


def has_coordinates(candidate: Any) -> bool:
    """The candidate has numeric ``latitude`` and ``longitude`` (it can be forecast)."""
    return isinstance(candidate, Mapping) and all(
        isinstance(candidate.get(k), (int, float)) and not isinstance(candidate.get(k), bool)
        for k in ("latitude", "longitude")
    )


def pick(
    candidates: Sequence[Mapping[str, Any]], on: Iterable[str] = HEURISTICS
) -> Mapping[str, Any] | None:
    """The candidate the reference picks (3. above) with the heuristics ``on``; None when no
    candidate has coordinates."""
    switched = set(on)
    best: tuple[tuple[int, int, int], Mapping[str, Any]] | None = None
    for rank, c in enumerate(candidates):
        if not has_coordinates(c):
            continue
        rank_key = (
            0 if "admin_seat" in switched and is_seat(c) else 1,
            -population(c) if "population_order" in switched else 0,
            rank,
        )
        if best is None or rank_key < best[0]:
            best = (rank_key, c)
    return None if best is None else best[1]


def retry_due(city: str, first: Mapping[str, Any] | None, on: Iterable[str] = HEURISTICS) -> bool:
    """The reference re-queries ``city + "市"`` after picking ``first`` (4. above)."""
    return (
        "shi_retry" in set(on) and not city.endswith(SHI) and (first is None or not is_seat(first))
    )


def retry_name(city: str) -> str:
    """The name the 市 retry queries."""
    return city + SHI


def final_pick(
    first: Mapping[str, Any] | None, retried: Mapping[str, Any] | None
) -> Mapping[str, Any] | None:
    """The place the reference returns after a retry that picked ``retried`` (4. above)."""
    return retried if retried is not None else first


def geocoding_query(name: str) -> dict[str, str]:
    """The geocoding query the reference sends for ``name`` (1. above), as URI parameters."""
    return {"name": name, **GEOCODING}


def forecast_query(place: Mapping[str, Any]) -> dict[str, Any]:
    """The forecast query the reference sends for ``place`` (5. above): coordinates as numbers,
    variables as sets, the rest as URI text."""
    return {
        "latitude": place.get("latitude"),
        "longitude": place.get("longitude"),
        "current": FORECAST_CURRENT,
        "daily": FORECAST_DAILY,
        **FORECAST,
    }


def _one(values: Sequence[str]) -> str:
    return values[0] if len(values) == 1 else ",".join(values)


def geocoding_differences(recorded: Mapping[str, Sequence[str]], name: str) -> list[str]:
    """How the recorded geocoding query (parsed URI parameters) differs from the reference's for
    ``name``, in words (``count=1 (reference: count=10)``); empty when it is the same."""
    return _differences(recorded, geocoding_query(name), GEOCODING_OPTIONAL)


def forecast_differences(
    recorded: Mapping[str, Sequence[str]], place: Mapping[str, Any]
) -> list[str]:
    """How the recorded forecast query differs from the reference's for ``place``, in words;
    empty when it is the same."""
    expected = forecast_query(place)
    out = []
    for key in ("latitude", "longitude"):
        got = recorded.get(key)
        want = expected[key]
        try:
            same = got is not None and float(_one(got)) == float(want)
        except (TypeError, ValueError):
            same = False
        if not same:
            shown = _one(got) if got is not None else "absent"
            out.append(f"{key}={shown} (reference: {want}, the place's)")
    for key in ("current", "daily"):
        got_vars = {v for value in recorded.get(key, ()) for v in value.split(",") if v}
        want_vars: frozenset[str] = expected[key]
        if got_vars != want_vars:
            parts = []
            if want_vars - got_vars:
                parts.append("without " + ", ".join(sorted(want_vars - got_vars)))
            if got_vars - want_vars:
                parts.append("with " + ", ".join(sorted(got_vars - want_vars)))
            out.append(f"{key} {' and '.join(parts)} (reference: {','.join(sorted(want_vars))})")
    placed = ("latitude", "longitude", "current", "daily")
    others = {k: v for k, v in recorded.items() if k not in placed}
    return out + _differences(others, FORECAST, FORECAST_OPTIONAL)


def _differences(
    recorded: Mapping[str, Sequence[str]], expected: Mapping[str, str], optional: set[str]
) -> list[str]:
    """``recorded`` against ``expected`` (``optional`` keys may be absent), in words."""
    out = []
    for key, want in expected.items():
        got = recorded.get(key)
        if got is None:
            if key not in optional:
                out.append(f"{key} absent (reference: {key}={want})")
        elif _one(got) != want:
            out.append(f"{key}={_one(got)} (reference: {key}={want})")
    for key in sorted(set(recorded) - set(expected)):
        out.append(f"{key}={_one(recorded[key])} (the reference sends no {key})")
    return out
