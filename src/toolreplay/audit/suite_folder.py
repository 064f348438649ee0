"""The fidelity audit of a set recorded by the pytest plugin (:mod:`toolreplay.runs.suite_folder`).

The same seven checks as a study's set (:mod:`toolreplay.audit.run`), each applied as far as
such a set allows, and otherwise reported **not applicable** (never as a pass):

1. ``baseline_heuristics``, 2. ``baseline_properties``, 3. ``ablation``, 5. ``near_miss``: not
   applicable: the set has no study baseline with heuristics to check or ablate, and its
   episodes are not run by the study's hosts;
4. ``judge_breadth``: every question's measure is one the judge (with the eval file's declared
   measures) can accept;
6. ``arm_parity``: the configurations (test modules) the eval file declares as ``arms:`` (two
   or more, among those evaluated) each used the same model, sampling temperature, system
   prompt and tool schemas, read from the recorded request bodies; a differing tool schema is
   shown as the difference (the tool and the JSON path where they part), never cut. Not
   applicable without two declared arms: a suite whose modules test different agents (several
   frameworks, one module each) has nothing that must be equal;
7. ``completeness``: every question evaluated has an episode in some configuration, and in
   every declared arm; every cassette was read, every cassette's sha256 equals the manifest's
   (not edited or re-recorded since it was written); episodes no question takes and recovered
   faults are listed.

``--configurations``/``--questions`` narrow the audit as they narrow the run: only the
selected configurations and questions are checked.

A missing ``manifest.json`` never crashes it: the caller writes one first
(:func:`toolreplay.runs.suite_folder.ensure_manifest`), and without one the sha256 part of check 7
says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolreplay.audit.tables import Audit, Check
from toolreplay.cassettes.manifest import Manifest, manifest_path
from toolreplay.evals import EvalSuite
from toolreplay.judging.verdicts import Judge
from toolreplay.results.format import AuditTable, TableRow
from toolreplay.runs.suite_folder import SuiteFolder, changed_cassettes, key

#: How many differences of one part the parity evidence lists per arm.
_MAX_DIFFERENCES = 8

_NO_STUDY = (
    "not applicable: a set recorded by the pytest plugin has no study baseline with "
    "heuristics to check or ablate"
)


def _rows(
    found: SuiteFolder, suite: EvalSuite, judge: Judge, passed: Mapping[str, bool]
) -> AuditTable:
    """One row per configuration (test module) over the questions its tests asked, as the
    scorecard counts them: a question another module's tests ask is not missing from it. A
    module no episode was read for has no row (a 0/0 would read as a result): the completeness
    check names its cassettes not read."""
    rows = []
    for name in found.configurations:
        eps = [e for e in found.episodes if e.trial == 1 and e.configuration == name]
        if not eps:
            continue
        by_q = {e.question_id: e for e in eps}
        asked = [q for q in suite.questions if q.id in by_q]
        rows.append(
            TableRow(
                name=name,
                source=name,
                passed=sum(1 for q in asked if passed[key(by_q[q.id])]),
                total=len(asked),
                missing=0,
            )
        )
    return AuditTable(
        title="Episodes read from the cassettes (trial 1): passed, as results.json says (the "
        "judge, no fabricated value, every expectation met)",
        judge=judge.name,
        rows=rows,
    )


def _fingerprint(found: SuiteFolder, name: str) -> dict[str, set[str]]:
    """What the configuration's recorded requests sent: models, temperatures, system prompts
    and tool schemas (canonical JSON), as sets."""
    from toolreplay.cassettes import load_recorded
    from toolreplay.wire.reader import read_wire_episodes
    from toolreplay.wire.request_settings import sent_settings

    out: dict[str, set[str]] = {"model": set(), "temperature": set(), "system prompt": set(),
                                "tool schemas": set()}  # fmt: skip
    cassettes = {e.cassette for e in found.episodes if e.configuration == name}
    for cassette in sorted(cassettes):
        for wire in read_wire_episodes(load_recorded(found.folder / cassette)):
            for r in wire.rounds:
                sent = sent_settings(r.exchange)
                out["model"].add(sent.model or "None")
                out["temperature"].add(json.dumps(sent.temperature))
                out["system prompt"].add(json.dumps(list(sent.system), ensure_ascii=False))
                if sent.tools:
                    out["tool schemas"].add(
                        json.dumps(sent.tools, sort_keys=True, ensure_ascii=False)
                    )
    return out


def _parity(found: SuiteFolder, arms: Sequence[str]) -> Check:
    chosen = [c for c in found.configurations if c in arms]
    if len(chosen) < 2:
        if len(found.configurations) < 2:
            why = f"one configuration ({', '.join(found.configurations)}), nothing to compare"
        elif not arms:
            why = (
                f"{len(found.configurations)} configurations, none declared an arm; declare "
                "the ones that must be compared with `arms: [module, ...]` in the eval file"
            )
        else:
            why = f"fewer than two declared arms evaluated ({', '.join(chosen) or 'none'})"
        return Check.not_applicable("arm_parity", f"not applicable: {why}")
    prints = {c: _fingerprint(found, c) for c in chosen}
    differ = []
    evidence = [f"arms compared: {', '.join(chosen)}"]
    for part in ("model", "temperature", "system prompt", "tool schemas"):
        values = {c: sorted(p[part]) for c, p in prints.items()}
        if len({json.dumps(v) for v in values.values()}) > 1:
            differ.append(part)
            evidence += _differences(part, values)
        else:
            evidence.append(f"{part}: the same in every arm")
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


def _completeness(
    found: SuiteFolder, suite: EvalSuite, manifest: Manifest | None, arms: Sequence[str]
) -> Check:
    have = {(e.configuration, e.question_id) for e in found.episodes}
    answered = {q for _, q in have}
    missing = [
        f"{c}/{q.id}"
        for c in found.configurations
        if c in arms
        for q in suite.questions
        if (c, q.id) not in have
    ]
    missing += [f"{q.id} (in any configuration)" for q in suite.questions if q.id not in answered]
    evidence = [
        f"{len(found.episodes)} episode(s) read from the cassettes of {found.folder}, "
        f"{len(found.configurations)} configuration(s) × {len(suite.questions)} question(s), "
        f"up to {found.trials} trial(s) each"
    ]
    evidence += [f"no episode for {m}" for m in missing]
    evidence += [f"not read: {e}" for e in found.errors]
    evidence += [f"no question takes {u}" for u in found.unmatched]
    evidence += [f"recovered fault in {key(e)}: {f}" for e in found.episodes for f in e.faults]
    changed: list[str] = []
    if manifest is None:
        evidence.append(f"{manifest_path(found.folder)} missing: cassette edits cannot be told")
    else:
        changed = changed_cassettes(found, manifest)
        if changed:
            evidence.append(
                "changed since the manifest was written (edited or re-recorded): "
                + ", ".join(changed)
                + "; if re-recorded on purpose (pytest --record-mode=rewrite), refresh the "
                f"manifest: {refresh_command(found.folder, suite)}"
            )
        else:
            evidence.append("every cassette's sha256 matches the manifest")
    what = []
    if missing:
        what.append(f"{len(missing)} question(s) without an episode where one is due")
    if found.errors:
        what.append(f"{len(found.errors)} cassette(s) not read")
    if changed:
        what.append(f"{len(changed)} episode(s) changed since the manifest was written")
    if what:
        return Check("completeness", False, "; ".join(what), tuple(evidence))
    return Check(
        "completeness",
        True,
        (
            "every configuration × question has an episode"
            if all((c, q.id) in have for c in found.configurations for q in suite.questions)
            else "every question has an episode (in every declared arm)"
        )
        + ", every cassette was read and "
        + ("matches the manifest" if manifest else "(no manifest: edits cannot be told)"),
        tuple(evidence),
    )


def refresh_command(folder: Path, suite: EvalSuite) -> str:
    """The shell command that refreshes the manifest of the test suite's ``folder`` after an
    intended re-recording: remove it, then ``toolreplay run`` (with ``suite``'s eval file when
    it has one) writes it anew from the cassettes as they are."""
    import shlex

    run = ["toolreplay", "run"]
    if Path(suite.path).is_file():
        run += ["--eval", suite.path]
    run += ["--cassettes", str(folder)]
    return f"rm {shlex.quote(str(manifest_path(folder)))} && {shlex.join(run)}"


def audit_suite_folder(
    found: SuiteFolder,
    suite: EvalSuite,
    judge: Judge,
    manifest: Manifest | None,
    passed: Mapping[str, bool] | None = None,
    arms: Sequence[str] = (),
) -> Audit:
    """The audit of a plugin-recorded set (module docstring), over the configurations and
    questions of ``found`` and ``suite`` (already narrowed to a selection); ``passed`` maps an
    episode's key (``CONFIG/QUESTION[/trial-N]``) to its assessment's pass (assessed here when
    not given); ``arms`` are the configurations the eval file declares as arms. Never raises
    for a missing manifest (``manifest`` None)."""
    if passed is None:
        from toolreplay.judging.assessment import assess

        passed = {
            key(e): assess(e, suite.by_id.get(e.question_id), judge).passed
            for e in found.episodes
            if e.trial == 1
        }
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
        Check.not_applicable("baseline_properties", _NO_STUDY),
        Check.not_applicable("ablation", _NO_STUDY),
        breadth,
        Check.not_applicable(
            "near_miss", "not applicable: no weakened baseline to replay without a study baseline"
        ),
        _parity(found, arms),
        _completeness(found, suite, manifest, arms),
    )
    return Audit(checks, {"faithful": _rows(found, suite, judge, passed)}, (), ())


def _paths(value: Any, at: str = "") -> dict[str, str]:
    """Every leaf of a JSON value by its path (``tools[0].function.name``), as canonical
    JSON."""
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(_paths(v, f"{at}.{k}" if at else str(k)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(_paths(v, f"{at}[{i}]"))
        return out
    return {at or "(whole)": json.dumps(value, ensure_ascii=False, sort_keys=True)}


def _by_tool(schemas: Sequence[str]) -> dict[str, Any]:
    """The tool schemas a configuration sent, by tool name (a tools list per request, as
    canonical JSON)."""
    out: dict[str, Any] = {}
    for text in schemas:
        for tool in json.loads(text):
            fn = tool.get("function") if isinstance(tool, dict) else None
            name = fn.get("name") if isinstance(fn, dict) else None
            out[str(name if name is not None else tool.get("name", "?"))] = tool
    return out


def _differences(part: str, values: Mapping[str, Sequence[str]]) -> list[str]:
    """Evidence for one part that differs between the arms: against the first arm, what each
    other arm sent differently. Tool schemas are compared tool by tool and JSON path by JSON
    path (whole values, never cut mid-JSON); other parts are short and shown whole."""
    arms = list(values)
    first = arms[0]
    if part != "tool schemas":
        return [f"{c}: {part} {', '.join(v)}" for c, v in values.items()]
    out = []
    base = _by_tool(values[first])
    for arm in arms[1:]:
        other = _by_tool(values[arm])
        lines = [f"{arm}: tool {n} not sent ({first} sends it)" for n in base if n not in other]
        lines += [f"{arm}: sends tool {n}, which {first} does not" for n in other if n not in base]
        for name in [n for n in base if n in other]:
            a, b = _paths(base[name]), _paths(other[name])
            for path in sorted(set(a) | set(b)):
                if a.get(path) != b.get(path):
                    lines.append(
                        f"{arm}: tool {name} {path}: {b.get(path, '(absent)')} "
                        f"({first}: {a.get(path, '(absent)')})"
                    )
        if len(lines) > _MAX_DIFFERENCES:
            lines = [*lines[:_MAX_DIFFERENCES], f"{arm}: {len(lines) - _MAX_DIFFERENCES} more"]
        out += lines or [f"{arm}: the same tools as {first}, sent in another order or set"]
    return out
