"""Values that cannot be checked: an answer's value no tool result holds is a fabrication only
when the episode holds what it should have come from.

Two cases leave nothing to check a value against, and such a value is *not checkable*
(:attr:`~toolreplay.judging.grounding.ValueCheck.checkable` False; ``"grounded": null`` in
``results.json``, "null: not checked"), neither grounded nor fabricated:

- the provider ran a **hosted tool** in the episode (OpenAI's ``web_search_call``, Anthropic's
  ``server_tool_use`` and ``web_search_tool_result``, Gemini's ``groundingMetadata`` of
  ``google_search``...; :mod:`toolreplay.wire.hosted`): its results are not in the recorded
  traffic, or only as citations, so a value no tool result of the transcript holds may come
  from them;
- the question declares **no measure** (``any``: a test's question without an eval file) and
  **no tool result** came back in the episode: the judge knows neither what the answer should
  state nor anything it could be checked against (a recipe's ``180°C``, ``1/4 inch``).

A question that declares a measure (the weather study's ``temperature``) still needs a tool
result for its value: an answer that states one with no tool result at all made it up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar, cast

from toolreplay.evals import ANY_MEASURE


class _Check(Protocol):
    """What is read of a :class:`~toolreplay.judging.grounding.ValueCheck` here (the
    grounding module imports this one, not the other way round)."""

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


def unchecked(
    check: ValueCheck, measure: str | None, returned: bool, hosted: Sequence[str]
) -> ValueCheck:
    """``check``, or, when it is neither grounded nor vacuous and the episode holds nothing to
    check it against (the module docstring), the same marked not checkable with the reason."""
    if check.match is not None or check.vacuous:
        return check
    said = check.text
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


__all__ = ["hosted_words", "unchecked", "unchecked_summary"]
