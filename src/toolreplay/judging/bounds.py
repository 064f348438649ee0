"""Bounds and ranges as statements: what ``above 30°C``, ``不到 32℃`` and ``25 到 35 度之间``
say about a tool value, and whether that is something a tool value pins down.

A value written with a bound word is a *bound*, not a value (:func:`bound_of`):

- at least: ``above``, ``over``, ``more than``, ``greater than``, ``higher than``, ``at
  least``, ``upwards of``, ``in excess of``, ``exceeding``; 超过, 超出, 高于, 大于, 多于, 至少,
  最少 before the number; 以上, 之上, 开外, 出头 after it;
- at most: ``below``, ``under``, ``less than``, ``fewer than``, ``lower than``, ``at most``;
  不到, 不足, 低于, 小于, 少于, 至多, 最多 before it; 以下, 之下, 以内, 之内 after it;
- a negation right before a word before the number turns it round (不超过, 不会超过, ``no more
  than``, ``won't exceed``: at most; 不低于, ``no less than``, ``never drops below``: at least).

A *range* is two values joined by a range connector (``25–35°C``, ``25 to 35°C``, 25 到 35 度)
or by ``and``/和 after ``between``/介于 or before 之间 (``between 25 and 35°C``), neither end
of which is a tool value: ``20.5–31.1°C``, a day's low and high, stays two values, and so does
``20.5–29.5°C`` (a low and a high no tool value holds for the day: a fabricated value).

**The rule.** Each measure declares its plausible range (``plausible: [low, high]`` in an eval
file; the weather study: temperature −90…60 °C, a probability 0…100 %, rain 0…200 mm, wind
0…200 km/h). The width a statement may leave open is a tenth of it (:func:`allowed_width`:
15 °C, 10 %, 20 mm); a measure that declares none is measured against the tool value itself:
half its size (12 units: 6). Then, with the tool values of the kind, day, field and place the
statement is about:

- a bound is *true* of a tool value on its side, and *grounded* when one of them lies within
  half the allowed width of it (超过 30 度 of 31.1 °C: 1.1 °C off, within 7.5 °C); a true bound
  further from every tool value it is true of is *vacuous* (``above 0°C`` of 30.9 °C, ``below
  40°C``, ``more than 0 units`` of 12, ``fewer than 1000 units``, ``under €1000`` of €12.50):
  not a fabrication, but no grounded value either ("states > 0°C: true of 30.9°C … but says
  nothing a tool value pins down");
- a range is grounded when it contains a tool value and spans no more than the allowed width
  (25 到 35 度之间 of 31.1 °C: 10 °C), vacuous when it contains one but is wider, and a
  fabricated value when it contains none;
- a bound no tool value is on the side of is a fabricated value (北京今天最高超过 35℃).

The explanation of a bound or a range never says "equals": it says what the statement is true
of, and how far it is from pinning it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from toolreplay.judging.degrees import readings
from toolreplay.judging.measures import plausible
from toolreplay.judging.toolvalues import ToolValue
from toolreplay.judging.units import Unit, unit_named
from toolreplay.judging.values import MeasuredValue, between, value_text
from toolreplay.judging.vocabulary import Vocabulary

AT_LEAST, AT_MOST, BETWEEN = "at least", "at most", "between"

_AT_LEAST_AFTER = re.compile(r"\s*(?:或以上|以上|之上|开外|開外|出头|出頭)")
_AT_MOST_AFTER = re.compile(r"\s*(?:或以下|以下|之下|以内|以內|之内|之內)")
#: Words before the number, each side strict (``above``: >) or not (``at least``: ≥).
_BEFORE = (
    (AT_MOST, "<", r"不到|不足|低于|低於|小于|小於|少于|少於"
     r"|below|under|less than|fewer than|lower than"),
    (AT_MOST, "≤", r"至多|最多|at most"),
    (AT_LEAST, ">", r"超过|超過|超出|高于|高於|大于|大於|多于|多於|above|over|more than"
     r"|greater than|higher than|upwards of|in excess of|exceed(?:s|ing)?"),
    (AT_LEAST, "≥", r"至少|最少|at least"),
)  # fmt: skip
_BEFORE_PATTERNS = tuple(
    (bound, sign, re.compile(
        r"(?:" + "|".join(
            w if not re.match(r"[a-z]", w) else rf"(?<![a-z]){w}(?![a-z])" for w in words.split("|")
        ) + r")\s*(?:了|约|約)?\s*$",
        re.IGNORECASE,
    ))
    for bound, sign, words in _BEFORE
)  # fmt: skip
#: A negation right before a bound word turns it round: 不超过 and ``no more than`` are at
#: most, 不低于, 不会低于 and ``won't drop below`` at least.
_NEGATED = re.compile(
    r"(?:不会|不會|不|没有|沒有|未|(?<![a-z])(?:not|never|no)|n't)(?:\s+[a-z]+)?\s*$",
    re.IGNORECASE,
)
_FLIP = {"<": (AT_LEAST, "≥"), "≤": (AT_LEAST, ">"), ">": (AT_MOST, "≤"), "≥": (AT_MOST, "<")}


def _read(text: str, v: MeasuredValue) -> tuple[str, str] | None:
    """(bound, sign as the evidence writes it) when ``v`` is written as a bound."""
    if _AT_LEAST_AFTER.match(text, v.end):
        return AT_LEAST, "≥"
    if _AT_MOST_AFTER.match(text, v.end):
        return AT_MOST, "≤"
    before = text[max(0, v.start - 20) : v.start]
    for bound, sign, pattern in _BEFORE_PATTERNS:
        m = pattern.search(before)
        if m is not None:
            negated = _NEGATED.search(before[: m.start()]) is not None
            return _FLIP[sign] if negated else (bound, sign)
    return None


def bound_of(text: str, v: MeasuredValue) -> str | None:
    """:data:`AT_LEAST` or :data:`AT_MOST` when ``v`` (a value of ``text``) is written as a
    bound, else None (see the module docstring for the words)."""
    read = _read(text, v)
    return read[0] if read else None


def _level(v: float, unit: str, units: Sequence[Unit]) -> float | None:
    u = unit_named(unit, units)
    return u.to_canonical(v) if u is not None else None


def _canonical_span(
    v: MeasuredValue, units: Sequence[Unit], upto: MeasuredValue | None, read: Unit | None = None
) -> tuple[float, float] | None:
    """The canonical interval ``v`` (with ``upto``, a range) states at the precision written,
    its numbers read in ``read`` (None: the unit written)."""
    mine = read or unit_named(v.unit, units)
    if mine is None:
        return None
    slack = (0.5 * 10.0**-v.decimals + 1e-9) * abs(mine.scale)
    lo = mine.to_canonical(v.value)
    hi = lo
    if upto is not None:
        other = mine if read is not None and upto.unit == v.unit else unit_named(upto.unit, units)
        if other is None or other.kind != mine.kind:
            return None
        hi = other.to_canonical(upto.value)
        lo, hi = min(lo, hi), max(lo, hi)
    return lo - slack, hi + slack


def _readings(v: MeasuredValue, tv: ToolValue, units: Sequence[Unit]) -> list[tuple[Unit, Unit]]:
    """The ways ``v`` and ``tv`` may be read, ``(answer's unit, tool value's unit)``: as
    written, then in each unit's ``readings`` where the number is plausible in it
    (:func:`~toolreplay.judging.degrees.readings`: ``73 degrees`` as 73 °F, never 73 °C, so
    a tool's bare ``73 degrees`` grounds ``73°F`` and ``23°C`` but not ``73°C``), of one kind."""
    mine, theirs = unit_named(v.unit, units), unit_named(tv.unit, units)
    if mine is None or theirs is None:
        return []
    return [
        (m, t)
        for m in readings(v.value, mine, units)
        for t in readings(tv.value, theirs, units)
        if m.kind == t.kind
    ]


def _holds_as(
    v: MeasuredValue, tv: ToolValue, units: Sequence[Unit], bound: str | None,
    upto: MeasuredValue | None, mine: Unit, theirs: Unit,
) -> tuple[float, float, float] | None:  # fmt: skip
    """``(low, high, level)``: the span ``v`` states and ``tv``'s level, canonical, when the
    statement is true of ``tv`` read in ``mine`` and ``theirs``; None when it is not."""
    span = _canonical_span(v, units, upto, mine)
    if span is None:
        return None
    level = theirs.to_canonical(tv.value)
    if bound == AT_LEAST:
        true = level >= span[0]
    elif bound == AT_MOST:
        true = level <= span[1]
    else:
        true = span[0] <= level <= span[1]
    return (span[0], span[1], level) if true else None


def _reading(
    v: MeasuredValue, tv: ToolValue, units: Sequence[Unit], bound: str | None,
    upto: MeasuredValue | None,
) -> tuple[Unit, tuple[float, float, float]] | None:  # fmt: skip
    """The first reading (:func:`_readings`) under which ``v`` is true of ``tv``: the answer's
    unit, and the span and level; None when there is none."""
    for mine, theirs in _readings(v, tv, units):
        found = _holds_as(v, tv, units, bound, upto, mine, theirs)
        if found is not None:
            return mine, found
    return None


def holds(
    v: MeasuredValue,
    tv: ToolValue,
    units: Sequence[Unit],
    bound: str | None,
    upto: MeasuredValue | None = None,
) -> bool:
    """Whether the statement ``v`` makes (a value at the precision written, a ``bound``, or with
    ``upto`` the range from ``v`` to it) is true of tool value ``tv``, in the units written or
    in their readings (a bare ``73 degrees`` is true of 73 °F and of 22.8 °C)."""
    return _reading(v, tv, units, bound, upto) is not None


def allowed_width(vocabulary: Vocabulary, kind: str, level: float) -> float:
    """The width (canonical unit) a range of ``kind`` may span and still say something: a
    tenth of the kind's plausible range, or, when its measure declares none, half the size of
    the tool value it is about (``level``)."""
    low, high = plausible(vocabulary, kind)
    if math.isfinite(low) and math.isfinite(high):
        return (high - low) / 10
    return abs(level) / 2


def pins(
    v: MeasuredValue,
    tv: ToolValue,
    units: Sequence[Unit],
    vocabulary: Vocabulary,
    bound: str | None,
    upto: MeasuredValue | None = None,
) -> bool:
    """Whether a bound or range true of ``tv`` pins it: a bound within half the allowed width
    of it, a range no wider than the allowed width (a value written plainly always does)."""
    if bound is None:
        return True
    found = _reading(v, tv, units, bound, upto)
    if found is None:
        return False
    mine, (low, high, level) = found
    width = allowed_width(vocabulary, tv.kind, level)
    if bound == BETWEEN:  # the width written (25–35: 10), not widened by the precision
        slack = (0.5 * 10.0**-v.decimals + 1e-9) * abs(mine.scale)
        return high - low - 2 * slack <= width + 1e-9
    edge = (low + high) / 2
    return abs(level - edge) <= width / 2 + 1e-9


def statement(text: str, v: MeasuredValue, upto: MeasuredValue | None = None) -> str:
    """The statement ``v`` of ``text`` makes, as the evidence writes it: ``> 0°C`` (above),
    ``≥ 30 度`` (以上, at least), ``< 40°C``, ``≤ 32℃``; with ``upto``, the range ``25–35°C``."""
    written = text[v.start : v.end]
    if upto is not None:
        return f"{written}–{text[upto.start : upto.end]}"
    read = _read(text, v)
    return f"{read[1]} {written}" if read else written


def _width_text(v: MeasuredValue, units: Sequence[Unit], width: float) -> str:
    mine = unit_named(v.unit, units)
    shown = width / abs(mine.scale) if mine is not None else width
    return value_text(round(shown, 4), v.unit)


def pinned_reason(
    said: str, tv: ToolValue, v: MeasuredValue, units: Sequence[Unit], vocabulary: Vocabulary,
    bound: str,
) -> str:  # fmt: skip
    """Why a bound or range grounded by ``tv`` says something."""
    level = _level(tv.value, tv.unit, units) or 0.0
    width = allowed_width(vocabulary, tv.kind, level)
    if bound == BETWEEN:
        return (
            f"states {said}: contains {tv.describe()}, and spans no more than the "
            f"{_width_text(v, units, width)} a {tv.kind} range may"
        )
    return (
        f"states {said}: true of {tv.describe()}, within {_width_text(v, units, width / 2)} of it"
    )


def vacuous_reason(
    said: str, tv: ToolValue, v: MeasuredValue, units: Sequence[Unit], vocabulary: Vocabulary,
    bound: str,
) -> str:  # fmt: skip
    """Why a bound or range true of ``tv`` says nothing a tool value pins down."""
    level = _level(tv.value, tv.unit, units) or 0.0
    width = allowed_width(vocabulary, tv.kind, level)
    if bound == BETWEEN:
        limit = f"a {tv.kind} range says something within {_width_text(v, units, width)}"
        return (
            f"states {said}: contains {tv.describe()}, but is too wide to say anything a tool "
            f"value pins down ({limit})"
        )
    near = _width_text(v, units, width / 2)
    return (
        f"states {said}: true of {tv.describe()}, but says nothing a tool value pins down "
        f"(a {tv.kind} bound says something within {near} of it)"
    )


__all__ = [
    "AT_LEAST", "AT_MOST", "BETWEEN", "allowed_width", "between", "bound_of", "holds",
    "pinned_reason", "pins", "statement", "vacuous_reason",
]  # fmt: skip
