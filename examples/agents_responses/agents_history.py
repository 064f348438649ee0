"""The two sides each test compares: openai-agents' own record of a run (its raw model
responses and ``result.to_input_list()``) and the episode toolreplay reads from the
cassette alone, both as rounds: the reply's text, its tool calls ``(id, name, arguments)``
and the tool results sent back for them ``(call id, text as sent)``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from toolreplay.cassettes.episodes import episode_from_cassette
from toolreplay.plugin.snapshots import normalise_episode


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def framework_rounds(result: Any) -> list[dict[str, Any]]:
    """openai-agents' side: one round per model response (``result.raw_responses``), its
    results the ``function_call_output`` items of ``result.to_input_list()`` for its calls."""
    outputs = {
        _get(i, "call_id"): _get(i, "output")
        for i in result.to_input_list()
        if _get(i, "type") == "function_call_output"
    }
    rounds = []
    for response in result.raw_responses:
        texts = [
            part.text
            for item in response.output
            if _get(item, "type") == "message"
            for part in item.content
            if _get(part, "type") == "output_text"
        ]
        calls = [
            (item.call_id, item.name, json.loads(item.arguments))
            for item in response.output
            if _get(item, "type") == "function_call"
        ]
        results = [(c[0], outputs[c[0]]) for c in calls if c[0] in outputs]
        rounds.append({"content": "".join(texts) or None, "calls": calls, "results": results})
    return rounds


def wire_rounds(episode: Any) -> list[dict[str, Any]]:
    """toolreplay's side: the rounds of the episode read from the cassette."""
    return [
        {
            "content": r.reply.content,
            "calls": [(c.id, c.name, c.parsed_arguments()) for c in r.reply.tool_calls],
            "results": [(t.call.id, t.content) for t in r.results],
        }
        for r in episode.rounds
    ]


def run_agent(agent: Any, question: str, *, streamed: bool = False) -> Any:
    """Run ``agent`` on ``question``: ``Runner.run_sync``, or ``Runner.run_streamed`` with
    every event consumed. Returns openai-agents' result."""
    from agents import Runner
    from library_agent import RUN_CONFIG

    if not streamed:
        return Runner.run_sync(agent, question, run_config=RUN_CONFIG)

    async def consume() -> Any:
        result = Runner.run_streamed(agent, question, run_config=RUN_CONFIG)
        async for _event in result.stream_events():
            pass
        return result

    return asyncio.run(consume())


def check_wire(vcr: Any, question: str, result: Any, snapshot: Any, *, streamed: bool) -> None:
    """In replay: the episode read from the test's cassette is the run openai-agents made
    (same rounds, answer and question), streamed when the run was, and its transcript is
    the pinned one (syrupy)."""
    if vcr.record_mode != "none":
        return
    episode = episode_from_cassette(vcr._path)
    assert episode.question == question
    assert wire_rounds(episode) == framework_rounds(result)
    assert episode.answer == result.final_output
    assert episode.stop_reason == "converged"
    assert episode.streamed is streamed
    assert normalise_episode(episode) == snapshot
