"""Snapshot tests of the reference episodes: their names, and the one step that updates them.

``tests/test_snapshots.py`` pins every study episode (configuration × question) of the
``reference`` cassette set, one readable JSON file per episode::

    tests/__snapshots__/test_snapshots/test_episode[<configuration>-<question-id>].json

``toolreplay record --model-source stand-in --set reference --only single+atomic/beijing
--update-snapshots``
re-records the chosen episodes and then runs :func:`update_snapshots`: pytest on just those
episodes' snapshot tests with ``--snapshot-update``, so cassettes and snapshots change in one step.
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

#: The cassette set the snapshot tests replay.
SNAPSHOT_SET = "reference"


#: The snapshot test module, relative to the repository root, and its test function.
SNAPSHOT_TEST_FILE = "tests/test_snapshots.py"


SNAPSHOT_TEST = "test_episode"


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


def snapshot_node_id(key: str) -> str:
    """The pytest node id of episode ``key``'s snapshot test, relative to the repo root."""
    return f"{SNAPSHOT_TEST_FILE}::{SNAPSHOT_TEST}[{snapshot_id(key)}]"


def check_can_update(repo: Path, set_dir: Path) -> None:
    """Raise :class:`SnapshotUpdateError` unless snapshots can be updated for ``set_dir``
    from ``repo``: the set must be the repository's ``cassettes/reference`` (the one the
    snapshot tests replay), the snapshot tests must be there, and pytest and syrupy
    installed (the ``test`` extra)."""
    if not (repo / SNAPSHOT_TEST_FILE).is_file():
        raise SnapshotUpdateError(
            f"{SNAPSHOT_TEST_FILE} not found under {repo}: run this from the repository root"
        )
    pinned = (repo / "cassettes" / SNAPSHOT_SET).resolve()
    if set_dir.resolve() != pinned:
        raise SnapshotUpdateError(
            f"the snapshot tests pin {pinned}, not {set_dir.resolve()}; "
            f"record --set {SNAPSHOT_SET} with the default --cassettes to update snapshots"
        )
    missing = [m for m in ("pytest", "syrupy") if importlib.util.find_spec(m) is None]
    if missing:
        raise SnapshotUpdateError(
            f"{', '.join(missing)} not installed: pip install -e '.[test]' to update snapshots"
        )


def update_command(keys: Sequence[str]) -> list[str]:
    """The pytest command that rewrites the snapshots of episode ``keys`` (every snapshot,
    unused ones deleted, when ``keys`` is empty)."""
    targets = [snapshot_node_id(k) for k in keys] or [SNAPSHOT_TEST_FILE]
    return [sys.executable, "-m", "pytest", "-q", "--snapshot-update", *targets]


def update_snapshots(repo: Path, keys: Sequence[str]) -> int:
    """Run :func:`update_command` in ``repo`` (output goes to the terminal); returns
    pytest's exit code (0 when every snapshot was written or already matched)."""
    return subprocess.run(update_command(keys), cwd=repo, check=False).returncode
