"""The replayed source: a cassette set recorded by ``toolreplay record``, every episode
replayed through the study's hosts (offline, record mode ``none``), by worker processes or
from shard files.

A run replays, in one fixed order (:meth:`ReplayedSet.jobs`): every trial of the selected
configurations × questions, then the episodes the fidelity audit adds (trial 1 of every study
and ablation configuration × question of the whole eval file not already in the first part).
Each episode is assessed once, in the worker process that replayed it
(:func:`toolreplay.runs.replay.replay_outcomes` with the run's judge; episodes taken from shard
files are assessed here); the audit (:func:`toolreplay.audit.run.run_audit`, all seven checks
apply) reads the episodes and their assessments instead of replaying or judging them again
with that judge (it judges again only with another judge: the narrow judge of its judge-breadth
and near-miss checks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from toolreplay.audit.run import AUDIT_JUDGES, prepare_audit, run_audit
from toolreplay.audit.tables import CHECK_NAMES, Audit, Check
from toolreplay.audit.traffic import FACTS_PROBE, clear_audit_caches
from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.manifest import Manifest, cassette_path, episode_key, read_manifest
from toolreplay.evals import EvalSuite
from toolreplay.evaluation.sources import (
    Collected,
    Selection,
    SelectionError,
    SourceError,
)
from toolreplay.judging.assessment import AssessedEpisode, Assessment, assess
from toolreplay.judging.verdicts import Judge
from toolreplay.runs.configuration import (
    Configuration,
    Progress,
    ablation_configurations,
    study_configurations,
)
from toolreplay.runs.replay import CassetteProbe, Job, ProbeSet
from toolreplay.runs.trials import trial_jobs
from toolreplay.wire.episode import Episode

Outcome = Episode | BaseException


def with_assessment(
    outcome: Episode | AssessedEpisode | BaseException, suite: EvalSuite, judge: Judge
) -> AssessedEpisode | BaseException:
    """``outcome`` with its assessment by ``judge`` for its question of ``suite``: as it is
    when a replay worker assessed it already (or it is a replay error), else assessed here."""
    if isinstance(outcome, AssessedEpisode | BaseException):
        return outcome
    return AssessedEpisode(outcome, assess(outcome, suite.by_id.get(outcome.question_id), judge))


def _audit_probe(jobs: Sequence[Job]) -> CassetteProbe:
    """What the replay workers read for the audit: each trial-1 cassette's facts
    (:data:`~toolreplay.audit.traffic.FACTS_PROBE`), and what each study of the jobs'
    configurations reads for its baseline check (its ``baseline_audit.cassette_probe``)."""
    studies = {id(j.configuration.study_): j.configuration.study_ for j in jobs}
    probes: list[CassetteProbe] = [FACTS_PROBE]
    for study in studies.values():
        found = getattr(study.baseline_audit, "cassette_probe", None)
        if found is not None:
            probes.append(found)
    return probes[0] if len(probes) == 1 else ProbeSet(probes)


def select(whole: EvalSuite, selection: Selection) -> tuple[EvalSuite, list[Configuration]]:
    """The eval file restricted to the selected questions, and its study configurations
    restricted to the selected names; :class:`SelectionError` naming an unknown one."""
    configs = study_configurations(whole)
    known_c = [c.name for c in configs]
    if bad := [c for c in selection.configurations if c not in known_c]:
        raise SelectionError(
            f"--configurations: unknown {', '.join(bad)}; this eval runs {', '.join(known_c)}"
        )
    if bad := [q for q in selection.questions if q not in whole.by_id]:
        raise SelectionError(
            f"--questions: unknown {', '.join(bad)}; {whole.path} has {whole.known_ids()}"
        )
    suite = whole
    if selection.configurations:
        configs = [c for c in configs if c.name in selection.configurations]
    if selection.questions:
        chosen = set(selection.questions)
        suite = replace(whole, questions=tuple(q for q in whole.questions if q.id in chosen))
    return suite, configs


@dataclass(frozen=True)
class ReplayedSet:
    """The set at ``set_dir`` (``cassettes/<set>``), replayed by ``workers`` processes; with
    ``outcomes`` (one per :meth:`jobs` entry, from shard files), nothing is replayed again.
    ``trials`` limits the trials replayed (default: every trial the manifest records);
    ``audit`` False skips the audit and its episodes (its checks are then all reported not
    applicable: ``toolreplay diff`` compares answers, not fairness)."""

    set_dir: Path
    workers: int = 1
    outcomes: Sequence[Outcome] | None = None
    trials: int | None = None
    audit: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "set_dir", Path(self.set_dir))  # a str path is a path

    def manifest(self) -> Manifest:
        """The set's manifest; :class:`SourceError` when missing or malformed."""
        try:
            return read_manifest(self.set_dir)
        except CassetteError as exc:
            raise SourceError(str(exc)) from None

    def jobs(
        self, whole: EvalSuite, selection: Selection, manifest: Manifest | None = None
    ) -> tuple[list[Job], int]:
        """Every episode the run replays, in the fixed order of the module docstring, and how
        many of them are the selection's trials (the rest are the audit's); ``manifest`` when
        already read."""
        suite, configs = select(whole, selection)
        jobs = trial_jobs(suite, configs, self._trials(manifest or self.manifest()))
        if not self.audit:
            return jobs, len(jobs)
        have = {(j.configuration.name, j.question_id) for j in jobs if j.trial == 1}
        extra = [
            Job(c, q.id)
            for c in [*study_configurations(whole), *ablation_configurations(whole)]
            for q in whole.questions
            if (c.name, q.id) not in have
        ]
        return [*jobs, *extra], len(jobs)

    def _trials(self, manifest: Manifest) -> int:
        return manifest.trials if self.trials is None else min(self.trials, manifest.trials)

    def collect(
        self,
        whole: EvalSuite,
        selection: Selection,
        judge: Judge,
        progress: Progress | None = None,
    ) -> Collected:
        """Replay (or take from shards) every episode, each assessed once (by the worker that
        replayed it), and audit the whole eval file. :class:`SourceError` before anything
        replays when selected episodes have no cassette file (the first one's error and how
        many), else for the first selected episode that does not replay (the audit's own
        episodes are reported by its completeness check instead). What the replay workers
        sent for the audit is not kept past a failure
        (:func:`~toolreplay.audit.traffic.clear_audit_caches`)."""
        try:
            return self._collect(whole, selection, judge, progress)
        except BaseException:
            if self.audit:
                clear_audit_caches()
            raise

    def _collect(
        self, whole: EvalSuite, selection: Selection, judge: Judge, progress: Progress | None
    ) -> Collected:
        suite, configs = select(whole, selection)
        manifest = self.manifest()
        jobs, n_trials = self.jobs(whole, selection, manifest)
        outcomes: Sequence[AssessedEpisode | BaseException]
        if self.outcomes is None:
            from toolreplay.runs.replay import replay_outcomes  # looked up at each call

            self._refuse_missing(whole, manifest, jobs[:n_trials])
            outcomes = replay_outcomes(
                self.set_dir, manifest, whole, jobs, workers=self.workers, progress=progress,
                judge=judge, others=AUDIT_JUDGES if self.audit else (),
                probe=_audit_probe(jobs) if self.audit else None,
                meanwhile=(lambda: prepare_audit(whole)) if self.audit else None,
            )  # fmt: skip
        else:  # from shard files: replayed elsewhere, assessed here (the audit judges its own)
            outcomes = [with_assessment(o, whole, judge) for o in self.outcomes]
        episodes: list[AssessedEpisode] = []
        for job, outcome in zip(jobs[:n_trials], outcomes[:n_trials], strict=True):
            if isinstance(outcome, BaseException):
                raise SourceError(str(outcome)) from outcome
            recorded = manifest.episodes.get(
                episode_key(job.configuration.name, job.question_id, job.trial)
            )
            episode = replace(
                outcome.episode, trial=job.trial, cassette=recorded.cassette if recorded else ""
            )
            episodes.append(AssessedEpisode(episode, outcome.assessment))
        if not self.audit:
            skipped = "not applicable: not audited (run without the audit)"
            audit = Audit(tuple(Check.not_applicable(n, skipped) for n in CHECK_NAMES), {}, ())
            return self._collected(manifest, suite, configs, whole, episodes, audit)
        # The audit is about the set, not the selection: it covers the whole eval file, from
        # the episodes replayed above (one that did not replay is replayed again to say why).
        have: dict[tuple[str, str], Episode] = {}
        assessed: dict[tuple[str, str], Assessment] = {}
        narrow: dict[tuple[str, str], bool] = {}  # passes by the audit's narrow judge
        for job, outcome, a in zip(jobs, outcomes, [*episodes, *outcomes[n_trials:]], strict=True):
            if job.trial != 1 or isinstance(a, BaseException):
                continue
            key = (job.configuration.name, job.question_id)
            have[key], assessed[key] = a.episode, a.assessment
            if isinstance(outcome, AssessedEpisode) and outcome.others:
                narrow[key] = outcome.others[0]
        audit = run_audit(
            self.set_dir, whole, judge, episodes=have, assessments=assessed,
            narrow_passed=narrow,
        )  # fmt: skip
        return self._collected(manifest, suite, configs, whole, episodes, audit)

    def _refuse_missing(self, whole: EvalSuite, manifest: Manifest, jobs: Sequence[Job]) -> None:
        """:class:`SourceError` before anything is replayed when a selected episode has no
        cassette file: the error its replay gives (where it was looked for, the command that
        records it) and how many of ``jobs`` have none, so a run that cannot pass does not
        first replay the rest (the audit's own episodes are left to its completeness check)."""
        from toolreplay.runs.replay import replay_outcomes

        missing = [
            job
            for job in jobs
            if not cassette_path(
                self.set_dir, job.configuration.name, job.question_id, job.trial
            ).is_file()
        ]
        if not missing:
            return
        [outcome] = replay_outcomes(self.set_dir, manifest, whole, missing[:1])
        if not isinstance(outcome, BaseException):  # it appeared meanwhile: replay as usual
            return
        more = (
            f" ({len(missing):,} of the {len(jobs):,} episodes to replay have no cassette)"
            if len(missing) > 1
            else ""
        )
        raise SourceError(f"{outcome}{more}") from outcome

    def _collected(
        self,
        manifest: Manifest,
        suite: EvalSuite,
        configs: Sequence[Configuration],
        whole: EvalSuite,
        episodes: Sequence[AssessedEpisode],
        audit: Audit,
    ) -> Collected:
        return Collected(
            manifest=manifest,
            suite=suite,
            configurations=tuple(c.name for c in configs),
            all_configurations=len(study_configurations(whole)),
            episodes=tuple(episodes),
            trials=self._trials(manifest),
            audit=audit,
            folder=self.set_dir,
        )
