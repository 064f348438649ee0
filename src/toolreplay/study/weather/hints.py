"""The weather study's block of a question (``standin:``): hints and per-trial variations of its
stand-in model (a test double), parsed and validated here, not by the engine.

YAML shape (every key optional)::

    standin:
      narrates_followups: true        # writes a sentence beside its follow-up tool calls
      variation: {narrate: 0.7, shuffle_parallel: 0.5, split_parallel: 0.3,
                  wrong_pick: 0.2, rephrase: 0.5}
      retries: {宁德: [宁德市]}        # per place query: the names it geocodes next when no
                                      # candidate lies in the place's region (default:
                                      # query + "市", as the study's model did; [] for none)

:func:`parse_standin` returns a :class:`StandinHints` (``hints``: what a recording depends on,
part of a cassette set's fingerprint) or raises :class:`ValueError` with ``.where: what``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: What the study's model appended to a place name when geocoding found no admin seat.
SHI = "市"


@dataclass(frozen=True)
class Variation:
    """Per-trial variation of the stand-in model (a test double; a real model's variation
    comes from sampling). Trial 1 is the study's observed behaviour and draws nothing; from
    trial 2 on, each is a probability in [0, 1] of one draw per trial:

    - ``narrate``: it writes a sentence beside follow-up tool calls (None: as
      ``narrates_followups`` says, every trial);
    - ``shuffle_parallel``: parallel tool calls of a reply come in another order;
    - ``split_parallel``: the first round asks for all places but the last; the last one
      follows in the next round;
    - ``wrong_pick`` (atomic toolset): its first pick among geocoding candidates is a
      same-name place outside the region, noticed and corrected after the weather comes back;
    - ``rephrase``: the answer and narration use another wording.
    """

    narrate: float | None = None
    shuffle_parallel: float = 0.0
    split_parallel: float = 0.0
    wrong_pick: float = 0.0
    rephrase: float = 0.0


@dataclass(frozen=True)
class StandinHints:
    """A question's ``standin:`` block: ``narrates_followups`` (it writes a sentence alongside
    follow-up calls, every trial unless ``variation.narrate`` says otherwise), ``variation``
    (:class:`Variation`) and ``retries`` (place query → the names it geocodes next, in order;
    a query not listed retries ``query + "市"``)."""

    narrates_followups: bool = False
    variation: Variation = Variation()
    retries: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)

    @property
    def hints(self) -> dict[str, Any]:
        """What a recording depends on (a set's fingerprint): ``{"narrates_followups": ...}``."""
        return {"narrates_followups": self.narrates_followups}

    def queries(self, query: str) -> tuple[str, ...]:
        """``query`` then its retries: every name the stand-in may ask the geocoder for."""
        retries = self.retries.get(query)
        return (query, *((query + SHI,) if retries is None else retries))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_Probability = Field(default=0.0, ge=0.0, le=1.0, allow_inf_nan=False)


class _VariationModel(_Strict):
    narrate: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    shuffle_parallel: float = _Probability
    split_parallel: float = _Probability
    wrong_pick: float = _Probability
    rephrase: float = _Probability


class _StandinModel(_Strict):
    narrates_followups: bool = False
    variation: _VariationModel = _VariationModel()
    retries: dict[str, list[str]] = {}


def parse_standin(raw: Any) -> StandinHints:
    """A question's ``standin:`` block (None: not given, the defaults). Raises
    :class:`ValueError` as ``.where: what`` (``.variation.narrate: Input should be ...``)."""
    try:
        m = _StandinModel.model_validate({} if raw is None else raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = "".join(f".{x}" for x in err["loc"])
        raise ValueError(f"{where}: {err['msg']}") from None
    return StandinHints(
        m.narrates_followups,
        Variation(**m.variation.model_dump()),
        {k: tuple(v) for k, v in m.retries.items()},
    )


def hints_of(question: Any) -> StandinHints:
    """The :class:`StandinHints` of an :class:`~toolreplay.evals.Question` (the defaults for a
    question built in code, with no block)."""
    ext = getattr(question, "extension", None)
    return ext if isinstance(ext, StandinHints) else StandinHints()
