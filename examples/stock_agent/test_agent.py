"""The user's tests: ``pytest`` replays ``cassettes/test_agent/*.yaml`` offline; ``pytest
--record-mode=rewrite`` re-records them against the loopback servers (see servers.py).

Each test also checks that the episode toolreplay reads from the cassette alone (the wire) is
the one pydantic-ai saw: the same model requests, tool calls, tool results and answer as
``result.all_messages()``."""

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


#: Every test runs three times: the repeats are the trials ``toolreplay run`` reads pass^k from
#: (the scripted model forgets the second SKU in trial 3).
trials = pytest.mark.parametrize("trial", [1, 2, 3])


@pytest.mark.vcr
@trials
# what `pytest --toolreplay-report DIR` checks when no eval file is given
@pytest.mark.toolreplay_expect({"tool_called": "check_stock"}, {"answer_contains": "XYZ-2"})
def test_stock_levels(agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    answer = ask(agent, vcr, "How many ABC-1 and XYZ-2 are on hand?", transcript_snapshot)
    assert "ABC-1: 12 units on hand" in answer


@pytest.mark.vcr
@trials
def test_price(agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    assert ask(agent, vcr, "What does ABC-1 cost?", transcript_snapshot) == "ABC-1 costs €19.90."


@pytest.mark.vcr
@trials
def test_stock_and_price(agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    answer = ask(agent, vcr, "Is QRS-7 in stock, and what does it cost?", transcript_snapshot)
    assert answer == "QRS-7: 40 units on hand; QRS-7 costs €2.25."


@pytest.mark.vcr
@trials
def test_unknown_sku(agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    # the scripted model invents a number here, on purpose: the eval file's strict grounding
    # catches it (fabricated_value); the test only pins what was recorded
    assert (
        ask(agent, vcr, "How many ZZZ-9 are on hand?", transcript_snapshot)
        == "ZZZ-9: 99 units on hand."
    )
