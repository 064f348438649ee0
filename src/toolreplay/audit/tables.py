"""Audit results: checks, the audit, and the passed-count tables of the faithful and near-miss arms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolreplay.cassettes.manifest import (
    Manifest,
)
from toolreplay.evals import EvalSuite
from toolreplay.judging.assessment import AssessedEpisode
from toolreplay.judging.verdicts import Judge
from toolreplay.results.format import Ablation, AuditTable, Fidelity, Flip, TableRow
from toolreplay.results.format import Check as CheckRecord
from toolreplay.runs.configuration import (
    Configuration,
    Progress,
)
from toolreplay.wire.episode import Episode

#: The audit's checks, in the order every audit reports them (:mod:`toolreplay.audit.run`,
#: :mod:`toolreplay.audit.suite_folder`).
CHECK_NAMES = (
    "baseline_heuristics",
    "baseline_properties",
    "ablation",
    "judge_breadth",
    "near_miss",
    "arm_parity",
    "completeness",
)


@dataclass(frozen=True)
class Check:
    """One fidelity check: ``name``, ``passed``, one-line ``explanation``, ``evidence`` lines.
    ``applicable`` False: the set lacks what the check needs (a set recorded by the pytest
    plugin has no study baseline to ablate); it is reported as not applicable, never as a
    pass, and ``passed`` is False."""

    name: str
    passed: bool
    explanation: str
    evidence: tuple[str, ...] = ()
    applicable: bool = True

    @classmethod
    def not_applicable(cls, name: str, why: str) -> Check:
        return cls(name, False, why, applicable=False)

    def to_record(self) -> CheckRecord:
        """As results store it: ``name``, ``passed``, ``explanation``, ``evidence``; a check
        that does not apply has ``passed`` false and ``not_applicable`` true (the field is
        absent otherwise)."""
        record = CheckRecord(
            name=self.name,
            passed=self.passed,
            explanation=self.explanation,
            evidence=list(self.evidence),
        )
        if not self.applicable:
            record.not_applicable = True
        return record


@dataclass(frozen=True)
class Audit:
    """Checks, the side-by-side tables, ablation flips and narrow-judge flips."""

    checks: tuple[Check, ...]
    tables: Mapping[str, AuditTable]
    ablations: tuple[Ablation, ...]
    judge_flips: tuple[Flip, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        """No check that applies failed (and at least one applies)."""
        applied = [c for c in self.checks if c.applicable]
        return bool(applied) and all(c.passed for c in applied)

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    def to_fidelity(self) -> Fidelity:
        """The audit as results store it (results.json's ``fidelity``)."""
        return Fidelity(
            passed=self.passed,
            checks=[c.to_record() for c in self.checks],
            tables=dict(self.tables),
            ablations=list(self.ablations),
            judge_flips=list(self.judge_flips),
        )


Key = tuple[str, str]


def replay_all(
    set_dir: Path,
    manifest: Manifest,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    have: Mapping[Key, Episode],
    progress: Progress | None,
    workers: int = 1,
    judge: Judge | None = None,
    others: Sequence[Judge] = (),
) -> tuple[dict[Key, Episode], dict[Key, str]]:
    """Every question of every configuration in ``configs``: the episodes of ``have`` as they
    are, the others replayed by ``workers`` processes. Returns ``(episodes, errors)`` keyed
    ``(configuration, question_id)``; an episode that did not replay is in ``errors`` with the
    first line of its error, not in ``episodes``. With ``judge``, each episode replayed here
    is assessed by it (and by each judge of ``others``) in the worker that replayed it, and
    :func:`passes` reads those assessments."""
    from toolreplay.runs.replay import Job, replay_outcomes

    episodes: dict[Key, Episode] = {}
    errors: dict[Key, str] = {}
    jobs = [
        Job(config, q.id)
        for config in configs
        for q in suite.questions
        if (config.name, q.id) not in have
    ]
    results = replay_outcomes(
        set_dir, manifest, suite, jobs, workers=workers, progress=progress, judge=judge,
        others=others,
    )  # fmt: skip
    replayed: dict[Key, Episode | BaseException] = {}
    for job, result in zip(jobs, results, strict=True):
        if isinstance(result, AssessedEpisode):  # judged where it was replayed
            ep = result.episode
            VERDICTS[(id(judge), id(ep))] = (ep, result.assessment.passed)
            for other, passed in zip(others, result.others, strict=True):
                VERDICTS[(id(other), id(ep))] = (ep, passed)
            result = ep
        replayed[(job.configuration.name, job.question_id)] = result
    for config in configs:
        for q in suite.questions:
            key = (config.name, q.id)
            result = have.get(key) or replayed[key]
            if isinstance(result, BaseException):
                errors[key] = str(result).splitlines()[0]
            else:
                episodes[key] = result
    return episodes, errors


#: Verdicts of the audit in progress, by (judge, episode object): the checks ask for the same
#: episode's verdict several times (tables, flips, ablations). Emptied when the audit ends.
VERDICTS: dict[tuple[int, int], tuple[Episode, bool]] = {}


def passes(judge: Judge, episode: Episode, suite: EvalSuite) -> bool:
    """Whether ``episode`` passes by ``judge`` for its question (the one pass rule,
    :func:`toolreplay.judging.assessment.assess`), judged once per judge and episode."""
    key = (id(judge), id(episode))
    hit = VERDICTS.get(key)
    if hit is not None and hit[0] is episode:
        return hit[1]
    from toolreplay.judging.assessment import assess

    passed = assess(episode, suite.question(episode.question_id), judge).passed
    VERDICTS[key] = (episode, passed)  # the episode is kept: its id cannot be reused
    return passed


def pass_table(
    title: str,
    names: Sequence[str],
    suite: EvalSuite,
    episodes: Mapping[Key, Episode],
    judge: Judge,
    source: Mapping[str, str] | None = None,
) -> AuditTable:
    """The table ``title``, by ``judge``, one row per name (``name``, ``source``, ``passed``,
    ``total``, ``missing``);
    ``source`` maps a row name to the configuration whose episodes stand for it (e.g. a
    weakened baseline). ``total`` is every question; ``missing`` counts episodes that could not
    be replayed (they count as not passed)."""
    rows = []
    for name in names:
        src = (source or {}).get(name, name)
        eps = [episodes[(src, q.id)] for q in suite.questions if (src, q.id) in episodes]
        rows.append(
            TableRow(
                name=name,
                source=src,
                passed=sum(1 for e in eps if passes(judge, e, suite)),
                total=len(suite.questions),  # an episode that did not replay counts as failed
                missing=len(suite.questions) - len(eps),
            )
        )
    return AuditTable(title=title, judge=judge.name, rows=rows)


def format_table(table: AuditTable) -> str:
    """A :func:`pass_table` on one line: ``NAME PASSED/TOTAL`` per row, comma-separated."""
    return ", ".join(f"{r.name} {r.passed}/{r.total}" for r in table.rows)








STANDIN_FINGERPRINT = "toolreplay-standin"  # the stand-in's system_fingerprint
