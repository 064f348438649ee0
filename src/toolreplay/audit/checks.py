"""Parity and completeness checks: both arms asked alike, every episode present, current and of the
stated provenance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from toolreplay.audit.tables import Check, Key
from toolreplay.audit.traffic import cassette_facts, cassette_sha256
from toolreplay.cassettes.manifest import (
    Manifest,
    cassette_path,
    episode_key,
)
from toolreplay.evals import EvalSuite
from toolreplay.results.format import Ablation
from toolreplay.runs.configuration import (
    Configuration,
    rerecord_command,
    stale_parts,
)


def check_parity(
    set_dir: Path, suite: EvalSuite, manifest: Manifest, configs: Sequence[Configuration]
) -> Check:
    """The ``arm_parity`` check: every configuration of ``configs`` sent the same model,
    sampling parameters, system prompt and question set, hosts sharing a toolset sent the same
    tool descriptions (read from the recorded request bodies under ``set_dir``), and the
    manifest's round cap is the eval file's."""
    seen: dict[str, dict[str, set[str]]] = {}
    questions: dict[str, set[str]] = {}
    tools: dict[str, dict[str, set[str]]] = {}
    for config in configs:
        for q in suite.questions:
            path = cassette_path(set_dir, config.name, q.id)
            if not path.exists():
                continue
            for request in cassette_facts(path).requests:
                for name, shown in request.fields:
                    seen.setdefault(name, {}).setdefault(shown, set()).add(config.name)
                questions.setdefault(config.name, set()).add(request.question)
                if request.tools is not None:
                    tools.setdefault(config.toolset, {}).setdefault(request.tools, set()).add(
                        config.name
                    )
    evidence, broken = [], []
    for name, values in seen.items():
        if set(values) == {"null"}:
            continue  # not sent by any arm
        if len(values) > 1:
            broken.append(name)
            for value, where in sorted(values.items()):
                evidence.append(f"{name} {value} in {', '.join(sorted(where))}")
        else:
            value, where = next(iter(values.items()))
            evidence.append(f"{name}: {value} in all {len(where)} configurations")
    qsets = {frozenset(v) for v in questions.values()}
    if len(qsets) > 1:
        broken.append("question set")
        evidence += [f"questions of {c}: {len(v)}" for c, v in sorted(questions.items())]
    else:
        evidence.append(f"question set: the same {len(next(iter(qsets), []))} questions everywhere")
    for toolset, digests in sorted(tools.items()):
        if len(digests) > 1:
            broken.append(f"{toolset} tool descriptions")
            evidence += [f"{toolset} tools sha256 {d} in {', '.join(sorted(w))}"
                         for d, w in sorted(digests.items())]  # fmt: skip
        else:
            d, w = next(iter(digests.items()))
            evidence.append(f"{toolset} tool schemas: sha256 {d} in {', '.join(sorted(w))}")
    cap = manifest.settings.get("max_rounds")
    evidence.append(f"round cap: loop {cap} (manifest), single 2 (by design)")
    if cap != suite.experiment.max_rounds:
        broken.append("round cap")
        evidence.append(f"eval file now says max_rounds {suite.experiment.max_rounds}")
    if broken:
        return Check("arm_parity", False, f"arms differ in: {', '.join(broken)}", tuple(evidence))
    return Check(
        "arm_parity",
        True,
        "every configuration used the same model, sampling, system prompt, questions and "
        "round cap; hosts sharing a toolset saw identical tool descriptions",
        tuple(evidence),
    )


def _provenance_mismatch(
    set_dir: Path, manifest: Manifest, suite: EvalSuite, configs: Sequence[Configuration]
) -> str:
    """A sentence when the manifest's provenance contradicts what was recorded: ``live`` with
    the stand-in's model name or replies that carry the stand-in's fingerprint, or
    ``stand-in`` with none of them; empty when they agree."""
    standin_replies = 0
    replies = 0
    for config in configs:
        for q in suite.questions:
            path = cassette_path(set_dir, config.name, q.id)
            if not path.exists():
                continue
            facts = cassette_facts(path)
            replies += facts.replies
            standin_replies += facts.standin_replies
    from toolreplay.doubles import STANDIN_MODEL

    said_standin = manifest.model == STANDIN_MODEL or standin_replies > 0
    if manifest.provenance == "live" and said_standin:
        what = (
            f"model {manifest.model}"
            if manifest.model == STANDIN_MODEL
            else f"{standin_replies} of {replies} recorded replies"
        )
        return (
            f"the manifest says provenance live, but {what} come from the stand-in model "
            f"({STANDIN_MODEL}, endpoint {manifest.endpoint_host}): a test double is labelled "
            "a live recording"
        )
    if manifest.provenance == "stand-in" and replies and not said_standin:
        return (
            f"the manifest says provenance stand-in, but model {manifest.model} and none of "
            f"the {replies} recorded replies are the stand-in's"
        )
    return ""


def check_completeness(
    set_dir: Path,
    suite: EvalSuite,
    manifest: Manifest,
    configs: Sequence[Configuration],
    errors: Mapping[Key, str],
) -> Check:
    """The ``completeness`` check: every configuration × question of ``configs`` replayed
    (``errors`` holds those that did not, by key), no cassette edited since recording (its
    sha256 against the manifest's), the set not stale against the code and eval file, and the
    manifest's provenance agreeing with what was recorded."""
    total = len(configs) * len(suite.questions)
    evidence = [f"{total - len(errors)} of {total} episodes replayed with every interaction played"]
    evidence += [f"{c}/{q}: {msg}" for (c, q), msg in sorted(errors.items())]
    edited = []
    for config in configs:
        for q in suite.questions:
            key = episode_key(config.name, q.id)
            record = manifest.episodes.get(key)
            path = cassette_path(set_dir, config.name, q.id)
            if record is None or not path.exists():
                continue
            if cassette_sha256(path) != record.cassette_sha256:
                edited.append(key)
    if edited:
        evidence.append(
            f"edited since recording (sha256 differs from the manifest): {', '.join(edited)}"
        )
    else:
        evidence.append("every cassette's sha256 matches the manifest (no edits since recording)")
    stale = stale_parts(manifest, suite)
    rerecord = rerecord_command(set_dir, manifest, suite)
    mislabelled = _provenance_mismatch(set_dir, manifest, suite, configs)
    if mislabelled:
        evidence.append(mislabelled)
    else:
        evidence.append(
            f"provenance {manifest.provenance} agrees with the model ({manifest.model}) and the "
            "recorded replies"
        )
    if stale:
        evidence.append(f"changed since recording: {', '.join(stale)}; re-record: {rerecord}")
    else:
        evidence.append(
            "the manifest's prompt and tool-schema hashes and settings match the code and eval"
        )
    if errors or stale or edited or mislabelled:
        what = []
        if mislabelled:
            what.append(mislabelled)
        if errors:
            what.append(f"{len(errors)} episode(s) missing or not replayable")
        if edited:
            what.append(f"{len(edited)} cassette(s) edited since recording")
        if stale:
            what.append("the set is stale")
        return Check("completeness", False, f"{'; '.join(what)}: {rerecord}", tuple(evidence))
    return Check(
        "completeness",
        True,
        "every configuration × question has a complete, current cassette",
        tuple(evidence),
    )


def ablation_summary(
    ablated: Sequence[Configuration], ablations: Sequence[Ablation], missing: bool
) -> str:
    """The ``ablation`` check's sentence: how many ablated baselines replayed and, for each
    with flips, its score and the questions that flipped; says they are missing when
    ``ablated`` is empty or ``missing`` (an ablated episode did not replay)."""
    if not ablated or missing:
        return "ablated baselines missing or not replayable"
    changes = [
        f"without {a.heuristic}, {a.baseline_configuration} scores "
        f"{a.passed}/{a.total} ({', '.join(f.question_id for f in a.flips or ())} flips)"
        for a in ablations
        if a.flips
    ]
    return f"{len(ablated)} ablated baselines replayed; " + ("; ".join(changes) or "no flips")
