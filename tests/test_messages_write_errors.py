"""An output that cannot be written says why in words and what to do
(``cli.common.cannot_write``): a part of the path that is not a folder is named, and so are
permission, a read-only file system, a full disk and a name too long, instead of the system's
bare "Not a directory" / ``[Errno 20]``. ``mutate --json`` and ``pytest --toolreplay-report``
say so before any work (issue 34)."""

from __future__ import annotations

import errno
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolreplay.cli.common import cannot_write
from toolreplay.cli.main import app

runner = CliRunner()


def _cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "400"})
    return result.exit_code, " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())


@pytest.fixture
def afile(tmp_path: Path) -> Path:
    """A regular file, where a folder would be needed."""
    path = tmp_path / "afile"
    path.write_text("mine", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (errno.EACCES, "permission denied; give --out a folder you may write"),
        (errno.EPERM, "permission denied"),
        (errno.EROFS, "the file system is read-only; give --out a folder on a writable one"),
        (errno.ENOSPC, "no space left on the device; free some space"),
        (errno.ENAMETOOLONG, "a name is too long for the file system; give --out a shorter"),
    ],
)
def test_cannot_write_says_what_happened_and_what_to_do(code: int, said: str) -> None:
    message = cannot_write(Path("reports/x"), OSError(code, "raw words"), "--out")
    assert message.startswith("cannot write reports/x: ") and said in message
    assert "raw words" not in message


def test_cannot_write_names_the_part_of_the_path_that_is_not_a_folder(afile: Path) -> None:
    message = cannot_write(afile / "x" / "y", OSError(errno.ENOTDIR, "Not a directory"), "--out")
    assert f"{afile} is not a folder; give --out a path inside a folder" in message


def test_other_errors_keep_the_systems_words() -> None:
    assert cannot_write(Path("x"), OSError(errno.EIO, "I/O error")) == "cannot write x: I/O error"


def test_run_out_under_a_file_names_it(afile: Path) -> None:
    code, said = _cli("run", "--out", str(afile / "x"), "-j", "1")
    assert code == 1
    assert f"cannot write {afile / 'x'}: {afile} is not a folder" in said
    assert afile.read_text(encoding="utf-8") == "mine"


def test_mutate_json_under_a_file_is_refused_before_the_work(afile: Path) -> None:
    code, said = _cli("mutate", "--json", str(afile / "m.json"), "-j", "1")
    assert code == 1
    assert f"{afile} is not a folder; give --json a path inside a folder" in said
    assert "killed" not in said  # refused before any mutant was judged


def test_pytest_report_under_a_file_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    (pytester.path / "afile").write_text("mine", encoding="utf-8")
    (pytester.path / "test_nothing.py").write_text("def test_nothing():\n    pass\n", "utf-8")
    monkeypatch.chdir(pytester.path)
    result = pytester.runpytest_subprocess(
        "-q", "--toolreplay-report", "afile/x", "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolreplay-report afile/x: afile is not a folder*"])


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("EACCES", "permission denied; give a path you may use"),
        ("EROFS", "the file system is read-only; write somewhere writable"),
        ("ENOTDIR", "a part of the path is not a folder"),
        ("ENOENT", "no such file or folder"),
        ("EIO", "an input/output error of the device"),
    ],
)
def test_file_system_errors_no_command_caught_are_named_not_internal(name: str, said: str) -> None:
    from toolreplay.cli.main import file_message

    message = file_message(OSError(getattr(errno, name), "raw", "/some/file"))
    assert message is not None and message.startswith("/some/file: ") and said in message
    assert file_message(OSError(errno.EACCES, "no file named")) is None
    assert file_message(ValueError("x")) is None


def test_an_uncaught_permission_error_is_not_called_internal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    import toolreplay.diff
    from toolreplay.cli.main import main

    def refused(*args: object, **kwargs: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", "/srv/runs/results.json")

    monkeypatch.setattr(toolreplay.diff, "load_run", refused)
    monkeypatch.setattr(sys, "argv", ["toolreplay", "diff", "a.json", "b.json"])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 1
    err = capsys.readouterr().err
    assert "/srv/runs/results.json: permission denied" in err
    assert "internal error" not in err and "report it" not in err
