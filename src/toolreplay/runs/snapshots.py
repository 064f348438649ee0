"""Snapshot tests of a study's episodes: their names, and the one step that updates them.

A study that pins its episodes as snapshots declares where
(:class:`toolreplay.studies.SnapshotTests`: a pytest module, its test function and the cassette
set it replays); the weather study's are this repository's ``tests/test_snapshots.py``, one
readable JSON file per episode (configuration × question) of the ``reference`` set::

    tests/__snapshots__/test_snapshots/test_episode[<configuration>-<question-id>].json

``toolreplay record --model-source stand-in --set reference --only single+atomic/beijing
--update-snapshots`` re-records the chosen episodes and then runs :func:`update_snapshots`:
pytest on just those episodes' snapshot tests with ``--snapshot-update``, so cassettes and
snapshots change in one step.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from toolreplay.cassettes.manifest import episode_key
from toolreplay.evals import EvalSuite
from toolreplay.runs.configuration import study_configurations
from toolreplay.studies import SnapshotTests


class SnapshotUpdateError(RuntimeError):
    """Snapshots cannot be updated from here; the message says why and what to do."""


def pinned_keys(suite: EvalSuite) -> list[str]:
    """Episode keys (``CONFIGURATION/QUESTION-ID``) the snapshot tests pin: the study
    configurations × the suite's questions (the ablated baselines have no snapshot)."""
    return [episode_key(c.name, q.id) for c in study_configurations(suite) for q in suite.questions]


def snapshot_id(key: str) -> str:
    """The snapshot test's parameter id for episode ``key``: ``loop+atomic/ningde`` →
    ``loop+atomic-ningde``. :class:`ValueError` for a key without ``/``."""
    configuration, sep, question_id = key.partition("/")
    if not sep:
        raise ValueError(f"episode key {key!r} is not CONFIGURATION/QUESTION-ID")
    return f"{configuration}-{question_id}"


def snapshot_node_id(tests: SnapshotTests, key: str) -> str:
    """The pytest node id of episode ``key``'s snapshot test, relative to the folder the
    snapshot tests' ``file`` is relative to."""
    return f"{tests.file}::{tests.test}[{snapshot_id(key)}]"


def check_can_update(tests: SnapshotTests | None, repo: Path, set_dir: Path) -> None:
    """Raise :class:`SnapshotUpdateError` unless snapshots can be updated for ``set_dir``
    from ``repo``: the study declares snapshot tests (``tests``), the set is the one they
    pin (``repo/cassettes/<set>``), their module is there, and pytest and syrupy are
    installed (the ``test`` extra)."""
    if tests is None:
        raise SnapshotUpdateError("this eval file's study declares no snapshot tests")
    if not (repo / tests.file).is_file():
        raise SnapshotUpdateError(
            f"{tests.file} not found under {repo}: run this from the repository root"
        )
    pinned = (repo / "cassettes" / tests.cassette_set).resolve()
    if set_dir.resolve() != pinned:
        raise SnapshotUpdateError(
            f"the snapshot tests pin {pinned}, not {set_dir.resolve()}; "
            f"record --set {tests.cassette_set} with the default --cassettes to update snapshots"
        )
    missing = [m for m in ("pytest", "syrupy") if importlib.util.find_spec(m) is None]
    if missing:
        raise SnapshotUpdateError(
            f"{', '.join(missing)} not installed: pip install -e '.[test]' to update snapshots"
        )


def update_command(tests: SnapshotTests, keys: Sequence[str]) -> list[str]:
    """The pytest command that rewrites the snapshots of episode ``keys`` (every snapshot,
    unused ones deleted, when ``keys`` is empty)."""
    targets = [snapshot_node_id(tests, k) for k in keys] or [tests.file]
    return [sys.executable, "-m", "pytest", "-q", "--snapshot-update", *targets]


def update_snapshots(tests: SnapshotTests, repo: Path, keys: Sequence[str]) -> int:
    """Run :func:`update_command` in ``repo`` (output goes to the terminal); returns
    pytest's exit code (0 when every snapshot was written or already matched)."""
    return subprocess.run(update_command(tests, keys), cwd=repo, check=False).returncode
