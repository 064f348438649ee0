"""The answer-phrasing corpus (``evals/phrasings.yaml``): answers with the verdict each must
get, judged as the final answer of an episode built from tool-result fixtures.

Shapes::

    Corpus(path, cases: tuple[Case, ...])
    Case(index, question: Question, answer, judge: "pass" | "fail", labels: tuple[str, ...],
         covers: tuple[str, ...], why, pending: ToolCall | None, episode: Episode)

The fidelity audit's ``judge_breadth`` check judges every ``pass`` case with the judge in use
(so a judge that drops a unit fails); the test suite checks every case's verdict and failure
labels. :class:`PhrasingsError` names the file and field when the file is malformed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolreplay.evals import Measure, Place, PlaceModel, Question
from toolreplay.inputs import InputFileError, read_checked
from toolreplay.judging.vocabulary import Vocabulary, resolve
from toolreplay.wire.episode import Episode, Message, ModelReply, Round, ToolCall, ToolResult, Usage

#: The corpus the audit reads, next to the eval file.
CORPUS_NAME = "phrasings.yaml"

#: A phrasing corpus larger than this is refused unread (ours is a few kilobytes).
CORPUS_LIMIT = 4 * 1024 * 1024


class PhrasingsError(ValueError):
    """The phrasing corpus is missing, not YAML, or does not match the schema."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _QuestionModel(_Strict):
    text: str = Field(min_length=1)
    measure: Measure  # and one the vocabulary declares (checked on loading)
    day: str | None = None  # one of the vocabulary's day names; None: its first
    places: list[PlaceModel] = Field(min_length=1)  # an eval file's place, as it is written
    tools: list[str] = []


class _CallModel(_Strict):
    name: str
    arguments: dict[str, Any]


class _CaseModel(_Strict):
    q: str
    answer: str
    judge: Literal["pass", "fail"]
    labels: list[str] = []
    covers: list[str] = []
    why: str = ""
    pending: _CallModel | None = None


class _EpisodeModel(_Strict):
    """How each case's episode calls the tool that returned its fixtures."""

    system_prompt: str = ""
    tool: str = "lookup"
    argument: str = "name"  # the call's one argument: the fixture's place name


class _CorpusModel(_Strict):
    version: Literal[1]
    episode: _EpisodeModel = _EpisodeModel()
    fixtures: dict[str, dict[str, Any]]
    questions: dict[str, _QuestionModel]
    cases: list[_CaseModel] = Field(min_length=1)

    @model_validator(mode="after")
    def _references(self) -> _CorpusModel:
        for name, q in self.questions.items():
            missing = [t for t in q.tools if t not in self.fixtures]
            if missing:
                raise ValueError(f"question {name}: unknown fixtures {', '.join(missing)}")
        for n, c in enumerate(self.cases):
            if c.q not in self.questions:
                raise ValueError(f"cases[{n}]: unknown question {c.q!r}")
        return self


@dataclass(frozen=True)
class Case:
    """One phrasing: the ``answer`` to ``question``, the verdict it must get (``judge``), the
    failure ``labels`` the classifier must give, the formats it ``covers``, and the
    ``episode`` it is judged in."""

    index: int
    question: Question
    answer: str
    judge: str
    labels: tuple[str, ...]
    covers: tuple[str, ...]
    why: str
    pending: ToolCall | None
    episode: Episode

    @property
    def id(self) -> str:
        return f"{self.index:02d}-{self.question.id}"


@dataclass(frozen=True)
class Corpus:
    path: str
    cases: tuple[Case, ...]

    @property
    def passing(self) -> tuple[Case, ...]:
        """The cases every judge in use must pass."""
        return tuple(c for c in self.cases if c.judge == "pass")


def _episode(
    shape: _EpisodeModel,
    qid: str,
    q: _QuestionModel,
    results: list[dict[str, Any]],
    answer: str,
    pending: Any,
) -> Episode:
    calls = tuple(
        ToolCall(
            f"call_1_{n}",
            shape.tool,
            json.dumps({shape.argument: r["place"]["name"]}, ensure_ascii=False),
        )
        for n, r in enumerate(results, start=1)
    )
    messages: list[Message] = [
        {"role": "system", "content": shape.system_prompt},
        {"role": "user", "content": q.text},
    ]
    rounds: list[Round] = []
    if calls:
        first = ModelReply(None, calls, "tool_calls")
        done = tuple(
            ToolResult(c, json.dumps(r, ensure_ascii=False))
            for c, r in zip(calls, results, strict=True)
        )
        messages.append(first.to_message())
        messages += [d.to_message() for d in done]
        rounds.append(Round(1, True, first, done))
    later = (
        (ToolCall("call_2_1", pending.name, json.dumps(pending.arguments, ensure_ascii=False)),)
        if pending is not None
        else ()
    )
    final = ModelReply(answer or None, later, "tool_calls" if later else "stop")
    rounds.append(Round(len(rounds) + 1, True, final))
    messages.append(final.to_message())
    return Episode(
        "phrasings",
        qid,
        q.text,
        tuple(messages),
        tuple(rounds),
        "max_rounds" if later else "converged",
        answer,
        Usage(),
    )


def load_corpus(path: str | Path, vocabulary: Vocabulary | None = None) -> Corpus:
    """Read and validate a phrasing corpus whose questions declare measures of ``vocabulary``
    (None: the default study's); :class:`PhrasingsError` naming ``path`` and the failing field
    otherwise."""
    p = Path(path)
    try:
        raw = read_checked(
            p, what="phrasing corpus", limit=CORPUS_LIMIT, parse="yaml", aliases=True
        )
    except InputFileError as exc:
        if exc.missing:
            raise PhrasingsError(f"phrasing corpus not found: {p}") from None
        raise PhrasingsError(str(exc)) from None
    try:
        model = _CorpusModel.model_validate(raw)
    except ValidationError as exc:
        lines = [f"  {'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise PhrasingsError(
            f"{p}: does not match the corpus schema:\n" + "\n".join(lines)
        ) from None
    vocab = resolve(vocabulary)
    unknown = [
        f"  questions.{name}.measure: {q.measure!r} is not a measure of the {vocab.name} "
        f"vocabulary ({', '.join(m.name for m in vocab.measures)})"
        for name, q in model.questions.items()
        if vocab.measure(q.measure) is None
    ]
    unknown += [
        f"  questions.{name}.day: {q.day!r} is not a day of the {vocab.name} vocabulary "
        f"({', '.join(vocab.day_names) or 'none'})"
        for name, q in model.questions.items()
        if q.day is not None and q.day not in vocab.day_names
    ]
    if unknown:
        raise PhrasingsError(f"{p}: does not match the corpus schema:\n" + "\n".join(unknown))
    cases = []
    for n, c in enumerate(model.cases):
        q = model.questions[c.q]
        day = q.day if q.day is not None else (vocab.day_names or (None,))[0]
        question = Question(
            c.q,
            q.text,
            q.measure,
            tuple(Place(pl.query, pl.region, tuple(pl.names)) for pl in q.places),
            day,
            None if day is None else vocab.day_names.index(day),
        )
        results = [model.fixtures[t] for t in q.tools]
        cases.append(
            Case(
                n,
                question,
                c.answer,
                c.judge,
                tuple(c.labels),
                tuple(c.covers),
                c.why,
                None,
                _episode(model.episode, c.q, q, results, c.answer, c.pending),
            )
        )
    return Corpus(str(p), tuple(cases))
