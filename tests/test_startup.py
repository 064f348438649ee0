"""Each command imports only what it needs: ``--help`` and ``--version`` load neither the runs,
the audit, the hosts, the openai SDK nor pydantic; ``report`` and ``diff`` on results files load
neither the audit, the hosts, the models nor the openai SDK.

Checked in fresh interpreters (``sys.modules`` of this test process holds everything). How
long start-up takes is measured by benchmarks/bench_scale.py, not asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolreplay

from .conftest import REPO

RESULTS = REPO / "reports" / "results.json"

#: The interpreter runs the sources this test process imports (the same checkout).
SOURCES = Path(toolreplay.__file__).resolve().parents[1]

#: Run ``toolreplay ARGS`` (a JSON list; none: only import the application) in this
#: interpreter, then write its exit code and ``sys.modules`` as JSON to the file named next.
PROBE = """
import json, sys
args, dump = json.loads(sys.argv[1]), sys.argv[2]
from toolreplay.cli.main import main
code = None
if args is not None:
    sys.argv = ["toolreplay", *args]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code
with open(dump, "w", encoding="utf-8") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""

#: Never loaded by `--help`, `--version` or importing the application.
NOT_AT_START = (
    "openai",
    "httpx",
    "requests",
    "vcr",
    "pydantic",
    "jsonschema",
    "yaml",
    "jinja2",
    "toolreplay.audit",
    "toolreplay.hosts",
    "toolreplay.runs",
    "toolreplay.models",
    "toolreplay.cassettes",
    "toolreplay.evals",
    "toolreplay.results",
    "toolreplay.report",
)

#: Never loaded by `report` and `diff` given results files (a cassette set is replayed, so
#: only then are the runs needed).
NOT_FOR_RESULTS = (
    "openai",
    "httpx",
    "vcr",
    "toolreplay.audit",
    "toolreplay.hosts",
    "toolreplay.models",
    "toolreplay.runs",
    "toolreplay.cassettes",
)


def probe(tmp_path: Path, args: list[str] | None) -> tuple[int | None, set[str]]:
    """``(exit code, modules loaded)`` of ``toolreplay ARGS`` in a fresh interpreter, run
    from the repository root."""
    dump = tmp_path / "modules.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SOURCES), env.get("PYTHONPATH", "")) if p)
    env.setdefault("COLUMNS", "120")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), str(dump)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert dump.exists(), done.stderr
    data = json.loads(dump.read_text(encoding="utf-8"))
    return data["code"], set(data["modules"])


def loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    """Those of ``packages`` that ``modules`` holds (the package itself or any submodule)."""
    return [p for p in packages if any(m == p or m.startswith(p + ".") for m in modules)]


@pytest.mark.slow
def test_the_probe_sees_the_modules_a_command_loads(tmp_path: Path) -> None:
    """The checks below would pass vacuously if the probe saw nothing: it sees the command
    modules importing the application loads."""
    code, modules = probe(tmp_path, None)
    assert code is None
    assert {"toolreplay.cli.main", "toolreplay.cli.run", "toolreplay.cli.record"} <= modules


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [None, ["--help"], ["-h"], ["--version"], []],
    ids=["import", "--help", "-h", "--version", "no-arguments"],
)
def test_help_and_version_load_only_the_command_line(
    tmp_path: Path, args: list[str] | None
) -> None:
    code, modules = probe(tmp_path, args)
    assert code in (None, 0, 2)  # no arguments: the help, exit 2 (no_args_is_help)
    assert loaded(modules, NOT_AT_START) == []


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "merge", "report", "diff", "audit", "record"])
def test_a_commands_help_loads_none_of_its_work(tmp_path: Path, command: str) -> None:
    """A command's --help loads none of what its body uses (typer itself may load pydantic to
    coerce option values, so pydantic is not checked here)."""
    code, modules = probe(tmp_path, [command, "--help"])
    assert code == 0
    assert loaded(modules, tuple(p for p in NOT_AT_START if p != "pydantic")) == []


@pytest.mark.slow
def test_report_on_a_results_file_loads_neither_audit_nor_sdk(tmp_path: Path) -> None:
    page = tmp_path / "out" / "index.html"
    code, modules = probe(tmp_path, ["report", "--results", str(RESULTS), "--out", str(page)])
    assert code == 0 and page.is_file()
    assert "toolreplay.report.render" in modules
    assert loaded(modules, NOT_FOR_RESULTS) == []


@pytest.mark.slow
def test_report_compared_with_a_results_file_loads_neither_audit_nor_sdk(
    tmp_path: Path,
) -> None:
    page = tmp_path / "out" / "index.html"
    args = ["report", "--results", str(RESULTS), "--out", str(page), "--compare", str(RESULTS)]
    code, modules = probe(tmp_path, args)
    assert code == 0 and page.is_file()
    assert loaded(modules, NOT_FOR_RESULTS) == []


@pytest.mark.slow
def test_diff_of_results_files_loads_neither_audit_nor_sdk(tmp_path: Path) -> None:
    code, modules = probe(tmp_path, ["diff", str(RESULTS), str(RESULTS)])
    assert code == 0
    assert "toolreplay.diff" in modules
    assert loaded(modules, NOT_FOR_RESULTS) == []


def test_option_defaults_have_one_source() -> None:
    """The option defaults come from light modules of plain constants (so that declaring the
    options imports nothing heavy) that the library reads too: one source each."""
    from toolreplay import defaults
    from toolreplay.runs import configuration

    assert configuration.DEFAULT_EVAL is defaults.DEFAULT_EVAL
    assert configuration.DEFAULT_CASSETTES is defaults.DEFAULT_CASSETTES
