"""Judge breadth and ablation effect: the judge accepts the corpus's correct phrasings; which
baseline heuristics change an outcome.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolreplay.audit.traffic import recorded_tool_results
from toolreplay.cassettes.manifest import (
    cassette_path,
)
from toolreplay.evals import EvalSuite
from toolreplay.judging.phrasings import CORPUS_NAME, PhrasingsError, load_corpus
from toolreplay.judging.verdicts import FORMAT_JUDGE, Judge
from toolreplay.runs.configuration import (
    Configuration,
)
from toolreplay.studies import load_study

#: The corpus of answers in real models' styles, checked beside ``phrasings.yaml`` if present.
EXTERNAL_CORPUS_NAME = "phrasings-external.yaml"


def corpus_breadth(suite: EvalSuite, judge: Judge) -> tuple[bool, str, list[str]]:
    """Judge every correct phrasing of the corpora next to the eval file with ``judge``:
    ``phrasings.yaml`` (required) and, when present, ``phrasings-external.yaml`` (answers in
    the styles real models write): ``(passed, sentence, evidence lines)``. A phrasing the
    judge rejects is named with the formats it covers, and whether the format-only judge reads
    it (if not, the unit table lacks the format)."""
    folder = Path(suite.path).parent
    results = [_one_corpus(folder / CORPUS_NAME, judge)]
    external = folder / EXTERNAL_CORPUS_NAME
    if external.is_file():
        results.append(_one_corpus(external, judge))
    ok = all(r[0] for r in results)
    sentence = " and ".join(r[1] for r in results if ok or not r[0])
    return ok, sentence, [line for r in results for line in r[2]]


def _one_corpus(path: Path, judge: Judge) -> tuple[bool, str, list[str]]:
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
    line = f"corpus {shown}: {total - len(rejected)} of {total} correct phrasings accepted"
    if path.name == EXTERNAL_CORPUS_NAME:
        agree = sum(
            judge.judge_episode(c.episode, c.question).passed == (c.judge == "pass")
            for c in corpus.cases
        )
        line += (
            f"; {agree} of {len(corpus.cases)} verdicts as a careful grader gives them "
            "(answers in the styles real models write)"
        )
    evidence = [line, *rejected]
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


def ablation_effect(
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
        check = load_study(suite.study).baseline_audit
        exercised = check.exercised_heuristics(full) if check is not None else {}
        if any(decided for _, decided in exercised.get(str(config.ablated), [])):
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
