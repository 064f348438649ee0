"""Replay beside its floor and its peer, in one process, alternated: per episode, min and
median over repetitions, and the ratios paired by repetition.

    python benchmarks/bench_peer.py [--reps 15] [--set cassettes/reference] [--eval FILE]

Each repetition runs the same episodes (trial 1 of every configuration × question of the
set) five ways, in turn:

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
- **vcrpy, its own parser** (``peer_own``): vcrpy as it comes, replaying the same recordings:
  ``vcr.VCR(record_mode="none")`` with its default ``yaml`` serializer and filesystem
  persister (the file read and deserialized at every ``use_cassette``). Stock vcrpy cannot
  read toolreplay's cassettes (JSON bodies are stored parsed, under ``parsed_body``), so the
  same cassettes are first converted to vcrpy's stock format (bodies as strings, what vcrpy
  itself writes when it records: ``vcr.serialize.serialize`` with
  ``vcr.serializers.yamlserializer``) into a temporary folder, before timing;
- **vcrpy, toolreplay's parser** (``peer``): the same, reading toolreplay's cassettes through
  toolreplay's serializer (``JsonBodySerializer``) registered on vcrpy.

Both vcrpy ways match as toolreplay does (``method``, ``path``, ``query``, typed JSON body:
toolreplay's ``json_body`` matcher registered), use plain clients, and check every
interaction was played. vcrpy is not thread-safe (it removes its patches for every thread
while it builds a connection), so ``requests`` sends take turns under a lock
(``toolreplay.cassettes.vcr.one_request_at_a_time``) while a cassette is in use; without it
bare vcrpy missed some replays of the parallel-call questions.

Every way runs a warm-up pass first (imports, the SDK's lazy modules, the parse cache), and
each episode's final answer is compared with toolreplay's, so all five do the same work.
Prints the per-episode figures (wall and CPU time) and the ratios replay ÷ floor (target ≤
1.10), vcrpy (own parser) ÷ replay (target ≥ 2.5) and vcrpy (toolreplay's parser) ÷ replay,
each computed per repetition (both ways timed in the same repetition) and given as the min,
median and max of those paired ratios. ``measure()`` is what ``bench_scale.py`` calls.
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
WAYS = ("parse", "floor", "replay", "peer_own", "peer")
TARGET_REPLAY_FLOOR = 1.10
TARGET_PEER_REPLAY = 2.5  # vcrpy with its own parser ÷ replay
#: ``(numerator, denominator, target, the target is an upper bound)`` of the paired ratios.
RATIOS: tuple[tuple[str, str, float | None, bool], ...] = (
    ("replay", "floor", TARGET_REPLAY_FLOOR, True),
    ("peer_own", "replay", TARGET_PEER_REPLAY, False),
    ("peer", "replay", None, False),
    ("peer", "peer_own", None, False),
)
NAMES = {
    "parse": "bare parse, yaml.load(CSafeLoader)",
    "floor": "floor: SDK over httpx.MockTransport, trivial requests adapter",
    "replay": "toolreplay replay (parse cache in memory)",
    "peer_own": "vcrpy, its own yaml serializer (cassettes in its stock format)",
    "peer": "vcrpy, toolreplay's serializer (toolreplay's cassettes)",
}


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


def stock_vcrpy_copies(paths: list[Path], folder: Path) -> list[Path]:
    """``paths`` (toolreplay cassettes) rewritten in vcrpy's stock format into ``folder``, as
    vcrpy's own recorder writes a cassette (``vcr.serialize.serialize`` with its ``yaml``
    serializer: bodies as strings, headers as stored), one file each, in order."""
    from vcr.request import Request
    from vcr.serialize import serialize
    from vcr.serializers import yamlserializer

    from toolreplay.cassettes.format import JsonBodySerializer

    out = []
    for i, path in enumerate(paths):
        data = JsonBodySerializer.deserialize(path.read_text(encoding="utf-8"))
        items = data["interactions"]
        cassette = {
            "requests": [Request._from_dict(item["request"]) for item in items],
            "responses": [item["response"] for item in items],
        }
        dest = folder / f"{i:04d}.yaml"
        dest.write_text(serialize(cassette, yamlserializer), encoding="utf-8")
        out.append(dest)
    return out


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


def floor_cpu(set_dir: Path, eval_file: Path, limit: int = 400, passes: int = 3) -> list[float]:
    """The floor alone on a set's own episodes: ms of CPU time of this process per episode,
    one figure per pass, over trial 1 of at most ``limit`` episodes spread evenly over the
    set's manifest (every episode when it holds no more; a generated set lists one
    configuration's episodes, then the other's, so a prefix would hold only the first)
    (the host code, the SDK over ``httpx.MockTransport`` and a trivial ``requests`` adapter,
    as in :func:`measure`; no cassette read, nothing judged, audited or written), after one
    warm-up pass over a few of them. What the live code path costs on those episodes, which
    no change of toolreplay's can take off a whole run's CPU per episode."""
    from toolreplay.cassettes.manifest import cassette_path, read_manifest
    from toolreplay.evals import load_eval
    from toolreplay.models.base import ModelSettings
    from toolreplay.models.openai_chat import OpenAIChatModel
    from toolreplay.runs.configuration import ablation_configurations, study_configurations
    from toolreplay.runs.episode import run_episode

    suite = load_eval(eval_file)
    manifest = read_manifest(set_dir)
    configs = {c.name: c for c in [*study_configurations(suite), *ablation_configurations(suite)]}
    jobs = []
    for key in manifest.episodes:
        name, question_id, *trial = key.split("/")
        if trial in ([], ["trial-1"]) and name in configs:
            jobs.append((configs[name], suite.question(question_id)))
    jobs = jobs[:: -(-len(jobs) // limit) or 1][:limit]
    replies = [_recorded_replies(cassette_path(set_dir, c.name, q.id, 1)) for c, q in jobs]
    settings = ModelSettings(
        base_url=manifest.model_base_url, model=manifest.model, api_key=None,
        temperature=suite.experiment.temperature,
    )  # fmt: skip
    floor = Floor()
    model = OpenAIChatModel(settings, floor.http, tool_choice=suite.experiment.tool_choice)

    def run(some: list[tuple[Any, Any]], recorded: list[Any]) -> None:
        for (config, question), reply in zip(some, recorded, strict=True):
            floor.load(reply)
            client = config.study_.tool_client(floor.session, manifest.tool_urls)
            run_episode(suite, config, question, model=model, tool_client=client,
                        today=manifest.today)  # fmt: skip

    run(jobs[:20], replies[:20])
    found = []
    for _ in range(passes):
        gc.collect()
        cpu = time.process_time()
        run(jobs, replies)
        found.append((time.process_time() - cpu) / max(1, len(jobs)) * 1000)
    return found


def measure(
    set_dir: Path = REFERENCE,
    eval_file: Path = EVAL,
    reps: int = 15,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """``{"episodes": n, WAY: [ms of wall time per episode, one per repetition], WAY_cpu:
    [ms of CPU time of this process per episode, …]}`` for each of :data:`WAYS` ("parse",
    "floor", "replay", "peer_own", "peer"), on trial 1 of every configuration × question of
    the set, the ways alternated within each repetition (in this process; repetition ``i``
    of every way is ``found[way][i]``). SystemExit when a way's final answers differ from
    toolreplay replay's or vcrpy leaves an interaction unplayed."""
    import shutil
    import tempfile

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
    stock_dir = Path(tempfile.mkdtemp(prefix="bench-peer-vcrpy-"))
    stock_paths = stock_vcrpy_copies(paths, stock_dir)
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
    # vcrpy as it comes: its default yaml serializer reading its own stock format
    peer_own = vcr.VCR(record_mode="none", match_on=MATCH_ON)
    peer_own.register_matcher("json_body", json_body_matcher)
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

    def run_vcrpy(way: str, player: Any, files: list[Path]) -> None:
        for (config, question), path in zip(jobs, files, strict=True):
            client = config.study_.tool_client(peer_session, manifest.tool_urls)
            with player.use_cassette(str(path)) as cassette, one_request_at_a_time():
                episode = run_episode(
                    suite, config, question, model=peer_model, tool_client=client,
                    today=manifest.today,
                )  # fmt: skip
                if not cassette.all_played:
                    raise SystemExit(f"vcrpy ({way}): {path} not played in full")
            answers[way].append(episode.answer)

    found: dict[str, Any] = {"episodes": len(jobs)}
    for way in WAYS:
        found[way], found[f"{way}_cpu"] = [], []
    with replay_clients() as (http, session):
        ways: dict[str, Callable[[], None]] = {
            "parse": run_parse,
            "floor": run_floor,
            "replay": lambda: run_replay(http, session),
            "peer_own": lambda: run_vcrpy("peer_own", peer_own, stock_paths),
            "peer": lambda: run_vcrpy("peer", peer, paths),
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
    shutil.rmtree(stock_dir, ignore_errors=True)
    return found


def paired(found: dict[str, Any], a: str, b: str) -> list[float]:
    """``a ÷ b`` per repetition (both timed in the same repetition), in repetition order."""
    return [x / y for x, y in zip(found[a], found[b], strict=True)]


def rows(found: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """``(figure, min, median, target, mark)`` rows of :func:`measure`'s result: per way the
    min and median ms per episode (wall, then CPU time); per ratio of :data:`RATIOS` the min
    and median of the ratios paired by repetition, with the max in the figure's name, the
    target and ✓/✗ on the median (no mark without a target)."""
    out = []
    for suffix, words in (("", "wall time"), ("_cpu", "CPU time of the process")):
        out.append((f"{words}, ms per episode", "", "", "", ""))
        for w in WAYS:
            values = found.get(w + suffix)
            if not values:
                continue
            out.append(
                (f"  {NAMES[w]}", f"{min(values):.2f}", f"{statistics.median(values):.2f}", "", "")
            )
        for a, b, target, below in RATIOS:
            if not found.get(a + suffix) or not found.get(b + suffix):
                continue
            ratios = paired(found, a + suffix, b + suffix)
            mid = statistics.median(ratios)
            mark = (
                ""
                if target is None
                else ("✓" if (mid <= target if below else mid >= target) else "✗")
            )
            out.append(
                (
                    f"  ratio {a}/{b}, paired by repetition (max {max(ratios):.2f})",
                    f"{min(ratios):.2f}",
                    f"{mid:.2f}",
                    "" if target is None else f"{'≤' if below else '≥'} {target:g}",
                    mark,
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
