"""Reading values: a small lexer and grammar turning an answer's text into measured values (numbers
with units, ranges, lists) and coordinates.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from toolreplay.judging.degrees import bearing, coordinate_pair, label_letter, readings
from toolreplay.judging.number_words import CHINESE, ENGLISH, word_number
from toolreplay.judging.presentation import Plain, plain
from toolreplay.judging.units import Unit, unit_named
from toolreplay.judging.vocabulary import Vocabulary, resolve


def _alternatives(patterns: Sequence[str]) -> str:
    return "|".join(f"(?:{p})" for p in patterns) if patterns else r"(?!)"


@dataclass(frozen=True)
class _Grammar:
    """What the lexer compiles from a vocabulary."""

    token: re.Pattern[str]
    prefixes: tuple[tuple[re.Pattern[str], str], ...]
    by_name: dict[str, Unit]
    context: dict[tuple[str, str], re.Pattern[str]]  # (measure, kind) → clause words


#: Numbers written in other ways than ``1,234.5``: grouped by a no-break or thin space
#: (``1 234``, ``1 234,5``: the decimal a comma or a point), by points with a decimal comma
#: (``1.234,5``) or by two or more points (``1.234.567``); a decimal comma with one or two
#: digits (``12,5``, ``12,50``: three digits are a thousands group). ``1.234`` alone stays
#: one point two three four.
_SPACES = "\u00a0\u202f\u2009"
_GROUPED = (
    rf"[0-9]{{1,3}}(?:[{_SPACES}][0-9]{{3}})+(?:[.,][0-9]+)?(?![0-9])"
    r"|[0-9]{1,3}(?:\.[0-9]{3})+,[0-9]+|[0-9]{1,3}(?:\.[0-9]{3}){2,}(?![0-9])"
    r"|[0-9]+,[0-9]{1,2}(?![0-9])"
)

#: A fraction read as one number, as recipes and imperial lengths write it: ``1/4`` (0.25),
#: ``3/8``, ``1 1/2`` (1.5), ``¼``, ``1½``: proper fractions of halves to sixty-fourths only,
#: so ``28/20°C`` (a high and a low) and ``9/17`` stay what they were.
_VULGAR = dict(zip("½¼¾⅓⅔⅛⅜⅝⅞", (.5, .25, .75, 1 / 3, 2 / 3, .125, .375, .625, .875), strict=True))
#: Month names a day's number follows (``Dec 3 1/4 inch``: 3 is the day, not a whole part).
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_NOT_A_DAY = "".join(rf"(?<!{m} )(?<!{m}\. )" for m in _MONTHS)
_FRACTION = (
    r"(?<![0-9/.])(?:" + _NOT_A_DAY + r"[0-9]+[ -])?"
    r"(?:1/[234]|2/3|3/4|[1357]/8|(?:[1-9]|1[0-5])/16"
    r"|(?:[1-9]|[12][0-9]|3[01])/32|(?:[1-9]|[1-5][0-9]|6[0-3])/64)(?![0-9/])"
    r"|(?<![0-9/.])[0-9]*[" + "".join(_VULGAR) + "]"
)


def _fraction(text: str) -> tuple[float, int] | None:
    """A :data:`_FRACTION`'s value and the decimals it is read to (0.25: 2; a third: 2)."""
    if "/" in text:  # 1/4, 3 1/4, 2-1/2 (a whole part and its fraction)
        whole, _, part = text.rpartition(" ") if " " in text else text.rpartition("-")
    else:
        whole, part = "", text
    if "/" not in part and part[-1:] not in _VULGAR:
        return None
    top, _, bottom = part.partition("/")
    frac = int(top) / int(bottom) if bottom else _VULGAR[part[-1]]
    value = float((whole if bottom else part[:-1]) or 0) + frac
    return value, next((d for d in range(4) if round(value, d) == value), 2)


def _digits(text: str) -> str:
    """A number's text as Python reads it: group separators dropped, a decimal comma made a
    point (:data:`_GROUPED`); ``1,234.5`` → ``1234.5``, ``1.234,5`` → ``1234.5``."""
    if any(c in text for c in _SPACES):
        return "".join(c for c in text if c not in _SPACES).replace(",", ".")
    if text.count(".") > 1 or ("." in text and "," in text and text.index(".") < text.index(",")):
        return text.replace(".", "").replace(",", ".")
    if re.fullmatch(r"[0-9]+,[0-9]{1,2}", text):
        return text.replace(",", ".")
    return text.replace(",", "")


@functools.lru_cache(maxsize=16)
def _grammar(vocabulary: Vocabulary) -> _Grammar:
    token = re.compile(
        r"(?P<coord>北纬|南纬|东经|西经|北緯|南緯|東經|西經|纬度|緯度|经度|經度|经纬度|經緯度|坐标|坐標"
        r"|(?<![a-z])(?:latitude|longitude|lat|lon|lng|coordinates?)(?![a-z]))"
        r"|(?P<resp>分别|分別|(?<![a-z])respectively(?![a-z]))"
        r"|(?P<sign>零下|负|負|(?<![a-z])minus(?![a-z]))"
        r"|(?P<prefix>" + _alternatives([p for p, _ in vocabulary.prefix_units]) + r")"
        r"|(?P<bracket>[(（/]\s*(?:单位[:：]\s*|unit[:：]?\s*)?(?P<bunit>"
        + (vocabulary.bracket_units or r"(?!)")
        + r")\s*[)）]?\s*[:：]?|(?<![a-z0-9])(?P<bunit2>"
        + (vocabulary.bracket_units or r"(?!)")
        + r")(?![a-z])\s*[:：]?)"
        r"|(?P<date>[0-9]{4}[-/.][0-9]{1,2}[-/.][0-9]{1,2}(?:[T ][0-9]{1,2}:[0-9]{2})?"
        r"|[0-9]{1,2}:[0-9]{2}|[0-9]{1,2}月[0-9]{1,2}[日号]?)"
        r"|(?P<num>" + _FRACTION + "|" + _GROUPED + r"|[0-9０-９]+(?:,[0-9]{3})*(?:\.[0-9０-９]+)?"
        r"|" + CHINESE + r"|" + ENGLISH + r")"
        r"|(?P<dash>[-−])"
        r"|(?P<range>[~～〜–—至到]|(?<![a-z])to(?![a-z]))"
        r"|(?P<sep>[、,/和与與及对對]|(?<![a-z])(?:and|or|vs\.?|versus)(?![a-z]))"
        r"|(?P<brk>[，。；;！!？?\n:：]|\.(?=\s|$))"
        r"|(?P<space>\s+)",
        re.IGNORECASE,
    )
    return _Grammar(
        token,
        tuple((re.compile(p, re.IGNORECASE), n) for p, n in vocabulary.prefix_units),
        {u.name: u for u in vocabulary.units},
        {
            (m.name, kind): re.compile(words, re.IGNORECASE)
            for m in vocabulary.measures
            for kind, words in m.context.items()
        },
    )


_HEMISPHERE = re.compile(r"\s?(?:°|度)?\s?(?-i:[NSEW])(?![a-zA-Z])")
_DMS = re.compile(r"\s?(?:°|度)\s?[0-9]+(?:\.[0-9]+)?\s?(?:[′']|分)")


@dataclass(frozen=True)
class _Tok:
    kind: str  # coord resp sign prefix free num dash range sep brk other
    start: int
    end: int
    value: float = 0.0
    decimals: int = 0
    unit: Unit | None = None
    unit_end: int = 0
    coordinate: bool = False  # a hemisphere letter or minutes follow the number


def parse_chinese_number(text: str) -> float:
    """``"二十六"`` → 26, ``"三十点五"`` → 30.5, ``"一百零五"`` → 105, ``"十"`` → 10 (by
    :func:`~toolreplay.judging.number_words.chinese_number`); raises :class:`ValueError` for
    text that is not one Chinese numeral."""
    read = word_number(text)
    if read is None or re.match(r"[a-z]", text, re.IGNORECASE):
        raise ValueError(f"not a Chinese numeral: {text!r}")
    return read[0]


def _number(text: str) -> tuple[float, int] | None:
    """A number token's value and decimals written; None for words that are not one number."""
    if (read := _fraction(text)) is not None:
        return read
    if re.match(r"[0-9０-９]", text):
        t = _digits(text)
        return float(t), len(t.split(".", 1)[1]) if "." in t else 0
    return word_number(text)


def _unit_after(
    text: str, pos: int, units: Sequence[Unit], value: float
) -> tuple[Unit, int] | None:
    """The unit written at ``pos``, right after ``value``: not an explicit unit whose
    ``plausible`` range ``value`` is outside (a ``5 K race`` is no kelvin)."""
    for u in units:
        m = re.compile(r"\s?(?:" + u.pattern + ")", re.IGNORECASE).match(text, pos)
        if m and (u.plausible is None or not u.explicit or _within(value, u.plausible)):
            return u, m.end()
    return None


def _within(value: float, span: tuple[float, float]) -> bool:
    return span[0] <= value <= span[1]


def _lex(text: str, units: Sequence[Unit], grammar: _Grammar) -> Iterator[_Tok]:
    pos, other = 0, -1
    by_name = grammar.by_name
    while pos < len(text):
        m = grammar.token.match(text, pos)
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
        if kind in ("bunit", "bunit2"):
            kind = "bracket"
        if kind == "prefix" or kind == "bracket":
            word = m.group("bunit") or m.group("bunit2") or m.group()
            name = next((n for p, n in grammar.prefixes if p.fullmatch(word)), word)
            unit = unit_named(name, units) if name in by_name else unit_named(word, units)
            if kind == "prefix" and re.match(r"[a-z]", word, re.IGNORECASE):
                # an English unit word is a prefix only when a number follows
                if not re.match(r"\s*[:：]?\s*[-−]?[0-9]", text[m.end() :]):
                    other = pos if other < 0 else other
                    pos = m.end()
                    continue
            yield _Tok("free" if kind == "bracket" else "prefix", m.start(), m.end(), unit=unit)
            pos = m.end()
            continue
        if kind == "num":
            read = _number(m.group())
            if read is None:  # words that are no one number (三四, one two): other text
                other = pos if other < 0 else other
                pos = m.end()
                continue
            value, decimals = read
            end = m.end()
            coordinate = bool(_DMS.match(text, end) or _HEMISPHERE.match(text, end))
            found = None if coordinate else _unit_after(text, end, units, value)
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


def value_text(value: float, unit: str) -> str:
    """A value with its unit as the report and the judge's explanations write it: a unit
    that begins with a letter set apart by a space (``40 units``, ``2 days``, ``2.25 EUR``,
    ``5 mm``), a symbol kept against the number (``30.9°C``, ``60%``)."""
    number = f"{value:g}"
    if unit[:1].isalpha():
        return f"{number} {unit}"
    return f"{number}{unit}"


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
        return value_text(self.value, self.unit)


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` read: measured values in order, the spans read as coordinates,
    (for ``分别``/``respectively``) which values were listed together (indices into
    ``values``), and every list of two values or more joined by list connectors (``、``,
    ``,``, ``/``, 和, ``and``, ``vs``; not a range), as indices into ``values``; ``ranges``:
    the pairs of values written as a range (``25–35°C``, ``25 到 35 度``, ``between 25 and
    35°C``, 25 和 35 度之间), as indices into ``values``."""

    values: tuple[MeasuredValue, ...]
    coordinates: tuple[tuple[int, int], ...]
    respective: tuple[tuple[int, tuple[int, ...]], ...] = ()  # (resp token start, value indices)
    lists: tuple[tuple[int, ...], ...] = ()
    ranges: tuple[tuple[int, int], ...] = ()  # (low end, high end) indices: 25–35°C


def scan(
    text: str, units: Sequence[Unit] | None = None, vocabulary: Vocabulary | None = None
) -> Scan:
    """Read ``text`` with the grammar in :mod:`toolreplay.judging.verdicts`'s docstring: the
    units in ``units`` (None: all of the vocabulary's), unit words before a number and the
    bracketed units of ``vocabulary`` (None: the default study's). Markup is stripped first
    (:func:`~toolreplay.judging.presentation.plain`); spans are spans of ``text``."""
    p = plain(text)
    read = scan_plain(p.text, units, vocabulary)
    if p.unchanged:
        return read
    return Scan(
        tuple(remap(p, v) for v in read.values),
        tuple(p.span(s, e) for s, e in read.coordinates),
        tuple((p.span(at, at + 1)[0], ix) for at, ix in read.respective),
        read.lists,
        read.ranges,
    )


def remap(p: Plain, v: MeasuredValue) -> MeasuredValue:
    """``v``, read from ``p.text``, with the span of the answer it was read from."""
    start, end = p.span(v.start, v.end)
    return replace(v, start=start, end=end)


def scan_plain(
    text: str, units: Sequence[Unit] | None = None, vocabulary: Vocabulary | None = None
) -> Scan:
    """:func:`scan` of text already plain (no markup stripped; spans are spans of ``text``)."""
    vocab = resolve(vocabulary)
    if units is None:
        units = vocab.units
    toks = list(_lex(text, units, _grammar(vocab)))
    values: list[MeasuredValue] = []
    coords: list[tuple[int, int]] = []
    respective: list[tuple[int, tuple[int, ...]]] = []
    lists: list[tuple[int, ...]] = []
    ranges: list[tuple[int, int]] = []
    coord_budget = 0
    resp_at: int | None = None
    free: Unit | None = None  # a unit written before its numbers: (℃)：26, 最高气温/℃ 31.1
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "free":
            free = t.unit
        if t.kind == "brk":
            mark = text[t.start]
            if mark not in ":：":
                coord_budget = 0
            if mark in "。！!？?\n.":
                resp_at = None
                free = None
        elif t.kind == "coord":
            coord_budget = 2
        elif t.kind == "resp":
            resp_at = t.start
        if t.kind not in ("num", "sign", "dash", "prefix"):
            i += 1
            continue
        # a run: [prefix] [sign] num ((dash|range|sep) [sign] num)*, or -€12: [dash] prefix num
        run: list[tuple[_Tok, int, bool]] = []  # (number, start incl. sign/prefix, negative)
        prefixed, prefix = False, None
        ranged = False  # a range connector joins two of the run's numbers
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
                if (  # a sign written right before a prefix unit: -€12, −$5
                    not prefixed
                    and toks[j - 1].kind == "dash"
                    and j < len(toks)
                    and toks[j].kind == "prefix"
                    and toks[j].start == toks[j - 1].end
                ):
                    prefixed, prefix = True, toks[j].unit
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
                    or (nxt.kind in ("sign", "dash", "prefix") and after and after.kind == "num")
                )
            ):
                ranged = ranged or toks[j].kind in ("dash", "range")
                j += 1
                continue
            break
        if not run:
            i = max(j, i + 1)
            continue
        shared = run[-1][0].unit
        if shared is not None and shared is not free:
            free = None  # a number with a unit of its own starts a new context
        indices: list[int] = []
        pair = len(run) == 2 and coordinate_pair(
            (run[0][0].value, run[0][0].decimals, run[0][0].unit),
            (run[1][0].value, run[1][0].decimals, run[1][0].unit),
            text[run[0][0].unit_end : run[1][0].start], vocab.implicit_range,
        )  # fmt: skip
        for n, s, negative in run:
            unit = prefix if prefixed else (n.unit or shared or free)
            in_context = coord_budget > 0
            implausible = unit is not None and (  # a coordinate, a bearing, a label
                (
                    not unit.explicit
                    and (
                        n.decimals >= 3 or pair
                        or not readings(n.value, unit, vocab.units, vocab.implicit_range)
                        or bearing(text, s, max(n.unit_end, n.end))
                    )
                )
                or (unit is n.unit and label_letter(text, s, unit))  # floor 4f, bin 7c
            )  # fmt: skip
            if n.coordinate or implausible or (in_context and (unit is None or not unit.explicit)):
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
        if len(indices) == 2 and not ranged and len(run) == 2:
            ranged = between(text, run[0][1], values[indices[-1]].end)  # between 25 and 35°C
        if len(indices) > 1 and not ranged:
            lists.append(tuple(indices))
        elif len(indices) == 2 and len(run) == 2:
            ranges.append((indices[0], indices[1]))
        i = j
    return Scan(tuple(values), tuple(coords), tuple(respective), tuple(lists), tuple(ranges))


#: The words that make ``A and B`` a range: ``between A and B``, 介于 A 和 B, A 和 B 之间.
_BETWEEN_BEFORE = re.compile(r"(?:介于|介於|(?<![a-z])between(?![a-z]))\s*$", re.IGNORECASE)
_BETWEEN_AFTER = re.compile(r"\s*(?:之间|之間|中间|中間)")


def between(text: str, start: int, end: int) -> bool:
    """Whether the two values written at ``text[start:end]`` (``25 and 35°C``) are a range:
    after ``between``/介于 or before 之间."""
    return bool(
        _BETWEEN_BEFORE.search(text[max(0, start - 12) : start]) or _BETWEEN_AFTER.match(text, end)
    )


def find_measured_values(
    text: str, units: Sequence[Unit] | None = None, vocabulary: Vocabulary | None = None
) -> tuple[MeasuredValue, ...]:
    """Every measured value in ``text`` (:func:`scan`), in order; coordinates excluded."""
    return scan(text, units, vocabulary).values


def _clause_before(text: str, start: int, limit: int = 30) -> str:
    window = text[max(0, start - limit) : start]
    return re.split(r"[，,。；;！!？?\n]", window)[-1]


def _clause_after(text: str, end: int, limit: int = 16) -> str:
    window = text[end : end + limit]
    return re.split(r"[，,。；;！!？?\n]|(?<![a-z])(?:and|but)(?![a-z])", window)[0]


def relevant_values(
    text: str,
    values: Sequence[MeasuredValue],
    measure: str | None,
    vocabulary: Vocabulary | None = None,
) -> tuple[MeasuredValue, ...]:
    """The ``values`` that answer ``measure`` (all of them when ``measure`` is None): of a kind
    the vocabulary's measure declares (none for a measure it does not declare), and, where the
    measure names context words for the kind, only in a clause that has them before or just
    after the value (a humidity percentage does not answer a rain question). ``values`` are
    spans of ``text`` as written; the clause is read from its plain form."""
    if measure is None:
        return tuple(values)
    vocab = resolve(vocabulary)
    kinds = vocab.kinds(measure)
    context = _grammar(vocab).context
    p = plain(text)
    out = []
    for v in values:
        if v.kind not in kinds:
            continue
        words = context.get((measure, v.kind))
        if words is None or words.search(_clause_before(p.text, p.to_plain(v.start))):
            out.append(v)
        elif words.search(_clause_after(p.text, p.to_plain(v.end))):
            out.append(v)  # 60% 会下雨, 60% chance of rain
    return tuple(out)
