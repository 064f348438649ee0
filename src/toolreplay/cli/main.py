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
    """``toolreplay``: run the application (exit codes 0 success, 1 a failed check or another
    failure, 2 a usage error, 130 interrupted). Whatever happens, what is printed passes the
    redaction step (:mod:`toolreplay.secrets`) and an unexpected error is one line, not a
    traceback (``TOOLREPLAY_TRACEBACK=1`` shows it)."""
    import os
    import sys

    from toolreplay.secrets import install_streams, redact_text

    install_streams()
    try:
        app(prog_name="toolreplay")
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("TOOLREPLAY_TRACEBACK"):
            raise
        text = " ".join(redact_text(str(exc)).split())[:500]
        sys.stderr.write(
            f"error: {type(exc).__name__}: {text} (an internal error; set TOOLREPLAY_TRACEBACK=1 "
            "to see where, and please report it)\n"
        )
        sys.exit(1)
