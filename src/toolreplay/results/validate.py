"""What a results file must hold beyond its shape: the invariants ``report`` and ``diff`` check
before they trust one.

:func:`read_results` reads a ``results.json`` with bounds (size :data:`RESULTS_LIMIT`,
nesting :data:`MAX_DEPTH`), validates its shape (:func:`toolreplay.results.format.
check_results`) and then :func:`check_invariants`:

- each episode (configuration, question id) appears once;
- rounds, tool calls and token counts are not negative; a configuration's ``passed`` is
  between 0 and its ``total``;
- an episode judged ``passed`` carries no label that means failure (``fabricated_value``,
  ``empty_answer``, ``error``): a judge passes no answer holding a value no tool returned.

Every failure is a :class:`~toolreplay.results.format.ResultsError` whose message names the
file and the episode or configuration.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolreplay.inputs import InputFileError, read_checked
from toolreplay.results.format import ResultsError, check_results

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


def check_invariants(results: Mapping[str, Any]) -> None:
    """:class:`ResultsError` naming the first broken invariant (see the module docstring) of
    ``results``, a document :func:`~toolreplay.results.format.check_results` accepted."""
    episodes = list(results.get("episodes") or [])
    keys = Counter((e["configuration"], e["question_id"]) for e in episodes)
    if twice := [(c, q, n) for (c, q), n in keys.items() if n > 1]:
        c, q, n = twice[0]
        raise ResultsError(f"episode {c}/{q} appears {n} times")
    for e in episodes:
        key = f"{e['configuration']}/{e['question_id']}"
        for field in ("rounds", "tool_calls"):
            if e[field] < 0:
                raise ResultsError(f"episode {key}: {field} is {e[field]}, below 0")
        usage = e.get("usage") or {}
        for field, value in usage.items():
            if isinstance(value, int) and value < 0:
                raise ResultsError(f"episode {key}: usage.{field} is {value}, below 0")
        if e["passed"]:
            bad = [m["mode"] for m in e.get("failure_modes") or [] if m["mode"] in FAILING_MODES]
            if bad:
                raise ResultsError(
                    f"episode {key} is marked passed beside the failure mode {bad[0]}; a "
                    "results file from toolreplay never says both (edited by hand?)"
                )
    for c in results.get("configurations") or []:
        name = c["name"]
        if not 0 <= c["passed"] <= c["total"]:
            raise ResultsError(
                f"configuration {name}: passed {c['passed']} of total {c['total']} is impossible"
            )
        for field in ("avg_rounds", "avg_tool_calls"):
            if c.get(field, 0) < 0:
                raise ResultsError(f"configuration {name}: {field} is {c[field]}, below 0")


def read_results(path: Path) -> dict[str, Any]:
    """Read, bound, validate and check a ``results.json`` (see the module docstring).
    :class:`ResultsError` naming ``path`` otherwise."""
    try:
        results = load_json_bounded(Path(path), "results file", RESULTS_LIMIT)
    except InputFileError as exc:
        if exc.missing:
            raise ResultsError(
                f"{path}: results file not found; `toolreplay run` writes one"
            ) from None
        raise ResultsError(str(exc)) from None
    except ValueError as exc:
        raise ResultsError(str(exc)) from None
    try:
        check_results(results)
        check_invariants(results)
    except ResultsError as exc:
        raise ResultsError(f"{path}: {exc}") from None
    if not isinstance(results, dict):  # pragma: no cover - check_results refuses it
        raise ResultsError(f"{path}: not a results document")
    return results
