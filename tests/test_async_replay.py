"""Async replay: ``Player.async_http`` (an ``httpx.AsyncClient`` over the replay tape) serves a
committed cassette to ``AsyncOpenAI`` with the sync transport's matching, miss explanation and
unplayed check; identical requests get the recorded replies in recorded order, sync or async."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import AsyncOpenAI, OpenAI

from toolreplay.cassettes.errors import CassetteMiss, UnplayedInteractions
from toolreplay.cassettes.miss import explain_miss, find_miss
from toolreplay.cassettes.store import load_cassette
from toolreplay.cassettes.transport import Player, Tape, player_for
from toolreplay.cassettes.vcr import replay_cassette

from .conftest import REFERENCE

CASSETTE = REFERENCE / "loop+atomic" / "ningde" / "trial-1.yaml"
EPISODE = "loop+atomic/ningde"
RERECORD = "toolreplay record --only loop+atomic/ningde"
MODEL_PATH = "/v1/chat/completions"


def _interactions() -> list[dict[str, Any]]:
    return load_cassette(CASSETTE)


def _is_model(item: dict[str, Any]) -> bool:
    return item["request"]["uri"].endswith(MODEL_PATH)


async def _send_async(player: Player, interactions: list[dict[str, Any]]) -> list[Any]:
    """Every interaction's request, in order: the model's through ``AsyncOpenAI``'s
    ``chat.completions.create``, Open-Meteo's as plain GETs on the async client. The replies
    as JSON values."""
    client = AsyncOpenAI(
        api_key="unused", base_url="http://127.0.0.1/v1", http_client=player.async_http,
        max_retries=0,
    )  # fmt: skip
    out: list[Any] = []
    for item in interactions:
        request = item["request"]
        if _is_model(item):
            completion = await client.chat.completions.create(**request["parsed_body"])
            out.append(completion.model_dump(mode="json", exclude_unset=True))
        else:
            response = await player.async_http.get(request["uri"])
            out.append(response.json())
    return out


def _send_sync(player: Player, interactions: list[dict[str, Any]]) -> list[Any]:
    """:func:`_send_async` through the sync ``OpenAI`` client and ``Player.http``."""
    client = OpenAI(
        api_key="unused", base_url="http://127.0.0.1/v1", http_client=player.http, max_retries=0
    )
    out: list[Any] = []
    for item in interactions:
        request = item["request"]
        if _is_model(item):
            completion = client.chat.completions.create(**request["parsed_body"])
            out.append(completion.model_dump(mode="json", exclude_unset=True))
        else:
            out.append(player.http.get(request["uri"]).json())
    return out


def _replay(send: Callable[[Player], Any]) -> Any:
    """``send(player)`` under :func:`replay_cassette` with the committed cassette in play."""
    with Player() as player:
        with replay_cassette(CASSETTE, EPISODE, RERECORD, player=player):
            return send(player)


@pytest.mark.slow
def test_async_openai_replays_a_committed_cassette() -> None:
    interactions = _interactions()
    assert sum(map(_is_model, interactions)) == 4
    replies = _replay(lambda player: asyncio.run(_send_async(player, interactions)))
    recorded = [item["response"]["body"]["parsed_body"] for item in interactions]
    assert replies == recorded
    assert replies[-1]["choices"][0]["message"]["content"]  # the final answer


@pytest.mark.slow
def test_async_replay_gives_what_sync_replay_gives() -> None:
    interactions = _interactions()
    async_replies = _replay(lambda player: asyncio.run(_send_async(player, interactions)))
    sync_replies = _replay(lambda player: _send_sync(player, interactions))
    assert async_replies == sync_replies


def _changed_third_model_request() -> list[dict[str, Any]]:
    """The cassette's requests with the third model request's temperature changed."""
    interactions = copy.deepcopy(_interactions())
    third = [i for i, item in enumerate(interactions) if _is_model(item)][2]
    interactions[third]["request"]["parsed_body"]["temperature"] = 0.7
    return interactions[: third + 1]


def test_an_async_miss_is_explained_exactly_like_a_sync_one() -> None:
    sent = _changed_third_model_request()
    with pytest.raises(CassetteMiss) as async_info:
        _replay(lambda player: asyncio.run(_send_async(player, sent)))
    with pytest.raises(CassetteMiss) as sync_info:
        _replay(lambda player: _send_sync(player, sent))
    text = str(async_info.value)
    assert text == str(sync_info.value)
    assert f"cassette miss in episode {EPISODE}: POST {MODEL_PATH}" in text
    assert "(request 5; 4 of 7 recorded interactions played)" in text
    assert "sampling parameter `temperature`: sent 0.7, recorded 0.0" in text
    assert text.endswith(f"re-record this episode: {RERECORD}")


def test_an_interaction_left_unplayed_by_async_requests_is_reported() -> None:
    sent = _interactions()[:-1]  # the last model request is never made
    with pytest.raises(UnplayedInteractions) as async_info:
        _replay(lambda player: asyncio.run(_send_async(player, sent)))
    with pytest.raises(UnplayedInteractions) as sync_info:
        _replay(lambda player: _send_sync(player, sent))
    text = str(async_info.value)
    assert text == str(sync_info.value)
    assert f"episode {EPISODE} left 1 recorded interaction(s)" in text
    assert f"interaction 7: POST {MODEL_PATH}" in text


# ---- identical requests ------------------------------------------------------------------


def _polls(tmp_path: Path, n: int = 3) -> Tape:
    """``n`` identical recorded requests (a poll), each with its own reply."""
    interactions = [
        {
            "request": {
                "method": "POST", "uri": "http://h/v1/jobs/status", "headers": {},
                "parsed_body": {"job": "j1"},
            },
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {"content-type": ["application/json"]},
                "body": {"parsed_body": {"poll": i + 1, "done": i == n - 1}},
            },
        }
        for i in range(n)
    ]  # fmt: skip
    return Tape(tmp_path / "polls.yaml", interactions)


def test_identical_requests_are_served_in_recorded_order_sync(tmp_path: Path) -> None:
    with Player() as player, player.use(_polls(tmp_path)) as tape:
        polls = [player.http.post("http://h/v1/jobs/status", json={"job": "j1"}) for _ in range(3)]
        assert [p.json()["poll"] for p in polls] == [1, 2, 3]
        assert tape.play_counts == [1, 1, 1]
        with pytest.raises(Exception) as info:
            player.http.post("http://h/v1/jobs/status", json={"job": "j1"})
    assert "is not recorded" in str(info.value)


def test_identical_requests_are_served_in_recorded_order_async(tmp_path: Path) -> None:
    async def poll(player: Player) -> list[int]:
        out = []
        for _ in range(3):
            response = await player.async_http.post("http://h/v1/jobs/status", json={"job": "j1"})
            out.append(response.json()["poll"])
        return out

    async def fourth(player: Player) -> None:
        await player.async_http.post("http://h/v1/jobs/status", json={"job": "j1"})

    with Player() as player, player.use(_polls(tmp_path)) as tape:
        assert asyncio.run(poll(player)) == [1, 2, 3]
        assert tape.play_counts == [1, 1, 1]
        with pytest.raises(Exception) as info:
            asyncio.run(fourth(player))
    miss = find_miss(info.value)
    assert miss is not None
    text = str(explain_miss(miss, "demo/polls", "toolreplay record --only demo/polls"))
    assert "(request 4; 3 of 3 recorded interactions played)" in text
    assert "Every recorded POST /v1/jobs/status was already played" in text


def test_concurrent_identical_async_requests_each_get_one_recorded_reply(tmp_path: Path) -> None:
    async def gather(player: Player) -> list[int]:
        post = player.async_http.post
        responses = await asyncio.gather(
            *(post("http://h/v1/jobs/status", json={"job": "j1"}) for _ in range(5))
        )
        return [r.json()["poll"] for r in responses]

    with Player() as player, player.use(_polls(tmp_path, 5)) as tape:
        assert sorted(asyncio.run(gather(player))) == [1, 2, 3, 4, 5]
        assert tape.play_counts == [1] * 5


def test_identical_requests_with_a_retry_after_a_miss_keep_recorded_order(tmp_path: Path) -> None:
    """A different request in between (a miss) plays nothing: the next identical request
    still gets the next recorded reply."""

    async def run(player: Player) -> list[Any]:
        out: list[Any] = []
        for job in ["j1", "j2", "j1"]:
            try:
                response = await player.async_http.post(
                    "http://h/v1/jobs/status", json={"job": job}
                )
                out.append(response.json()["poll"])
            except Exception as exc:  # the miss is what is checked
                out.append(type(exc).__name__)
        return out

    with Player() as player, player.use(_polls(tmp_path)):
        assert asyncio.run(run(player)) == [1, "ReplayMiss", 2]


# ---- the client itself ------------------------------------------------------------------


def test_the_async_client_is_an_httpx_async_client_of_its_player() -> None:
    with Player() as player:
        assert isinstance(player.async_http, httpx.AsyncClient)
        assert player.async_http is player.async_http
        assert player_for(player.async_http) is player
        assert player_for(player.http) is player


def test_an_async_request_with_no_cassette_in_play_is_refused() -> None:
    async def send(player: Player) -> None:
        await player.async_http.get("http://h/x")

    with Player() as player, pytest.raises(RuntimeError, match="no cassette in play"):
        asyncio.run(send(player))


def test_async_with_closes_every_client() -> None:
    async def use() -> Player:
        async with Player() as player:
            _ = player.async_http
        return player

    player = asyncio.run(use())
    assert player.async_http.is_closed and player.http.is_closed
