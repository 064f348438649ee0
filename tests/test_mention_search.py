"""Finding place names fast changes nothing found (issue 33): ``find_mentions`` skips a name
whose letters are not in the text (``latin_key``) and keeps each set of places' names sorted
once. The reference here is the search as it was written before, name by name with no
skipping; both must find the same mentions on texts drawn from names in every script, with
diacritics, breaks, case and the letters case-insensitive matching confuses (İ ı ſ K)."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from toolreplay.judging.places import Mention, PlaceSpec, _letter, find_mentions
from toolreplay.judging.romanisation import (
    GAZETTEER,
    has_cjk,
    latin_key,
    latin_pattern,
    shadow,
    sounded,
)


def reference_find_mentions(text: str, places: Sequence[PlaceSpec]) -> tuple[Mention, ...]:
    """Every name of every place searched for, longer names first (the search before it
    skipped absent names)."""
    out: list[Mention] = []
    taken: set[int] = set()

    def take(start: int, end: int, p: PlaceSpec) -> None:
        if start < end and not taken.intersection(range(start, end)):
            taken.update(range(start, end))
            out.append(Mention(start, end, p))

    names = sorted(
        ((n, i, p) for i, p in enumerate(places) for n in p.names()),
        key=lambda nip: (-len(nip[0]), nip[1]),
    )
    for name, _, p in names:
        if has_cjk(name) or not name.isascii():
            for m in re.finditer(re.escape(name), text, re.IGNORECASE):
                if has_cjk(name) or not (_letter(text, m.start() - 1) or _letter(text, m.end())):
                    take(m.start(), m.end(), p)
    folded = shadow(text)
    for name, _, p in names:
        if not has_cjk(name) and name.isascii():
            for m in latin_pattern(name).finditer(folded):
                if not (_letter(text, m.start() - 1) or _letter(text, m.end())):
                    take(m.start(), m.end(), p)
    for p in places:
        if any(has_cjk(n) for n in p.names()):
            continue
        for n in p.names():
            for start, end in sounded(text, n):
                take(start, end, p)
    return tuple(sorted(out, key=lambda x: x.start))


GAZETTEER_PLACES = [PlaceSpec(n, None) for n in GAZETTEER]
LATIN_PLACES = [
    PlaceSpec("Guangzhou", "Guangdong"),
    PlaceSpec("Xi'an", None, aliases=("Xian",)),
    PlaceSpec("Lüliang", None),
    PlaceSpec("Mexico City", None, aliases=("Ciudad de México",)),
    PlaceSpec("Kiev", None, aliases=("Kyiv",)),
    PlaceSpec("Istanbul", None),
]
PIECES = [
    *GAZETTEER[:30], "宁德市", "广州市", "Guangzhou", "GUANGZHOU", "Guǎngzhōu", "Guang-zhou",
    "guang zhou", "Xi'an", "XĪ'ĀN", "Xi’an", "Xian", "Lvliang", "Luliang", "Lüliang", "LÜLIANG",
    "Beijing", "Běijīng", "Peking", "Canton", "Hangzhou", "Hang'zhou", "Mexico City",
    "Ciudad de México", "MEXICO", "Kyiv", "\u212ayiv", "Kiev", "İstanbul", "\u0131stanbul",
    "Istanbul", "ſuzhou", "Suzhou", "Xiamen", "Kunming", "Wuhan", "Nanchang", "Shanghai",
    "e\u0301", "\u0301", " ", "-", "'", "‐", "，", "。", "°C", "31.5", "最高", "and", "in",
    "x", "a", "n",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12), st.sampled_from(["", " ", "-"]))
def test_the_fast_search_finds_what_the_name_by_name_search_finds(
    pieces: list[str], sep: str
) -> None:
    text = sep.join(pieces)
    for places in (GAZETTEER_PLACES, LATIN_PLACES, [*LATIN_PLACES, *GAZETTEER_PLACES[:5]]):
        assert find_mentions(text, places) == reference_find_mentions(text, places), text


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([p.query for p in LATIN_PLACES] + ["Nanchang", "Xiamen", "Lü'liang"]),
    st.text(alphabet=st.sampled_from("aeiouglnxzhKkİıſv \u0301'-‐ÜüVGUA"), max_size=30),
    st.text(alphabet=st.sampled_from("aeiouglnxzhKkİıſv \u0301'-‐ÜüVGUA"), max_size=8),
)
def test_a_name_whose_key_is_absent_is_never_found(name: str, before: str, after: str) -> None:
    ascii_name = shadow(name) if shadow(name).isascii() else name.replace("ü", "v")
    for text in (before + ascii_name + after, before + after, before + ascii_name.upper()):
        folded = shadow(text)
        if latin_pattern(ascii_name).search(folded):
            assert latin_key(shadow(ascii_name)) in latin_key(folded), (ascii_name, text)


def test_every_letter_case_insensitive_matching_takes_for_an_ascii_letter_is_folded() -> None:
    """The fold table of ``latin_key`` is complete: over every code point, a character that an
    ASCII letter matches case-insensitively folds to that letter."""
    letter = re.compile("[a-z]", re.IGNORECASE)
    for cp in range(sys.maxunicode + 1):
        c = chr(cp)
        if letter.fullmatch(c):
            lower = next(a for a in "abcdefghijklmnopqrstuvwxyz" if re.fullmatch(a, c, re.I))
            assert latin_key(c) == ("u" if lower == "v" else lower), hex(cp)


def test_a_region_of_any_type_is_found_and_the_callers_place_is_returned() -> None:
    """A tool result's region may be an object or a list (``{"name": "Guangdong"}``): it plays
    no part in the search, and each mention carries the caller's own place."""
    for region in ({"name": "Guangdong"}, ["Guangdong"], 6, 6.0):
        place = PlaceSpec("Guangzhou", region)
        (m,) = find_mentions("It is 31°C in Guangzhou.", [place])
        assert m.place is place and (m.start, m.end) == (14, 23)
