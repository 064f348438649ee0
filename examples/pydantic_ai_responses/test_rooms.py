"""The user's tests: a pydantic-ai agent on the Responses API. ``pytest`` replays
``cassettes/test_rooms/*.yaml`` offline; ``pytest --record-mode=rewrite`` re-records them
against the scripted model, which answers the Responses API too, and the rooms API on
loopback (conftest.py).

Each test checks that the episode toolreplay reads from the cassette alone is the one
pydantic-ai saw: per model response its text and tool calls, and the tool returns the next
request carries for them, as ``result.all_messages()`` holds them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart

from toolreplay.cassettes.episodes import episode_from_cassette
from toolreplay.plugin.snapshots import normalise_episode


def _framework_rounds(messages: list[Any]) -> list[dict[str, Any]]:
    """pydantic-ai's history as rounds: each model response's text and tool calls, and the
    tool returns the next request carries for them."""
    rounds = []
    for i, message in enumerate(messages):
        if not isinstance(message, ModelResponse):
            continue
        text = "".join(p.content for p in message.parts if isinstance(p, TextPart)) or None
        calls = [
            (p.tool_call_id, p.tool_name, p.args_as_dict())
            for p in message.parts
            if isinstance(p, ToolCallPart)
        ]
        following = messages[i + 1] if i + 1 < len(messages) else None
        returns = [
            (p.tool_call_id, p.content)
            for p in (following.parts if isinstance(following, ModelRequest) else [])
            if isinstance(p, ToolReturnPart)
        ]
        rounds.append({"content": text, "calls": calls, "results": returns})
    return rounds


def _wire_rounds(episode: Any) -> list[dict[str, Any]]:
    return [
        {
            "content": r.reply.content,
            "calls": [(c.id, c.name, c.parsed_arguments()) for c in r.reply.tool_calls],
            "results": [(t.call.id, json.loads(t.content)) for t in r.results],
        }
        for r in episode.rounds
    ]


def ask(agent: Any, vcr: Any, question: str, snapshot: Any) -> str:
    """Run the agent; in replay, check the wire's episode against pydantic-ai's history and
    pin its transcript (syrupy)."""
    result = agent.run_sync(question)
    if vcr.record_mode == "none":
        episode = episode_from_cassette(vcr._path)
        assert episode.question == question
        assert _wire_rounds(episode) == _framework_rounds(result.all_messages())
        assert episode.answer == result.output
        assert episode.stop_reason == "converged"
        assert normalise_episode(episode) == snapshot
    return str(result.output)


#: Every test runs twice: the repeats are the trials ``toolreplay run`` reads pass^k from.
trials = pytest.mark.parametrize("trial", [1, 2])


@pytest.mark.vcr
@trials
def test_one_room(agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    answer = ask(agent, vcr, "How many people fit in room R-12?", transcript_snapshot)
    assert answer == "Room R-12 seats 8 people."


@pytest.mark.vcr
@trials
def test_two_rooms(agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    # trial 2's scripted model looks the rooms up one round at a time, on purpose: the eval
    # file's max_rounds catches it
    answer = ask(agent, vcr, "Which room is bigger, R-12 or R-30?", transcript_snapshot)
    assert answer == "Room R-30 seats 20 people; Room R-12 seats 8 people."


@pytest.mark.vcr
@trials
def test_unknown_room(agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    # the scripted model invents a capacity here, on purpose: the eval file catches it
    answer = ask(agent, vcr, "How many people fit in room R-77?", transcript_snapshot)
    assert answer == "Room R-77 seats 12 people."
