"""Measures an eval file declares (``measures:``): data, and their YAML boundary.

Shapes::

    MeasureDeclaration(name, units: tuple[UnitDeclaration, ...], words, fields, entity)
    UnitDeclaration(name, spellings, before=(), scale=1.0, offset=0.0, fields=())

Turned into the judge's vocabulary by :mod:`toolreplay.judging.measures`; a study declares its
own measures with the same classes (:mod:`toolreplay.study.weather.vocabulary`).

Errors: :func:`parse_measures` raises :class:`~toolreplay.evals.boundary.DeclarationError`
(one line naming ``measures.N`` and what is wrong); the eval loader adds the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from toolreplay.evals.boundary import STRICT, DeclarationError, first_error


class _Strict(BaseModel):
    model_config = STRICT


@dataclass(frozen=True)
class UnitDeclaration:
    """A unit of a declared measure: ``name`` (as shown in evidence, and as a tool result's
    ``unit`` string spells it), the ``spellings`` written right after a number (literal text,
    case-insensitive, whole words for Latin letters; the name is always one), the spellings
    written ``before`` a number (``€``, ``EUR``, ``$``), and the conversion to the measure's
    first unit: ``first = value * scale + offset``, and the ``fields`` of tool results whose
    bare numbers are in this unit (``$.price_cents`` for ``cents``; the measure's own
    ``fields`` are in its first unit).

    What a study spells in regexes (Python only, not in eval files): ``pattern`` replaces the
    spellings (a regex matched right after the number, e.g. ``°\\s?(?-i:F)``),
    ``before_pattern`` the before-spellings; ``kind`` puts the unit in another kind than the
    measure's own (a percentage answering precipitation); ``explicit=False`` marks a unit that
    can also be a coordinate's degrees (a bare ``°``), ``readings`` the names of the other
    units a number in it may be in (a bare ``degrees`` may be °F), ``plausible`` the numbers
    its spelling can state (:class:`toolreplay.judging.vocabulary.Unit`: a ``K`` set apart
    is kelvin only from 150 to 350)."""

    name: str
    spellings: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    scale: float = 1.0
    offset: float = 0.0
    pattern: str | None = None
    before_pattern: str | None = None
    kind: str | None = None
    explicit: bool = True
    fields: tuple[str, ...] = ()
    readings: tuple[str, ...] = ()
    plausible: tuple[float, float] | None = None


@dataclass(frozen=True)
class MeasureDeclaration:
    """A measure declared in an eval file (``measures:``), judged like the study's own:
    ``name`` (what a question's ``measure:`` names), its ``units`` (the first one canonical),
    ``words`` that must occur in the value's clause, before or just after it, for a value to
    answer the measure (none: any value in its units), and ``fields``: JSONPath-like keys of
    tool results whose bare numbers are values of the measure in its first unit (``$.on_hand``,
    ``$.items[*].qty``, ``on_hand`` at any depth, ``*`` within a key; a
    ``{"value": 12, "unit": "units"}`` object counts wherever it is). ``entity``: top-level
    keys of a tool result whose string value names what its values are about (``sku``), so
    that an answer giving another entity's value than the question's ``entities`` is a wrong
    place (entity).

    What a study declares beyond that (Python only): ``kinds``, the unit kinds that answer the
    measure when it has no units of its own (a comparison of temperatures); ``context``, per
    unit kind a regex of the clause words its values need (as ``words``, for another kind);
    ``value_fields``, per unit kind a regex the grounding tool value's last key must match (a
    percentage answers rain only as a ``probability``); ``compare``, a
    :class:`toolreplay.judging.vocabulary.Comparison` that makes it a comparison of places."""

    name: str
    units: tuple[UnitDeclaration, ...]
    words: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    entity: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    context: Mapping[str, str] = field(default_factory=dict, hash=False)
    value_fields: Mapping[str, str] = field(default_factory=dict, hash=False)
    compare: Any = None
    #: per unit kind, the ``(low, high)`` a value can plausibly take, in the kind's first unit
    #: (YAML ``plausible: [low, high]``: the measure's own kind); what decides whether a bound
    #: or a range says something (:mod:`toolreplay.judging.bounds`)
    plausible: Mapping[str, tuple[float, float]] = field(default_factory=dict, hash=False)


def field_pattern(path: str) -> str:
    """The regex (full match) of the tool-value JSON paths (``$.items[0].qty``) a declared
    field (``$.items[*].qty``, ``qty``, ``*_on_hand``) stands for."""
    anchored = path.startswith("$")
    body = path[1:] if anchored else "." + path.lstrip(".")
    out = []
    for part in re.split(r"(\[\*\]|\*)", body):
        if part == "[*]":
            out.append(r"\[\d+\]")
        elif part == "*":
            out.append(r"[^.\[\]]*")
        else:
            out.append(re.escape(part))
    return (r"\$" if anchored else r"\$(?:.*)?") + "".join(out)


# ---- boundary models -----------------------------------------------------------------------


#: A union branch's name as pydantic shows it in an error's location (not a place in the file).
_BRANCHES = ("_UnitModel",)


class _UnitModel(_Strict):
    name: str = Field(min_length=1)
    spellings: list[str] = []
    before: list[str] = []
    scale: float = Field(default=1.0, allow_inf_nan=False)
    offset: float = Field(default=0.0, allow_inf_nan=False)
    fields: list[str] = []

    @field_validator("scale")
    @classmethod
    def _nonzero(cls, value: float) -> float:
        if value == 0:
            raise ValueError("scale must not be 0")
        return value


class _MeasureModel(_Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    units: list[_UnitModel | str] = Field(min_length=1)
    words: list[str] = []
    fields: list[str] = []
    entity: list[str] | str = []
    plausible: tuple[float, float] | None = None

    @field_validator("plausible")
    @classmethod
    def _ordered(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and not value[0] < value[1]:
            raise ValueError("plausible must be [low, high] with low < high")
        return value


def parse_measures(raw: Any, where: str = "measures") -> tuple[MeasureDeclaration, ...]:
    """Measure declarations from their YAML form, a list of
    ``{name, units: [NAME | {name, spellings, before, scale, offset, fields}], words, fields,
    entity, plausible: [low, high]}``.
    Raises :class:`DeclarationError` (one line, naming ``where.N``) for a bad one or a name
    declared twice."""
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise DeclarationError(f"{where}: a list of measures, got {raw!r}")
    out: list[MeasureDeclaration] = []
    for i, item in enumerate(raw):
        try:
            m = _MeasureModel.model_validate(item)
        except ValidationError as exc:
            raise DeclarationError(f"{where}.{i}: {first_error(exc, _BRANCHES)}") from None
        if any(d.name == m.name for d in out):
            raise DeclarationError(f"{where}.{i}: measure {m.name!r} declared twice")
        units = tuple(
            UnitDeclaration(u)
            if isinstance(u, str)
            else UnitDeclaration(
                u.name,
                tuple(u.spellings),
                tuple(u.before),
                u.scale,
                u.offset,
                fields=tuple(u.fields),
            )
            for u in m.units
        )
        entity = (m.entity,) if isinstance(m.entity, str) else tuple(m.entity)
        plausible = {m.name: m.plausible} if m.plausible is not None else {}
        out.append(
            MeasureDeclaration(
                m.name, units, tuple(m.words), tuple(m.fields), entity, plausible=plausible
            )
        )
    return tuple(out)


__all__ = ["MeasureDeclaration", "UnitDeclaration", "field_pattern", "parse_measures"]
