"""The user's tests: an openai-agents agent with default settings, so on the Responses API
(``OpenAIResponsesModel``); ``test_one_book`` streams (``Runner.run_streamed``).

``pytest`` replays ``cassettes/test_agents_responses/*.yaml`` offline; ``pytest
--record-mode=rewrite`` re-records them against the scripted model, which answers the
Responses API too, and the catalogue API on loopback (conftest.py).

Each test checks that the episode toolreplay reads from the cassette alone is the run
openai-agents made: per model response its text and function calls, and the
``function_call_output`` items ``result.to_input_list()`` holds for them (the dict as
``str(dict)``)."""

from __future__ import annotations

from typing import Any

import pytest
from agents_history import check_wire, run_agent

#: Every test runs twice: the repeats are the trials ``toolreplay run`` reads pass^k from.
trials = pytest.mark.parametrize("trial", [1, 2])


@pytest.mark.vcr
@trials
def test_one_book(responses_agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    question = "How many copies of B-101 are available?"
    result = run_agent(responses_agent, question, streamed=True)
    assert result.final_output == "B-101 (Dune): 3 copies available."
    check_wire(vcr, question, result, transcript_snapshot, streamed=True)


@pytest.mark.vcr
@trials
def test_two_books(responses_agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    # trial 2's scripted model looks up only B-101, on purpose: the eval file catches it
    question = "Are B-101 and B-205 available?"
    result = run_agent(responses_agent, question)
    assert result.final_output.startswith("B-101 (Dune): 3 copies available")
    check_wire(vcr, question, result, transcript_snapshot, streamed=False)


@pytest.mark.vcr
@trials
def test_unknown_book(responses_agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    # the scripted model invents a number here, on purpose: the eval file catches it
    question = "How many copies of B-999 are available?"
    result = run_agent(responses_agent, question)
    assert result.final_output == "B-999: 2 copies available."
    check_wire(vcr, question, result, transcript_snapshot, streamed=False)
