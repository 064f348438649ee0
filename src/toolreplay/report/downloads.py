"""What the report page offers for download beside it: the results JSON it was rendered from
and a CSV of its episode table.

:func:`episodes_csv` gives the CSV (one row per episode and trial, in the table's order),
written beside the page as :func:`csv_path` (``<stem>-episodes.csv``) by every report writer
(:func:`toolreplay.report.render.report_pages`). :func:`relative_href` gives the link to the
results file only when it sits in the page's folder or below it, so a page copied with its
folder never links to a file that is not there.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from toolreplay.results.format import EpisodeResult, Results, TrialOutcome

#: The CSV's header, one column per field of the episode table (and a few it only shows in the
#: transcript): tokens as the API reported them, wall time in seconds as recorded, stop reason
#: as the host recorded it (``max_rounds``, not the page's label), failure reasons space
#: separated (``unmet_expectation`` first, then the failure modes), unmet expectations in words
#: separated by ``; ``. An empty cell: nothing recorded (a further trial keeps only its verdict,
#: rounds, tool calls, stop reason and failure modes).
CSV_COLUMNS = (
    "episode",
    "configuration",
    "question_id",
    "question",
    "trial",
    "passed",
    "failure_reasons",
    "unmet_expectations",
    "rounds",
    "tool_calls",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "recorded_wall_time_s",
    "stop_reason",
    "finish_reason",
    "tool_chain",
    "answer",
)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _record_row(n: int, trial: int, ep: EpisodeResult) -> tuple[object, ...]:
    """A CSV row from an episode's whole record (trial 1's, or a later trial results keep)."""
    unmet = [x for x in ep.expectations or [] if not x.passed]
    usage = ep.usage
    return (
        n,
        ep.configuration,
        ep.question_id,
        ep.question,
        trial,
        ep.passed,
        " ".join((["unmet_expectation"] if unmet else []) + ep.modes),
        "; ".join(f"{x.expected} — {x.explanation}" for x in unmet),
        ep.rounds,
        ep.tool_calls,
        None if usage is None else usage.prompt_tokens,
        None if usage is None else usage.completion_tokens,
        None if usage is None else usage.total_tokens,
        ep.recorded_wall_time_s,
        ep.stop_reason,
        ep.finish_reason,
        " ".join(ep.tool_chain),
        ep.answer,
    )


def _outcome_row(n: int, ep: EpisodeResult, o: TrialOutcome) -> tuple[object, ...]:
    """A CSV row for a later trial known only by its outcome: what it records, the rest empty."""
    modes = " ".join(dict.fromkeys(o.failure_modes or []))
    unknown = (None,) * 4  # tokens (prompt, completion, total) and wall time
    return (
        *(n, ep.configuration, ep.question_id, ep.question, o.trial, o.passed, modes, None),
        *(o.rounds, o.tool_calls, *unknown, o.stop_reason, None, None, None),
    )


def episodes_csv(results: Results) -> str:
    """The episode table as CSV text (header :data:`CSV_COLUMNS`, ``\n`` line ends, quoted
    where needed by :mod:`csv`): one row per episode (trial 1) in results order, each followed
    by its further trials in trial order, as in the page's table: from their whole record when
    results keep it (``trial_episodes``), else from ``trial_outcomes`` (what they record).
    ``episode`` is the table's ``#`` (1-based). Deterministic: the same results give the same
    text."""
    later: dict[tuple[str, str], list[TrialOutcome]] = {}
    for o in results.trial_outcomes or []:
        if o.trial > 1:
            later.setdefault((o.configuration, o.question_id), []).append(o)
    kept = {(e.configuration, e.question_id, e.trial): e for e in results.trial_episodes or []}
    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\n")
    out.writerow(CSV_COLUMNS)
    for n, ep in enumerate(results.episodes, 1):
        out.writerow(_cell(v) for v in _record_row(n, 1, ep))
        for o in sorted(later.get((ep.configuration, ep.question_id), []), key=lambda o: o.trial):
            whole = kept.get((ep.configuration, ep.question_id, o.trial))
            row = _outcome_row(n, ep, o) if whole is None else _record_row(n, o.trial, whole)
            out.writerow(_cell(v) for v in row)
    return buffer.getvalue()


def csv_path(out_path: Path) -> Path:
    """Where the episode table's CSV goes beside the page: ``index.html`` →
    ``index-episodes.csv``."""
    return out_path.with_name(f"{out_path.stem}-episodes.csv")


def relative_href(target: Path, page: Path) -> str | None:
    """``target`` as a link from ``page`` (a relative URL path with ``/``), or None when it
    does not sit in the page's folder or below it (the link would break when the folder is
    moved or served on its own)."""
    try:
        rel = os.path.relpath(Path(target).resolve(), Path(page).resolve().parent)
    except ValueError:  # another drive
        return None
    parts = PurePosixPath(*Path(rel).parts)
    if rel.startswith("..") or str(parts) in ("", "."):
        return None
    return quote("/".join(parts.parts))
