"""Tool results as frameworks send them (``toolreplay.wire.tool_results``): JSON, a Python
literal (openai-agents sends a dict result as ``str(dict)``), ``key: value`` lines, content
blocks; the judge grounds values in all of them, and an invented value is still caught."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from toolreplay.judging.failures import FABRICATED_VALUE, classify
from toolreplay.judging.verdicts import GROUNDED_JUDGE
from toolreplay.wire import tool_results
from toolreplay.wire.episode import Episode
from toolreplay.wire.tool_results import read_tool_result

from .stock_domain import ABC_RESULT, CORRECT, INVENTED, XYZ_RESULT, stock_episode
from .test_failures_any_domain import ASKED


@pytest.mark.parametrize(
    ("text", "data"),
    [
        ('{"sku": "ABC-1", "on_hand": 12}', {"sku": "ABC-1", "on_hand": 12}),
        ("{'sku': 'ABC-1', 'on_hand': 12}", {"sku": "ABC-1", "on_hand": 12}),
        ("[{'x': (1, 2.5)}, None, True]", [{"x": [1, 2.5]}, None, True]),
        ("sku: ABC-1\non_hand: 12\nprice: 2.50", {"sku": "ABC-1", "on_hand": 12, "price": 2.5}),
        ("12 units on hand", None),
        ("ABC-1 has 12 units.\nXYZ-2: 0", None),  # not every line is key: value
        ("", None),
        ("{'a': 1", None),
        ("__import__('os').system('echo no')", None),  # never evaluated
        ("{'a': __import__('os')}", None),
        ("(1).__class__", None),
        ('"{\\"on_hand\\": 12}"', {"on_hand": 12}),  # JSON serialised twice
        ('"12 units on hand"', "12 units on hand"),
        ('[{"type": "text", "text": "{\'on_hand\': 12}"}]', {"on_hand": 12}),
        ('[{"type": "text", "text": "12 units"}, {"type": "text", "text": "in stock"}]',
         "12 units\nin stock"),
    ],
)
def test_a_tool_result_is_read_as_data(text: str, data: Any) -> None:
    assert read_tool_result(text) == data


def test_oversized_or_deep_literals_are_text_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    assert read_tool_result("[" * 100_000 + "]" * 100_000) is None
    monkeypatch.setattr(tool_results, "LITERAL_LIMIT", 10)
    assert read_tool_result("{'sku': 'ABC-1', 'on_hand': 12}") is None


def _with_contents(episode: Episode, contents: list[str]) -> Episode:
    """``episode`` with its tool messages' contents replaced, in order."""
    it = iter(contents)
    transcript = tuple(
        {**m, "content": next(it)} if m.get("role") == "tool" else m for m in episode.transcript
    )
    return replace(episode, transcript=transcript)


SENT = {
    "python repr (openai-agents)": [str(ABC_RESULT), str(XYZ_RESULT)],
    "key: value lines": [
        "\n".join(f"{k}: {v}" for k, v in r.items()) for r in (ABC_RESULT, XYZ_RESULT)
    ],
    "anthropic content blocks": [
        json.dumps([{"type": "text", "text": str(r)}]) for r in (ABC_RESULT, XYZ_RESULT)
    ],
    "JSON in a JSON string": [json.dumps(json.dumps(r)) for r in (ABC_RESULT, XYZ_RESULT)],
}


@pytest.mark.parametrize("shape", list(SENT))
def test_a_correct_answer_is_grounded_whatever_the_shape(shape: str) -> None:
    ep = _with_contents(stock_episode(CORRECT), SENT[shape])
    verdict = GROUNDED_JUDGE.judge_episode(ep, ASKED)
    assert verdict.passed, verdict.explanation
    assert [f.mode for f in classify(ep, GROUNDED_JUDGE, ASKED)] == []


@pytest.mark.parametrize("shape", list(SENT))
def test_an_invented_value_is_caught_whatever_the_shape(shape: str) -> None:
    ep = _with_contents(stock_episode(INVENTED), SENT[shape])
    assert FABRICATED_VALUE in [f.mode for f in classify(ep, GROUNDED_JUDGE, ASKED)]
