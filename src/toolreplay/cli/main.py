"""Entry point: the application with every command registered, in the order ``--help`` lists
them. Each command's module imports what the command needs when it runs, so ``--help`` and
``--version`` load none of it.

typer builds the application from the command functions' signatures at every start, whatever
the command: their annotations must be cheap to get. The command modules therefore do without
``from __future__ import annotations`` (typer would compile and evaluate every annotation
string, twice per command: about 10 ms of ``--help``'s 0.2 s), and annotate with names
imported only for type checking in quotes."""

from __future__ import annotations

from toolreplay.cli import (  # noqa: F401 (registration)
    audit,
    convert,
    diff,
    merge,
    record,
    report,
    run,
)
from toolreplay.cli.app import app

__all__ = ["app", "main"]

#: The order ``--help`` lists the commands in (each module registers one).
ORDER = ("run", "merge", "report", "diff", "audit", "record", "convert")
app.registered_commands.sort(key=lambda c: ORDER.index(c.callback.__module__.rsplit(".", 1)[1]))


def main() -> None:
    """``toolreplay``: run the application (exit codes 0 success, 1 a failed check, 2 bad
    input or a replay error)."""
    app(prog_name="toolreplay")
