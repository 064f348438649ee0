"""Loading an eval file (``evals/*.yaml``): read, parse, validate, build its dataclasses.

The YAML file is validated with pydantic at the boundary (:mod:`.schema`, :mod:`.expectations`,
:mod:`.measures`), checked against its study (toolsets, heuristics, measures, day names; a
question's study-owned block parsed by the study) and turned into the frozen dataclasses of
:mod:`.suite`.

Errors: :class:`~toolreplay.evals.boundary.EvalFileError` names the file and the offending
field (for an expectation or a measure declaration, one line: the file, the question and what
is wrong).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolreplay.evals.boundary import DeclarationError, EvalFileError
from toolreplay.evals.expectations import (
    EpisodeExpectation,
    Grounded,
    StrictGrounding,
    parse_expectations,
)
from toolreplay.evals.measures import MeasureDeclaration, parse_measures
from toolreplay.evals.schema import NO_PROMPT_HINT, EvalModel, NamedToolChoice
from toolreplay.evals.suite import (
    ANY_MEASURE,
    NO_MEASURE,
    EvalSuite,
    ExperimentSpec,
    Place,
    Question,
)
from toolreplay.inputs import InputFileError, read_checked
from toolreplay.studies import Study, StudyError, load_study

#: Where an eval file's fields are shown, for a file that does not match the schema.
SCHEMA_DOCS = "(an eval file's fields, with an example: docs/expectations.md)"

#: pydantic's words for a schema error, by its type, as an eval file's author reads them.
_SAID = {"missing": "required but missing", "extra_forbidden": "not a field here (misspelt?)"}

#: An eval file larger than this is refused before parsing (ours is a few kilobytes).
EVAL_FILE_LIMIT = 4 * 1024 * 1024


def load_eval(path: str | Path) -> EvalSuite:
    """Read and validate an eval file.

    Raises :class:`EvalFileError` (naming ``path`` and the failing field or place) when the
    file is missing, a folder, unreadable, larger than :data:`EVAL_FILE_LIMIT`, not UTF-8, not
    YAML, or not of the schema (:mod:`.schema`, and its study's: toolsets, heuristics,
    measures, day names, a question's study-owned block).
    """
    p = Path(path)
    raw = _read(p)
    study = _study_of(p, raw.get("study") if isinstance(raw.get("study"), str) else None)
    raw, blocks = _take_blocks(raw, study)
    try:
        model = EvalModel.model_validate(raw)
    except ValidationError as exc:
        lines = [
            f"  {'.'.join(str(x) for x in err['loc'])}: "
            + _said(err)
            + (NO_PROMPT_HINT if err["loc"] == ("system_prompt",) else "")
            + _in_question(err["loc"], raw.get("questions"))
            for err in exc.errors()
        ]
        if len(lines) > 8:  # not an eval file at all, most likely: the first few say so
            lines[8:] = [f"  and {len(lines) - 8} more"]
        raise EvalFileError(
            f"{p}: does not match the eval schema:\n" + "\n".join(lines) + f"\n{SCHEMA_DOCS}"
        ) from None
    exp = model.experiment
    vocabulary = _vocabulary(study)
    study_measures = [m.name for m in getattr(vocabulary, "measures", ())]
    days: tuple[str, ...] = tuple(getattr(vocabulary, "day_names", ()))
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
    declared, default_expect, expects = _declarations(p, model, study_measures)
    measures = [*study_measures, *(d.name for d in declared), NO_MEASURE, ANY_MEASURE]
    problems += [  # a study's measure is of places or entities (a declared one may be of none)
        f"  questions.{i}: a {q.measure} question needs at least one place; in question {q.id!r}"
        for i, q in enumerate(model.questions)
        if not q.places and not q.entities and q.measure in study_measures
    ]
    problems += [
        f"  questions.{i}: a place without a region (unknown place) needs measure: none; in "
        f"question {q.id!r}"
        for i, q in enumerate(model.questions)
        if any(p.region is None for p in q.places) and q.measure in study_measures
    ]
    problems += [
        f"  questions.{i}.measure: unknown measure {q.measure!r} (the {study.name} study "
        f"has: {', '.join(measures)}); in question {q.id!r}"
        for i, q in enumerate(model.questions)
        if q.measure not in measures
    ]
    problems += [
        f"  questions.{i}.day: unknown day {q.day!r} (the {study.name} study has: "
        f"{', '.join(days) or 'none'}); in question {q.id!r}"
        for i, q in enumerate(model.questions)
        if q.day is not None and q.day not in days
    ]
    extensions = _parse_blocks(study, blocks, len(model.questions), problems)
    if problems:
        raise EvalFileError(f"{p}: does not match the eval schema:\n" + "\n".join(problems))
    questions = []
    for i, q in enumerate(model.questions):
        day = q.day if q.day is not None else (days[0] if days else None)
        ext = extensions[i]
        questions.append(
            Question(
                id=q.id,
                text=q.text,
                measure=q.measure,
                places=tuple(Place(pl.query, pl.region, tuple(pl.names)) for pl in q.places)
                + tuple(Place(e, None) for e in q.entities),
                day=day,
                day_index=None if day is None else days.index(day),
                expect=(*default_expect, *expects[q.id]),
                declared_measures=declared,
                tests=tuple(q.tests),
                extension=ext,
                hints=dict(ext.hints) if ext is not None else {},
            )
        )
    return EvalSuite(
        name=model.name,
        system_prompt_template=model.system_prompt or "",
        questions=tuple(questions),
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
                if isinstance(exp.tool_choice, NamedToolChoice)
                else exp.tool_choice
            ),
            stream=exp.stream,
            protocol=exp.protocol,
        ),
        path=str(p),
        study=model.study,
        declared_measures=declared,
        expect=default_expect,
        cassettes=model.cassettes,
        arms=tuple(model.arms),
    )


def _said(err: Any) -> str:
    """A schema error in an eval file's author's words: pydantic's, without the model's class
    name (``or instance of PlaceModel``), and with what was found instead, when it is not a
    missing or unknown field (``found 'six'``, ``found a list``)."""
    import re

    if err["type"] in _SAID:
        return _SAID[err["type"]]
    said = re.sub(r" or instance of \w+", "", err["msg"])
    if err["type"] == "value_error":  # our own validators' words say what is wrong
        return said.removeprefix("Value error, ")
    found = err.get("input")
    if found is None:
        return f"{said} (found nothing)"
    if isinstance(found, Mapping | list):
        return f"{said} (found a {'mapping' if isinstance(found, Mapping) else 'list'})"
    shown = repr(found)
    return f"{said} (found {shown[:60]}{'...' if len(shown) > 60 else ''})"


def _in_question(loc: tuple[Any, ...], questions: Any) -> str:
    """``; in question 'ID'`` for an error inside ``questions.N`` (``N`` counts from 0), or,
    for a question without an id, ``; in the 2nd question ('its text...')``; else ``""``."""
    if len(loc) < 2 or loc[0] != "questions" or not isinstance(loc[1], int):
        return ""
    n = loc[1]
    q = questions[n] if isinstance(questions, list) and 0 <= n < len(questions) else None
    qid = q.get("id") if isinstance(q, Mapping) else None
    if isinstance(qid, str | int) and not isinstance(qid, bool):
        return f"; in question {str(qid)!r}"
    last = (n + 1) % 10 if (n + 1) % 100 not in (11, 12, 13) else 0
    nth = {1: "st", 2: "nd", 3: "rd"}.get(last, "th")
    text = q.get("text") if isinstance(q, Mapping) else None
    told = f" ({str(text)[:40]!r})" if isinstance(text, str) else ""
    return f"; in the {n + 1}{nth} question{told}"


def _read(p: Path) -> dict[str, Any]:
    """The eval file's YAML as a mapping; :class:`EvalFileError` naming ``p`` otherwise."""
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
    return raw


def _take_blocks(
    raw: dict[str, Any], study: Study
) -> tuple[dict[str, Any], list[tuple[bool, Any]]]:
    """``raw`` without its questions' study-owned blocks, and per question ``(given, block)``
    (``given``: the question has the block). A study that owns none leaves ``raw`` as is."""
    key = study.question_block
    questions = raw.get("questions")
    if key is None or not isinstance(questions, list):
        return raw, []
    blocks = [
        (isinstance(q, Mapping) and key in q, q.get(key) if isinstance(q, Mapping) else None)
        for q in questions
    ]
    stripped = [
        {k: v for k, v in q.items() if k != key} if isinstance(q, Mapping) else q for q in questions
    ]
    return {**raw, "questions": stripped}, blocks


def _parse_blocks(
    study: Study, blocks: list[tuple[bool, Any]], count: int, problems: list[str]
) -> list[Any]:
    """Each question's block as its study parsed it (None for a study that owns none); a
    block the study refuses adds a line to ``problems``."""
    key, parse = study.question_block, study.parse_question_block
    if key is None or parse is None:
        return [None] * count
    out: list[Any] = []
    for i, (given, block) in enumerate(blocks):
        try:
            out.append(parse(block if given else None))
        except ValueError as exc:
            problems.append(f"  questions.{i}.{key}{exc}")
            out.append(None)
    return out


def _declarations(
    path: Path, model: EvalModel, study_measures: list[str]
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


def _vocabulary(study: Study) -> Any:
    """The study's judge vocabulary (its ``measures`` and ``day_names`` are read), or None."""
    try:
        return study.vocabulary_object()
    except StudyError as exc:
        raise EvalFileError(str(exc)) from None
