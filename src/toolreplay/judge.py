"""Judges: does an answer contain a measured value with a unit?

A *measured value* is a number followed by a unit, in Chinese or English text:

=============  =====================================================
kind           units accepted by the full judge
=============  =====================================================
temperature    °C, ℃, ° C, 度, 摄氏度, degrees C/Celsius
precipitation  mm, 毫米, millimetres/millimeters
probability    %, ％, percent
wind           km/h, 公里/小时, 千米/小时, m/s, 米/秒
=============  =====================================================

Numbers inside dates (``2026-09-17``, ``9月17日``) carry no unit and are never measured values;
a number right after 纬/经 (latitude/longitude) is a coordinate, not a temperature.

:data:`FULL_JUDGE` is the one in use; :data:`NARROW_JUDGE` accepts only °C, the study's first,
too-narrow judge, kept for the fidelity audit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

NUMBER = r"(?<![\d.])([-+−]?\d+(?:\.\d+)?)"

UNIT_PATTERNS: dict[str, str] = {
    "temperature": r"°\s?C|℃|摄氏度|度(?!数)|degrees?\s?(?:C\b|Celsius)",
    "precipitation": r"mm\b|毫米|millimet(?:er|re)s?",
    "probability": r"%|％|percent",
    "wind": r"km/h|公里/小时|千米/小时|m/s|米/秒",
}

#: The unit kinds that can answer each question measure (evals.Question.measure).
MEASURE_KINDS: dict[str, frozenset[str]] = {
    "temperature": frozenset({"temperature"}),
    "precipitation": frozenset({"precipitation", "probability"}),
    "comparison": frozenset({"temperature"}),
}


@dataclass(frozen=True)
class MeasuredValue:
    """A number with its unit: ``value`` (float), ``unit`` as written, ``kind`` (table above),
    ``start``/``end`` character offsets of the whole match in the text."""

    value: float
    unit: str
    kind: str
    start: int
    end: int

    @property
    def text(self) -> str:
        return f"{self.value:g}{self.unit}"


def find_measured_values(
    text: str, patterns: Mapping[str, str] = UNIT_PATTERNS
) -> tuple[MeasuredValue, ...]:
    """Every measured value in ``text`` (kinds and unit regexes from ``patterns``), in order."""
    found: list[MeasuredValue] = []
    for kind, unit_re in patterns.items():
        for m in re.finditer(NUMBER + r"\s?(" + unit_re + ")", text, flags=re.IGNORECASE):
            before = text[max(0, m.start() - 3) : m.start()]
            if m.group(2).startswith("度") and ("纬" in before or "经" in before):
                continue
            value = float(m.group(1).replace("−", "-"))
            found.append(MeasuredValue(value, m.group(2), kind, m.start(), m.end()))
    found.sort(key=lambda v: v.start)
    return tuple(found)


@dataclass(frozen=True)
class Verdict:
    """A judge's decision: ``passed``, a one-line ``explanation``, the values it rests on."""

    passed: bool
    explanation: str
    values: tuple[MeasuredValue, ...] = ()


@dataclass(frozen=True)
class Judge:
    """Passes an answer that contains a measured value of a kind in ``patterns``."""

    name: str
    patterns: Mapping[str, str]

    def accepts(self, measure: str) -> bool:
        """Whether this judge can ever pass an answer about ``measure``."""
        return bool(MEASURE_KINDS.get(measure, frozenset()) & set(self.patterns))

    def judge(self, answer: str) -> Verdict:
        values = find_measured_values(answer, self.patterns)
        if values:
            shown = ", ".join(v.text for v in values[:4])
            return Verdict(True, f"measured value with unit: {shown}", values)
        if not answer.strip():
            return Verdict(False, "empty answer")
        return Verdict(False, f"no measured value with a unit ({self.name} judge)")


FULL_JUDGE = Judge("measured-value", UNIT_PATTERNS)
NARROW_JUDGE = Judge("celsius-only", {"temperature": r"°\s?C"})
JUDGES = {FULL_JUDGE.name: FULL_JUDGE, NARROW_JUDGE.name: NARROW_JUDGE}
