"""Tool values: every number in an episode's tool messages with its unit, field (JSON path), day
and place.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeGuard

from toolreplay.judging.units import unit_named
from toolreplay.judging.values import find_measured_values, value_text
from toolreplay.judging.vocabulary import Vocabulary, resolve
from toolreplay.wire.tool_results import read_tool_result


class ToolPlace(Mapping[str, Any]):
    """The place a tool result is about: the result's place object as a read-only mapping,
    with its ``name`` and ``region`` read under the vocabulary's ``place_name`` and
    ``place_region`` keys. Equal to any mapping with the same items. ``weak``: named only by
    what the call asked for or a field of a result without a place object, so it grounds a
    value stated for any place, and is an asked place only when named like it."""

    def __init__(
        self,
        data: Mapping[str, Any],
        name_key: str,
        region_key: str,
        alternate_keys: tuple[str, ...] = (),
        context_keys: tuple[str, ...] = (),
        *,
        weak: bool = False,
    ) -> None:
        self.weak = weak
        self._data = data
        self._keys = (name_key, region_key)
        self._more = (alternate_keys, context_keys)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"ToolPlace({dict(self._data)!r})"

    @property
    def name(self) -> str:
        """The place's name (``""`` when the result gives none)."""
        return str(self._data.get(self._keys[0], ""))

    @property
    def regionless(self) -> bool:
        """True for a place the result gives no region key for (an entity, or a place named
        only by a field or an argument: :attr:`Vocabulary.place_arguments`)."""
        return not self._keys[1]

    @property
    def region(self) -> Any:
        """The place's region (``admin1`` in Open-Meteo); None when the result gives none."""
        return self._data.get(self._keys[1])

    @cached_property
    def alternates(self) -> tuple[str, ...]:
        """The place's other names as the result gives them under the vocabulary's
        ``place_alternates`` keys: a list of strings or of objects with a ``name`` (GeoNames'
        ``alternateNames``), a comma-separated string (a GeoNames dump's ``alternatenames``)
        or an object of names (Nominatim's ``namedetails``: ``{"name:en": "Shanghai"}``)."""
        out: list[str] = []
        for k in self._more[0]:
            out += _names_in(self._data.get(k))
        return tuple(dict.fromkeys(n for n in out if n and n != self.name))

    @property
    def regions(self) -> tuple[str, ...]:
        """The names of what the place is in (its region, and the strings under the
        vocabulary's ``place_context`` keys: ``country``, ``admin2``...): an answer naming them
        (``Beijing, China``) names no other place."""
        keys = (self._keys[1], *self._more[1]) if self._keys[1] else self._more[1]
        out = [str(self._data[k]) for k in keys if isinstance(self._data.get(k), str)]
        return tuple(dict.fromkeys(n for n in out if n.strip()))

    @property
    def text(self) -> str:
        """``"name (region)"``, ``?`` for a missing region; ``name`` alone for an entity (a
        place of no region key, e.g. a SKU)."""
        if not self._keys[1]:
            return str(self._data.get(self._keys[0]))
        return f"{self._data.get(self._keys[0])} ({self._data.get(self._keys[1], '?')})"


def _names_in(node: Any) -> list[str]:
    if isinstance(node, str):
        return [n.strip() for n in node.split(",")]
    if isinstance(node, Mapping):
        if isinstance(node.get("name"), str) and not any(str(k).startswith("name:") for k in node):
            return [node["name"]]  # GeoNames: {"name": "廣州", "lang": "zh-TW"}
        return [v for v in node.values() if isinstance(v, str)]  # {"name": …, "name:en": …}
    if isinstance(node, list):
        return [n for item in node[:200] for n in _names_in(item)]
    return []


@dataclass(frozen=True)
class ToolValue:
    """A measured value in a tool message: ``value`` in ``unit`` (as the tool wrote it),
    ``message_index`` into the transcript, the JSON ``path`` (``$`` for plain text), the
    ``day`` it is about (0 today, 1 tomorrow; None when the result does not say) and the
    ``place`` (a :class:`ToolPlace`; None when unknown)."""

    value: float
    unit: str
    kind: str
    message_index: int
    path: str
    day: int | None = None
    place: ToolPlace | None = None
    unitless: bool = False  # a call's whole result, a number with no unit: read in each

    @property
    def text(self) -> str:
        return value_text(self.value, self.unit)

    @property
    def field(self) -> str:
        """The last key of :attr:`path` (``temperature_2m_max``)."""
        return re.split(r"[.\[]", self.path)[-1].rstrip("]")

    @property
    def place_text(self) -> str | None:
        """``"name (region)"`` of :attr:`place`; None when unknown."""
        return self.place.text if self.place is not None else None

    def describe(self) -> str:
        """``30.9°C at $.current.temperature_2m of tool message 3 (北京 (北京市), today)``."""
        bits = [b for b in (self.place_text, DAY_WORDS.get(self.day)) if b]
        where = f" ({', '.join(bits)})" if bits else ""
        said = self.text
        if self.unitless:
            said = f"{self.value:g} (no unit given, read as {self.unit})"
        return f"{said} at {self.path} of tool message {self.message_index}{where}"


#: Words for a forecast day offset (0 is today), as explanations and evidence name the day.
DAY_WORDS: dict[int | None, str] = {0: "today", 1: "tomorrow", 2: "the day after tomorrow"}


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _walk(
    node: Any,
    key: str,
    path: str,
    day: int | None,
    vocab: Vocabulary,
    beside: Mapping[str, str] | None = None,
) -> Iterator[tuple[float, str, str, int | None]]:
    if isinstance(node, Mapping):
        value_key, unit_key = vocab.value_keys
        value, unit = node.get(value_key), node.get(unit_key)
        if _is_number(value) and isinstance(unit, str):
            yield float(value), unit, path, day
            return
        units = {**(beside or {}), **_sibling_units(node, vocab)}  # the nearest unit field
        for k, v in node.items():
            child = f"{path}.{k}"
            yield from _walk(v, str(k), child, vocab.day_keys.get(child, day), vocab, units)
    elif isinstance(node, list):
        for n, item in enumerate(node):
            d = n if (path in vocab.day_lists and day is None) else day
            yield from _walk(item, key, f"{path}[{n}]", d, vocab, beside)
    elif isinstance(node, str) and any(c.isdigit() for c in node):
        k = key.lower()
        if k in vocab.ignored_keys or k.endswith(vocab.ignored_suffixes):
            return
        if node.lstrip()[:1] in ("{", "["):  # JSON (or a Python literal) inside a string
            nested = read_tool_result(node)
            if isinstance(nested, Mapping | list):
                yield from _walk(nested, key, path, day, vocab, beside)
                return
        if _BARE_NUMBER.fullmatch(node):  # {"temperature": "75"}: a number kept as a string
            number = float(node.strip().replace("\u2212", "-"))
            if math.isfinite(number):
                yield from _bare(number, key, path, day, vocab, beside)
            return
        for mv in find_measured_values(node, vocabulary=vocab):  # text: "12 units on hand"
            yield mv.value, mv.unit, path, day
    elif _is_number(node):
        yield from _bare(float(node), key, path, day, vocab, beside)


#: A string that is a number alone (``"75"``, ``"-3.5"``, ``"−3"``).
_BARE_NUMBER = re.compile(r"\s*[-+\u2212]?\d+(?:\.\d+)?\s*")


def _bare(
    number: float,
    key: str,
    path: str,
    day: int | None,
    vocab: Vocabulary,
    beside: Mapping[str, str] | None,
) -> Iterator[tuple[float, str, str, int | None]]:
    """A bare number's unit: the vocabulary's ``path_units``, else the unit its key names
    (``key_units``, then ``key_tokens``), in the unit a word of the key (a unit letter,
    ``key_unit_words``) or a ``unit`` field beside it or above it (``beside``) names when it
    is of a kind the key names (``{"temperature": 65, "unit": "fahrenheit"}``, ``temp_F``,
    ``tempC``, ``windspeedMiles``, ``WindChillC``, ``units=imperial``); with none named, a
    number beyond the key unit's ``bare_above`` level is in the unit it gives (282.55 under
    ``temp``: kelvin)."""
    declared = _path_unit(path, vocab)
    if declared is not None:
        yield number, declared, path, day
        return
    k = key.lower()
    if k in vocab.ignored_keys or k.endswith(vocab.ignored_suffixes):
        return
    tokens = _key_tokens(key)
    named = [u for word, u in vocab.key_units if word in k]
    named += [u for t in tokens for word, u in vocab.key_tokens if t.endswith(word)]
    first = unit_named(named[0], vocab.units) if named else None
    if first is None:
        return
    if vocab.ignored_words.intersection(tokens) and (
        not vocab.ignored_words_kinds or first.kind in vocab.ignored_words_kinds
    ):
        return  # wind_deg, winddirDegree: a direction; temp_deg_c stays a temperature
    spelt = dict(vocab.key_unit_words)
    lettered = [t.upper() if len(t) == 1 else spelt.get(t, t) for t in tokens[1:]]
    said_units = [(said, unit_named(said, vocab.units)) for said in lettered]
    said_units += [(said, unit_named(said, vocab.units)) for said in (beside or {}).values()]
    # the unit of the key's own kind (the first it names: windchill is a temperature), an
    # explicit one before a bare degree (tempDegreeF: °F)
    fits = [(said, u) for said, u in said_units if u is not None and u.kind == first.kind]
    for said, _ in sorted(fits, key=lambda f: not f[1].explicit):
        yield number, said, path, day
        return
    yield number, _beyond(number, named[0], vocab), path, day


def _beyond(number: float, unit: str, vocab: Vocabulary) -> str:
    """``unit``, or the unit :attr:`Vocabulary.bare_above` gives a number above its level."""
    above = (u for named, level, u in vocab.bare_above if named == unit and number > level)
    return next(above, unit)


def _key_tokens(key: str) -> list[str]:
    """``maxtempC`` → ``["maxtemp", "c"]``, ``temp_F`` → ``["temp", "f"]``."""
    return re.findall(r"[a-z]+|\d+", re.sub(r"([a-z])([A-Z])", r"\1_\2", key).lower())


def _sibling_units(node: Mapping[str, Any], vocab: Vocabulary) -> dict[str, str]:
    """The units an object's ``unit``-named string fields give its bare numbers (``{"unit":
    "fahrenheit"}``; ``temperature_unit``, ``units``; a system of units, ``"metric"``, as
    the vocabulary's ``unit_systems`` read it): key → unit text; empty for none."""
    _, unit_key = vocab.value_keys
    systems = dict(vocab.unit_systems)
    out = {}
    for k, v in node.items():
        name = str(k).lower()
        if isinstance(v, str) and (name.endswith(unit_key) or name.endswith(unit_key + "s")):
            said = systems.get(v.strip().lower(), v)
            if unit_named(said, vocab.units) is not None:
                out[name] = said
    return out


@functools.lru_cache(maxsize=16)
def _path_patterns(vocab: Vocabulary) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(p), unit) for p, unit in vocab.path_units)


def _path_unit(path: str, vocab: Vocabulary) -> str | None:
    """The unit a vocabulary's ``path_units`` give a bare number at ``path`` (None: none)."""
    if not vocab.path_units:
        return None
    return next((u for p, u in _path_patterns(vocab) if p.fullmatch(path)), None)


def _calls_by_id(transcript: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, Any]]:
    out: dict[str, tuple[str, Any]] = {}
    for m in transcript:
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = None
            out[str(tc.get("id"))] = (str(fn.get("name")), args)
    return out


def _candidates(payload: Any, keys: frozenset[str]) -> list[Mapping[str, Any]]:
    if isinstance(payload, Mapping):
        found = [payload] if keys <= set(payload) else []
        for v in payload.values():
            found += _candidates(v, keys)
        return found
    if isinstance(payload, list):
        return [c for item in payload for c in _candidates(item, keys)]
    return []


#: tool_values of recent transcripts, by object and vocabulary: the judge, the classifier and
#: the audit read the same episode's tool values many times. Only tuples (an episode's
#: transcript, never changed after the episode is made) are kept, each with the transcript and
#: vocabulary themselves so that their ids cannot be reused; at most _TOOL_VALUES_KEPT, oldest
#: dropped first.
_TOOL_VALUES: dict[
    tuple[int, int], tuple[Sequence[Mapping[str, Any]], Vocabulary, tuple[ToolValue, ...]]
] = {}


_TOOL_VALUES_KEPT = 4096


def tool_values(
    transcript: Sequence[Mapping[str, Any]], vocabulary: Vocabulary | None = None
) -> tuple[ToolValue, ...]:
    """Every measured value in the transcript's tool messages (OpenAI chat-format dicts), with
    field, day and place, read with ``vocabulary`` (None: the default study's).

    JSON content: ``{"value": 30.9, "unit": "°C"}`` objects (the vocabulary's ``value_keys``),
    and bare numbers whose key names what they measure (its ``key_units``: ``temperature``,
    ``precipitation``, ``humidity``, ``wind``...); numbers under its ``ignored_keys`` (and
    ``ignored_suffixes``) never count. The day comes from the vocabulary's ``day_keys`` and
    ``day_lists``, the place from its ``place_key`` or, for a call with coordinates, the
    candidate (under ``candidates_key`` in an earlier result) at those coordinates.
    Plain-text content is read with :func:`scan` (day and place unknown), and so is the text
    of a string field (``{"result": "12 units on hand"}``); a string field holding JSON
    (``{"SerializedResult": "{\\"on_hand\\": 12}"}``) is read as that JSON. Units are read with
    all of the vocabulary's units: what a tool returned does not depend on the judge."""
    vocab = resolve(vocabulary)
    if not isinstance(transcript, tuple):
        return _tool_values(transcript, vocab)
    key = (id(transcript), id(vocab))
    hit = _TOOL_VALUES.get(key)
    if hit is not None and hit[0] is transcript and hit[1] is vocab:
        return hit[2]
    values = _tool_values(transcript, vocab)
    if len(_TOOL_VALUES) >= _TOOL_VALUES_KEPT:
        _TOOL_VALUES.pop(next(iter(_TOOL_VALUES)), None)
    _TOOL_VALUES[key] = (transcript, vocab, values)
    return values


def _tool_values(
    transcript: Sequence[Mapping[str, Any]], vocab: Vocabulary
) -> tuple[ToolValue, ...]:
    lat_key, lon_key = vocab.coordinate_keys
    candidate_keys = frozenset({lat_key, lon_key, vocab.place_name})
    calls = _calls_by_id(transcript)
    geocoded: list[Mapping[str, Any]] = []
    found: list[ToolValue] = []
    for index, message in enumerate(transcript):
        if message.get("role") != "tool":
            continue
        content = message.get("content")
        if not isinstance(content, str):
            continue
        payload = read_tool_result(content)  # JSON, a Python literal, key: value lines
        name, args = calls.get(str(message.get("tool_call_id")), ("", None))
        if _is_number(payload) and _path_unit("$", vocab) is None:  # '20.0': get_temperature
            named = _named_place(None, args, vocab)
            found += (ToolValue(float(payload), u, k, index, "$", None, named, True)
                      for u, k in _scalar_units(name, vocab))  # fmt: skip
            continue
        if payload is None:
            named = _named_place(None, args, vocab)
            for mv in find_measured_values(content, vocabulary=vocab):
                found.append(ToolValue(mv.value, mv.unit, mv.kind, index, "$", None, named))
            continue
        raw: Mapping[str, Any] | None = None
        place_key, candidates_key = vocab.place_key, vocab.candidates_key
        if (
            place_key is not None
            and isinstance(payload, Mapping)
            and isinstance(payload.get(place_key), Mapping)
        ):
            raw = payload[place_key]
        elif isinstance(args, Mapping) and lat_key in args and lon_key in args:
            raw = _place_at(geocoded, args, vocab.coordinate_keys)
        region_key = vocab.place_region
        if raw is None and isinstance(payload, Mapping):
            entity = next(
                (payload[k] for k in vocab.entity_keys if isinstance(payload.get(k), str)), None
            )
            raw, region_key = (None, region_key) if entity is None else ({"name": entity}, "")
        if raw is None:
            named = _named_place(payload, args, vocab)
            raw, region_key = (None, region_key) if named is None else (named, "")
        if candidates_key and isinstance(payload, Mapping) and candidates_key in payload:
            geocoded += _candidates(payload.get(candidates_key), candidate_keys)
        name_key = vocab.place_name if region_key else "name"
        place = (
            raw
            if isinstance(raw, ToolPlace) or raw is None
            else ToolPlace(
                raw, name_key, region_key, vocab.place_alternates,
                vocab.place_context if region_key else (),
            )
        )  # fmt: skip
        asked = _sibling_units(args, vocab) if isinstance(args, Mapping) else None
        for value, unit_text, path, day in _walk(payload, "", "$", None, vocab, asked):
            unit = unit_named(unit_text, vocab.units)
            if unit is None:
                continue
            found.append(ToolValue(value, unit_text, unit.kind, index, path, day, place))
    return tuple(found)


def _scalar_units(tool: str, vocab: Vocabulary) -> list[tuple[str, str]]:
    """``(unit, kind)`` a call's result that is one number with no unit may be in: every
    scale of the kind the tool's name names (``get_temperature``: °C, °F, K), or of every
    kind when it names none; each scale once, by its first explicit unit not spelt in CJK.
    (A declared measure's field ``$`` gives such a result its unit instead.)"""
    named = [u for _, u, _, _ in _bare(0.0, tool, "$", None, vocab, None)]
    kinds = {found.kind for found in (unit_named(u, vocab.units) for u in named) if found}
    seen: set[tuple[str, float, float]] = set()
    out = []
    for u in vocab.units:
        scale = (u.kind, round(u.scale, 9), round(u.offset, 9))
        if (kinds and u.kind not in kinds) or not u.explicit or scale in seen:
            continue
        if re.match(r"[\u3000-\u9fff]", u.name):
            continue
        seen.add(scale)
        out.append((u.name, u.kind))
    return out


def _place_names(node: Any, pattern: str) -> list[str]:
    if not isinstance(node, Mapping):
        return []
    return [
        v.strip() for k, v in node.items()
        if isinstance(v, str) and _PLACE_LIKE.fullmatch(v.strip())
        and re.fullmatch(pattern, str(k).lower())
    ]  # fmt: skip


#: A value that may be a place's name: no digits (not coordinates, a station code or an id),
#: no underscore (not a tool's name), at most six words (Salt Lake City, Utah, United States).
_PLACE_LIKE = re.compile(r"[^\d_\s,]+(?:[\s,]+[^\d_\s,]+){0,5}")


def _named_place(payload: Any, args: Any, vocab: Vocabulary) -> ToolPlace | None:
    """The place a result without a place object is about (:attr:`Vocabulary.place_arguments`):
    the one name its top-level fields give, else the one name its call's arguments give; a
    place without a region, and ``weak``: named by what was asked for, it never makes a
    value another place's (the judge takes its values as any place's unless its name is an
    asked place's). None when there is no such name, or several."""
    if not vocab.place_arguments:
        return None
    for node in (payload, args):
        names = list(dict.fromkeys(_place_names(node, vocab.place_arguments)))
        if len(names) == 1:
            return ToolPlace({"name": names[0]}, "name", "", weak=True)
        if names:
            return None
    return None


def _place_at(
    candidates: Sequence[Mapping[str, Any]], args: Mapping[str, Any], keys: tuple[str, str]
) -> Mapping[str, Any] | None:
    lat_key, lon_key = keys
    try:
        lat, lon = float(args[lat_key]), float(args[lon_key])
    except (TypeError, ValueError):
        return None
    for c in candidates:
        try:
            if abs(float(c[lat_key]) - lat) <= 0.01 and abs(float(c[lon_key]) - lon) <= 0.01:
                return c
        except (TypeError, ValueError, KeyError):
            continue
    return None
