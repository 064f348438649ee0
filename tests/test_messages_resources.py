"""Messages that say what happened and what to do (issue 34): the machine out of file
descriptors or memory is named as such (not "an internal error"), and a shard given where
results are expected says to merge the shards first."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app, resource_message

from .conftest import EVAL_FILE, REPO

ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


@pytest.mark.parametrize(
    ("exc", "said"),
    [
        (OSError(errno.EMFILE, "Too many open files"), "too many open files"),
        (OSError(errno.ENFILE, "Too many open files in system"), "too many open files"),
        (MemoryError(), "out of memory"),
        (OSError(errno.ENOMEM, "Cannot allocate memory"), "out of memory"),
        (OSError(errno.ENOSPC, "No space left on device", "r.json"), "no space left"),
    ],
)
def test_resource_errors_are_named_with_what_to_do(exc, said):
    message = resource_message(exc)
    assert message is not None and said in message
    assert "ulimit" in message or "free" in message


def test_other_errors_are_not_resource_errors():
    assert resource_message(OSError(errno.EACCES, "Permission denied")) is None
    assert resource_message(ValueError("x")) is None


def test_a_run_with_too_few_file_descriptors_says_so(tmp_path):
    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))

    done = subprocess.run(
        [sys.executable, "-m", "toolreplay", "run", "--eval", str(EVAL_FILE), "--out",
         str(tmp_path / "out")],
        capture_output=True, text=True, env=ENV, cwd=REPO, preexec_fn=few_files, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "too many open files" in done.stderr and "ulimit -n" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["report", "diff"])
def test_a_shard_where_results_belong_says_merge_first(tmp_path, command):
    runner = CliRunner()
    made = runner.invoke(
        app, ["run", "--eval", str(EVAL_FILE), "--shard", "1/2", "--out", str(tmp_path)]
    )
    assert made.exit_code in (0, 1), made.output
    shard = tmp_path / "shard-1-of-2.json"
    args = (
        ["report", "--results", str(shard), "--out", str(tmp_path / "x.html")]
        if command == "report"
        else ["diff", str(shard), str(REPO / "reports" / "results.json")]
    )
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "a shard of a run" in text and "merge the shards first" in text
    assert "required property" not in text


def test_the_same_deep_file_is_bad_input_everywhere(tmp_path):
    """A results file nested beyond reason is input toolreplay cannot trust: exit 2 whether
    it is given as --results, as --compare or to diff (report --compare used to exit 1)."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000, encoding="utf-8")
    committed = str(REPO / "reports" / "results.json")
    runner = CliRunner()
    for args in (
        ["report", "--results", str(deep), "--out", str(tmp_path / "a.html")],
        ["report", "--results", committed, "--out", str(tmp_path / "b.html"), "--compare",
         str(deep)],
        ["diff", str(deep), committed],
        ["diff", committed, str(deep)],
    ):  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "nests deeper than" in result.output
    assert not list(tmp_path.glob("*.html"))
