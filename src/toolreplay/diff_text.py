"""``toolreplay diff`` in plain text: the lines :func:`format_diff` gives for a
:class:`~toolreplay.diff.RunDiff` (comparability, the trial difference, per configuration
trial 1 and over-trials passes with regressions and improvements and the paired difference
B − A with its interval and p-value in words (:mod:`toolreplay.paired`), then each changed
episode).
"""

from __future__ import annotations

from toolreplay.diff import EpisodeChange, RunDiff, Score

__all__ = ["diff_lines", "format_diff", "rate_text", "score_line"]


def _trials(n: int) -> str:
    return f"{n} trial{'' if n == 1 else 's'}"


def _delta(pair: tuple[int, int]) -> str:
    a, b = pair
    return f"{a} → {b} ({b - a:+d})" if a != b else str(a)


def diff_lines(d: RunDiff) -> list[str]:
    """The comparison as lines of plain text (what ``toolreplay diff`` prints)."""
    lines = [f"A: {d.a}", f"B: {d.b}"]
    same = [x.name for x in d.aspects if x.same]
    unknown = [x.name for x in d.aspects if x.same is None]
    if d.comparable and d.trials_differ:
        lines.append("comparable: trial 1 only (same " + ", ".join(same) + ")")
    elif d.comparable:
        lines.append("comparable: yes (same " + ", ".join(same) + ")")
    else:
        lines.append("comparable: NO, these differ: " + ", ".join(d.differing))
    if d.trial_note:
        lines.append(f"  trials differ: {d.trial_note}")
    for x in d.aspects:
        if x.same is False and x.required:
            lines.append(f"  {x.name} differs: A {x.a} | B {x.b}")
    for name in unknown:
        lines.append(f"  {name}: not compared (a results file or a test suite's folder does "
                     "not record it)")  # fmt: skip
    if d.identical:
        lines.append("no differences")
        return lines
    changed_scores = [s for s in d.scores if s.changed]
    if changed_scores:
        lines.append("passed: " + ", ".join(f"{s.name} {s.a} → {s.b}" for s in changed_scores))
    lines.append(
        "per configuration (trial 1 passed; passes over every trial; regressions pass → fail, "
        "improvements fail → pass):"
    )
    for s in d.scores:
        lines.append(f"  {score_line(s)}")
        if s.paired is not None:
            lines.append(f"    B − A pass rate: {s.paired.text()}")
    if not d.changes and not d.only_a and not d.only_b:
        lines.append("no differences in trial 1")
    flips = d.flips
    lines.append(
        f"{len(flips)} flip{'' if len(flips) == 1 else 's'}, "
        f"{len(d.changes)} changed episode{'' if len(d.changes) == 1 else 's'}"
    )
    for c in d.changes:
        lines.extend(_change_lines(c))
    lines.extend(f"only in A: {k}" for k in d.only_a)
    lines.extend(f"only in B: {k}" for k in d.only_b)
    return lines


def rate_text(passes: int, total: int) -> str:
    """``"19/20 (95%)"``; ``"–"`` when no trial ran."""
    return f"{passes}/{total} ({100 * passes / total:.0f}%)" if total else "–"


def score_line(s: Score) -> str:
    """One configuration in a line: ``loop+atomic: trial 1 4/4 → 3/4; over trials 20/20 (100%,
    5 trials) → 3/4 (75%, 1 trial); 1 regression, 0 improvements``."""
    (pa, na), (pb, nb) = s.over_trials
    over_a = rate_text(pa, na) if not na else f"{rate_text(pa, na)[:-1]}, {_trials(s.trials[0])})"
    over_b = rate_text(pb, nb) if not nb else f"{rate_text(pb, nb)[:-1]}, {_trials(s.trials[1])})"
    return (
        f"{s.name}: trial 1 {s.a} → {s.b}; over trials {over_a} → {over_b}; "
        f"{s.regressions} regression{'' if s.regressions == 1 else 's'}, "
        f"{s.improvements} improvement{'' if s.improvements == 1 else 's'}"
    )


def _change_lines(c: EpisodeChange) -> list[str]:
    if c.flipped:
        head = f"FLIP {c.key}: {_word(c.passed[0])} → {_word(c.passed[1])}"
    else:
        head = f"     {c.key}: still {_word(c.passed[1])}"
    lines = [head]
    if c.gained:
        lines.append(f"    failure modes gained: {', '.join(c.gained)}")
    if c.lost:
        lines.append(f"    failure modes lost: {', '.join(c.lost)}")
    if c.rounds[0] != c.rounds[1]:
        lines.append(f"    rounds: {_delta(c.rounds)}")
    if c.tool_calls[0] != c.tool_calls[1]:
        lines.append(f"    tool calls: {_delta(c.tool_calls)}")
    if c.stop_reason[0] != c.stop_reason[1]:
        lines.append(f"    stop reason: {c.stop_reason[0]} → {c.stop_reason[1]}")
    if c.first_difference:
        fd = c.first_difference
        lines.append(f"    first differing message #{fd.index}:")
        lines.append(f"      A {fd.a}")
        lines.append(f"      B {fd.b}")
    return lines


def _word(passed: bool) -> str:
    return "pass" if passed else "fail"


#: The comparison as lines of plain text (what ``toolreplay diff`` prints): :func:`diff_lines`.
format_diff = diff_lines
