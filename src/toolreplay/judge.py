"""Judges: does an answer contain a measured value, with a unit, of what the question asks?

A *measured value* is a number followed by a unit, in Chinese or English text:

=============  ==============================================================
kind           units accepted by the full judge
=============  ==============================================================
temperature    °C, ℃, °F, ℉, a bare ° (26°), 度, 摄氏度, 华氏度, degrees (C/F)
precipitation  mm, 毫米, millimetres/millimeters
probability    %, ％, percent
wind           km/h, 公里/小时, 千米/小时, m/s, 米/秒
=============  ==============================================================

Numbers may carry a sign (``-3``, ``−3``, ``零下3``, ``负3``) and thousands separators
(``1,234``). Numbers inside dates (``2026-09-17``, ``9月17日``) carry no unit and are never
measured values; a number in a clause about latitude, longitude or coordinates (纬, 经, 坐标,
latitude, longitude) is a coordinate, not a temperature, whatever unit follows it.

Which kinds answer a question depends on its declared measure (:data:`MEASURE_KINDS`):
temperature needs a temperature; precipitation needs an amount of rain, or a percentage in a
clause about rain (a humidity percentage is not one); a comparison needs at least two
temperatures. Without a measure, any measured value passes.

:data:`FULL_JUDGE` is the one in use; :data:`NARROW_JUDGE` accepts only °C, the study's first,
too-narrow judge, kept for the fidelity audit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: A signed number; group 1 is its whole text (sign included).
NUMBER = (
    r"(?<![\d.,])((?:(?:零下|负|(?<![0-9A-Za-z°℃℉%])[-+−])\s?)?"  # no sign right after a unit
    r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
)

UNIT_PATTERNS: dict[str, str] = {
    "temperature": (
        r"°\s?[CF]\b|°\s?[CF](?![a-zA-Z])|℃|℉|摄氏度|华氏度|度(?!数)"
        r"|degrees?\s?(?:C\b|Celsius|F\b|Fahrenheit)|degrees?\b|°(?![\d])"
    ),
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

_COORDINATE_CONTEXT = re.compile(r"纬|经|坐标|latitude|longitude|\blat\b|\blon\b", re.IGNORECASE)
_RAIN_CONTEXT = re.compile(r"降水|降雨|下雨|雨|precip|rain|shower", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[，,。；;！!？?\n]")
_PAIR_BREAK = re.compile(r"[，。；;！!？?\n]")  # an ASCII comma may separate a coordinate pair


def _clause_before(
    text: str, start: int, limit: int = 20, breaks: re.Pattern[str] = _CLAUSE_BREAK
) -> str:
    """The text of the clause ``start`` is in, up to ``start`` (at most ``limit`` chars)."""
    window = text[max(0, start - limit) : start]
    parts = breaks.split(window)
    return parts[-1] if parts else ""


def parse_number(text: str) -> float:
    """``"零下3.5"`` → -3.5, ``"1,234"`` → 1234.0 (the :data:`NUMBER` group's text)."""
    t = text.replace(" ", "").replace(",", "")
    negative = t.startswith(("零下", "负", "-", "−"))
    t = t.removeprefix("零下").lstrip("负-−+")
    return -float(t) if negative else float(t)


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
    """Every measured value in ``text`` (kinds and unit regexes from ``patterns``), in order;
    where two kinds claim the same number, the first kind in ``patterns`` wins."""
    found: dict[int, MeasuredValue] = {}
    for kind, unit_re in patterns.items():
        for m in re.finditer(NUMBER + r"\s?(" + unit_re + ")", text, flags=re.IGNORECASE):
            if m.start() in found:
                continue
            unit = m.group(2)
            clause = _clause_before(text, m.start(), 24, _PAIR_BREAK)
            if kind == "temperature" and _COORDINATE_CONTEXT.search(clause):
                continue
            found[m.start()] = MeasuredValue(
                parse_number(m.group(1)), unit, kind, m.start(), m.end()
            )
    return tuple(sorted(found.values(), key=lambda v: v.start))


def relevant_values(
    text: str, values: Sequence[MeasuredValue], measure: str | None
) -> tuple[MeasuredValue, ...]:
    """The ``values`` that answer ``measure`` (all of them when ``measure`` is None): of a kind
    in :data:`MEASURE_KINDS`, and a percentage only in a clause about rain."""
    if measure is None:
        return tuple(values)
    kinds = MEASURE_KINDS.get(measure, frozenset())
    out = []
    for v in values:
        if v.kind not in kinds:
            continue
        if v.kind == "probability" and not _RAIN_CONTEXT.search(_clause_before(text, v.start, 30)):
            continue
        out.append(v)
    return tuple(out)


@dataclass(frozen=True)
class Verdict:
    """A judge's decision: ``passed``, a one-line ``explanation``, the values it rests on."""

    passed: bool
    explanation: str
    values: tuple[MeasuredValue, ...] = ()


@dataclass(frozen=True)
class Judge:
    """Passes an answer that contains a measured value of a kind in ``patterns`` answering
    the question's measure (see the module docstring)."""

    name: str
    patterns: Mapping[str, str]

    def accepts(self, measure: str) -> bool:
        """Whether this judge can ever pass an answer about ``measure``."""
        if measure == NO_VALUE:
            return True
        return bool(MEASURE_KINDS.get(measure, frozenset()) & set(self.patterns))

    def judge(self, answer: str, measure: str | None = None) -> Verdict:
        """Judge ``answer`` for a question that measures ``measure`` (None: any value)."""
        if not answer.strip():
            return Verdict(False, "empty answer")
        if measure == NO_VALUE:
            return judge_no_value(self, answer)
        if measure is not None and not self.accepts(measure):
            return Verdict(False, f"the {self.name} judge accepts no unit for {measure}")
        values = find_measured_values(answer, self.patterns)
        relevant = relevant_values(answer, values, measure)
        needed = 2 if measure == "comparison" else 1
        if len(relevant) >= needed:
            shown = ", ".join(v.text for v in relevant[:4])
            return Verdict(True, f"measured value with unit: {shown}", relevant)
        if measure == "comparison" and relevant:
            return Verdict(False, "a comparison needs at least two temperatures", relevant)
        if values:
            shown = ", ".join(v.text for v in values[:4])
            return Verdict(False, f"measures {shown}, but not the {measure} asked for", values)
        return Verdict(False, f"no measured value with a unit ({self.name} judge)")


# ---- measures of the harder eval file: wind, and none (nothing to measure) ------------------

#: A question with nothing to measure (an unknown place, a question that needs no tool).
NO_VALUE = "none"

#: Added to :data:`MEASURE_KINDS`: a wind question needs a wind speed; ``none`` needs no value.
EXTRA_MEASURE_KINDS: dict[str, frozenset[str]] = {
    "wind": frozenset({"wind"}),
    NO_VALUE: frozenset(),
}
MEASURE_KINDS.update(EXTRA_MEASURE_KINDS)


def judge_no_value(judge: Judge, answer: str) -> Verdict:
    """The verdict for a ``none`` question: a non-empty answer that states no measured value
    (the place is unknown, or the question needs no data); a stated value fails it."""
    values = find_measured_values(answer, judge.patterns)
    if values:
        shown = ", ".join(v.text for v in values[:4])
        return Verdict(False, f"states {shown}, but the question has nothing to measure", values)
    return Verdict(True, "no value needed, none stated")


FULL_JUDGE = Judge("measured-value", UNIT_PATTERNS)
NARROW_JUDGE = Judge("celsius-only", {"temperature": r"°\s?C"})
JUDGES = {FULL_JUDGE.name: FULL_JUDGE, NARROW_JUDGE.name: NARROW_JUDGE}
