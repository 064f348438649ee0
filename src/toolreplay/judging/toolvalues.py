"""Tool values: every number in an episode's tool messages with its unit, field (JSON path), day
and place.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

from toolreplay.judging.units import unit_named
from toolreplay.judging.values import find_measured_values

if TYPE_CHECKING:
    pass


# Numbers under these keys are places, identifiers or times, never measurements.
_NOT_MEASUREMENT_KEYS = frozenset(
    {
        "latitude", "longitude", "lat", "lon", "lng", "elevation", "population", "id",
        "timezone", "utc_offset_seconds", "generationtime_ms", "time", "date", "interval",
    }
)  # fmt: skip


# A bare number (no unit beside it) counts only when its key says what it measures.
_KEY_UNITS = (
    ("probability", "%"), ("humidity", "%"), ("temperature", "°C"), ("precipitation", "mm"),
    ("rain", "mm"), ("wind", "km/h"),
)  # fmt: skip


@dataclass(frozen=True)
class ToolValue:
    """A measured value in a tool message: ``value`` in ``unit`` (as the tool wrote it),
    ``message_index`` into the transcript, the JSON ``path`` (``$`` for plain text), the
    ``day`` it is about (0 today, 1 tomorrow; None when the result does not say) and the
    ``place`` (``"name (admin1)"``; None when unknown)."""

    value: float
    unit: str
    kind: str
    message_index: int
    path: str
    day: int | None = None
    place: Mapping[str, Any] | None = None

    @property
    def text(self) -> str:
        return f"{self.value:g}{self.unit}"

    @property
    def field(self) -> str:
        """The last key of :attr:`path` (``temperature_2m_max``)."""
        return re.split(r"[.\[]", self.path)[-1].rstrip("]")

    @property
    def place_text(self) -> str | None:
        if self.place is None:
            return None
        return f"{self.place.get('name')} ({self.place.get('admin1', '?')})"

    def describe(self) -> str:
        """``30.9°C at $.current.temperature_2m of tool message 3 (北京 (北京市), today)``."""
        bits = [b for b in (self.place_text, _DAY_WORDS.get(self.day)) if b]
        where = f" ({', '.join(bits)})" if bits else ""
        return f"{self.text} at {self.path} of tool message {self.message_index}{where}"


_DAY_WORDS: dict[int | None, str] = {0: "today", 1: "tomorrow", 2: "the day after tomorrow"}


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _walk(
    node: Any, key: str, path: str, day: int | None
) -> Iterator[tuple[float, str, str, int | None]]:
    if isinstance(node, Mapping):
        value, unit = node.get("value"), node.get("unit")
        if _is_number(value) and isinstance(unit, str):
            yield float(value), unit, path, day
            return
        for k, v in node.items():
            d = 0 if (path == "$" and k == "current") else day
            yield from _walk(v, str(k), f"{path}.{k}", d)
    elif isinstance(node, list):
        for n, item in enumerate(node):
            d = n if (path == "$.daily" and day is None) else day
            yield from _walk(item, key, f"{path}[{n}]", d)
    elif _is_number(node):
        k = key.lower()
        if k in _NOT_MEASUREMENT_KEYS or k.endswith(("_id", "_code")):
            return
        unit = next((u for word, u in _KEY_UNITS if word in k), None)
        if unit is not None:
            yield float(node), unit, path, day


def _calls_by_id(transcript: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, Any]]:
    out: dict[str, tuple[str, Any]] = {}
    for m in transcript:
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = None
            out[str(tc.get("id"))] = (str(fn.get("name")), args)
    return out


def _candidates(payload: Any) -> list[Mapping[str, Any]]:
    if isinstance(payload, Mapping):
        found = [payload] if {"latitude", "longitude", "name"} <= set(payload) else []
        for v in payload.values():
            found += _candidates(v)
        return found
    if isinstance(payload, list):
        return [c for item in payload for c in _candidates(item)]
    return []


#: tool_values of recent transcripts, by object: the judge, the classifier and the audit read
#: the same episode's tool values many times. Only tuples (an episode's transcript, never
#: changed after the episode is made) are kept, each with the transcript itself so that its
#: id cannot be reused; at most _TOOL_VALUES_KEPT, oldest dropped first.
_TOOL_VALUES: dict[int, tuple[Sequence[Mapping[str, Any]], tuple[ToolValue, ...]]] = {}


_TOOL_VALUES_KEPT = 4096


def tool_values(transcript: Sequence[Mapping[str, Any]]) -> tuple[ToolValue, ...]:
    """Every measured value in the transcript's tool messages, with field, day and place.

    JSON content: ``{"value": 30.9, "unit": "°C"}`` pairs, and bare numbers whose key names
    what they measure (``temperature``, ``precipitation``, ``humidity``, ``wind``...); numbers
    under coordinate, identifier and time keys never count. Plain-text content is read with
    :func:`scan` (day and place unknown). Units are read with the full :data:`UNITS` table:
    what a tool returned does not depend on the judge."""
    if not isinstance(transcript, tuple):
        return _tool_values(transcript)
    hit = _TOOL_VALUES.get(id(transcript))
    if hit is not None and hit[0] is transcript:
        return hit[1]
    values = _tool_values(transcript)
    if len(_TOOL_VALUES) >= _TOOL_VALUES_KEPT:
        _TOOL_VALUES.pop(next(iter(_TOOL_VALUES)), None)
    _TOOL_VALUES[id(transcript)] = (transcript, values)
    return values


def _tool_values(transcript: Sequence[Mapping[str, Any]]) -> tuple[ToolValue, ...]:
    calls = _calls_by_id(transcript)
    geocoded: list[Mapping[str, Any]] = []
    found: list[ToolValue] = []
    for index, message in enumerate(transcript):
        if message.get("role") != "tool":
            continue
        content = message.get("content")
        if not isinstance(content, str):
            continue
        try:
            payload = json.loads(content)
        except ValueError:
            for mv in find_measured_values(content):
                found.append(ToolValue(mv.value, mv.unit, mv.kind, index, "$"))
            continue
        _, args = calls.get(str(message.get("tool_call_id")), ("", None))
        place: Mapping[str, Any] | None = None
        if isinstance(payload, Mapping) and isinstance(payload.get("place"), Mapping):
            place = payload["place"]
        elif isinstance(args, Mapping) and "latitude" in args and "longitude" in args:
            place = _place_at(geocoded, args)
        if isinstance(payload, Mapping) and "candidates" in payload:
            geocoded += _candidates(payload.get("candidates"))
        for value, unit_text, path, day in _walk(payload, "", "$", None):
            unit = unit_named(unit_text)
            if unit is None:
                continue
            found.append(ToolValue(value, unit_text, unit.kind, index, path, day, place))
    return tuple(found)


def _place_at(
    candidates: Sequence[Mapping[str, Any]], args: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    try:
        lat, lon = float(args["latitude"]), float(args["longitude"])
    except (TypeError, ValueError):
        return None
    for c in candidates:
        try:
            if abs(float(c["latitude"]) - lat) <= 0.01 and abs(float(c["longitude"]) - lon) <= 0.01:
                return c
        except (TypeError, ValueError, KeyError):
            continue
    return None
