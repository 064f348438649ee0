"""The user's tests: ``pytest`` replays ``cassettes/test_converter/*.yaml`` offline;
``pytest --record-mode=rewrite`` re-records them (see servers.py)."""

from __future__ import annotations

import json

import pytest
import requests
from converter import ask

from toolreplay import ChatModel


@pytest.mark.vcr
def test_miles_to_kilometres(
    chat_model: ChatModel, http_session: requests.Session, converter_url: str
) -> None:
    episode = ask(chat_model, http_session, converter_url, "How long is 26.2 mi in km?")
    assert episode.stop_reason == "converged"
    assert episode.tool_chain == ["convert_units"]
    assert episode.answer == "42.165 km"


@pytest.mark.vcr
def test_two_conversions_and_a_refused_one(
    chat_model: ChatModel, http_session: requests.Session, converter_url: str
) -> None:
    episode = ask(
        chat_model, http_session, converter_url, "What is 10 lb in kg, 3 ft in m and 5 kg in km?"
    )
    assert episode.tool_chain == ["convert_units"] * 3
    errors = [json.loads(m["content"]) for m in episode.transcript if m["role"] == "tool"][2]
    assert errors == {"error": "ValueError: cannot convert 'kg' to 'km'"}
    assert episode.answer == "4.536 kg; 0.914 m; error: ValueError: cannot convert 'kg' to 'km'"
