"""Judges: does an answer state, for the question's place and day, a value a tool returned?

Two stages, one mechanism each.

**Reading values** (:func:`scan`). A small lexer turns the text into tokens (numbers in Arabic
or Chinese numerals, signs, range and list connectors, clause breaks, coordinate words, unit
words written before a number); a unit from :data:`UNITS` is read right after each number.
A small grammar over the tokens then gives the quantities:

* coordinates first: a number after 北纬/东经/纬度/经度/坐标/latitude/longitude (same clause,
  at most two numbers), a number followed by a hemisphere letter (``39.9°N``, ``116.4 E``),
  degrees–minutes (``39°54′``, ``39度54分``), and a bare ``°``/``度`` number that cannot be a
  temperature (three or more decimals, or beyond −90…60) are coordinates, never measured values;
* ``sign? number unit`` — signs ``-``, ``−``, ``+``, 零下, 负, minus;
* ``prefix sign? number unit?`` — a unit named before the number (摄氏, 华氏, 百分之,
  ``Fahrenheit``, ``(°C)``/``（℃）：``) is the number's unit (华氏79度 is 79 °F);
* runs ``number (connector number)* unit``: ranges (``-``, ``~``, 到, 至, ``to``) and lists
  (``、``, ``,``, ``/``, 和, ``and``) share the last number's unit (``31.1、28.6、33.4°C``);
  a run that ends without a unit (a date ``2026-09-17``, a coordinate pair) yields nothing.

=============  ==============================================================
kind           units (:data:`UNITS`, canonical unit first)
=============  ==============================================================
temperature    °C, ℃, C after a number, 度, 摄氏度, degrees Celsius, bare °, degrees;
               °F, ℉, F, 华氏度, Fahrenheit (converted)
precipitation  mm, 毫米, millimetres; cm, 厘米; inch, inches, 英寸 (converted)
percent        %, ％, percent, 百分之…
wind           km/h, 公里/小时; m/s, 米/秒; mph; knots
=============  ==============================================================

**Grounding** (:func:`ground_answer`). Every number in the episode's tool messages is read
with its unit, JSON path (the *field*), the *day* it is about (``current`` and ``daily[0]``:
today; ``daily[1]``: tomorrow) and the *place* (the oneshot result's ``place``; for
``get_weather_by_coords`` the geocoding candidate at the called coordinates). Each value in
the answer states a day, a field and a place, read from the words before it (今天/明天/
today/tomorrow, 最高/最低/当前/high/low/now, a place's name; 分别/respectively pairs a list
of places with a list of values) or from the question. It is *grounded* when a tool value of
the same kind, day, field and place equals it after conversion to the answer's unit and
rounding to the precision the answer wrote (26°C matches 26.1 °C; 79°F matches 26.1 °C).

**Verdicts.** :data:`GROUNDED_JUDGE` (the one in use) passes an episode only when the answer
states a grounded value of the question's measure for the question's place and day, states
no ungrounded value (a value no tool result holds is a fabricated value and fails the
episode), and, for a ``comparison``, names as hottest the place the tool results make
hottest. :data:`FORMAT_JUDGE` only checks the form (a value of the measure with a unit), and
:data:`NARROW_JUDGE` is that with °C only (the study's first, too-narrow judge); the
fidelity audit uses both. A :class:`Verdict` carries its evidence (:meth:`Verdict.to_dict`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    from .episode import Episode
    from .evals import Question

# ---- units ----------------------------------------------------------------------------------


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


# ---- lexer ----------------------------------------------------------------------------------

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_CN_MULT = {"十": 10, "百": 100, "千": 1000}

_TOKEN = re.compile(
    r"(?P<coord>北纬|南纬|东经|西经|北緯|南緯|東經|西經|纬度|緯度|经度|經度|经纬度|經緯度|坐标|坐標"
    r"|(?<![a-z])(?:latitude|longitude|lat|lon|lng|coordinates?)(?![a-z]))"
    r"|(?P<resp>分别|分別|(?<![a-z])respectively(?![a-z]))"
    r"|(?P<sign>零下|负|負|(?<![a-z])minus(?![a-z]))"
    r"|(?P<prefix>" + "|".join(f"(?:{p})" for p, _ in PREFIX_UNITS) + r")"
    r"|(?P<bracket>[(（]\s*(?P<bunit>°\s?[CF]|℃|℉|mm|毫米|%|km/h)\s*[)）]\s*[:：]?)"
    r"|(?P<date>[0-9]{4}[-/.][0-9]{1,2}[-/.][0-9]{1,2}(?:[T ][0-9]{1,2}:[0-9]{2})?"
    r"|[0-9]{1,2}:[0-9]{2}|[0-9]{1,2}月[0-9]{1,2}[日号]?)"
    r"|(?P<num>[0-9０-９]+(?:,[0-9]{3})*(?:\.[0-9０-９]+)?"
    r"|[零〇一二两兩三四五六七八九十百千]+(?:点[零〇一二三四五六七八九]+)?)"
    r"|(?P<dash>[-−])"
    r"|(?P<range>[~～〜–—至到]|(?<![a-z])to(?![a-z]))"
    r"|(?P<sep>[、,/和与與及]|(?<![a-z])(?:and|or)(?![a-z]))"
    r"|(?P<brk>[，。；;！!？?\n:：]|\.(?=\s|$))"
    r"|(?P<space>\s+)",
    re.IGNORECASE,
)
_HEMISPHERE = re.compile(r"\s?(?:°|度)?\s?(?-i:[NSEW])(?![a-zA-Z])")
_DMS = re.compile(r"\s?(?:°|度)\s?[0-9]+(?:\.[0-9]+)?\s?(?:[′']|分)")


@dataclass(frozen=True)
class _Tok:
    kind: str  # coord resp sign prefix num dash range sep brk other
    start: int
    end: int
    value: float = 0.0
    decimals: int = 0
    unit: Unit | None = None
    unit_end: int = 0
    coordinate: bool = False  # a hemisphere letter or minutes follow the number


def parse_chinese_number(text: str) -> float:
    """``"二十六"`` → 26, ``"三十点五"`` → 30.5, ``"一百零五"`` → 105, ``"十"`` → 10."""
    whole, _, frac = text.partition("点")
    total, digit = 0, 0
    for ch in whole:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        elif ch in _CN_MULT:
            total += (digit or 1) * _CN_MULT[ch]
            digit = 0
    total += digit
    if frac:
        return float(f"{total}." + "".join(str(_CN_DIGITS[c]) for c in frac))
    return float(total)


def _number(text: str) -> tuple[float, int]:
    if re.match(r"[0-9０-９]", text):
        t = text.replace(",", "")
        return float(t), len(t.split(".", 1)[1]) if "." in t else 0
    return parse_chinese_number(text), len(text.partition("点")[2])


def _unit_after(text: str, pos: int, units: Sequence[Unit]) -> tuple[Unit, int] | None:
    for u in units:
        m = re.compile(r"\s?(?:" + u.pattern + ")", re.IGNORECASE).match(text, pos)
        if m:
            return u, m.end()
    return None


def _lex(text: str, units: Sequence[Unit]) -> Iterator[_Tok]:
    pos, other = 0, -1
    by_name = {u.name: u for u in UNITS}
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            other = pos if other < 0 else other
            pos += 1
            continue
        if other >= 0:
            yield _Tok("other", other, pos)
            other = -1
        kind = m.lastgroup
        if kind == "space":
            pos = m.end()
            continue
        if kind == "bunit":
            kind = "bracket"
        if kind == "prefix" or kind == "bracket":
            word = m.group("bunit") or m.group()
            name = next((n for p, n in PREFIX_UNITS if re.fullmatch(p, word, re.IGNORECASE)), word)
            unit = unit_named(name, units) if name in by_name else unit_named(word, units)
            if kind == "prefix" and re.match(r"[a-z]", word, re.IGNORECASE):
                # an English unit word is a prefix only when a number follows
                if not re.match(r"\s*[:：]?\s*[-−]?[0-9]", text[m.end() :]):
                    other = pos if other < 0 else other
                    pos = m.end()
                    continue
            yield _Tok("prefix", m.start(), m.end(), unit=unit)
            pos = m.end()
            continue
        if kind == "num":
            value, decimals = _number(m.group())
            end = m.end()
            coordinate = bool(_DMS.match(text, end) or _HEMISPHERE.match(text, end))
            found = None if coordinate else _unit_after(text, end, units)
            yield _Tok(
                "num", m.start(), end, value, decimals,
                found[0] if found else None, found[1] if found else end, coordinate,
            )  # fmt: skip
            pos = found[1] if found else end
            continue
        yield _Tok(kind, m.start(), m.end())
        pos = m.end()
    if other >= 0:
        yield _Tok("other", other, len(text))


# ---- grammar ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasuredValue:
    """A number with its unit: ``value`` (float, as written, sign applied), ``unit`` (the
    :class:`Unit`'s name), ``kind``, ``start``/``end`` (character offsets of the number and
    its unit, sign and prefix included), ``decimals`` written, and ``shared`` (True when the
    unit is written once for a range or list)."""

    value: float
    unit: str
    kind: str
    start: int
    end: int
    decimals: int = 0
    shared: bool = False

    @property
    def text(self) -> str:
        return f"{self.value:g}{self.unit}"


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` read: measured values in order, the spans read as coordinates, and
    (for ``分别``/``respectively``) which values were listed together (indices into
    ``values``)."""

    values: tuple[MeasuredValue, ...]
    coordinates: tuple[tuple[int, int], ...]
    respective: tuple[tuple[int, tuple[int, ...]], ...] = ()  # (resp token start, value indices)


def scan(text: str, units: Sequence[Unit] = UNITS) -> Scan:
    """Read ``text`` with the grammar in the module docstring."""
    toks = list(_lex(text, units))
    values: list[MeasuredValue] = []
    coords: list[tuple[int, int]] = []
    respective: list[tuple[int, tuple[int, ...]]] = []
    coord_budget = 0
    resp_at: int | None = None
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "brk":
            mark = text[t.start]
            if mark not in ":：":
                coord_budget = 0
            if mark in "。！!？?\n.":
                resp_at = None
        elif t.kind == "coord":
            coord_budget = 2
        elif t.kind == "resp":
            resp_at = t.start
        if t.kind not in ("num", "sign", "dash", "prefix"):
            i += 1
            continue
        # a run: [prefix] [sign] num ((dash|range|sep) [sign] num)*
        run: list[tuple[_Tok, int, bool]] = []  # (number, start incl. sign/prefix, negative)
        prefixed, prefix = False, None
        j = i
        while j < len(toks):
            s = toks[j].start
            if toks[j].kind == "prefix":
                prefixed, prefix = True, toks[j].unit
                j += 1
            negative = False
            if j < len(toks) and toks[j].kind in ("sign", "dash"):
                negative = text[toks[j].start] != "+"
                j += 1
            if j >= len(toks) or toks[j].kind != "num":
                break
            run.append((toks[j], s, negative))
            j += 1
            nxt = toks[j + 1] if j + 1 < len(toks) else None
            after = toks[j + 2] if j + 2 < len(toks) else None
            if (
                j < len(toks)
                and toks[j].kind in ("dash", "range", "sep", "brk")
                and (toks[j].kind != "brk" or text[toks[j].start] == "，")
                and nxt is not None
                and (
                    nxt.kind == "num"
                    or (nxt.kind in ("sign", "dash") and after and after.kind == "num")
                )
            ):
                j += 1
                continue
            break
        if not run:
            i = max(j, i + 1)
            continue
        shared = run[-1][0].unit
        indices: list[int] = []
        for n, s, negative in run:
            if prefixed:
                unit = prefix
            else:
                unit = n.unit or shared
            in_context = coord_budget > 0
            implausible = (
                unit is not None
                and unit.kind == "temperature"
                and not unit.explicit
                and (n.decimals >= 3 or not -90 <= n.value <= 60)
            )
            if (
                n.coordinate
                or implausible
                or (
                    in_context
                    and (unit is None or (unit.kind == "temperature" and not unit.explicit))
                )
            ):
                coords.append((s, n.unit_end))
                coord_budget = max(0, coord_budget - 1)
                continue
            if in_context:
                coord_budget = max(0, coord_budget - 1)
            if unit is None:
                continue
            value = -n.value if negative else n.value
            indices.append(len(values))
            values.append(
                MeasuredValue(
                    value, unit.name, unit.kind, s if (negative or prefixed) else n.start,
                    max(n.unit_end, n.end), n.decimals, n.unit is None and not prefixed,
                )
            )  # fmt: skip
        if resp_at is not None and len(indices) > 1:
            respective.append((resp_at, tuple(indices)))
            resp_at = None
        i = j
    return Scan(tuple(values), tuple(coords), tuple(respective))


def find_measured_values(text: str, units: Sequence[Unit] = UNITS) -> tuple[MeasuredValue, ...]:
    """Every measured value in ``text`` (:func:`scan`), in order; coordinates excluded."""
    return scan(text, units).values


_RAIN_CONTEXT = re.compile(r"降水|降雨|下雨|雨|precip|rain|shower", re.IGNORECASE)


def _clause_before(text: str, start: int, limit: int = 30) -> str:
    window = text[max(0, start - limit) : start]
    return re.split(r"[，,。；;！!？?\n]", window)[-1]


def relevant_values(
    text: str, values: Sequence[MeasuredValue], measure: str | None
) -> tuple[MeasuredValue, ...]:
    """The ``values`` that answer ``measure`` (all of them when ``measure`` is None): of a kind
    in :data:`MEASURE_KINDS`, and a percentage only in a clause about rain (a humidity
    percentage does not answer a rain question)."""
    if measure is None:
        return tuple(values)
    kinds = MEASURE_KINDS.get(measure, frozenset())
    return tuple(
        v
        for v in values
        if v.kind in kinds
        and (v.kind != "percent" or _RAIN_CONTEXT.search(_clause_before(text, v.start)))
    )


# ---- tool values ------------------------------------------------------------------------------

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


# ---- what the answer states -----------------------------------------------------------------


def _words(zh: str, en: str) -> re.Pattern[str]:
    return re.compile(zh + r"|(?<![a-z])(?:" + en + r")(?![a-z])", re.IGNORECASE)


_DAY_RE = (
    (2, _words(r"后天|後天", r"day after tomorrow")),
    (1, _words(r"明天|明日", r"tomorrow")),
    (
        0,
        _words(
            r"今天|今日|今晚|现在|現在|当前|當前|目前|此刻|实时", r"today|tonight|now|currently"
        ),
    ),
)
_FIELD_RE = (
    ("current", _words(r"当前|當前|现在|現在|目前|此刻|实时|實時", r"now|currently|current")),
    ("max", _words(r"最高|高温", r"high(?:est|s)?|max(?:imum)?|up to")),
    ("min", _words(r"最低|低温", r"low(?:est|s)?|min(?:imum)?")),
)
_SENTENCE = re.compile(r"[。！!？?\n]|\.(?=\s|$)")
_CLAUSE = re.compile(
    r"[，,；;。！!？?\n]|\.(?=\s|$)|(?<![a-z])(?:and|but|while)(?![a-z])", re.IGNORECASE
)


def _last_before(patterns: Sequence[tuple[Any, re.Pattern[str]]], text: str) -> Any:
    best: tuple[int, Any] | None = None
    for tag, p in patterns:
        for m in p.finditer(text):
            if best is None or m.start() >= best[0]:
                best = (m.start(), tag)
    return best[1] if best else None


def _stated(
    patterns: Sequence[tuple[Any, re.Pattern[str]]],
    text: str,
    v: MeasuredValue,
    *,
    carry: bool,
) -> Any:
    """What ``patterns`` say about value ``v``: a word right after it in its clause wins, then
    the nearest word before it in its sentence (or, with ``carry``, anywhere before it)."""
    rest = text[v.end :]
    cut = _CLAUSE.search(rest)
    after = rest[: cut.start()] if cut else rest
    if "°" not in after[:1]:
        tag = _last_before(patterns, after[:12])
        if tag is not None and not re.search(r"\d", after[:12]):
            return tag
    before = text[: v.start]
    if not carry:
        starts = [m.end() for m in _SENTENCE.finditer(before)]
        before = before[starts[-1] :] if starts else before
        # 最高/最低 carry over a sentence's clauses (今天最高气温：北京 31°C，上海 29°C);
        # "now" only holds in its own clause (现在 26°C，下午升到 29°C)
        own = _CLAUSE.split(before)[-1]
        tag = _last_before(patterns, before)
        if tag == "current" and _last_before(patterns, own) != "current":
            return _last_before([p for p in patterns if p[0] != "current"], before)
        return tag
    return _last_before(patterns, before)


# ---- places ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlaceSpec:
    """A place a question is about: ``query`` (e.g. 宁德), ``region`` (``admin1``) and other
    ``aliases`` an answer may use (``Guangzhou``)."""

    query: str
    region: str | None
    aliases: tuple[str, ...] = ()

    def named(self, place: Mapping[str, Any] | None) -> bool:
        """Whether a tool result's place has this place's name or one of its aliases (宁德 and
        宁德市 alike; ``Beijing`` with the alias 北京 names 北京)."""
        if place is None:
            return False
        name = str(place.get("name", "")).removesuffix("市")
        if not name:
            return False
        for q in (self.query, *self.aliases):
            q = q.removesuffix("市")
            if name.startswith(q) or q.startswith(name):
                return True
        return False

    def matches(self, place: Mapping[str, Any] | None) -> bool:
        """Whether a tool result's place is this one: same name and ``admin1``."""
        return self.named(place) and place is not None and place.get("admin1") == self.region

    def names(self) -> tuple[str, ...]:
        q = self.query.removesuffix("市")
        return (q + "市", q, *self.aliases)


@dataclass(frozen=True)
class Expectation:
    """What the judge checks an answer against: the question's ``measure`` (None: any
    value), ``day`` (0 today, 1 tomorrow; None: any) and ``places`` (empty: any place)."""

    measure: str | None = None
    day: int | None = None
    places: tuple[PlaceSpec, ...] = ()

    @classmethod
    def of(cls, question: Question | str | Expectation | None) -> Expectation:
        """From an :class:`~toolreplay.evals.Question`, a bare measure name, or None."""
        if question is None or isinstance(question, str):
            return cls(question)
        if isinstance(question, Expectation):
            return question
        return cls(
            question.measure,
            question.day_index,
            tuple(PlaceSpec(p.query, p.region, tuple(p.names)) for p in question.places),
        )


def _place_mentions(text: str, places: Sequence[PlaceSpec]) -> list[tuple[int, int, PlaceSpec]]:
    out: list[tuple[int, int, PlaceSpec]] = []
    taken: set[int] = set()
    names = sorted(((n, p) for p in places for n in p.names()), key=lambda np: -len(np[0]))
    for name, p in names:
        for m in re.finditer(re.escape(name), text, re.IGNORECASE):
            if m.start() not in taken:
                taken.update(range(m.start(), m.end()))
                out.append((m.start(), m.end(), p))
    return sorted(out, key=lambda x: x[0])


# ---- grounding ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValueCheck:
    """One value of the answer and what it was checked against.

    ``span``/``text``: where the answer states it; ``day``/``field``/``place``: what the
    answer states it for (None: not said, so any); ``match``: the tool value it equals (None
    when no tool value does); ``reason``: why it is or is not grounded, in words."""

    value: MeasuredValue
    text: str
    day: int | None
    field: str | None
    place: PlaceSpec | None
    match: ToolValue | None
    reason: str

    @property
    def grounded(self) -> bool:
        return self.match is not None

    @property
    def span(self) -> tuple[int, int]:
        return (self.value.start, self.value.end)

    def to_dict(self) -> dict[str, Any]:
        m = self.match
        return {
            "span": list(self.span),
            "text": self.text,
            "kind": self.value.kind,
            "stated_day": _DAY_WORDS.get(self.day) if self.day is not None else None,
            "stated_field": self.field,
            "stated_place": self.place.query if self.place else None,
            "grounded": self.grounded,
            "tool_message_index": m.message_index if m else None,
            "tool_field": m.path if m else None,
            "tool_value": m.text if m else None,
            "tool_place": m.place_text if m else None,
            "reason": self.reason,
        }


def _equal(v: MeasuredValue, tv: ToolValue, units: Sequence[Unit]) -> bool:
    mine, theirs = unit_named(v.unit, UNITS), unit_named(tv.unit, UNITS)
    if mine is None or theirs is None or mine.kind != theirs.kind:
        return False
    in_my_unit = mine.from_canonical(theirs.to_canonical(tv.value))
    return abs(in_my_unit - v.value) <= 0.5 * 10.0**-v.decimals + 1e-9


def _field_ok(field_word: str | None, tv: ToolValue) -> bool:
    if field_word is None or tv.kind != "temperature" or tv.day is None:
        return True  # nothing stated, or a tool value whose field and day are unknown
    if field_word == "current":
        return tv.path.startswith("$.current")
    return field_word in tv.field


# A value stated as a difference: right after 温差/相差/比…高 (or "a difference of"), or right
# before "warmer/cooler/higher/lower (than)".
_DIFFERENCE_BEFORE = re.compile(
    r"(?:温差|溫差|相差|差了|差距|高出|低出|比[^，,。；;]{0,12}[高低暖冷热熱凉涼]"
    r"|(?<![a-z])difference (?:of|is))(?:了|约|約|大约|大約|为|為|是|\s)*$",
    re.IGNORECASE,
)
_DIFFERENCE_AFTER = re.compile(
    r"\s*(?:warmer|cooler|colder|hotter|higher|lower|more|less)(?![a-z])", re.IGNORECASE
)


def _is_difference(text: str, v: MeasuredValue) -> bool:
    before = _CLAUSE.split(text[: v.start])[-1]
    return bool(_DIFFERENCE_BEFORE.search(before) or _DIFFERENCE_AFTER.match(text, v.end))


def _check_difference(text: str, v: MeasuredValue, pool: Sequence[ToolValue]) -> ValueCheck:
    written = text[v.start : v.end]
    mine = unit_named(v.unit, UNITS)
    same = [tv for tv in pool if tv.kind == v.kind and unit_named(tv.unit, UNITS) is not None]
    if mine is not None:
        for n, a in enumerate(same):
            for b in same[n + 1 :]:
                if a.day != b.day or not (
                    a.field == b.field or (a.place is not None and a.place == b.place)
                ):
                    continue  # the same field at two places, or two fields of one place
                ua, ub = unit_named(a.unit, UNITS), unit_named(b.unit, UNITS)
                assert ua is not None and ub is not None
                gap = abs(ua.to_canonical(a.value) - ub.to_canonical(b.value)) / mine.scale
                if abs(gap - abs(v.value)) <= 0.5 * 10.0**-v.decimals + 1e-9:
                    diff = ToolValue(
                        round(gap, 6), mine.name, v.kind, a.message_index,
                        f"{a.path} − {b.path}" + (
                            f" (tool message {b.message_index})"
                            if b.message_index != a.message_index else ""
                        ),
                        a.day, a.place,
                    )  # fmt: skip
                    return ValueCheck(
                        v, written, None, "difference", None, diff,
                        f"a difference: equals {a.text} − {b.text} ({a.path}, {b.path})",
                    )  # fmt: skip
    return ValueCheck(
        v, written, None, "difference", None, None,
        f"no two tool values differ by {written}",
    )  # fmt: skip


def check_value(
    text: str,
    v: MeasuredValue,
    pool: Sequence[ToolValue],
    expect: Expectation,
    place: PlaceSpec | None,
    units: Sequence[Unit] = UNITS,
) -> ValueCheck:
    """Check one answer value against the tool values (see the module docstring). A value
    stated as a difference (温差, 相差, 比…高, warmer than...) is checked against the
    differences of two tool values of one day: the same field at two places, or two fields of
    one place."""
    if _is_difference(text, v):
        return _check_difference(text, v, pool)
    day = _stated(_DAY_RE, text, v, carry=True)
    if day is None:
        day = expect.day
    field_word = _stated(_FIELD_RE, text, v, carry=False) if v.kind == "temperature" else None
    written = text[v.start : v.end]
    same_kind = [tv for tv in pool if tv.kind == v.kind]
    equal = [tv for tv in same_kind if _equal(v, tv, units)]
    fits = [
        tv
        for tv in equal
        if (day is None or tv.day is None or tv.day == day)
        and _field_ok(field_word, tv)
        and (place is None or tv.place is None or place.named(tv.place))
    ]
    said = ", ".join(
        b
        for b in (
            place.query if place else None,
            _DAY_WORDS.get(day) if day is not None else None,
            field_word,
        )
        if b
    )
    if fits:
        best = next((tv for tv in fits if tv.place is not None), fits[0])
        return ValueCheck(v, written, day, field_word, place, best, f"equals {best.describe()}")
    if equal:
        other = equal[0]
        return ValueCheck(
            v, written, day, field_word, place, None,
            f"{written} is stated for {said or 'the question'}, but the tool value it equals is "
            f"{other.describe()}",
        )  # fmt: skip
    if same_kind:
        mine = unit_named(v.unit, UNITS)
        nearest = min(
            same_kind,
            key=lambda tv: (
                abs(
                    (mine.from_canonical(unit_named(tv.unit, UNITS).to_canonical(tv.value)))  # type: ignore[union-attr]
                    - v.value
                )
                if mine and unit_named(tv.unit, UNITS)
                else math.inf
            ),
        )
        why = f"no tool result holds {written}; the nearest {v.kind} is {nearest.describe()}"
    elif pool:
        why = f"no tool result holds {written}; the tool results hold no {v.kind} value"
    else:
        why = f"no tool result holds {written}; no tool result was returned in this episode"
    return ValueCheck(v, written, day, field_word, place, None, why)


def _place_for(
    text: str,
    v: MeasuredValue,
    index: int,
    mentions: Sequence[tuple[int, int, PlaceSpec]],
    respective: Mapping[int, PlaceSpec],
) -> PlaceSpec | None:
    if index in respective:
        return respective[index]
    rest = text[v.end :]
    cut = _CLAUSE.search(rest)
    clause_end = v.end + (cut.start() if cut else len(rest))
    after = [p for s, _, p in mentions if v.end <= s < min(clause_end, v.end + 8)]
    before = [p for s, e, p in mentions if e <= v.start]
    if before:
        return before[-1]
    return after[0] if after else None


@dataclass(frozen=True)
class Grounding:
    """Every value of an answer (:func:`scan` with the judge's units) checked against the
    episode's tool values: ``checks`` in answer order, ``coordinates`` skipped, the ``pool``
    of tool values."""

    answer: str
    checks: tuple[ValueCheck, ...]
    coordinates: tuple[tuple[int, int], ...]
    pool: tuple[ToolValue, ...]


def ground_answer(
    answer: str,
    transcript: Sequence[Mapping[str, Any]],
    question: Question | str | Expectation | None = None,
    units: Sequence[Unit] = UNITS,
) -> Grounding:
    """Check every value ``answer`` states against the tool values of ``transcript``."""
    expect = Expectation.of(question)
    read = scan(answer, units)
    pool = tool_values(transcript)
    mentions = _place_mentions(answer, expect.places)
    respective: dict[int, PlaceSpec] = {}
    for at, indices in read.respective:
        named: list[PlaceSpec] = []
        for s, _, p in mentions:
            if s < at and p not in named:
                named.append(p)
        if len(named) == len(indices):
            respective.update(zip(indices, named, strict=True))
    only = expect.places[0] if len(expect.places) == 1 else None
    checks = tuple(
        check_value(
            answer,
            v,
            pool,
            expect,
            _place_for(answer, v, n, mentions, respective) or only,
            units,
        )
        for n, v in enumerate(read.values)
    )
    return Grounding(answer, checks, read.coordinates, pool)


# ---- comparison ---------------------------------------------------------------------------

_HOTTEST = (
    r"(?:最热|最熱|最暖和?|最炎热|(?:气温|氣溫|温度|溫度)最高"
    r"|the hottest|hottest|the warmest|warmest)"
)


@dataclass(frozen=True)
class Conclusion:
    """A comparison's conclusion: the place the answer names hottest (``said``, with its
    ``span``), the place the tool results make hottest (``actual``) and the tool values
    compared (``values``: ``"name: 33.4°C at $.daily[0].temperature_2m_max of tool message
    9"``)."""

    said: str | None
    span: tuple[int, int] | None
    actual: str | None
    values: tuple[str, ...]
    correct: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "said": self.said,
            "span": list(self.span) if self.span else None,
            "actual": self.actual,
            "values": list(self.values),
            "correct": self.correct,
        }


def check_conclusion(answer: str, pool: Sequence[ToolValue], expect: Expectation) -> Conclusion:
    """Which place ``answer`` names hottest, and whether the tool values agree: by each place's
    daily maximum for the question's day, or (today) its current temperature."""
    names = sorted(((n, p) for p in expect.places for n in p.names()), key=lambda np: -len(np[0]))
    alt = "|".join(re.escape(n) for n, _ in names) or r"(?!)"
    pattern = re.compile(
        rf"(?P<a>{alt})(?:的|的天气|的气温|的温度|\s?is|\s?was)?\s?{_HOTTEST}(?!\s*[:：]?\s*[-−]?\d)"
        rf"|{_HOTTEST}(?:的|的城市|的是|城市是|是|的地方是|\s+(?:city\s+)?is|:|：)\s?(?P<b>{alt})",
        re.IGNORECASE,
    )
    m = pattern.search(answer)
    said_place: PlaceSpec | None = None
    if m:
        word = m.group("a") or m.group("b")
        said_place = next(p for n, p in names if n.lower() == word.lower())
    day = expect.day if expect.day is not None else 0
    best: dict[str, tuple[str, ToolValue]] = {}
    shown: list[str] = []
    for label, pick in (
        ("max", lambda tv: tv.day == day and "max" in tv.field),
        ("current", lambda tv: day == 0 and tv.path.startswith("$.current")),
    ):
        per_place: dict[PlaceSpec, ToolValue] = {}
        for tv in pool:
            if tv.kind != "temperature" or not pick(tv):
                continue
            for p in expect.places:
                if p.matches(tv.place):
                    per_place.setdefault(p, tv)
        if len(per_place) >= 2:
            top = max(per_place, key=lambda p: per_place[p].value)
            best[label] = (top.query, per_place[top])
            shown += [f"{p.query}: {tv.describe()}" for p, tv in per_place.items()]
            if label == "max":
                break
    actual = best.get("max", best.get("current", (None, None)))[0]
    said = said_place.query if said_place else None
    correct = said is not None and any(said == q for q, _ in best.values())
    return Conclusion(said, m.span() if m else None, actual, tuple(shown), correct)


# ---- verdicts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """A judge's decision: ``passed``, a one-line ``explanation``, the ``values`` read from
    the answer, and the evidence: ``checks`` (each value against the tool results; empty for
    format-only judges) and, for comparisons, the ``conclusion``."""

    passed: bool
    explanation: str
    values: tuple[MeasuredValue, ...] = ()
    checks: tuple[ValueCheck, ...] = ()
    conclusion: Conclusion | None = None
    judge: str = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"judge", "passed", "explanation", "evidence": {"values": [...], "conclusion"}}``;
        each value: ``{"span", "text", "kind", "stated_day", "stated_field", "stated_place",
        "grounded", "tool_message_index", "tool_field", "tool_value", "tool_place",
        "reason"}`` (format-only judges: span, text and kind only)."""
        values = (
            [c.to_dict() for c in self.checks]
            if self.checks
            else [{"span": [v.start, v.end], "text": v.text, "kind": v.kind} for v in self.values]
        )
        return {
            "judge": self.judge,
            "passed": self.passed,
            "explanation": self.explanation,
            "evidence": {
                "values": values,
                "conclusion": self.conclusion.to_dict() if self.conclusion else None,
            },
        }


def _answer_of(episode: Episode | str) -> str:
    return episode if isinstance(episode, str) else episode.answer


@dataclass(frozen=True)
class FormatJudge:
    """Passes an answer that states a value of the question's measure with a unit from
    ``units`` (a comparison: two); checks nothing against the tool results."""

    name: str
    units: tuple[Unit, ...] = UNITS

    def accepts(self, measure: str) -> bool:
        """Whether this judge can ever pass an answer about ``measure``."""
        if measure == NO_VALUE:
            return True
        return bool(MEASURE_KINDS.get(measure, frozenset()) & {u.kind for u in self.units})

    def judge(self, answer: str, measure: str | None = None) -> Verdict:
        """Judge the text ``answer`` for a question that measures ``measure`` (None: any)."""
        if not answer.strip():
            return Verdict(False, "empty answer", judge=self.name)
        if measure == NO_VALUE:
            return judge_no_value(self, answer)
        if measure is not None and not self.accepts(measure):
            return Verdict(
                False, f"the {self.name} judge accepts no unit for {measure}", judge=self.name
            )
        values = find_measured_values(answer, self.units)
        relevant = relevant_values(answer, values, measure)
        needed = 2 if measure == "comparison" else 1
        if len(relevant) >= needed:
            shown = ", ".join(v.text for v in relevant[:4])
            return Verdict(True, f"measured value with unit: {shown}", relevant, judge=self.name)
        if measure == "comparison" and relevant:
            return Verdict(
                False, "a comparison needs at least two temperatures", relevant, judge=self.name
            )
        if values:
            shown = ", ".join(v.text for v in values[:4])
            return Verdict(
                False, f"measures {shown}, but not the {measure} asked for", values, judge=self.name
            )
        return Verdict(False, f"no measured value with a unit ({self.name} judge)", judge=self.name)

    def judge_episode(
        self, episode: Episode | str, question: Question | str | Expectation | None = None
    ) -> Verdict:
        """Judge the episode's answer by form alone."""
        return self.judge(_answer_of(episode), Expectation.of(question).measure)


# ---- measures of the harder eval file: wind, and none (nothing to measure) ------------------

#: A question with nothing to measure (an unknown place, a question that needs no tool).
NO_VALUE = "none"

#: Added to :data:`MEASURE_KINDS`: a wind question needs a wind speed; ``none`` needs no value.
EXTRA_MEASURE_KINDS: dict[str, frozenset[str]] = {
    "wind": frozenset({"wind"}),
    NO_VALUE: frozenset(),
}
MEASURE_KINDS.update(EXTRA_MEASURE_KINDS)


def judge_no_value(judge: FormatJudge, answer: str) -> Verdict:
    """The verdict for a ``none`` question: a non-empty answer that states no measured value
    (the place is unknown, or the question needs no data); a stated value fails it."""
    values = find_measured_values(answer, judge.units)
    if values:
        shown = ", ".join(v.text for v in values[:4])
        return Verdict(
            False,
            f"states {shown}, but the question has nothing to measure",
            values,
            judge=judge.name,
        )
    return Verdict(True, "no value needed, none stated", judge=judge.name)



@dataclass(frozen=True)
class GroundedJudge(FormatJudge):
    """Passes an episode whose answer states, for the question's place and day, a value of
    its measure that a tool result of the episode holds, states no value no tool result
    holds, and (comparison) names the hottest place correctly. See the module docstring."""

    def judge(self, answer: str, measure: str | None = None) -> Verdict:
        """Without an episode there is nothing to ground against: judged with no tool
        results (so any stated value is ungrounded)."""
        return self.judge_episode(answer, measure)

    def judge_episode(
        self, episode: Episode | str, question: Question | str | Expectation | None = None
    ) -> Verdict:
        """Judge ``episode`` (or a bare answer, grounded against nothing) for ``question``."""
        answer = _answer_of(episode)
        transcript: Sequence[Mapping[str, Any]] = (
            () if isinstance(episode, str) else episode.transcript
        )
        expect = Expectation.of(question)
        j = self.name
        if not answer.strip():
            return Verdict(False, "empty answer", judge=j)
        if expect.measure == NO_VALUE:
            return judge_no_value(self, answer)
        if expect.measure is not None and not self.accepts(expect.measure):
            return Verdict(False, f"the {j} judge accepts no unit for {expect.measure}", judge=j)
        g = ground_answer(answer, transcript, expect, self.units)
        values = tuple(c.value for c in g.checks)
        relevant = set(id(v) for v in relevant_values(answer, values, expect.measure))
        rel = [c for c in g.checks if id(c.value) in relevant]
        if expect.measure == "precipitation":  # a percentage answers rain only as a probability
            rel = [
                c for c in rel
                if c.value.kind != "percent" or (c.match is not None and "probab" in c.match.field)
            ]  # fmt: skip

        def fail(why: str, conclusion: Conclusion | None = None) -> Verdict:
            return Verdict(False, why, values, g.checks, conclusion, j)

        ungrounded = [c for c in g.checks if not c.grounded]
        if ungrounded:
            c = ungrounded[0]
            return fail(f"fabricated value: {c.reason}")
        what = expect.measure or "measured value"
        if not rel:
            skipped = f"; {len(g.coordinates)} coordinate(s) skipped" if g.coordinates else ""
            if values:
                shown = ", ".join(c.text for c in g.checks[:4])
                return fail(f"states {shown}, but no {what} value{skipped}")
            return fail(f"no {what} value with a unit{skipped}")
        for_day = [
            c
            for c in rel
            if expect.day is None or c.match is None or c.match.day in (None, expect.day)
        ]
        if not for_day:
            return fail(
                f"the {what} values stated are for {_DAY_WORDS.get(rel[0].day, 'another day')}; "
                f"the question asks about {_DAY_WORDS.get(expect.day, 'another day')}"
            )
        if expect.places:
            on_place = [
                c for c in for_day
                if c.match is not None and any(p.matches(c.match.place) for p in expect.places)
            ]  # fmt: skip
            if not on_place:
                c = for_day[0]
                where = c.match.place_text if c.match else None
                wanted = ", ".join(f"{p.query} ({p.region})" for p in expect.places)
                return fail(
                    f"{c.text} is a tool value for "
                    f"{where or 'a place the tool results do not name'}, not for {wanted}"
                )
        else:
            on_place = for_day
        if expect.measure == "comparison":
            covered = {
                p for c in on_place for p in expect.places if c.match and p.matches(c.match.place)
            }
            conclusion = check_conclusion(answer, g.pool, expect)
            if len(covered) < 2:
                return fail(
                    "a comparison needs grounded temperatures of at least two of its places; "
                    f"found {len(covered)}",
                    conclusion,
                )
            if conclusion.said is None:
                return fail("the answer names no hottest place", conclusion)
            if not conclusion.correct:
                return fail(
                    f"the answer says {conclusion.said} is hottest, but the tool results make "
                    f"{conclusion.actual} hottest ({'; '.join(conclusion.values)})",
                    conclusion,
                )
            shown = ", ".join(c.text for c in on_place[:4])
            return Verdict(
                True,
                f"grounded values {shown}; {conclusion.said} is hottest, as the tool results say",
                values, g.checks, conclusion, j,
            )  # fmt: skip
        c = on_place[0]
        assert c.match is not None
        return Verdict(
            True, f"states {c.text}, which equals {c.match.describe()}", values, g.checks, None, j
        )


Judge = FormatJudge
GROUNDED_JUDGE = GroundedJudge("grounded")
FORMAT_JUDGE = FormatJudge("format-only")
NARROW_JUDGE = FormatJudge("celsius-only", tuple(u for u in UNITS if u.name == "°C"))
#: The judge in use.
FULL_JUDGE = GROUNDED_JUDGE
JUDGES = {j.name: j for j in (GROUNDED_JUDGE, FORMAT_JUDGE, NARROW_JUDGE)}


def narrowed(judge: FormatJudge, drop: Sequence[str], name: str | None = None) -> FormatJudge:
    """A copy of ``judge`` without the units named in ``drop`` (for breadth checks)."""
    return replace(
        judge, name=name or judge.name, units=tuple(u for u in judge.units if u.name not in drop)
    )


__all__ = [
    "FORMAT_JUDGE", "FULL_JUDGE", "GROUNDED_JUDGE", "JUDGES", "MEASURE_KINDS", "NARROW_JUDGE",
    "UNITS", "Conclusion", "Expectation", "FormatJudge", "GroundedJudge", "Grounding", "Judge",
    "MeasuredValue", "PlaceSpec", "Scan", "ToolValue", "Unit", "ValueCheck", "Verdict",
    "check_conclusion", "find_measured_values", "ground_answer", "narrowed", "relevant_values",
    "scan", "tool_values", "unit_named",
]  # fmt: skip
