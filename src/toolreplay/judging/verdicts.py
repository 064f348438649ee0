"""Judges: does an answer state, for the question's place and day, a value a tool returned?

Three stages, one mechanism each.

**Stripping the presentation** (:func:`~toolreplay.judging.presentation.plain`). Markdown
emphasis, lists, headings, quotes, links, code marks and emoji are dropped and a table becomes
a clause per row (its first cell, then each cell after its column's header); spans stay spans
of the answer as written.

**Reading values** (:func:`scan`). A small lexer turns the text into tokens (numbers in Arabic
or Chinese numerals, signs, range and list connectors, clause breaks, coordinate words, the
vocabulary's unit words written before a number); a unit from the vocabulary's ``units`` is
read right after each number. What is domain-specific (units, measures, tool-result fields,
day, field, comparison and difference words) is the study's
:class:`~toolreplay.judging.vocabulary.Vocabulary`; a judge given none uses the default
study's. A small grammar over the tokens then gives the quantities:

* coordinates first: a number after 北纬/东经/纬度/经度/坐标/latitude/longitude (same clause,
  at most two numbers), a number followed by a hemisphere letter (``39.9°N``, ``116.4 E``),
  degrees–minutes (``39°54′``, ``39度54分``), a pair of bare ``°`` numbers with decimals
  (``39.9°, 116.4°``), and a bare ``°``/``度`` number (a unit that is not ``explicit``) that
  cannot be a value (three or more decimals, or beyond the vocabulary's ``implicit_range``,
  −90…60 °C for weather, in the unit and in each of its ``readings``: ``73 degrees`` is 73 °F,
  ``116度`` a coordinate; or a bearing: :mod:`~toolreplay.judging.degrees`) are not values;
* ``sign? number unit`` — signs ``-``, ``−``, ``+``, 零下, 负, minus;
* ``prefix sign? number unit?`` — a unit named before the number (摄氏, 华氏, 百分之,
  ``Fahrenheit``, ``(°C)``/``（℃）：``) is the number's unit (华氏79度 is 79 °F);
* runs ``number (connector number)* unit``: ranges (``-``, ``~``, 到, 至, ``to``) and lists
  (``、``, ``,``, ``/``, 和, ``and``) share the last number's unit (``31.1、28.6、33.4°C``);
  a run that ends without a unit (a date ``2026-09-17``, a coordinate pair) yields nothing.

=============  ==============================================================
kind           the weather study's units (canonical unit first)
=============  ==============================================================
temperature    °C, ℃, C after a number, 度, 摄氏度, degrees Celsius, bare °, degrees
               (either °C or °F); °F, ℉, F, 华氏度, Fahrenheit; K, kelvin (converted)
precipitation  mm, 毫米, millimetres; cm, 厘米; inch, inches, 英寸 (converted)
percent        %, ％, percent, 百分之…
wind           km/h, 公里/小时; m/s, 米/秒; mph; knots
=============  ==============================================================

**Grounding** (:func:`ground_answer`). Every number in the episode's tool messages is read
with its unit, JSON path (the *field*), the *day* it is about (weather: ``current`` and
``daily[0]``: today; ``daily[1]``: tomorrow) and the *place* (weather: the oneshot result's
``place``; for ``get_weather_by_coords`` the geocoding candidate at the called coordinates),
as the vocabulary says. Each value in the answer states a day and a field, read from the
vocabulary's words around it (今天/明天/today/tomorrow, 最高/最低/当前/high/low/now) or from the
question, and a place, by the clause it is in
(:func:`~toolreplay.judging.places.attribute`: a list of values paired with a list of places,
a place tied after it by a preposition or a bracket, a value said of several places at once,
else the place its clause or sentence is about). It is *grounded* when a tool value of the
same kind, day, field and place equals it after conversion to the answer's unit and rounding
to the precision the answer wrote (26°C matches 26.1 °C; 79°F matches 26.1 °C); a bound
(30°C 以上) or a range (25–35°C) when it pins a tool value (:mod:`~toolreplay.judging.bounds`:
one that pins none, ``above 0°C``, is vacuous: no grounded value, no fabrication).

**Verdicts.** :data:`GROUNDED_JUDGE` (the one in use) passes an episode only when the answer
states a grounded value of the question's measure for the question's place and day, states
no ungrounded value (a value no tool result holds is a fabricated value and fails the
episode), is not about another place than asked (values of a place the answer names that the
question does not ask about: a wrong place), and, for a comparison measure, concludes what
the tool results do (:func:`~toolreplay.judging.comparisons.check_conclusion`: superlatives,
comparatives, rankings and ties, each checked). :data:`FORMAT_JUDGE` only checks the form (a
value of the measure with a unit), and :data:`NARROW_JUDGE` is that with the vocabulary's
``narrow_units`` only (weather: ``celsius-only``, the study's first, too-narrow judge; built
from the default study's vocabulary on first access, :func:`narrow_judge` for another); the
fidelity audit uses both. A :class:`Verdict` carries its evidence (results store it as
:func:`toolreplay.results.build.verdict_evidence`).

**Declared measures.** A question whose eval file declares measures (``measures:``) is judged
with them added to the judge's vocabulary (:meth:`FormatJudge.for_question`,
:func:`~toolreplay.judging.measures.declared_vocabulary`): "12 units on hand" is grounded in
a stock tool's ``on_hand`` as 30.9°C is in Open-Meteo's ``temperature_2m``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolreplay.evals import ANY_MEASURE, MeasureDeclaration
from toolreplay.judging.checkable import unchecked_summary
from toolreplay.judging.comparisons import Conclusion, check_conclusion
from toolreplay.judging.grounding import Grounding, PlaceSpec, Target, ValueCheck, ground_answer
from toolreplay.judging.measures import declared_vocabulary
from toolreplay.judging.toolvalues import DAY_WORDS, ToolValue
from toolreplay.judging.units import Unit
from toolreplay.judging.values import MeasuredValue, find_measured_values, relevant_values
from toolreplay.judging.vocabulary import Vocabulary, resolve

if TYPE_CHECKING:
    from toolreplay.evals import Question
    from toolreplay.wire.episode import Episode


@dataclass(frozen=True)
class WrongPlace:
    """An answer about another place than asked: its value ``check`` is a tool value of the
    place it names (``named``), and no value is stated for a place of the question
    (``asked``)."""

    check: ValueCheck
    named: PlaceSpec
    asked: tuple[PlaceSpec, ...]

    @property
    def span(self) -> tuple[int, int]:
        """Where the answer names the place (else the value)."""
        return self.check.place_span or self.check.span

    def explanation(self, answer: str) -> str:
        c = self.check
        assert c.match is not None
        wanted = ", ".join(_shown(p) for p in self.asked)
        where = answer[self.span[0] : self.span[1]]
        return (
            f"wrong place: the answer is about {_shown(self.named, where)}, the place it "
            f"names, not {wanted}, the place asked; {c.text} equals {c.match.describe()}"
        )


def _shown(place: PlaceSpec, name: str | None = None) -> str:
    """``name (region)``; the name alone for an entity (a place of no region, a SKU)."""
    name = place.query if name is None else name
    return name if place.region is None else f"{name} ({place.region})"


def wrong_place(checks: Sequence[ValueCheck], expect: Target) -> WrongPlace | None:
    """Whether ``checks`` (the values that answer the question) are about another place than
    the question's: none is a tool value of an asked place, and one is a tool value of a place
    the answer names that the question does not ask about. None otherwise."""
    if not expect.places:
        return None
    if any(p.matches(tv.place) for c in checks for tv in c.matches for p in expect.places):
        return None
    for c in checks:
        if (
            c.match is not None
            and c.place is not None
            and c.place not in expect.places
            and c.place.named(c.match.place)
        ):
            return WrongPlace(c, c.place, expect.places)
    return None


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


def _answer_of(episode: Episode | str) -> str:
    return episode if isinstance(episode, str) else episode.answer


@dataclass(frozen=True)
class FormatJudge:
    """Passes an answer that states a value of the question's measure with a unit from
    ``units`` (a comparison: two); checks nothing against the tool results.

    ``units``: the units the judge reads (None: all of the vocabulary's); ``vocabulary``: the
    :class:`~toolreplay.judging.vocabulary.Vocabulary` it reads with (None: the default
    study's, resolved at each use)."""

    name: str
    units: tuple[Unit, ...] | None = None
    vocabulary: Vocabulary | None = None

    def resolved_vocabulary(self) -> Vocabulary:
        """The vocabulary in use (:attr:`vocabulary`, else the default study's)."""
        return resolve(self.vocabulary)

    def resolved_units(self) -> tuple[Unit, ...]:
        """The units in use (:attr:`units`, else all of the vocabulary's)."""
        return self.units if self.units is not None else self.resolved_vocabulary().units

    def for_question(self, question: Question | str | Target | None) -> FormatJudge:
        """This judge for ``question``: itself, or, when its eval file declares measures
        (:attr:`Target.measures`), a copy whose vocabulary has them added
        (:func:`~toolreplay.judging.measures.declared_vocabulary`; a judge with a unit list
        also reads the declared units)."""
        declared = Target.of(question).measures
        if not declared:
            return self
        vocab = declared_vocabulary(self.resolved_vocabulary(), declared)
        units = None if self.units is None else (*self.units, *vocab.units[: _count(declared)])
        return replace(self, vocabulary=vocab, units=units)

    def accepts(self, measure: str) -> bool:
        """Whether this judge can ever pass an answer about ``measure``."""
        if measure in (NO_VALUE, ANY_MEASURE):
            return True
        kinds = self.resolved_vocabulary().kinds(measure)
        return bool(kinds & {u.kind for u in self.resolved_units()})

    def judge(self, answer: str, measure: str | None = None) -> Verdict:
        """Judge the text ``answer`` for a question that measures ``measure`` (None: any)."""
        if not answer.strip():
            return Verdict(False, "empty answer", judge=self.name)
        if measure == NO_VALUE:
            return judge_no_value(self, answer)
        if measure == ANY_MEASURE:
            return any_answer(self)
        if measure is not None and not self.accepts(measure):
            return Verdict(
                False, f"the {self.name} judge accepts no unit for {measure}", judge=self.name
            )
        vocab = self.resolved_vocabulary()
        values = find_measured_values(answer, self.resolved_units(), vocab)
        relevant = relevant_values(answer, values, measure, vocab)
        cmp = vocab.comparison(measure)
        needed = 2 if cmp is not None else 1
        if len(relevant) >= needed:
            shown = ", ".join(v.text for v in relevant[:4])
            return Verdict(True, f"measured value with unit: {shown}", relevant, judge=self.name)
        if cmp is not None and relevant:
            return Verdict(
                False, f"a {measure} needs at least two {cmp.plural}", relevant, judge=self.name
            )
        if values:
            shown = ", ".join(v.text for v in values[:4])
            return Verdict(
                False, f"measures {shown}, but not the {measure} asked for", values, judge=self.name
            )
        return Verdict(False, f"no measured value with a unit ({self.name} judge)", judge=self.name)

    def judge_episode(
        self, episode: Episode | str, question: Question | str | Target | None = None
    ) -> Verdict:
        """Judge the episode's answer by form alone."""
        judge = self.for_question(question)
        return judge.judge(_answer_of(episode), Target.of(question).measure)


#: A question with nothing to measure (an unknown place, a question that needs no tool). A
#: measure of the engine's, in every vocabulary: it needs no value.
NO_VALUE = "none"


def judge_no_value(judge: FormatJudge, answer: str) -> Verdict:
    """The verdict for a ``none`` question: a non-empty answer that states no measured value
    (the place is unknown, or the question needs no data); a stated value fails it."""
    values = find_measured_values(answer, judge.resolved_units(), judge.resolved_vocabulary())
    if values:
        shown = ", ".join(v.text for v in values[:4])
        return Verdict(
            False,
            f"states {shown}, but the question has nothing to measure",
            values,
            judge=judge.name,
        )
    return Verdict(True, "no value needed, none stated", judge=judge.name)


def any_answer(
    judge: FormatJudge, g: Grounding | None = None, hosted: Sequence[str] = ()
) -> Verdict:
    """The verdict for an ``any`` question (no measure declared): a non-empty answer passes,
    whatever it states; what fails such an episode is a failure mode or an expectation. With
    the answer's grounding ``g``, its values are the evidence, and those not checkable
    (:mod:`~toolreplay.judging.checkable`) are said so."""
    why = "an answer (no measure declared to judge it by)"
    if g is None or not g.checks:
        return Verdict(True, why, judge=judge.name)
    note = unchecked_summary(g.checks, hosted)
    values = tuple(c.value for c in g.checks)
    return Verdict(True, why + (f"; {note}" if note else ""), values, g.checks, judge=judge.name)


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
        self, episode: Episode | str, question: Question | str | Target | None = None
    ) -> Verdict:
        """Judge ``episode`` (or a bare answer, grounded against nothing) for ``question``."""
        answer = _answer_of(episode)
        transcript: Sequence[Mapping[str, Any]] = (
            () if isinstance(episode, str) else episode.transcript
        )
        expect = Target.of(question)
        if expect.measures:
            declared = self.for_question(expect)
            assert isinstance(declared, GroundedJudge)
            return GroundedJudge.judge_episode(declared, episode, replace(expect, measures=()))
        j = self.name
        if not isinstance(episode, str) and episode.stop_reason == "error" and not answer.strip():
            return Verdict(False, "no answer: the episode ended on a model API error", judge=j)
        if not answer.strip():
            return Verdict(False, "empty answer", judge=j)
        if expect.measure == NO_VALUE:
            return judge_no_value(self, answer)
        hosted = () if isinstance(episode, str) else episode.hosted_tools
        vocab = self.resolved_vocabulary()
        if expect.measure == ANY_MEASURE:
            ground = expect.in_vocabulary(vocab)
            g = ground_answer(answer, transcript, ground, self.resolved_units(), vocab, hosted)
            return any_answer(self, g, hosted)
        if expect.measure is not None and not self.accepts(expect.measure):
            return Verdict(False, f"the {j} judge accepts no unit for {expect.measure}", judge=j)
        expect = expect.in_vocabulary(vocab)
        g = ground_answer(answer, transcript, expect, self.resolved_units(), vocab, hosted)
        values = tuple(c.value for c in g.checks)
        relevant = set(id(v) for v in relevant_values(answer, values, expect.measure, vocab))
        rel = [c for c in g.checks if id(c.value) in relevant]
        measure = vocab.measure(expect.measure)
        if measure is not None and measure.fields:
            # weather: a percentage answers rain only as a probability
            rel = [c for c in rel if _fits_measure(c, measure.fields)]

        def fail(why: str, conclusion: Conclusion | None = None) -> Verdict:
            return Verdict(False, why, values, g.checks, conclusion, j)

        ungrounded = [c for c in g.checks if c.fabricated]
        if ungrounded:
            c = ungrounded[0]
            return fail(f"fabricated value: {c.reason}")
        if rel and not any(c.grounded for c in rel) and (note := unchecked_summary(rel, hosted)):
            return fail(note)
        rel = [c for c in rel if c.checkable]
        what = expect.measure or "measured"  # "no measured value", never "value value"
        vacuous = [c for c in rel if c.vacuous]  # a bound or range that pins nothing (bounds.py)
        rel = [c for c in rel if not c.vacuous]
        if not rel:
            skipped = f"; {len(g.coordinates)} coordinate(s) skipped" if g.coordinates else ""
            if vacuous:
                return fail(f"{vacuous[0].reason}; no {what} value grounded{skipped}")
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
                f"the {what} values stated are for {DAY_WORDS.get(rel[0].day, 'another day')}; "
                f"the question asks about {DAY_WORDS.get(expect.day, 'another day')}"
            )
        if expect.places:
            on_place = [
                c for c in for_day
                if any(p.matches(tv.place) for tv in c.matches for p in expect.places)
            ]  # fmt: skip
            elsewhere = wrong_place(for_day, expect)
            if not on_place and elsewhere is not None:
                return fail(elsewhere.explanation(answer))
            if not on_place:
                c = for_day[0]
                where = c.match.place_text if c.match else None
                wanted = ", ".join(_shown(p) for p in expect.places)
                return fail(
                    f"{c.text} is a tool value for "
                    f"{where or 'a place the tool results do not name'}, not for {wanted}"
                )
        else:
            on_place = for_day
        cmp = measure.compare if measure is not None else None
        if cmp is not None:
            covered = {
                p for c in on_place for tv in c.matches for p in expect.places
                if p.matches(tv.place)
            }  # fmt: skip
            conclusion = check_conclusion(answer, g.pool, expect, vocab, g.checks)
            most = cmp.adjective
            if len(covered) < 2:
                return fail(
                    f"a {what} needs grounded {cmp.plural} of at least two of its places; "
                    f"found {len(covered)}",
                    conclusion,
                )
            if not conclusion.correct and conclusion.wrong is not None:
                return fail(conclusion.wrong, conclusion)
            if conclusion.said is None:
                return fail(f"the answer names no {most} place", conclusion)
            if not conclusion.correct:
                said = (
                    " and ".join(conclusion.tied) + " are equally" if conclusion.tied
                    else f"{conclusion.said} is"
                )  # fmt: skip
                return fail(
                    f"the answer says {said} {most}, but the tool results make "
                    f"{conclusion.actual} {most} ({'; '.join(conclusion.values)})",
                    conclusion,
                )
            shown = ", ".join(c.text for c in on_place[:4])
            said = (
                " and ".join(conclusion.tied) + f" are equally {most} at the precision written"
                if conclusion.tied
                else f"{conclusion.said} is {most}"
            )
            return Verdict(
                True,
                f"grounded values {shown}; {said}, as the tool results say",
                values, g.checks, conclusion, j,
            )  # fmt: skip
        c = on_place[0]
        assert c.match is not None
        said = c.reason if c.bound else f"states {c.text}, which equals {c.match.describe()}"
        return Verdict(True, said, values, g.checks, None, j)


def _count(declared: Sequence[MeasureDeclaration]) -> int:
    return sum(len(d.units) for d in declared)


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _fits_measure(c: ValueCheck, fields: Mapping[str, str]) -> bool:
    pattern = fields.get(c.value.kind)
    return pattern is None or (
        c.match is not None and _compiled(pattern).search(c.match.field) is not None
    )


Judge = FormatJudge


#: The judge in use: grounded, with the default study's vocabulary (resolved at each use).
GROUNDED_JUDGE = GroundedJudge("grounded")


#: Form only: a value of the measure with any of the vocabulary's units.
FORMAT_JUDGE = FormatJudge("format-only")


#: The judge in use.
FULL_JUDGE = GROUNDED_JUDGE


@functools.lru_cache(maxsize=16)
def _narrow(vocabulary: Vocabulary) -> FormatJudge:
    keep = set(vocabulary.narrow_units)
    return FormatJudge(
        vocabulary.narrow_name, tuple(u for u in vocabulary.units if u.name in keep), vocabulary
    )


def narrow_judge(vocabulary: Vocabulary | None = None) -> FormatJudge:
    """The fidelity audit's narrow judge of ``vocabulary`` (None: the default study's): form
    only, reading only its ``narrow_units``, named ``narrow_name`` (weather: ``celsius-only``,
    °C only). One object per vocabulary."""
    return _narrow(resolve(vocabulary))


if TYPE_CHECKING:
    #: :func:`narrow_judge` of the default study (built on first access).
    NARROW_JUDGE: FormatJudge
    #: The judges by name: grounded, format-only and the default study's narrow judge.
    JUDGES: dict[str, FormatJudge]


def __getattr__(name: str) -> Any:
    # NARROW_JUDGE and JUDGES depend on the default study's vocabulary: built on first access,
    # never at import
    if name == "NARROW_JUDGE":
        return narrow_judge()
    if name == "JUDGES":
        return {j.name: j for j in (GROUNDED_JUDGE, FORMAT_JUDGE, narrow_judge())}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def narrowed(judge: FormatJudge, drop: Sequence[str], name: str | None = None) -> FormatJudge:
    """A copy of ``judge`` without the units named in ``drop`` (for breadth checks)."""
    kept = tuple(u for u in judge.resolved_units() if u.name not in drop)
    return replace(judge, name=name or judge.name, units=kept)


__all__ = [
    "FORMAT_JUDGE", "FULL_JUDGE", "GROUNDED_JUDGE", "JUDGES", "NARROW_JUDGE", "NO_VALUE",
    "Conclusion", "FormatJudge", "GroundedJudge", "Judge", "MeasuredValue", "PlaceSpec",
    "Target", "ToolValue", "Unit", "ValueCheck", "Verdict", "Vocabulary", "WrongPlace",
    "check_conclusion", "find_measured_values", "ground_answer", "narrow_judge", "narrowed",
    "relevant_values", "wrong_place",
]  # fmt: skip
