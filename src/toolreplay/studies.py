"""Studies: what a domain supplies to the engine, and how the engine finds it.

The engine (hosts, cassettes, runs, judging, audit, results, report) knows nothing about any
domain. A *study* is the domain's half: its toolsets and the client they call, the endpoints
it records, the baseline heuristics a configuration may ablate, the vocabulary the judge reads
answers with (measures, units, field names, day and comparison words) and the audit's check of
the baseline. The weather study (``toolreplay.study.weather``) is one; a team's own is another.

A study's eval files may give each question a block the study owns
(``Study.question_block``, the weather study's ``standin:``): the engine takes it out of the
question before validating the rest and hands it to ``Study.parse_question_block``; the result
is the question's ``extension`` and its ``hints`` go into a recorded set's fingerprint.

``Study.vocabulary`` is a :class:`toolreplay.judging.vocabulary.Vocabulary` or a
``"module:attr"`` string naming one, imported the first time the judge needs it (the weather
study's is ``"toolreplay.study.weather.vocabulary:WEATHER"``), so that the module defining a
study stays cheap to import.

A study is found by name:

- registered in-process with :func:`register_study` (tests, notebooks, a conftest); or
- declared by an installed package as an entry point in the group ``toolreplay.studies``
  (``weather = "toolreplay.study.weather:STUDY"`` in toolreplay's own ``pyproject.toml``),
  imported the first time it is asked for.

An eval file may name its study (``study: weather``); when it names none and exactly one study
is installed, that one is used. :func:`load_study` raises :class:`StudyError` naming the
installed studies otherwise.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from pathlib import Path

    import requests

    from toolreplay.cassettes.manifest import Manifest
    from toolreplay.tools.toolset import Toolset

#: The type of a study's tool client (the weather study's
#: :class:`~toolreplay.study.weather.openmeteo.OpenMeteoClient`).
ClientT = TypeVar("ClientT")

ENTRY_POINT_GROUP = "toolreplay.studies"


class StudyError(LookupError):
    """No study of that name, or several installed and none named."""


@runtime_checkable
class QuestionBlock(Protocol):
    """A question's study-owned block as its study parsed it: ``hints`` is what a recording
    depends on (JSON-able; part of a cassette set's fingerprint)."""

    @property
    def hints(self) -> Mapping[str, Any]: ...


class ChatPolicy(Protocol):
    """A stand-in model in process: a chat-completions request body (JSON-able dict) to the
    response body it answers with."""

    def reply(self, body: Mapping[str, Any]) -> dict[str, Any]: ...


#: ``standin_policy(suite, seed, trial)``: the study's stand-in model for the questions of
#: ``suite`` (an :class:`~toolreplay.evals.EvalSuite`; not imported here, the eval package
#: sits above this module), drawing its per-trial variation from ``seed`` and ``trial``.
StandinPolicyFactory = Callable[[Any, int, int], ChatPolicy]
#: ``standin_server(suite, seed, trial)``: the same served on loopback; the context manager
#: yields the base URL to give an OpenAI SDK (``http://127.0.0.1:PORT/v1``).
StandinServerFactory = Callable[[Any, int, int], AbstractContextManager[str]]
#: ``fixture_server()``: serves the tools' endpoints offline; yields ``(tool_urls, today)``.
FixtureServerFactory = Callable[[], AbstractContextManager[tuple[Mapping[str, str], str]]]


class BaselineAudit(Protocol):
    """The audit's domain half: what the recorded tool traffic shows of the baseline's
    heuristics (:meth:`check_baseline` and :meth:`exercised_heuristics` read cassettes only,
    nothing is replayed), and what its code does on generated answers
    (:meth:`check_properties`).

    Optionally, a ``cassette_probe`` attribute: a
    :class:`toolreplay.runs.replay.CassetteProbe` through which each replay worker reads the
    cassettes it replayed for :meth:`check_baseline` and sends that reading back, so the
    check reads none of them again after the replay (the weather study's
    :class:`~toolreplay.study.weather.traffic.RequestsProbe`). Absent or None: the check reads
    the cassettes itself."""

    def check_baseline(
        self, set_dir: Path, suite: Any, manifest: Manifest, oneshot: Any, ablated: Any
    ) -> Any:
        """The ``baseline_heuristics`` check (a :class:`toolreplay.audit.tables.Check`) of the
        set in ``set_dir`` recorded for ``suite`` (an :class:`~toolreplay.evals.EvalSuite`),
        from its ``oneshot`` and ``ablated`` configurations (sequences of
        :class:`~toolreplay.runs.configuration.Configuration`). Those types sit in packages
        above this module, which may not import them."""

    def check_properties(self) -> Any:
        """The ``baseline_properties`` check (a :class:`toolreplay.audit.tables.Check`): the
        baseline toolset's code run on generated tool answers (seeded: the same cases every
        run) and held against the study's reference; it reads no cassette, so it needs no eval
        question whose answer exercises a heuristic."""

    def exercised_heuristics(self, path: Path) -> Mapping[str, list[tuple[str, bool]]]:
        """Heuristic name → ``(evidence, decided)`` for each time it acted in the episode
        recorded at ``path`` (``decided``: it changed the place chosen)."""


#: ``make_toolset(name, tool_client, heuristics)``: the toolset called ``name`` over the
#: study's tool client, with the baseline heuristics switched on (a tuple of names; None for a
#: toolset that has none). Raises :class:`ValueError` for an unknown name.
ToolsetFactory = Callable[[str, ClientT, "tuple[str, ...] | None"], "Toolset"]


@dataclass(frozen=True)
class SnapshotTests:
    """A study's snapshot tests: ``file`` (the pytest module pinning each episode of
    ``cassette_set``, relative to the folder ``toolreplay record`` runs in), ``test`` (its
    test function, parametrised with one id per ``CONFIGURATION-QUESTION``). ``toolreplay
    record --update-snapshots`` reruns them with ``--snapshot-update`` after re-recording."""

    file: str
    test: str = "test_episode"
    cassette_set: str = "reference"


@dataclass(frozen=True)
class Study(Generic[ClientT]):
    """What a domain supplies to the engine (see the module docstring); generic in the type
    of its tool client (``Study[OpenMeteoClient]``). Build one and register it
    (:func:`register_study`) or declare it as an entry point; the second study of the test
    suite and ``examples/stock_agent/stock_study.py`` fit in a few dozen lines.

    - ``toolsets``: toolset names in the study's order (the report's column order);
      ``toolset_labels`` how the report names each (``get_weather(city)``).
    - ``make_toolset``: :data:`ToolsetFactory`; ``tool_schemas()`` every toolset's schemas
      by name (hashed into a cassette set's manifest to tell a stale set).
    - ``tool_client(session, urls)``: the client the toolsets call, over a
      ``requests.Session`` the engine passes in (live, fixture server or replay), at the
      endpoints ``urls`` (manifest key → URL, e.g. ``{"geocoding_url": ..., ...}``);
      ``tool_urls`` the live defaults. A manifest stores exactly these keys.
    - ``baseline_toolset`` and ``heuristics``: the toolset whose named heuristic switches a
      configuration may ablate (``single+oneshot-no_shi_retry``), and those names.
    - ``vocabulary``: what the judge reads answers with (measures, units, fields, words).
    - ``near_miss_heuristic``: the heuristic the audit's near-miss arm drops (the weakened
      baseline the study warns about), or None; ``near_miss_title`` that table's title.
    - ``fidelity_checks`` (check name → plain-words title and lead sentence) and
      ``glossary`` (term, explanation): the report's fidelity section in the study's terms.
    - ``baseline_audit``: the audit's :class:`BaselineAudit`, or None (the check then says
      the study declares no baseline heuristics).
    - ``fixture_server()``: a context manager that serves the tools' endpoints offline (a
      fixture server on loopback) and yields ``(tool_urls, today)``: the URLs by manifest key
      and the date its data is about (the prompt date of a recording against it); None when
      the study has none.
    - ``question_block`` and ``parse_question_block``: the key of a question's study-owned
      block in its eval files (``standin``) and its parser (the block, None when a question
      has none, to a :class:`QuestionBlock`; :class:`ValueError` ``.where: what`` when it is
      wrong); None: the study owns no block, and such a key is refused as unknown.
    - ``standin_policy`` and ``standin_server``: the study's stand-in model (a test double
      answering like its reference model did), in process and on loopback, or None.
    - ``snapshot_tests``: where the study's episodes are pinned as snapshots
      (:class:`SnapshotTests`), or None: ``record --update-snapshots`` is then refused.
    """

    name: str
    toolsets: tuple[str, ...]
    make_toolset: ToolsetFactory[ClientT]
    tool_schemas: Callable[[], Mapping[str, tuple[dict[str, Any], ...]]]
    tool_client: Callable[[requests.Session, Mapping[str, str]], ClientT]
    tool_urls: Mapping[str, str]
    toolset_labels: Mapping[str, str] = field(default_factory=dict)
    baseline_toolset: str | None = None
    heuristics: tuple[str, ...] = ()
    #: a :class:`~toolreplay.judging.vocabulary.Vocabulary` (typed ``object``: the judge sits
    #: above this module) or its ``"module:attr"``; None: the study declares none
    vocabulary: object | str | None = None
    near_miss_heuristic: str | None = None
    near_miss_title: str = "Weakened baseline, narrow judge"
    fidelity_checks: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    glossary: tuple[tuple[str, str], ...] = ()
    baseline_audit: BaselineAudit | None = None
    fixture_server: FixtureServerFactory | None = None
    question_block: str | None = None
    parse_question_block: Callable[[Any], QuestionBlock] | None = None
    standin_policy: StandinPolicyFactory | None = None
    standin_server: StandinServerFactory | None = None
    snapshot_tests: SnapshotTests | None = None

    def vocabulary_object(self) -> Any:
        """:attr:`vocabulary` itself, or the object its ``"module:attr"`` string names
        (imported here, so a study's judge tables load only when something reads them).
        Raises :class:`StudyError` when the string names nothing importable."""
        spec = self.vocabulary
        if not isinstance(spec, str):
            return spec
        module, _, attr = spec.partition(":")
        try:
            obj: Any = importlib.import_module(module)
            for part in attr.split(".") if attr else ():
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise StudyError(f"cannot import the vocabulary {spec!r}: {exc}") from None
        return obj


_registered: dict[str, Study[Any]] = {}


def register_study(study: Study[ClientT]) -> Study[ClientT]:
    """Make ``study`` findable by its name in this process (it wins over an installed one of
    the same name). Returns it."""
    _registered[study.name] = study
    _load.cache_clear()
    return study


def unregister_study(name: str) -> None:
    """Forget a study :func:`register_study` registered (an installed one of the same name is
    found again)."""
    _registered.pop(name, None)
    _load.cache_clear()


@functools.lru_cache(maxsize=1)
def _entry_points() -> dict[str, Any]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def study_names() -> list[str]:
    """The names of the studies this process can load, sorted."""
    return sorted({*_registered, *_entry_points()})


@functools.lru_cache(maxsize=32)
def _load(name: str | None) -> Study[Any]:
    if name is None:
        names = study_names()
        if len(names) != 1:
            raise StudyError(
                "name the study in the eval file (study: NAME); installed: "
                + (", ".join(names) or "none")
            )
        name = names[0]
    if name in _registered:
        return _registered[name]
    ep = _entry_points().get(name)
    if ep is None:
        raise StudyError(f"unknown study {name!r}; installed: {', '.join(study_names()) or 'none'}")
    study = ep.load()
    if not isinstance(study, Study):
        raise StudyError(f"entry point {ep.value!r} of study {name!r} is not a Study")
    return study


def load_study(name: str | None = None) -> Study[Any]:
    """The study called ``name`` (None: the only one installed). Loaded once per process.
    Raises :class:`StudyError` naming the installed studies."""
    return _load(name)
