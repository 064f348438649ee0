"""One snapshot per study episode of the reference cassette set.

Each ``__snapshots__/test_snapshots/test_episode[<configuration>-<question-id>].json`` holds the
normalised transcript (:func:`toolreplay.plugin.snapshots.normalise_episode`: roles, text, tool
calls with parsed arguments, tool results parsed from JSON, the rounds, the stop reason, the
answer, the verdict and the failure labels). Token usage and wall time are dropped by the
plugin's ``transcript_snapshot`` fixture.

Update after an intended change: ``pytest tests/test_snapshots.py --snapshot-update``, or
re-record and update in one step: ``toolreplay record --model-source stand-in --set reference
--only CONFIG/QUESTION --update-snapshots``. A snapshot file no test uses fails the run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from toolreplay.evals import EvalSuite, load_eval
from toolreplay.plugin.snapshots import normalise_episode
from toolreplay.runs.snapshots import pinned_keys, snapshot_id
from toolreplay.wire.episode import Episode

SUITE = load_eval(Path(__file__).resolve().parents[1] / "evals" / "weather.yaml")
KEYS = pinned_keys(SUITE)


@pytest.mark.parametrize("key", KEYS, ids=[snapshot_id(k) for k in KEYS])
def test_episode(
    key: str,
    reference_episodes: dict[tuple[str, str], Episode],
    suite: EvalSuite,
    transcript_snapshot: SnapshotAssertion,
) -> None:
    configuration, question_id = key.split("/", 1)
    episode = reference_episodes[(configuration, question_id)]
    assert normalise_episode(episode, suite.question(question_id)) == transcript_snapshot


def test_normalise_episode_without_a_question_leaves_judging_out(
    reference_episodes: dict[tuple[str, str], Episode],
) -> None:
    """The public normaliser serves a user's own loop, which has no eval question."""
    episode = reference_episodes[("loop+atomic", "ningde")]
    plain = normalise_episode(episode)
    assert "verdict" not in plain and "failure_modes" not in plain
    assert [m["role"] for m in plain["transcript"]][:2] == ["system", "user"]
    calls = [c for m in plain["transcript"] for c in m.get("tool_calls", [])]
    assert calls[0]["name"] == "geocode_city" and isinstance(calls[0]["arguments"], dict)
    tool = next(m for m in plain["transcript"] if m["role"] == "tool")
    assert isinstance(tool["content"], dict)  # parsed from JSON
