"""The mutation score on a terminal: the rich tables ``toolreplay mutate`` and ``toolreplay
run --mutate`` print."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from toolreplay.mutation.run import MutationRun, percent, summary_rows


def print_run(result: MutationRun, out: Console, show: int = 40) -> None:
    """Print ``result`` on ``out``: the total, the score tables (per configuration, question,
    group, operator, check) and at most ``show`` surviving mutants (0: all), each with its
    episode and exact change."""

    total = result.total
    out.print(
        f"mutation score {percent(total.score)}: {total.killed} of {total.scored} mutants killed, "
        f"{total.equivalent} equivalent (not scored); {result.mutated} passing episodes "
        f"mutated, {result.skipped} failing ones skipped; seed {result.seed}"
        + (f", budget {result.budget} an episode" if result.budget else ""),
        highlight=False, markup=False,
    )  # fmt: skip
    titles = {
        "configuration": "configuration", "question_id": "question", "group": "group",
        "operator": "operator", "check": "caught by (check)",
    }  # fmt: skip
    for key, title in titles.items():
        table = Table(title=f"score per {title}", title_justify="left")
        table.add_column(title)
        for col in ("score", "killed", "survived", "equivalent"):
            table.add_column(col, justify="right")
        for name, s in summary_rows(result, key):
            table.add_row(name, percent(s.score), str(s.killed), str(s.survived),
                          str(s.equivalent) if key != "check" else "")  # fmt: skip
        out.print(table)
    survivors = result.survivors
    if not survivors:
        out.print("no surviving mutant")
        return
    table = Table(title=f"surviving mutants ({len(survivors)})", title_justify="left")
    for col in ("configuration", "question", "trial", "operator", "change"):
        table.add_column(col, overflow="fold")
    listed = survivors if show == 0 else survivors[:show]
    for o in listed:
        table.add_row(o.configuration, o.question_id, str(o.trial), o.operator, o.change)
    out.print(table)
    if len(listed) < len(survivors):
        out.print(f"… and {len(survivors) - len(listed)} more (--show 0 lists all)")


__all__ = ["print_run"]
