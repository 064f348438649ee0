"""Claims: what an answer states when it compares places, read from its structure.

An answer concludes with any of (the domain's words from the vocabulary's
:class:`~toolreplay.judging.vocabulary.Comparison`, the grammar here):

* a superlative said of a place: the place its clause names before the word (``广州最热``,
  ``Guangzhou is the hottest``, ``杭州 32.1℃ 最凉快``), else the place right after it
  (``最热的是广州``, ``the hottest is Guangzhou``), else the place its sentence is about
  (``广州 33.4°C，是三地中最热的``); the other end's superlative too (最凉快); none in a question
  (哪个最热) or negated;
* comparatives: ``A 比 B 热``, ``A 没有 B 热`` (B is hotter), ``A 不如 B 热``, ``A 高于 B``,
  ``A is hotter than B``, ``A and B are both cooler than C``, ``than both A and B``; and, of two
  places, ``A 更热``, ``A 高出 4.8°C`` or ``A is warmer``;
* rankings: ``A > B > C`` (or ``<``), a list of places after an order word (从高到低依次为
  A、B、C), ``A…, followed by B and C``, ``A 最热，B 次之``;
* ties (:data:`~toolreplay.judging.places.TIE`: 不相上下, 持平, 一样, 相同, ``the same``,
  ``equal``, ``tied``): between the places its phrase names, or, said of two (两地, ``both``),
  the two named before it, else the two after it, else the question's two; a hedge before the
  word (几乎, ``about``) marks it as loose.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from toolreplay.judging.places import (
    CLAUSE,
    LINK,
    PHRASE,
    SENTENCE,
    TIE,
    Mention,
    PlaceSpec,
    distinct,
    end_of,
    linked,
    start_of,
    topical,
)
from toolreplay.judging.vocabulary import Comparison

_QUESTION = re.compile(r"哪个|哪座|哪里|哪儿|哪一|哪|(?<![a-z])(?:which|what)(?![a-z])", re.I)
_NEGATED = re.compile(r"(?:不是|并非|並非|(?<![a-z])(?:not|isn't|is not)(?![a-z]))\s*$", re.I)
_TWO = re.compile(r"两地|兩地|两座|两城|两个城市|两者|二者|(?<![a-z])(?:both|two)(?![a-z])", re.I)
_RANK = re.compile(r"[>＞<＜]")
_HEDGE = re.compile(
    r"(?:几乎|幾乎|差不多|基本上?|大致|接近|近乎|大体|"
    r"(?<![a-z])(?:almost|nearly|roughly|about|virtually|practically|essentially)(?![a-z]))"
    r"\s*$",
    re.IGNORECASE,
)
#: (a bare 其次 is also "secondly", 首先…其次…, and says nothing of an order)
_NEXT = re.compile(r"(?<![a-z])followed by(?![a-z])|其次是|其次为|其次為", re.IGNORECASE)
_SECOND = re.compile(r"次之|(?<![a-z])(?:comes?|is|ranks?) second(?![a-z])", re.IGNORECASE)
#: A comparative with its object (A 比 B 热, hotter than B) is read as such, not as a bare one.
_COMPARED = re.compile(r"比|没有|沒有|不如|不及|(?<![a-z])than(?![a-z])", re.I)


@dataclass(frozen=True)
class _Words:
    most: re.Pattern[str]
    least: re.Pattern[str]
    after: re.Pattern[str]
    than: re.Pattern[str]  # A 比 B 热
    than_en: re.Pattern[str]  # A is hotter than B
    not_as: re.Pattern[str]  # A 没有 B 热
    verb: re.Pattern[str]  # A 高于 B
    bare: re.Pattern[str]  # A 更热
    bare_en: re.Pattern[str]  # A is warmer
    more: re.Pattern[str]
    descending: re.Pattern[str]
    ascending: re.Pattern[str]


def _p(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern or r"(?!)", re.IGNORECASE)


@functools.lru_cache(maxsize=16)
def _words(cmp: Comparison) -> _Words:
    never = r"(?!)"
    plain = rf"(?:{cmp.more or never}|{cmp.less or never})"
    adj = rf"(?P<adj>{plain})"
    fill = r"(?:还要|还|更加|更|要|稍微|稍|略微|略|明显|都|的|\s)*"
    return _Words(
        _p(cmp.superlative),
        _p(cmp.least),
        _p(rf"(?:{cmp.after or never})\s?" if cmp.after else ""),
        _p(rf"比(?P<obj>[^，,。；;！!？?\d]{{1,20}}?){fill}{adj}"),
        _p(rf"{adj}\s+than\s+(?:both\s+|all\s+|either\s+|any\s+of\s+)?(?P<obj>)"),
        _p(rf"(?:没有|沒有|不如|不及)(?P<obj>[^，,。；;！!？?\d]{{1,20}}?)"
           rf"(?:那么|那麼|这么|這麼|\s)*{adj}"),
        _p(rf"{adj}于(?P<obj>[^，,。；;！!？?\d]{{1,20}})"),
        _p(rf"(?:(?:更加|更|稍微|稍|略微|略|还要)|(?={plain}出)){adj}"),
        _p(rf"(?<![a-z])(?:is|are|was|were|feels?|runs?)\s+(?:(?:a\s+(?:bit|little|touch)"
           rf"|slightly|much|somewhat|even|marginally|noticeably)\s+)?{adj}(?!\s+than)"),
        _p(cmp.more),
        _p(cmp.descending),
        _p(cmp.ascending),
    )


@dataclass
class Claims:
    """What an answer states: ``greater`` pairs (a's value above b's), ``ties`` (``hedged``:
    the loose ones), the places its superlatives name (``most``, with spans) and those of the
    other end's (``least``)."""

    greater: list[tuple[PlaceSpec, PlaceSpec]] = field(default_factory=list)
    ties: list[tuple[PlaceSpec, ...]] = field(default_factory=list)
    hedged: set[tuple[PlaceSpec, ...]] = field(default_factory=set)  # 几乎一样, nearly the same
    most: list[tuple[PlaceSpec, tuple[int, int]]] = field(default_factory=list)
    least: list[PlaceSpec] = field(default_factory=list)

    def relate(self, a: PlaceSpec, b: PlaceSpec) -> None:
        if a != b and (a, b) not in self.greater:
            self.greater.append((a, b))


def _subjects(text: str, at: int, mentions: Sequence[Mention]) -> list[PlaceSpec]:
    """The places a comparative at ``at`` is said of: the place its clause names last before
    it, with the places listed with it (``A 和 B 都比 C 热``, ``A (31°C) and B are both
    cooler than C``); else the place its sentence names last before it."""
    clause = start_of(PHRASE, text, at)
    own = [m for m in mentions if clause <= m.start and m.end <= at]
    if not own:
        sentence = start_of(SENTENCE, text, at)
        own = [m for m in mentions if sentence <= m.start and m.end <= at][-1:]
        return [m.place for m in own]
    return distinct(linked(text, own))


def _listed_after(text: str, at: int, mentions: Sequence[Mention]) -> list[PlaceSpec]:
    """The list of places that starts right at ``at`` (``than both A (31°C) and B``)."""
    first = next((m for m in mentions if m.start >= at), None)
    if first is None or text[at : first.start].strip():
        return []
    group = [first]
    for m in mentions:
        if m.start > group[-1].start and LINK.fullmatch(text, group[-1].end, m.start):
            group.append(m)
    return distinct(group)


def _in(text: str, span: tuple[int, int], mentions: Sequence[Mention]) -> list[PlaceSpec]:
    return distinct([m for m in mentions if span[0] <= m.start and m.end <= span[1]])


def read_claims(
    text: str, mentions: Sequence[Mention], cmp: Comparison, asked: Sequence[PlaceSpec]
) -> Claims:
    """The claims of the plain ``text`` whose question's places (``asked``) are named at
    ``mentions``, read with the words of ``cmp`` (see the module docstring)."""
    places = len(asked)
    w = _words(cmp)
    claims = Claims()
    for pattern, reverse in ((w.than, False), (w.than_en, False), (w.not_as, True),
                             (w.verb, False)):  # fmt: skip
        for m in pattern.finditer(text):
            objects = (
                _in(text, m.span("obj"), mentions)
                if m.end("obj") > m.start("obj")
                else _listed_after(text, m.end(), mentions)
            )
            subjects = _subjects(text, m.start(), mentions)
            hotter = w.more.fullmatch(m.group("adj").strip()) is not None
            for a in subjects:
                for b in objects:
                    above = hotter != reverse
                    claims.relate(a, b) if above else claims.relate(b, a)
    if places == 2:
        bare = [*w.bare.finditer(text), *w.bare_en.finditer(text)]
        for m in bare:
            if _COMPARED.search(text, start_of(PHRASE, text, m.start()), m.start()):
                continue  # read above, with its object
            subjects = _subjects(text, m.start(), mentions)
            others = {mm.place for mm in mentions} - set(subjects)
            hotter = w.more.fullmatch(m.group("adj").strip()) is not None
            for a in subjects:
                for b in others:
                    claims.relate(a, b) if hotter else claims.relate(b, a)
    _rankings(text, mentions, w, claims)
    _ties(text, mentions, claims, asked)
    for pattern, out in ((w.most, claims.most), (w.least, None)):
        for m in pattern.finditer(text):
            said = _superlative(text, m, mentions, w)
            if said is None:
                continue
            if out is None:
                claims.least.append(said[0])
            else:
                out.append(said)
    return claims


def _superlative(
    text: str, m: re.Match[str], mentions: Sequence[Mention], w: _Words
) -> tuple[PlaceSpec, tuple[int, int]] | None:
    clause = start_of(CLAUSE, text, m.start())
    phrase = start_of(PHRASE, text, m.start())
    before_word = text[phrase : m.start()]
    if _QUESTION.search(before_word) or _NEGATED.search(before_word):
        return None
    nxt = next((x for x in mentions if x.start > m.end()), None)
    if nxt is not None and w.after.fullmatch(text, m.end(), nxt.start):
        return nxt.place, (m.start(), nxt.end)
    own = [x for x in mentions if clause <= x.start and x.end <= m.start()]
    if not own:  # "and Guangzhou is the hottest": the clause begins at "and"
        own = [x for x in mentions if phrase <= x.start and x.end <= m.start()]
    own = topical(text, own, m.start()) or own  # "A edges out B as the hottest" is A
    if not own:  # "广州 33.4°C，是三地中最热的": the place its sentence is about
        sentence = start_of(SENTENCE, text, m.start())
        named = [x for x in mentions if sentence <= x.start and x.end <= m.start()]
        own = topical(text, named, m.start())
    if own:
        return own[-1].place, (own[-1].start, m.end())
    return None


def _rankings(text: str, mentions: Sequence[Mention], w: _Words, claims: Claims) -> None:
    for s in [0, *(m.end() for m in SENTENCE.finditer(text))]:
        e = end_of(SENTENCE, text, s)
        if s >= e:
            continue
        marks = list(_RANK.finditer(text, s, e))
        if marks and len({m.group() in "<＜" for m in marks}) == 1:
            bounds = [s, *(m.start() for m in marks), e]
            chain: list[PlaceSpec] = []
            for n, (a, b) in enumerate(itertools.pairwise(bounds)):
                named = [m.place for m in mentions if a <= m.start and m.end <= b]
                if not named:
                    chain = []
                    break
                chain.append(named[-1] if n == 0 else named[0])
            if marks[0].group() in "<＜":
                chain.reverse()
            for hi, lo in itertools.pairwise(chain):
                claims.relate(hi, lo)
        for cue in _NEXT.finditer(text, s, e):  # A…, followed by B and C / A 最热，其次是 B
            head = [m.place for m in mentions if s <= m.start and m.end <= cue.start()][-1:]
            rest = distinct([m for m in mentions if cue.end() <= m.start and m.end <= e])
            for hi, lo in itertools.pairwise(head + [pl for pl in rest if pl not in head]):
                claims.relate(hi, lo)
        for cue in _SECOND.finditer(text, s, e):  # A 最热，B 次之
            named = distinct([m for m in mentions if s <= m.start and m.end <= cue.start()])
            if len(named) >= 2:
                claims.relate(named[-2], named[-1])
        for pattern, flip in ((w.descending, False), (w.ascending, True)):
            order = pattern.search(text, s, e)
            if order is None:
                continue
            listed = distinct([m for m in mentions if order.end() <= m.start and m.end <= e])
            if flip:
                listed.reverse()
            for hi, lo in itertools.pairwise(listed):
                claims.relate(hi, lo)


def _ties(
    text: str, mentions: Sequence[Mention], claims: Claims, asked: Sequence[PlaceSpec]
) -> None:
    for m in TIE.finditer(text):
        a, b = start_of(PHRASE, text, m.start()), end_of(PHRASE, text, m.end())
        group = _in(text, (a, b), mentions)
        if len(group) < 2:
            s, e = start_of(SENTENCE, text, m.start()), end_of(SENTENCE, text, m.end())
            before = distinct([x for x in mentions if s <= x.start and x.end <= a])
            after = distinct([x for x in mentions if b <= x.start and x.end <= e])
            two = _TWO.search(text, a, b) is not None
            if len(before) >= 2:
                group = before[-2:] if two else before
            elif two and len(after) >= 2:
                group = after[:2]
            elif two and len(asked) == 2:
                group = list(asked)
        if len(group) >= 2 and tuple(group) not in claims.ties:
            claims.ties.append(tuple(group))
            if _HEDGE.search(text, a, m.start()):
                claims.hedged.add(tuple(group))


__all__ = ["Claims", "read_claims"]
