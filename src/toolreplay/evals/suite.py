"""An eval file as data: frozen dataclasses, one per concept of the file.

Shapes::

    EvalSuite(name, system_prompt_template, questions: tuple[Question, ...],
              experiment: ExperimentSpec, path, study, declared_measures, expect, cassettes)
    Question(id, text, measure, places: tuple[Place, ...], day, day_index,
             expect: tuple[EpisodeExpectation, ...], declared_measures, tests, extension, hints)
    Place(query, region, names)
    ExperimentSpec(hosts, toolsets, max_rounds, token_budget, temperature, ablations,
                   baseline, repeat_window, tool_choice, stream, protocol)

What is only one domain's (the weather study's stand-in hints, its per-trial variations, the
names its stand-in retries a geocoding with) is not here: a question's study-owned block
(:attr:`toolreplay.studies.Study.question_block`) is parsed by its study into
:attr:`Question.extension`. Built by :func:`toolreplay.evals.load.load_eval`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from toolreplay.evals.expectations import EpisodeExpectation
from toolreplay.evals.measures import MeasureDeclaration

#: A question's measure: one its study's judge vocabulary declares (the weather study's:
#: ``temperature``, ``precipitation``, ``comparison``, ``wind``), one its eval file declares
#: (``measures:``), ``none`` or ``any``.
Measure = str
#: A question with nothing to measure (an unknown place, a question that needs no tool): an
#: answer that states a measured value fails it.
NO_MEASURE = "none"
#: A question that declares no measure to judge its answer by (a test's question when no eval
#: file is given): any non-empty answer passes the verdict, whatever values it states; failure
#: modes and expectations still fail an episode.
ANY_MEASURE = "any"
DEFAULT_REPEAT_WINDOW = 2
#: How many known ids :meth:`EvalSuite.question`'s error names before it says how many more.
KNOWN_SHOWN = 20
#: The wire protocols an eval file's ``experiment.protocol`` may name (the model clients'
#: :data:`toolreplay.models.base.MODEL_PROTOCOLS`), and the default.
PROTOCOLS = ("chat_completions", "responses", "anthropic_messages")
DEFAULT_PROTOCOL = "chat_completions"


@dataclass(frozen=True)
class Place:
    """A place (or entity) a question is about, as the judge matches it in tool results.

    ``query`` is its name as the question's tools are asked for it (``宁德``, ``ABC-1``);
    ``region`` the division it lies in, compared with the region of a tool result's place (the
    key its study's vocabulary names, ``place_region``), or None for a place that does not
    exist (an unknown-place question) and for an entity; ``names`` other names an answer may
    call it by (``Guangzhou``). A question's ``entities:`` (``[ABC-1]``: what a question of a
    declared measure is about, a SKU) are places of no region, matched by name against the
    declared measure's ``entity`` keys."""

    query: str
    region: str | None
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    """One question of an eval.

    ``measure`` is what a correct answer must quantify, one of the measures the study's judge
    vocabulary declares or its eval file declares (``measures:``), or ``none`` (nothing to
    measure: an unknown place, a question needing no tool; the answer must hold no measured
    value). ``places`` holds its places, or its ``entities``. ``day`` names the day it asks
    about, one of the study vocabulary's
    :attr:`~toolreplay.judging.vocabulary.Vocabulary.day_names` (the first when the file says
    none), and ``day_index`` is its position there (the index of the tool results' day series;
    None: no day, any day's value answers).
    ``expect``: what the episode should do and say (:mod:`toolreplay.evals.expectations`; the
    eval file's eval-wide ``expect:`` first), checked by
    :func:`toolreplay.judging.expectations.check_expectations`; ``declared_measures``: the
    measures its eval file declares (``measures:``), which the judge adds to its vocabulary.
    ``extension``: its study-owned block as the study parsed it (None: the study owns none);
    ``hints``: what of that block a recording depends on (part of a cassette set's
    fingerprint, ``{"narrates_followups": True}`` for the weather study's stand-in).
    """

    id: str
    text: str
    measure: Measure
    places: tuple[Place, ...] = ()
    day: str | None = None
    day_index: int | None = None
    expect: tuple[EpisodeExpectation, ...] = field(default=(), hash=False)
    declared_measures: tuple[MeasureDeclaration, ...] = ()
    #: The recorded tests whose episodes answer this question, in a set recorded by the
    #: pytest plugin: cassette names or shell patterns (``test_stock*``); empty: the episodes
    #: whose first user message is ``text``.
    tests: tuple[str, ...] = ()
    extension: Any = field(default=None, hash=False, compare=False)
    hints: Mapping[str, Any] = field(default_factory=dict, hash=False)


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
    ``stream_options.include_usage``) and assembles them; the episodes are the same.
    ``protocol``: the wire protocol the model client speaks, one of
    :data:`PROTOCOLS`: ``chat_completions`` (the default; ``POST …/chat/completions``),
    ``responses`` (the OpenAI Responses API, ``POST …/responses``) or ``anthropic_messages``
    (``POST …/v1/messages``); the hosts' episodes are in Chat Completions terms whichever
    (:func:`toolreplay.models.endpoint.chat_model`)."""

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
    protocol: str = DEFAULT_PROTOCOL


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
    #: (:mod:`toolreplay.runs.suite_folder`), not run by the study's hosts. None: a study's set.
    cassettes: str | None = None
    #: The configurations (test modules) of such a set that are arms of one comparison
    #: (``arms:``): the audit's arm parity checks they sent the same model, sampling, system
    #: prompt and tools. Empty: none (a suite testing different agents).
    arms: tuple[str, ...] = ()

    @property
    def reads_cassettes(self) -> bool:
        """Whether the episodes come from a plugin-recorded set (``cassettes:``, or a
        question mapped to ``tests:``) rather than from the study's configurations."""
        return self.cassettes is not None or any(q.tests for q in self.questions)

    def system_prompt(self, today: str) -> str:
        """The system prompt with ``{today}`` (an ISO date such as ``2026-09-17``) filled in."""
        return self.system_prompt_template.replace("{today}", today)

    def question(self, question_id: str) -> Question:
        """The question with this id; :class:`KeyError` naming the known ids otherwise (the
        first :data:`KNOWN_SHOWN` of them when there are more). A dictionary look-up: the
        index is built once per suite (:attr:`by_id`)."""
        try:
            return self.by_id[question_id]
        except KeyError:
            known = self.known_ids()
            raise KeyError(f"no question {question_id!r} in {self.path} (known: {known})") from None

    def known_ids(self) -> str:
        """The question ids for a message: ``"ningde, beijing"``, or the first
        :data:`KNOWN_SHOWN` and ``", … 4980 more"``."""
        ids = ", ".join(q.id for q in self.questions[:KNOWN_SHOWN])
        more = len(self.questions) - KNOWN_SHOWN
        return ids + (f", … {more} more" if more > 0 else "")

    @cached_property
    def measures(self) -> Mapping[str, str]:
        """Question id → declared measure (``temperature``, ``precipitation``, ``comparison``,
        ``wind``, ``none``); built once per suite, not to be changed."""
        return {q.id: q.measure for q in self.questions}

    @cached_property
    def by_id(self) -> Mapping[str, Question]:
        """Question id → :class:`Question` (what the judge grounds each answer against); built
        once per suite, not to be changed."""
        return {q.id: q for q in self.questions}

    @cached_property
    def _by_text(self) -> Mapping[str, Question]:
        found: dict[str, Question] = {}
        for q in self.questions:
            found.setdefault(q.text, q)
        return found

    def __getstate__(self) -> dict[str, Any]:
        # The indexes above are rebuilt where needed, not shipped to a worker with the suite.
        return {k: v for k, v in self.__dict__.items() if k not in _INDEXES}

    def question_for_text(self, text: str) -> Question | None:
        """The (first) question whose text is exactly ``text``, or None."""
        return self._by_text.get(text)


#: The attributes :class:`EvalSuite` builds once (:func:`functools.cached_property`).
_INDEXES = frozenset(k for k, v in vars(EvalSuite).items() if isinstance(v, cached_property))
