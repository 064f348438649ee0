"""Benchmark: parallel tool calls of one assistant message run at the same time.

    python benchmarks/bench_parallel_tools.py [--latency 0.2] [--repeats 5]

Serves the bundled Open-Meteo fixture server on loopback with ``--latency`` seconds added to
every request (default 200 ms, a slow real-world round trip), then times one episode of the
single host with an in-process scripted model (so the time is the tool round: assistant
message, tool calls, tool messages) and the ``atomic`` toolset:

* 1 call: ``get_weather_by_coords`` for 北京 (one Open-Meteo request);
* 3 calls in one message: ``get_weather_by_coords`` for 北京, 上海, 广州 (three requests).

All tools share one ``requests.Session``, as in a real run. Reports the median of
``--repeats`` rounds each and the ratio; requirement: the round of 3 takes ≤ 1.3× the round
of 1 (sequential execution would be ~3×). Exits 1 when it does not.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import requests

from toolreplay.doubles.loopback import serve
from toolreplay.hosts import run_single
from toolreplay.models.scripted import ScriptedModel
from toolreplay.study.weather.fixture_server import OpenMeteoFixtures, load_fixtures
from toolreplay.study.weather.openmeteo import OpenMeteoClient
from toolreplay.study.weather.toolsets import atomic_toolset
from toolreplay.wire.episode import ModelReply, ToolCall

LIMIT = 1.3
PLACES = {"北京": (39.9075, 116.39723), "上海": (31.22222, 121.45806), "广州": (23.11667, 113.25)}


def slow_fixtures(latency: float) -> Any:
    fixtures = OpenMeteoFixtures(load_fixtures())

    def app(method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
        time.sleep(latency)
        return fixtures(method, path, query, body)

    return app


def round_seconds(client: OpenMeteoClient, places: list[str]) -> float:
    calls = tuple(
        ToolCall(f"c{i}", "get_weather_by_coords",
                 json.dumps({"latitude": PLACES[p][0], "longitude": PLACES[p][1]}))
        for i, p in enumerate(places)
    )  # fmt: skip
    model = ScriptedModel([ModelReply(None, calls, "tool_calls"), ModelReply("ok")])
    started = time.perf_counter()
    episode = run_single(model, atomic_toolset(client), [{"role": "user", "content": "q"}])
    seconds = time.perf_counter() - started
    bad = [r.error for r in episode.rounds[0].results if r.error]
    if bad:
        raise SystemExit(f"tool call failed: {bad[0]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with serve(slow_fixtures(args.latency)) as base, requests.Session() as session:
        session.trust_env = False
        client = OpenMeteoClient(session, f"{base}/v1/search", f"{base}/v1/forecast")
        round_seconds(client, ["北京", "上海", "广州"])  # warm the connection pool
        one = statistics.median(round_seconds(client, ["北京"]) for _ in range(args.repeats))
        three = statistics.median(
            round_seconds(client, ["北京", "上海", "广州"]) for _ in range(args.repeats)
        )
    ratio = three / one
    print(f"latency per Open-Meteo request: {args.latency * 1000:.0f} ms")
    print(f"round of 1 call:  {one * 1000:7.1f} ms (median of {args.repeats})")
    print(f"round of 3 calls: {three * 1000:7.1f} ms (median of {args.repeats})")
    print(f"ratio: {ratio:.2f}x (limit {LIMIT}x; sequential would be ~3x)")
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
