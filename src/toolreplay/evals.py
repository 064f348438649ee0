"""Eval files (``evals/*.yaml``): questions, their expectations and the stand-in's hints.

The YAML file is validated with pydantic at the boundary and turned into frozen dataclasses.
Shapes::

    EvalSuite(name, system_prompt, questions: tuple[Question, ...], experiment: ExperimentSpec,
              declared_measures: tuple[MeasureDeclaration, ...],
              expect: tuple[EpisodeExpectation, ...])
    Question(id, text, measure, day, places: tuple[Place, ...], narrates_followups, variation,
             expect: tuple[EpisodeExpectation, ...], declared_measures)
    Place(query, region, names, retries)
    Variation(narrate, shuffle_parallel, split_parallel, wrong_pick, rephrase)

Expectations (``expect:``, eval-wide and per question; the eval-wide ones come first in each
question's ``expect``) and declared measures (``measures:``) are the data of
:mod:`toolreplay.declarations`; a question's ``measure`` may name a declared measure.

Errors: :class:`EvalFileError` names the file and the offending field (for an expectation or a
measure declaration, one line: the file, the question and what is wrong).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from toolreplay.declarations import (
    DeclarationError,
    EpisodeExpectation,
    Grounded,
    MeasureDeclaration,
    StrictGrounding,
    parse_expectations,
    parse_measures,
)
from toolreplay.inputs import InputFileError, read_checked
from toolreplay.studies import Study, StudyError, load_study

#: A question's measure: one its study's judge vocabulary declares (the weather study's:
#: ``temperature``, ``precipitation``, ``comparison``, ``wind``), or ``none``.
Measure = str
NO_MEASURE = "none"
Day = Literal["today", "tomorrow"]
DEFAULT_REPEAT_WINDOW = 2


#: An eval file larger than this is refused before parsing (ours is a few kilobytes).
EVAL_FILE_LIMIT = 4 * 1024 * 1024


class EvalFileError(ValueError):
    """An eval file is missing, is not YAML, or does not match the schema."""


@dataclass(frozen=True)
class Place:
    """A place a question is about.

    ``query`` is the name the model asks the geocoder first (e.g. ``宁德``); ``region`` is the
    first-level division (Open-Meteo ``admin1``, e.g. ``福建省``) the right place lies in, or
    None for a place that does not exist (an unknown-place question); ``names`` are other names
    an answer may call it by (``Guangzhou``), for the judge. ``retries`` are the names the
    stand-in tries next, in order, when an answer has no candidate in ``region`` (None:
    ``query + "市"``, as the study's model did; ``()``: none). A question's ``entities:``
    (``[ABC-1]``: what a question of a declared measure is about, a SKU) are places of no
    region and no retries, matched by name against the declared measure's ``entity`` keys.
    """

    query: str
    region: str | None
    names: tuple[str, ...] = ()
    retries: tuple[str, ...] | None = None

    @property
    def queries(self) -> tuple[str, ...]:
        """``query`` then ``retries``: every name the stand-in may ask the geocoder for."""
        retries = (self.query + "市",) if self.retries is None else self.retries
        return (self.query, *retries)


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
class Question:
    """One question of an eval.

    ``measure`` is what a correct answer must quantify, one of the measures the study's judge
    vocabulary declares (the weather study's: ``temperature``, ``precipitation``,
    ``comparison`` of several places, ``wind``) or its eval file declares (``measures:``), or
    ``none`` (nothing to measure: an unknown place, a question needing no tool; the answer
    must hold no measured value). ``places`` holds its places, or its ``entities``.
    ``day`` is ``today`` or ``tomorrow`` (index 0 or 1 of Open-Meteo's ``daily`` series).
    ``narrates_followups`` is a stand-in hint: it writes a sentence alongside follow-up calls;
    ``variation`` the stand-in's per-trial draws (:class:`Variation`).
    ``expect``: what the episode should do and say (:mod:`toolreplay.declarations`; the eval
    file's eval-wide ``expect:`` first), checked by
    :func:`toolreplay.judging.expectations.check_expectations`; ``declared_measures``: the
    measures its eval file declares (``measures:``), which the judge adds to its vocabulary.
    """

    id: str
    text: str
    measure: Measure
    day: Day
    places: tuple[Place, ...]
    narrates_followups: bool
    variation: Variation = Variation()
    expect: tuple[EpisodeExpectation, ...] = field(default=(), hash=False)
    declared_measures: tuple[MeasureDeclaration, ...] = ()
    #: The recorded tests whose episodes answer this question, in a set recorded by the
    #: pytest plugin (:mod:`toolreplay.runs.anyset`): cassette names or shell patterns
    #: (``test_stock*``); empty: the episodes whose first user message is ``text``.
    tests: tuple[str, ...] = ()

    @property
    def day_index(self) -> int:
        """Index into Open-Meteo's ``daily`` arrays: 0 today, 1 tomorrow."""
        return 0 if self.day == "today" else 1


@dataclass(frozen=True)
class ExperimentSpec:
    """Which configurations to run and the settings every arm shares.

    ``baseline`` names the heuristics switched on in the oneshot baseline (all three unless the
    eval file says otherwise; the fidelity audit fails when one is missing).
    ``repeat_window``: how many preceding rounds the loop host compares a round's call
    signatures with (1: the previous round only; 2, the default, also catches A/B/A/B).
    ``tool_choice``: sent with every request that offers tools: ``auto`` (the default),
    ``required``, ``none``, or ``{"type": "function", "function": {"name": TOOL}}`` (the
    model must call TOOL; useful for small models that never call a tool on their own).
    ``stream``: the model client asks for streamed replies (``stream: true`` with
    ``stream_options.include_usage``) and assembles them; the episodes are the same."""

    hosts: tuple[str, ...]
    toolsets: tuple[str, ...]
    max_rounds: int
    token_budget: int
    temperature: float
    ablations: tuple[str, ...]
    baseline: tuple[str, ...] = ()
    repeat_window: int = DEFAULT_REPEAT_WINDOW
    tool_choice: Any = field(default="auto", hash=False)
    stream: bool = False


@dataclass(frozen=True)
class EvalSuite:
    """A whole eval file: system prompt template (``{today}`` placeholder), questions, spec."""

    name: str
    system_prompt_template: str
    questions: tuple[Question, ...]
    experiment: ExperimentSpec
    path: str
    #: The study the eval file names (``study:``), or None: the only one installed.
    study: str | None = None
    #: The measures the eval file declares (``measures:``), added to its study's.
    declared_measures: tuple[MeasureDeclaration, ...] = ()
    #: The eval-wide expectations (``expect:``), already part of every question's ``expect``.
    expect: tuple[EpisodeExpectation, ...] = field(default=(), hash=False)
    #: A set recorded by the pytest plugin that this eval file judges (``cassettes:``, a
    #: folder relative to the eval file): its episodes are read from the cassettes
    #: (:mod:`toolreplay.runs.anyset`), not run by the study's hosts. None: a study's set.
    cassettes: str | None = None

    @property
    def reads_cassettes(self) -> bool:
        """Whether the episodes come from a plugin-recorded set (``cassettes:``, or a
        question mapped to ``tests:``) rather than from the study's configurations."""
        return self.cassettes is not None or any(q.tests for q in self.questions)

    def system_prompt(self, today: str) -> str:
        """The system prompt with ``{today}`` (an ISO date such as ``2026-09-17``) filled in."""
        return self.system_prompt_template.replace("{today}", today)

    def question(self, question_id: str) -> Question:
        """The question with this id; :class:`KeyError` naming the known ids otherwise."""
        for q in self.questions:
            if q.id == question_id:
                return q
        known = ", ".join(q.id for q in self.questions)
        raise KeyError(f"no question {question_id!r} in {self.path} (known: {known})")

    @property
    def measures(self) -> dict[str, str]:
        """Question id → declared measure (``temperature``, ``precipitation``, ``comparison``,
        ``wind``, ``none``)."""
        return {q.id: q.measure for q in self.questions}

    @property
    def by_id(self) -> dict[str, Question]:
        """Question id → :class:`Question` (what the judge grounds each answer against)."""
        return {q.id: q for q in self.questions}

    def question_for_text(self, text: str) -> Question | None:
        """The question whose text is exactly ``text``, or None."""
        return next((q for q in self.questions if q.text == text), None)


# ---- boundary models -------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _PlaceModel(_Strict):
    query: str = Field(min_length=1)
    region: str | None = Field(min_length=1)
    names: list[str] = []
    retries: list[str] | None = None


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


class _QuestionModel(_Strict):
    # A file name in every cassette set (``<id>.yaml``, ``<id>/trial-<i>.yaml``): bounded
    # well within the file systems' 255 bytes.
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=100)
    text: str = Field(min_length=1)
    measure: Measure
    day: Day = "today"
    places: list[_PlaceModel] = []
    entities: list[str] = []
    standin: _StandinModel = _StandinModel()
    expect: list[Any] = []
    tests: list[str] = []


class _SamplingModel(_Strict):
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, allow_inf_nan=False)


class _NamedFunction(_Strict):
    name: str = Field(min_length=1)


class _NamedToolChoice(_Strict):
    """``{type: function, function: {name: TOOL}}``: the model must call that tool."""

    type: Literal["function"]
    function: _NamedFunction


class _ExperimentModel(_Strict):
    hosts: list[Literal["single", "loop"]] = Field(default=["single", "loop"], min_length=1)
    toolsets: list[str] | None = Field(default=None, min_length=1)  # None: the study's
    max_rounds: int = Field(default=6, ge=2, le=50)
    token_budget: int = Field(default=20000, ge=1)
    sampling: _SamplingModel = _SamplingModel()
    ablations: list[str] = []
    baseline: list[str] | None = None  # None: all of the study's heuristics
    repeat_window: int = Field(default=DEFAULT_REPEAT_WINDOW, ge=1, le=20)
    tool_choice: Literal["auto", "required", "none"] | _NamedToolChoice = "auto"
    stream: bool = False  # ask the model for streamed replies (text/event-stream)

    @field_validator("hosts", "toolsets", "ablations", "baseline")
    @classmethod
    def _no_repeats(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return value
        repeated = sorted({v for v in value if value.count(v) > 1})
        if repeated:
            raise ValueError(f"listed more than once: {', '.join(repeated)}")
        return value


#: Added to a missing ``system_prompt``: an eval of a test-recorded set may leave it out.
_NO_PROMPT_HINT = (
    " (an eval file judging cassettes your tests recorded leaves it out and names their "
    "folder instead: cassettes: PATH)"
)


class _EvalModel(_Strict):
    version: Literal[1]
    name: str
    study: str | None = None
    system_prompt: str  # an eval of a plugin-recorded set may leave it out (""; see below)
    cassettes: str | None = Field(default=None, min_length=1)
    experiment: _ExperimentModel = _ExperimentModel()
    measures: list[Any] = []
    expect: list[Any] = []
    questions: list[_QuestionModel] = Field(min_length=1)

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

    @field_validator("questions")
    @classmethod
    def _unique_ids(cls, value: list[_QuestionModel]) -> list[_QuestionModel]:
        ids = [q.id for q in value]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate question ids: {', '.join(dupes)}")
        return value


def load_eval(path: str | Path) -> EvalSuite:
    """Read and validate an eval file.

    Raises :class:`EvalFileError` (naming ``path`` and the failing field or place) when the
    file is missing, a folder, unreadable, larger than :data:`EVAL_FILE_LIMIT`, not UTF-8, not
    YAML, or not of the schema above.
    """
    p = Path(path)
    try:
        raw = read_checked(p, what="eval file", limit=EVAL_FILE_LIMIT, parse="yaml", aliases=True)
    except InputFileError as exc:
        if exc.missing:
            raise EvalFileError(
                f"eval file not found: {p} (run from the project's root, or pass --eval PATH)"
            ) from None
        raise EvalFileError(str(exc)) from None
    if not isinstance(raw, dict):  # the file's own words, not the model's class name
        found = "empty" if raw is None else f"a {type(raw).__name__}"
        raise EvalFileError(
            f"{p}: the top level is {found}; an eval file is a mapping with the keys "
            "experiment, system_prompt and questions"
        )
    try:
        model = _EvalModel.model_validate(raw)
    except ValidationError as exc:
        lines = [
            f"  {'.'.join(str(x) for x in err['loc'])}: {err['msg']}"
            + (_NO_PROMPT_HINT if err["loc"] == ("system_prompt",) else "")
            for err in exc.errors()
        ]
        raise EvalFileError(f"{p}: does not match the eval schema:\n" + "\n".join(lines)) from None
    exp = model.experiment
    study = _study_of(p, model.study)
    toolsets = list(study.toolsets) if exp.toolsets is None else exp.toolsets
    baseline = list(study.heuristics) if exp.baseline is None else exp.baseline
    problems = [
        f"  experiment.{where}: unknown {what} {name!r} (the {study.name} study has: "
        f"{', '.join(known) or 'none'})"
        for where, what, names, known in (
            ("toolsets", "toolset", toolsets, study.toolsets),
            ("ablations", "heuristic", exp.ablations, study.heuristics),
            ("baseline", "heuristic", baseline, study.heuristics),
        )
        for name in names
        if name not in known
    ]
    declared, default_expect, expects = _declarations(p, model, _measure_names(study))
    measures = [*_measure_names(study), *(d.name for d in declared), NO_MEASURE]
    problems += [  # a study's measure is of places (a declared one may be of none)
        f"  questions.{i}: a {q.measure} question needs at least one place"
        for i, q in enumerate(model.questions)
        if not q.places and q.measure in _measure_names(study)
    ]
    problems += [
        f"  questions.{i}: a place without a region (unknown place) needs measure: none"
        for i, q in enumerate(model.questions)
        if any(p.region is None for p in q.places) and q.measure in _measure_names(study)
    ]
    problems += [
        f"  questions.{i}.measure: unknown measure {q.measure!r} (the {study.name} study "
        f"has: {', '.join(measures)})"
        for i, q in enumerate(model.questions)
        if q.measure not in measures
    ]
    if problems:
        raise EvalFileError(f"{p}: does not match the eval schema:\n" + "\n".join(problems))
    return EvalSuite(
        name=model.name,
        system_prompt_template=model.system_prompt or "",
        questions=tuple(
            Question(
                id=q.id,
                text=q.text,
                measure=q.measure,
                day=q.day,
                places=tuple(
                    Place(
                        query=pl.query,
                        region=pl.region,
                        names=tuple(pl.names),
                        retries=None if pl.retries is None else tuple(pl.retries),
                    )
                    for pl in q.places
                )
                + tuple(Place(e, None, retries=()) for e in q.entities),
                narrates_followups=q.standin.narrates_followups,
                variation=Variation(**q.standin.variation.model_dump()),
                expect=(*default_expect, *expects[q.id]),
                declared_measures=declared,
                tests=tuple(q.tests),
            )
            for q in model.questions
        ),
        experiment=ExperimentSpec(
            hosts=tuple(exp.hosts),
            toolsets=tuple(toolsets),
            max_rounds=exp.max_rounds,
            token_budget=exp.token_budget,
            temperature=exp.sampling.temperature,
            ablations=tuple(exp.ablations),
            baseline=tuple(baseline),
            repeat_window=exp.repeat_window,
            tool_choice=(
                exp.tool_choice.model_dump()
                if isinstance(exp.tool_choice, _NamedToolChoice)
                else exp.tool_choice
            ),
            stream=exp.stream,
        ),
        path=str(p),
        study=model.study,
        declared_measures=declared,
        expect=default_expect,
        cassettes=model.cassettes,
    )


def _declarations(
    path: Path, model: _EvalModel, study_measures: list[str]
) -> tuple[
    tuple[MeasureDeclaration, ...],
    tuple[EpisodeExpectation, ...],
    dict[str, tuple[EpisodeExpectation, ...]],
]:
    """The declared measures, the eval-wide expectations and each question's own; an
    :class:`EvalFileError` of one line naming the file, the question and the problem."""
    try:
        declared = parse_measures(model.measures)
        default = parse_expectations(model.expect)
        own = {
            q.id: parse_expectations(q.expect, f"questions.{q.id}.expect") for q in model.questions
        }
    except DeclarationError as exc:
        raise EvalFileError(f"{path}: {exc}") from None
    known = [*study_measures, *(d.name for d in declared)]
    for where, expectations in (
        ("expect", default),
        *((f"questions.{k}.expect", v) for k, v in own.items()),
    ):
        for i, e in enumerate(expectations):
            named = (
                (e.measure,) if isinstance(e, Grounded) and e.measure is not None
                else e.measures if isinstance(e, StrictGrounding) else ()
            )  # fmt: skip
            for m in named:
                if m not in known:
                    raise EvalFileError(
                        f"{path}: {where}.{i}.{e.kind}: unknown measure {m!r} (known: "
                        f"{', '.join(known) or 'none'})"
                    )
    return declared, default, own


def _study_of(path: Path, name: str | None) -> Study:
    """The eval file's study; :class:`EvalFileError` naming the file otherwise."""
    try:
        return load_study(name)
    except StudyError as exc:
        raise EvalFileError(f"{path}: {exc}") from None


def _measure_names(study: Study) -> list[str]:
    """The measures the study's judge vocabulary declares; none when it declares none."""
    try:
        vocabulary = study.vocabulary_object()
    except StudyError as exc:
        raise EvalFileError(str(exc)) from None
    return [m.name for m in getattr(vocabulary, "measures", ())]
