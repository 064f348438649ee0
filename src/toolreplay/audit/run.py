"""Fidelity audit: is the comparison fair?

Seven checks, each with ``passed``, a one-line ``explanation`` and its ``evidence`` lines:

1. ``baseline_heuristics`` (the study's check, :attr:`Study.baseline_audit`; for the weather
   study :mod:`toolreplay.study.weather.baseline`): the oneshot baseline runs with all three
   reference heuristics on (admin-seat preference, population order, 市 retry), both as
   configured now and as recorded (manifest); each is exercised by at least one recorded
   episode; and every recorded call of the full and the ablated baselines is the one a
   reference written from the study's description (never imported from the implementation)
   makes: the same query parameters, the 市 retry exactly when due, the place it picks from the
   answers recorded for that call (so a retry whose answer is thrown away fails). Each
   departure names the heuristic at fault. A heuristic "changed the place chosen" only where
   the returned place differs between the full and the ablated baseline's recorded tool
   results for the same call.
2. ``baseline_properties`` (the study's too, :meth:`BaselineAudit.check_properties
   <toolreplay.studies.BaselineAudit.check_properties>`; for the weather study
   :mod:`toolreplay.study.weather.properties`): the baseline's code, with every heuristic on and
   without each in turn, run on generated tool answers (seeded, so the same cases every run)
   and held against the same reference, so a weakened heuristic fails even when no eval
   question's answer gives it something to decide; fails naming the heuristic and the
   smallest counterexample found.
3. ``ablation``: the baseline replayed with each heuristic removed (its own cassettes); which
   questions flip. An ablated baseline whose every recorded tool result equals the full
   baseline's is reported as "ablation had no effect on any question", with whether that is
   expected (the recorded geocoding answers give the heuristic nothing to change) or not (they
   do: the full baseline does not use the heuristic's result, and the check fails).
4. ``judge_breadth``: every question's declared measure is one the judge in use can accept, and
   the judge passes every correct phrasing of the corpus next to the eval file
   (``phrasings.yaml``: ℃, 度, 摄氏度, °F, Chinese numerals, ranges, lists...), so narrowing any
   unit fails even when the recorded answers use one format; every episode is re-judged with
   the narrow (°C only) judge to show what would flip.
5. ``near_miss``: weakened baseline (市 retry removed) + narrow judge, next to the faithful
   table; the faithful table is only faithful when checks 1, 2 and 4 pass.
6. ``arm_parity``: every configuration used the same model, sampling parameters, system prompt,
   question set, round cap and (per toolset) tool descriptions, read from the recorded request
   bodies and the manifest, not from today's code.
7. ``completeness``: every configuration × question has a cassette and replays with every
   interaction played; the manifest's prompt, tool-schema and stand-in-hint fingerprint matches
   the code and eval file; its provenance agrees with what was recorded (``live`` with the
   stand-in's model or replies fails).

:func:`run_audit` returns an :class:`Audit`; ``Audit.to_fidelity()`` is the ``"fidelity"`` entry of
``reports/results.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolreplay.audit.checks import ablation_summary, check_completeness, check_parity
from toolreplay.audit.judges import ablation_effect, corpus_breadth
from toolreplay.audit.tables import (
    VERDICTS,
    Audit,
    Check,
    Key,
    format_table,
    pass_table,
    passes,
    replay_all,
)
from toolreplay.audit.traffic import clear_audit_caches, kept_until_audit_ends
from toolreplay.cassettes.manifest import (
    read_manifest,
)
from toolreplay.evals import EvalSuite
from toolreplay.judging.assessment import Assessment
from toolreplay.judging.verdicts import NARROW_JUDGE, Judge
from toolreplay.results.format import Ablation, Flip
from toolreplay.runs.configuration import (
    Configuration,
    Progress,
    ablation_configurations,
    study_configurations,
)
from toolreplay.studies import load_study
from toolreplay.wire.episode import Episode

#: The judges the audit judges episodes with besides the one in use: the narrow judge
#: (°C only) of the judge-breadth and near-miss checks, on trial 1.
AUDIT_JUDGES = (NARROW_JUDGE,)


#: Baseline properties checks made before the audit runs (:func:`prepare_audit`), by study
#: name: taken by the audit instead of made then, and emptied when it ends.
_PREPARED: dict[str, Any] = kept_until_audit_ends()


def prepare_audit(suite: EvalSuite) -> None:
    """Make now the checks of ``suite``'s audit that read no episode, for :func:`run_audit` to
    take instead of making them: the study's baseline properties check (about a second,
    whatever the set's size). A run calls it while its replay workers replay
    (:func:`toolreplay.runs.replay.replay_outcomes`'s ``meanwhile``), so the check leaves the
    run's serial tail. Nothing for a set recorded by the pytest plugin."""
    if suite.reads_cassettes:
        return
    domain = load_study(suite.study)
    if domain.baseline_audit is not None and domain.name not in _PREPARED:
        _PREPARED[domain.name] = domain.baseline_audit.check_properties()


def run_audit(
    set_dir: Path,
    suite: EvalSuite,
    judge: Judge,
    *,
    episodes: Mapping[Key, Episode] | None = None,
    assessments: Mapping[Key, Assessment] | None = None,
    progress: Progress | None = None,
    workers: int = 1,
    narrow_passed: Mapping[Key, bool] | None = None,
) -> Audit:
    """Run every check on the cassette set at ``set_dir``.

    ``judge`` is the judge in use; ``episodes`` may hold study episodes already replayed (keyed
    ``(configuration, question_id)``) so they are not replayed twice; the others are replayed
    by ``workers`` processes (:func:`toolreplay.runs.replay.replay_outcomes`) and assessed by
    ``judge`` in the worker that replayed each; ``assessments`` (same keys) are the given
    episodes' assessments by ``judge``, read instead of judging them again;
    ``narrow_passed`` (same keys) whether they pass by the narrow judge of the
    judge-breadth and near-miss checks (:data:`AUDIT_JUDGES`; another judgment, made here for
    an episode given without one, and in the worker for one replayed here). Replay failures
    are reported by the ``completeness`` check, not raised. Raises
    :class:`~toolreplay.cassettes.errors.CassetteError` only when the manifest is missing or
    malformed. For an eval file of a set recorded by the pytest plugin (``cassettes:`` or
    ``tests:``), ``set_dir`` is that folder and the audit is
    :func:`toolreplay.audit.suite_folder.audit_suite_folder` (a missing manifest reported by its
    completeness check, never raised; the study's checks not applicable).
    """
    if suite.reads_cassettes:  # a set recorded by the pytest plugin: its own checks
        return _suite_folder_audit(set_dir, suite, judge)
    try:
        for key, episode in (episodes or {}).items():
            if assessments and key in assessments:
                VERDICTS[(id(judge), id(episode))] = (episode, assessments[key].passed)
            if narrow_passed and key in narrow_passed:
                VERDICTS[(id(NARROW_JUDGE), id(episode))] = (episode, narrow_passed[key])
        return _run_audit(set_dir, suite, judge, episodes, progress, workers)
    finally:
        VERDICTS.clear()
        clear_audit_caches()  # what the checks read of the cassettes is not kept after


def _suite_folder_audit(folder: Path, suite: EvalSuite, judge: Judge) -> Audit:
    """The audit of a plugin-recorded folder (:func:`toolreplay.audit.suite_folder.
    audit_suite_folder`): read-only, so a missing manifest is not written but reported by the
    completeness check, and the study's checks are not applicable. The manifest is read as
    ``toolreplay run`` reads it, without the set-integrity check: a cassette no episode was
    read from has no entry in the manifest a run wrote, and what differs from the manifest is
    the completeness check's to name, not a refusal."""
    from toolreplay.audit.suite_folder import audit_suite_folder
    from toolreplay.cassettes.manifest import manifest_path
    from toolreplay.runs.suite_folder import read_suite_folder

    found = read_suite_folder(folder, suite)
    manifest = read_manifest(folder, check=False) if manifest_path(folder).exists() else None
    return audit_suite_folder(found, suite, judge, manifest)


def _run_audit(
    set_dir: Path,
    suite: EvalSuite,
    judge: Judge,
    episodes: Mapping[Key, Episode] | None,
    progress: Progress | None,
    workers: int,
) -> Audit:
    manifest = read_manifest(set_dir)
    study = study_configurations(suite)
    ablated = ablation_configurations(suite)
    all_eps, errors = replay_all(
        set_dir, manifest, suite, [*study, *ablated], episodes or {}, progress, workers, judge,
        AUDIT_JUDGES,
    )  # fmt: skip
    names = [c.name for c in study]

    # 1. baseline heuristics (the study's check of its baseline toolset)
    domain = load_study(suite.study)
    oneshot = [c for c in study if c.toolset == domain.baseline_toolset]
    if domain.baseline_audit is not None:
        c1 = domain.baseline_audit.check_baseline(set_dir, suite, manifest, oneshot, ablated)
        # 1b. the same heuristics on generated tool answers: needs no lucky question (made
        # while the workers replayed, when the run did: prepare_audit)
        c1b = _PREPARED.pop(domain.name, None)
        if c1b is None:
            c1b = domain.baseline_audit.check_properties()
    else:
        c1 = Check(
            "baseline_heuristics", True, f"the {domain.name} study declares no baseline check"
        )
        c1b = Check(
            "baseline_properties", True, f"the {domain.name} study declares no baseline check"
        )

    # 2. ablation
    ablations = []
    ab_evidence = []
    unexpected: list[str] = []
    for config in ablated:
        base = Configuration(
            config.host, config.toolset, baseline=suite.experiment.baseline, study=suite.study
        ).name
        flips = []
        for q in suite.questions:
            a, b = all_eps.get((base, q.id)), all_eps.get((config.name, q.id))
            if a is None or b is None:
                continue
            before, after = passes(judge, a, suite), passes(judge, b, suite)
            if before != after:
                flip = {"question_id": q.id, "from": before, "to": after}
                flips.append(Flip.model_validate(flip))
        eps = [
            all_eps[(config.name, q.id)] for q in suite.questions if (config.name, q.id) in all_eps
        ]
        passed = sum(1 for e in eps if passes(judge, e, suite))
        effect = ablation_effect(set_dir, suite, base, config)
        ablations.append(
            Ablation(
                heuristic=config.ablated or "",
                configuration=config.name,
                baseline_configuration=base,
                passed=passed,
                total=len(suite.questions),
                missing=len(suite.questions) - len(eps),
                flips=flips,
                no_effect=effect["no_effect"],
                no_effect_expected=effect["expected"],
            )
        )
        shown = ", ".join(
            f"{f.question_id} {'pass' if f.from_ else 'fail'}→{'pass' if f.to else 'fail'}"
            for f in flips
        )
        missing = len(suite.questions) - len(eps)
        ab_evidence.append(
            f"{config.name}: {passed}/{len(suite.questions)}"
            + (f" ({missing} not replayable)" if missing else "")
            + f"; flips: {shown or 'none'}"
            + (f"; {effect['text']}" if effect["text"] else "")
        )
        if effect["no_effect"] and effect["expected"] is False:
            unexpected.append(config.name)
    ab_missing = [k for k in errors if k[0] in {c.name for c in ablated}]
    summary = ablation_summary(ablated, ablations, bool(ab_missing))
    if unexpected:
        summary = (
            f"ablation had no effect on any question for {', '.join(unexpected)}, although the "
            "recorded geocoding answers say removing the heuristic changes a place: the full "
            "baseline does not use that heuristic's result; " + summary
        )
    c2 = Check(
        "ablation",
        not ab_missing and bool(ablated) and not unexpected,
        summary,
        tuple(ab_evidence),
    )

    # 3. judge breadth
    narrow = [q for q in suite.questions if not judge.accepts(q.measure)]
    judge_flips = []
    for (config_name, qid), ep in sorted(all_eps.items()):
        if config_name not in names:
            continue
        full, thin = passes(judge, ep, suite), passes(NARROW_JUDGE, ep, suite)
        if full != thin:
            judge_flips.append(
                Flip.model_validate(
                    {"configuration": config_name, "question_id": qid, "from": full, "to": thin}
                )
            )
    j_evidence = [f"{q.id}: measures {q.measure}" for q in suite.questions]
    j_evidence += [
        f"narrow judge ({NARROW_JUDGE.name}) flips {f.configuration}/{f.question_id} "
        f"{'pass' if f.from_ else 'fail'}→{'pass' if f.to else 'fail'}"
        for f in judge_flips
    ]
    corpus_ok, corpus_text, corpus_evidence = corpus_breadth(suite, judge)
    j_evidence += corpus_evidence
    if narrow:
        why = (
            f"judge {judge.name} cannot accept what "
            + ", ".join(f"{q.id} ({q.measure})" for q in narrow)
            + " measures"
        )
    elif not corpus_ok:
        why = f"judge {judge.name} {corpus_text}"
    else:
        why = (
            f"judge {judge.name} accepts every declared measure and {corpus_text}; the narrow "
            f"{NARROW_JUDGE.name} judge would flip {len(judge_flips)} recorded episode(s)"
        )
    c3 = Check("judge_breadth", not narrow and corpus_ok, why, tuple(j_evidence))

    # 4. near-miss table
    dropped = domain.near_miss_heuristic
    weakened = {
        c.name: Configuration(
            c.host, c.toolset, dropped, suite.experiment.baseline, study=suite.study
        ).name
        for c in study
        if c.toolset == domain.baseline_toolset and dropped in suite.experiment.ablations
    }
    faithful = pass_table("Faithful baseline, judge in use", names, suite, all_eps, judge)
    near = pass_table(
        domain.near_miss_title,
        names,
        suite,
        all_eps,
        NARROW_JUDGE,
        weakened,
    )
    faithful_baseline = c1.passed and c1b.passed
    c4 = Check(
        "near_miss",
        faithful_baseline and c3.passed and len(weakened) > 0,
        (
            f"faithful: {format_table(faithful)}; weakened baseline + narrow judge would have "
            f"read: {format_table(near)}"
        ),
        (
            f"faithful table uses the full baseline and judge {judge.name}"
            + (
                ""
                if faithful_baseline and c3.passed
                else " — but a baseline or judge-breadth check failed, so it is not"
            ),
            f"near-miss table replays {', '.join(weakened.values()) or 'nothing'} "
            f"and judges with {NARROW_JUDGE.name}",
        ),
    )

    # 5. arm parity; 6. completeness
    c5 = check_parity(set_dir, suite, manifest, study)
    c6 = check_completeness(set_dir, suite, manifest, [*study, *ablated], errors)
    return Audit(
        (c1, c1b, c2, c3, c4, c5, c6),
        {"faithful": faithful, "near_miss": near},
        tuple(ablations),
        tuple(judge_flips),
    )
