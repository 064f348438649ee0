"""The command-line application: options every command shares, --version.
"""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

from typing import Annotated

import typer

from toolreplay.cli.common import out
from toolreplay.cli.helptext import HelpGroup

app = typer.Typer(
    cls=HelpGroup,  # --help on one screen (toolreplay.cli.helptext)
    help="Record, replay and evaluate LLM tool-calling loops, offline and deterministically.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="markdown",  # paragraphs reflow; a docstring line break is not a break
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        out.print(f"toolreplay {version('toolreplay')}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool | None,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = None,
) -> None:
    """Record, replay and evaluate LLM tool-calling loops, offline and deterministically.

    Exit status: 0 success; 1 a failed check, a failed episode set or another failure that
    is not a usage error; 2 usage errors only."""
    from toolreplay.redaction import install_streams

    install_streams()  # every line printed is redacted and survives any output encoding
