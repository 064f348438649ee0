"""The judge's vocabulary: what a study supplies, as data, for the judge to read answers and tool
results with. The engine keeps the grammar (numbers in Arabic or Chinese numerals, signs,
ranges and lists, coordinates, clause and sentence breaks); the vocabulary says which units,
measures, tool-result fields and words that grammar is about.

Shapes::

    Vocabulary(name, units: tuple[Unit, ...], measures: tuple[Measure, ...], ...)  # see below
    Unit(name, pattern: regex, kind, scale=1.0, offset=0.0, explicit=True, readings=(),
         plausible=None)
    Measure(name, kinds: frozenset[str], context: {kind: regex}, fields: {kind: regex},
            compare: Comparison | None)
    Comparison(kind, fields: tuple[str, ...], superlative: regex, before: regex,
               after: regex, adjective, plural, highest: bool)
    FieldWord(tag, words: regex, path: regex | None, field: regex | None, clause_only: bool)

Every ``regex`` is a Python regular expression string, matched case-insensitively; the
engine compiles what it builds from a vocabulary once per vocabulary object (a
:class:`Vocabulary` compares and hashes by identity). :func:`words` writes the usual
"Chinese words, or English whole words" alternation.

A judge given no vocabulary uses the default study's (:func:`default_vocabulary`:
``toolreplay.studies.load_study().vocabulary``), resolved when first needed, never at import.
A study gives its vocabulary either as the object or as a ``"module:attr"`` string naming it
(imported on first use, so the study's own module stays cheap to import).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Unit:
    """A unit as written after a number: ``name`` (shown in evidence), ``pattern`` (a regex
    matched right after the number, case-insensitive unless it says otherwise), ``kind``,
    and the conversion to the kind's canonical unit (°C, mm, %, km/h in the weather study):
    ``canonical = value * scale + offset``. ``explicit`` is False for a unit that can also be
    a coordinate's degrees (a bare ``°``/``度``/``degrees``): such a value outside the
    vocabulary's ``implicit_range`` in every one of its readings, or in a coordinate's
    context, is read as a coordinate. ``readings``: the names of the other units a number in
    this unit may be in (a bare ``degrees`` may be °F: ``73 degrees``); a value in it is true
    of a tool value when it is in any of them, or in the tool value's unit when that unit has
    readings of its own (``73 degrees`` in a tool result grounds ``73°F``). ``plausible``:
    ``(low, high)``, the numbers this spelling can state, in the unit's own numbers (None:
    any): a number outside it is not in this unit at all when the unit is ``explicit`` (a
    ``K`` set apart: ``295 K`` is kelvin, ``5 K race`` nothing), and, for a unit that is not,
    a reading (the unit or one of its ``readings``) is one only when the number read in it
    lies within the range once converted back (``73 degrees``: 73 °F, never 73 °C)."""

    name: str
    pattern: str
    kind: str
    scale: float = 1.0
    offset: float = 0.0
    explicit: bool = True
    readings: tuple[str, ...] = ()
    plausible: tuple[float, float] | None = None

    def to_canonical(self, value: float) -> float:
        return value * self.scale + self.offset

    def from_canonical(self, value: float) -> float:
        return (value - self.offset) / self.scale


class VocabularyError(LookupError):
    """A study declares no vocabulary, or its ``"module:attr"`` names no :class:`Vocabulary`."""


def words(zh: str, en: str = "") -> str:
    """A regex matching the Chinese alternatives ``zh`` anywhere, or the English ``en`` only as
    whole words (no Latin letter either side): ``words("明天", "tomorrow")``."""
    if not en:
        return zh
    return zh + r"|(?<![a-z])(?:" + en + r")(?![a-z])"


@dataclass(frozen=True)
class Comparison:
    """How a comparison question (``北京、上海、广州哪个最热？``) is decided and read.

    The tool results decide by each place's value of ``kind`` for the question's day, from the
    first of ``fields`` (:class:`FieldWord` tags) that covers two places or more, the highest
    value (``highest``) or the lowest winning. ``adjective`` (``hottest``) and ``plural``
    (``temperatures``) word the explanations.

    The answer's conclusion is read, by the engine's grammar, from these words of the domain:

    - ``superlative``: the winner's word (最热, ``hottest``), said of the place its clause
      names, or of the place right after it (``after``: 的是, ``is``, ``:``); ``before``: the
      words that may stand between a place and the word (的, ``is``); ``least``: the word of
      the other end (最凉快, ``coolest``), ``least_adjective`` naming it in explanations;
    - ``more`` and ``less``: the comparative words (热, 高, ``hotter``; 凉快, 低, ``cooler``),
      read in ``A 比 B 热``, ``A 没有 B 热``, ``A 高于 B``, ``A is hotter than B`` and, for a
      question about two places, ``A 更热``/``A is warmer``;
    - ``descending`` and ``ascending``: the words of a ranking's order (从高到低, 从低到高),
      before the places it lists; ``A > B > C`` needs none.

    Ties (不相上下, ``the same``) are the engine's grammar."""

    kind: str
    fields: tuple[str, ...]
    superlative: str
    before: str = ""
    after: str = ""
    adjective: str = "highest"
    plural: str = "values"
    highest: bool = True
    least: str = ""
    least_adjective: str = "lowest"
    more: str = ""
    less: str = ""
    descending: str = ""
    ascending: str = ""


@dataclass(frozen=True)
class Measure:
    """A measure a question declares (``evals.Question.measure``): ``name``, the unit
    ``kinds`` that can answer it, and per kind:

    - ``context``: a regex that must occur in the clause before a value of that kind for the
      value to answer the measure (a percentage answers rain only in a clause about rain);
    - ``fields``: a regex the grounding tool value's field (its last key) must match (a
      percentage answers rain only as a probability).

    ``compare`` makes it a comparison: two grounded values of two places and a named winner
    (:class:`Comparison`)."""

    name: str
    kinds: frozenset[str]
    context: Mapping[str, str] = field(default_factory=dict)
    fields: Mapping[str, str] = field(default_factory=dict)
    compare: Comparison | None = None


@dataclass(frozen=True)
class FieldWord:
    """Words that say which field a value is (最高/``high`` → ``max``): ``tag`` (shown in
    evidence as the stated field), ``words`` (a regex) and which tool values the tag fits:
    ``path`` a regex matched at the start of the tool value's JSON path (``\\$\\.current``),
    or ``field`` a regex searched in its last key (``max``); neither: any. ``clause_only``: the
    word holds only in its own clause (现在 26°C，下午升到 29°C); others carry over the
    clauses of their sentence (今天最高气温：北京 31°C，上海 29°C)."""

    tag: str
    words: str
    path: str | None = None
    field: str | None = None
    clause_only: bool = False


#: The keys (lower-cased, matched in full) whose string value names the place a tool call or a
#: result without a place object is about (:attr:`Vocabulary.place_arguments`).
PLACE_ARGUMENTS = (
    r"q|query|name|city|city_?name|location|location_?name|place|place_?name|town|locality"
    r"|address|area"
)


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """Everything domain-specific the judge reads with (see the module docstring for shapes).

    Answers:

    - ``units``: every :class:`Unit` (kind and conversion to the
      kind's canonical unit), longest spellings first within a kind; tool results are always
      read with all of them.
    - ``measures``: the :class:`Measure` each question may declare (the reserved measure
      ``none``, nothing to measure, is the engine's and is not listed).
    - ``prefix_units``: ``(regex, unit name)`` for unit words written before a number
      (华氏 → 华氏度); ``bracket_units``: a regex of units written in brackets before the
      values (``(°C)：``), empty for none.
    - ``implicit_range``: ``(low, high)`` a value in a unit with ``explicit=False`` (a bare
      ``°``) can state; beyond it (or with three or more decimals) it is a coordinate.
    - ``day_names``: the names an eval file's question may give its day (``day: tomorrow``),
      in the order of the tool results' day series (the weather study's ``("today",
      "tomorrow")``: 0 today, 1 tomorrow); empty: questions name no day.
    - ``day_words``: ``(day, regex)`` (0 today, 1 tomorrow...), ``field_words``:
      :class:`FieldWord` s, read before or right after a value; ``field_kinds``: the unit
      kinds a stated field applies to.
    - ``difference_before``/``difference_after``: regexes of the words that make a value a
      difference (温差 before it, ``warmer`` after it); empty for none.

    Tool results (JSON):

    - ``value_keys``: the ``(value, unit)`` keys of a measured value's object;
      ``key_units``: ``(substring of a key, unit name)`` for a bare number (first match wins);
      ``key_tokens``: ``(ending of a word of a key, unit name)`` for the keys none of those
      fit (``temp``: ``tempC``, ``temp_max``, ``maxtempF``); a unit letter of the key (``C``,
      ``F``) or a sibling field named ``unit`` (``{"temperature": 65, "unit": "fahrenheit"}``;
      ``temperature_unit``, ``units``) naming a unit of the same kind is the number's unit;
      a number written as a string (``{"temperature": "75"}``) counts as the number;
      ``key_unit_words``: ``(word of a key, unit name)`` for the unit words keys spell that no
      unit's pattern reads (wttr.in's ``windspeedMiles``: ``miles`` → mph; ``kmph`` → km/h):
      like a unit letter, such a word names the number's unit when its kind is one the key
      names (``WindChillC`` is a temperature, ``windspeedKmph`` a wind speed,
      ``pressureInches`` nothing); ``unit_systems``: ``(word, unit name)`` for the systems
      a ``units`` field or call argument names (OpenWeatherMap's ``units=metric``: °C,
      ``imperial``: °F, ``standard``: K); a sibling field, or a field of an enclosing object,
      or an argument of the call naming a unit, gives the unit of the kind it names;
      ``bare_above``: ``(unit, level, unit read)``: a bare number the key reads in the first
      unit, with no unit stated for it, above ``level`` is in the second (the weather study's
      ``("°C", 150, "K")``: no air temperature in °C or °F is above 150, a kelvin one always
      is: OpenWeatherMap's default ``units=standard``);
      ``path_units``: ``(regex, unit name)`` for a bare number whose whole JSON path
      (``$.items[0].on_hand``) the regex matches, before ``key_units`` and the ignored keys
      (a declared measure's fields, :mod:`toolreplay.judging.measures`);
      ``ignored_keys`` and ``ignored_suffixes``: keys whose numbers never count, and
      ``ignored_words``: words of a key (:func:`~toolreplay.judging.toolvalues.tool_values`
      splits ``winddirDegree`` into ``winddir`` and ``degree``) that make its numbers never
      count (a wind's direction, not its speed: ``wind_direction_10m``, ``wind_deg``), and
      ``ignored_words_kinds`` the kinds they apply to (empty: every kind): the weather
      study's apply to a key read as a wind speed only, so ``temp_deg_c`` is a temperature.
    - ``day_keys``: JSON path → the day of every value under it (``{"$.current": 0}``);
      ``day_lists``: paths of lists whose i-th item is about day i (``("$.daily",)``).
    - ``place_key``: a top-level key naming the result's place (an object); ``candidates_key``:
      a top-level key listing candidate places (objects with the coordinate keys and a name),
      one of which is the place of a later call whose arguments give its coordinates;
      ``place_name``/``place_region``: the keys of a place's name and region (compared with
      the question's ``region``); ``coordinate_keys``: ``(latitude, longitude)`` keys;
      ``entity_keys``: top-level keys whose string value names what a result is about when it
      has no place (a SKU: ``{"sku": "ABC-1", "on_hand": 12}``), its entity, judged as a place
      without a region (a question's ``entities``).
    - ``place_arguments``: a regex a key must match in full (lower-cased) to name a place by
      its string value, for a result that names none of the ways above: a top-level field of
      the result (``{"location": "Paris", "temperature": 22}``, OpenWeatherMap's ``name``),
      else an argument of the call it answers (``get_weather({"city": "Hangzhou"})`` →
      ``24℃``); used only when exactly one such name is found. Such a place has no region:
      it is the asked place when its name is (a result that gives no region cannot be another
      region's place of that name). Empty: none.
    - ``place_suffixes``: endings a place name may have or lack and still be the same place
      (the weather study's ``("市",)``: 宁德 and 宁德市 name one city); an answer may name a
      place with or without the first of them.
    - ``place_alternates``: keys of a place object holding its other names (GeoNames'
      ``alternateNames``/``alternatenames``, Nominatim's ``namedetails``), names an answer may
      use for it; ``place_context``: keys naming what the place is in (Open-Meteo's
      ``country``, ``admin2``...): an answer naming them names no other place. Names match
      in any script (:mod:`toolreplay.judging.romanisation`).

    The fidelity audit's narrow judge (the study's first, too-narrow judge) is named
    ``narrow_name`` and reads only the units named in ``narrow_units``.

    Compared and hashed by identity (the engine caches what it compiles per object).
    """

    name: str
    units: tuple[Unit, ...]
    measures: tuple[Measure, ...]
    prefix_units: tuple[tuple[str, str], ...] = ()
    bracket_units: str = ""
    implicit_range: tuple[float, float] = (-math.inf, math.inf)
    day_names: tuple[str, ...] = ()
    day_words: tuple[tuple[int, str], ...] = ()
    field_words: tuple[FieldWord, ...] = ()
    field_kinds: frozenset[str] = frozenset()
    difference_before: str = ""
    difference_after: str = ""
    value_keys: tuple[str, str] = ("value", "unit")
    key_units: tuple[tuple[str, str], ...] = ()
    key_tokens: tuple[tuple[str, str], ...] = ()
    key_unit_words: tuple[tuple[str, str], ...] = ()
    unit_systems: tuple[tuple[str, str], ...] = ()
    bare_above: tuple[tuple[str, float, str], ...] = ()
    path_units: tuple[tuple[str, str], ...] = ()
    ignored_keys: frozenset[str] = frozenset()
    ignored_suffixes: tuple[str, ...] = ()
    ignored_words: frozenset[str] = frozenset()
    ignored_words_kinds: frozenset[str] = frozenset()
    day_keys: Mapping[str, int] = field(default_factory=dict)
    day_lists: tuple[str, ...] = ()
    place_key: str | None = None
    candidates_key: str | None = None
    place_name: str = "name"
    place_region: str = "region"
    coordinate_keys: tuple[str, str] = ("latitude", "longitude")
    entity_keys: tuple[str, ...] = ()
    place_arguments: str = PLACE_ARGUMENTS
    place_suffixes: tuple[str, ...] = ()
    place_alternates: tuple[str, ...] = (
        "alternate_names", "alternateNames", "alternatenames", "namedetails",
    )  # fmt: skip
    place_context: tuple[str, ...] = ("country", "admin1", "admin2", "admin3", "admin4")
    narrow_name: str = "narrow"
    narrow_units: tuple[str, ...] = ()

    def measure(self, name: str | None) -> Measure | None:
        """The measure called ``name``; None when the vocabulary declares none of that name."""
        return next((m for m in self.measures if m.name == name), None)

    def kinds(self, measure: str | None) -> frozenset[str]:
        """The unit kinds that answer ``measure`` (empty for an unknown one)."""
        m = self.measure(measure)
        return m.kinds if m is not None else frozenset()

    def comparison(self, measure: str | None) -> Comparison | None:
        """The :class:`Comparison` of ``measure``; None when it is no comparison measure."""
        m = self.measure(measure)
        return m.compare if m is not None else None


def study_vocabulary(study: Any) -> Vocabulary:
    """The :class:`Vocabulary` of ``study`` (a :class:`toolreplay.studies.Study`): its
    ``vocabulary`` field, or the object its ``"module:attr"`` string names (imported once).
    Raises :class:`VocabularyError` when it is missing or not a :class:`Vocabulary`."""
    from toolreplay.studies import StudyError

    try:
        v = study.vocabulary_object()
    except StudyError as exc:
        raise VocabularyError(str(exc)) from None
    if not isinstance(v, Vocabulary):
        raise VocabularyError(
            f"study {study.name!r} declares no judge vocabulary"
            if v is None
            else f"the vocabulary of study {study.name!r} is a {type(v).__name__}, not a Vocabulary"
        )
    return v


def default_vocabulary() -> Vocabulary:
    """The default study's vocabulary (``toolreplay.studies.load_study()``, the only study
    installed). Raises :class:`toolreplay.studies.StudyError` when there is no single default
    study, :class:`VocabularyError` when it declares no vocabulary."""
    from toolreplay.studies import load_study

    return study_vocabulary(load_study())


def resolve(vocabulary: Vocabulary | None) -> Vocabulary:
    """``vocabulary``, or the default study's when None (:func:`default_vocabulary`)."""
    return vocabulary if vocabulary is not None else default_vocabulary()


__all__ = [
    "Comparison", "FieldWord", "Measure", "Unit", "Vocabulary", "VocabularyError",
    "default_vocabulary", "resolve", "study_vocabulary", "words",
]  # fmt: skip
