"""Values that cannot be checked: an answer's value no tool result holds is a fabrication only
when the episode holds what it should have come from.

Two cases leave nothing to check a value against, and such a value is *not checkable*
(:attr:`~toolreplay.judging.grounding.ValueCheck.checkable` False; ``"grounded": null`` in
``results.json``, "null: not checked"), neither grounded nor fabricated:

- the provider ran a **hosted tool** in the episode (OpenAI's ``web_search_call``, Anthropic's
  ``server_tool_use`` and ``web_search_tool_result``, Gemini's ``groundingMetadata`` of
  ``google_search``...; :mod:`toolreplay.wire.hosted`): its results are not in the recorded
  traffic, or only as citations, so a value no tool result of the transcript holds may come
  from them. Only a hosted tool whose results hold data an answer could quote counts
  (:func:`quotable`): a web or file search, Gemini's ``google_search`` and ``url_context``, a
  fetch, an MCP server's tool, code execution (its output may compute values)... every one but
  those of :data:`NO_DATA` (``image_generation``: it makes an image, no text) and a tool search
  (it finds the program's own tools). And a hosted tool spares only the values it may hold:
  a value the function tools' results **contradict** stays checkable (fabricated when it
  disagrees): one whose answer states it for a day, a place and, for a measure with fields
  (``max``, ``current``...), a field, of which a tool result of the transcript holds a value of
  its kind that does not equal it (:func:`contradicted`; 今天最高 35°C beside get_weather's
  28.6°C maximum of the day). A value the results hold nothing of that kind for (下午可能到
  35°C: no field said; tomorrow's maximum beside today's forecast; another city) may be the
  hosted tool's;
- the question declares **no measure** (``any``: a test's question without an eval file) and
  **no tool result** came back in the episode: the judge knows neither what the answer should
  state nor anything it could be checked against (a recipe's ``180°C``, ``1/4 inch``).

A question that declares a measure (the weather study's ``temperature``) still needs a tool
result for its value: an answer that states one with no tool result at all made it up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar, cast

from toolreplay.evals import ANY_MEASURE
from toolreplay.judging.bounds import BETWEEN, holds
from toolreplay.judging.toolvalues import ToolValue
from toolreplay.judging.values import MeasuredValue
from toolreplay.judging.vocabulary import Vocabulary

#: Hosted tools whose results hold no data an answer could quote (an image); with a tool
#: search (``tool_search*``: it finds the program's own tools), the hosted tools that leave
#: every value checkable.
NO_DATA = frozenset({"image_generation"})


class _Check(Protocol):
    """What is read of a :class:`~toolreplay.judging.grounding.ValueCheck` here (the
    grounding module imports this one, not the other way round)."""

    @property
    def value(self) -> MeasuredValue: ...
    @property
    def day(self) -> int | None: ...
    @property
    def field(self) -> str | None: ...
    @property
    def places(self) -> tuple[Any, ...]: ...
    @property
    def also(self) -> tuple[Any, ...]: ...
    @property
    def bound(self) -> str | None: ...
    @property
    def match(self) -> Any: ...
    @property
    def vacuous(self) -> bool: ...
    @property
    def text(self) -> str: ...
    @property
    def checkable(self) -> bool: ...


ValueCheck = TypeVar("ValueCheck", bound=_Check)


def hosted_words(hosted: Sequence[str]) -> str:
    """``the hosted tool web_search``, ``the hosted tools web_search and code_execution``."""
    names = list(hosted)
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"the hosted tool{'s' if len(names) > 1 else ''} {joined}"


def quotable(hosted: Sequence[str]) -> tuple[str, ...]:
    """The hosted tools of ``hosted`` whose results an answer could quote a value from: all but
    those of :data:`NO_DATA` and tool searches."""
    return tuple(n for n in hosted if n not in NO_DATA and not n.startswith("tool_search"))


#: Whether a tool value is the field a field word's tag names (grounding's ``fits_field``).
FieldFits = Callable[[str, ToolValue, Vocabulary], bool]


def contradicted(
    check: _Check, pool: Sequence[ToolValue], vocab: Vocabulary, fits: FieldFits
) -> bool:
    """Whether the tool values ``pool`` hold, for a place ``check`` is stated for, a value of
    its kind, day and (for a kind with fields) stated field that does not bear it out: then the
    function tools answered what it says, and a hosted tool does not make it uncheckable. A
    value with no field said (of a kind with fields), no day, or no place is never contradicted
    here: the hosted tool may hold what the function tools do not (an hour's temperature)."""
    v = check.value
    if check.field == "difference" or check.day is None or not check.places:
        return False
    if v.kind in vocab.field_kinds and check.field is None:
        return False

    def rivals(p: Any) -> list[ToolValue]:
        return [
            tv
            for tv in pool
            if tv.kind == v.kind
            and tv.day == check.day
            and (v.kind not in vocab.field_kinds or fits(cast(str, check.field), tv, vocab))
            and (tv.place is None or tv.place.weak or p.named(tv.place))
        ]

    if not check.also:  # ungrounded: no rival bears it out
        return bool(rivals(check.places[0]))
    bound = None if check.bound == BETWEEN else check.bound
    return any(
        (found := rivals(p)) and not any(holds(v, tv, vocab.units, bound) for tv in found)
        for p in check.places
    )


def unchecked(
    check: ValueCheck,
    measure: str | None,
    returned: bool,
    hosted: Sequence[str],
    pool: Sequence[ToolValue] = (),
    vocab: Vocabulary | None = None,
    fits: FieldFits | None = None,
) -> ValueCheck:
    """``check``, or, when it is neither grounded nor vacuous and the episode holds nothing to
    check it against (the module docstring), the same marked not checkable with the reason.
    ``pool``, ``vocab``, ``fits``: the tool values and how their fields are read, to tell a
    value the function tools contradict (:func:`contradicted`)."""
    if check.match is not None or check.vacuous:
        return check
    said = check.text
    hosted = quotable(hosted)
    if hosted and vocab is not None and fits is not None:
        if contradicted(check, pool, vocab, fits):
            return check
    if hosted:
        why = (
            f"not checkable: no tool result in the recording holds {said}, and the answer may "
            f"take it from {hosted_words(hosted)}, which the provider ran and whose results "
            "the recording does not hold"
        )
    elif measure == ANY_MEASURE and not returned:
        why = (
            f"not checkable: no tool result was returned in this episode and the question "
            f"declares no measure, so nothing holds or contradicts {said}"
        )
    else:
        return check
    return replace(cast(Any, check), checkable=False, reason=why)


def unchecked_summary(checks: Sequence[_Check], hosted: Sequence[str]) -> str | None:
    """One line on the values of ``checks`` that are not checkable (None: there are none):
    ``12 values not checkable (59°F, 15°C, ...): the hosted tool web_search ran on the
    provider's side, and its results are not in the recording``."""
    unsure = [c for c in checks if not c.checkable]
    if not unsure:
        return None
    hosted = quotable(hosted)
    shown = ", ".join(dict.fromkeys(c.text for c in unsure[:4]))
    shown += ", ..." if len(unsure) > 4 else ""
    why = (
        f"{hosted_words(hosted)} ran on the provider's side, and its results are not in the "
        "recording"
        if hosted
        else "no tool result was returned in this episode"
    )
    n = len(unsure)
    return f"{n} value{'s' if n > 1 else ''} not checkable ({shown}): {why}"


__all__ = [
    "NO_DATA", "contradicted", "hosted_words", "quotable", "unchecked", "unchecked_summary",
]  # fmt: skip
