"""The mutation score of an eval file: :func:`mutate` perturbs every passing episode of a set
with the catalogue (:mod:`toolreplay.mutation.catalogue`) and rejudges each mutant with the
same judge and expectations (:func:`toolreplay.judging.assessment.assess`, the one path every
run judges by), to count what the eval file catches.

A mutant is **killed** when its assessment fails (the pass rule: the verdict fails, a failing
failure mode appears or an expectation is unmet), **survives** otherwise, and is
**equivalent** when it survives a change the answer cannot depend on (the catalogue's rule).
The score is killed / (killed + surviving): equivalent mutants are counted apart. Only
episodes that pass are mutated (a failing episode has no verdict left to flip); they are
counted in ``skipped``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolreplay.evals import EvalSuite
from toolreplay.evaluation.sources import Collected, EpisodeSource, Selection
from toolreplay.judging.assessment import FAILING_MODES, Assessment, assess
from toolreplay.judging.verdicts import FULL_JUDGE, Judge
from toolreplay.mutation.catalogue import GROUP_OF, OPERATORS, Context, Mutant, mutants
from toolreplay.results import percent
from toolreplay.wire.episode import Episode

KILLED, SURVIVED, EQUIVALENT = "killed", "survived", "equivalent"

#: The checks a kill is credited to besides the expectation kinds: the verdict and the
#: failing failure modes (``failure_mode``).
VERDICT, FAILURE_MODE = "verdict", "failure_mode"


@dataclass(frozen=True)
class MutantOutcome:
    """One mutant judged: the episode's ``configuration``, ``question_id``, ``trial`` and
    ``cassette`` (relative to its set; ``""`` when not known), the ``operator``, its
    ``group``, the exact ``change``, the ``status`` (killed, survived, equivalent) and
    ``killed_by``: the checks that newly failed (``verdict``, ``failure_mode``, expectation
    kinds), sorted; ``checks``: every check that applied to the episode."""

    configuration: str
    question_id: str
    trial: int
    cassette: str
    operator: str
    group: str
    change: str
    status: str
    killed_by: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Score:
    """Killed, surviving and equivalent mutant counts; ``score`` is killed / (killed +
    survived), None when there is no mutant to score."""

    killed: int = 0
    survived: int = 0
    equivalent: int = 0

    @property
    def scored(self) -> int:
        return self.killed + self.survived

    @property
    def score(self) -> float | None:
        return self.killed / self.scored if self.scored else None

    @staticmethod
    def of(outcomes: Iterable[MutantOutcome]) -> Score:
        statuses = [o.status for o in outcomes]
        return Score(statuses.count(KILLED), statuses.count(SURVIVED), statuses.count(EQUIVALENT))


@dataclass(frozen=True)
class MutationRun:
    """What :func:`mutate` returns: every mutant judged (``outcomes``, configuration-major then
    question, trial and catalogue order), the episodes mutated and ``skipped`` (failing
    ones), the ``seed`` and ``budget`` (None: every mutant)."""

    outcomes: tuple[MutantOutcome, ...]
    mutated: int
    skipped: int
    seed: int
    budget: int | None
    configurations: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    collected: Collected | None = field(default=None, compare=False, repr=False)

    @property
    def total(self) -> Score:
        return Score.of(self.outcomes)

    def by(self, key: str) -> dict[str, Score]:
        """Scores by ``configuration``, ``question_id``, ``operator`` or ``group``: the set's
        configurations and questions in its order, each listed even with no mutant (all its
        episodes failed: a score of None); operators and groups in catalogue order, those
        without a mutant left out."""
        names: dict[str, list[MutantOutcome]] = {}
        if key == "configuration":
            names = {c: [] for c in self.configurations}
        elif key == "question_id":
            names = {q: [] for q in self.questions}
        elif key in ("operator", "group"):
            names = {k: [] for k in (GROUP_OF if key == "operator" else OPERATORS)}
        for o in self.outcomes:
            names.setdefault(getattr(o, key), []).append(o)
        keep = key in ("configuration", "question_id")  # a name of the set with no mutant: –
        return {k: Score.of(v) for k, v in names.items() if v or keep}

    def by_check(self) -> dict[str, Score]:
        """Per check (``verdict``, ``failure_mode``, each expectation kind): of the scored
        mutants of the episodes the check applies to, how many it catches on its own account
        (``killed``: it newly failed) and how many it lets through (``survived``)."""
        out: dict[str, list[int]] = {}
        for o in self.outcomes:
            if o.status == EQUIVALENT:
                continue
            for check in o.checks:
                counts = out.setdefault(check, [0, 0])
                counts[0 if check in o.killed_by else 1] += 1
        first = [VERDICT, FAILURE_MODE]
        order = first + sorted(k for k in out if k not in first)
        return {k: Score(out[k][0], out[k][1]) for k in order if k in out}

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON data (``toolreplay mutate --json``): ``seed``, ``budget``,
        ``mutated``, ``skipped``, ``total`` and ``by_configuration``, ``by_question``,
        ``by_group``, ``by_operator``, ``by_check`` (each a name -> ``{"score", "killed",
        "survived", "equivalent"}``; ``score`` a fraction 0-1 rounded to 4 places, None with no
        mutant scored), and ``mutants``: every outcome (``configuration``, ``question_id``,
        ``trial``, ``cassette``, ``operator``, ``group``, ``change``, ``status``,
        ``killed_by``), in :attr:`outcomes` order. Deterministic for a seed."""

        def scores(table: dict[str, Score]) -> dict[str, Any]:
            return {k: _score_dict(v) for k, v in table.items()}

        return {
            "seed": self.seed,
            "budget": self.budget,
            "mutated": self.mutated,
            "skipped": self.skipped,
            "total": _score_dict(self.total),
            "by_configuration": scores(self.by("configuration")),
            "by_question": scores(self.by("question_id")),
            "by_group": scores(self.by("group")),
            "by_operator": scores(self.by("operator")),
            "by_check": scores(self.by_check()),
            "mutants": [
                {
                    "configuration": o.configuration,
                    "question_id": o.question_id,
                    "trial": o.trial,
                    "cassette": o.cassette,
                    "operator": o.operator,
                    "group": o.group,
                    "change": o.change,
                    "status": o.status,
                    "killed_by": list(o.killed_by),
                }
                for o in self.outcomes
            ],
        }

    @property
    def survivors(self) -> tuple[MutantOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status == SURVIVED)

    @property
    def equivalents(self) -> tuple[MutantOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status == EQUIVALENT)


def _score_dict(s: Score) -> dict[str, Any]:
    score = None if s.score is None else round(s.score, 4)
    return {"score": score, "killed": s.killed, "survived": s.survived, "equivalent": s.equivalent}


def context_of(suite: EvalSuite, question_id: str) -> Context:
    """The names the answer and argument mutations draw on for ``question_id``: its places
    (queries, names) and the other questions' (:class:`~toolreplay.mutation.catalogue.Context`)."""
    return contexts_of(suite, (question_id,))[question_id]


def contexts_of(suite: EvalSuite, question_ids: Iterable[str]) -> dict[str, Context]:
    """:func:`context_of` for each of ``question_ids``, the suite read once. Every context
    shares one ``others``, the names of every question in file order (each mutation draws only
    on those not among the question's own ``places``: the other questions' names, in the order
    they first appear there), so a context costs its question's names, not the file's."""

    def names(q: Any) -> tuple[str, ...]:
        return tuple(dict.fromkeys(
            n for p in q.places for n in (p.query, *getattr(p, "names", ()))
        ))  # fmt: skip

    own = {q.id: names(q) for q in suite.questions}
    every = tuple(dict.fromkeys(n for names_ in own.values() for n in names_))
    befores = tuple(dict.fromkeys(
        b for q in suite.questions for m in q.declared_measures for u in m.units
        for b in getattr(u, "before", ())
    ))  # fmt: skip
    return {qid: Context(own.get(qid, ()), every, befores) for qid in dict.fromkeys(question_ids)}


def _checks(a: Assessment) -> tuple[str, ...]:
    return (VERDICT, FAILURE_MODE, *sorted({r.kind for r in a.expectations}))


def _killed_by(before: Assessment, after: Assessment) -> tuple[str, ...]:
    by: set[str] = set()
    if before.verdict.passed and not after.verdict.passed:
        by.add(VERDICT)
    if any(f.mode in FAILING_MODES for f in after.failure_modes):
        by.add(FAILURE_MODE)
    for b, a in zip(before.expectations, after.expectations, strict=False):
        if b.passed and not a.passed:
            by.add(a.kind)
    return tuple(sorted(by))


def _budgeted(made: list[Mutant], budget: int | None, rng: random.Random) -> list[Mutant]:
    """At most ``budget`` mutants, spread over the operators: each operator's shuffled, then
    taken round-robin in catalogue order; kept in catalogue order."""
    if budget is None or len(made) <= budget:
        return made
    by_op: dict[str, list[Mutant]] = {}
    for m in made:
        by_op.setdefault(m.operator, []).append(m)
    for ms in by_op.values():
        rng.shuffle(ms)
    ops = list(by_op)
    rng.shuffle(ops)
    chosen: list[Mutant] = []
    while len(chosen) < budget:
        for op in ops:
            if by_op[op] and len(chosen) < budget:
                chosen.append(by_op[op].pop())
    keep = {id(m) for m in chosen}
    return [m for m in made if id(m) in keep]


def mutate_episode(
    episode: Episode,
    before: Assessment,
    question: Any,
    context: Context,
    *,
    judge: Judge = FULL_JUDGE,
    seed: int = 0,
    budget: int | None = None,
) -> list[MutantOutcome]:
    """Every mutant of one passing ``episode`` (assessed ``before``) judged for ``question``
    with ``judge``; deterministic for a ``seed`` (the sites chosen and, with ``budget``, the
    mutants kept)."""
    key = f"{seed}:{episode.configuration}:{episode.question_id}:{episode.trial}"
    rng = random.Random(key)
    made = _budgeted(mutants(episode, context, rng.choice), budget, rng)
    outcomes = []
    for m in made:
        after = assess(m.episode, question, judge)
        killed_by = _killed_by(before, after) if not after.passed else ()
        status = KILLED if not after.passed else EQUIVALENT if m.equivalent else SURVIVED
        outcomes.append(
            MutantOutcome(
                episode.configuration, episode.question_id, episode.trial, episode.cassette,
                m.operator, GROUP_OF[m.operator], m.change, status, killed_by, _checks(before),
            )
        )  # fmt: skip
    return outcomes


def mutate(
    source: EpisodeSource,
    suite: EvalSuite,
    selection: Selection | None = None,
    *,
    judge: Judge = FULL_JUDGE,
    seed: int = 0,
    budget: int | None = None,
    workers: int = 1,
) -> MutationRun:
    """The mutation score of ``suite`` on the episodes of ``source`` (a
    :class:`~toolreplay.evaluation.ReplayedSet` or
    :class:`~toolreplay.evaluation.SuiteCassettes`), restricted to ``selection``: each passing
    episode (every trial) mutated with the catalogue, at most ``budget`` mutants an episode
    (None: all; a positive int), each rejudged with ``judge`` and the question's expectations.
    Deterministic for a ``seed``, whatever the number of ``workers`` (processes judging the
    mutants; the source replays with its own). Raises what :meth:`EpisodeSource.collect` raises
    (:class:`~toolreplay.evaluation.SelectionError`, :class:`~toolreplay.evaluation.SourceError`)
    and ValueError for a budget below 1."""
    if budget is not None and budget < 1:
        raise ValueError(f"budget must be at least 1, not {budget}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    collected = source.collect(suite, selection or Selection(), judge)
    return mutate_collected(collected, judge=judge, seed=seed, budget=budget, workers=workers)


def mutate_collected(
    collected: Collected,
    *,
    judge: Judge = FULL_JUDGE,
    seed: int = 0,
    budget: int | None = None,
    workers: int = 1,
) -> MutationRun:
    """:func:`mutate` on episodes already collected and assessed (e.g. an
    :class:`~toolreplay.evaluation.Evaluation`'s ``collected``); ``workers`` processes judge
    the episodes' mutants (the outcomes are the same whatever the number)."""
    suite = collected.suite
    jobs: list[_Job] = []
    passing = [a for a in collected.episodes if a.assessment.passed]
    contexts = contexts_of(suite, (a.episode.question_id for a in passing))
    for a in passing:
        qid = a.episode.question_id
        jobs.append(
            (a.episode, a.assessment, suite.by_id.get(qid), contexts[qid], judge, seed, budget)
        )
    outcomes: list[MutantOutcome] = []
    for part in _run_jobs(jobs, workers):
        outcomes += part
    mutated, skipped = len(passing), len(collected.episodes) - len(passing)
    return MutationRun(
        tuple(outcomes), mutated, skipped, seed, budget,
        configurations=tuple(collected.configurations),
        questions=tuple(q.id for q in suite.questions), collected=collected,
    )  # fmt: skip


_Job = tuple[Episode, Assessment, Any, Context, Judge, int, "int | None"]


def _one(job: _Job) -> list[MutantOutcome]:
    episode, before, question, context, judge, seed, budget = job
    return mutate_episode(episode, before, question, context, judge=judge, seed=seed, budget=budget)


def _run_jobs(jobs: list[_Job], workers: int) -> list[list[MutantOutcome]]:
    """Each job's outcomes, in job order: in this process, or in ``workers`` processes in
    chunks of episodes, watched as the replay's are (:func:`toolreplay.runs.pool.watched_map`:
    Ctrl-C or SIGTERM in the parent stops every worker at once, with no worker's traceback,
    and a worker that dies is named with the episode it held)."""
    if workers <= 1 or len(jobs) < 2:
        return [_one(j) for j in jobs]
    import contextlib

    from toolreplay.runs.pool import watched_map

    n = min(workers, len(jobs))
    size = max(1, len(jobs) // (4 * n))
    chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    found: list[list[MutantOutcome]] = []
    # closed however the loop ends: an error or an interrupt stops the workers now
    with contextlib.closing(
        watched_map(_run_chunk, chunks, n, _init_worker, (), doing="mutating")
    ) as parts:
        for part in parts:
            found += part
    return found


_tell: list[Any] = []  # a worker's queue for (its pid, the episode it takes)


def _init_worker(tell: Any = None) -> None:
    from toolreplay.runs.pool import end_with_parent

    end_with_parent()
    _tell[:] = [tell] if tell is not None else []


def _run_chunk(jobs: list[_Job]) -> list[list[MutantOutcome]]:
    import os

    done: list[list[MutantOutcome]] = []
    for job in jobs:
        if _tell:
            e = job[0]
            _tell[0].put((os.getpid(), f"{e.configuration}/{e.question_id}/trial-{e.trial}"))
        done.append(_one(job))
    return done


def summary_rows(run: MutationRun, key: str) -> Sequence[tuple[str, Score]]:
    """(name, score) rows for ``key`` (``configuration``, ``question_id``, ``operator``,
    ``group``, or ``check``)."""
    return list((run.by_check() if key == "check" else run.by(key)).items())


__all__ = [
    "EQUIVALENT", "FAILURE_MODE", "KILLED", "SURVIVED", "VERDICT", "MutantOutcome",
    "MutationRun", "Score", "context_of", "contexts_of", "mutate", "mutate_collected",
    "mutate_episode", "percent", "summary_rows",
]  # fmt: skip
