"""Honest scale data for the benchmarks: a generated eval file of distinct questions about
distinct places, recorded once with the stand-in model and the Open-Meteo fixture server, so
that every cassette of the 1,000- and 2,500-episode sets is a recording of its own.

    python benchmarks/scale_sets.py [--questions 250]   # generate and record (cached)

The eval file has the system prompt, tools and settings of ``evals/weather.yaml`` and
``questions`` questions built from the places the fixture server knows (those of
``evals/weather.yaml`` and ``evals/weather-hard.yaml``): one place (temperature, rain or
wind, today or tomorrow) or a comparison of two or three, each question a different
combination, worded from the study's own questions. Everything lives under
``benchmarks/.cache/`` (git-ignored): ``evals/scale-x250.yaml`` and its phrasing corpus,
``cassettes/scale-x250/`` (one trial of the 10 configurations: 2,500 episodes) and
``cassettes/scale-x100-of-250/``, the first 100 questions' cassettes with the manifest cut to
them (1,000 episodes). A set is recorded again only when the generated eval file changes or
today's code makes it stale (``toolreplay.runs.configuration.stale_parts``); recording 2,500
episodes takes ~8 min on 2 idle cores.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"
EVAL = ROOT / "evals" / "weather.yaml"
PHRASINGS = ROOT / "evals" / "phrasings.yaml"
CONFIGURATIONS = 2  # loop+oneshot and loop+atomic (see generated_eval)
_SCRIPT = Path(sys.executable).with_name("toolreplay")
TOOLREPLAY = (
    [str(_SCRIPT)]
    if _SCRIPT.exists()
    else [
        sys.executable,
        "-c",
        "import sys; from toolreplay.cli.main import main; sys.exit(main())",
    ]
)

#: ``(query, region, extra)`` of the places the fixture server answers for (the two eval
#: files' places, with their retries where the study needs them: moved into the question's
#: ``standin:`` block, the weather study's own).
PLACES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("北京", "北京市", {"names": ["Beijing"]}),
    ("上海", "上海市", {"names": ["Shanghai"]}),
    ("广州", "广东省", {"names": ["Guangzhou"]}),
    ("宁德", "福建省", {"names": ["Ningde"]}),
    ("长沙", "湖南省", {}),
    ("南昌", "江西省", {}),
    ("杭州", "浙江", {}),
    ("哈尔滨", "黑龙江省", {}),
    ("厦门", "福建省", {}),
    ("拉萨", "西藏自治区", {}),
    ("丽江", "云南", {}),
    ("通州区", "江苏省", {"retries": ["通州"]}),
)
DAYS = (("today", "今天"), ("tomorrow", "明天"))
SINGLE = (
    ("temperature", "{a}{day}多少度？"),
    ("temperature", "{a}{day}气温怎么样？"),
    ("precipitation", "{a}{day}会下雨吗？"),
    ("wind", "{a}{day}风大吗？"),
)

PAIR = ("{a}和{b}{day}哪个更热？", "{day}{a}和{b}哪里更热？", "{a}、{b}{day}谁更热？")
TRIPLE = (
    "{a}、{b}、{c}{day}哪个最热？",
    "{day}{a}、{b}、{c}哪里最热？",
    "{a}、{b}和{c}{day}哪个城市最热？",
)


def _place(index: int) -> dict[str, Any]:
    query, region, extra = PLACES[index]
    return {"query": query, "region": region, **extra}


def questions(count: int) -> list[dict[str, Any]]:
    """``count`` distinct questions (ValueError beyond what the places allow): the
    single-place questions, the pairs and the triples, interleaved so that any prefix mixes
    them."""
    singles = [
        (measure, text, (i,), day)
        for i in range(len(PLACES))
        for measure, text in SINGLE
        for day in DAYS
    ]
    pairs = [
        ("comparison", text, combo, day)
        for combo in itertools.combinations(range(len(PLACES)), 2)
        for text in PAIR
        for day in DAYS
    ]
    triples = [
        ("comparison", text, combo, day)
        for combo in itertools.combinations(range(len(PLACES)), 3)
        for text in TRIPLE
        for day in DAYS
    ]
    order = singles + pairs + triples
    random.Random(0).shuffle(order)  # a fixed order, so that any prefix has the same mix
    if count > len(order):
        raise ValueError(f"at most {len(order)} distinct questions")
    out = []
    for k, (measure, text, combo, (day, day_zh)) in enumerate(order[:count]):
        names = [PLACES[i][0] for i in combo]
        words = dict(zip("abc", names, strict=False))
        places = [_place(i) for i in combo]
        retries = {p["query"]: p.pop("retries") for p in places if "retries" in p}  # the study's
        out.append(
            {
                "id": f"g{k + 1:03d}-{measure[:4]}-{day}",
                "text": text.format(day=day_zh, **words),
                "measure": measure,
                "day": day,
                "places": places,
                "standin": {"narrates_followups": k % 3 == 0}
                | ({"retries": retries} if retries else {}),
            }
        )
    return out


def _write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generated_eval(count: int, name: str | None = None) -> Path:
    """The eval file of the first ``count`` generated questions (with the phrasing corpus the
    audit reads beside it), under ``benchmarks/.cache/evals/``."""
    data = yaml.safe_load(EVAL.read_text(encoding="utf-8"))
    data["name"] = name or f"scale-x{count}"
    data["questions"] = questions(count)
    # One host, both toolsets, no ablations: the single host's one-shot episodes record the
    # same bytes as the loop's, an ablated baseline the same as the baseline whenever its
    # heuristic does not decide the place; the point is that every cassette is distinct.
    data["experiment"]["hosts"] = ["loop"]
    data["experiment"].pop("ablations", None)
    path = CACHE / "evals" / f"{data['name']}.yaml"
    _write_if_changed(path, yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    _write_if_changed(path.with_name(PHRASINGS.name), PHRASINGS.read_text(encoding="utf-8"))
    return path


def _stale(set_dir: Path, eval_file: Path, stamp_text: str) -> bool:
    from toolreplay.cassettes.errors import CassetteError
    from toolreplay.cassettes.manifest import read_manifest
    from toolreplay.evals import load_eval
    from toolreplay.runs.configuration import stale_parts

    stamp = set_dir.with_name(set_dir.name + ".stamp")
    if not stamp.exists() or stamp.read_text(encoding="utf-8") != stamp_text:
        return True
    try:
        return bool(stale_parts(read_manifest(set_dir), load_eval(eval_file)))
    except (CassetteError, OSError, ValueError):
        return True


def recorded_set(count: int, largest: int) -> tuple[Path, Path]:
    """``(eval file, set folder)`` of the first ``count`` generated questions, from one
    recording of ``largest`` questions (made now when missing or stale)."""
    cassettes = CACHE / "cassettes"
    full_eval = generated_eval(largest)
    full = cassettes / f"scale-x{largest}"
    stamp_text = hashlib.sha256(full_eval.read_bytes()).hexdigest()
    if _stale(full, full_eval, stamp_text):
        print(
            f"recording {largest * CONFIGURATIONS} episodes with the stand-in into {full} …",
            flush=True,
        )
        started = time.perf_counter()
        subprocess.run(
            [
                *TOOLREPLAY,
                "record",
                "--model-source",
                "stand-in",
                "--eval",
                str(full_eval),
                "--cassettes",
                str(cassettes),
                "--set",
                full.name,
                "--trials",
                "1",
                "--force",
            ],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        full.with_name(full.name + ".stamp").write_text(stamp_text, encoding="utf-8")
        print(f"  recorded in {time.perf_counter() - started:.0f} s", flush=True)
    if count == largest:
        return full_eval, full
    eval_file = generated_eval(count, f"scale-x{count}-of-{largest}")
    subset = cassettes / f"scale-x{count}-of-{largest}"
    sub_stamp = hashlib.sha256(
        eval_file.read_bytes() + (full / "manifest.json").read_bytes()
    ).hexdigest()
    if _stale(subset, eval_file, sub_stamp):
        shutil.rmtree(subset, ignore_errors=True)
        qids = {q["id"] for q in questions(count)}
        manifest = json.loads((full / "manifest.json").read_text(encoding="utf-8"))
        keep = {k: v for k, v in manifest["episodes"].items() if k.split("/")[1] in qids}
        for record in keep.values():
            dest = subset / record["cassette"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(full / record["cassette"], dest)
        hints = manifest["settings"].get("standin_hints") or {}
        manifest["settings"]["standin_hints"] = {q: h for q, h in hints.items() if q in qids}
        manifest["episodes"] = keep
        manifest["cassette_set"] = subset.name
        manifest["eval_file"] = str(eval_file.relative_to(ROOT))
        text = json.dumps(manifest, ensure_ascii=False, indent=2)
        (subset / "manifest.json").write_text(text + "\n", encoding="utf-8")
        subset.with_name(subset.name + ".stamp").write_text(sub_stamp, encoding="utf-8")
    return eval_file, subset


def distinct_cassettes(set_dir: Path) -> tuple[int, int]:
    """``(cassettes, distinct contents)`` of a set (by sha256 of the bytes)."""
    files = [p for p in set_dir.rglob("*.yaml")]
    return len(files), len({hashlib.sha256(p.read_bytes()).digest() for p in files})


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--questions", type=int, default=1250)
    parser.add_argument("--subset", type=int, default=500)
    args = parser.parse_args()
    for count in (args.subset, args.questions):
        _, set_dir = recorded_set(count, args.questions)
        files, distinct = distinct_cassettes(set_dir)
        print(f"{set_dir.relative_to(ROOT)}: {files} cassettes, {distinct} distinct")


if __name__ == "__main__":
    main()
