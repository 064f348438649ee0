"""The report's comparison with an earlier run (``toolreplay report --compare``): a view model
for ``templates/_compare.html.j2``, built on :func:`toolreplay.diff.diff_runs`.

Per configuration, the trials each run recorded and its pass rates side by side (before →
after), the regressions and improvements; each changed episode with its transcripts side by
side (runs of identical messages folded) and an inline word diff of each changed message.
Deterministic: a function of the two runs only.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolreplay.diff import Run, RunDiff, Score, diff_runs
from toolreplay.diff_text import rate_text
from toolreplay.paired import Paired, p_text, signed
from toolreplay.report.episodes import message_anchor_of, one_line
from toolreplay.report.summary import mode_label
from toolreplay.report.text import text_view
from toolreplay.results.format import EpisodeResult, Results

__all__ = ["compare_view", "word_diff"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _score(s: Score) -> dict[str, Any]:
    """One configuration's row: ``{"name", "a", "b" (trial 1 passed/total), "changed",
    "trials" (a, b), "over" ({"a", "b"}: ``"19/20 (95%)"``, ``–`` when none ran), "rates"
    (a, b percentages or None), "over_changed", "regressions", "improvements", "paired" (see
    :func:`_paired`; None when no question is in both runs)}``."""
    (pa, na), (pb, nb) = s.over_trials
    ra, rb = s.rates
    return {
        "name": s.name,
        "a": s.a,
        "b": s.b,
        "changed": s.changed,
        "trials": s.trials,
        "trials_differ": s.trials[0] != s.trials[1],
        "over": {"a": rate_text(pa, na), "b": rate_text(pb, nb)},
        "rates": (
            None if ra is None else round(100 * ra),
            None if rb is None else round(100 * rb),
        ),
        "over_changed": (pa, na) != (pb, nb),
        "regressions": s.regressions,
        "improvements": s.improvements,
        "paired": _paired(s.paired),
    }


def _paired(p: Paired | None) -> dict[str, Any] | None:
    """The paired test in a table cell: ``{"difference": "+0.05", "interval": "−0.10 to
    +0.20" (None when no question changed its trial-1 verdict), "p": "0.62", "real": bool,
    "verdict": "not distinguishable from noise" or "a real difference", "test": "exact
    McNemar on trial 1" or "paired bootstrap over questions and 5 trials", "text": the whole
    sentence}``."""
    if p is None:
        return None
    return {
        "difference": signed(p.difference),
        "interval": p.interval_text,
        "p": p_text(p.p),
        "real": p.distinguishable,
        "verdict": p.verdict,
        "test": p.method,
        "text": p.text(),
    }


def _headline(d: RunDiff, label: str) -> str:
    """The verdict line's words: ``no differences since X``, or the flips (with the trial
    difference when there is one)."""
    if d.identical:
        return f"no differences since {label}"
    flips = _plural(len(d.flips), "flip")
    if d.trials_differ:
        a, b = d.trials
        return f"{flips} in trial 1 since {label} ({_plural(a, 'trial')} before, {b} after)"
    return f"{flips} since {label}"


def compare_view(
    before: Run,
    results: Results,
    episodes: Sequence[EpisodeResult],
    anchors: Sequence[str],
) -> dict[str, Any]:
    """What changed since ``before``: ``{"label", "headline", "comparable", "differing",
    "aspects", "trials" ({"a", "b", "differ", "note"}: trials per question in each run; the
    note names the difference), "scores" (one row per configuration, see :func:`_score`),
    "cells" (the same rows by configuration, for the grid), "regressions", "improvements",
    "changes" (each changed episode with a link to its transcript, its first differing message
    and, for the first :data:`SIDE_BY_SIDE_MAX`, ``side_by_side`` and ``word_diffs``), "flips",
    "only_a", "only_b", "identical"}``."""
    d = diff_runs(before, Run(label="this report", results=results))
    where = {(ep.configuration, ep.question_id): anchors[i] for i, ep in enumerate(episodes)}
    index = {anchor: i for i, anchor in enumerate(anchors)}
    earlier = {(ep.configuration, ep.question_id): ep for ep in before.results.episodes}
    changes = []
    for n, c in enumerate(d.changes):
        anchor = where[(c.configuration, c.question_id)]
        now = episodes[index[anchor]].transcript
        then = earlier[(c.configuration, c.question_id)].transcript
        fd = c.first_difference
        shown = n < SIDE_BY_SIDE_MAX
        changes.append(
            {
                "key": c.key,
                "flipped": c.flipped,
                "passed": c.passed,
                "gained": [mode_label(m) for m in c.gained],
                "lost": [mode_label(m) for m in c.lost],
                "rounds": c.rounds,
                "tool_calls": c.tool_calls,
                "stop_reason": c.stop_reason,
                "anchor": anchor,
                "side_by_side": _side_by_side(then, now, None if fd is None else fd.index, anchor)
                if shown
                else None,
                "word_diffs": _word_diffs(then, now, anchor) if shown else [],
                "first_difference": None
                if fd is None
                else {
                    "index": fd.index,
                    "a": text_view(fd.a),
                    "b": text_view(fd.b),
                    "anchor": message_anchor_of(anchor, fd.index)
                    if fd.index < len(now)
                    else anchor,
                },
            }
        )
    scores = [_score(s) for s in d.scores]
    return {
        "label": before.label,
        "headline": _headline(d, before.label),
        "comparable": d.comparable,
        "differing": d.differing,
        "aspects": [
            {"name": x.name, "same": x.same, "a": x.a, "b": x.b, "required": x.required}
            for x in d.aspects
        ],
        "trials": {
            "a": d.trials[0],
            "b": d.trials[1],
            "differ": d.trials_differ,
            "note": d.trial_note,
            "many": max(d.trials) > 1,
        },
        "scores": scores,
        "cells": {s["name"]: s for s in scores},
        "regressions": d.regressions,
        "improvements": d.improvements,
        "changes": changes,
        "flips": len(d.flips),
        "only_a": list(d.only_a),
        "only_b": list(d.only_b),
        "identical": d.identical,
    }


#: Changed episodes shown side by side (the first ones, in the diff's order); the others are
#: in the changes table with their first differing message.
SIDE_BY_SIDE_MAX = 100


#: Characters of a message shown in the side-by-side comparison (the rest is in the transcript).
SIDE_CLIP = 400


#: Changed messages of one episode given a word diff (the first ones).
WORD_DIFFS_MAX = 3


#: Characters of a message beyond which no word diff is computed (its side-by-side remains).
WORD_DIFF_LIMIT = 6000


#: Word pairs the matcher compares at most (words of the changed middle of one side × of the
#: other); a larger middle is shown deleted then inserted whole.
WORD_DIFF_CELLS = 160_000


def _calls(message: Mapping[str, Any]) -> list[str]:
    return [
        f"{(c.get('function') or {}).get('name', '?')}"
        f"({one_line((c.get('function') or {}).get('arguments'))})"
        for c in message.get("tool_calls") or []
    ]


def _brief(message: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A message in a few lines for the side-by-side view: its role, text (clipped) and the
    tool calls it makes (name and one-line arguments)."""
    if message is None:
        return None
    content = message.get("content")
    text = content if isinstance(content, str) else (None if content is None else str(content))
    return {
        "role": str(message.get("role", "?")),
        "text": None if text is None else text_view(text, limit=SIDE_CLIP),
        "calls": [text_view(c, lang=False) for c in _calls(message)],
    }


def _side_by_side(
    a: Sequence[Mapping[str, Any]],
    b: Sequence[Mapping[str, Any]],
    first: int | None,
    anchor: str,
) -> list[dict[str, Any]]:
    """The two transcripts message by message: ``{"index", "a", "b" (see :func:`_brief`;
    None past a transcript's end), "same", "first" (the first differing message), "anchor"
    (this run's message)}``; a run of two or more identical messages is one row ``{"same":
    True, "folded": [its messages' rows], "count", "first_index", "last_index"}`` (the page
    folds it: "3 identical messages")."""
    rows: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []

    def flush() -> None:
        if len(run) >= 2:
            rows.append(
                {
                    "same": True,
                    "first": False,
                    "folded": list(run),
                    "count": len(run),
                    "first_index": run[0]["index"],
                    "last_index": run[-1]["index"],
                }
            )
        else:
            rows.extend(run)
        run.clear()

    for i in range(max(len(a), len(b))):
        ma = a[i] if i < len(a) else None
        mb = b[i] if i < len(b) else None
        row = {
            "index": i,
            "a": _brief(ma),
            "b": _brief(mb),
            "same": ma == mb,
            "first": i == first,
            "folded": None,
            "anchor": message_anchor_of(anchor, i) if mb is not None else None,
        }
        if row["same"]:
            run.append(row)
            continue
        flush()
        rows.append(row)
    flush()
    return rows


#: A word of the word diff: a run of Latin letters, a number (with its decimals), a run of
#: white space, or any other single character (each CJK character is a word of its own).
WORD = re.compile(r"[A-Za-z_]+|\d+(?:\.\d+)?|\s+|.", re.S)


def _flat(message: Mapping[str, Any] | None) -> str:
    """A message as the text its word diff compares: its content, then one line per tool
    call (``name(arguments)``)."""
    if message is None:
        return ""
    content = message.get("content")
    text = content if isinstance(content, str) else ("" if content is None else str(content))
    return "\n".join([text, *_calls(message)]) if message.get("tool_calls") else text


def word_diff(a: str, b: str) -> list[dict[str, str]]:
    """``a`` → ``b`` word by word (:data:`WORD`): ``[{"op": "same" | "del" | "ins", "text"}]``,
    deleted words before inserted ones where a stretch was replaced; adjacent parts of one op
    merged. The common beginning and end are taken off first; the middle is matched by
    :class:`difflib.SequenceMatcher` (no junk heuristic) when it is at most
    :data:`WORD_DIFF_CELLS` word pairs, else shown deleted then inserted whole (the matcher
    takes quadratic time). Deterministic."""
    wa, wb = WORD.findall(a), WORD.findall(b)
    parts: list[dict[str, str]] = []

    def add(op: str, words: Sequence[str]) -> None:
        text = "".join(words)
        if not text:
            return
        if parts and parts[-1]["op"] == op:
            parts[-1]["text"] += text
        else:
            parts.append({"op": op, "text": text})

    head = 0
    while head < min(len(wa), len(wb)) and wa[head] == wb[head]:
        head += 1
    tail = 0
    while tail < min(len(wa), len(wb)) - head and wa[-1 - tail] == wb[-1 - tail]:
        tail += 1
    ma, mb = wa[head : len(wa) - tail], wb[head : len(wb) - tail]
    add("same", wa[:head])
    if len(ma) * len(mb) > WORD_DIFF_CELLS:
        add("del", ma)
        add("ins", mb)
    else:
        matcher = difflib.SequenceMatcher(None, ma, mb, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                add("same", ma[i1:i2])
                continue
            add("del", ma[i1:i2])
            add("ins", mb[j1:j2])
    add("same", wa[len(wa) - tail :])
    return parts


def _words(texts: Iterable[str]) -> int:
    return sum(1 for t in texts for w in WORD.findall(t) if not w.isspace())


def _word_diffs(
    a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]], anchor: str
) -> list[dict[str, Any]]:
    """The first :data:`WORD_DIFFS_MAX` changed messages as word diffs: ``{"index", "role",
    "anchor", "parts" (see :func:`word_diff`), "deleted", "inserted" (words)}``; a message
    present on one side only, or longer than :data:`WORD_DIFF_LIMIT`, is left to the
    side-by-side view."""
    out = []
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        ta, tb = _flat(a[i]), _flat(b[i])
        if max(len(ta), len(tb)) > WORD_DIFF_LIMIT:
            continue
        parts = word_diff(ta, tb)
        out.append(
            {
                "index": i,
                "role": str(b[i].get("role", "?")),
                "anchor": message_anchor_of(anchor, i),
                "parts": parts,
                "deleted": _words(p["text"] for p in parts if p["op"] == "del"),
                "inserted": _words(p["text"] for p in parts if p["op"] == "ins"),
            }
        )
        if len(out) == WORD_DIFFS_MAX:
            break
    return out
