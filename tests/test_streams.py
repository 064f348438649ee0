"""Closed and broken standard streams (issue 34): a command started with standard output
closed (``>&-``) runs with its output discarded, and one whose reader goes away
(``report --out - | head``) ends quietly; neither prints a traceback or an error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "reports" / "results.json"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


@pytest.mark.parametrize(
    "args",
    [["run", "--help"], ["diff", str(RESULTS), str(RESULTS)], ["--version"]],
    ids=["help", "diff", "version"],
)
def test_a_command_runs_with_standard_output_closed(args):
    command = " ".join([sys.executable, "-m", "toolreplay", *args])
    done = subprocess.run(
        ["sh", "-c", f"{command} >&-"], capture_output=True, text=True, env=ENV, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "error" not in done.stderr


@pytest.mark.parametrize(
    ("args", "statuses"),
    [
        (["report", "--results", str(RESULTS), "--out", "-"], {1}),  # far more than a pipe holds
        (["run", "--help"], {0, 1}),  # may fit the pipe's buffer: then it ends as usual
    ],
    ids=["report-to-stdout", "help"],
)
def test_a_reader_that_goes_away_ends_the_command_quietly(args, statuses):
    with subprocess.Popen(
        [sys.executable, "-m", "toolreplay", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**ENV, "COLUMNS": "80"},
        cwd=ROOT,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.read(5)  # what `head -c 5` reads
        process.stdout.close()
        error = process.stderr.read().decode()
        status = process.wait(timeout=60)
    assert error == ""
    assert status in statuses  # 1 when the pipe broke before the end, as click and rich exit


@pytest.mark.parametrize(
    "columns", ["20", *(pytest.param(c, marks=pytest.mark.slow) for c in ("1", "abc", ""))]
)  # a whole run each; the widths they lay out for are held one process each below
def test_a_narrow_or_odd_terminal_width_keeps_names_whole(columns, tmp_path):
    """`COLUMNS=20` used to fold configuration names two characters a line; an unreadable
    `COLUMNS` is ignored rather than failing at import."""
    done = subprocess.run(
        [sys.executable, "-m", "toolreplay", "run", "-j", "1", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, env={**ENV, "COLUMNS": columns}, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for name in ("single+oneshot", "loop+oneshot", "single+atomic", "loop+atomic"):
        assert name in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("columns", "width"), [("20", 60), ("1", 60), ("abc", 120), ("", 120), ("100", 100)]
)
def test_an_odd_terminal_width_is_laid_out_at_least_the_minimum(columns, width):
    """What the consoles are built with at import, in a process of its own (stdout and stderr
    piped): never under 60 columns; an unreadable `COLUMNS` is ignored (120 for a pipe)."""
    probe = "from toolreplay.cli import common; print(common.out.width, common.err.width)"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True,
        env={**ENV, "COLUMNS": columns}, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(width), str(width)]
