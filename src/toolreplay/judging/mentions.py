"""Every place an answer names: the question's places and the tool results' other places
(:func:`~toolreplay.judging.places.find_mentions`, in any script), and the places no tool
result names (:func:`unknown_mentions`: ``Suzhou``, 苏州, 昆山市), each a place of its own,
so that a value said of one is never the asked place's. What is in what (a result's
``country``, the question's region) is set aside (:func:`region_names`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.judging.places import (
    Mention,
    PlaceSpec,
    distinct_places,
    find_mentions,
    other_places,
)
from toolreplay.judging.romanisation import (
    GAZETTEER,
    has_cjk,
    key,
    names_key_set,
    pinyin_shaped,
    shadow,
    suffixed_names,
)
from toolreplay.judging.toolvalues import ToolValue, tool_values
from toolreplay.judging.vocabulary import Vocabulary

#: A capitalised Latin word (with its syllable breaks), read in :func:`shadow` of a text.
_CAPITALISED = re.compile(
    r"(?<![A-Za-z\u0300-\u036f])[A-Z][a-z\u0300-\u036f]*(?:['\-][a-z\u0300-\u036f]+)*"
    r"(?![A-Za-z\u0300-\u036f])"
)


def region_names(asked: Sequence[PlaceSpec], pool: Sequence[ToolValue]) -> tuple[str, ...]:
    """The names of what the places of the question and of the tool values in ``pool`` are in
    (their regions, a result's ``country`` and other ``place_context`` names)."""
    out = [p.region for p in asked if isinstance(p.region, str) and p.region]
    for tv in pool:
        if tv.place is not None:
            out += tv.place.regions
    return tuple(dict.fromkeys(out))


def unknown_mentions(
    text: str, known: Sequence[Mention], regions: Sequence[str] = (), pinyin: bool = True
) -> tuple[Mention, ...]:
    """Where ``text`` names a place that none of the ``known`` mentions (the question's and the
    tool results' places) is and that is none of ``regions`` (what those places are in): a
    capitalised Latin word shaped like a pinyin place name
    (:func:`~toolreplay.judging.romanisation.pinyin_shaped`: ``Suzhou``, ``Kunming``; only
    with ``pinyin``, as a brand or a person is pinyin-shaped too: ``Xiaomi``) or
    spelling a name of :data:`~toolreplay.judging.romanisation.GAZETTEER` or of the exonym
    table (``Wuhan``, ``Canton``); a name of the gazetteer in Chinese (苏州, 浙江); two
    characters before 市, 县 or 省 that are not a common word (昆山市, not 城市). Each is a
    place of its own (``known=False``, no region)."""
    region_mentions = find_mentions(text, [PlaceSpec(r, None) for r in regions])
    taken: set[int] = set()
    for m in (*known, *region_mentions):
        taken.update(range(m.start, m.end))
    out: list[Mention] = []

    def add(start: int, end: int) -> None:
        if not taken.intersection(range(start, end)):
            taken.update(range(start, end))
            name = text[start:end]
            out.append(Mention(start, end, PlaceSpec(name, None, known=False)))

    for g in find_mentions(text, _gazetteer_places()):
        add(g.start, g.end)
    latin_keys = _gazetteer_keys()
    for w in _CAPITALISED.finditer(shadow(text)):
        if (pinyin and pinyin_shaped(w.group())) or key(w.group()) in latin_keys:
            add(w.start(), w.end())
    for start, end in suffixed_names(text):
        add(start, end)
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _gazetteer_places() -> tuple[PlaceSpec, ...]:
    return tuple(PlaceSpec(n, None) for n in GAZETTEER)


@functools.lru_cache(maxsize=1)
def _gazetteer_keys() -> frozenset[str]:
    return frozenset(k for k in names_key_set(GAZETTEER) if not has_cjk(k))


def answer_mentions(
    text: str,
    asked: Sequence[PlaceSpec],
    others: Sequence[PlaceSpec] = (),
    pool: Sequence[ToolValue] = (),
) -> tuple[Mention, ...]:
    """Every place ``text`` names, in text order: the question's places (``asked``), the tool
    results' other places (``others``, :func:`other_places`) in any script
    (:func:`find_mentions`), then the places no tool result names
    (:func:`unknown_mentions`; pinyin-shaped words only when an asked place has a region: a
    question about entities, SKUs or warehouses, may name ``Xiaomi``). The regions of
    ``asked`` and of ``pool``'s places are set aside, and so are the names of the tool places
    an asked place names: 南昌 for a question about 南昌县 whose look-up returned 南昌 is not
    another place; its values are the question's as before."""
    known = find_mentions(text, (*asked, *others))
    covered = [  # tool places an asked place names (南昌 for 南昌县): no unknown place either
        n
        for place in distinct_places(pool)
        if any(p.named(place) for p in asked)
        for n in (place.name, *place.alternates)
    ]
    aside = (*region_names(asked, pool), *dict.fromkeys(covered))
    geographic = any(p.region is not None for p in asked)  # a place, not an entity (a SKU)
    unknown = unknown_mentions(text, known, aside, pinyin=geographic)
    return tuple(sorted((*known, *unknown), key=lambda m: m.start))




def answer_places(
    text: str,
    transcript: Sequence[Mapping[str, Any]],
    asked: Sequence[PlaceSpec],
    vocab: Vocabulary,
) -> tuple[tuple[ToolValue, ...], tuple[PlaceSpec, ...], tuple[Mention, ...]]:
    """What grounding an answer reads whatever the judge's units: the tool values of
    ``transcript`` (:func:`~toolreplay.judging.toolvalues.tool_values`), the places of those
    that no place of ``asked`` names (:func:`~toolreplay.judging.places.other_places`), and
    the places the answer's plain ``text`` names (:func:`answer_mentions`)."""
    pool = tool_values(transcript, vocab)
    others = other_places(pool, asked, vocab.place_suffixes)
    return pool, others, answer_mentions(text, asked, others, pool)


__all__ = ["answer_mentions", "answer_places", "region_names", "unknown_mentions"]
