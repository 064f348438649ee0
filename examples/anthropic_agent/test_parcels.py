"""The user's tests: ``pytest`` replays ``cassettes/test_parcels/*.yaml`` offline;
``pytest --record-mode=rewrite`` re-records them against the scripted model, which answers
the Anthropic Messages API, and the tracking API on loopback (conftest.py).

Each test checks that the episode toolreplay reads from the cassette alone is the loop's own
conversation (the anthropic ``messages`` list): per assistant turn its text and ``tool_use``
blocks, and the ``tool_result`` blocks of the user turn after it, a failed lookup's
``is_error`` included."""

from __future__ import annotations

from typing import Any

import pytest
from parcel_loop import answer_of

from toolreplay.cassettes.episodes import episode_from_cassette
from toolreplay.plugin.snapshots import normalise_episode


def _framework_rounds(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The anthropic conversation as rounds: each assistant turn's text and tool uses, and
    the tool results (id, text, error text when ``is_error``) of the user turn after it."""
    rounds = []
    for i, turn in enumerate(messages):
        if turn["role"] != "assistant":
            continue
        blocks = turn["content"]
        text = "".join(b["text"] for b in blocks if b["type"] == "text") or None
        uses = [(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"]
        following = messages[i + 1]["content"] if i + 1 < len(messages) else []
        results = [
            (b["tool_use_id"], b["content"], b["content"] if b.get("is_error") else None)
            for b in following
            if b["type"] == "tool_result"
        ]
        rounds.append({"content": text, "calls": uses, "results": results})
    return rounds


def _wire_rounds(episode: Any) -> list[dict[str, Any]]:
    return [
        {
            "content": r.reply.content,
            "calls": [(c.id, c.name, c.parsed_arguments()) for c in r.reply.tool_calls],
            "results": [(t.call.id, t.content, t.error) for t in r.results],
        }
        for r in episode.rounds
    ]


def run(parcels: Any, vcr: Any, question: str, snapshot: Any, stream: bool = False) -> str:
    """Run the loop; in replay, check the wire's episode against the loop's conversation and
    pin its transcript (syrupy)."""
    messages = parcels(question, stream=stream)
    if vcr.record_mode == "none":
        episode = episode_from_cassette(vcr._path)
        assert episode.question == question
        assert _wire_rounds(episode) == _framework_rounds(messages)
        assert episode.answer == answer_of(messages)
        assert episode.stop_reason == "converged"
        assert episode.streamed is stream
        assert normalise_episode(episode) == snapshot
    return answer_of(messages)


#: Every test runs twice: the repeats are the trials ``toolreplay run`` reads pass^k from.
trials = pytest.mark.parametrize("trial", [1, 2])


@pytest.mark.vcr
@trials
def test_one_parcel(parcels: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    question = "When does parcel P-100 arrive?"
    answer = run(parcels, vcr, question, transcript_snapshot, stream=True)
    assert answer == "Parcel P-100 is in transit and arrives in 2 days."


@pytest.mark.vcr
@trials
def test_two_parcels(parcels: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    answer = run(parcels, vcr, "Where are parcels P-100 and P-200?", transcript_snapshot)
    assert answer.endswith("Parcel P-200 is at the depot and arrives in 1 day.")


@pytest.mark.vcr
@trials
def test_unknown_parcel(parcels: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    # the lookup fails (is_error); trial 2's scripted model guesses a date, on purpose: the
    # eval file catches it
    answer = run(parcels, vcr, "When does parcel P-999 arrive?", transcript_snapshot)
    expected = {
        1: "I could not find parcel P-999: no parcel P-999 in the tracking system.",
        2: "Parcel P-999 arrives in 3 days.",
    }
    assert answer == expected[trial]
