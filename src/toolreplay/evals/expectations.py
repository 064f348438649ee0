"""Expectations of an episode (``expect:``, eval-wide and per question): data, and their YAML
boundary.

Data only (frozen dataclasses), read from YAML through pydantic models at the boundary
(:func:`parse_expectations`); checked by :mod:`toolreplay.judging.expectations`. "Expectation"
means these and only these. Shapes::

    ToolCalled(tool, at_least=1)                 tool_called: lookup_sku
    ToolNotCalled(tool)                          tool_not_called: delete_sku
    ToolSequence(tools, mode="exact")            tool_sequence: [a, b]
                                                 tool_sequence: {tools: [a, b], mode: in_order}
    ToolArguments(tool, equals, matches,         tool_arguments: {tool: t, equals: {sku: ABC-1},
                  tolerance=0.0, calls="any")      matches: {sku: "^ABC-"}, tolerance: 0.01}
    MaxRounds(limit)                             max_rounds: 3
    MaxToolCalls(limit)                          max_tool_calls: 4
    StopReason(reasons)                          stop_reason: converged  |  [converged, repeated]
    AnswerContains(texts, case_sensitive=False)  answer_contains: "ABC-1"  |  [a, b]
    AnswerMatches(pattern)                       answer_matches: "\\d+ units"
    AnswerNotContains(texts, case_sensitive=False)
                                                 answer_not_contains: ZZZ-9
    Grounded(measure=None)                       grounded: stock  |  grounded: true (the question's)
    StrictGrounding(measures=())                 strict_grounding: true  |  [stock, price]

Sequence modes (the names of promptfoo's ``trajectory:tool-sequence`` and LangSmith
agentevals' match modes): ``exact`` the same calls in the same order; ``in_order`` the expected
calls in this order, other calls allowed between them; ``any_order`` the same calls (as many of
each) in any order (agentevals ``unordered``); ``subset`` every call made is an expected one
(no other tool, none more often than listed); ``superset`` every expected call is made (others
allowed).

Errors: :class:`~toolreplay.evals.boundary.DeclarationError` (a :class:`ValueError`) with one
line naming where the declaration is (``questions.abc.expect.2``) and what is wrong with it; the
eval loader adds the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, ValidationError, field_validator

from toolreplay.evals.boundary import STRICT, DeclarationError, first_error

SequenceMode = Literal["exact", "in_order", "any_order", "subset", "superset"]
SEQUENCE_MODES: tuple[str, ...] = ("exact", "in_order", "any_order", "subset", "superset")


class _Strict(BaseModel):
    model_config = STRICT


# ---- expectations ------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCalled:
    """The episode calls ``tool`` (executed calls, any round) at least ``at_least`` times."""

    tool: str
    at_least: int = 1
    kind = "tool_called"


@dataclass(frozen=True)
class ToolNotCalled:
    """The episode never calls ``tool`` (neither executed nor left pending)."""

    tool: str
    kind = "tool_not_called"


@dataclass(frozen=True)
class ToolSequence:
    """The tool names of the episode's executed calls, in order, fit ``tools`` by ``mode``
    (one of :data:`SEQUENCE_MODES`, see the module docstring)."""

    tools: tuple[str, ...]
    mode: str = "exact"
    kind = "tool_sequence"


@dataclass(frozen=True)
class ToolArguments:
    """A call of ``tool`` (``calls="any"``: at least one; ``"all"``: every one, and at least
    one) has arguments that hold ``equals`` as a JSON subset (objects: these keys with these
    values, recursively; lists: equal length, item by item; numbers equal within
    ``tolerance``, absolute) and whose fields named in ``matches`` are strings matching the
    regex (``re.search``; a dotted key ``a.b`` reaches into objects)."""

    tool: str
    equals: Mapping[str, Any] = field(default_factory=dict, hash=False)
    matches: Mapping[str, str] = field(default_factory=dict, hash=False)
    tolerance: float = 0.0
    calls: str = "any"
    kind = "tool_arguments"


@dataclass(frozen=True)
class MaxRounds:
    """The episode takes at most ``limit`` rounds (model requests)."""

    limit: int
    kind = "max_rounds"


@dataclass(frozen=True)
class MaxToolCalls:
    """The episode executes at most ``limit`` tool calls."""

    limit: int
    kind = "max_tool_calls"


@dataclass(frozen=True)
class StopReason:
    """The episode's stop reason is one of ``reasons`` (``converged``, ``repeated``,
    ``max_rounds``, ``budget``, ``truncated``, ``filtered``, ``error``, ``unknown``: no finish
    reason named where it would be ``converged``)."""

    reasons: tuple[str, ...]
    kind = "stop_reason"


@dataclass(frozen=True)
class AnswerContains:
    """The final answer contains every one of ``texts`` (case-insensitive unless
    ``case_sensitive``)."""

    texts: tuple[str, ...]
    case_sensitive: bool = False
    kind = "answer_contains"


@dataclass(frozen=True)
class AnswerMatches:
    """The final answer matches the regex ``pattern`` (``re.search``)."""

    pattern: str
    kind = "answer_matches"


@dataclass(frozen=True)
class AnswerNotContains:
    """The final answer contains none of ``texts`` (case-insensitive unless
    ``case_sensitive``)."""

    texts: tuple[str, ...]
    case_sensitive: bool = False
    kind = "answer_not_contains"


@dataclass(frozen=True)
class Grounded:
    """The grounded judge passes the answer for ``measure`` (None: the question's measure):
    it states a value of the measure that a tool result holds, and no value no tool result
    holds."""

    measure: str | None = None
    kind = "grounded"


@dataclass(frozen=True)
class StrictGrounding:
    """Every value the answer states with a unit of ``measures`` (empty: of any measure the
    judge's vocabulary knows) is grounded in a tool result of the episode: an invented
    "ZZZ-9: 99 units" fails it."""

    measures: tuple[str, ...] = ()
    kind = "strict_grounding"


EpisodeExpectation = (
    ToolCalled | ToolNotCalled | ToolSequence | ToolArguments | MaxRounds | MaxToolCalls
    | StopReason | AnswerContains | AnswerMatches | AnswerNotContains | Grounded
    | StrictGrounding
)  # fmt: skip


# ---- boundary models -----------------------------------------------------------------------


_Name = Field(min_length=1)


def _no_bool(value: Any) -> Any:
    """A count given as ``true``/``false`` is refused (pydantic would read it as 1 or 0)."""
    if isinstance(value, bool):
        raise ValueError(f"a whole number, not {str(value).lower()}")
    return value


_Count = Annotated[int, BeforeValidator(_no_bool)]
_Text = Annotated[str, Field(min_length=1)]


class _ToolCalledModel(_Strict):
    tool: str = _Name
    at_least: _Count = Field(default=1, ge=1)


class _ToolNotCalledModel(_Strict):
    tool: str = _Name


class _ToolSequenceModel(_Strict):
    tools: list[str] = Field(min_length=1)
    mode: SequenceMode = "exact"


class _ToolArgumentsModel(_Strict):
    tool: str = _Name
    equals: dict[str, Any] = {}
    matches: dict[str, str] = {}
    tolerance: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    calls: Literal["any", "all"] = "any"

    @field_validator("matches")
    @classmethod
    def _regexes(cls, value: dict[str, str]) -> dict[str, str]:
        for key, pattern in value.items():
            _check_regex(pattern, key)
        return value


class _LimitModel(_Strict):
    limit: _Count = Field(ge=0)


class _StopReasonModel(_Strict):
    reasons: list[
        Literal[
            "converged", "repeated", "max_rounds", "budget", "truncated", "filtered", "error",
            "unknown",
        ]
    ] = Field(min_length=1)


class _TextsModel(_Strict):
    texts: list[_Text] = Field(min_length=1)  # an empty text is in every answer
    case_sensitive: bool = False


class _PatternModel(_Strict):
    pattern: str = _Name

    @field_validator("pattern")
    @classmethod
    def _regex(cls, value: str) -> str:
        return _check_regex(value)


class _GroundedModel(_Strict):
    measure: str | None = None


class _StrictModel(_Strict):
    measures: list[str] = []


def _check_regex(pattern: str, where: str = "") -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        at = f"{where}: " if where else ""
        raise ValueError(f"{at}not a regular expression ({exc})") from None
    return pattern


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


#: kind → (its model, the field a bare value fills, how to build the dataclass)
_KINDS: dict[str, tuple[type[_Strict], str | None, Any]] = {
    "tool_called": (_ToolCalledModel, "tool", lambda m: ToolCalled(m.tool, m.at_least)),
    "tool_not_called": (_ToolNotCalledModel, "tool", lambda m: ToolNotCalled(m.tool)),
    "tool_sequence": (
        _ToolSequenceModel, "tools", lambda m: ToolSequence(tuple(m.tools), m.mode)
    ),
    "tool_arguments": (
        _ToolArgumentsModel,
        None,
        lambda m: ToolArguments(m.tool, m.equals, m.matches, m.tolerance, m.calls),
    ),
    "max_rounds": (_LimitModel, "limit", lambda m: MaxRounds(m.limit)),
    "max_tool_calls": (_LimitModel, "limit", lambda m: MaxToolCalls(m.limit)),
    "stop_reason": (_StopReasonModel, "reasons", lambda m: StopReason(tuple(m.reasons))),
    "answer_contains": (
        _TextsModel, "texts", lambda m: AnswerContains(tuple(m.texts), m.case_sensitive)
    ),
    "answer_matches": (_PatternModel, "pattern", lambda m: AnswerMatches(m.pattern)),
    "answer_not_contains": (
        _TextsModel, "texts", lambda m: AnswerNotContains(tuple(m.texts), m.case_sensitive)
    ),
    "grounded": (_GroundedModel, "measure", lambda m: Grounded(m.measure)),
    "strict_grounding": (_StrictModel, "measures", lambda m: StrictGrounding(tuple(m.measures))),
}  # fmt: skip

#: Every expectation kind, in the order the docs list them.
EXPECTATION_KINDS: tuple[str, ...] = tuple(_KINDS)


def parse_expectation(raw: Any, where: str = "expect") -> EpisodeExpectation:
    """One expectation from its YAML form: a mapping with exactly one key, the kind, whose
    value is the kind's mapping or its shorthand (``tool_called: lookup_sku``,
    ``max_rounds: 3``, ``grounded: true``). Raises :class:`DeclarationError` naming ``where``."""
    if isinstance(raw, EpisodeExpectation):  # already data
        return raw
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise DeclarationError(
            f"{where}: an expectation is a mapping with one key, its kind (one of "
            f"{', '.join(EXPECTATION_KINDS)}), got {raw!r}"
        )
    [(kind, value)] = raw.items()
    if kind not in _KINDS:
        raise DeclarationError(
            f"{where}: unknown expectation kind {kind!r} (known: {', '.join(EXPECTATION_KINDS)})"
        )
    model, shorthand, build = _KINDS[kind]
    if kind in ("grounded", "strict_grounding") and value is True:
        value = {}
    elif kind == "strict_grounding" and isinstance(value, list) and not value:
        raise DeclarationError(
            f"{where}.{kind}: an empty list names no measure; write true (every measure) or "
            "the measures' names"
        )
    elif kind in ("stop_reason", "answer_contains", "answer_not_contains"):
        value = _listed(value) if not isinstance(value, Mapping) else value
    if not isinstance(value, Mapping):
        if shorthand is None:
            raise DeclarationError(f"{where}.{kind}: needs a mapping (tool, equals, matches...)")
        value = {shorthand: value}
    try:
        expectation: EpisodeExpectation = build(model.model_validate(value))
        return expectation
    except ValidationError as exc:
        raise DeclarationError(f"{where}.{kind}: {first_error(exc)}") from None


def parse_expectations(raw: Any, where: str = "expect") -> tuple[EpisodeExpectation, ...]:
    """A list of expectations (:func:`parse_expectation` each, ``where.N``); None or ``[]``
    gives ``()``. Raises :class:`DeclarationError`."""
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise DeclarationError(f"{where}: a list of expectations, got {raw!r}")
    return tuple(parse_expectation(item, f"{where}.{i}") for i, item in enumerate(raw))


__all__ = [
    "EXPECTATION_KINDS", "SEQUENCE_MODES", "AnswerContains", "AnswerMatches",
    "AnswerNotContains", "DeclarationError", "EpisodeExpectation", "Grounded", "MaxRounds",
    "MaxToolCalls", "StopReason", "StrictGrounding", "ToolArguments", "ToolCalled",
    "ToolNotCalled", "ToolSequence", "parse_expectation", "parse_expectations",
]  # fmt: skip
