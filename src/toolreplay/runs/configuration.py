"""Experiments: configurations (host × toolset × baseline variant) run over an eval's
questions, replayed from a cassette set or recorded into one.

Configuration names: ``HOST+TOOLSET`` (``single+oneshot``, ``loop+atomic``...); a variant of
the study's baseline toolset with one heuristic off is ``single+oneshot-no_shi_retry``. Which
toolsets and heuristics exist is the study's (:class:`toolreplay.studies.Study`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolreplay.cassettes.manifest import (
    Manifest,
    sha256_json,
)
from toolreplay.defaults import DEFAULT_CASSETTES, DEFAULT_EVAL
from toolreplay.evals import DEFAULT_PROTOCOL, DEFAULT_REPEAT_WINDOW, EvalSuite
from toolreplay.hosts import HOST_NAMES
from toolreplay.studies import Study, load_study

NAME_RE = re.compile(r"^([a-z]+)\+([A-Za-z0-9_]+?)(?:-no_([a-z_]+))?$")


Progress = Callable[[str], None]


@dataclass(frozen=True)
class Configuration:
    """Host × toolset of ``study`` (None: the only one installed), optionally with one of the
    baseline toolset's heuristics ablated. ``baseline``: the heuristics on in the baseline
    (None: all of the study's). :class:`ValueError` names what is unknown."""

    host: str
    toolset: str
    ablated: str | None = None
    baseline: tuple[str, ...] | None = None
    study: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        study = self.study_
        if self.baseline is None:
            object.__setattr__(self, "baseline", study.heuristics)
        if self.host not in HOST_NAMES:
            raise ValueError(f"unknown host {self.host!r}; known: {', '.join(HOST_NAMES)}")
        if self.toolset not in study.toolsets:
            known = ", ".join(study.toolsets)
            raise ValueError(f"unknown toolset {self.toolset!r}; known: {known}")
        if self.ablated is not None and (
            self.toolset != study.baseline_toolset or self.ablated not in study.heuristics
        ):
            raise ValueError(f"cannot ablate {self.ablated!r} from {self.toolset}")

    @property
    def study_(self) -> Study:
        """The study whose toolsets this configuration runs."""
        return load_study(self.study)

    @property
    def name(self) -> str:
        base = f"{self.host}+{self.toolset}"
        return f"{base}-no_{self.ablated}" if self.ablated else base

    @property
    def heuristics(self) -> tuple[str, ...] | None:
        """The baseline heuristics switched on (None for a toolset without heuristics)."""
        study = self.study_
        if self.toolset != study.baseline_toolset:
            return None
        on = self.baseline or ()
        return tuple(h for h in study.heuristics if h in on and h != self.ablated)

    @classmethod
    def parse(cls, name: str, study: str | None = None) -> Configuration:
        """Inverse of :attr:`name`; :class:`ValueError` naming the accepted forms."""
        m = NAME_RE.match(name)
        if not m:
            raise ValueError(
                f"bad configuration name {name!r}: use HOST+TOOLSET[-no_HEURISTIC], "
                "e.g. loop+atomic or single+oneshot-no_shi_retry"
            )
        return cls(m.group(1), m.group(2), m.group(3), study=study)


def study_configurations(suite: EvalSuite) -> list[Configuration]:
    """The 2×2 in the study's order: toolset-major (oneshot first), single before loop."""
    spec = suite.experiment
    return [
        Configuration(h, t, baseline=spec.baseline, study=suite.study)
        for t in spec.toolsets
        for h in spec.hosts
    ]


def ablation_configurations(suite: EvalSuite) -> list[Configuration]:
    """The full baseline toolset with each ablated heuristic, under every host."""
    spec = suite.experiment
    baseline = load_study(suite.study).baseline_toolset
    if baseline is None or baseline not in spec.toolsets:
        return []
    return [
        Configuration(h, baseline, a, study=suite.study) for a in spec.ablations for h in spec.hosts
    ]


def standin_hints(suite: EvalSuite) -> dict[str, dict[str, Any]]:
    """The stand-in's per-question hints (the eval file's ``standin:`` blocks), by question
    id: ``{"ningde": {"narrates_followups": True}, ...}``. They script what the stand-in
    writes (whether a sentence goes beside a follow-up tool call), so they are part of a set's
    fingerprint."""
    return {q.id: dict(q.hints) for q in suite.questions}


def fingerprint(suite: EvalSuite) -> dict[str, Any]:
    """What a recording depends on besides the model: hashes of the system prompt template
    and of each toolset's schemas, the settings every arm shares, and the stand-in's hints
    (``settings["standin_hints"]``, compared for stand-in sets only). Kept in the manifest;
    a set whose fingerprint differs from today's code and eval file is stale. Settings added
    later (``repeat_window``, ``tool_choice``, ``stream``, ``protocol``) are listed only when
    they differ from their default, so sets recorded before they existed stay current."""
    settings: dict[str, Any] = {
        "temperature": suite.experiment.temperature,
        "max_rounds": suite.experiment.max_rounds,
        "token_budget": suite.experiment.token_budget,
        "baseline_heuristics": list(suite.experiment.baseline),
        "standin_hints": standin_hints(suite),
    }
    if suite.experiment.repeat_window != DEFAULT_REPEAT_WINDOW:
        settings["repeat_window"] = suite.experiment.repeat_window
    if suite.experiment.tool_choice != "auto":
        settings["tool_choice"] = suite.experiment.tool_choice
    if suite.experiment.stream:
        settings["stream"] = True
    if suite.experiment.protocol != DEFAULT_PROTOCOL:
        settings["protocol"] = suite.experiment.protocol
    return {
        "system_prompt_sha256": sha256_json(suite.system_prompt_template),
        "tool_schemas_sha256": {
            name: sha256_json(list(schemas))
            for name, schemas in load_study(suite.study).tool_schemas().items()
        },
        "settings": settings,
    }


def stale_parts(manifest: Manifest, suite: EvalSuite) -> list[str]:
    """What changed since the set was recorded, in words (empty when current)."""
    now = fingerprint(suite)
    out = []
    if manifest.system_prompt_sha256 != now["system_prompt_sha256"]:
        out.append("system prompt")
    out += [
        f"{name} tool schemas"
        for name, digest in sorted(now["tool_schemas_sha256"].items())
        if manifest.tool_schemas_sha256.get(name) != digest
    ]
    out += [
        f"setting {key} ({manifest.settings.get(key)!r} → {value!r})"
        for key, value in now["settings"].items()
        if key != "standin_hints" and manifest.settings.get(key) != value
    ]
    out += [
        f"setting {key} ({value!r} → default)"
        for key, value in manifest.settings.items()
        if key not in now["settings"]
    ]
    if manifest.provenance == "stand-in":  # a live model reads no hints
        was = manifest.settings.get("standin_hints") or {}
        hints = now["settings"]["standin_hints"]
        changed = [
            f"{qid}.{name} ({(was.get(qid) or {}).get(name)!r} → {value!r})"
            for qid, fields in hints.items()
            for name, value in fields.items()
            if (was.get(qid) or {}).get(name) != value
        ]
        if changed or set(was) - set(hints):
            out.append("stand-in hints " + (", ".join(changed) or "(questions removed)"))
    return out


def rerecord_command(
    set_dir: Path, manifest: Manifest, suite: EvalSuite, keys: Iterable[str] = ()
) -> str:
    """The command that re-records ``keys`` (episode keys) of the set at ``set_dir``, or the
    whole set when the set is stale (a partial re-record would mix two recordings)."""
    parts = ["toolreplay record", f"--model-source {manifest.provenance}"]
    if set_dir.parent.resolve() != DEFAULT_CASSETTES.resolve():
        parts.append(f"--cassettes {set_dir.parent}")
    if Path(suite.path).resolve() != DEFAULT_EVAL.resolve():
        parts.append(f"--eval {suite.path}")
    if _recorded_from_another_eval(set_dir, manifest, suite):
        # Never advise overwriting a set made for another eval file (the committed reference
        # included): record a set of this eval file's own instead, then run with it.
        new = _own_set_name(suite, set_dir)
        return " ".join([*parts, f"--set {new}"]) + (
            f" (a new set: {set_dir.name} was recorded from {manifest.eval_file}; then "
            f"run with --set {new}); or, to replay {set_dir.name} as recorded, give the eval "
            f"file it was recorded from: --eval {manifest.eval_file}"
        )
    parts.append(f"--set {set_dir.name}")
    if not stale_parts(manifest, suite):
        parts += [f"--only {k}" for k in keys]  # --only keeps the set's trials and seed
    elif manifest.trials > 1:
        parts.append(f"--trials {manifest.trials}")
        if manifest.seed:
            parts.append(f"--seed {manifest.seed}")
    return " ".join(parts)


def _recorded_from_another_eval(set_dir: Path, manifest: Manifest, suite: EvalSuite) -> bool:
    """Whether the set was recorded from another eval file than ``suite``'s (compared as
    paths from the working folder, then by file name when one of them is elsewhere)."""
    recorded, used = Path(manifest.eval_file), Path(suite.path)
    try:
        if recorded.resolve() == used.resolve():
            return False
    except OSError:
        pass
    return recorded.name != used.name or recorded.exists()


def _own_set_name(suite: EvalSuite, set_dir: Path) -> str:
    """A set name for ``suite``'s eval file (its file name without extension) that is not
    ``set_dir``'s."""
    from toolreplay.cassettes.manifest import check_set_name

    stem = Path(suite.path).stem
    try:
        name = check_set_name(stem)
    except ValueError:
        name = "new-set"
    return name if name != set_dir.name else f"{name}-2"
