"""Loading cassette YAML: the one checked pass against the checks as they were, the bare libyaml
loader, and other maintained YAML libraries when they are installed; and the parse cache's warm
path (marshal against pickle and JSON).

    python benchmarks/bench_yaml.py [--reps 5]

Every committed cassette (``cassettes/``, ``examples/*/cassettes``) and one large cassette made
of all the reference set's interactions, each way in turn (alternated, CPU time of this
process, min / median per cassette). Ways:

- **before**: the checks as they were: the text parsed to events for the depth check, then
  loaded by libyaml's safe loader, then a walk over the composed nodes refusing aliases;
- **one pass**: :func:`toolreplay.inputs.load_yaml` (the same refusals, in the loading pass);
- **libyaml, no checks**: ``yaml.load(text, CSafeLoader)``, what the checks cost on top;
- **ruamel.yaml (safe, C)**, **yaml-rs**, **rapidyaml (tree only)**: when importable. Each is
  also asked whether it gives exactly the values the one pass gives (``repr`` equal: types,
  values, key order) on every committed cassette.

Nothing here is a test; the figures go to ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import marshal
import pickle
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from toolreplay.cassettes.store import ParseCache, validate_cassette  # noqa: E402
from toolreplay.inputs import load_yaml  # noqa: E402

LIBYAML: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def before(text: str) -> Any:
    """The checks as they were (a depth pass over the events, the load, a walk for aliases)."""
    depth = 0
    for event in yaml.parse(text, Loader=LIBYAML):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > 200:
                raise yaml.YAMLError("collections nest deeper than 200 levels")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
    loader = LIBYAML(text)
    try:
        root = loader.get_single_node()
        seen: set[int] = set()
        stack = [root] if root is not None else []
        while stack:
            node = stack.pop()
            if id(node) in seen:
                raise yaml.YAMLError("alias")
            seen.add(id(node))
            if isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    stack.extend((value, key))
            elif isinstance(node, yaml.SequenceNode):
                stack.extend(reversed(node.value))
        return loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()


def candidates() -> dict[str, Callable[[str], Any]]:
    """The ways measured: ours, and the other libraries that are installed."""
    ways: dict[str, Callable[[str], Any]] = {
        "before (depth parse + load + alias walk)": before,
        "one pass (load_yaml)": load_yaml,
        "libyaml, no checks": lambda text: yaml.load(text, Loader=LIBYAML),
    }
    try:
        from ruamel.yaml import YAML

        ruamel = YAML(typ="safe", pure=False)
        ways["ruamel.yaml (safe, C)"] = ruamel.load
    except ImportError:
        pass
    try:
        import yaml_rs  # type: ignore[import-not-found]

        ways["yaml-rs"] = lambda text: yaml_rs.loads(text, parse_datetime=False)
    except ImportError:
        pass
    try:
        import ryml  # type: ignore[import-not-found]

        ways["rapidyaml (tree only, no values)"] = lambda text: ryml.parse_in_arena(text.encode())
    except ImportError:
        pass
    return ways


def cassette_texts() -> tuple[list[str], str]:
    """Every committed cassette's text, and one large cassette of the reference set's
    interactions."""
    paths = sorted(REPO.glob("cassettes/**/*.yaml")) + sorted(
        p for p in REPO.glob("examples/*/cassettes/**/*.yaml") if "node_modules" not in p.parts
    )
    texts = [p.read_text(encoding="utf-8") for p in paths]
    bodies = [
        t.split("\ninteractions:\n", 1)[1]
        for p, t in zip(paths, texts, strict=True)
        if "/reference/" in str(p) and "\ninteractions:\n" in t
    ]
    return texts, "version: 1\ninteractions:\n" + "".join(bodies)


def measure(ways: dict[str, Callable[[str], Any]], texts: list[str], reps: int) -> None:
    times: dict[str, list[float]] = {name: [] for name in ways}
    for rep in range(reps):
        order = list(ways) if rep % 2 == 0 else list(ways)[::-1]
        for name in order:
            started = time.process_time()
            for text in texts:
                ways[name](text)
            times[name].append((time.process_time() - started) / len(texts) * 1e3)
    base = statistics.median(times["before (depth parse + load + alias walk)"])
    for name, values in times.items():
        med = statistics.median(values)
        print(f"  {name:42s} {min(values):8.3f} / {med:8.3f} ms   ({base / med:4.2f}x before)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    reps = parser.parse_args().reps
    texts, large = cassette_texts()
    ways = candidates()
    print(f"{len(texts)} committed cassettes ({sum(map(len, texts)) / len(texts) / 1024:.1f} KiB")
    print(f"on average), min / median ms per cassette, {reps} alternated repetitions:")
    measure(ways, texts, reps)
    print(f"one large cassette ({len(large) / 1e6:.1f} MB), min / median ms:")
    measure(ways, [large], reps)
    print("exactly the values the one pass gives (repr equal), committed cassettes:")
    for name, way in ways.items():
        if "tree only" in name:
            print(f"  {name:42s} (no Python values: a tree of C++ nodes)")
            continue
        same = sum(repr(way(t)) == repr(load_yaml(t)) for t in texts)
        print(f"  {name:42s} {same} / {len(texts)}")
    paths = sorted(REPO.glob("cassettes/reference/**/*.yaml"))
    print(f"a cassette's first load against a warm parse cache ({len(paths)} reference cassettes;")
    print("read, sha256, then parse + validate + write the entry, or read the entry), ms:")
    cold_warm(paths, reps)
    print("the parse cache's warm path: validated interactions from an entry, ms per cassette:")
    values = [validate_cassette(p, p.read_bytes()) for p in paths]
    formats = {
        "marshal (the entries)": (marshal.dumps, marshal.loads),
        "pickle 5": (lambda v: pickle.dumps(v, 5), pickle.loads),
        "json": (lambda v: json.dumps(v).encode(), json.loads),
    }
    for name, (dump, load) in formats.items():
        blobs = [dump(v) for v in values]
        best = []
        for _ in range(reps):
            started = time.process_time()
            for blob in blobs:
                hashlib.sha256(blob).digest()
                load(blob)
            best.append((time.process_time() - started) / len(blobs) * 1e3)
        print(f"  {name:42s} {min(best):8.3f} / {statistics.median(best):8.3f} ms (with sha256)")


def cold_warm(paths: list[Path], reps: int) -> None:
    """What a cassette costs with an empty parse cache and with the entry on disk (a new
    process's cache: nothing in memory), as :func:`toolreplay.cassettes.store.load_cassette`
    spends it."""

    def load_all(cache: ParseCache) -> float:
        started = time.process_time()
        for path in paths:
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if cache.get(digest) is None:
                cache.put(digest, validate_cassette(path, data))
        return (time.process_time() - started) / len(paths) * 1e3

    cold, warm = [], []
    for _ in range(reps):
        with tempfile.TemporaryDirectory() as folder:
            cold.append(load_all(ParseCache(Path(folder))))
            warm.append(load_all(ParseCache(Path(folder))))
    ratios = [c / w for c, w in zip(cold, warm, strict=True)]
    print(f"  {'empty parse cache':42s} {min(cold):8.3f} / {statistics.median(cold):8.3f} ms")
    print(f"  {'warm (the entry on disk)':42s} {min(warm):8.3f} / {statistics.median(warm):8.3f}")
    print(f"  {'empty / warm, paired':42s} {min(ratios):8.2f} / {statistics.median(ratios):8.2f}")


if __name__ == "__main__":
    main()
