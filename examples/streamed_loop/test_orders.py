"""The user's tests: ``pytest`` replays ``cassettes/test_orders/*.yaml`` offline (the streamed
replies served from the cassettes); ``pytest --record-mode=rewrite`` re-records them against
the scripted loopback model (conftest.py).

Each test checks that the episode toolreplay reads from the cassette alone, assembling the
recorded event streams, is the conversation the loop built from the same streams."""

from __future__ import annotations

from typing import Any

import pytest
from loop import ask

from toolreplay.cassettes.store import load_cassette
from toolreplay.plugin.snapshots import normalise_episode
from toolreplay.wire.reader import read_wire_episodes


def check_wire(vcr: Any, messages: list[dict[str, Any]]) -> Any:
    """In replay: the wire's episode equals the loop's own conversation."""
    if vcr.record_mode != "none":
        return None
    (wire,) = read_wire_episodes(load_cassette(vcr._path))
    assert wire.episode.streamed
    assert list(wire.episode.transcript) == messages
    assert wire.episode.answer == messages[-1]["content"]
    return wire.episode


#: Every test runs twice: the repeats are the trials ``toolreplay run`` reads pass^k from.
trials = pytest.mark.parametrize("trial", [1, 2])


@pytest.mark.vcr
@trials
def test_one_order(
    client: Any, settings: Any, vcr: Any, trial: int, transcript_snapshot: Any
) -> None:
    messages = ask(client, settings.model, "When does order A-1001 arrive?")
    assert messages[-1]["content"] == "Order A-1001 is shipped and arrives in 2 days."
    episode = check_wire(vcr, messages)
    if episode is not None:
        assert normalise_episode(episode) == transcript_snapshot


@pytest.mark.vcr
@trials
def test_two_orders(
    client: Any, settings: Any, vcr: Any, trial: int, transcript_snapshot: Any
) -> None:
    messages = ask(client, settings.model, "Where are orders A-1001 and A-1002?")
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    episode = check_wire(vcr, messages)
    if episode is not None:
        assert normalise_episode(episode) == transcript_snapshot


@pytest.mark.vcr
@trials
def test_item_count(
    client: Any, settings: Any, vcr: Any, trial: int, transcript_snapshot: Any
) -> None:
    # the scripted model guesses here (no lookup), on purpose: the eval file catches it
    messages = ask(client, settings.model, "How many items are in my order?")
    assert messages[-1]["content"] == "Your order has 4 items."
    episode = check_wire(vcr, messages)
    if episode is not None:
        assert normalise_episode(episode) == transcript_snapshot
