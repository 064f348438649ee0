"""Places: the places a question is about, where an answer names them, and which place each
value of the answer is stated for (attribution by clause structure).

The places an answer can name are the question's (with their other names) and the places of
the episode's tool results that the question's names do not cover (a model that looked up
广州 for a question about 上海 and reports it names 广州), in any script
(:mod:`toolreplay.judging.romanisation`: ``Guangzhou``, ``Guǎngzhōu``, ``Canton``; 广州 for a
tool's ``Guangzhou``), and places no tool result names (:func:`unknown_mentions`: ``Suzhou``,
苏州, 昆山市), each a place of its own, so that a value said of one is never the asked place's.
Each value is stated for:

1. the place in its position in a list: a list of values (``28.6、29、33.4℃``, ``28.6°C versus
   33.4°C``, ``28.6, 29 and 33.4°C respectively``) after a sentence that names as many places,
   each once, pairs them in order;
2. else a place named right after it and tied to it by a preposition or a bracket
   (``33°C for Guangzhou``, ``25°C in Mexico City``, ``29°C（上海）``);
3. else, for a value said of several places at once (都/均/both/each in its phrase before it:
   ``两地不相上下，都是 31°C``, ``Both Beijing and Xiamen reach 31°C``), every place its phrase
   names, or else every place its sentence names before it;
4. else the nearest place named before it (the place its clause, sentence or paragraph is
   about: ``上海今天最高 29℃，最低 23℃``; a table row's label);
5. else a place named just after it in its clause; else none.

Clause breaks are Chinese and English punctuation, line breaks (a list item, a table row) and
the conjunctions and/but/while; phrases break at punctuation only; sentences at end marks and
line breaks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from toolreplay.judging.romanisation import (
    chinese_names,
    has_cjk,
    is_cjk,
    latin_key,
    latin_pattern,
    romanisations,
    same_place_name,
    shadow,
    sounded,
)
from toolreplay.judging.toolvalues import ToolPlace, ToolValue
from toolreplay.judging.values import MeasuredValue


@dataclass(frozen=True)
class PlaceSpec:
    """A place a question is about: ``query`` (e.g. 宁德), ``region`` (compared with a tool
    place's :attr:`~toolreplay.judging.toolvalues.ToolPlace.region`, the key the vocabulary's
    ``place_region`` names) and other ``aliases`` an answer may use (``Guangzhou``; a tool
    result's own alternate names).
    ``suffixes``: the vocabulary's
    :attr:`~toolreplay.judging.vocabulary.Vocabulary.place_suffixes`, endings a name may have
    or lack (宁德, 宁德市); set where a judgement meets its vocabulary
    (:meth:`~toolreplay.judging.grounding.Target.in_vocabulary`). ``known``: False for a
    place an answer names that neither the question nor a tool result does (its values are
    stated for it, not for the place asked)."""

    query: str
    region: str | None
    aliases: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    known: bool = True

    def _bare(self, name: str) -> str:
        for s in self.suffixes:
            if s and name.endswith(s):
                return name[: -len(s)]
        return name

    def named(self, place: ToolPlace | None) -> bool:
        """Whether a tool result's place has this place's name or one of its aliases (宁德 and
        宁德市 alike; ``Beijing`` with the alias 北京 names 北京), in any script: their
        romanisations (北京 names a place the tool calls ``Beijing`` or ``Běijīng``), the
        exonyms of :data:`~toolreplay.judging.romanisation.EXONYMS` and the tool place's own
        alternate names count (:mod:`toolreplay.judging.romanisation`)."""
        if place is None:
            return False
        name = self._bare(place.name)
        if not name:
            return False
        for q in (self.query, *self.aliases):
            q = self._bare(q)
            if name[-1:].isdigit() and q[-1:].isdigit():  # identifiers (ABC-1, not ABC-12)
                if name.casefold() == q.casefold():
                    return True
            elif name.startswith(q) or q.startswith(name):
                return True
        if name[-1:].isdigit():
            return False
        return any(
            same_place_name(self._bare(m), self._bare(t))
            for m in (self.query, *self.aliases)
            for t in (place.name, *place.alternates)
        )

    def matches(self, place: ToolPlace | None) -> bool:
        """Whether a tool result's place is this one: same name, and same region unless the
        result gives none (:attr:`~toolreplay.judging.toolvalues.ToolPlace.regionless`)."""
        return (
            self.named(place)
            and place is not None
            and (place.regionless or place.region == self.region)
        )

    def names(self) -> tuple[str, ...]:
        """The names an answer may call it by: its query with the first suffix and without,
        then its aliases, then the romanisations of those in Chinese characters (pinyin with
        and without tones and suffix, exonyms; syllables split by apostrophes) and the Chinese
        names the exonym table gives those in Latin letters."""
        q = self._bare(self.query)
        suffixed = bool(self.suffixes) and has_cjk(q)  # 宁德市, never Guangzhou市
        own = (q + self.suffixes[0], q, *self.aliases) if suffixed else (q, *self.aliases)
        return _names(own)


@functools.lru_cache(maxsize=1024)
def _names(own: tuple[str, ...]) -> tuple[str, ...]:
    out = list(own)
    for n in own:
        out += romanisations(n) if has_cjk(n) else chinese_names(n)
    return tuple(dict.fromkeys(n for n in out if n))


def distinct_places(pool: Sequence[ToolValue]) -> list[ToolPlace]:
    """The places of the tool values in ``pool``, each once, in order: the values of one tool
    result share its place (one object), so what is asked of a place is asked once."""
    seen: set[int] = set()
    out: list[ToolPlace] = []
    for tv in pool:
        if tv.place is not None and id(tv.place) not in seen:
            seen.add(id(tv.place))
            out.append(tv.place)
    return out


@dataclass(frozen=True)
class Mention:
    """Where a text names ``place``: ``start``/``end`` offsets."""

    start: int
    end: int
    place: PlaceSpec


def other_places(
    pool: Sequence[ToolValue], asked: Sequence[PlaceSpec], suffixes: tuple[str, ...] = ()
) -> tuple[PlaceSpec, ...]:
    """The places of tool values in ``pool`` that no place in ``asked`` names, in order, with
    the vocabulary's place ``suffixes``."""
    out: list[PlaceSpec] = []
    for place in distinct_places(pool):
        if not place.name or any(p.named(place) for p in asked):
            continue
        spec = PlaceSpec(place.name, place.region, place.alternates, suffixes)
        if spec not in out:
            out.append(spec)
    return tuple(out)


def find_mentions(text: str, places: Sequence[PlaceSpec]) -> tuple[Mention, ...]:
    """Where ``text`` names each of ``places``, in text order: longer names first, and of two
    places with the same name the earlier in ``places``. Names in Chinese characters and
    names with tone marks match as written; other Latin names whatever their diacritics and
    syllable breaks (:func:`~toolreplay.judging.romanisation.latin_pattern`), as whole words;
    a place known only by Latin names is also found where Chinese characters spell it
    (:func:`~toolreplay.judging.romanisation.sounded`: ``广州`` for a tool's ``Guangzhou``)."""
    out: list[Mention] = []
    taken: set[int] = set()

    def take(start: int, end: int, p: PlaceSpec) -> None:
        if start < end and not taken.intersection(range(start, end)):
            taken.update(range(start, end))
            out.append(Mention(start, end, p))

    exact, latin, by_sound = _search_plan(tuple(p.names() for p in places))
    for name, i, pattern, cjk_only, cjk in exact:
        if cjk_only and name not in text:  # no letter has a case: absent, nothing to find
            continue
        for m in pattern.finditer(text):
            if cjk or not (_letter(text, m.start() - 1) or _letter(text, m.end())):
                take(m.start(), m.end(), places[i])
    folded = shadow(text)
    keyed = latin_key(folded)
    for name, i, name_key in latin:
        if name_key not in keyed:  # latin_pattern cannot match (see latin_key)
            continue
        for m in latin_pattern(name).finditer(folded):
            if not (_letter(text, m.start() - 1) or _letter(text, m.end())):
                take(m.start(), m.end(), places[i])
    for i in by_sound:
        for n in places[i].names():
            for start, end in sounded(text, n):
                take(start, end, places[i])
    return tuple(sorted(out, key=lambda x: x.start))


_Exact = tuple[str, int, "re.Pattern[str]", bool, bool]
_Plan = tuple[tuple[_Exact, ...], tuple[tuple[str, int, str], ...], tuple[int, ...]]


@functools.lru_cache(maxsize=4096)
def _search_plan(names_of: tuple[tuple[str, ...], ...]) -> _Plan:
    """What :func:`find_mentions` searches places' names with, made once per list of the
    places' names (``names_of``: each place's :meth:`PlaceSpec.names`; a place's region, of
    any type, plays no part), longer names first (then in place order): the names with CJK or
    other non-ASCII letters as ``(name, place index, case-insensitive pattern, CJK only, has
    CJK)``, the Latin ones with their
    :func:`~toolreplay.judging.romanisation.latin_key`, and the indices of the places whose
    names are all Latin (found by sound too)."""
    names = sorted(
        ((n, i) for i, own in enumerate(names_of) for n in own),
        key=lambda ni: (-len(ni[0]), ni[1]),
    )
    exact = tuple(
        (n, i, re.compile(re.escape(n), re.IGNORECASE), all(map(is_cjk, n)), has_cjk(n))
        for n, i in names
        if has_cjk(n) or not n.isascii()
    )
    latin = tuple((n, i, latin_key(shadow(n))) for n, i in names if not has_cjk(n) and n.isascii())
    by_sound = tuple(i for i, own in enumerate(names_of) if not any(has_cjk(n) for n in own))
    return exact, latin, by_sound


def _letter(text: str, i: int) -> bool:
    """Whether ``text[i]`` is a letter of a word in a Latin-like script (not CJK)."""
    if not 0 <= i < len(text):
        return False
    c = text[i]
    return (c.isalpha() and not is_cjk(c)) or "\u0300" <= c <= "\u036f"


SENTENCE = re.compile(r"[。！!？?\n]|\.(?=\s|$)")


CLAUSE = re.compile(
    r"[，,；;。！!？?\n]|\.(?=\s|$)|(?<![a-z])(?:and|but|while)(?![a-z])", re.IGNORECASE
)


PHRASE = re.compile(r"[，,；;。！!？?\n:：]|\.(?=\s|$)")


def start_of(pattern: re.Pattern[str], text: str, at: int) -> int:
    """Where the unit (sentence, clause, phrase) of ``text`` holding offset ``at`` starts."""
    starts = [m.end() for m in pattern.finditer(text, 0, at)]
    return starts[-1] if starts else 0


def end_of(pattern: re.Pattern[str], text: str, at: int) -> int:
    """Where the unit of ``text`` holding offset ``at`` ends."""
    m = pattern.search(text, at)
    return m.start() if m else len(text)


#: A place named right after a value is its place when a preposition or a bracket ties them.
_TIED_AFTER = re.compile(
    r"(?:(?<![a-z])(?:for|in|at|of)\s+(?:the\s+(?:city\s+of\s+)?)?|[(（]\s*)$", re.IGNORECASE
)


#: Words that say places are level (a tie): the engine's, in Chinese and English.
TIE = re.compile(  # (not 相当: also "quite", 相当热)
    r"不相上下|相差无几|相差無幾|持平|相同|一样|一樣|相近|打平|齐平"
    r"|(?<![a-z])(?:the same|equal(?:ly)?|identical|tied)(?![a-z])",
    re.IGNORECASE,
)


#: A value said of several places at once: after them (都, 均, ``both``, a tie word) or
#: before them (``both A and B``).
_DISTRIBUTIVE = re.compile(
    r"(?<![首成京])都|均|皆|(?<![a-z])(?:both|each|all)(?![a-z])|" + TIE.pattern, re.IGNORECASE
)
_BOTH = re.compile(r"(?<![a-z])(?:both|all)\s+$", re.IGNORECASE)


#: What joins the places of a list: a connector, after a bracketed value maybe.
LINK = re.compile(r"\s*(?:[(（][^()（）]*[)）]\s*)?(?:和|与|與|及|、|,|，|and)?\s*", re.IGNORECASE)


def linked(text: str, mentions: Sequence[Mention]) -> list[Mention]:
    """The list of places ending with the last of ``mentions``: it and the mentions before it
    joined to it by list connectors or side by side (``北京和厦门``, ``北京上海``, ``Beijing
    (31.1°C) and Shanghai``)."""
    if not mentions:
        return []
    group = [mentions[-1]]
    for m in reversed(mentions[:-1]):
        if not LINK.fullmatch(text, m.end, group[0].start):
            break
        group.insert(0, m)
    return group


#: A place named after these words in its phrase is what another is compared with (广州比上海热,
#: cooler than Guangzhou), not what the phrase is about.
_COMPARED = re.compile(
    r"比|没有|沒有|不如|不及|高于|低于|领先于?|超过|胜过"
    r"|(?<![a-z])(?:than|edges? out|beats?|outpaces?|tops|ahead of)(?![a-z])",
    re.IGNORECASE,
)


#: A phrase that begins with a relative word is about the place named last before it.
_RELATIVE = re.compile(r"\s*(?:(?:which|that|where|who)(?![a-z])|它|其)", re.IGNORECASE)


def topical(text: str, mentions: Sequence[Mention], at: int) -> list[Mention]:
    """Of ``mentions`` (named before offset ``at``), those a phrase at ``at`` can be about:
    not the places named as what another is compared with (广州比上海热：33.4°C is 广州's),
    unless the phrase begins with a relative word (``…than Guangzhou, which tops out at``)."""
    if _RELATIVE.match(text, start_of(PHRASE, text, at)):
        return list(mentions)
    return [
        m for m in mentions
        if not _COMPARED.search(text, start_of(PHRASE, text, m.start), m.start)
    ]  # fmt: skip


def distinct(mentions: Sequence[Mention]) -> list[PlaceSpec]:
    """The places of ``mentions``, each once, in order."""
    out: list[PlaceSpec] = []
    for m in mentions:
        if m.place not in out:
            out.append(m.place)
    return out


@dataclass(frozen=True)
class Stated:
    """The places a value is stated for (empty: none named) and the span of the mention that
    named the first of them (None when the value's position in a list decided)."""

    places: tuple[PlaceSpec, ...]
    span: tuple[int, int] | None = None


def attribute(
    text: str,
    values: Sequence[MeasuredValue],
    lists: Sequence[Sequence[int]],
    mentions: Sequence[Mention],
    asked: Sequence[PlaceSpec] = (),
) -> list[Stated]:
    """The places each of ``values`` (read from ``text``) is stated for, by the rules in the
    module docstring; ``lists`` are the lists of values :func:`~toolreplay.judging.values.scan`
    read (indices into ``values``); ``asked``: the question's places, which a value said of
    two places it does not name (两地均为 31°C) is stated for when they are two."""
    paired: dict[int, PlaceSpec] = {}
    for indices in lists:
        first, last = values[indices[0]], values[indices[-1]]
        if any(first.start <= m.start < last.end for m in mentions):
            continue  # places named between the values: each has its own
        since = start_of(SENTENCE, text, first.start)
        before = [m for m in mentions if since <= m.start and m.end <= first.start]
        for named in (before, linked(text, before)):  # the sentence's places, or the last list
            if len(distinct(named)) == len(named) == len(indices):
                paired.update(zip(indices, distinct(named), strict=True))
                break
    return [_stated(text, v, n, paired, mentions, asked) for n, v in enumerate(values)]


def _stated(
    text: str,
    v: MeasuredValue,
    index: int,
    paired: dict[int, PlaceSpec],
    mentions: Sequence[Mention],
    asked: Sequence[PlaceSpec] = (),
) -> Stated:
    if index in paired:
        return Stated((paired[index],))
    clause_end = end_of(CLAUSE, text, v.end)
    for m in mentions:
        if v.end <= m.start < clause_end:
            between = text[v.end : m.start]
            tied = _TIED_AFTER.search(between)
            bracket = tied is not None and tied.group().lstrip()[:1] in "(（"
            if (
                not re.search(r"\d", between)
                and tied is not None
                and (not bracket or re.match(r"\s*[)）]", text[m.end :]))
            ):
                return Stated((m.place,), (m.start, m.end))
            break
    group = _shared(text, v, mentions, asked)
    if len(group) >= 2:
        first = next((m for m in mentions if m.place == group[0] and m.end <= v.start), None)
        return Stated(tuple(group), (first.start, first.end) if first else None)
    before = [m for m in mentions if m.end <= v.start]
    if before and start_of(PHRASE, text, v.start) >= before[-1].end:
        before = topical(text, before, v.start) or before
    if before:
        return Stated((before[-1].place,), (before[-1].start, before[-1].end))
    after = [m for m in mentions if v.end <= m.start < min(clause_end, v.end + 8)]
    if after:
        return Stated((after[0].place,), (after[0].start, after[0].end))
    return Stated(())


def _shared(
    text: str, v: MeasuredValue, mentions: Sequence[Mention], asked: Sequence[PlaceSpec]
) -> list[PlaceSpec]:
    """The places a value is said of at once: a list of places, then a distributive or tie
    word in the value's phrase before it, with no other number between (北京和厦门…都是
    31°C, ``Beijing and Xiamen are tied at 31°C``), or ``both`` before the list (``Both
    Beijing and Xiamen reach 31°C``); one place with 都 after it stands for the places its
    sentence names, none for the question's two (两地均为 31°C)."""
    sentence = start_of(SENTENCE, text, v.start)
    before = [m for m in mentions if sentence <= m.start and m.end <= v.start]
    since = max(before[-1].end if before else 0, start_of(PHRASE, text, v.start))
    word = [m for m in _DISTRIBUTIVE.finditer(text, since, v.start)]
    if word and not re.search(r"\d", text[word[-1].end() : v.start]):
        group = linked(text, before)
        if len(group) >= 2:
            return distinct(group)
        if len(distinct(before)) >= 2:
            return distinct(before)
        if not before and len(asked) == 2:
            return list(asked)
        return []
    if not before:
        return []
    group = linked(text, before)
    listed = text[group[0].start : group[-1].end]
    if len(group) >= 2 and _BOTH.search(text, sentence, group[0].start):
        if not re.search(r"\d", listed):  # "both A (31.1°C) and B": each has its own
            return distinct(group)
    return []


__all__ = [
    "LINK", "TIE", "Mention", "PlaceSpec", "Stated", "attribute", "distinct", "distinct_places",
    "find_mentions", "linked", "other_places", "topical",
]  # fmt: skip
