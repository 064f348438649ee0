"""The same openai-agents agent on Chat Completions (``OpenAIChatCompletionsModel``): its
tool's dict result goes back to the model as ``str(dict)``, and toolreplay's judge reads it
as data all the same: a correct answer is grounded in it, an invented number is caught
(``fabricated_value``; the eval file's measure names the dict key, ``fields: [copies]``).

``pytest`` replays ``cassettes/test_agents_chat/*.yaml`` offline; ``pytest
--record-mode=rewrite`` re-records them against the scripted model (conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest
from agents_history import check_wire, run_agent

#: Every test runs twice: the repeats are the trials ``toolreplay run`` reads pass^k from.
trials = pytest.mark.parametrize("trial", [1, 2])


@pytest.mark.vcr
@trials
def test_one_book(chat_agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    question = "How many copies of B-101 are available?"
    result = run_agent(chat_agent, question)
    assert result.final_output == "B-101 (Dune): 3 copies available."
    check_wire(vcr, question, result, transcript_snapshot, streamed=False)


@pytest.mark.vcr
@trials
def test_two_books(chat_agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    # trial 2's scripted model looks up only B-101, on purpose: the eval file catches it
    question = "Are B-101 and B-205 available?"
    result = run_agent(chat_agent, question)
    assert result.final_output.startswith("B-101 (Dune): 3 copies available")
    check_wire(vcr, question, result, transcript_snapshot, streamed=False)


@pytest.mark.vcr
@trials
def test_unknown_book(chat_agent: Any, vcr: Any, trial: int, transcript_snapshot: Any) -> None:
    # the scripted model invents a number here, on purpose: the eval file catches it
    question = "How many copies of B-999 are available?"
    result = run_agent(chat_agent, question)
    assert result.final_output == "B-999: 2 copies available."
    check_wire(vcr, question, result, transcript_snapshot, streamed=False)
