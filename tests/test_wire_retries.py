"""An SDK's retry after an error reply belongs to the episode it retried.

The openai and anthropic SDKs send a request again after a 429, a 5xx or an ``overloaded``
529, so the cassette holds the same request twice: first answered with the error, then with
the reply. Before, the retry's conversation did not *continue* the failed one (no more
messages), so it started a new episode: an ``error`` episode and the real one, read as two
trials of the test. Now the retry is the same episode and the failed reply one of its
``faults``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolreplay.evaluation.wire import suite_from_tests
from toolreplay.runs.suite_folder import read_suite_folder
from toolreplay.wire.reader import read_wire_episodes

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"


def _load(name: str) -> list[dict[str, Any]]:
    data = yaml.safe_load((FOREIGN / name).read_text(encoding="utf-8"))
    return list(data["interactions"])


def _failed(interaction: dict[str, Any], code: int, error: dict[str, Any]) -> dict[str, Any]:
    """``interaction``'s request answered with an error status (pydantic-ai's serializer)."""
    return {
        "request": copy.deepcopy(interaction["request"]),
        "response": {
            "headers": {"content-type": ["application/json"]},
            "parsed_body": error,
            "status": {"code": code, "message": "error"},
        },
    }


def _same(episode: Any, clean: Any) -> bool:
    """The same episode but for its rounds' numbers (they count requests, the failed one
    too)."""
    return (
        episode.transcript == clean.transcript
        and [(r.reply, r.results, r.tools_offered) for r in episode.rounds]
        == [(r.reply, r.results, r.tools_offered) for r in clean.rounds]
        and (episode.answer, episode.stop_reason, episode.usage, episode.error)
        == (clean.answer, clean.stop_reason, clean.usage, clean.error)
    )


RATE_LIMITED = {"error": {"message": "Rate limit reached", "type": "requests", "code": None}}
UNAVAILABLE = {"error": {"message": "The server is overloaded", "type": "server_error"}}


def _with_retries(interactions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each request answered first with a 429 (the first) or a 503 (the others), then sent
    again and answered as recorded."""
    out = []
    for n, item in enumerate(interactions):
        out.append(_failed(item, 429 if n == 0 else 503, RATE_LIMITED if n == 0 else UNAVAILABLE))
        out.append(item)
    return out


def test_a_retried_chat_completions_request_stays_in_its_episode():
    recorded = _load("pydantic-ai-openai-tool-call.yaml")
    (clean,) = read_wire_episodes(recorded)
    (retried,) = read_wire_episodes(_with_retries(recorded))
    episode = retried.episode
    assert _same(episode, clean.episode)
    assert [r.index for r in episode.rounds] == [2, 4]  # round numbers count requests
    assert episode.stop_reason == "converged" and episode.error is None
    assert [r.exchange.number for r in retried.rounds] == [1, 2, 3, 4]
    assert len(episode.faults) == 2
    first, second = episode.faults
    assert first.startswith("request 1 (interaction 1): ") and "429" in first
    assert second.startswith("request 3 (interaction 3): ") and "503" in second
    assert all(f.endswith("; the request was sent again") for f in episode.faults)


def test_a_retried_anthropic_request_after_overloaded_stays_in_its_episode():
    recorded = _load("pydantic-ai-anthropic-tool-call.yaml")
    (clean,) = read_wire_episodes(recorded)
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    failed = _failed(recorded[1], 529, overloaded)
    (retried,) = read_wire_episodes([recorded[0], failed, recorded[1]])
    assert _same(retried.episode, clean.episode)
    (fault,) = retried.episode.faults
    assert fault.startswith("request 2 (interaction 2): ") and "529" in fault


def test_a_retry_that_fails_again_ends_the_episode_in_error():
    recorded = _load("pydantic-ai-openai-tool-call.yaml")
    first = recorded[0]
    again = _failed(recorded[1], 503, UNAVAILABLE)
    failing = [first, again, copy.deepcopy(again)]
    (wire,) = read_wire_episodes(failing)
    assert wire.episode.stop_reason == "error" and "503" in (wire.episode.error or "")
    assert len(wire.episode.rounds) == 1 and len(wire.episode.faults) == 1


def test_the_same_request_after_a_usable_reply_is_another_episode():
    """A test that runs the same conversation twice records it twice, each answered: two
    episodes (trials), not a retry."""
    recorded = _load("pydantic-ai-openai-tool-call.yaml")
    wires = read_wire_episodes(recorded + recorded)
    assert len(wires) == 2 and wires[0].episode == wires[1].episode
    assert not wires[0].episode.faults


def test_a_retried_request_is_one_trial_of_its_test(tmp_path):
    module = tmp_path / "test_agent"
    module.mkdir()
    data = {"interactions": _with_retries(_load("pydantic-ai-openai-tool-call.yaml"))}
    path = module / "test_temperature.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    suite = suite_from_tests([path])
    found = read_suite_folder(tmp_path, suite)
    (episode,) = found.episodes
    assert episode.trial == 1 and episode.stop_reason == "converged"
    assert found.trials == 1 and len(episode.faults) == 2


@pytest.mark.parametrize("code", [400, 401, 403, 404, 422])
def test_the_same_request_after_a_client_error_is_another_episode(code):
    """No SDK retries a 400, 401, 403, 404 or 422: the same conversation sent again is the
    test asking anew (a trial that failed, then one that did not), two episodes."""
    recorded = _load("pydantic-ai-openai-tool-call.yaml")
    invalid = {"error": {"message": "Invalid 'tools[0]'", "type": "invalid_request_error"}}
    wires = read_wire_episodes([_failed(recorded[0], code, invalid), *recorded])
    assert [w.episode.stop_reason for w in wires] == ["error", "converged"]
    assert str(code) in (wires[0].episode.error or "")
    assert not wires[1].episode.faults


@pytest.mark.parametrize("code", [408, 409, 429, 500, 502, 503, 504, 529])
def test_every_status_an_sdk_retries_keeps_the_retry_in_its_episode(code):
    recorded = _load("pydantic-ai-openai-tool-call.yaml")
    (wire,) = read_wire_episodes([_failed(recorded[0], code, UNAVAILABLE), *recorded])
    assert wire.episode.stop_reason == "converged"
    (fault,) = wire.episode.faults
    assert str(code) in fault
