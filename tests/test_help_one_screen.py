"""Every command's ``--help`` fits one screen (at most 40 lines at 80 columns), still lists
every option and argument, cuts no line past the width, and points at the command's section
of docs/cli.md, which exists and names every option (the long descriptions live there)."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

from toolreplay.cli.main import ORDER, app

from .conftest import REPO

runner = CliRunner()

#: One screen: a terminal of 40 lines shows the whole help without scrolling.
SCREEN_LINES = 40


def _help(args: list[str], columns: int) -> str:
    env = {"COLUMNS": str(columns), "TERMINAL_WIDTH": str(columns)}
    result = runner.invoke(app, [*args, "--help"], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def _options(command: str) -> list[str]:
    """Every option name (``--eval``, ``-j``) and argument of ``command`` as click sees it."""
    group = typer.main.get_command(app)
    cmd = group.commands[command]  # type: ignore[attr-defined]
    names: list[str] = []
    for param in cmd.params:
        if param.param_type_name == "argument":
            names.append(param.metavar or param.name.upper())
        else:
            names += [*param.opts, *param.secondary_opts]
    return names


@pytest.mark.parametrize("command", ["", *ORDER])
def test_help_fits_one_screen_at_80_columns(command: str) -> None:
    text = _help([command] if command else [], 80)
    lines = text.rstrip("\n").splitlines()
    assert len(lines) <= SCREEN_LINES, f"{command} --help: {len(lines)} lines\n{text}"
    assert max(len(line) for line in lines) <= 80
    assert "…" not in text


@pytest.mark.parametrize("command", ORDER)
def test_help_lists_every_option(command: str) -> None:
    text = _help([command], 80)
    flat = re.sub(r"[│╭╮╰╯─]", " ", text)
    names = _options(command)
    for name in names:
        if f"--no-{name[2:]}" in names or name.removeprefix("--no-") in {n[2:] for n in names}:
            name = "--[no-]" + name.removeprefix("--").removeprefix("no-")  # --x / --no-x
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", flat), (command, name)


@pytest.mark.parametrize("command", ORDER)
def test_help_points_at_the_commands_docs_section(command: str) -> None:
    text = _help([command], 80)
    assert f"docs/cli.md#{command}" in text
    docs = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    section = docs.split(f"{{#{command}}}", 1)[1].split("\n## ", 1)[0]
    for name in _options(command):
        if name != "--help" and name != "-h":
            assert f"`{name}" in section, (command, name)


@pytest.mark.parametrize("command", ORDER)
def test_help_reads_at_60_columns(command: str) -> None:
    """At 60 columns every option still shows on its own row, nothing cut; longer, not
    unreadable (at most one and a half screens)."""
    text = _help([command], 60)
    lines = text.rstrip("\n").splitlines()
    assert max(len(line) for line in lines) <= 60
    assert "…" not in text
    assert len(lines) <= SCREEN_LINES * 3 // 2, f"{command}: {len(lines)} lines"


def test_narrower_terminals_get_60_columns() -> None:
    """COLUMNS=20 would fold every word: the help is laid out at 60 columns instead."""
    text = _help(["record"], 20)
    assert max(len(line) for line in text.splitlines()) == 60
    assert "--model-source" in text


def test_top_help_lists_every_command_on_one_line_and_points_at_the_page() -> None:
    text = _help([], 80)
    for name in ORDER:
        line = next(line for line in text.splitlines() if f"│ {name} " in line)
        assert line.rstrip("│ ").endswith((".", "?")), line  # its summary fits on its line
    assert "docs/cli.md" in text and "--version" in text
