"""Units as written after a number, with their kind and the conversion to the kind's canonical unit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class Unit:
    """A unit as written after a number: ``name`` (shown in evidence), ``pattern`` (a regex
    matched right after the number, case-insensitive unless it says otherwise), ``kind``,
    and the conversion to the kind's canonical unit (°C, mm, %, km/h):
    ``canonical = value * scale + offset``. ``explicit`` is False for bare ``°``/``度``/
    ``degrees``, which can also be a coordinate's degrees."""

    name: str
    pattern: str
    kind: str
    scale: float = 1.0
    offset: float = 0.0
    explicit: bool = True

    def to_canonical(self, value: float) -> float:
        return value * self.scale + self.offset

    def from_canonical(self, value: float) -> float:
        return (value - self.offset) / self.scale


_F = (5 / 9, -160 / 9)


#: Every unit the full judges read, longest spellings first within a kind.
UNITS: tuple[Unit, ...] = (
    Unit("摄氏度", r"摄氏度|攝氏度", "temperature"),
    Unit("华氏度", r"华氏度|華氏度", "temperature", *_F),
    Unit("°F", r"°\s?(?-i:F)(?![a-zA-Z])", "temperature", *_F),
    Unit("℉", r"℉", "temperature", *_F),
    Unit(
        "degrees Fahrenheit", r"degrees?\s+(?:fahrenheit|(?-i:F)(?![a-zA-Z]))", "temperature", *_F
    ),
    Unit("Fahrenheit", r"fahrenheit\b", "temperature", *_F),
    Unit("F", r"(?-i:F)(?![a-zA-Z])", "temperature", *_F),
    Unit("°C", r"°\s?(?-i:C)(?![a-zA-Z])", "temperature"),
    Unit("℃", r"℃", "temperature"),
    Unit(
        "degrees Celsius", r"degrees?\s+(?:celsius|centigrade|(?-i:C)(?![a-zA-Z]))", "temperature"
    ),
    Unit("Celsius", r"(?:celsius|centigrade)\b", "temperature"),
    Unit("C", r"(?-i:C)(?![a-zA-Z])", "temperature"),
    Unit("度", r"度(?![数數过過达達])", "temperature", explicit=False),
    Unit("°", r"°(?![\d′'])", "temperature", explicit=False),
    Unit("degrees", r"degrees?\b", "temperature", explicit=False),
    Unit("mm", r"mm\b|毫米|millimet(?:er|re)s?\b", "precipitation"),
    Unit("cm", r"cm\b|厘米|centimet(?:er|re)s?\b", "precipitation", 10.0),
    Unit("inch", r"inch(?:es)?\b|英寸|″", "precipitation", 25.4),
    Unit("%", r"[%％]|per\s?cent\b", "percent"),
    Unit("km/h", r"km/h|kph\b|公里/小时|千米/小时|公里每小时", "wind"),
    Unit("m/s", r"m/s|米/秒|米每秒", "wind", 3.6),
    Unit("mph", r"mph\b", "wind", 1.609344),
    Unit("knots", r"knots?\b|kn\b", "wind", 1.852),
)


#: Unit words written *before* a number, and the unit (by name) they give it.
PREFIX_UNITS: tuple[tuple[str, str], ...] = (
    (r"摄氏|攝氏", "摄氏度"),
    (r"华氏|華氏", "华氏度"),
    (r"百分之", "%"),
    (r"fahrenheit", "Fahrenheit"),
    (r"celsius", "Celsius"),
)


#: The unit kinds that can answer each question measure (evals.Question.measure).
MEASURE_KINDS: dict[str, frozenset[str]] = {
    "temperature": frozenset({"temperature"}),
    "precipitation": frozenset({"precipitation", "percent"}),
    "comparison": frozenset({"temperature"}),
}


def unit_named(name: str, units: Sequence[Unit] = UNITS) -> Unit | None:
    """The unit called ``name`` in ``units``, else the one whose pattern matches all of
    ``name`` (so a tool's ``"°C"`` or ``"mm"`` finds its unit); None when none does."""
    for u in units:
        if u.name == name:
            return u
    for u in units:
        if re.fullmatch(u.pattern, name.strip(), re.IGNORECASE):
            return u
    return None
