"""The page's spine: the episode table, the question × configuration matrix, and the failure
gallery grouped by failure mode × configuration.

Every row, cell and card carries the same small set of filter attributes (``data-c``
configuration, ``data-q`` question id, ``data-p`` ``1``/``0`` passed, ``data-m`` failure modes
and ``unmet_expectation``, ``data-t`` trial, ``data-k`` the episode's anchor), so the page's
script filters them all by one rule and counts what is left; without the script every row is
shown, in results order. A table row also carries ``data-s``: what the search box looks through
beyond the row's visible text (tool names, call arguments, tool results; :func:`search_text`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.report.episodes import chain_view, episode_modes, failure_card, pending_calls_view
from toolreplay.report.errors import error_causes
from toolreplay.report.labels import FAILURE_MODES
from toolreplay.report.reasons import UNMET, unmet_records, unmet_views
from toolreplay.report.summary import mode_label, ordered_names, stop_view
from toolreplay.report.text import text_view
from toolreplay.results.format import (
    ConfigurationSummary,
    EpisodeResult,
    FailureModeRecord,
    Results,
    TrialOutcome,
)

#: A run with more episodes than this is "large": transcripts are rendered lean (see
#: :mod:`toolreplay.report.transcripts`), matrix cells show the chain without arguments or
#: answers, and the gallery shows :data:`EXAMPLES` cards per group with the rest listed.
LARGE_RUN = 200


#: Cards shown per failure mode × configuration group; the others are listed under "show all".
EXAMPLES = 3


#: Characters of the answer's first line shown in the episode table.
ANSWER_LINE = 120


#: Characters of an episode's tool calls and results the search box looks through (``data-s``);
#: the page stays small at 1,000 episodes.
SEARCH_CHARS = 100

#: A large run's table (:data:`LARGE_RUN`) keeps less per row: the answer's first line and the
#: search text cut shorter (the whole answer is in the transcript), so 1,000 episodes stay
#: within the page's size.
LARGE_ANSWER_LINE, LARGE_SEARCH_CHARS = 60, 60


#: Characters of one string taken from a tool result into :func:`search_text`.
SEARCH_PIECE = 40


#: What a cell with nothing recorded shows (and the sort puts last).
NOTHING = "—"


def _clean(text: str, limit: int) -> str:
    """``text`` on one line, control and invisible characters as spaces, cut at ``limit``."""
    text = text[: limit * 4]  # whitespace collapsed below may shorten it, never lengthen it
    if not text.isprintable():
        text = "".join(" " if unicodedata.category(ch)[0] in "CZ" else ch for ch in text)
    return " ".join(text.split())[:limit]


#: Dates and times (``2026-09-17``, ``2026-09-17T15:30``): in every forecast, found by nothing.
_DATE = re.compile(r"^\d{4}-\d\d-\d\d([T ][\d:.]+)?([+-]\d\d:?\d\d|Z)?$")


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        if not _DATE.match(value):
            out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if not str(k).lower().endswith(("unit", "units")):  # °C, km/h: found everywhere
                _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)


def _arguments(args: Any) -> str:
    """A call's string arguments as ``key=value,...`` (numbers, such as coordinates, left out:
    nobody searches for them and they are long)."""
    if isinstance(args, dict):
        return ",".join(f"{k}={v}" for k, v in args.items() if isinstance(v, str))
    return args if isinstance(args, str) else ""


def search_text(ep: EpisodeResult, limit: int = SEARCH_CHARS) -> str:
    """What the search box finds an episode by beyond its row's visible text (question, answer,
    configuration, failure-mode labels): each executed and pending tool call as
    ``name(key=value,...)``, the model API error's message, then the strings in its tool
    results (each cut at :data:`SEARCH_PIECE` characters, leaving out dates and values under
    keys ending in ``unit``/``units``; a result that is not JSON as its text); each piece
    once, in that order, on one line, cut at ``limit`` characters. Only string arguments are
    kept (``get_weather_by_coords`` without its coordinates). Deterministic; empty when the
    episode has no tool call, result or error."""
    pieces: list[str] = []
    calls = [(c.name, c.arguments) for c in ep.calls or []]
    if ep.calls is None:
        calls = [(name, None) for name in ep.tool_chain]
    calls += [(c.name, c.arguments) for c in ep.pending_tool_calls or []]
    for name, args in calls:
        shown = _arguments(args)
        pieces.append(f"{name}({shown})" if shown else name)
    if ep.error is not None:
        pieces.append(ep.error.message)
    for message in ep.transcript:
        content = message.get("content")
        if message.get("role") != "tool" or not isinstance(content, str):
            continue
        if sum(len(x) for x in pieces) > limit:
            break  # enough: the rest would be cut
        try:
            found: list[str] = []
            _strings(json.loads(content), found)
        except ValueError:
            found = [content]
        pieces += [_clean(x, SEARCH_PIECE) for x in found]
    text = " ".join(p for p in dict.fromkeys(_clean(p, limit) for p in pieces) if p)
    return text[:limit].rstrip()


def _wall_time(seconds: float | None) -> str:
    if seconds is None:
        return NOTHING
    if seconds < 1:
        return f"{seconds:.2f} s"
    return f"{seconds:.1f} s" if seconds < 100 else f"{seconds:.0f} s"


def _stop(configuration: str, reason: str) -> dict[str, str]:
    """:func:`~toolreplay.report.summary.stop_view` with ``short``: the label the table shows
    (the reason itself, or "after its tool round" for the single host's designed stop)."""
    view = stop_view(configuration, reason)
    return {**view, "short": reason if view["label"] == reason else "after its tool round"}


def _first_line(answer: str, limit: int = ANSWER_LINE) -> str:
    line = next((part.strip() for part in answer.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _modes(names: Sequence[str]) -> list[dict[str, str]]:
    return [{"mode": m, "label": mode_label(m)} for m in dict.fromkeys(names)]


def _recorded(ep: EpisodeResult, compact: bool = False) -> dict[str, Any]:
    """The columns an episode's record fills (trial 1's, or a further trial's kept whole);
    ``compact``: a large run's shorter answer line and search text."""
    answer_at, search_at = (LARGE_ANSWER_LINE, LARGE_SEARCH_CHARS) if compact else (
        ANSWER_LINE,
        SEARCH_CHARS,
    )
    usage, wall = ep.usage, ep.recorded_wall_time_s
    return {
        "rounds": ep.rounds,
        "tool_calls": ep.tool_calls,
        "tokens": None
        if usage is None
        else {
            "total": usage.total_tokens,
            "prompt": usage.prompt_tokens,
            "completion": usage.completion_tokens,
        },
        "wall_time": None if wall is None else {"s": wall, "text": _wall_time(wall)},
        "stop": _stop(ep.configuration, ep.stop_reason),
        "finish": ep.finish_reason,
        "streamed": ep.streamed is True,
        "answer": text_view(_first_line(ep.answer, answer_at)) if ep.answer else None,
        "search": search_text(ep, search_at),
    }


def episode_rows(
    results: Results,
    episodes: Sequence[EpisodeResult],
    anchors: Sequence[str],
    kept: Mapping[tuple[str, str, int], tuple[EpisodeResult, str]] | None = None,
    compact: bool = False,
) -> list[dict[str, Any]]:
    """One row per episode (trial 1, with its transcript), then one per further trial from
    ``trial_outcomes`` (keyed to trial 1's transcript unless results keep theirs): ``{"n",
    "anchor", "configuration", "question_id", "question", "trial", "passed", "modes",
    "mode_names", "unmet", "rounds", "tool_calls", "tokens", "wall_time", "stop", "finish",
    "streamed", "answer", "search", "has_transcript"}``. ``modes``: trial 1's unmet expectations
    (:func:`~toolreplay.report.reasons.unmet_views`, with their ``text``) then its failure modes
    (``{"mode", "label"}``); a further trial's failure modes only (``trial_outcomes`` keep no
    expectations). ``mode_names``: the same as names (``unmet_expectation`` first), space
    separated; ``unmet``: how many expectations are unmet (the gallery counts those);
    ``tokens``: ``{"total", "prompt", "completion"}`` (integers) or None; ``wall_time``:
    ``{"s" (seconds as recorded), "text" (e.g. ``2.3 s``)}`` or None; ``stop``:
    :func:`~toolreplay.report.summary.stop_view` and ``short`` (the table's label) or None;
    ``finish``: the API's finish reason or None; ``streamed``: its replies were streamed (a
    further trial without its record: False); ``rounds``/``tool_calls``: None when a trial
    did not record them; ``search``: :func:`search_text` (empty for further trials whose
    calls are not kept). Order: results order, each episode's further trials after it. A
    further trial results keep whole (``kept``: its record and transcript anchor by
    configuration, question id and trial) opens its own transcript and has every column as
    trial 1's row."""
    later: dict[tuple[str, str], list[TrialOutcome]] = {}
    for o in results.trial_outcomes or []:
        if o.trial > 1:
            later.setdefault((o.configuration, o.question_id), []).append(o)
    rows: list[dict[str, Any]] = []
    for i, ep in enumerate(episodes):
        modes = [f.mode for f in ep.failure_modes or []]
        question = text_view(ep.question)
        unmet = unmet_views(ep)
        rows.append(
            {
                "n": i + 1,
                "anchor": anchors[i],
                "configuration": ep.configuration,
                "question_id": ep.question_id,
                "question": question,
                "trial": 1,
                "passed": ep.passed,
                "modes": unmet + _modes(modes),
                "mode_names": " ".join(([UNMET] if unmet else []) + ep.modes),
                "unmet": len(unmet),
                **_recorded(ep, compact),
                "has_transcript": True,
            }
        )
        for o in sorted(later.get((ep.configuration, ep.question_id), []), key=lambda o: o.trial):
            names = list(o.failure_modes or [])
            rows.append(
                {
                    "n": i + 1,
                    "anchor": anchors[i],
                    "configuration": ep.configuration,
                    "question_id": ep.question_id,
                    "question": question,
                    "trial": o.trial,
                    "passed": o.passed,
                    "modes": _modes(names),
                    "mode_names": " ".join(dict.fromkeys(names)),
                    "unmet": 0,
                    "rounds": o.rounds,
                    "tool_calls": o.tool_calls,
                    "tokens": None,
                    "wall_time": None,
                    "stop": None
                    if o.stop_reason is None
                    else _stop(ep.configuration, o.stop_reason),
                    "finish": None,
                    "streamed": False,
                    "answer": None,
                    "search": "",
                    "has_transcript": False,
                }
            )
            if (whole := (kept or {}).get((ep.configuration, ep.question_id, o.trial))) is not None:
                record, anchor = whole
                record_unmet = unmet_views(record)
                rows[-1].update(
                    _recorded(record, compact),
                    anchor=anchor,
                    has_transcript=True,
                    modes=record_unmet + _modes([f.mode for f in record.failure_modes or []]),
                    mode_names=" ".join(([UNMET] if record_unmet else []) + record.modes),
                    unmet=len(record_unmet),
                )
    return rows


def matrix(
    episodes: Sequence[EpisodeResult],
    configurations: Sequence[ConfigurationSummary],
    anchors: Sequence[str],
    detail: bool,
) -> dict[str, Any]:
    """Questions (rows, first-seen order) × configurations (columns): each cell the episode's
    verdict, its failure reasons (unmet expectations, then failure modes), its tool-call chain
    (with arguments and the answer's first line when ``detail``) and a link to its transcript;
    None where the configuration did not run the question.
    ``{"columns": [name], "rows": [{"id", "question", "cells": [cell | None]}], "detail"}``."""
    names = ordered_names((ep.configuration for ep in episodes), [c.name for c in configurations])
    at: dict[tuple[str, str], int] = {}
    questions: dict[str, int] = {}
    for i, ep in enumerate(episodes):
        at.setdefault((ep.question_id, ep.configuration), i)
        questions.setdefault(ep.question_id, i)
    rows = []
    for qid, first in questions.items():
        cells: list[dict[str, Any] | None] = []
        for name in names:
            found = at.get((qid, name))
            if found is None:
                cells.append(None)
                continue
            i = found
            ep = episodes[i]
            chain = chain_view(ep)
            if not detail:
                chain = {
                    **chain,
                    "rounds": [[{**c, "args": None} for c in rnd] for rnd in chain["rounds"]],
                    "pending": [{**c, "args": None} for c in chain["pending"]],
                }
            cells.append(
                {
                    "anchor": anchors[i],
                    "configuration": name,
                    "question_id": qid,
                    "passed": ep.passed,
                    "mode_names": episode_modes(ep),
                    "modes": unmet_views(ep) + _modes([f.mode for f in ep.failure_modes or []]),
                    "chain": chain,
                    "rounds": ep.rounds,
                    "tool_calls": ep.tool_calls,
                    "stop": stop_view(name, ep.stop_reason),
                    "answer": text_view(_first_line(ep.answer, 200))
                    if detail and ep.answer
                    else None,
                }
            )
        rows.append({"id": qid, "question": text_view(episodes[first].question), "cells": cells})
    return {"columns": names, "rows": rows, "detail": detail}


def gallery(
    episodes: Sequence[EpisodeResult],
    configurations: Sequence[ConfigurationSummary],
    anchors: Sequence[str],
    examples: int = EXAMPLES,
) -> dict[str, Any]:
    """Failure cards grouped by mode (known modes first), then by configuration: each group
    ``{"configuration", "count", "cards" (the first ``examples``), "more" (the rest, as
    ``{"anchor", "question_id", "question", "configuration", "mode"}`` links)}``.

    ``classified`` counts episodes carrying ``failure_modes``; when it is 0 the classifier has
    not run and ``unclassified`` lists the episodes the judge failed, without a mode.
    ``reasons``: the unmet expectations as a group of the same shape (mode
    :data:`~toolreplay.report.reasons.UNMET`, one card per unmet expectation; empty when
    every expectation is met), shown before the failure modes and not counted in ``count``.
    ``error_causes``: the episodes that ended on a model API error, grouped by cause
    (:func:`toolreplay.report.errors.error_causes`); the page shows them instead of the
    ``error`` group's cards."""
    classified = [i for i, ep in enumerate(episodes) if ep.failure_modes is not None]
    members: dict[str, dict[str, list[tuple[int, FailureModeRecord]]]] = {}
    for i in classified:
        for fm in episodes[i].failure_modes or []:
            per = members.setdefault(fm.mode, {})
            per.setdefault(episodes[i].configuration, []).append((i, fm))
    unmet: dict[str, dict[str, list[tuple[int, FailureModeRecord]]]] = {}
    for i, ep in enumerate(episodes):
        for record in unmet_records(ep):
            unmet.setdefault(UNMET, {}).setdefault(ep.configuration, []).append((i, record))
    order = [c.name for c in configurations]
    return {
        **_groups(episodes, anchors, members, order, examples),
        "reasons": _groups(episodes, anchors, unmet, order, examples)["groups"],
        # model API errors grouped by cause (report/errors.py): one line each, not a card each
        "error_causes": error_causes(episodes, anchors),
    }


def _groups(
    episodes: Sequence[EpisodeResult],
    anchors: Sequence[str],
    members: dict[str, dict[str, list[tuple[int, FailureModeRecord]]]],
    order: list[str],
    examples: int,
) -> dict[str, Any]:
    classified = [i for i, ep in enumerate(episodes) if ep.failure_modes is not None]
    groups = []
    for mode in ordered_names(sorted(members), FAILURE_MODES):
        per = members[mode]
        subgroups = []
        for name in ordered_names(per, order):
            found = per[name]
            subgroups.append(
                {
                    "configuration": name,
                    "count": len(found),
                    "cards": [
                        failure_card(episodes[i], fm, anchors[i]) for i, fm in found[:examples]
                    ],
                    "more": [
                        {
                            "anchor": anchors[i],
                            "configuration": name,
                            "question_id": episodes[i].question_id,
                            "question": text_view(episodes[i].question),
                            "passed": episodes[i].passed,
                            "mode": mode,
                        }
                        for i, _ in found[examples:]
                    ],
                }
            )
        groups.append(
            {
                "mode": mode,
                "label": mode_label(mode),
                "count": sum(len(per[s]) for s in per),
                "configurations": subgroups,
            }
        )
    unclassified = [
        {
            "configuration": ep.configuration,
            "question_id": ep.question_id,
            "question": text_view(ep.question),
            "answer": text_view(ep.answer) if ep.answer else None,
            "verdict": "" if ep.verdict is None else ep.verdict,
            "stop": stop_view(ep.configuration, ep.stop_reason),
            "anchor": anchors[i],
            "pending": pending_calls_view(ep),
        }
        for i, ep in enumerate(episodes)
        if ep.failure_modes is None and not ep.passed
    ]
    return {
        "ran": bool(classified),
        "classified": len(classified),
        "total": len(episodes),
        "groups": groups,
        "count": sum(g["count"] for g in groups),
        "unclassified": unclassified,
    }
