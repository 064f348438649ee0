"""Fidelity audit: is the comparison fair?

Six checks, each with ``passed``, a one-line ``explanation`` and its ``evidence`` lines:

1. ``baseline_heuristics``: the oneshot baseline runs with all three reference heuristics on
   (admin-seat preference, population order, 市 retry), both as configured now and as recorded
   (manifest); each is exercised by at least one recorded episode (from the recorded Open-Meteo
   traffic: the geocoding answers and the retry queries); and every place the baseline's tool
   *returned* (read from the recorded tool messages) is the one the reference heuristics pick
   from the geocoding answers recorded for that call, so a retry whose answer is thrown away
   fails. A heuristic "changed the place chosen" only where the returned place differs between
   the full and the ablated baseline's recorded tool results for the same call.
2. ``ablation``: the baseline replayed with each heuristic removed (its own cassettes); which
   questions flip. An ablated baseline whose every recorded tool result equals the full
   baseline's is reported as "ablation had no effect on any question", with whether that is
   expected (the recorded geocoding answers give the heuristic nothing to change) or not (they
   do: the full baseline does not use the heuristic's result, and the check fails).
3. ``judge_breadth``: every question's declared measure is one the judge in use can accept, and
   the judge passes every correct phrasing of the corpus next to the eval file
   (``phrasings.yaml``: ℃, 度, 摄氏度, °F, Chinese numerals, ranges, lists...), so narrowing any
   unit fails even when the recorded answers use one format; every episode is re-judged with
   the narrow (°C only) judge to show what would flip.
4. ``near_miss``: weakened baseline (市 retry removed) + narrow judge, next to the faithful
   table; the faithful table is only faithful when checks 1 and 3 pass.
5. ``arm_parity``: every configuration used the same model, sampling parameters, system prompt,
   question set, round cap and (per toolset) tool descriptions, read from the recorded request
   bodies and the manifest, not from today's code.
6. ``completeness``: every configuration × question has a cassette and replays with every
   interaction played; the manifest's prompt, tool-schema and stand-in-hint fingerprint matches
   the code and eval file; its provenance agrees with what was recorded (``live`` with the
   stand-in's model or replies fails).

:func:`run_audit` returns an :class:`Audit`; ``Audit.to_dict()`` is the ``"fidelity"`` entry of
``reports/results.json``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .cassettes import (
    Manifest,
    cassette_path,
    episode_key,
    read_cassette,
    read_manifest,
    sha256_json,
)
from .episode import Episode
from .evals import HEURISTICS, EvalSuite
from .experiment import (
    Configuration,
    Progress,
    ablation_configurations,
    rerecord_command,
    stale_parts,
    study_configurations,
)
from .judge import FORMAT_JUDGE, NARROW_JUDGE, Judge
from .phrasings import CORPUS_NAME, PhrasingsError, load_corpus
from .toolsets import Heuristics, choose_place, is_admin_seat

STANDIN_FINGERPRINT = "toolreplay-standin"  # the stand-in's system_fingerprint
WEAKENED = "shi_retry"  # the heuristic the study's first baseline had lost


@dataclass(frozen=True)
class Check:
    """One fidelity check: ``name``, ``passed``, one-line ``explanation``, ``evidence`` lines."""

    name: str
    passed: bool
    explanation: str
    evidence: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "explanation": self.explanation,
            "evidence": list(self.evidence),
        }


@dataclass(frozen=True)
class Audit:
    """Checks, the side-by-side tables, ablation flips and narrow-judge flips."""

    checks: tuple[Check, ...]
    tables: Mapping[str, Mapping[str, Any]]
    ablations: tuple[Mapping[str, Any], ...]
    judge_flips: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "checks": [c.to_dict() for c in self.checks],
            "tables": {k: dict(v) for k, v in self.tables.items()},
            "ablations": [dict(a) for a in self.ablations],
            "judge_flips": [dict(f) for f in self.judge_flips],
        }


# ---- replay ------------------------------------------------------------------------------

Key = tuple[str, str]


def _replay_all(
    set_dir: Path,
    manifest: Manifest,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    have: Mapping[Key, Episode],
    progress: Progress | None,
    workers: int = 1,
) -> tuple[dict[Key, Episode], dict[Key, str]]:
    from .replay import Job, replay_outcomes

    episodes: dict[Key, Episode] = {}
    errors: dict[Key, str] = {}
    jobs = [
        Job(config, q.id)
        for config in configs
        for q in suite.questions
        if (config.name, q.id) not in have
    ]
    results = replay_outcomes(set_dir, manifest, suite, jobs, workers=workers, progress=progress)
    replayed = {
        (j.configuration.name, j.question_id): r for j, r in zip(jobs, results, strict=True)
    }
    for config in configs:
        for q in suite.questions:
            key = (config.name, q.id)
            result = have.get(key) or replayed[key]
            if isinstance(result, BaseException):
                errors[key] = str(result).splitlines()[0]
            else:
                episodes[key] = result
    return episodes, errors


#: Verdicts of the audit in progress, by (judge, episode object): the checks ask for the same
#: episode's verdict several times (tables, flips, ablations). Emptied when the audit ends.
_VERDICTS: dict[tuple[int, int], tuple[Episode, bool]] = {}


def _passes(judge: Judge, episode: Episode, suite: EvalSuite) -> bool:
    """The verdict for ``episode``, judged for its question (measure, day and places)."""
    key = (id(judge), id(episode))
    hit = _VERDICTS.get(key)
    if hit is not None and hit[0] is episode:
        return hit[1]
    passed = judge.judge_episode(episode, suite.question(episode.question_id)).passed
    _VERDICTS[key] = (episode, passed)  # the episode is kept: its id cannot be reused
    return passed


def _table(
    title: str,
    names: Sequence[str],
    suite: EvalSuite,
    episodes: Mapping[Key, Episode],
    judge: Judge,
    source: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``{"title", "judge", "rows": [{"name", "source", "passed", "total", "missing"}]}``;
    ``source`` maps a row name to the configuration whose episodes stand for it (e.g. a
    weakened baseline). ``total`` is every question; ``missing`` counts episodes that could not
    be replayed (they count as not passed)."""
    rows = []
    for name in names:
        src = (source or {}).get(name, name)
        eps = [episodes[(src, q.id)] for q in suite.questions if (src, q.id) in episodes]
        rows.append(
            {
                "name": name,
                "source": src,
                "passed": sum(1 for e in eps if _passes(judge, e, suite)),
                "total": len(suite.questions),  # an episode that did not replay counts as failed
                "missing": len(suite.questions) - len(eps),
            }
        )
    return {"title": title, "judge": judge.name, "rows": rows}


def _fmt(table: Mapping[str, Any]) -> str:
    return ", ".join(f"{r['name']} {r['passed']}/{r['total']}" for r in table["rows"])


# ---- check 1: heuristics present and exercised -------------------------------------------


@lru_cache(maxsize=256)
def _read_cached(path: str, mtime_ns: int, size: int) -> list[dict[str, Any]]:
    del mtime_ns, size  # part of the key: an edited file is read again
    return read_cassette(Path(path))


def _read(path: Path) -> list[dict[str, Any]]:
    """:func:`read_cassette`, read once per audit (the checks share it); do not mutate."""
    st = path.stat()
    return _read_cached(str(path), st.st_mtime_ns, st.st_size)


def recorded_tool_results(path: Path) -> list[tuple[str, Any, Any]]:
    """``(tool name, arguments, result)`` of every tool call executed in a recorded episode, in
    order, read from the last model request of the cassette (which carries every tool message
    the model was sent); a result that is JSON is parsed. Read once per file content (the
    checks share it); do not mutate."""
    st = path.stat()
    return _tool_results_cached(str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=16384)
def _tool_results_cached(path_: str, mtime_ns: int, size: int) -> list[tuple[str, Any, Any]]:
    del mtime_ns, size  # part of the key: an edited file is read again
    path = Path(path_)
    bodies = _first_model_requests(path)
    if not bodies:
        return []
    messages = bodies[-1].get("messages", [])
    calls: dict[str, tuple[str, Any]] = {}
    for m in messages:
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = fn.get("arguments")
            calls[str(tc.get("id"))] = (str(fn.get("name")), args)
    out = []
    for m in messages:
        if m.get("role") != "tool":
            continue
        name, args = calls.get(str(m.get("tool_call_id")), ("?", None))
        try:
            result = json.loads(m.get("content") or "")
        except ValueError:
            result = m.get("content")
        out.append((name, args, result))
    return out


def _returned_place(result: Any) -> Mapping[str, Any] | None:
    place = result.get("place") if isinstance(result, Mapping) else None
    return place if isinstance(place, Mapping) else None


def _same_place(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    keys = ("name", "admin1", "latitude", "longitude")
    return (a is None) == (b is None) and (
        a is None or b is None or all(a.get(k) == b.get(k) for k in keys)
    )


def _signature(name: str, args: Any) -> str:
    return f"{name}({json.dumps(args, ensure_ascii=False, sort_keys=True)})"


def place_changes(full: Path, ablated: Path) -> list[str]:
    """Tool calls made in both recorded episodes whose *returned* place differs, in words
    (``get_weather({"city": "宁德"}) returned 宁德市 (福建省 PPLA2) with it, 宁德 (西藏自治区
    PPL) without``)."""
    theirs: dict[str, Any] = {}
    for name, args, result in recorded_tool_results(ablated):
        theirs.setdefault(_signature(name, args), result)
    out = []
    for name, args, result in recorded_tool_results(full):
        sig = _signature(name, args)
        if sig not in theirs:
            continue
        a, b = _returned_place(result), _returned_place(theirs[sig])
        if (a is not None or b is not None) and not _same_place(a, b):
            shown_a = _place(a) if a else "no place"
            shown_b = _place(b) if b else "no place"
            out.append(f"{sig} returned {shown_a} with it, {shown_b} without")
    return out


def unfaithful_choices(path: Path, heuristics: Heuristics) -> list[str]:
    """``get_weather`` results whose returned place is not the one the reference heuristics
    pick from the geocoding answers recorded for that call (the query, and the 市 retry's query
    right after it), in words; empty when the tool returned what the reference would."""
    searches = _searches(path)
    used: set[int] = set()
    out = []
    for name, args, result in recorded_tool_results(path):
        returned = _returned_place(result)
        if name != "get_weather" or returned is None or not isinstance(args, Mapping):
            continue
        city = str(args.get("city", ""))
        n = next((k for k, s in enumerate(searches) if s[0] == city and k not in used), None)
        if n is None:
            continue
        used.add(n)
        expected = choose_place(searches[n][1], heuristics)
        retry = searches[n + 1] if n + 1 < len(searches) else None
        if (
            heuristics.shi_retry
            and (expected is None or not is_admin_seat(expected))
            and not city.endswith("市")
            and retry is not None
            and retry[0] == city + "市"
            and retry[2] == searches[n][2] + 1
        ):
            used.add(n + 1)
            expected = choose_place(retry[1], heuristics) or expected
        if expected is not None and not _same_place(expected, returned):
            out.append(
                f"get_weather({city}) returned {_place(returned)}, but the reference heuristics "
                f"pick {_place(expected)} from the geocoding answers recorded for it"
            )
    return out


def _searches(path: Path) -> list[tuple[str, list[dict[str, Any]], int]]:
    """``(name, results, position)`` of every geocoding request recorded in a cassette, in
    order; ``position`` is the interaction's index, so two searches with nothing recorded
    between them (the same tool call) can be told from two tool calls."""
    out = []
    for position, i in enumerate(_read(path)):
        uri = i["request"]["uri"]
        if urlsplit(uri).path.endswith("/search"):
            name = parse_qs(urlsplit(uri).query).get("name", [""])[0]
            body = i["response"]["body"].get("parsed_body") or {}
            out.append((name, body.get("results", []), position))
    return out


def _place(c: Mapping[str, Any]) -> str:
    return f"{c.get('name')} ({c.get('admin1', '?')} {c.get('feature_code', '?')})"


def exercised_heuristics(path: Path) -> dict[str, list[tuple[str, bool]]]:
    """How each baseline heuristic acted in a recorded oneshot episode: per heuristic, a list
    of ``(evidence text, decided)``, from the recorded geocoding answers.

    A heuristic *acts* on an answer when it has something to do: ``admin_seat`` when admin
    seats and other places are mixed; ``population_order`` when 2+ candidates are compared;
    ``shi_retry`` when a query for ``X`` without an admin seat is followed, within the same
    tool call (the next recorded interaction), by one for ``X市``.
    It *decides* when switching it off alone would change the place chosen (for the retry:
    when the retry found an admin seat)."""
    found: dict[str, list[tuple[str, bool]]] = {h: [] for h in HEURISTICS}
    full = Heuristics()
    searches = _searches(path)
    for n, (name, results, position) in enumerate(searches):
        seats = [c for c in results if is_admin_seat(c)]
        others = [c for c in results if not is_admin_seat(c)]
        pick = choose_place(results, full)
        if seats and others:
            decided = choose_place(results, full.without("admin_seat")) != pick
            found["admin_seat"].append(
                (
                    f"{name}: preferred {_place(seats[0])} over "
                    + ", ".join(_place(c) for c in others),
                    decided,
                )
            )
        if len(results) >= 2:
            decided = choose_place(results, full.without("population_order")) != pick
            pops = ", ".join(f"{c.get('population', 0):,}" for c in results)
            found["population_order"].append(
                (f"{name}: compared {len(results)} candidates by population ({pops})", decided)
            )
        nxt = searches[n + 1] if n + 1 < len(searches) else None
        # The tool's own retry: the very next recorded interaction re-queries X市. A model that
        # calls get_weather("X市") itself shows a model request in between.
        if not seats and nxt is not None and nxt[0] == name + "市" and nxt[2] == position + 1:
            first = _place(results[0]) if results else "no candidate"
            decided = any(is_admin_seat(c) for c in nxt[1])
            found["shi_retry"].append(
                (f"{name}: no admin seat ({first}); re-queried {nxt[0]}", decided)
            )
    return found


def _check_baseline(
    set_dir: Path,
    suite: EvalSuite,
    manifest: Manifest,
    oneshot: Sequence[Configuration],
    ablated: Sequence[Configuration] = (),
) -> Check:
    """Check 1. A heuristic *would change* the place where, on the geocoding answers recorded
    for the full baseline, switching it off alone changes the pick; it *changed the place
    chosen* only where the place the tool returned differs between the full baseline's and the
    ablated baseline's recorded tool results for the same call. Fails when a heuristic is
    off, never acted, or the full baseline returned a place the reference heuristics would not
    pick from its own recorded geocoding answers (e.g. a retry whose result is discarded)."""
    configured = tuple(suite.experiment.baseline)
    recorded = tuple(manifest.settings.get("baseline_heuristics", HEURISTICS))
    evidence = [
        f"configured (eval file {Path(suite.path).name}): {', '.join(configured) or 'none'}",
        f"recorded (manifest): {', '.join(recorded) or 'none'}",
    ]
    missing = [h for h in HEURISTICS if h not in configured or h not in recorded]
    idle: list[str] = []
    deciding: list[str] = []
    uses = {
        episode_key(config.name, q.id): exercised_heuristics(path)
        for config in oneshot
        for q in suite.questions
        if (path := cassette_path(set_dir, config.name, q.id)).exists()
    }
    heuristics = Heuristics(**{h: h in configured and h in recorded for h in HEURISTICS})
    unfaithful = [
        f"{episode_key(config.name, q.id)}: {line}"
        for config in oneshot
        for q in suite.questions
        if (path := cassette_path(set_dir, config.name, q.id)).exists()
        for line in unfaithful_choices(path, heuristics)
    ]
    for h in HEURISTICS:
        acted: dict[str, str] = {}
        would: set[str] = set()
        for key, found in uses.items():
            for text, made_a_difference in found[h]:
                acted.setdefault(key, text)
                if made_a_difference:
                    would.add(key)
        if not acted:
            idle.append(h)
            evidence.append(f"{h}: acted in no recorded episode")
            continue
        changed: dict[str, list[str]] = {}
        measured = False
        for config in oneshot:
            variant = next((a for a in ablated if a.ablated == h and a.host == config.host), None)
            if variant is None:
                continue
            for q in suite.questions:
                full = cassette_path(set_dir, config.name, q.id)
                other = cassette_path(set_dir, variant.name, q.id)
                if full.exists() and other.exists():
                    measured = True
                    diffs = place_changes(full, other)
                    if diffs:
                        changed[episode_key(config.name, q.id)] = diffs
        first_key, first_text = next(iter(acted.items()))
        line = (
            f"{h}: acted in {len(acted)} recorded episode(s), e.g. {first_key}: {first_text}; "
            f"would change the pick on the recorded geocoding answers in {len(would)}"
            + (f" ({', '.join(sorted(would))})" if would else "")
        )
        if measured:
            line += f"; changed the place chosen in {len(changed)}" + (
                f" ({', '.join(sorted(changed))}: {next(iter(changed.values()))[0]})"
                if changed
                else " (the places returned with and without it are the same)"
            )
            if changed:
                deciding.append(h)
        else:
            line += "; whether it changed the place returned is not measured (no ablated recording)"
        evidence.append(line)
    evidence += [f"unfaithful: {u}" for u in unfaithful]
    if missing:
        return Check(
            "baseline_heuristics",
            False,
            f"the oneshot baseline runs without {', '.join(missing)}: it is weaker than the "
            "reference, so any win against it is inflated",
            tuple(evidence),
        )
    if idle:
        return Check(
            "baseline_heuristics",
            False,
            f"{', '.join(idle)} never acted in the recorded episodes: add a question whose "
            "geocoding answer gives it something to do",
            tuple(evidence),
        )
    if unfaithful:
        return Check(
            "baseline_heuristics",
            False,
            f"the baseline returned a place the reference heuristics would not choose in "
            f"{len(unfaithful)} tool call(s) (e.g. {unfaithful[0]}): a heuristic runs but its "
            "result is not used, so the baseline is weaker than the reference",
            tuple(evidence),
        )
    return Check(
        "baseline_heuristics",
        True,
        "all three reference heuristics are on, each acted on a recorded geocoding answer, and "
        "every place returned is the one they pick; "
        + (
            f"only {', '.join(deciding)} changed the place chosen"
            if deciding and len(deciding) < len(HEURISTICS)
            else "each changed the place chosen somewhere"
            if deciding
            else "none changed the place chosen"
        ),
        tuple(evidence),
    )


# ---- check 5: arm parity -----------------------------------------------------------------


def _first_model_requests(path: Path) -> list[dict[str, Any]]:
    return [
        i["request"]["parsed_body"]
        for i in _read(path)
        if urlsplit(i["request"]["uri"]).path.endswith("/chat/completions")
        and isinstance(i["request"].get("parsed_body"), dict)
    ]


def _check_parity(
    set_dir: Path, suite: EvalSuite, manifest: Manifest, configs: Sequence[Configuration]
) -> Check:
    seen: dict[str, dict[str, set[str]]] = {}
    questions: dict[str, set[str]] = {}
    tools: dict[str, dict[str, set[str]]] = {}
    for config in configs:
        for q in suite.questions:
            path = cassette_path(set_dir, config.name, q.id)
            if not path.exists():
                continue
            for body in _first_model_requests(path):
                msgs = body.get("messages", [])
                fields = {
                    "model": body.get("model"),
                    "temperature": body.get("temperature"),
                    "top_p": body.get("top_p"),
                    "tool_choice": body.get("tool_choice"),
                    "parallel_tool_calls": body.get("parallel_tool_calls"),
                    "system prompt": next(
                        (m.get("content") for m in msgs if m.get("role") == "system"), None
                    ),
                }
                for name, value in fields.items():
                    if name in ("tool_choice", "parallel_tool_calls") and "tools" not in body:
                        continue  # only sent with tools (the loop's last round has none)
                    shown = json.dumps(value, ensure_ascii=False)
                    if name == "system prompt":
                        shown = "sha256 " + sha256_json(value)[:12]
                    seen.setdefault(name, {}).setdefault(shown, set()).add(config.name)
                user = next((m.get("content") for m in msgs if m.get("role") == "user"), "")
                questions.setdefault(config.name, set()).add(str(user))
                if "tools" in body:
                    digest = sha256_json(body["tools"])[:12]
                    tools.setdefault(config.toolset, {}).setdefault(digest, set()).add(config.name)
    evidence, broken = [], []
    for name, values in seen.items():
        if set(values) == {"null"}:
            continue  # not sent by any arm
        if len(values) > 1:
            broken.append(name)
            for value, where in sorted(values.items()):
                evidence.append(f"{name} {value} in {', '.join(sorted(where))}")
        else:
            value, where = next(iter(values.items()))
            evidence.append(f"{name}: {value} in all {len(where)} configurations")
    qsets = {frozenset(v) for v in questions.values()}
    if len(qsets) > 1:
        broken.append("question set")
        evidence += [f"questions of {c}: {len(v)}" for c, v in sorted(questions.items())]
    else:
        evidence.append(f"question set: the same {len(next(iter(qsets), []))} questions everywhere")
    for toolset, digests in sorted(tools.items()):
        if len(digests) > 1:
            broken.append(f"{toolset} tool descriptions")
            evidence += [f"{toolset} tools sha256 {d} in {', '.join(sorted(w))}"
                         for d, w in sorted(digests.items())]  # fmt: skip
        else:
            d, w = next(iter(digests.items()))
            evidence.append(f"{toolset} tool schemas: sha256 {d} in {', '.join(sorted(w))}")
    cap = manifest.settings.get("max_rounds")
    evidence.append(f"round cap: loop {cap} (manifest), single 2 (by design)")
    if cap != suite.experiment.max_rounds:
        broken.append("round cap")
        evidence.append(f"eval file now says max_rounds {suite.experiment.max_rounds}")
    if broken:
        return Check("arm_parity", False, f"arms differ in: {', '.join(broken)}", tuple(evidence))
    return Check(
        "arm_parity",
        True,
        "every configuration used the same model, sampling, system prompt, questions and "
        "round cap; hosts sharing a toolset saw identical tool descriptions",
        tuple(evidence),
    )


# ---- check 6: completeness and staleness ---------------------------------------------------


def _provenance_mismatch(
    set_dir: Path, manifest: Manifest, suite: EvalSuite, configs: Sequence[Configuration]
) -> str:
    """A sentence when the manifest's provenance contradicts what was recorded: ``live`` with
    the stand-in's model name or replies that carry the stand-in's fingerprint, or
    ``stand-in`` with none of them; empty when they agree."""
    standin_replies = 0
    replies = 0
    for config in configs:
        for q in suite.questions:
            path = cassette_path(set_dir, config.name, q.id)
            if not path.exists():
                continue
            for i in _read(path):
                if not urlsplit(i["request"]["uri"]).path.endswith("/chat/completions"):
                    continue
                body = (i["response"].get("body") or {}).get("parsed_body")
                if not isinstance(body, Mapping):
                    continue
                replies += 1
                if body.get("system_fingerprint") == STANDIN_FINGERPRINT or str(
                    body.get("id", "")
                ).startswith("chatcmpl-standin-"):
                    standin_replies += 1
    from .doubles.standin import STANDIN_MODEL

    said_standin = manifest.model == STANDIN_MODEL or standin_replies > 0
    if manifest.provenance == "live" and said_standin:
        what = (
            f"model {manifest.model}"
            if manifest.model == STANDIN_MODEL
            else f"{standin_replies} of {replies} recorded replies"
        )
        return (
            f"the manifest says provenance live, but {what} come from the stand-in model "
            f"({STANDIN_MODEL}, endpoint {manifest.endpoint_host}): a test double is labelled "
            "a live recording"
        )
    if manifest.provenance == "stand-in" and replies and not said_standin:
        return (
            f"the manifest says provenance stand-in, but model {manifest.model} and none of "
            f"the {replies} recorded replies are the stand-in's"
        )
    return ""


def _check_completeness(
    set_dir: Path,
    suite: EvalSuite,
    manifest: Manifest,
    configs: Sequence[Configuration],
    errors: Mapping[Key, str],
) -> Check:
    total = len(configs) * len(suite.questions)
    evidence = [f"{total - len(errors)} of {total} episodes replayed with every interaction played"]
    evidence += [f"{c}/{q}: {msg}" for (c, q), msg in sorted(errors.items())]
    edited = []
    for config in configs:
        for q in suite.questions:
            key = episode_key(config.name, q.id)
            record = manifest.episodes.get(key)
            path = cassette_path(set_dir, config.name, q.id)
            if record is None or not path.exists():
                continue
            if hashlib.sha256(path.read_bytes()).hexdigest() != record.cassette_sha256:
                edited.append(key)
    if edited:
        evidence.append(
            f"edited since recording (sha256 differs from the manifest): {', '.join(edited)}"
        )
    else:
        evidence.append("every cassette's sha256 matches the manifest (no edits since recording)")
    stale = stale_parts(manifest, suite)
    rerecord = rerecord_command(set_dir, manifest, suite)
    mislabelled = _provenance_mismatch(set_dir, manifest, suite, configs)
    if mislabelled:
        evidence.append(mislabelled)
    else:
        evidence.append(
            f"provenance {manifest.provenance} agrees with the model ({manifest.model}) and the "
            "recorded replies"
        )
    if stale:
        evidence.append(f"changed since recording: {', '.join(stale)}; re-record: {rerecord}")
    else:
        evidence.append(
            "the manifest's prompt and tool-schema hashes and settings match the code and eval"
        )
    if errors or stale or edited or mislabelled:
        what = []
        if mislabelled:
            what.append(mislabelled)
        if errors:
            what.append(f"{len(errors)} episode(s) missing or not replayable")
        if edited:
            what.append(f"{len(edited)} cassette(s) edited since recording")
        if stale:
            what.append("the set is stale")
        return Check("completeness", False, f"{'; '.join(what)}: {rerecord}", tuple(evidence))
    return Check(
        "completeness",
        True,
        "every configuration × question has a complete, current cassette",
        tuple(evidence),
    )


def _ablation_summary(
    ablated: Sequence[Configuration], ablations: Sequence[Mapping[str, Any]], missing: bool
) -> str:
    if not ablated or missing:
        return "ablated baselines missing or not replayable"
    changes = [
        f"without {a['heuristic']}, {a['baseline_configuration']} scores "
        f"{a['passed']}/{a['total']} ({', '.join(f['question_id'] for f in a['flips'])} flips)"
        for a in ablations
        if a["flips"]
    ]
    return f"{len(ablated)} ablated baselines replayed; " + ("; ".join(changes) or "no flips")


def _corpus_breadth(suite: EvalSuite, judge: Judge) -> tuple[bool, str, list[str]]:
    """Judge every correct phrasing of the corpus next to the eval file (``phrasings.yaml``)
    with ``judge``: ``(passed, sentence, evidence lines)``. A phrasing the judge rejects is
    named with the formats it covers, and whether the format-only judge reads it (if not, the
    unit table lacks the format)."""
    path = Path(suite.path).parent / CORPUS_NAME
    try:
        corpus = load_corpus(path)
    except PhrasingsError as exc:
        return False, f"cannot be checked against a phrasing corpus: {exc}", [str(exc)]
    rejected = []
    for case in corpus.passing:
        if judge.judge_episode(case.episode, case.question).passed:
            continue
        form = FORMAT_JUDGE.judge_episode(case.episode, case.question).passed
        rejected.append(
            f"rejects {case.answer!r} ({', '.join(case.covers) or 'no format named'})"
            + ("" if form else f"; the {FORMAT_JUDGE.name} judge rejects it too")
        )
    total = len(corpus.passing)
    shown = f"{path.parent.name}/{path.name}"  # the same wherever the eval file is given from
    evidence = [f"corpus {shown}: {total - len(rejected)} of {total} correct phrasings accepted"]
    evidence += rejected
    if rejected:
        verdicts = {
            case.index: judge.judge_episode(case.episode, case.question).passed
            for case in corpus.passing
        }
        tags = {c for case in corpus.passing for c in case.covers}
        formats = sorted(
            t
            for t in tags
            if not any(verdicts[case.index] for case in corpus.passing if t in case.covers)
        ) or sorted({c for case in corpus.passing if not verdicts[case.index] for c in case.covers})
        return (
            False,
            f"rejects {len(rejected)} of {total} correct phrasings of {path.name} "
            f"(formats: {', '.join(formats)}): it is narrower than the answers people write",
            evidence,
        )
    return True, f"accepts all {total} correct phrasings of {path.name}", evidence


def _ablation_effect(
    set_dir: Path, suite: EvalSuite, base: str, config: Configuration
) -> dict[str, Any]:
    """Whether the ablated baseline's recorded tool results equal the full baseline's on every
    question (``no_effect``), and whether that is expected (``expected``: True when, on the
    full baseline's recorded geocoding answers, removing the heuristic changes no pick; None
    when there was an effect or nothing could be compared), with a sentence saying so."""
    compared = 0
    same = True
    would: list[str] = []
    for q in suite.questions:
        full = cassette_path(set_dir, base, q.id)
        other = cassette_path(set_dir, config.name, q.id)
        if not (full.exists() and other.exists()):
            continue
        compared += 1
        if recorded_tool_results(full) != recorded_tool_results(other):
            same = False
        if any(decided for _, decided in exercised_heuristics(full)[str(config.ablated)]):
            would.append(q.id)
    if not compared or not same:
        return {"no_effect": False, "expected": None, "text": ""}
    if would:
        text = (
            f"ablation had no effect on any question (every tool result equals {base}'s); "
            f"unexpected: on the recorded geocoding answers, removing {config.ablated} changes "
            f"the place for {', '.join(would)}, so the full baseline does not use its result"
        )
        return {"no_effect": True, "expected": False, "text": text}
    text = (
        f"ablation had no effect on any question (every tool result equals {base}'s); "
        f"expected: on these questions' recorded geocoding answers, {config.ablated} never "
        "changes the place picked (the geocoder's own first candidate is already that place)"
    )
    return {"no_effect": True, "expected": True, "text": text}


# ---- the audit -----------------------------------------------------------------------------


def run_audit(
    set_dir: Path,
    suite: EvalSuite,
    judge: Judge,
    *,
    episodes: Mapping[Key, Episode] | None = None,
    progress: Progress | None = None,
    workers: int = 1,
) -> Audit:
    """Run every check on the cassette set at ``set_dir``.

    ``judge`` is the judge in use; ``episodes`` may hold study episodes already replayed (keyed
    ``(configuration, question_id)``) so they are not replayed twice; the others are replayed
    by ``workers`` processes (:func:`toolreplay.replay.replay_outcomes`). Replay failures are
    reported by the ``completeness`` check, not raised. Raises
    :class:`~toolreplay.cassettes.CassetteError` only when the manifest is missing or malformed.
    """
    try:
        return _run_audit(set_dir, suite, judge, episodes, progress, workers)
    finally:
        _VERDICTS.clear()


def _run_audit(
    set_dir: Path,
    suite: EvalSuite,
    judge: Judge,
    episodes: Mapping[Key, Episode] | None,
    progress: Progress | None,
    workers: int,
) -> Audit:
    manifest = read_manifest(set_dir)
    study = study_configurations(suite)
    ablated = ablation_configurations(suite)
    all_eps, errors = _replay_all(
        set_dir, manifest, suite, [*study, *ablated], episodes or {}, progress, workers
    )
    names = [c.name for c in study]

    # 1. baseline heuristics
    oneshot = [c for c in study if c.toolset == "oneshot"]
    c1 = _check_baseline(set_dir, suite, manifest, oneshot, ablated)

    # 2. ablation
    ablations = []
    ab_evidence = []
    unexpected: list[str] = []
    for config in ablated:
        base = Configuration(config.host, config.toolset, baseline=suite.experiment.baseline).name
        flips = []
        for q in suite.questions:
            a, b = all_eps.get((base, q.id)), all_eps.get((config.name, q.id))
            if a is None or b is None:
                continue
            before, after = _passes(judge, a, suite), _passes(judge, b, suite)
            if before != after:
                flips.append({"question_id": q.id, "from": before, "to": after})
        eps = [
            all_eps[(config.name, q.id)] for q in suite.questions if (config.name, q.id) in all_eps
        ]
        passed = sum(1 for e in eps if _passes(judge, e, suite))
        effect = _ablation_effect(set_dir, suite, base, config)
        ablations.append(
            {
                "heuristic": config.ablated,
                "configuration": config.name,
                "baseline_configuration": base,
                "passed": passed,
                "total": len(suite.questions),
                "missing": len(suite.questions) - len(eps),
                "flips": flips,
                "no_effect": effect["no_effect"],
                "no_effect_expected": effect["expected"],
            }
        )
        shown = ", ".join(
            f"{f['question_id']} {'pass' if f['from'] else 'fail'}→{'pass' if f['to'] else 'fail'}"
            for f in flips
        )
        missing = len(suite.questions) - len(eps)
        ab_evidence.append(
            f"{config.name}: {passed}/{len(suite.questions)}"
            + (f" ({missing} not replayable)" if missing else "")
            + f"; flips: {shown or 'none'}"
            + (f"; {effect['text']}" if effect["text"] else "")
        )
        if effect["no_effect"] and effect["expected"] is False:
            unexpected.append(config.name)
    ab_missing = [k for k in errors if k[0] in {c.name for c in ablated}]
    summary = _ablation_summary(ablated, ablations, bool(ab_missing))
    if unexpected:
        summary = (
            f"ablation had no effect on any question for {', '.join(unexpected)}, although the "
            "recorded geocoding answers say removing the heuristic changes a place: the full "
            "baseline does not use that heuristic's result; " + summary
        )
    c2 = Check(
        "ablation",
        not ab_missing and bool(ablated) and not unexpected,
        summary,
        tuple(ab_evidence),
    )

    # 3. judge breadth
    narrow = [q for q in suite.questions if not judge.accepts(q.measure)]
    judge_flips = []
    for (config_name, qid), ep in sorted(all_eps.items()):
        if config_name not in names:
            continue
        full, thin = _passes(judge, ep, suite), _passes(NARROW_JUDGE, ep, suite)
        if full != thin:
            judge_flips.append(
                {"configuration": config_name, "question_id": qid, "from": full, "to": thin}
            )
    j_evidence = [f"{q.id}: measures {q.measure}" for q in suite.questions]
    j_evidence += [
        f"narrow judge ({NARROW_JUDGE.name}) flips {f['configuration']}/{f['question_id']} "
        f"{'pass' if f['from'] else 'fail'}→{'pass' if f['to'] else 'fail'}"
        for f in judge_flips
    ]
    corpus_ok, corpus_text, corpus_evidence = _corpus_breadth(suite, judge)
    j_evidence += corpus_evidence
    if narrow:
        why = (
            f"judge {judge.name} cannot accept what "
            + ", ".join(f"{q.id} ({q.measure})" for q in narrow)
            + " measures"
        )
    elif not corpus_ok:
        why = f"judge {judge.name} {corpus_text}"
    else:
        why = (
            f"judge {judge.name} accepts every declared measure and {corpus_text}; the narrow "
            f"{NARROW_JUDGE.name} judge would flip {len(judge_flips)} recorded episode(s)"
        )
    c3 = Check("judge_breadth", not narrow and corpus_ok, why, tuple(j_evidence))

    # 4. near-miss table
    weakened = {
        c.name: Configuration(c.host, c.toolset, WEAKENED, suite.experiment.baseline).name
        for c in study
        if c.toolset == "oneshot" and WEAKENED in suite.experiment.ablations
    }
    faithful = _table("Faithful baseline, judge in use", names, suite, all_eps, judge)
    near = _table(
        "Weakened baseline (no 市 retry), narrow judge (°C only)",
        names,
        suite,
        all_eps,
        NARROW_JUDGE,
        weakened,
    )
    c4 = Check(
        "near_miss",
        c1.passed and c3.passed and len(weakened) > 0,
        (
            f"faithful: {_fmt(faithful)}; weakened baseline + narrow judge would have read: "
            f"{_fmt(near)}"
        ),
        (
            f"faithful table uses the full baseline and judge {judge.name}"
            + ("" if c1.passed and c3.passed else " — but checks 1 or 3 failed, so it is not"),
            f"near-miss table replays {', '.join(weakened.values()) or 'nothing'} "
            f"and judges with {NARROW_JUDGE.name}",
        ),
    )

    # 5. arm parity; 6. completeness
    c5 = _check_parity(set_dir, suite, manifest, study)
    c6 = _check_completeness(set_dir, suite, manifest, [*study, *ablated], errors)
    return Audit(
        (c1, c2, c3, c4, c5, c6),
        {"faithful": faithful, "near_miss": near},
        tuple(ablations),
        tuple(judge_flips),
    )
