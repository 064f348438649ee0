"""Comparisons: the conclusion an answer draws about several places
(:func:`~toolreplay.judging.claims.read_claims`), checked against the tool results.

Each stated relation must agree with the tool values (the first of the comparison's fields
that covers two places, for the question's day); a tie is right when the values are equal at
the precision the answer writes the tied places' values in (whole units when it writes none;
one decimal fewer for a hedged tie). The winner is the superlative's place, else the place the
relations put above every other (the other end's superlative puts its place below every
other), else the tie that takes in every place; the answer is right when the winner it gives
is the tool results' (for a tie, every tied place is equal to the best at that precision) and
every relation, tie and superlative it states holds. A value said of several places at once
(都是 31°C) levels them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from toolreplay.judging.claims import Claims, read_claims
from toolreplay.judging.grounding import Target, ValueCheck, fits_field
from toolreplay.judging.places import PlaceSpec, find_mentions
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


def _values(
    pool: Sequence[ToolValue], expect: Target, cmp: Comparison, vocab: Vocabulary
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


def _groups(claims: Claims, places: Sequence[PlaceSpec]) -> dict[PlaceSpec, frozenset[PlaceSpec]]:
    """Each place's tie group (itself alone when it is tied with none)."""
    group = {p: frozenset({p}) for p in places}
    for tie in claims.ties:
        merged = frozenset().union(*(group.get(p, frozenset({p})) for p in tie))
        for p in merged:
            group[p] = merged
    return group


def _winner(claims: Claims, places: Sequence[PlaceSpec]) -> frozenset[PlaceSpec] | None:
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
    expect: Target,
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
    claims = read_claims(p.text, mentions, cmp, expect.places)
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
    claims: Claims,
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
