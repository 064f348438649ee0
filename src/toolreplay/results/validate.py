"""What a results file must hold beyond its shape: the invariants ``report`` and ``diff`` check
before they trust one.

:func:`read_results` reads a ``results.json`` with bounds (size :data:`RESULTS_LIMIT`,
nesting :data:`MAX_DEPTH`), validates its shape (:func:`toolreplay.results.format.
check_results`) and then :func:`check_invariants`:

- each episode (configuration, question id) appears once, each later trial
  (``trial_episodes``: configuration, question id, trial from 2) once;
- rounds, tool calls and token counts are not negative (every trial's); a configuration's
  ``passed`` is between 0 and its ``total``;
- an episode judged ``passed`` carries no label that means failure (``fabricated_value``,
  ``empty_answer``, ``error``): a judge passes no answer holding a value no tool returned;
- each configuration's summary is what its trial-1 episodes give (:func:`check_summaries`):
  ``passed`` and ``total``, ``avg_rounds`` and ``avg_tool_calls`` (to their 2 decimals), the
  stop-reason and failure-mode counts; every episode's configuration has a summary. A summary
  edited by hand ("4/4" over failing episodes) is refused, not shown.

Every failure is a :class:`~toolreplay.results.format.ResultsError` whose message names the
file and the episode or configuration.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolreplay.inputs import InputFileError, read_checked
from toolreplay.results.format import Results, ResultsError, as_results

#: Larger results files are refused unread (the study's is ~1 MB).
RESULTS_LIMIT = 256 * 1024 * 1024

#: Deeper nesting is refused (the format's is below 12).
MAX_DEPTH = 64

#: Labels an episode judged passed never carries.
FAILING_MODES = ("fabricated_value", "empty_answer", "error")


def load_json_bounded(path: Path, what: str, limit: int, depth: int = MAX_DEPTH) -> Any:
    """Parse the JSON file ``path`` (at most ``limit`` bytes, nesting at most ``depth``);
    :class:`~toolreplay.inputs.InputFileError` (a :class:`ValueError`) naming the file and
    what is wrong otherwise (:func:`toolreplay.inputs.read_checked`)."""
    return read_checked(path, what=what, limit=limit, parse="json", depth=depth)


def check_invariants(results: Results | Mapping[str, Any]) -> None:
    """:class:`ResultsError` naming the first broken invariant (see the module docstring) of
    ``results``, a document :func:`~toolreplay.results.format.check_results` accepted (a
    mapping is validated into :class:`~toolreplay.results.format.Results` first)."""
    doc = as_results(results)
    episodes = doc.episodes
    keys = Counter((e.configuration, e.question_id) for e in episodes)
    if twice := [(c, q, n) for (c, q), n in keys.items() if n > 1]:
        config, qid, n = twice[0]
        raise ResultsError(f"episode {config}/{qid} appears {n} times")
    later = doc.trial_episodes or []
    for e in later:
        if e.trial is None or e.trial < 2:
            raise ResultsError(
                f"trial_episodes: {e.configuration}/{e.question_id} has trial {e.trial}; "
                "a later trial is numbered from 2 (trial 1 is in episodes)"
            )
    trial_keys = Counter((e.configuration, e.question_id, e.trial) for e in later)
    if twice_t := [k for k, n in trial_keys.items() if n > 1]:
        config, qid, trial = twice_t[0]
        raise ResultsError(f"episode {config}/{qid} trial {trial} appears more than once")
    for e in [*episodes, *later]:
        key = f"{e.configuration}/{e.question_id}" + (f" trial {e.trial}" if e.trial else "")
        for field, count in (("rounds", e.rounds), ("tool_calls", e.tool_calls)):
            if count < 0:
                raise ResultsError(f"episode {key}: {field} is {count}, below 0")
        if e.usage is not None:
            for field, value in e.usage.model_dump().items():
                if isinstance(value, int) and value < 0:
                    raise ResultsError(f"episode {key}: usage.{field} is {value}, below 0")
        if e.passed:
            bad = [m for m in e.modes if m in FAILING_MODES]
            if bad:
                raise ResultsError(
                    f"episode {key} is marked passed beside the failure mode {bad[0]}; a "
                    "results file from toolreplay never says both (edited by hand?)"
                )
    for c in doc.configurations:
        name = c.name
        if not 0 <= c.passed <= c.total:
            raise ResultsError(
                f"configuration {name}: passed {c.passed} of total {c.total} is impossible"
            )
        for field, mean in (("avg_rounds", c.avg_rounds), ("avg_tool_calls", c.avg_tool_calls)):
            if mean < 0:
                raise ResultsError(f"configuration {name}: {field} is {mean}, below 0")


def check_summaries(doc: Results) -> None:
    """:class:`ResultsError` naming the first configuration whose summary differs from what
    its trial-1 episodes give (recomputed here from the definitions in
    :class:`~toolreplay.results.format.ConfigurationSummary`), or the first episode of a
    configuration without one."""
    names = {c.name for c in doc.configurations}
    if stray := [e for e in doc.episodes if e.configuration not in names]:
        e = stray[0]
        raise ResultsError(
            f"episode {e.configuration}/{e.question_id}: its configuration has no summary"
        )
    for c in doc.configurations:
        eps = [e for e in doc.episodes if e.configuration == c.name]
        n = len(eps) or 1
        modes = Counter(m for e in eps for m in e.modes)
        expected: dict[str, Any] = {
            "passed": sum(1 for e in eps if e.passed),
            "total": len(eps),
            "avg_rounds": round(sum(e.rounds for e in eps) / n, 2),
            "avg_tool_calls": round(sum(e.tool_calls for e in eps) / n, 2),
            "stop_reasons": dict(Counter(e.stop_reason for e in eps)),
            "failure_modes": dict(modes),
        }
        found: dict[str, Any] = {
            "passed": c.passed,
            "total": c.total,
            "avg_rounds": c.avg_rounds,
            "avg_tool_calls": c.avg_tool_calls,
            "stop_reasons": c.stop_reasons,
            "failure_modes": c.failure_modes,
        }
        for field, want in expected.items():
            have = found[field]
            if have is None and field in ("stop_reasons", "failure_modes"):
                continue  # an older file without the counts
            if isinstance(want, float) and abs(float(have) - want) <= 0.006:
                continue
            if have != want:
                raise ResultsError(
                    f"configuration {c.name}: {field} is {have} but its episodes give {want}; "
                    "the summary does not match the episodes (edited by hand?). Re-run "
                    "`toolreplay run` to write the results again"
                )


#: What to do about a file that cannot be read as results at all (not JSON, not UTF-8...).
NOT_RESULTS_TODO = "give the results.json `toolreplay run` writes (or its folder)"


def read_results(path: Path) -> Results:
    """Read, bound, validate and check a ``results.json`` (see the module docstring).
    Returns it as :class:`~toolreplay.results.format.Results`; :class:`ResultsError` naming
    ``path`` otherwise."""
    try:
        results = load_json_bounded(Path(path), "results file", RESULTS_LIMIT)
    except InputFileError as exc:
        if exc.missing:
            raise ResultsError(
                f"{path}: results file not found; `toolreplay run` writes one"
            ) from None
        raise ResultsError(f"{exc}; {NOT_RESULTS_TODO}") from None
    except ValueError as exc:
        raise ResultsError(f"{exc}; {NOT_RESULTS_TODO}") from None
    try:
        doc = as_results(results)
        check_invariants(doc)
        check_summaries(doc)
    except ResultsError as exc:
        raise ResultsError(f"{path}: {exc}") from None
    return doc
