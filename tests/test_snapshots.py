"""One snapshot per study episode of the reference cassette set.

Each ``__snapshots__/test_snapshots/test_episode[<configuration>-<question-id>].json`` holds the
normalised transcript (roles, text, tool calls with parsed arguments, tool results parsed from
JSON), the rounds, the stop reason, the answer, the verdict and the failure labels. Token usage
and wall time are dropped by the ``snapshot`` fixture (tests/conftest.py).

Update after an intended change: ``pytest tests/test_snapshots.py --snapshot-update``, or
re-record and update in one step: ``toolreplay record --model-source stand-in --set reference
--only CONFIG/QUESTION --update-snapshots``. A snapshot file no test uses fails the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from toolreplay.evals import EvalSuite, Question, load_eval
from toolreplay.judging.failures import classify
from toolreplay.judging.verdicts import FULL_JUDGE
from toolreplay.runs.snapshots import pinned_keys, snapshot_id
from toolreplay.wire.episode import Episode, Message

SUITE = load_eval(Path(__file__).resolve().parents[1] / "evals" / "weather.yaml")
KEYS = pinned_keys(SUITE)


def _parsed(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def normalise_message(message: Message) -> dict[str, Any]:
    """A transcript message with tool call arguments and tool results parsed from JSON."""
    out: dict[str, Any] = {"role": message.get("role"), "content": message.get("content")}
    if message.get("role") == "tool":
        out["tool_call_id"] = message.get("tool_call_id")
        out["content"] = _parsed(message.get("content"))
    calls = message.get("tool_calls") or []
    if calls:
        out["tool_calls"] = [
            {
                "id": c.get("id"),
                "name": c.get("function", {}).get("name"),
                "arguments": _parsed(c.get("function", {}).get("arguments")),
            }
            for c in calls
        ]
    return out


def normalise(episode: Episode, measure: Question) -> dict[str, Any]:
    """What a snapshot pins of one episode (``usage``/``wall_time_s`` are dropped later),
    judged and classified for its question (``measure``) exactly as ``toolreplay run`` does."""
    verdict = FULL_JUDGE.judge_episode(episode, measure)
    return {
        "configuration": episode.configuration,
        "question_id": episode.question_id,
        "question": episode.question,
        "transcript": [normalise_message(m) for m in episode.transcript],
        "rounds": [
            {
                "index": rnd.index,
                "tools_offered": rnd.tools_offered,
                "finish_reason": rnd.reply.finish_reason,
                "tool_calls": [c.name for c in rnd.reply.tool_calls],
                "executed": bool(rnd.results),
                "usage": rnd.reply.usage.to_dict(),
            }
            for rnd in episode.rounds
        ],
        "stop_reason": episode.stop_reason,
        "error": episode.error,
        "answer": episode.answer,
        "verdict": {
            "judge": FULL_JUDGE.name,
            "passed": verdict.passed,
            "explanation": verdict.explanation,
        },
        "failure_modes": [f.to_dict() for f in classify(episode, FULL_JUDGE, measure)],
        "usage": episode.usage.to_dict(),
        "wall_time_s": episode.wall_time_s,
    }


@pytest.mark.parametrize("key", KEYS, ids=[snapshot_id(k) for k in KEYS])
def test_episode(
    key: str,
    reference_episodes: dict[tuple[str, str], Episode],
    suite: EvalSuite,
    snapshot: SnapshotAssertion,
) -> None:
    configuration, question_id = key.split("/", 1)
    episode = reference_episodes[(configuration, question_id)]
    assert normalise(episode, suite.question(question_id)) == snapshot
