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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolreplay.judging.grounding import Expectation, PlaceSpec, ValueCheck, ground_answer
from toolreplay.judging.toolvalues import _DAY_WORDS, ToolValue
from toolreplay.judging.units import MEASURE_KINDS, UNITS, Unit
from toolreplay.judging.values import MeasuredValue, find_measured_values, relevant_values

if TYPE_CHECKING:
    from toolreplay.evals import Question
    from toolreplay.wire.episode import Episode


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
    "UNITS", "Conclusion", "Expectation", "FormatJudge", "GroundedJudge", "Judge",
    "MeasuredValue", "PlaceSpec", "ToolValue", "Unit", "ValueCheck", "Verdict",
    "check_conclusion", "find_measured_values", "ground_answer", "narrowed", "relevant_values",
]  # fmt: skip
