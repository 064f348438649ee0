"""Episodes for judge tests: a question's places and the external corpus's fixtures (the fixture
server's Open-Meteo values in get_weather's shape), with any final answer."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import yaml

from toolreplay.judging.grounding import PlaceSpec, Target
from toolreplay.wire.episode import Episode, ModelReply, Round, ToolCall, ToolResult, Usage

from .conftest import REPO

EXTERNAL = REPO / "evals" / "phrasings-external.yaml"

BEIJING = PlaceSpec("北京", "北京市", ("Beijing",))
SHANGHAI = PlaceSpec("上海", "上海市", ("Shanghai",))
GUANGZHOU = PlaceSpec("广州", "广东省", ("Guangzhou",))
XIAMEN = PlaceSpec("厦门", "福建省", ("Xiamen",))
CHANGSHA = PlaceSpec("长沙", "湖南省", ("Changsha",))
NANCHANG = PlaceSpec("南昌", "江西省", ("Nanchang",))
HANGZHOU = PlaceSpec("杭州", "浙江省", ("Hangzhou",))


@cache
def fixtures() -> dict[str, dict[str, Any]]:
    return dict(yaml.safe_load(EXTERNAL.read_text(encoding="utf-8"))["fixtures"])


def episode(answer: str, *tools: str) -> Episode:
    """One get_weather call per fixture named in ``tools``, then ``answer``."""
    results = [fixtures()[t] for t in tools]
    calls = tuple(
        ToolCall(f"call_1_{n}", "get_weather", json.dumps({"city": r["place"]["name"]}))
        for n, r in enumerate(results, start=1)
    )
    messages: list[Any] = [{"role": "user", "content": "?"}]
    rounds = []
    if calls:
        first = ModelReply(None, calls, "tool_calls")
        done = tuple(ToolResult(c, json.dumps(r, ensure_ascii=False)) for c, r in
                     zip(calls, results, strict=True))  # fmt: skip
        messages += [first.to_message(), *(d.to_message() for d in done)]
        rounds.append(Round(1, True, first, done))
    final = ModelReply(answer)
    rounds.append(Round(len(rounds) + 1, True, final))
    messages.append(final.to_message())
    return Episode("judge", "q", "?", tuple(messages), tuple(rounds), "converged", answer, Usage())


def expect(measure: str, day: int, *places: PlaceSpec) -> Target:
    return Target(measure, day, places)
