"""A folder of cassettes evaluated whatever it holds, for ``toolreplay diff`` and the commands
that take a folder: a cassette set recorded by ``toolreplay record`` (replayed, trial 1, no
audit) or the cassettes a test suite recorded (read from the wire; without an eval file each
test a question). Nothing is written: a missing manifest is not created.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolreplay.results.format import Results


class FolderError(ValueError):
    """The folder cannot be evaluated; one line naming it and why."""


def written_for_tests(manifest: Path) -> bool:
    """Whether ``manifest`` (a ``manifest.json``) is a test suite's (provenance ``pytest``),
    read leniently: an unreadable one counts as a recorded set's, whose own reading then says
    what is wrong."""
    try:
        with manifest.open("rb") as f:
            head = f.read(1 << 20)
        return bool(json.loads(head).get("provenance") == "pytest")
    except (OSError, ValueError, AttributeError):
        return False


def holds_test_suite(folder: Path) -> bool:
    """Whether ``folder`` holds cassettes a test suite recorded: a manifest of provenance
    ``pytest``, or no manifest and no results file but cassettes in it or its subfolders."""
    manifest = folder / "manifest.json"
    if manifest.is_file():
        return written_for_tests(manifest)
    if (folder / "results.json").is_file():
        return False
    return any(folder.glob("*.yaml")) or any(folder.glob("*/*.yaml"))


def judges_a_test_suite(eval_path: Path | None) -> bool:
    """Whether the eval file ``eval_path`` judges a test suite's cassettes (``cassettes:`` or
    questions mapped to ``tests:``); False for none or an unreadable one."""
    from toolreplay.evals import EvalFileError, load_eval

    if eval_path is None:
        return False
    try:
        return load_eval(eval_path).reads_cassettes
    except EvalFileError:
        return False


def evaluate_folder(
    folder: Path, eval_path: Path | None = None
) -> tuple[Results, Mapping[str, Any] | None]:
    """``(results, fingerprint)`` for the cassettes in ``folder``: a test suite's, read with
    the eval file ``eval_path`` (without one, each test a question); or a recorded set,
    replayed (every trial it recorded, without the audit, so the results hold the episodes,
    their summaries and the trial outcomes) and judged with ``eval_path`` (default
    ``evals/weather.yaml``), with the manifest's fingerprint (``system_prompt_sha256``,
    ``tool_schemas_sha256``, ``settings``; None for a test suite's folder).
    :class:`FolderError` naming the folder otherwise."""
    from toolreplay.cassettes.errors import CassetteError, CassetteMiss, UnplayedInteractions
    from toolreplay.cassettes.manifest import read_manifest
    from toolreplay.defaults import DEFAULT_EVAL
    from toolreplay.evals import EvalFileError, load_eval
    from toolreplay.evaluation.pipeline import evaluate
    from toolreplay.evaluation.replayed import ReplayedSet
    from toolreplay.evaluation.sources import SourceError
    from toolreplay.evaluation.wire import SuiteCassettes, folder_cassettes, suite_from_tests
    from toolreplay.runs.pool import WorkerDied
    from toolreplay.runs.replay import default_workers

    tests_only = eval_path is None and holds_test_suite(folder)
    try:
        if tests_only:
            suite = suite_from_tests(folder_cassettes(folder), name=folder.name)
        else:
            suite = load_eval(eval_path or DEFAULT_EVAL)
        if suite.reads_cassettes or tests_only:
            source = SuiteCassettes(folder, write_manifest=False)
            return evaluate(source, suite).results, None
    except EvalFileError as exc:
        raise FolderError(str(exc)) from None
    except SourceError as exc:
        raise FolderError(f"{folder}: {exc}") from None
    replayed = ReplayedSet(folder, workers=default_workers(), audit=False)  # every trial
    try:
        manifest = read_manifest(folder)
        results = evaluate(replayed, suite).results
    except (CassetteMiss, UnplayedInteractions, CassetteError, WorkerDied, SourceError) as exc:
        raise FolderError(f"{folder}: {exc}") from None
    # A comparison of answers over every trial the set recorded (the paired test over trials
    # needs them): the episodes, their summaries and trial outcomes, without the selection
    # and the audit (a copy; the evaluation's results are left as they are).
    kept = results.model_fields_set - {"selection", "fidelity"}
    answers = Results(**{name: getattr(results, name) for name in kept})
    fingerprint = {
        "system_prompt_sha256": manifest.system_prompt_sha256,
        "tool_schemas_sha256": dict(manifest.tool_schemas_sha256),
        "settings": dict(manifest.settings),
    }
    return answers, fingerprint
