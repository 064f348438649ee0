"""A command ends when its work ends: run as the process's entry (``python -m toolreplay``,
the ``toolreplay`` script) it exits with its own exit code right after its output is flushed,
without the interpreter's teardown; called from other code it raises ``SystemExit``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolreplay

from .conftest import REPO

SOURCES = Path(toolreplay.__file__).resolve().parents[1]
RESULTS = REPO / "reports" / "results.json"


def _toolreplay(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m toolreplay ARGS`` with an at-exit hook that says when teardown runs."""
    hooks = tmp_path / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(
        "import atexit, sys\natexit.register(lambda: sys.stderr.write('TEARDOWN\\n'))\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hooks), str(SOURCES)])}
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


@pytest.mark.slow
def test_a_command_exits_with_its_code_and_its_output_whole_without_teardown(
    tmp_path: Path,
) -> None:
    page = tmp_path / "index.html"
    done = _toolreplay(tmp_path, "report", "--results", str(RESULTS), "--out", str(page))
    assert done.returncode == 0, done.stderr
    assert f"wrote {page}" in done.stdout.replace("\n", "")
    assert page.read_text(encoding="utf-8").rstrip().endswith("</html>")
    assert "TEARDOWN" not in done.stderr  # the interpreter's teardown was skipped


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["run", "--questions", "bogus"], 2),  # a usage error
        (["report", "--results", "no-such-results.json"], 1),  # a failure
    ],
)
def test_the_exit_code_is_the_command_s(tmp_path: Path, args: list[str], code: int) -> None:
    done = _toolreplay(tmp_path, *args, "--out", str(tmp_path / "out"))
    assert done.returncode == code, done.stderr
    assert done.stderr.strip() and "TEARDOWN" not in done.stderr


def test_called_from_other_code_main_raises_system_exit(tmp_path: Path) -> None:
    probe = (
        "import sys\nfrom toolreplay.cli.main import main\nsys.argv = ['toolreplay', '--version']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    print('caught', exc.code)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SOURCES)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "caught 0", done.stderr
