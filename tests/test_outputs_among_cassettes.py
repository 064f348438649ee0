"""Outputs never land among inputs (issue 34): results and reports are refused inside a
cassette set, a test suite's cassette folder, a folder holding either, or the folder a command
reads, before anything is written; the default output is named after the set or folder, never
after a relative path (`--cassettes ..`); TOOLREPLAY_ALLOW_OUT_IN_CASSETTES=1 is the explicit
override."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.outputs import (
    ALLOW_OUT_IN_CASSETTES,
    OutputPathError,
    cassette_folder_kind,
    check_outside_cassettes,
)

from .conftest import REPO

STOCK = REPO / "examples" / "stock_agent"


def _tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project: the reference set under cassettes/, a test suite's folder under suite/."""
    shutil.copytree(REPO / "cassettes" / "reference", tmp_path / "cassettes" / "reference")
    shutil.copytree(STOCK / "cassettes", tmp_path / "suite")
    shutil.copytree(REPO / "evals", tmp_path / "evals")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ALLOW_OUT_IN_CASSETTES, raising=False)
    return tmp_path


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_what_holds_cassettes_is_recognised(project: Path) -> None:
    assert cassette_folder_kind(project / "cassettes" / "reference") == "a cassette set"
    assert cassette_folder_kind(project / "suite" / "test_agent") == "a folder of cassettes"
    assert cassette_folder_kind(project / "evals") is None
    assert cassette_folder_kind(project) is None


@pytest.mark.parametrize(
    "out",
    ["cassettes/reference", "cassettes", "cassettes/reference/loop+atomic/new", "suite",
     "suite/test_agent", "suite/test_agent/reports"],
)  # fmt: skip
def test_run_refuses_an_output_among_cassettes_and_writes_nothing(project: Path, out) -> None:
    before = _tree(project)
    result = _run("run", "--out", out)
    assert result.exit_code == 2, result.output
    assert "not written among cassettes" in result.output
    assert ALLOW_OUT_IN_CASSETTES in result.output  # the override is named
    assert _tree(project) == before


def test_a_suite_folder_is_not_reported_into_itself(project: Path) -> None:
    before = _tree(project)
    result = _run("run", "--cassettes", "suite", "--out", "suite/reports")
    assert result.exit_code == 2, result.output
    assert _tree(project) == before


def test_the_default_output_is_named_after_the_folder_not_a_relative_path(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "work").mkdir()
    monkeypatch.chdir(project / "work")
    result = _run("run", "--cassettes", "../suite")
    assert result.exit_code == 0, result.output
    assert (project / "work" / "reports" / "suite" / "results.json").is_file()
    assert not (project / "reports").exists() and not (project / "work" / "results.json").exists()
    # from inside the folder read, `--cassettes ..`: its default output would be inside it
    inner = project / "suite" / "test_agent"
    monkeypatch.chdir(inner)
    before = _tree(project)
    result = _run("run", "--cassettes", "..")
    assert result.exit_code == 2, result.output
    assert "the cassette folder this command reads" in result.output
    assert _tree(project) == before


def test_the_override_is_explicit(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_OUT_IN_CASSETTES, "1")
    check_outside_cassettes(project / "cassettes")  # allowed: no error
    monkeypatch.setenv(ALLOW_OUT_IN_CASSETTES, "yes")  # only "1" allows
    with pytest.raises(OutputPathError):
        check_outside_cassettes(project / "cassettes")


def test_report_refuses_a_page_among_cassettes(project: Path) -> None:
    results = REPO / "reports" / "results.json"  # the reference set's run, as committed
    bad = _run("report", "--results", str(results), "--out", "suite/index.html")
    assert bad.exit_code == 2, bad.output
    assert "not written among cassettes" in bad.output
    assert not (project / "suite" / "index.html").exists()


def _cassettes_only(pytester: pytest.Pytester) -> Path:
    """The stock agent's cassettes and a test file that needs nothing: the report's folder
    is checked before any test module or conftest of the example is imported."""
    copy = pytester.path / "stock_agent"
    shutil.copytree(STOCK / "cassettes", copy / "cassettes")
    (copy / "test_nothing.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
    return copy


def test_the_plugin_refuses_a_report_among_cassettes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = _cassettes_only(pytester)
    before = _tree(copy)
    monkeypatch.chdir(copy)
    result = pytester.runpytest_subprocess(
        "--record-mode=none", "--toolreplay-report", "cassettes", "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--toolreplay-report cassettes: is a cassette set*not written among cassettes*"]
    )
    assert _tree(copy) == before


@pytest.mark.parametrize("target", ["/dev/null", "afile"])
def test_the_plugin_refuses_a_report_path_that_is_not_a_folder(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """`pytest -q --toolreplay-report /dev/null` used to fail invisibly with exit 0."""
    copy = _cassettes_only(pytester)
    monkeypatch.chdir(copy)
    (copy / "afile").write_text("mine", encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "-q", "--record-mode=none", "--toolreplay-report", target, "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--toolreplay-report {target}: is not a folder*"])
    assert (copy / "afile").read_text(encoding="utf-8") == "mine"
