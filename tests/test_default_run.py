"""The README's test command and CI (issue 34, a newcomer's test run): ``pytest`` with no
paths runs the fast tests (``addopts`` leaves out ``@pytest.mark.slow``) on every core
(``tests/conftest.py`` turns on pytest-xdist when it is installed and nothing asks for one
process); ``pytest -m ""`` runs every test, and ``.ci/run`` runs every test in every venv (in the
project's own, the README's command and then the slow tests)."""

from __future__ import annotations

import re
import shlex

import pytest

from .conftest import REPO, default_workers

README = REPO / "README.md"
CI_RUN = REPO / ".ci" / "run"


@pytest.fixture
def in_the_repository(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester moves to a folder of its own; configurations here are parsed from the root,
    so ``pyproject.toml`` (its addopts and testpaths) applies as it does to a user's run."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "2")


def _config(pytester: pytest.Pytester, *args: str) -> pytest.Config:
    return pytester.parseconfig(*args)


@pytest.mark.usefixtures("in_the_repository")
def test_the_default_run_leaves_out_slow_tests_and_an_empty_marker_runs_all(
    pytester: pytest.Pytester,
) -> None:
    assert _config(pytester).option.markexpr == "not slow"
    assert _config(pytester, "-m", "").option.markexpr == ""
    assert _config(pytester, "-m", "slow").option.markexpr == "slow"


@pytest.mark.usefixtures("in_the_repository")
def test_the_whole_suite_runs_on_every_core_unless_asked_otherwise(
    pytester: pytest.Pytester,
) -> None:
    assert default_workers(_config(pytester)) == 2
    assert default_workers(_config(pytester, "-m", "", "-k", "layout")) == 2
    one_process = [
        ("-n", "0"), ("-n", "1"), ("-p", "no:xdist"), ("--dist", "loadfile"), ("--pdb",),
        ("-s",), ("--sw",), ("--trace",), ("--snapshot-update",), ("--record-mode=rewrite",),
        ("--co",),
        (str(REPO / "tests" / "test_layout.py"),), ("tests/test_layout.py::test_x",),
    ]  # fmt: skip
    for args in one_process:
        assert default_workers(_config(pytester, *args)) == 0, args


@pytest.mark.usefixtures("in_the_repository")
def test_the_hook_sets_what_dash_n_would(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from . import conftest

    config = _config(pytester)
    conftest.pytest_cmdline_main(config)
    assert (config.option.numprocesses, config.option.dist) == (2, "loadfile")
    assert config.option.tx == ["popen", "popen"]
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "1")
    alone = _config(pytester)
    conftest.pytest_cmdline_main(alone)
    assert (alone.option.numprocesses, alone.option.dist) == (None, "no")


def test_an_inner_pytest_run_inherits_neither_option(pytester: pytest.Pytester) -> None:
    """A pytester run of a suite with a slow test: both tests run, in this process."""
    pytester.makepyfile(
        "import pytest\n"
        "@pytest.mark.slow\n"
        "def test_slow(request):\n"
        "    assert request.config.option.markexpr == ''\n"
        "    assert not getattr(request.config.option, 'numprocesses', None)\n"
        "def test_fast(request):\n"
        "    assert not hasattr(request.config, 'workerinput')\n"
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def _readme_test_command() -> str:
    for line in README.read_text("utf-8").splitlines():
        if line.startswith("pip install -e '.[test]'"):
            return line.split("#")[0].strip()
    raise AssertionError("README: no `pip install -e '.[test]' && ...` line")


def test_the_readme_names_the_default_and_how_to_run_everything() -> None:
    assert _readme_test_command() == "pip install -e '.[test]' && pytest"
    text = " ".join(README.read_text("utf-8").split())
    assert '`pytest -m ""`' in text
    assert "not slow" in text and "CI" in text


def _pytest_runs(script: str) -> list[list[str]]:
    runs = []
    for line in script.splitlines():
        if not re.search(r"\bpytest\b", line):
            continue
        words = shlex.split(line, comments=True)
        if "pytest" in words:
            runs.append(words[words.index("pytest") :])
    return runs


def test_ci_runs_the_readme_command_and_every_test_in_each_venv() -> None:
    script = CI_RUN.read_text("utf-8")
    runs = _pytest_runs(script)
    assert ["pytest"] in runs, runs  # the README's command, as it is written there
    everything = [r for r in runs if "-m" in r and r[r.index("-m") + 1] == ""]
    interpreters = re.findall(r"^(\S*python) -m pytest .*-m ''", script, re.M)
    assert len(everything) == 2, runs  # lowest versions, newest versions
    assert sorted(interpreters) == [".venv-lowest/bin/python", ".venv-newest/bin/python"]
    # the project's venv: the README's command (the fast tests), then the slow ones
    slow = re.findall(r"^(\S*python) -m pytest .*-m slow\b", script, re.M)
    assert slow == ["python"], script
    assert script.index("\npytest") < script.index("python -m pytest -q -n 2 -m slow")
    assert not [r for r in runs if "-m" in r and r[r.index("-m") + 1] not in ("", "slow")]


def test_the_workflow_runs_the_readme_command_and_every_test() -> None:
    runs = _pytest_runs((REPO / ".github" / "workflows" / "test.yml").read_text("utf-8"))
    assert ["pytest"] in runs, runs
    assert runs.count(["pytest", "-q", "-m", ""]) == 2, runs  # the test job and the lowest job


def test_the_snapshot_tests_a_recording_updates_run_by_default() -> None:
    """`toolreplay record` reruns the study's snapshot tests by node id (`pytest
    --snapshot-update ...`, under this addopts): a slow mark would deselect them silently."""
    text = (REPO / "tests" / "test_snapshots.py").read_text("utf-8")
    assert "slow" not in text and "pytestmark" not in text


def test_every_declared_python_version_is_tested() -> None:
    """requires-python says >=3.11: CI tests 3.11 (every test) and runs the README's command on
    3.12 and 3.13 (.ci/run: each interpreter the machine has; the workflow: its matrix)."""
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    assert declared["requires-python"] == ">=3.11"
    workflow = (REPO / ".github" / "workflows" / "test.yml").read_text("utf-8")
    assert 'python-version: ["3.11", "3.12", "3.13"]' in workflow
    script = CI_RUN.read_text("utf-8")
    assert re.search(r"^for v in 3\.12 3\.13; do$", script, re.M), script
    assert '".venv-py$v/bin/python" -m pytest -q -p no:cacheprovider' in script
