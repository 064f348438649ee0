"""The eval file's YAML boundary: pydantic models of its top level, questions, places and
experiment (expectations and measures have theirs in :mod:`.expectations` and :mod:`.measures`).

Only what any domain needs is here. A question's study-owned block (the weather study's
``standin:``) is taken out before validation and handed to its study
(:attr:`toolreplay.studies.Study.parse_question_block`). Errors are pydantic's
:class:`~pydantic.ValidationError`; :func:`toolreplay.evals.load.load_eval` words them.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from toolreplay.evals.boundary import STRICT
from toolreplay.evals.suite import DEFAULT_REPEAT_WINDOW, Measure


def _repeated(values: list[str]) -> list[str]:
    """The values listed more than once, sorted (one count over the list, not one a value)."""
    return sorted(v for v, n in Counter(values).items() if n > 1)


class _Strict(BaseModel):
    model_config = STRICT


class PlaceModel(_Strict):
    """``{query, region, names}`` (:class:`~toolreplay.evals.suite.Place`)."""

    query: str = Field(min_length=1)
    region: str | None = Field(min_length=1)
    names: list[str] = []


class QuestionModel(_Strict):
    """One entry of ``questions:`` (:class:`~toolreplay.evals.suite.Question`)."""

    # A file name in every cassette set (``<id>.yaml``, ``<id>/trial-<i>.yaml``): bounded
    # well within the file systems' 255 bytes.
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=100)
    text: str = Field(min_length=1)
    measure: Measure
    day: str | None = Field(default=None, min_length=1)  # one of the vocabulary's day names
    places: list[PlaceModel] = []
    entities: list[str] = []
    expect: list[Any] = []
    tests: list[str] = []


class SamplingModel(_Strict):
    """``experiment.sampling``."""

    temperature: float = Field(default=0.0, ge=0.0, le=2.0, allow_inf_nan=False)


class NamedFunction(_Strict):
    """``{name: TOOL}`` of a named tool choice."""

    name: str = Field(min_length=1)


class NamedToolChoice(_Strict):
    """``{type: function, function: {name: TOOL}}``: the model must call that tool."""

    type: Literal["function"]
    function: NamedFunction


class ExperimentModel(_Strict):
    """``experiment:`` (:class:`~toolreplay.evals.suite.ExperimentSpec`)."""

    hosts: list[Literal["single", "loop"]] = Field(default=["single", "loop"], min_length=1)
    toolsets: list[str] | None = Field(default=None, min_length=1)  # None: the study's
    max_rounds: int = Field(default=6, ge=2, le=50)
    token_budget: int = Field(default=20000, ge=1)
    sampling: SamplingModel = SamplingModel()
    ablations: list[str] = []
    baseline: list[str] | None = None  # None: all of the study's heuristics
    repeat_window: int = Field(default=DEFAULT_REPEAT_WINDOW, ge=1, le=20)
    tool_choice: Literal["auto", "required", "none"] | NamedToolChoice = "auto"
    stream: bool = False  # ask the model for streamed replies (text/event-stream)
    # the wire protocol the model client speaks (toolreplay.models.base.MODEL_PROTOCOLS)
    protocol: Literal["chat_completions", "responses", "anthropic_messages"] = "chat_completions"

    @field_validator("hosts", "toolsets", "ablations", "baseline")
    @classmethod
    def _no_repeats(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return value
        repeated = _repeated(value)
        if repeated:
            raise ValueError(f"listed more than once: {', '.join(repeated)}")
        return value


#: Added to a missing ``system_prompt``: an eval of a test-recorded set may leave it out.
NO_PROMPT_HINT = (
    " (an eval file judging cassettes your tests recorded leaves it out and names their "
    "folder instead: cassettes: PATH)"
)


class EvalModel(_Strict):
    """A whole eval file (:class:`~toolreplay.evals.suite.EvalSuite`)."""

    version: Literal[1]
    name: str
    study: str | None = None
    system_prompt: str  # an eval of a plugin-recorded set may leave it out (""; see below)
    cassettes: str | None = Field(default=None, min_length=1)
    arms: list[Annotated[str, Field(min_length=1)]] = []
    experiment: ExperimentModel = ExperimentModel()
    measures: list[Any] = []
    expect: list[Any] = []
    questions: list[QuestionModel] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _no_prompt_for_a_recorded_set(cls, data: Any) -> Any:
        """An eval of a plugin-recorded set (``cassettes:``, or a question's ``tests:``)
        judges episodes its agent ran with its own prompt: ``system_prompt`` may be left out."""
        if isinstance(data, dict) and "system_prompt" not in data:
            questions = data.get("questions")
            mapped = isinstance(questions, list) and any(
                isinstance(q, dict) and q.get("tests") for q in questions
            )
            if data.get("cassettes") is not None or mapped:
                return {**data, "system_prompt": ""}
        return data

    @field_validator("arms")
    @classmethod
    def _arms_are_a_comparison(cls, value: list[str]) -> list[str]:
        dupes = _repeated(value)
        if dupes:
            raise ValueError(f"an arm named twice: {', '.join(dupes)}")
        if len(value) == 1:
            raise ValueError("one arm compares nothing: name two or more (or leave arms out)")
        return value

    @field_validator("questions")
    @classmethod
    def _unique_ids(cls, value: list[QuestionModel]) -> list[QuestionModel]:
        ids = [q.id for q in value]
        dupes = _repeated(ids)
        if dupes:
            raise ValueError(f"duplicate question ids: {', '.join(dupes)}")
        return value
