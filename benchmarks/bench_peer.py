"""Replay beside its floor and its peer, in one process, alternated: per episode, min and
median over repetitions, and the ratios.

    python benchmarks/bench_peer.py [--reps 15] [--set cassettes/reference] [--eval FILE]

Each repetition runs the same episodes (trial 1 of every configuration × question of the
set) four ways, in turn:

- **parse**: a bare ``yaml.load(text, Loader=yaml.CSafeLoader)`` of each cassette (the text
  read before timing): what reading a cassette costs at the least;
- **floor**: the same host code (``toolreplay.runs.episode.run_episode``: the openai SDK, the
  tools over ``requests``) with the SDK over an ``httpx.MockTransport`` handing out the
  recorded model replies in recorded order and a trivial ``requests`` adapter answering each
  URL with its recorded reply: no cassette read, no matching, nothing checked. What replay
  could cost if serving were free;
- **toolreplay replay**: ``replay_episode`` over one set of replay clients (the parse cache
  in memory after the warm-up): the cassette read and its sha256 checked against the
  manifest, matching, the unplayed check;
- **vcrpy peer**: vcrpy's own patches replaying the same cassettes, set up as a user of
  vcrpy would: ``vcr.VCR(record_mode="none")`` with its own filesystem persister (the file
  read and deserialized at every ``use_cassette``), toolreplay's serializer and matchers
  (``method``, ``path``, ``query``, typed JSON body), plain clients, every interaction played
  checked. Note: vcrpy is not thread-safe (it removes its patches for every thread while it
  builds a connection), so ``requests`` sends take turns under a lock
  (``toolreplay.cassettes.vcr.one_request_at_a_time``) while a cassette is in use; without it
  bare vcrpy missed some replays of the parallel-call questions.

Every way runs a warm-up pass first (imports, the SDK's lazy modules, the parse cache), and
each episode's final answer is compared with toolreplay's, so all four do the same work.
Prints the per-episode figures and replay ÷ floor (target ≤ 1.10) and peer ÷ replay (target
≥ 2.5). ``measure()`` is what ``bench_scale.py`` calls.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "cassettes" / "reference"
EVAL = ROOT / "evals" / "weather.yaml"
WAYS = ("parse", "floor", "replay", "peer")
TARGET_REPLAY_FLOOR = 1.10
TARGET_PEER_REPLAY = 2.5


def _recorded_replies(path: Path) -> tuple[list[tuple[int, list[tuple[str, str]], bytes]],
                                            dict[str, list[tuple[int, bytes]]]]:  # fmt: skip
    """A cassette's model replies in recorded order and its other replies by URL, as bytes."""
    from toolreplay.cassettes.store import read_cassette

    model: list[tuple[int, list[tuple[str, str]], bytes]] = []
    other: dict[str, list[tuple[int, bytes]]] = {}
    for item in read_cassette(path):
        body = item["response"]["body"]
        content = (
            json.dumps(body["parsed_body"], ensure_ascii=False).encode()
            if "parsed_body" in body
            else (body.get("string") or b"")
        )
        if isinstance(content, str):
            content = content.encode()
        status = item["response"]["status"]["code"]
        headers = [(k, v) for k, vs in item["response"]["headers"].items() for v in vs]
        if item["request"]["uri"].endswith("/chat/completions"):
            model.append((status, headers, content))
        else:
            other.setdefault(item["request"]["uri"], []).append((status, content))
    return model, other


class Floor:
    """The floor's clients: an ``httpx.Client`` over ``httpx.MockTransport`` and a
    ``requests.Session`` with a trivial adapter, serving the replies :meth:`load` put in."""

    def __init__(self) -> None:
        import httpx
        import requests
        from requests.adapters import BaseAdapter

        self.model: list[tuple[int, list[tuple[str, str]], bytes]] = []
        self.other: dict[str, list[tuple[int, bytes]]] = {}
        self._lock = threading.Lock()
        floor = self

        def handle(request: httpx.Request) -> httpx.Response:
            status, headers, content = floor.model.pop(0)
            return httpx.Response(status, headers=headers, content=content)

        class Adapter(BaseAdapter):
            def send(self, request: Any, **kwargs: Any) -> Any:
                with floor._lock:
                    status, content = floor.other[request.url].pop(0)
                response = requests.Response()
                response.status_code = status
                response._content = content
                response.headers["content-type"] = "application/json"
                response.encoding = "utf-8"
                response.url = request.url
                response.request = request
                return response

            def close(self) -> None:
                pass

        self.http = httpx.Client(transport=httpx.MockTransport(handle))
        self.session = requests.Session()
        self.session.mount("http://", Adapter())
        self.session.mount("https://", Adapter())

    def load(self, replies: tuple[Any, Any]) -> None:
        model, other = replies
        self.model = list(model)
        self.other = {k: list(v) for k, v in other.items()}


def measure(
    set_dir: Path = REFERENCE,
    eval_file: Path = EVAL,
    reps: int = 15,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """``{"episodes": n, "parse"|"floor"|"replay"|"peer": [ms per episode, one per
    repetition]}`` for trial 1 of every configuration × question of the set, the four ways
    alternated within each repetition (in this process)."""
    import httpx
    import requests
    import vcr

    from toolreplay.cassettes.format import MATCH_ON, JsonBodySerializer, json_body_matcher
    from toolreplay.cassettes.manifest import cassette_path, read_manifest
    from toolreplay.cassettes.vcr import one_request_at_a_time
    from toolreplay.evals import load_eval
    from toolreplay.models.base import ModelSettings
    from toolreplay.models.openai_chat import OpenAIChatModel
    from toolreplay.runs.configuration import ablation_configurations, study_configurations
    from toolreplay.runs.episode import replay_clients, replay_episode, run_episode

    suite = load_eval(eval_file)
    manifest = read_manifest(set_dir)
    configs = [*study_configurations(suite), *ablation_configurations(suite)]
    jobs = [(c, q) for c in configs for q in suite.questions]
    paths = [cassette_path(set_dir, c.name, q.id, 1) for c, q in jobs]
    texts = [p.read_text(encoding="utf-8") for p in paths]
    replies = [_recorded_replies(p) for p in paths]
    settings = ModelSettings(
        base_url=manifest.model_base_url,
        model=manifest.model,
        api_key=None,
        temperature=suite.experiment.temperature,
    )
    tool_choice = suite.experiment.tool_choice
    floor = Floor()
    floor_model = OpenAIChatModel(settings, floor.http, tool_choice=tool_choice)
    peer_http = httpx.Client(trust_env=False)
    peer_session = requests.Session()
    peer_session.trust_env = False
    peer_model = OpenAIChatModel(settings, peer_http, tool_choice=tool_choice)
    # vcrpy as a user would set it up: its own persister (it reads and deserializes the file
    # at every use_cassette), toolreplay's serializer and matchers, record mode none
    peer = vcr.VCR(record_mode="none", match_on=MATCH_ON, serializer="toolreplay-yaml")
    peer.register_serializer("toolreplay-yaml", JsonBodySerializer)
    peer.register_matcher("json_body", json_body_matcher)
    answers: dict[str, list[str]] = {way: [] for way in WAYS[1:]}

    def run_parse() -> None:
        for text in texts:
            yaml.load(text, Loader=yaml.CSafeLoader)

    def run_floor() -> None:
        for (config, question), reply in zip(jobs, replies, strict=True):
            floor.load(reply)
            client = config.study_.tool_client(floor.session, manifest.tool_urls)
            episode = run_episode(
                suite, config, question, model=floor_model, tool_client=client,
                today=manifest.today,
            )  # fmt: skip
            answers["floor"].append(episode.answer)

    def run_replay(http: Any, session: Any) -> None:
        for config, question in jobs:
            episode = replay_episode(
                set_dir, manifest, suite, config, question, http=http, session=session
            )
            answers["replay"].append(episode.answer)

    def run_peer() -> None:
        for (config, question), path in zip(jobs, paths, strict=True):
            client = config.study_.tool_client(peer_session, manifest.tool_urls)
            with peer.use_cassette(str(path)) as cassette, one_request_at_a_time():
                episode = run_episode(
                    suite, config, question, model=peer_model, tool_client=client,
                    today=manifest.today,
                )  # fmt: skip
                if not cassette.all_played:
                    raise SystemExit(f"vcrpy peer: {path} not played in full")
            answers["peer"].append(episode.answer)

    found: dict[str, Any] = {"episodes": len(jobs)}
    for way in WAYS:
        found[way], found[f"{way}_cpu"] = [], []
    with replay_clients() as (http, session):
        ways: dict[str, Callable[[], None]] = {
            "parse": run_parse,
            "floor": run_floor,
            "replay": lambda: run_replay(http, session),
            "peer": run_peer,
        }
        for way in WAYS:  # warm-up
            ways[way]()
        reference = answers["replay"][: len(jobs)]
        for way in WAYS[1:]:
            if answers[way][: len(jobs)] != reference:
                raise SystemExit(f"{way}: the final answers differ from toolreplay replay's")
            answers[way].clear()
        for rep in range(reps):
            for way in WAYS:
                gc.collect()
                started, cpu = time.perf_counter(), time.process_time()
                ways[way]()
                found[way].append((time.perf_counter() - started) / len(jobs) * 1000)
                found[f"{way}_cpu"].append((time.process_time() - cpu) / len(jobs) * 1000)
            if progress is not None:
                progress(rep + 1)
    peer_http.close()
    peer_session.close()
    return found


def rows(found: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """``(figure, min, median, target, mark)`` rows of :func:`measure`'s result."""
    names = {
        "parse": "bare parse, yaml.load(CSafeLoader)",
        "floor": "floor: SDK over httpx.MockTransport, trivial requests adapter",
        "replay": "toolreplay replay (parse cache in memory)",
        "peer": "vcrpy peer (its patches, a lock around requests' send)",
    }
    out = []
    for suffix, words in (("", "wall time"), ("_cpu", "CPU time of the process")):
        out.append((f"{words}, ms per episode", "", "", "", ""))
        for w in WAYS:
            values = found[w + suffix]
            out.append(
                (f"  {names[w]}", f"{min(values):.2f}", f"{statistics.median(values):.2f}", "", "")
            )
        for (a, b), target, below in (
            (("replay", "floor"), TARGET_REPLAY_FLOOR, True),
            (("peer", "replay"), TARGET_PEER_REPLAY, False),
        ):
            x, y = found[a + suffix], found[b + suffix]
            lo = min(x) / min(y)
            mid = statistics.median(x) / statistics.median(y)
            ok = mid <= target if below else mid >= target
            out.append(
                (
                    f"  ratio {a}/{b} (min/min, median/median)",
                    f"{lo:.2f}",
                    f"{mid:.2f}",
                    f"{'≤' if below else '≥'} {target:g}",
                    "✓" if ok else "✗",
                )
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--set", type=Path, default=REFERENCE, dest="set_dir")
    parser.add_argument("--eval", type=Path, default=EVAL, dest="eval_file")
    args = parser.parse_args()
    one, five, _ = os.getloadavg()
    print(f"load average before: {one:.2f} {five:.2f}", flush=True)
    found = measure(args.set_dir, args.eval_file, args.reps)
    one, five, _ = os.getloadavg()
    print(f"load average after: {one:.2f} {five:.2f}; {args.reps} alternated repetitions, "
          f"{found['episodes']} episodes each (ms per episode)")  # fmt: skip
    table = rows(found)
    width = max(len(r[0]) for r in table)
    print(f"{'figure':<{width}}  {'min':>9}  {'median':>9}  {'target':>7}  ok")
    for name, lo, mid, target, mark in table:
        if not lo:
            print(name)
        else:
            print(f"{name:<{width}}  {lo:>9}  {mid:>9}  {target:>7}  {mark}")


if __name__ == "__main__":
    main()
