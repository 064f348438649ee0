"""Bare degrees: when a number written with a unit that is not ``explicit`` (a bare ``°``,
``degrees``, ``度``) is a temperature, and in which scales.

- **Readings.** Such a number may be in its own unit or in any of its ``readings`` (``73
  degrees``: °C or °F), but only in those where it is plausible (the unit's ``plausible``
  range, else the vocabulary's ``implicit_range``, read back in the unit): ``73 degrees`` is
  73 °F (22.8 °C), never 73 °C; ``30 degrees`` is either (:func:`readings`).
- **Bearings.** A bare degree is no temperature when its words make it a direction, a
  bearing, an angle or a coordinate (:func:`bearing`): a wind ``from``/``direction``/
  ``bearing``, a compass point (``ESE (112°)``, ``71 degrees west``), latitude and longitude,
  ``above the horizon``, a wind that will ``shift``/``turn``/``veer`` so many degrees, an
  angle; unless a temperature word (``temperature``, ``high``, ``feels``, ``warm``...) comes
  after them and before the number. ``It's 73 degrees and sunny`` stays a temperature.
- **Pairs.** Two bare-degree numbers with decimals joined by a comma or a slash, one beyond
  the plausible range, are a latitude and a longitude (:func:`coordinate_pair`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from toolreplay.judging.units import Unit, unit_named

_ANY = (-math.inf, math.inf)


def plausible_as(
    value: float, unit: Unit, reading: Unit, default: tuple[float, float] = _ANY
) -> bool:
    """Whether ``value`` written in ``unit`` is plausible read in ``reading`` (``unit`` itself
    or one of its readings): within ``unit.plausible`` (else ``default``) once converted back
    to ``unit``'s numbers."""
    low, high = unit.plausible or default
    return low <= unit.from_canonical(reading.to_canonical(value)) <= high


def readings(
    value: float, unit: Unit, units: Sequence[Unit], default: tuple[float, float] = _ANY
) -> list[Unit]:
    """The units ``value`` written in ``unit`` may be read in: ``unit`` and its ``readings``
    where plausible (:func:`plausible_as`); an ``explicit`` unit only in itself."""
    if unit.explicit:
        return [unit]
    ways = [unit, *(r for r in (unit_named(n, units) for n in unit.readings) if r is not None)]
    return [r for r in ways if plausible_as(value, unit, r, default)]


#: Words in a bare degree's clause before it that make it a direction, an angle or a
#: coordinate: a wind from/out of/direction/bearing, an angle, latitude and longitude.
_BEARING_CLAUSE = re.compile(
    r"(?<![a-z])(?:winds?\b[^,;:.!?]*?(?<![a-z])(?:from|out of|direction|bearing|heading)"
    r"|direction|bearing|heading|azimuth|angle|latitude|longitude|compass)(?![a-z])"
    r"|风向|風向|方位|角度|夹角|夾角",
    re.IGNORECASE,
)
#: Words right before a bare degree that make it a direction or a turn: a compass point
#: (``ESE (112°)``, ``NW 315°``, ``north-west 300 degrees``), a wind that will ``shift``/
#: ``turn``/``veer`` so many degrees (not a place's name: ``West Palm Beach, 80 degrees``).
_BEARING_RIGHT_BEFORE = re.compile(
    r"(?:(?<![a-z])(?:(?:north|south)-?(?:east|west)(?:erly)?|(?:north|south|east|west)erly"
    r"|shift(?:s|ed|ing)?|turn(?:s|ed|ing)?|rotat(?:e|es|ed|ing)|veer(?:s|ed|ing)?"
    r"|back(?:s|ed|ing)?|swing(?:s|ing)?|swung)(?![a-z])"
    r"|(?<![A-Za-z.])(?-i:[NS][EW]|[NSEW][NS][EW]))"
    r"(?:\s+(?:by|about|around|some|nearly|almost|roughly))?\s*[(（]?\s*(?:at\s+)?$",
    re.IGNORECASE,
)
#: Temperature words: after the last bearing word and before the number, they make it a
#: temperature again (wind from the north; temperatures near 60 degrees).
_TEMPERATURE = re.compile(
    r"(?<![a-z])(?:temp\w*|highs?|lows?|feels?|warm\w*|cold\w*|cool\w*|hot\w*|heat\w*"
    r"|chill\w*|thermometer)(?![a-z])"
    r"|气温|氣溫|温度|溫度|最高|最低|体感|體感",
    re.IGNORECASE,
)
#: Words right after a bare degree that make it a direction or a coordinate.
_BEARING_AFTER = re.compile(
    r"\s*(?:(?:to (?:the )?)?(?:north|south|east|west)(?:-?(?:east|west))?(?:ward)?(?![a-z])"
    r"|(?:of )?(?:latitude|longitude)(?![a-z])|(?:above|below) the horizon"
    r"|(?:line|parallel|meridian|angle|bearing|heading|azimuth)(?![a-z])"
    r"|off (?:true |magnetic )?north(?![a-z]))",
    re.IGNORECASE,
)


def bearing(text: str, start: int, end: int) -> bool:
    """Whether the bare degree written at ``text[start:end]`` is a direction, a bearing, an
    angle or a coordinate rather than a temperature (see the module docstring): a bearing
    word right after it, or one in its clause before it with no temperature word after it."""
    if _BEARING_AFTER.match(text, end):
        return True
    clause = re.split(r"[,，。；;！!？?\n]|\.(?=\s)", text[max(0, start - 60) : start])[-1]
    if _BEARING_RIGHT_BEFORE.search(clause):
        return True
    words = list(_BEARING_CLAUSE.finditer(clause))
    return bool(words) and _TEMPERATURE.search(clause, words[-1].end()) is None


#: Words right before a number that make it a label's number (``floor 4f``, ``bin 7c``,
#: ``Section 5C``, ``vitamin 12c``): a letter after it is part of that label, not a unit.
_LABEL_RIGHT_BEFORE = re.compile(
    r"(?<![a-z])(?:floors?|rooms?|levels?|sections?|apartments?|apt\.?|suites?|units?|bins?"
    r"|gates?|seats?|rows?|aisles?|platforms?|terminals?|blocks?|buildings?|flats?|lots?"
    r"|lockers?|boxes|box|cells?|columns?|pages?|chapters?|steps?|vitamins?|grades?|class"
    r"|size|model|version|item|part|no\.?|number|#)\s*$",
    re.IGNORECASE,
)


def label_letter(text: str, start: int, unit: Unit) -> bool:
    """Whether the number at ``text[start:]`` written with a one-letter unit (``F``, ``c``:
    no degree sign, no word) is a label's (room, floor, section, bin... right before it):
    the letter is then part of the label (``room 412 on floor 4f``), not a temperature."""
    before = text[max(0, start - 20) : start]
    return len(unit.name) == 1 and _LABEL_RIGHT_BEFORE.search(before) is not None


def coordinate_pair(
    first: tuple[float, int, Unit | None],
    second: tuple[float, int, Unit | None],
    joint: str,
    plausible: tuple[float, float],
) -> bool:
    """Whether two numbers (``(value, decimals, unit)`` each, written with ``joint`` between
    them) are a latitude and a longitude written in bare degrees: each with its own degree
    sign and decimals, joined by a comma or a slash, the first within ±90 and the second
    within ±180, one of them beyond ``plausible`` (``39.9°, 116.4°``; not ``75°/60°``, a high
    and a low)."""
    (a, a_decimals, a_unit), (b, b_decimals, b_unit) = first, second
    if not all(u is not None and not u.explicit for u in (a_unit, b_unit)):
        return False
    if not (a_decimals and b_decimals and abs(a) <= 90 and abs(b) <= 180):
        return False
    low, high = plausible
    return bool(re.fullmatch(r"\s*[,，/]\s*-?", joint)) and not (
        low <= a <= high and low <= b <= high
    )


__all__ = ["bearing", "coordinate_pair", "plausible_as", "readings"]
