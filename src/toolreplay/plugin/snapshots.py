"""Transcripts for snapshot tests: what a snapshot pins of an episode, readable and stable.

:func:`normalise_episode` turns an :class:`~toolreplay.wire.episode.Episode` into plain JSON
data: the transcript (roles, text, tool calls with their arguments parsed from JSON, tool
results parsed from JSON), the rounds (tools offered, finish reason, tool calls, whether they
ran), the stop reason, the answer, and, given the question, the verdict and failure modes
exactly as ``toolreplay run`` computes them. Token usage and wall time are included but change
with every recording: leave out :data:`VOLATILE_FIELDS` when comparing (the plugin's
``transcript_snapshot`` fixture does, with syrupy)::

    def test_my_agent(transcript_snapshot):
        episode = ...  # run or replay your loop
        assert normalise_episode(episode) == transcript_snapshot

``transcript_snapshot`` is syrupy's ``snapshot`` writing one readable JSON file per snapshot
(non-ASCII text unescaped, keys sorted) without :data:`VOLATILE_FIELDS`; it needs syrupy
(``pip install syrupy``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolreplay.evals import Question
    from toolreplay.judging.verdicts import Judge
    from toolreplay.wire.episode import Episode, Message

#: Values that change with every recording and say nothing about behaviour; left out of
#: snapshots at any depth.
VOLATILE_FIELDS = ("usage", "wall_time_s")


def _parsed(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def normalise_message(message: Message) -> dict[str, Any]:
    """A transcript message (a Chat Completions message dict) with ``role`` and ``content``,
    tool call arguments and tool results parsed from JSON (left as text when not JSON), and
    each tool call as ``{"id", "name", "arguments"}``."""
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


def normalise_episode(
    episode: Episode, question: Question | None = None, judge: Judge | None = None
) -> dict[str, Any]:
    """What a snapshot pins of one episode (see the module docstring). With ``question``, the
    episode is judged (``judge``, default the judge ``toolreplay run`` uses) and classified,
    and ``verdict`` and ``failure_modes`` are included; without, they are left out."""
    out: dict[str, Any] = {
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
    }
    if question is not None:
        from toolreplay.judging.assessment import assess
        from toolreplay.judging.verdicts import FULL_JUDGE
        from toolreplay.results.build import failure_mode_record

        judge = judge or FULL_JUDGE
        assessment = assess(episode, question, judge)
        out["verdict"] = {
            "judge": judge.name,
            "passed": assessment.verdict.passed,
            "explanation": assessment.verdict.explanation,
        }
        out["failure_modes"] = [
            failure_mode_record(f).model_dump(mode="json") for f in assessment.failure_modes
        ]
    out["usage"] = episode.usage.to_dict()
    out["wall_time_s"] = episode.wall_time_s
    return out
