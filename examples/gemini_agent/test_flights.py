"""The user's tests: ``pytest`` replays ``cassettes/test_flights/*.yaml`` offline;
``pytest --record-mode=rewrite`` re-records them against the scripted model, which answers
the Gemini API, and the flights API on loopback (conftest.py).

Each test checks that the episode toolreplay reads from the cassette alone is the loop's own
``contents``: per model turn its text and ``function_call`` parts, and the
``function_response`` parts of the user turn after it. Gemini's calls carry no id (the
scripted model gives none, as the API): they are compared by name and arguments, and
toolreplay pairs each response with its call by position."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flight_loop import answer_of

from toolreplay.cassettes.episodes import episode_from_cassette
from toolreplay.plugin.snapshots import normalise_episode


def _outcome(response: dict[str, Any]) -> tuple[Any, str | None]:
    """A function response's output and error: Google's FunctionResponse reference says to
    "use 'output' key to specify function output and 'error' key to specify error details
    (if any). If 'output' and 'error' keys are not specified, then whole 'response' is
    treated as function output"."""
    if "error" in response and "output" not in response:
        return response["error"], str(response["error"])
    return response.get("output", response), None


def _framework_rounds(contents: list[Any]) -> list[dict[str, Any]]:
    """google-genai's contents as rounds: each model turn's text and function calls
    ``(name, args)``, and the function responses ``(name, output, error)`` of the user turn
    after it."""
    rounds = []
    for i, turn in enumerate(contents):
        if turn.role != "model":
            continue
        parts = turn.parts or []
        text = "".join(p.text for p in parts if p.text is not None) or None
        calls = [(p.function_call.name, p.function_call.args) for p in parts if p.function_call]
        following = (contents[i + 1].parts or []) if i + 1 < len(contents) else []
        results = [
            (p.function_response.name, *_outcome(p.function_response.response or {}))
            for p in following
            if p.function_response
        ]
        assert all(p.function_call.id is None for p in parts if p.function_call)  # none given
        rounds.append({"content": text, "calls": calls, "results": results})
    return rounds


def _wire_rounds(episode: Any) -> list[dict[str, Any]]:
    """The episode's rounds in the same shape; each result answers a call of its round (the
    reader pairs them by the ids it gives calls that have none)."""
    rounds = []
    for r in episode.rounds:
        assert all(t.call in r.reply.tool_calls for t in r.results)
        rounds.append(
            {
                "content": r.reply.content,
                "calls": [(c.name, c.parsed_arguments()) for c in r.reply.tool_calls],
                "results": [
                    (t.call.name, t.content if t.error else json.loads(t.content), t.error)
                    for t in r.results
                ],
            }
        )
    return rounds


def run(flights: Any, vcr: Any, question: str, snapshot: Any, stream: bool = False) -> str:
    """Run the loop; in replay, check the wire's episode against the loop's contents and pin
    its transcript (syrupy)."""
    contents = flights(question, stream=stream)
    if vcr.record_mode == "none":
        episode = episode_from_cassette(vcr._path)
        assert episode.question == question
        assert _wire_rounds(episode) == _framework_rounds(contents)
        assert episode.answer == answer_of(contents)
        assert episode.stop_reason == "converged"
        assert episode.streamed is stream
        assert normalise_episode(episode) == snapshot
    return answer_of(contents)


#: Every test runs twice: the repeats are the trials ``toolreplay run`` reads pass^k from.
trials = pytest.mark.parametrize("trial", [1, 2])


@pytest.mark.vcr
@trials
def test_one_flight(flights: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    answer = run(flights, vcr, "Is flight LH-400 delayed?", transcript_snapshot, stream=True)
    assert answer == "Flight LH-400 is delayed by 25 minutes (gate B12)."


@pytest.mark.vcr
@trials
def test_two_flights(flights: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    question = "Are flights LH-400 and BA-117 on time?"
    answer = run(flights, vcr, question, transcript_snapshot)
    assert answer.endswith("Flight BA-117 is on time (gate A3).")


@pytest.mark.vcr
@trials
def test_unknown_flight(flights: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    # the scripted model invents a delay here, on purpose: the eval file catches it
    answer = run(flights, vcr, "Is flight XX-1 delayed?", transcript_snapshot)
    assert answer == "Flight XX-1 is delayed by 40 minutes."
