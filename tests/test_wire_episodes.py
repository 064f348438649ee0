"""Episodes read from the wire (cassettes alone) equal the episodes the hosts produced."""

from __future__ import annotations

from dataclasses import replace

import pytest

from toolreplay.cassettes.episodes import (
    WireEpisodeError,
    episode_from_cassette,
    episodes_from_interactions,
    read_wire_episodes,
)
from toolreplay.cassettes.manifest import cassette_path
from toolreplay.cassettes.store import load_cassette
from toolreplay.wire.episode import Episode

from .conftest import REFERENCE


def _comparable(episode: Episode) -> Episode:
    return replace(episode, configuration="", question_id="", wall_time_s=0.0)


def test_every_reference_episode_reads_the_same_from_the_wire(reference_episodes):
    assert len(reference_episodes) == 16
    for (config, question), hosted in reference_episodes.items():
        wired = episode_from_cassette(cassette_path(REFERENCE, config, question))
        assert _comparable(wired) == _comparable(hosted), (config, question)
        assert wired.rounds == hosted.rounds
        assert wired.stop_reason == hosted.stop_reason
        assert wired.tool_chain == hosted.tool_chain
        assert wired.answer == hosted.answer


def test_tool_traffic_is_attached_to_the_round_it_followed():
    path = cassette_path(REFERENCE, "loop+atomic", "hottest")
    (wire,) = read_wire_episodes(load_cassette(path))
    assert [len(r.traffic) for r in wire.rounds] == [3, 3, 0]
    assert {x.path for x in wire.tool_traffic} == {"/v1/search", "/v1/forecast"}
    assert not wire.streamed


def test_no_model_request_is_a_clear_error():
    interactions = [
        {
            "request": {"method": "GET", "uri": "http://x/v1/search?name=a", "body": None},
            "response": {"status": {"code": 200}, "headers": {}, "body": {"string": "{}"}},
        }
    ]
    with pytest.raises(WireEpisodeError, match="no Chat Completions request"):
        episodes_from_interactions(interactions)
