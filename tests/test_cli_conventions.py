"""CLI conventions: --version and -h, exit status 0/1/2 (2 for usage errors only), help
paragraphs that never break mid-sentence, a summary table that reads at 80 columns, and
``python -m toolreplay``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import version

import pytest
from rich.console import Console
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.report.console import summary_table

from .conftest import REPO

runner = CliRunner()


def test_version_and_short_help() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"toolreplay {version('toolreplay')}"
    for args in (["-h"], ["run", "-h"], ["record", "-h"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "Usage:" in result.output, args


@pytest.mark.parametrize(
    "args",
    [
        ["nope"],
        ["run", "--nope"],
        ["record", "--set", "x"],  # --model-source missing
        ["record", "--model-source", "both"],
        ["run", "--set", "../up"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    assert runner.invoke(app, args).exit_code == 2


def test_report_into_a_folder_is_a_usage_error(tmp_path) -> None:
    result = runner.invoke(app, ["report", "--out", str(tmp_path)], terminal_width=200)
    assert result.exit_code == 2
    assert "is a folder" in " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())


def test_operational_failures_exit_1(tmp_path) -> None:
    missing = runner.invoke(app, ["run", "--cassettes", str(tmp_path), "--out", str(tmp_path)])
    assert missing.exit_code == 1, missing.output
    bad = tmp_path / "results.json"
    bad.write_text("{}", encoding="utf-8")
    result = runner.invoke(app, ["report", "--results", str(bad), "--out", str(tmp_path / "x")])
    assert result.exit_code == 2  # a results file it cannot trust is bad input, as for diff


def test_command_list_is_one_line_per_command() -> None:
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "80"}, terminal_width=80)
    commands = result.output.split("Commands")[1]
    for name in ("run", "report", "audit", "record"):
        line = next(line for line in commands.splitlines() if f"│ {name} " in line)
        assert line.rstrip("│ ").endswith("."), line  # the summary fits on its own line


def test_table_reads_at_80_columns() -> None:
    results = json.loads((REPO / "reports" / "results.json").read_text(encoding="utf-8"))
    console = Console(width=80, record=True, color_system=None)
    console.print(summary_table(results))
    text = console.export_text()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    for word in ("single+oneshot", "loop+atomic", "converged 4", "max_rounds 4",
                 "unfulfilled_promise 2", "empty_answer 2", "3.25"):  # fmt: skip
        assert word in text


@pytest.mark.slow
def test_python_dash_m() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "toolreplay", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.startswith("toolreplay ")


@pytest.mark.parametrize("command", ["run", "report", "audit", "record"])
def test_help_cuts_no_word_at_80_columns(command: str) -> None:
    result = runner.invoke(app, [command, "-h"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"})
    assert result.exit_code == 0
    assert "…" not in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80


def test_printed_text_with_brackets_is_shown_as_it_is(capsys) -> None:
    """What the commands print (a check's explanation, a test id ``test_x[a-b]``, a path,
    ``[redacted]``) is never read as rich markup: nothing in brackets vanishes; only the
    marks the CLI styles on purpose are styled."""
    from toolreplay.audit.tables import Audit, Check
    from toolreplay.cli import audit as audit_cli
    from toolreplay.cli.common import fail, out, print_note

    checks = (
        Check("arm_parity", False, "declare them with `arms: [module, ...]` in the eval file"),
        Check("completeness", True, "test_x[List three fruits-output_types3-list] replayed"),
        Check.not_applicable("near_miss", "no [baseline] here; [redacted] stays"),
    )
    audit_cli._print_audit(Audit(checks, {}, ()))
    audit_cli._print_audit_summary(Audit(checks, {}, ()))
    out.print("wrote reports/[run-1]/results.json")
    fail("cannot read cassettes/[bold]/x.yaml")
    print_note("see [link=x]here[/link]")
    got = capsys.readouterr()
    for text in (
        "`arms: [module, ...]` in the eval file",
        "test_x[List three fruits-output_types3-list] replayed",
        "no [baseline] here; [redacted] stays",
        "wrote reports/[run-1]/results.json",
        "FAIL arm_parity:",
        "N/A  near_miss:",
        "fidelity: 1 of 2 checks failed: arm_parity; not applicable: near_miss",
    ):
        assert text in got.out, text
    assert "error: cannot read cassettes/[bold]/x.yaml" in got.err
    assert "note: see [link=x]here[/link]" in got.err


_ONE = ["--configurations", "single+oneshot", "--questions", "beijing", "--workers", "1"]
_SET = ["--eval", str(REPO / "evals" / "weather.yaml"), "--cassettes", str(REPO / "cassettes")]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["run", *_SET, *_ONE, "--out", "-"], "--out"),
        (["merge", "shard-1-of-2.json", "--out", "-"], "--out"),
        (["convert", "CASSETTE", "--out", "-"], "--out"),
        (["mutate", *_SET, *_ONE, "--json", "-"], "--json"),
        (["record", "--model-source", "stand-in", "--set", "s", "--cassettes", "-"], "--cassettes"),
    ],
    ids=["run", "merge", "convert", "mutate", "record"],
)
def test_dash_is_never_a_folder_or_file_written(tmp_path, monkeypatch, args, option) -> None:
    """``-`` names standard output; where a command writes a folder (or, for mutate's
    --json, a file beside the tables printed on standard output) it is a usage error, the same
    check for every command (cli.common.not_stdout), and nothing called ``-`` is made (it used
    to be: ``run --out -`` wrote ``-/results.json``). report --out - writes its page there."""
    cassette = REPO / "cassettes" / "reference" / "single+oneshot" / "beijing" / "trial-1.yaml"
    (tmp_path / "c.yaml").write_bytes(cassette.read_bytes())
    monkeypatch.chdir(tmp_path)
    args = [str(tmp_path / "c.yaml") if a == "CASSETTE" else a for a in args]
    before = sorted(p.name for p in tmp_path.iterdir())
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert f"'{option}': - (standard output) cannot take" in text
    assert "nothing was written" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "c.yaml").read_bytes() == cassette.read_bytes()
