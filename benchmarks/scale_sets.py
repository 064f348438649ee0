"""Honest scale data for the benchmarks: a generated eval file of distinct questions about
distinct places, recorded once with the stand-in model and the Open-Meteo fixture server, so
that every cassette of the 1,000- to 10,000-episode sets is a recording of its own.

    python benchmarks/scale_sets.py [--questions 1250] [--subset 500] [--jobs N]
    python benchmarks/scale_sets.py --questions 5000 --subset 500   # 10,000 and 1,000

The eval file has the system prompt, tools and settings of ``evals/weather.yaml`` and
``questions`` questions built from the 12 places the fixture server knows (those of
``evals/weather.yaml`` and ``evals/weather-hard.yaml``): one place (temperature, rain or wind,
four wordings each, today or tomorrow) or a comparison of two or three (nine wordings each),
each question a different combination of places, wording and day: at most
:data:`MAX_QUESTIONS` (5,436) distinct questions, 10,872 episodes over the two
configurations (loop+oneshot, loop+atomic; one trial). The order is fixed (a seeded shuffle),
so every prefix has the same mix of one, two and three places and the same questions on
every machine.

Everything lives under ``benchmarks/.cache/`` (git-ignored; ``$TOOLREPLAY_BENCH_CACHE``
moves it): ``evals/scale-xN.yaml`` and its phrasing corpus, ``cassettes/scale-xN/`` (the
largest set: ``N`` questions × 2 configurations) and ``cassettes/scale-xM-of-N/``, the first
``M`` questions' cassettes copied out of it with the manifest cut to them. A set is recorded
again only when the generated eval file changes or today's code makes it stale
(``toolreplay.runs.configuration.stale_parts``). Recording runs ``toolreplay record
--model-source stand-in`` in ``--jobs`` processes at once (default: the number of cores),
each on every ``jobs``-th question into a set of its own, then merges their cassettes and
manifests into the one set (the stand-in's reply is a function of the request alone, so a
part records the same bytes as one whole recording would). The 10,000-episode set took 22 min
in 2 processes on 2 cores shared with other work (load average ~10).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
#: Where generated evals and recorded sets live (``$TOOLREPLAY_BENCH_CACHE`` moves it).
CACHE = Path(os.environ.get("TOOLREPLAY_BENCH_CACHE") or ROOT / "benchmarks" / ".cache")
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
#: ``(measure, template)`` of the one-place questions: four wordings of each measure.
SINGLE = (
    ("temperature", "{a}{day}多少度？"),
    ("temperature", "{a}{day}气温怎么样？"),
    ("temperature", "{a}{day}热不热？"),
    ("temperature", "{day}{a}最高气温多少？"),
    ("precipitation", "{a}{day}会下雨吗？"),
    ("precipitation", "{a}{day}要带伞吗？"),
    ("precipitation", "{day}{a}降水多吗？"),
    ("precipitation", "{a}{day}有雨吗？"),
    ("wind", "{a}{day}风大吗？"),
    ("wind", "{a}{day}风力怎么样？"),
    ("wind", "{day}{a}刮风吗？"),
    ("wind", "{a}{day}风速多少？"),
)
#: Wordings of a comparison of two places (which is hotter).
PAIR = (
    "{a}和{b}{day}哪个更热？",
    "{day}{a}和{b}哪里更热？",
    "{a}、{b}{day}谁更热？",
    "{a}跟{b}{day}哪个热一些？",
    "{day}{a}和{b}哪个地方气温更高？",
    "比较一下{a}和{b}{day}的气温，哪个更热？",
    "{a}还是{b}，{day}哪里更热？",
    "{day}{a}与{b}哪座城市更热？",
    "{a}和{b}{day}哪儿温度高？",
)
#: Wordings of a comparison of three places (which is hottest).
TRIPLE = (
    "{a}、{b}、{c}{day}哪个最热？",
    "{day}{a}、{b}、{c}哪里最热？",
    "{a}、{b}和{c}{day}哪个城市最热？",
    "{a}、{b}、{c}三地{day}谁最热？",
    "{day}{a}、{b}、{c}哪个地方气温最高？",
    "{a}、{b}、{c}{day}哪儿最热？",
    "比较一下{a}、{b}、{c}{day}的气温，哪个最热？",
    "{day}{a}、{b}和{c}，哪座城市最热？",
    "{a}、{b}、{c}，{day}哪里温度最高？",
)


def _order() -> list[tuple[str, str, tuple[int, ...], tuple[str, str]]]:
    """Every distinct ``(measure, wording, places, day)``, in the fixed shuffled order."""
    n = len(PLACES)
    singles = [(m, text, (i,), day) for i in range(n) for m, text in SINGLE for day in DAYS]
    pairs = [
        ("comparison", text, combo, day)
        for combo in itertools.combinations(range(n), 2)
        for text in PAIR
        for day in DAYS
    ]
    triples = [
        ("comparison", text, combo, day)
        for combo in itertools.combinations(range(n), 3)
        for text in TRIPLE
        for day in DAYS
    ]
    order: list[tuple[str, str, tuple[int, ...], tuple[str, str]]] = [*singles, *pairs, *triples]
    random.Random(0).shuffle(order)  # a fixed order, so that any prefix has the same mix
    return order


#: How many distinct questions :func:`questions` can make.
MAX_QUESTIONS = len(PLACES) * len(SINGLE) * len(DAYS) + len(DAYS) * (
    len(PAIR) * len(PLACES) * (len(PLACES) - 1) // 2
    + len(TRIPLE) * len(PLACES) * (len(PLACES) - 1) * (len(PLACES) - 2) // 6
)


def _place(index: int) -> dict[str, Any]:
    query, region, extra = PLACES[index]
    return {"query": query, "region": region, **extra}


def questions(count: int) -> list[dict[str, Any]]:
    """The first ``count`` of the :data:`MAX_QUESTIONS` distinct questions, as eval-file
    question mappings (ValueError beyond): one-place questions, pairs and triples,
    interleaved so that any prefix mixes them; the same list on every call."""
    order = _order()
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


def _write_eval(chosen: list[dict[str, Any]], name: str) -> Path:
    data = yaml.safe_load(EVAL.read_text(encoding="utf-8"))
    data["name"] = name
    data["questions"] = chosen
    # One host, both toolsets, no ablations: the single host's one-shot episodes record the
    # same bytes as the loop's, an ablated baseline the same as the baseline whenever its
    # heuristic does not decide the place; the point is that every cassette is distinct.
    data["experiment"]["hosts"] = ["loop"]
    data["experiment"].pop("ablations", None)
    path = CACHE / "evals" / f"{name}.yaml"
    _write_if_changed(path, yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    _write_if_changed(path.with_name(PHRASINGS.name), PHRASINGS.read_text(encoding="utf-8"))
    return path


def generated_eval(count: int, name: str | None = None) -> Path:
    """The eval file of the first ``count`` generated questions (with the phrasing corpus the
    audit reads beside it), under ``CACHE/evals/`` (written only when its text changes);
    ValueError beyond :data:`MAX_QUESTIONS`."""
    return _write_eval(questions(count), name or f"scale-x{count}")


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


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it (as a manifest names it)."""
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _record_command(eval_file: Path, cassettes: Path, name: str) -> list[str]:
    return [
        *TOOLREPLAY, "record", "--model-source", "stand-in", "--eval", str(eval_file),
        "--cassettes", str(cassettes), "--set", name, "--trials", "1", "--force",
    ]  # fmt: skip


def merge_parts(parts: list[Path], into: Path, eval_file: Path, order: list[str]) -> None:
    """One set at ``into`` from the sets ``parts`` recorded from disjoint questions of
    ``eval_file``: every cassette copied (moved) in, the manifests' episodes and stand-in
    hints joined in the order of the question ids ``order`` (configurations in the first
    part's order), as one recording of the whole eval file writes them. ValueError when the
    parts were recorded with different headers (prompt, tools, settings, model, date)."""
    manifests = [json.loads((p / "manifest.json").read_text(encoding="utf-8")) for p in parts]
    varying = {"episodes", "settings", "cassette_set", "eval_file"}
    first = manifests[0]
    for other, part in zip(manifests[1:], parts[1:], strict=True):
        differ = [k for k in first if k not in varying and first[k] != other.get(k)]
        settings = {k: v for k, v in first["settings"].items() if k != "standin_hints"}
        if differ or settings != {
            k: v for k, v in other["settings"].items() if k != "standin_hints"
        }:
            raise ValueError(f"{part}: recorded with a different {', '.join(differ) or 'settings'}")
    position = {qid: i for i, qid in enumerate(order)}
    configs = list(dict.fromkeys(k.split("/")[0] for k in first["episodes"]))
    episodes: dict[str, Any] = {}
    hints: dict[str, Any] = {}
    shutil.rmtree(into, ignore_errors=True)
    for manifest, part in zip(manifests, parts, strict=True):
        episodes.update(manifest["episodes"])
        hints.update(manifest["settings"].get("standin_hints") or {})
        for record in manifest["episodes"].values():
            dest = into / record["cassette"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(part / record["cassette"], dest)

    def rank(key: str) -> tuple[int, int, str]:
        config, qid = key.split("/")[:2]
        return configs.index(config), position[qid], key

    merged = dict(first)
    merged["episodes"] = {k: episodes[k] for k in sorted(episodes, key=rank)}
    merged["settings"] = dict(first["settings"])
    merged["settings"]["standin_hints"] = {q: hints[q] for q in order if q in hints}
    merged["cassette_set"] = into.name
    merged["eval_file"] = _shown(eval_file)
    text = json.dumps(merged, ensure_ascii=False, indent=2)
    (into / "manifest.json").write_text(text + "\n", encoding="utf-8")


def record_parallel(count: int, set_dir: Path, eval_file: Path, jobs: int | None = None) -> None:
    """Record the first ``count`` generated questions (``eval_file``, written by
    :func:`generated_eval`) into ``set_dir`` with the stand-in: ``jobs`` ``toolreplay record``
    processes at once (default: the number of cores), each on every ``jobs``-th question into
    a set of its own beside ``set_dir``, then :func:`merge_parts`. SystemExit when a
    recording fails (the parts are removed)."""
    chosen = questions(count)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(chosen)))
    cassettes = set_dir.parent
    cassettes.mkdir(parents=True, exist_ok=True)
    parts = [cassettes / f"{set_dir.name}.part-{i + 1}-of-{jobs}" for i in range(jobs)]
    procs = []
    try:
        for i, part in enumerate(parts):
            part_eval = _write_eval(chosen[i::jobs], part.name)
            procs.append(
                subprocess.Popen(
                    _record_command(part_eval, cassettes, part.name),
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        failed = []
        for proc, part in zip(procs, parts, strict=True):
            _, err = proc.communicate()
            if proc.returncode != 0:
                failed.append(f"{part.name} (exit {proc.returncode}): {err.strip()[-2000:]}")
        if failed:
            raise SystemExit("recording failed: " + "\n".join(failed))
        merge_parts(parts, set_dir, eval_file, [q["id"] for q in chosen])
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for part in parts:
            shutil.rmtree(part, ignore_errors=True)
            (CACHE / "evals" / f"{part.name}.yaml").unlink(missing_ok=True)
            part.with_name(f".{part.name}.lock").unlink(missing_ok=True)


def recorded_set(count: int, largest: int, jobs: int | None = None) -> tuple[Path, Path]:
    """``(eval file, set folder)`` of the first ``count`` generated questions (``2 × count``
    episodes), from one recording of ``largest`` questions (made now, in ``jobs`` processes,
    when missing or stale)."""
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
        record_parallel(largest, full, full_eval, jobs)
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
        manifest["eval_file"] = _shown(eval_file)
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
    parser.add_argument("--questions", type=int, default=1250, help="the largest set's")
    parser.add_argument("--subset", type=int, default=500, help="a smaller set cut from it")
    parser.add_argument("--jobs", type=int, default=None, help="recording processes [cores]")
    args = parser.parse_args()
    for count in (args.subset, args.questions):
        _, set_dir = recorded_set(count, args.questions, args.jobs)
        files, distinct = distinct_cassettes(set_dir)
        print(f"{_shown(set_dir)}: {files} cassettes, {distinct} distinct")


if __name__ == "__main__":
    main()
