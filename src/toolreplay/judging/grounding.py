"""Grounding: the day, field and place each value of an answer states, and whether a tool value
holds it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolreplay.judging.toolvalues import _DAY_WORDS, ToolPlace, ToolValue, tool_values
from toolreplay.judging.units import Unit, unit_named
from toolreplay.judging.values import MeasuredValue, scan
from toolreplay.judging.vocabulary import Vocabulary, resolve

if TYPE_CHECKING:
    from toolreplay.evals import Question


@dataclass(frozen=True)
class _Words:
    """What grounding compiles from a vocabulary."""

    days: tuple[tuple[int, re.Pattern[str]], ...]
    fields: tuple[tuple[str, re.Pattern[str]], ...]
    local: frozenset[str]  # field tags that hold only in their own clause
    fits: dict[str, tuple[re.Pattern[str] | None, re.Pattern[str] | None]]  # tag → (path, field)
    difference_before: re.Pattern[str]
    difference_after: re.Pattern[str]


def _never(pattern: str) -> str:
    return pattern or r"(?!)"


@functools.lru_cache(maxsize=16)
def _words(vocabulary: Vocabulary) -> _Words:
    def c(pattern: str | None) -> re.Pattern[str] | None:
        return None if pattern is None else re.compile(pattern, re.IGNORECASE)

    return _Words(
        tuple((day, re.compile(p, re.IGNORECASE)) for day, p in vocabulary.day_words),
        tuple((f.tag, re.compile(f.words, re.IGNORECASE)) for f in vocabulary.field_words),
        frozenset(f.tag for f in vocabulary.field_words if f.clause_only),
        {f.tag: (c(f.path), c(f.field)) for f in vocabulary.field_words},
        # a value stated as a difference: right after 温差/相差/比…高, or right before "warmer"
        re.compile(
            r"(?:" + _never(vocabulary.difference_before) + r")"
            r"(?:了|约|約|大约|大約|为|為|是|\s)*$",
            re.IGNORECASE,
        ),
        re.compile(r"\s*(?:" + _never(vocabulary.difference_after) + r")(?![a-z])", re.IGNORECASE),
    )


def fits_field(tag: str, tv: ToolValue, vocabulary: Vocabulary | None = None) -> bool:
    """Whether tool value ``tv`` is the field the word tagged ``tag`` names (a
    :class:`~toolreplay.judging.vocabulary.FieldWord`); True for an unknown tag."""
    path, field = _words(resolve(vocabulary)).fits.get(tag, (None, None))
    if path is not None:
        return path.match(tv.path) is not None
    if field is not None:
        return field.search(tv.field) is not None
    return True


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
    local: frozenset[str] = frozenset(),
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
        # "now" (a tag in ``local``) only holds in its own clause (现在 26°C，下午升到 29°C)
        own = _CLAUSE.split(before)[-1]
        tag = _last_before(patterns, before)
        if tag in local and _last_before(patterns, own) != tag:
            return _last_before([p for p in patterns if p[0] != tag], before)
        return tag
    return _last_before(patterns, before)


@dataclass(frozen=True)
class PlaceSpec:
    """A place a question is about: ``query`` (e.g. 宁德), ``region`` (compared with a tool
    place's :attr:`~toolreplay.judging.toolvalues.ToolPlace.region`, Open-Meteo's ``admin1``)
    and other ``aliases`` an answer may use (``Guangzhou``)."""

    query: str
    region: str | None
    aliases: tuple[str, ...] = ()

    def named(self, place: ToolPlace | None) -> bool:
        """Whether a tool result's place has this place's name or one of its aliases (宁德 and
        宁德市 alike; ``Beijing`` with the alias 北京 names 北京)."""
        if place is None:
            return False
        name = place.name.removesuffix("市")
        if not name:
            return False
        for q in (self.query, *self.aliases):
            q = q.removesuffix("市")
            if name.startswith(q) or q.startswith(name):
                return True
        return False

    def matches(self, place: ToolPlace | None) -> bool:
        """Whether a tool result's place is this one: same name and region."""
        return self.named(place) and place is not None and place.region == self.region

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
    mine, theirs = unit_named(v.unit, units), unit_named(tv.unit, units)
    if mine is None or theirs is None or mine.kind != theirs.kind:
        return False
    in_my_unit = mine.from_canonical(theirs.to_canonical(tv.value))
    return abs(in_my_unit - v.value) <= 0.5 * 10.0**-v.decimals + 1e-9


def _field_ok(field_word: str | None, tv: ToolValue, vocab: Vocabulary) -> bool:
    if field_word is None or tv.kind not in vocab.field_kinds or tv.day is None:
        return True  # nothing stated, or a tool value whose field and day are unknown
    return fits_field(field_word, tv, vocab)


def _is_difference(text: str, v: MeasuredValue, vocab: Vocabulary) -> bool:
    w = _words(vocab)
    before = _CLAUSE.split(text[: v.start])[-1]
    return bool(w.difference_before.search(before) or w.difference_after.match(text, v.end))


def _check_difference(
    text: str, v: MeasuredValue, pool: Sequence[ToolValue], units: Sequence[Unit]
) -> ValueCheck:
    written = text[v.start : v.end]
    mine = unit_named(v.unit, units)
    same = [tv for tv in pool if tv.kind == v.kind and unit_named(tv.unit, units) is not None]
    if mine is not None:
        for n, a in enumerate(same):
            for b in same[n + 1 :]:
                if a.day != b.day or not (
                    a.field == b.field or (a.place is not None and a.place == b.place)
                ):
                    continue  # the same field at two places, or two fields of one place
                ua, ub = unit_named(a.unit, units), unit_named(b.unit, units)
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
    units: Sequence[Unit] | None = None,
    vocabulary: Vocabulary | None = None,
) -> ValueCheck:
    """Check one answer value ``v`` of ``text`` against the tool values ``pool`` (see
    :mod:`toolreplay.judging.verdicts`), reading the day and field words of ``vocabulary``
    (None: the default study's). Tool units are converted with all of its units (``units``
    is the judge's reading and does not change what a tool value is). A value stated as a
    difference (the vocabulary's difference words: 温差, 相差, 比…高, warmer than...) is
    checked against the differences of two tool values of one day: the same field at two
    places, or two fields of one place."""
    vocab = resolve(vocabulary)
    every = vocab.units
    if _is_difference(text, v, vocab):
        return _check_difference(text, v, pool, every)
    w = _words(vocab)
    day = _stated(w.days, text, v, carry=True)
    if day is None:
        day = expect.day
    field_word = (
        _stated(w.fields, text, v, carry=False, local=w.local)
        if v.kind in vocab.field_kinds
        else None
    )
    written = text[v.start : v.end]
    same_kind = [tv for tv in pool if tv.kind == v.kind]
    equal = [tv for tv in same_kind if _equal(v, tv, every)]
    fits = [
        tv
        for tv in equal
        if (day is None or tv.day is None or tv.day == day)
        and _field_ok(field_word, tv, vocab)
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
        mine = unit_named(v.unit, every)
        nearest = min(
            same_kind,
            key=lambda tv: (
                abs(
                    (mine.from_canonical(unit_named(tv.unit, every).to_canonical(tv.value)))  # type: ignore[union-attr]
                    - v.value
                )
                if mine and unit_named(tv.unit, every)
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
    units: Sequence[Unit] | None = None,
    vocabulary: Vocabulary | None = None,
) -> Grounding:
    """Check every value ``answer`` states (read with ``units``; None: all of the
    vocabulary's) against the tool values of ``transcript`` (OpenAI chat-format dicts), with
    ``vocabulary`` (None: the default study's)."""
    vocab = resolve(vocabulary)
    expect = Expectation.of(question)
    read = scan(answer, units, vocab)
    pool = tool_values(transcript, vocab)
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
            vocab,
        )
        for n, v in enumerate(read.values)
    )
    return Grounding(answer, checks, read.coordinates, pool)
