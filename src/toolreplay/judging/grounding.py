"""Grounding: the day, field and place each value of an answer states, and whether a tool value
holds it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolreplay.evals import MeasureDeclaration
from toolreplay.judging.bounds import (
    BETWEEN,
    bound_of,
    holds,
    pinned_reason,
    pins,
    statement,
    vacuous_reason,
)
from toolreplay.judging.checkable import unchecked
from toolreplay.judging.mentions import answer_places
from toolreplay.judging.places import CLAUSE, SENTENCE, PlaceSpec, attribute
from toolreplay.judging.presentation import plain
from toolreplay.judging.shared import made_once
from toolreplay.judging.toolvalues import DAY_WORDS as _DAY_WORDS
from toolreplay.judging.toolvalues import ToolValue
from toolreplay.judging.units import Unit, unit_named
from toolreplay.judging.values import MeasuredValue, remap, scan_plain
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
            r"(?:了|约|約|大约|大約|为|為|是|将近|將近|接近|近|足足|整整|大概|\s)*$",
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
    resets: Sequence[tuple[Any, re.Pattern[str]]] = (),
) -> Any:
    """What ``patterns`` say about value ``v``: a word right after it in its clause wins when
    no number follows in the clause (``28.6°C (high)``, not ``20.5°C to a high of 31.1°C``),
    then the nearest word before it in its sentence (or, with ``carry``, anywhere before it).
    A word tagged in ``local`` holds only in its own clause and until a word of ``resets``
    (现在 26°C，下午升到 29°C; 现在 30.9°C / 今天 20.5–31.1°C)."""
    rest = text[v.end :]
    cut = CLAUSE.search(rest)
    after = rest[: cut.start()] if cut else rest
    if "°" not in after[:1]:
        tag = _last_before(patterns, after[:12])
        if tag is not None and not re.search(r"\d", after):
            return tag
    before = text[: v.start]
    if not carry:
        starts = [m.end() for m in SENTENCE.finditer(before)]
        before = before[starts[-1] :] if starts else before
        # 最高/最低 carry over a sentence's clauses (今天最高气温：北京 31°C，上海 29°C);
        # "now" (a tag in ``local``) only holds in its own clause (现在 26°C，下午升到 29°C)
        own = CLAUSE.split(before)[-1]
        tag = _last_before(patterns, before)
        if tag in local:
            ends = [m.end() for t, p in patterns if t == tag for m in p.finditer(own)]
            if not ends or any(r.search(own, max(ends)) for _, r in resets):
                return _last_before([p for p in patterns if p[0] != tag], before)
        return tag
    return _last_before(patterns, before)


@dataclass(frozen=True)
class Target:
    """What the judge grounds an answer against (its target; not an eval file's
    expectation): the question's ``measure`` (None: any value), ``day`` (an index into the
    tool results' day series, the question's ``day_index``; None: any) and ``places`` (empty:
    any place), and the ``measures`` its eval file declares (added to the judge's vocabulary,
    :func:`toolreplay.judging.measures.declared_vocabulary`)."""

    measure: str | None = None
    day: int | None = None
    places: tuple[PlaceSpec, ...] = ()
    measures: tuple[MeasureDeclaration, ...] = ()

    @classmethod
    def of(cls, question: Question | str | Target | None) -> Target:
        """From an :class:`~toolreplay.evals.Question`, a bare measure name, or None."""
        if question is None or isinstance(question, str):
            return cls(question)
        if isinstance(question, Target):
            return question
        return cls(
            question.measure,
            question.day_index,
            tuple(PlaceSpec(p.query, p.region, tuple(p.names)) for p in question.places),
            tuple(getattr(question, "declared_measures", ())),
        )

    def in_vocabulary(self, vocab: Vocabulary) -> Target:
        """This target with its places spelt by ``vocab`` (its ``place_suffixes``)."""
        if all(p.suffixes == vocab.place_suffixes for p in self.places):
            return self
        places = tuple(replace(p, suffixes=vocab.place_suffixes) for p in self.places)
        return replace(self, places=places)


@dataclass(frozen=True)
class ValueCheck:
    """One value of the answer and what it was checked against.

    ``span``/``text``: where the answer states it; ``day``/``field``/``place``: what the
    answer states it for (None: not said, so any); ``match``: the tool value it equals (None
    when no tool value does); ``reason``: why it is or is not grounded, in words. A value
    said of several places at once (都是 31°C) is stated for ``place`` and the places in
    ``also``, and grounded when each has a tool value equal to it (``also_matches``). A
    ``bound`` (``at least``: 30°C 以上, over 30°C; ``at most``; ``between``: an end of a range,
    25–35°C) is grounded by a tool value it is true of and pins
    (:mod:`toolreplay.judging.bounds`); ``vacuous`` when it is true of one but pins none
    (``above 0°C``): neither grounded nor a fabrication; not ``checkable`` when the episode
    holds nothing to check it against (:mod:`toolreplay.judging.checkable`): neither either.
    ``place_span``: where the answer names ``place`` (None: not named, or by position)."""

    value: MeasuredValue
    text: str
    day: int | None
    field: str | None
    place: PlaceSpec | None
    match: ToolValue | None
    reason: str
    also: tuple[PlaceSpec, ...] = ()
    also_matches: tuple[ToolValue, ...] = ()
    place_span: tuple[int, int] | None = None
    bound: str | None = None  # "at least" (30°C 以上), "at most", "between"; None: a value
    vacuous: bool = False  # a bound or range true of a tool value that pins none
    checkable: bool = True  # False: no tool result it could be checked against (checkable.py)

    @property
    def places(self) -> tuple[PlaceSpec, ...]:
        """Every place the value is stated for."""
        return ((self.place,) if self.place else ()) + self.also

    @property
    def matches(self) -> tuple[ToolValue, ...]:
        """The tool values it equals, one per place it is stated for (empty: ungrounded)."""
        return ((self.match,) if self.match else ()) + self.also_matches

    @property
    def grounded(self) -> bool:
        return self.match is not None

    @property
    def fabricated(self) -> bool:
        """Stated, checkable, and held by no tool value (a vacuous bound is not)."""
        return self.match is None and not self.vacuous and self.checkable

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
            "grounded": self.grounded if self.checkable else None,
            "tool_message_index": m.message_index if m else None,
            "tool_field": m.path if m else None,
            "tool_value": m.text if m else None,
            "tool_place": m.place_text if m else None,
            "reason": self.reason,
        } | ({"stated_places": [p.query for p in self.places]} if self.also else {})


def _field_ok(field_word: str | None, tv: ToolValue, vocab: Vocabulary) -> bool:
    if field_word is None or tv.kind not in vocab.field_kinds or tv.day is None:
        return True  # nothing stated, or a tool value whose field and day are unknown
    return fits_field(field_word, tv, vocab)


def _is_difference(text: str, v: MeasuredValue, vocab: Vocabulary) -> bool:
    w = _words(vocab)
    before = CLAUSE.split(text[: v.start])[-1]
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
    expect: Target,
    place: PlaceSpec | None,
    units: Sequence[Unit] | None = None,
    vocabulary: Vocabulary | None = None,
    also: Sequence[PlaceSpec] = (),
    *,
    results_returned: bool = False,
    upto: MeasuredValue | None = None,
) -> ValueCheck:
    """Check one answer value ``v`` of ``text`` against the tool values ``pool`` (see
    :mod:`toolreplay.judging.verdicts`), reading the day and field words of ``vocabulary``
    (None: the default study's). Tool units are converted with all of its units (``units``
    is the judge's reading and does not change what a tool value is). A value stated as a
    difference (the vocabulary's difference words: 温差, 相差, 比…高, warmer than...) is
    checked against the differences of two tool values of one day: the same field at two
    places, or two fields of one place. A value stated for ``place`` and the places ``also``
    at once is grounded when each of them has a tool value equal to it. ``results_returned``
    says whether the episode has tool messages at all (with an empty ``pool``: results that
    hold no measured value, rather than no result). ``upto``: the other end of a range that
    ``v`` begins (:mod:`toolreplay.judging.bounds`)."""
    vocab = resolve(vocabulary)
    every = vocab.units
    if _is_difference(text, v, vocab):
        return _check_difference(text, v, pool, every)
    w = _words(vocab)
    day = _stated(w.days, text, v, carry=True)
    if day is None:
        day = expect.day
    field_word = (
        _stated(w.fields, text, v, carry=False, local=w.local, resets=w.days)
        if v.kind in vocab.field_kinds
        else None
    )
    written = text[v.start : v.end]
    bound = BETWEEN if upto is not None else bound_of(text, v)
    said = statement(text, v, upto) if bound else written
    same_kind = [tv for tv in pool if tv.kind == v.kind]
    equal = [tv for tv in same_kind if holds(v, tv, every, bound, upto)]
    equals = f"is {said}: " if bound else "equals "

    def fitting(p: PlaceSpec | None) -> list[ToolValue]:
        def fits(tv: ToolValue) -> bool:
            return (
                (day is None or tv.day is None or tv.day == day)
                and _field_ok(field_word, tv, vocab)
                and (p is None or tv.place is None or tv.place.weak or p.named(tv.place))
            )

        found = [tv for tv in equal if fits(tv)]
        if bound == "at most" and any(fits(tv) for tv in same_kind if tv not in equal):
            return []  # 都在 30°C 以下: every value the bound covers must be under it
        return found

    fits = fitting(place)
    if bound and fits:
        pinned = [tv for tv in fits if pins(v, tv, every, vocab, bound, upto)]
        if not pinned:
            why = vacuous_reason(said, fits[0], v, every, vocab, bound)
            return ValueCheck(v, written, day, field_word, place, None, why, tuple(also),
                              bound=bound, vacuous=True)  # fmt: skip
        fits = pinned
    stated_for = ", ".join(
        b
        for b in (
            " and ".join(p.query for p in (place, *also) if p) if place else None,
            _DAY_WORDS.get(day) if day is not None else None,
            field_word,
        )
        if b
    )
    if fits and also:
        others = [fitting(p) for p in also]
        missing = [p.query for p, f in zip(also, others, strict=True) if not f]
        if missing:
            return ValueCheck(
                v, written, day, field_word, place, None,
                f"{said} is stated for {stated_for}, but no tool value of {', '.join(missing)} "
                f"{'satisfies' if bound else 'equals'} it", tuple(also), bound=bound,
            )  # fmt: skip
        found = [next((tv for tv in f if tv.place is not None), f[0]) for f in [fits, *others]]
        return ValueCheck(
            v, written, day, field_word, place, found[0],
            equals + " and ".join(tv.describe() for tv in found), tuple(also), tuple(found[1:]),
            bound=bound,
        )  # fmt: skip
    if fits:
        best = next((tv for tv in fits if tv.place is not None), fits[0])
        pinned_why = pinned_reason(said, best, v, every, vocab, bound) if bound else None
        return ValueCheck(
            v, written, day, field_word, place, best, pinned_why or equals + best.describe(),
            bound=bound,
        )  # fmt: skip
    if equal:
        other = equal[0]
        return ValueCheck(
            v, written, day, field_word, place, None,
            f"{said} is stated for {stated_for or 'the question'}, but the tool value it "
            f"{'satisfies' if bound else 'equals'} is {other.describe()}",
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
    elif results_returned:
        why = f"no tool result holds {written}; the tool results hold no measured value"
    else:
        why = f"no tool result holds {written}; no tool result was returned in this episode"
    if bound == BETWEEN:
        why = f"no tool value lies within {said}" + why[why.index(";") :]
    elif bound:
        why = f"no tool value is {bound} {written}" + why[why.index(";") :]
    return ValueCheck(v, written, day, field_word, place, None, why, tuple(also), bound=bound)


@dataclass(frozen=True)
class Grounding:
    """Every value of an answer (:func:`scan` with the judge's units) checked against the
    episode's tool values: ``checks`` in answer order, ``coordinates`` skipped, the ``pool``
    of tool values, and ``others``: the places of tool results the question does not ask
    about (an answer may name them)."""

    answer: str
    checks: tuple[ValueCheck, ...]
    coordinates: tuple[tuple[int, int], ...]
    pool: tuple[ToolValue, ...]
    others: tuple[PlaceSpec, ...] = ()


def ground_answer(
    answer: str,
    transcript: Sequence[Mapping[str, Any]],
    question: Question | str | Target | None = None,
    units: Sequence[Unit] | None = None,
    vocabulary: Vocabulary | None = None,
    hosted: Sequence[str] = (),
) -> Grounding:
    """Check every value ``answer`` states (read with ``units``; None: all of the
    vocabulary's) against the tool values of ``transcript`` (OpenAI chat-format dicts), with
    ``vocabulary`` (None: the default study's); ``hosted``: the tools the provider ran whose
    results the transcript lacks (:attr:`~toolreplay.wire.episode.Episode.hosted_tools`): a
    value no tool value holds is then not checkable (:mod:`~toolreplay.judging.checkable`),
    as it is under an ``any`` question with no tool result. The answer is read in its plain form
    (:func:`~toolreplay.judging.presentation.plain`) and each value is stated for the place
    :func:`~toolreplay.judging.places.attribute` gives it; spans are spans of ``answer``.
    Inside :func:`toolreplay.judging.shared.sharing`, the same call twice grounds once."""
    key = (answer, id(transcript), question, units and tuple(units), vocabulary, tuple(hosted))
    args = (answer, transcript, question, units, vocabulary, tuple(hosted))
    return made_once(key, transcript, lambda: _ground(*args))


def _ground(
    answer: str,
    transcript: Sequence[Mapping[str, Any]],
    question: Question | str | Target | None,
    units: Sequence[Unit] | None,
    vocabulary: Vocabulary | None,
    hosted: tuple[str, ...],
) -> Grounding:
    vocab = resolve(vocabulary)
    expect = Target.of(question).in_vocabulary(vocab)
    p = plain(answer)
    read = scan_plain(p.text, units, vocab)
    pool, others, mentions = made_once(  # the same whatever the units: shared by the judges
        ("places", p.text, id(transcript), expect, vocab),
        transcript,
        lambda: answer_places(p.text, transcript, expect.places, vocab),
    )
    stated = attribute(p.text, read.values, read.lists, mentions, expect.places)
    only = expect.places[0] if len(expect.places) == 1 else None
    returned = any(m.get("role") == "tool" for m in transcript)
    raw = []
    for v, st in zip(read.values, stated, strict=True):
        first = st.places[0] if st.places else only
        raw.append(check_value(
            p.text, v, pool, expect, first, units, vocab, st.places[1:], results_returned=returned
        ))  # fmt: skip
    for i, j in read.ranges:  # a range neither end of which is a tool value is one statement
        a, b = raw[i], raw[j]
        if a.grounded or b.grounded or a.bound or b.bound or a.field == "difference":
            continue
        first = stated[i].places[0] if stated[i].places else only
        c = check_value(p.text, a.value, pool, expect, first, units, vocab,
                        stated[i].places[1:], results_returned=returned, upto=b.value)  # fmt: skip
        raw[i], raw[j] = c, replace(c, value=b.value, text=b.text)
    checks = []
    for c, st in zip(raw, stated, strict=True):
        at = remap(p, c.value)
        checks.append(
            replace(
                unchecked(c, expect.measure, returned, hosted, pool, vocab, fits_field),
                value=at,
                text=answer[at.start : at.end],
                place_span=p.span(*st.span) if st.span else None,
            )
        )
    coordinates = tuple(p.span(s, e) for s, e in read.coordinates)
    return Grounding(answer, tuple(checks), coordinates, pool, others)
