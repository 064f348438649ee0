"""The fidelity audit of a set recorded by the pytest plugin (:mod:`toolreplay.runs.anyset`).

The same six checks as a study's set (:mod:`toolreplay.audit.run`), each applied as far as
such a set allows, and otherwise reported **not applicable** (never as a pass):

1. ``baseline_heuristics``, 2. ``ablation``, 4. ``near_miss``: not applicable: the set has no
   study baseline with heuristics to ablate, and its episodes are not run by the study's hosts;
3. ``judge_breadth``: every question's measure is one the judge (with the eval file's declared
   measures) can accept;
5. ``arm_parity``: with two or more configurations (test modules), each used the same model,
   sampling temperature, system prompt and tool schemas, read from the recorded request
   bodies; not applicable with one configuration (nothing to compare);
6. ``completeness``: every question has at least one episode in every configuration, every
   cassette was read, every cassette's sha256 equals the manifest's (not edited or re-recorded
   since it was written); episodes no question takes and recovered faults are listed.

A missing ``manifest.json`` never crashes it: the caller writes one first
(:func:`toolreplay.runs.anyset.ensure_manifest`), and without one the sha256 part of check 6
says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolreplay.audit.tables import Audit, Check
from toolreplay.cassettes.manifest import Manifest, manifest_path
from toolreplay.evals import EvalSuite
from toolreplay.judging.verdicts import Judge
from toolreplay.runs.anyset import AnySet, changed_cassettes

_NO_STUDY = (
    "not applicable: a set recorded by the pytest plugin has no study baseline with "
    "heuristics to check or ablate"
)


def _rows(found: AnySet, suite: EvalSuite, judge: Judge) -> dict[str, Any]:
    from toolreplay.runs.trials import trial_outcome

    rows = []
    for name in found.configurations:
        eps = [
            e.episode for e in found.episodes if e.trial == 1 and e.episode.configuration == name
        ]
        by_q = {e.question_id: e for e in eps}
        rows.append(
            {
                "name": name,
                "source": name,
                "passed": sum(
                    1
                    for q in suite.questions
                    if q.id in by_q and trial_outcome(1, by_q[q.id], judge, q)["passed"]
                ),
                "total": len(suite.questions),
                "missing": sum(1 for q in suite.questions if q.id not in by_q),
            }
        )
    return {"title": "Episodes read from the cassettes (trial 1): passed, as results.json "
                     "says (the judge, no fabricated value, every expectation met)",
            "judge": judge.name,
            "rows": rows}  # fmt: skip


def _fingerprint(found: AnySet, name: str) -> dict[str, set[str]]:
    """What the configuration's recorded requests sent: models, temperatures, system prompts
    and tool schemas (canonical JSON), as sets."""
    from toolreplay.cassettes.episodes import read_wire_episodes
    from toolreplay.cassettes.store import load_cassette

    out: dict[str, set[str]] = {"model": set(), "temperature": set(), "system prompt": set(),
                                "tool schemas": set()}  # fmt: skip
    cassettes = {e.cassette for e in found.episodes if e.episode.configuration == name}
    for cassette in sorted(cassettes):
        for wire in read_wire_episodes(load_cassette(found.folder / cassette)):
            for r in wire.rounds:
                body = r.exchange.request_body
                out["model"].add(str(body.get("model")))
                out["temperature"].add(json.dumps(body.get("temperature")))
                system = [m.get("content") for m in body["messages"] if m.get("role") == "system"]
                out["system prompt"].add(json.dumps(system, ensure_ascii=False))
                if body.get("tools"):
                    out["tool schemas"].add(
                        json.dumps(body["tools"], sort_keys=True, ensure_ascii=False)
                    )
    return out


def _parity(found: AnySet) -> Check:
    if len(found.configurations) < 2:
        return Check.not_applicable(
            "arm_parity",
            f"not applicable: one configuration ({', '.join(found.configurations)}), nothing "
            "to compare",
        )
    prints = {c: _fingerprint(found, c) for c in found.configurations}
    differ = []
    evidence = []
    for part in ("model", "temperature", "system prompt", "tool schemas"):
        values = {c: sorted(p[part]) for c, p in prints.items()}
        if len({json.dumps(v) for v in values.values()}) > 1:
            differ.append(part)
            evidence += [f"{c}: {part} {', '.join(v)[:120]}" for c, v in values.items()]
        else:
            evidence.append(f"{part}: the same in every configuration")
    if differ:
        return Check(
            "arm_parity",
            False,
            f"the configurations differ in {', '.join(differ)} (read from the recorded requests)",
            tuple(evidence),
        )
    return Check(
        "arm_parity",
        True,
        "every configuration sent the same model, temperature, system prompt and tool schemas",
        tuple(evidence),
    )


def _completeness(found: AnySet, suite: EvalSuite, manifest: Manifest | None) -> Check:
    have = {(e.episode.configuration, e.episode.question_id) for e in found.episodes}
    missing = [
        f"{c}/{q.id}"
        for c in found.configurations
        for q in suite.questions
        if (c, q.id) not in have
    ]
    evidence = [
        f"{len(found.episodes)} episode(s) read from the cassettes of {found.folder}, "
        f"{len(found.configurations)} configuration(s) × {len(suite.questions)} question(s), "
        f"up to {found.trials} trial(s) each"
    ]
    evidence += [f"no episode for {m}" for m in missing]
    evidence += [f"not read: {e}" for e in found.errors]
    evidence += [f"no question takes {u}" for u in found.unmatched]
    evidence += [f"recovered fault in {e.key}: {f}" for e in found.episodes for f in e.faults]
    changed: list[str] = []
    if manifest is None:
        evidence.append(f"{manifest_path(found.folder)} missing: cassette edits cannot be told")
    else:
        changed = changed_cassettes(found, manifest)
        if changed:
            evidence.append(
                "changed since the manifest was written (edited or re-recorded): "
                + ", ".join(changed)
                + f"; if re-recorded on purpose, delete {manifest_path(found.folder)} and run "
                "again"
            )
        else:
            evidence.append("every cassette's sha256 matches the manifest")
    what = []
    if missing:
        what.append(f"{len(missing)} configuration × question without an episode")
    if found.errors:
        what.append(f"{len(found.errors)} cassette(s) not read")
    if changed:
        what.append(f"{len(changed)} episode(s) changed since the manifest was written")
    if what:
        return Check("completeness", False, "; ".join(what), tuple(evidence))
    return Check(
        "completeness",
        True,
        "every configuration × question has an episode, every cassette was read and "
        + ("matches the manifest" if manifest else "(no manifest: edits cannot be told)"),
        tuple(evidence),
    )


def run_any_set_audit(
    found: AnySet, suite: EvalSuite, judge: Judge, manifest: Manifest | None
) -> Audit:
    """The audit of a plugin-recorded set (module docstring); never raises for a missing
    manifest (``manifest`` None)."""
    narrow = [q for q in suite.questions if not judge.for_question(q).accepts(q.measure)]
    if narrow:
        breadth = Check(
            "judge_breadth",
            False,
            f"judge {judge.name} cannot accept what "
            + ", ".join(f"{q.id} ({q.measure})" for q in narrow)
            + " measures",
            tuple(f"{q.id}: measures {q.measure}" for q in suite.questions),
        )
    else:
        breadth = Check(
            "judge_breadth",
            True,
            f"judge {judge.name} accepts every declared measure",
            tuple(f"{q.id}: measures {q.measure}" for q in suite.questions),
        )
    checks = (
        Check.not_applicable("baseline_heuristics", _NO_STUDY),
        Check.not_applicable("ablation", _NO_STUDY),
        breadth,
        Check.not_applicable(
            "near_miss", "not applicable: no weakened baseline to replay without a study baseline"
        ),
        _parity(found),
        _completeness(found, suite, manifest),
    )
    return Audit(checks, {"faithful": _rows(found, suite, judge)}, (), ())


def any_set_results(
    whole: EvalSuite,
    folder: Path,
    want_c: Sequence[str] = (),
    want_q: Sequence[str] = (),
    *,
    cassettes: Sequence[tuple[str, Path]] | None = None,
    write_manifest: bool = True,
) -> tuple[dict[str, Any], Audit, bool]:
    """``(results, audit, manifest_written)`` for the plugin-recorded set at ``folder``
    judged with the eval file ``whole``: every episode read from the cassettes
    (:func:`~toolreplay.runs.anyset.read_any_set`; ``cassettes`` limits it to those
    ``(configuration, path)``), trial 1 judged into ``results.json``'s episodes, every trial
    into pass^k, and the audit (:func:`run_any_set_audit`) as ``fidelity``. ``want_c`` and
    ``want_q`` select configurations and question ids. The manifest is read, or, when missing,
    written inside ``folder`` (``write_manifest``; otherwise, or when the folder cannot be
    written, built in memory and the audit told there is none). Raises
    :class:`~toolreplay.runs.anyset.AnySetError`,
    :class:`~toolreplay.cassettes.errors.CassetteError` or :class:`ValueError` (an unknown
    selection, starting with ``--``), with one line."""
    from toolreplay.judging.verdicts import FULL_JUDGE
    from toolreplay.results.build import build_results
    from toolreplay.runs.anyset import build_manifest, ensure_manifest, read_any_set
    from toolreplay.runs.trials import add_trial_metrics, trial_outcome

    found = read_any_set(folder, whole, cassettes)
    written = False
    try:
        if not (write_manifest or manifest_path(folder).exists()):
            raise FileNotFoundError  # not asked to write one
        manifest, written = ensure_manifest(found, whole)
        audit = run_any_set_audit(found, whole, FULL_JUDGE, manifest)
    except OSError:  # none, and none written (not asked to, or a read-only folder)
        manifest = build_manifest(found, whole)
        audit = run_any_set_audit(found, whole, FULL_JUDGE, None)
    known_q = [q.id for q in whole.questions]
    if bad := [q for q in want_q if q not in known_q]:
        raise ValueError(f"--questions: unknown {', '.join(bad)}; {whole.path} has {known_q}")
    if bad := [c for c in want_c if c not in found.configurations]:
        raise ValueError(
            f"--configurations: unknown {', '.join(bad)}; {folder} holds "
            f"{', '.join(found.configurations)}"
        )
    suite = whole
    if want_q:
        suite = replace(whole, questions=tuple(q for q in whole.questions if q.id in want_q))
    names = [c for c in found.configurations if not want_c or c in want_c]
    chosen = [
        e
        for e in found.episodes
        if e.episode.configuration in names
        and e.episode.question_id in {q.id for q in suite.questions}
    ]
    results = build_results(
        manifest, [e.episode for e in chosen if e.trial == 1], names, FULL_JUDGE, suite.by_id
    )
    try:
        shown = Path(whole.path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        shown = Path(whole.path).name
    results["selection"] = {
        "eval_file": shown,
        "configurations": names,
        "questions": [q.id for q in suite.questions],
        "all_configurations": len(names) == len(found.configurations),
        "all_questions": len(suite.questions) == len(whole.questions),
    }
    outcomes = [
        trial_outcome(e.trial, e.episode, FULL_JUDGE, suite.by_id.get(e.episode.question_id))
        for e in chosen
    ]
    add_trial_metrics(results, outcomes, [q.id for q in suite.questions], found.trials)
    results["fidelity"] = audit.to_dict()
    return results, audit, written
