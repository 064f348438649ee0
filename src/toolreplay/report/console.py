"""The results on a terminal: the summary table (trial 1, the study's 2×2 as rows), the table
of consistency over trials with pass^1's and pass^n's 95% intervals under it, the
failure-mode rates over trials and the failed expectations (the first few, named), as
``rich`` renderables or lines read from the typed :class:`~toolreplay.results.format.Results`.

Each fits 80 columns without cutting a word; below 80 (``width``) only the essential columns
are kept (the page and results.json have the rest). Deterministic: a function of the results
and the width only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolreplay.report.summary import without_empty
from toolreplay.results.format import Results, as_results

if TYPE_CHECKING:  # rich is imported when a table is built, not when this module is
    from rich.table import Table

__all__ = [
    "expectation_lines", "interval_lines", "rates_lines", "summary_table", "trials_table",
]  # fmt: skip


def _read(results: Results | Mapping[str, Any]) -> tuple[Results, list[str]]:
    """The results without the configurations no episode was read for, and their names (a
    test module whose cassettes all failed to be read): named under the table, as the report
    does (:func:`toolreplay.report.summary.without_empty`), not a 0/0 row."""
    return without_empty(as_results(results))


def summary_table(results: Results | Mapping[str, Any], width: int = 80) -> Table:
    """One row per configuration: passed/total, average rounds and tool calls, stop reasons
    and failure modes (one per line, no vertical rules). ``width``: the terminal's columns;
    under 80 only configuration, passed and rounds are shown. A configuration no episode was
    read for has no row: the caption names it. Raises
    :class:`~toolreplay.results.format.ResultsError` when a mapping does not validate."""
    from rich import box
    from rich.table import Table

    doc, empty = _read(results)
    prov = doc.provenance
    table = Table(
        title=f"cassette set: {doc.cassette_set} ({prov.provenance}, model {prov.model})",
        caption=f"no row for {', '.join(empty)}: no episode was read from "
        f"{'its' if len(empty) == 1 else 'their'} cassettes"
        if empty
        else None,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    left = ("configuration", "stop reasons", "failure modes")
    cols = ("configuration", "passed", "avg\nrounds", "avg\ntool\ncalls", *left[1:])
    narrow = width < 80
    keep = 3 if narrow else len(cols)
    for col in cols[:keep]:
        table.add_column(
            col,
            justify="left" if col in left else "right",
            no_wrap=not (narrow and col == "configuration"),
            overflow="fold",
        )
    for c in doc.configurations:
        reasons = "\n".join(f"{k} {v}" for k, v in (c.stop_reasons or {}).items())
        modes = "\n".join(f"{k} {v}" for k, v in (c.failure_modes or {}).items()) or "-"
        row = (
            c.name,
            f"{c.passed}/{c.total}",
            f"{c.avg_rounds:.2f}",
            f"{c.avg_tool_calls:.2f}",
            reasons,
            modes,
        )
        table.add_row(*row[:keep])
    return table


def trials_table(results: Results | Mapping[str, Any], width: int = 80) -> Table:
    """Per configuration over every trial: pass^k for k = 1..n in one column, pass@n, rounds
    and tool calls (mean±sd); under 80 columns (``width``) configuration and pass@n only.
    pass^k's intervals (:func:`interval_lines`) and the failure-mode rates
    (:func:`rates_lines`) follow it."""
    from rich import box
    from rich.table import Table

    doc = _read(results)[0]
    n = 1 if doc.trials is None else doc.trials
    uneven = any((n if c.trials is None else c.trials) < n for c in doc.configurations)
    title = f"consistency over {n} trial(s) per configuration × question"
    if uneven:  # a question asked by fewer tests has no pass^k beyond its trials
        title = f"consistency over up to {n} trial(s) per configuration × question"
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    narrow = width < 80
    table.add_column("configuration", no_wrap=not narrow, overflow="fold")
    if not narrow:
        table.add_column(f"pass^k, k=1..{n}", no_wrap=True)
    table.add_column(f"pass@{n}", justify="right", no_wrap=True)
    if not narrow:
        table.add_column("rounds", justify="right", no_wrap=True)
        table.add_column("tool calls", justify="right", no_wrap=True)
    for c in doc.configurations:
        hat, at = c.pass_hat_k or {}, c.pass_at_k or {}
        r, t = c.rounds_over_trials, c.tool_calls_over_trials
        row = (
            c.name,
            " ".join(f"{hat[str(k)]:.2f}" if str(k) in hat else "-" for k in range(1, n + 1)),
            f"{at[str(n)]:.2f}" if str(n) in at else "-",
            "0.00±0.00" if r is None else f"{r.mean:.2f}±{r.sd:.2f}",
            "0.00±0.00" if t is None else f"{t.mean:.2f}±{t.sd:.2f}",
        )
        table.add_row(*((row[0], row[2]) if narrow else row))
    return table


#: An interval method of ``pass_hat_k_interval`` in words.
_METHOD_WORDS = {"wilson": "Wilson", "bootstrap": "bootstrap"}


def interval_lines(results: Results | Mapping[str, Any]) -> list[str]:
    """pass^k's 95% intervals under the consistency table: ``["95% intervals of pass^k
    (Wilson over the questions):", "  single+oneshot: pass^1 0.95 [0.46, 1.00], pass^5 0.75
    [0.30, 0.95]", ...]``, pass^1 and pass^n (n: the configuration's trials; pass^1 alone for
    one trial) with their ``pass_hat_k_interval``, the method said once when every
    configuration has the same, else at the end of each line; ``[]`` when no configuration has
    an interval (results of an older run)."""
    rows: list[tuple[str, list[tuple[str, float, Any]]]] = []
    for c in _read(results)[0].configurations:
        hat, spans = c.pass_hat_k or {}, c.pass_hat_k_interval or {}
        ks = sorted((k for k in hat if k in spans), key=int)
        if ks:  # 1 and n, once when n is 1
            rows.append((c.name, [(k, hat[k], spans[k]) for k in dict.fromkeys((ks[0], ks[-1]))]))
    if not rows:
        return []
    spans_shown = [span for _, cells in rows for _, _, span in cells]
    methods = {_METHOD_WORDS.get(span.method, span.method) for span in spans_shown}
    levels = {span.level for span in spans_shown}
    level = f"{round(100 * next(iter(levels)))}%" if len(levels) == 1 else "confidence"
    head = f"{level} intervals of pass^k"
    lines = [f"{head} ({next(iter(methods))} over the questions):" if len(methods) == 1
             else f"{head}:"]  # fmt: skip
    for name, cells in rows:
        text = ", ".join(
            f"pass^{k} {v:.2f} [{span.low:.2f}, {span.high:.2f}]" for k, v, span in cells
        )
        if len(methods) > 1:
            own = dict.fromkeys(_METHOD_WORDS.get(span.method, span.method) for *_, span in cells)
            text += f" ({', '.join(own)})"
        lines.append(f"  {name}: {text}")
    return lines


def rates_lines(results: Results | Mapping[str, Any]) -> list[str]:
    """``["failure-mode rates over trials:", "  <configuration>: <mode> 65%, ..."]``, one line
    per configuration with failure modes over the trials; ``[]`` when none has any."""
    lines = []
    for c in as_results(results).configurations:
        if c.failure_mode_rates:
            shown = ", ".join(f"{m} {v:.0%}" for m, v in c.failure_mode_rates.items())
            lines.append(f"  {c.name}: {shown}")
    return ["failure-mode rates over trials:", *lines] if lines else []


#: Failed expectations listed on the terminal at most (the rest are counted).
EXPECTATIONS_SHOWN = 10

#: An explanation longer than this is cut on the terminal (results.json has it whole).
_EXPLANATION_CHARS = 160


def expectation_lines(
    results: Results | Mapping[str, Any], limit: int = EXPECTATIONS_SHOWN
) -> list[str]:
    """The expectations of the eval file (``expect:``) that episodes failed, named, at most
    ``limit`` of them: ``["failed expectations (3):", "  test_agent / stock-and-price:
    max_rounds: expected at most 2 rounds — 3 rounds, more than 2; round 3 is over the
    limit", ..., "  and 5 more (every one in results.json and the report)"]``, in the order of
    the configurations, then of the questions, then of the trials (``trial N`` said when the
    run has more than one); ``[]`` when none failed (the reference run's output is unchanged).
    """
    doc = as_results(results)
    many = (doc.trials or 1) > 1
    episodes = [*doc.episodes, *(doc.trial_episodes or [])]
    configs = {c.name: i for i, c in enumerate(doc.configurations)}
    questions: dict[str, int] = {}
    for e in episodes:
        questions.setdefault(e.question_id, len(questions))
    failed = sorted(  # an episode's expectations stay in the eval file's order
        (
            (configs.get(e.configuration, len(configs)), questions[e.question_id], e.trial or 1,
             i, e, x)
            for e in episodes
            for i, x in enumerate(e.expectations or ())
            if not x.passed
        ),
        key=lambda f: f[:4],
    )  # fmt: skip
    if not failed:
        return []
    lines = [f"failed expectations ({len(failed)}):"]
    for *_, e, x in failed[:limit]:
        where = f"{e.configuration} / {e.question_id}" + (f" trial {e.trial or 1}" if many else "")
        why = " ".join(x.explanation.split())
        if len(why) > _EXPLANATION_CHARS:
            why = why[: _EXPLANATION_CHARS - 1] + "…"
        lines.append(f"  {where}: {x.kind}: expected {x.expected} — {why}")
    if len(failed) > limit:
        lines.append(f"  and {len(failed) - limit} more (every one in results.json and the report)")
    return lines
