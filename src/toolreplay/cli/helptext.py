"""A command's ``--help`` on one screen: usage, the docstring's paragraphs, then one row per
option (its names and value on the left, one line of help with its default on the right, in
the panel its ``rich_help_panel`` names) and a last line pointing at the command's section of
docs/cli.md, where each option is described in full.

typer's own layout gives an option's help about a third of 80 columns (empty columns for
secondary names and a type column take the rest), so a one-line help folds into three or four;
here the names column is as wide as its longest entry and the help takes every column left.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.text import Text

#: The narrowest a help screen is laid out (``COLUMNS=20`` would fold every word).
MIN_WIDTH = 60

#: Where each command's options are described in full (its section: ``#COMMAND``).
DOCS_PAGE = "docs/cli.md"


class HelpCommand(TyperCommand):
    """A typer command whose ``--help`` is the compact layout of this module (plain click
    help when the application asks for no rich markup)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if self.rich_markup_mode is None:  # pragma: no cover (the application sets one)
            super().format_help(ctx, formatter)
            return
        print_help(self, ctx, console())


class HelpGroup(TyperGroup):
    """The application's group: ``toolreplay --help`` in the same layout, one line a
    command (the first paragraph of its docstring)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if self.rich_markup_mode is None:  # pragma: no cover (the application sets one)
            super().format_help(ctx, formatter)
            return
        print_help(self, ctx, console())


def console() -> Console:
    """The console help is printed on: standard output, ``$TERMINAL_WIDTH`` or ``$COLUMNS``
    or the terminal's width (80 when piped), never fewer than :data:`MIN_WIDTH` columns."""
    from rich.console import Console

    width = None
    try:
        width = int(os.environ.get("TERMINAL_WIDTH") or 0) or None
    except ValueError:
        pass
    con = Console(width=width, highlight=False)
    if con.width < MIN_WIDTH:
        con = Console(width=MIN_WIDTH, highlight=False)
    return con


def print_help(command: Any, ctx: Any, con: Console) -> None:
    """Print ``command``'s help for ``ctx`` on ``con`` (``command``: a click command as typer
    builds it; options and arguments described by their click help records)."""
    from rich.markdown import Markdown
    from rich.padding import Padding

    con.print(Padding(_usage(command, ctx), (1, 1, 1, 1)))
    text = (command.help or "").split("\f")[0].strip()
    if text:
        con.print(Padding(Markdown(text), (0, 1, 1, 1)))
    panels: dict[str, list[Any]] = {}
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        default = "Arguments" if param.param_type_name == "argument" else "Options"
        panels.setdefault(getattr(param, "rich_help_panel", None) or default, []).append(param)
    order = sorted(panels, key=lambda name: (name != "Arguments", name != "Options"))
    for name in order:
        con.print(_panel(name, panels[name], ctx, con.width))
    if hasattr(command, "list_commands"):  # the application: its commands, then the page
        con.print(_commands(command, ctx))
        con.print(f" Every command and option in full: {DOCS_PAGE}", highlight=False)
        return
    con.print(f" Every option in full: {DOCS_PAGE}#{command.name}", highlight=False)


def _commands(group: Any, ctx: Any) -> RenderableType:
    """The Commands panel: each command's name and the first paragraph of its help."""
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    table = Table.grid(padding=(0, 2), expand=True)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(ratio=1)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        summary = (command.short_help or command.help or "").split("\n\n", 1)[0]
        table.add_row(name, Text(" ".join(summary.replace("`", "").split())))
    return Panel(table, title="Commands", title_align="left", border_style="dim")


def _usage(command: Any, ctx: Any) -> Text:
    from rich.text import Text

    pieces = command.collect_usage_pieces(ctx)
    line = Text("Usage: ", style="bold")
    line.append(ctx.command_path, style="bold")
    line.append(" " + " ".join(pieces), style="yellow")
    return line


def _panel(name: str, params: list[Any], ctx: Any, width: int) -> RenderableType:
    from rich.panel import Panel
    from rich.table import Table

    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(max_width=width * 2 // 5)  # a long value folds onto a second line
    table.add_column(ratio=1)
    for param in params:
        record = param.get_help_record(ctx)
        if record is not None:
            names, help_text = record
            table.add_row(*_row(names, help_text, param.param_type_name == "argument"))
    return Panel(table, title=name, title_align="left", border_style="dim")


#: A number range typer notes after an option's help (``x>=1``, ``0<=x<=100``): the help
#: itself says what a value may be.
_RANGE = re.compile(
    r"\s*\[[0-9.]*(<=?)?x(>=?|<=?)[0-9.]+\]"  # a note of its own: [x>=1]
    r"|;\s*[0-9.]*(<=?)?x(>=?|<=?)[0-9.]+(?=\])"  # after the default: [default: 40; x>=0]
)


def _row(names: str, help_text: str, argument: bool = False) -> tuple[Text, Text]:
    """One option's row from its click help record (``"-j, --workers <int>"``, ``"Processes
    ... [default: 0]"``): names and value on the left (an argument: its name; ``--x / --no-x``
    as ``--[no-]x``), the help with its bracketed notes (default, required) dimmed on the
    right."""
    from rich.text import Text

    names = re.sub(r"--([\w-]+) / --no-\1\b", r"--[no-]\1", names)
    words = names.split()[:1] if argument else names.split()
    split = len(words)
    while split and not (words[split - 1].startswith("-") or argument):
        split -= 1
    left = Text(" ".join(words[:split]), style="bold cyan")
    if value := " ".join(words[split:]).replace(" range>", ">"):
        left.append(" " + value, style="yellow")
    help_text = " ".join(help_text.replace("\\[", "[").replace("`", "").split())
    main, bracket, notes = _RANGE.sub("", help_text).partition(" [")
    right = Text(main.removesuffix(".") if bracket else main)
    if bracket:
        right.append(bracket + notes, style="dim")
    return left, right
