"""Comparisons: the conclusion an answer draws about several places, read from its structure,
and checked against the tool results.

An answer concludes with any of (the domain's words from the vocabulary's
:class:`~toolreplay.judging.vocabulary.Comparison`, the grammar here):

* a superlative said of a place: the place its clause names before the word (``广州最热``,
  ``Guangzhou is the hottest``, ``杭州 32.1℃ 最凉快``) or the place right after it
  (``最热的是广州``, ``the hottest is Guangzhou``); the other end's superlative too (最凉快);
* comparatives: ``A 比 B 热``, ``A 没有 B 热`` (B is hotter), ``A 不如 B 热``, ``A 高于 B``,
  ``A is hotter than B``, ``A and B are both cooler than C``; and, of two places, ``A 更热`` or
  ``A is warmer``;
* rankings: ``A > B > C`` (or ``<``), and a list of places after an order word
  (从高到低依次为 A、B、C);
* ties: 不相上下, 持平, 一样, 相同, ``the same``, ``equal``: between the places its phrase
  names, or, said of two (两地, ``both``), the two named before it, else the two after it,
  else the question's two.

Each stated relation must agree with the tool values (the first of the comparison's fields
that covers two places, for the question's day); a tie is right when the values are equal at
the precision the answer writes the tied places' values in (whole units when it writes
none). The winner is the superlative's place, else the place the relations put above every
other, else the tie that takes in every place; the answer is right when the winner it gives
is the tool results' (for a tie, every tied place is equal to the best at that precision)
and every relation, tie and superlative it states holds.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolreplay.judging.grounding import Expectation, ValueCheck, fits_field
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
    find_mentions,
    linked,
    start_of,
    topical,
)
from toolreplay.judging.presentation import plain
from toolreplay.judging.toolvalues import ToolValue
from toolreplay.judging.units import unit_named
from toolreplay.judging.vocabulary import Comparison, Vocabulary, resolve


@dataclass(frozen=True)
class Conclusion:
    """A comparison's conclusion: the place the answer names hottest (``said``, with its
    ``span``), the place the tool results make hottest (``actual``) and the tool values
    compared (``values``: ``"name: 33.4°C at $.daily[0].temperature_2m_max of tool message
    9"``). ``claims``: the relations, ties and superlatives the answer states, as read
    (``"广州 > 上海"``, ``"北京 = 厦门"``); ``wrong``: why the first wrong one is wrong."""

    said: str | None
    span: tuple[int, int] | None
    actual: str | None
    values: tuple[str, ...]
    correct: bool
    claims: tuple[str, ...] = ()
    wrong: str | None = None
    tied: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "said": self.said,
            "span": list(self.span) if self.span else None,
            "actual": self.actual,
            "values": list(self.values),
            "correct": self.correct,
        }
        if self.claims:
            out["claims"] = list(self.claims)
        return out


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
_NEXT = re.compile(r"(?<![a-z])followed by(?![a-z])|其次是|其次为|其次為|其次", re.IGNORECASE)
_SECOND = re.compile(r"次之|(?<![a-z])(?:comes? )?(?:second|next)(?![a-z])", re.IGNORECASE)
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
    fill = r"(?:还要|还|更加|更|要|稍微|稍|略微|略|明显|都|的|气温|温度|\s)*"
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
class _Claims:
    """What an answer states: ``greater`` pairs (a above b), ``ties``, superlatives."""

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


def _read(
    text: str, mentions: Sequence[Mention], cmp: Comparison, asked: Sequence[PlaceSpec]
) -> _Claims:
    places = len(asked)
    w = _words(cmp)
    claims = _Claims()
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
    if not own:  # "广州 33.4°C，是三地中最热的": the place its sentence is about
        sentence = start_of(SENTENCE, text, m.start())
        named = [x for x in mentions if sentence <= x.start and x.end <= m.start()]
        own = topical(text, named, m.start())
    if own:
        return own[-1].place, (own[-1].start, m.end())
    return None


def _rankings(text: str, mentions: Sequence[Mention], w: _Words, claims: _Claims) -> None:
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
    text: str, mentions: Sequence[Mention], claims: _Claims, asked: Sequence[PlaceSpec]
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


def _values(
    pool: Sequence[ToolValue], expect: Expectation, cmp: Comparison, vocab: Vocabulary
) -> dict[PlaceSpec, ToolValue]:
    """Each place's tool value from the first of the comparison's fields covering two."""
    day = expect.day if expect.day is not None else 0
    for label in cmp.fields:
        per_place: dict[PlaceSpec, ToolValue] = {}
        for tv in pool:
            if tv.kind != cmp.kind or tv.day != day or not fits_field(label, tv, vocab):
                continue
            for p in expect.places:
                if p.matches(tv.place):
                    per_place.setdefault(p, tv)
        if len(per_place) >= 2:
            return per_place
    return {}


def _level(tv: ToolValue, vocab: Vocabulary) -> float:
    unit = unit_named(tv.unit, vocab.units)
    return unit.to_canonical(tv.value) if unit else tv.value


def _equal_as_written(
    group: Sequence[PlaceSpec],
    per_place: dict[PlaceSpec, ToolValue],
    checks: Sequence[ValueCheck],
    cmp: Comparison,
    vocab: Vocabulary,
    loose: bool = False,
) -> bool:
    """Whether the tool values of ``group`` are equal at the precision the answer writes
    their values in (whole units, in the answer's unit, when it writes none); ``loose`` (a
    hedged tie: 几乎一样, ``nearly the same``) at one decimal fewer."""
    mine = [c for c in checks if c.value.kind == cmp.kind and set(c.places) & set(group)]
    decimals = max((c.value.decimals for c in mine), default=0)
    if loose:
        decimals = max(0, decimals - 1)
    unit = unit_named(mine[0].value.unit, vocab.units) if mine else None
    shown = set()
    for p in group:
        level = _level(per_place[p], vocab)
        level = unit.from_canonical(level) if unit else level
        shown.add(math.floor(level * 10**decimals + 0.5 + 1e-9))
    return len(shown) == 1


def _groups(claims: _Claims, places: Sequence[PlaceSpec]) -> dict[PlaceSpec, frozenset[PlaceSpec]]:
    """Each place's tie group (itself alone when it is tied with none)."""
    group = {p: frozenset({p}) for p in places}
    for tie in claims.ties:
        merged = frozenset().union(*(group.get(p, frozenset({p})) for p in tie))
        for p in merged:
            group[p] = merged
    return group


def _winner(claims: _Claims, places: Sequence[PlaceSpec]) -> frozenset[PlaceSpec] | None:
    """The places the answer makes best: the superlative's, else the group the relations put
    above every other, else a tie of every place."""
    group = _groups(claims, places)
    if claims.most:
        return group.get(claims.most[0][0], frozenset({claims.most[0][0]}))
    nodes = set(group.values())
    above: dict[frozenset[PlaceSpec], set[frozenset[PlaceSpec]]] = {g: set() for g in nodes}
    bottom = [(p, q) for q in claims.least if q in group for p in places if p not in group[q]]
    for a, b in [*claims.greater, *bottom]:  # the other end's place is below every other
        if a in group and b in group:
            above[group[a]].add(group[b])
    for g in nodes:  # transitive closure, small graphs
        frontier = list(above[g])
        while frontier:
            h = frontier.pop()
            for k in above.get(h, ()):
                if k not in above[g]:
                    above[g].add(k)
                    frontier.append(k)
    best = [g for g in nodes if above[g] >= nodes - {g}]
    if len(best) == 1 and (len(nodes) == 1 or above[best[0]]):
        return best[0]
    return None


def check_conclusion(
    answer: str,
    pool: Sequence[ToolValue],
    expect: Expectation,
    vocabulary: Vocabulary | None = None,
    checks: Sequence[ValueCheck] = (),
) -> Conclusion:
    """Which place ``answer`` concludes is best (hottest) in the question's comparison
    measure of ``vocabulary`` (None: the default study's; for a question that is no
    comparison, its first comparison measure's), read as the module docstring says, and
    whether the tool values agree: weather, by each place's daily maximum for the question's
    day, or (today) its current temperature. ``checks`` (the answer's grounded values) give
    the precision a tie is judged at. Raises :class:`ValueError` when the vocabulary declares
    no comparison."""
    vocab = resolve(vocabulary)
    cmp = vocab.comparison(expect.measure) or next(
        (m.compare for m in vocab.measures if m.compare is not None), None
    )
    if cmp is None:
        raise ValueError(f"the {vocab.name} vocabulary declares no comparison measure")
    p = plain(answer)
    mentions = find_mentions(p.text, expect.places)
    claims = _read(p.text, mentions, cmp, expect.places)
    for c in checks:  # a value said of several places at once levels them (都是 31°C)
        if c.also and c.bound is None and c.value.kind == cmp.kind and c.places not in claims.ties:
            claims.ties.append(c.places)
    per_place = _values(pool, expect, cmp, vocab)
    shown = tuple(f"{pl.query}: {tv.describe()}" for pl, tv in per_place.items())
    pick = max if cmp.highest else min
    other_end = min if cmp.highest else max
    actual = pick(per_place, key=lambda pl: per_place[pl].value) if per_place else None
    winner = _winner(claims, expect.places)
    said = "、".join(pl.query for pl in expect.places if winner and pl in winner) or None
    if winner and claims.most:
        said = claims.most[0][0].query
    span = p.span(*claims.most[0][1]) if claims.most else None
    stated = tuple(
        [f"{a.query} > {b.query}" for a, b in claims.greater]
        + [" = ".join(pl.query for pl in tie) for tie in claims.ties]
        + [f"{cmp.least_adjective}: {pl.query}" for pl in claims.least]
    )
    if stated:  # a superlative alone is shown as ``said``
        stated += tuple(f"{cmp.adjective}: {pl.query}" for pl, _ in claims.most)
    wrong = _first_wrong(claims, per_place, checks, cmp, vocab, other_end)
    if wrong is None and len({pl for pl, _ in claims.most}) > 1:
        named = " and ".join(dict.fromkeys(pl.query for pl, _ in claims.most))
        wrong = f"the answer names {named} {cmp.adjective}"
    right_winner = winner is not None and _best(
        winner, actual, per_place, checks, cmp, vocab, bool(claims.hedged)
    )
    tied = tuple(pl.query for pl in expect.places if winner and pl in winner and len(winner) > 1)
    return Conclusion(
        said, span, actual.query if actual else None, shown,
        right_winner and wrong is None, stated, wrong, tied,
    )  # fmt: skip


def _best(
    winner: frozenset[PlaceSpec],
    actual: PlaceSpec | None,
    per_place: dict[PlaceSpec, ToolValue],
    checks: Sequence[ValueCheck],
    cmp: Comparison,
    vocab: Vocabulary,
    loose: bool = False,
) -> bool:
    """Whether the places the answer makes best are the tool results' best: ``actual`` among
    them, and (a tie) all of them equal at the precision written (``loose``: one decimal
    fewer)."""
    if actual is None or actual not in winner or any(pl not in per_place for pl in winner):
        return False
    if len(winner) == 1:
        return True
    group = sorted(winner, key=list(per_place).index)
    return _equal_as_written(group, per_place, checks, cmp, vocab, loose)


def _first_wrong(
    claims: _Claims,
    per_place: dict[PlaceSpec, ToolValue],
    checks: Sequence[ValueCheck],
    cmp: Comparison,
    vocab: Vocabulary,
    other_end: Callable[..., PlaceSpec],
) -> str | None:
    """Why the first relation, tie or superlative of the other end the answer states is
    wrong; None when all hold."""

    def values(*pls: PlaceSpec) -> str:
        return "; ".join(f"{pl.query}: {per_place[pl].describe()}" for pl in pls)

    for a, b in claims.greater:
        missing = [pl.query for pl in (a, b) if pl not in per_place]
        if missing:
            return f"the tool results hold no {cmp.kind} of {', '.join(missing)} to compare"
        if not _level(per_place[a], vocab) > _level(per_place[b], vocab):
            return (
                f"the answer puts {a.query} above {b.query} in {cmp.plural}, but the tool "
                f"results do not ({values(a, b)})"
            )
    for tie in claims.ties:
        missing = [pl.query for pl in tie if pl not in per_place]
        if missing:
            return f"the tool results hold no {cmp.kind} of {', '.join(missing)} to compare"
        if not _equal_as_written(tie, per_place, checks, cmp, vocab, tie in claims.hedged):
            names = " and ".join(pl.query for pl in tie)
            return (
                f"the answer says {names} are level, but at the precision it writes their "
                f"{cmp.plural} the tool results differ ({values(*tie)})"
            )
    for pl in claims.least:
        if pl not in per_place or not per_place:
            return f"the tool results hold no {cmp.kind} of {pl.query} to compare"
        end = other_end(per_place, key=lambda x: per_place[x].value)
        if per_place[pl].value != per_place[end].value:
            return (
                f"the answer says {pl.query} is {cmp.least_adjective}, but the tool results "
                f"make {end.query} {cmp.least_adjective} ({values(*per_place)})"
            )
    return None


__all__ = ["Conclusion", "check_conclusion"]
