"""Declared measures into the judge's vocabulary: one mechanism for a study's measures and an
eval file's.

A :class:`~toolreplay.evals.MeasureDeclaration` (name, units with conversions, the words
that mark its values, the tool-result fields that hold them) becomes what the judge reads with:

- each unit a :class:`~toolreplay.judging.vocabulary.Unit` of the measure's own kind (the
  measure's name), its spellings after a number (literal, case-insensitive, whole words for
  Latin letters), its ``before`` spellings vocabulary ``prefix_units`` (``€12.50``,
  ``EUR 12.50``), converted to the first unit by ``scale`` and ``offset``;
- the measure a :class:`~toolreplay.judging.vocabulary.Measure` answered by that kind, with
  ``words`` as its clause context;
- each field a ``path_units`` entry: a bare number at a matching JSON path of a tool result is
  a value in the measure's first unit (a unit's own ``fields``: in that unit);
- each ``entity`` key an ``entity_keys`` entry: what a result without a place is about;
- its ``plausible`` ranges (per unit kind, in the kind's first unit): :func:`plausible` gives
  them for the vocabulary built (what :mod:`toolreplay.judging.bounds` decides with).

:func:`declared_vocabulary` adds declarations to a vocabulary (the study's, so an eval file
extends what its study judges); :func:`measure_vocabulary` builds a vocabulary from
declarations alone. The same declarations give the same object (the engine caches what it
compiles per vocabulary object).
"""

from __future__ import annotations

import functools
import math
import re
import weakref
from collections.abc import Sequence
from dataclasses import replace

from toolreplay.evals import MeasureDeclaration, UnitDeclaration, field_pattern
from toolreplay.judging.vocabulary import Measure, Unit, Vocabulary


def spelling_pattern(text: str) -> str:
    """The regex of a literal spelling: escaped, whole-word where it starts or ends with a
    Latin letter or digit (``units`` is not read in ``unitsx``; ``件`` anywhere)."""
    body = re.escape(text.strip())
    head = r"(?<![a-z])" if re.match(r"[a-z0-9]", text.strip(), re.IGNORECASE) else ""
    tail = r"(?![a-z])" if re.search(r"[a-z0-9]$", text.strip(), re.IGNORECASE) else ""
    return head + body + tail


def _after_pattern(unit: UnitDeclaration) -> str:
    spellings = dict.fromkeys((unit.name, *unit.spellings))  # the name first, no repeats
    # longest first, so "units" wins over "unit"
    ordered = sorted((s for s in spellings if s.strip()), key=len, reverse=True)
    return "|".join(spelling_pattern(s).removeprefix(r"(?<![a-z])") for s in ordered)


def declared_units(declaration: MeasureDeclaration) -> tuple[Unit, ...]:
    """The measure's units, of kind ``declaration.name`` (or the unit's own ``kind``)."""
    return tuple(
        Unit(
            u.name,
            u.pattern if u.pattern is not None else _after_pattern(u),
            u.kind or declaration.name,
            u.scale,
            u.offset,
            u.explicit,
            u.readings,
            u.plausible,
        )
        for u in declaration.units
    )


def declared_measure(declaration: MeasureDeclaration) -> Measure:
    """The measure, answered by the kinds of its units (or its ``kinds``); ``words`` the
    clause context of its own kind (none: any), ``context`` that of other kinds."""
    d = declaration
    words = "|".join(spelling_pattern(w) for w in d.words if w.strip())
    context = {**d.context, **({d.name: words} if words else {})}
    kinds = frozenset(d.kinds or {u.kind or d.name for u in d.units})
    return Measure(d.name, kinds, context=context, fields=dict(d.value_fields), compare=d.compare)


def _prefixes(declaration: MeasureDeclaration) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for u in declaration.units:
        if u.before_pattern is not None:
            out.append((u.before_pattern, u.name))
        out += [(spelling_pattern(s), u.name) for s in u.before if s.strip()]
    return tuple(out)


def _paths(declaration: MeasureDeclaration) -> tuple[tuple[str, str], ...]:
    """A unit's own fields (in that unit) first, then the measure's (in its first unit)."""
    if not declaration.units:
        return ()
    first = declaration.units[0].name
    own = tuple((field_pattern(f), u.name) for u in declaration.units for f in u.fields)
    return (*own, *((field_pattern(f), first) for f in declaration.fields))


#: The plausible ranges of each vocabulary built here, by unit kind (a Vocabulary compares and
#: hashes by identity and cannot carry them itself).
_PLAUSIBLE: weakref.WeakKeyDictionary[Vocabulary, dict[str, tuple[float, float]]] = (
    weakref.WeakKeyDictionary()
)


def plausible(vocabulary: Vocabulary, kind: str) -> tuple[float, float]:
    """The ``(low, high)`` a value of unit kind ``kind`` can plausibly take, in the kind's
    canonical unit, as the measures of ``vocabulary`` declare it (``plausible``); ``(-inf,
    inf)`` when none does."""
    return _PLAUSIBLE.get(vocabulary, {}).get(kind, (-math.inf, math.inf))


@functools.lru_cache(maxsize=64)
def declared_vocabulary(
    base: Vocabulary, declarations: tuple[MeasureDeclaration, ...]
) -> Vocabulary:
    """``base`` with ``declarations`` added (their units before the base's, their measures,
    prefixes and fields after); ``base`` itself when there are none. A declaration named like
    one of the base's measures replaces it. One object per (base, declarations)."""
    if not declarations:
        return base
    names = {d.name for d in declarations}
    built = replace(
        base,
        name=base.name,
        units=(*(u for d in declarations for u in declared_units(d)), *base.units),
        measures=(
            *(m for m in base.measures if m.name not in names),
            *(declared_measure(d) for d in declarations),
        ),
        prefix_units=(*base.prefix_units, *(p for d in declarations for p in _prefixes(d))),
        path_units=(*(p for d in declarations for p in _paths(d)), *base.path_units),
        entity_keys=tuple(
            dict.fromkeys((*base.entity_keys, *(k for d in declarations for k in d.entity)))
        ),
    )
    ranges = dict(_PLAUSIBLE.get(base, {}))
    for d in declarations:
        ranges.update({k: (float(lo), float(hi)) for k, (lo, hi) in d.plausible.items()})
    _PLAUSIBLE[built] = ranges
    return built


#: An empty vocabulary: no units, no measures; the base of :func:`measure_vocabulary`.
EMPTY = Vocabulary(name="declared", units=(), measures=())


def measure_vocabulary(
    declarations: Sequence[MeasureDeclaration], name: str = "declared"
) -> Vocabulary:
    """A vocabulary of ``declarations`` alone (no study's units, day or place words), named
    ``name``. One object per (declarations, name)."""
    base = EMPTY if name == EMPTY.name else _named_empty(name)
    return declared_vocabulary(base, tuple(declarations))


@functools.lru_cache(maxsize=16)
def _named_empty(name: str) -> Vocabulary:
    return replace(EMPTY, name=name)


__all__ = [
    "EMPTY", "declared_measure", "declared_units", "declared_vocabulary", "measure_vocabulary",
    "plausible", "spelling_pattern",
]  # fmt: skip
