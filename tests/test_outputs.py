"""Outputs: toolreplay writes only regular files inside a folder the user named; a device, FIFO,
socket or symbolic link is refused (exit 2, one line) and left as it was; ``-`` is standard
output; results.json and index.html of one run are published together; what a killed run left
is completed or removed by the next run, which says so (issue 22's cases: ``report --out
/dev/null``, a FIFO, ``/dev/stdout`` through a link, a kill between the two files)."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.outputs import (
    JOURNAL,
    OutputPathError,
    check_output_file,
    publish,
    recover_outputs,
)

from .conftest import REPO

RESULTS = REPO / "reports" / "results.json"


def _report(out: str | Path, results: Path = RESULTS):
    return CliRunner().invoke(app, ["report", "--results", str(results), "--out", str(out)])


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_report_refuses_a_device_and_leaves_it(device):
    before = os.stat(device)
    result = _report(device)
    assert result.exit_code == 2
    assert result.output == f"error: {device}: is a device; toolreplay writes only regular " \
        "files, give the page a plain path or - for standard output\n"  # fmt: skip
    assert stat.S_ISCHR(os.stat(device).st_mode) and os.stat(device).st_ino == before.st_ino


def test_report_refuses_a_fifo_a_socket_and_links(tmp_path):
    fifo = tmp_path / "page.html"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.html"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        link = tmp_path / "out.html"
        link.symlink_to("/dev/stdout")
        for path, what in ((fifo, "a FIFO"), (sock_path, "a socket"), (link, "a symbolic link")):
            result = _report(path)
            assert result.exit_code == 2 and f"is {what}" in result.output, result.output
            assert result.output.count("\n") == 1
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()


@pytest.mark.slow
def test_report_dash_is_standard_output(tmp_path):
    result = _report("-")
    assert result.exit_code == 0
    assert result.output.startswith("<!DOCTYPE html>") and "wrote" not in result.output


def test_run_refuses_a_results_path_that_is_not_a_regular_file(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "results.json")
    result = CliRunner().invoke(
        app, ["run", "--questions", "beijing", "--configurations", "loop+atomic",
              "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 2 and "results.json: is a FIFO" in result.output
    assert not (out / "index.html").exists()


def test_check_output_file_accepts_absent_and_regular_files(tmp_path):
    check_output_file(tmp_path / "new.html")
    (tmp_path / "old.html").write_text("x")
    check_output_file(tmp_path / "old.html")
    with pytest.raises(OutputPathError, match="is a folder"):
        check_output_file(tmp_path)


def test_one_generation_results_and_page_together(tmp_path):
    (tmp_path / "results.json").write_text('{"run": 1}')
    (tmp_path / "index.html").write_text("run 1")

    def broken(f):
        f.write("half a page")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        publish(tmp_path, {"results.json": lambda f: f.write('{"run": 2}'), "index.html": broken})
    # neither file changed, no temporary file left
    assert (tmp_path / "results.json").read_text() == '{"run": 1}'
    assert (tmp_path / "index.html").read_text() == "run 1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", "results.json"]
    publish(tmp_path, {"results.json": lambda f: f.write('{"run": 2}'),
                       "index.html": lambda f: f.write("run 2")})  # fmt: skip
    assert (tmp_path / "index.html").read_text() == "run 2"
    assert not (tmp_path / JOURNAL).exists()


def test_a_publication_cut_short_is_completed_by_the_next_writer(tmp_path):
    """Killed after the journal and the first move: the next writer finishes the moves."""
    (tmp_path / "results.json").write_text('{"run": 2}')  # already moved
    (tmp_path / "index.html").write_text("run 1")  # the old page, of another run
    (tmp_path / ".index.html.abcd1234.tmp").write_text("run 2")
    (tmp_path / JOURNAL).write_text(json.dumps({"publish": [
        [".results.json.zzzz9999.tmp", "results.json"], [".index.html.abcd1234.tmp", "index.html"],
    ]}))  # fmt: skip
    (tmp_path / ".other.html.qqqq0000.tmp").write_text("left by a killed writer")
    notes = recover_outputs(tmp_path)
    assert (tmp_path / "index.html").read_text() == "run 2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", "results.json"]
    assert notes[0].startswith("completed the publication of index.html")
    assert "removed 1 temporary file(s)" in notes[1] and ".other.html.qqqq0000.tmp" in notes[1]


@pytest.mark.slow
def test_run_removes_and_reports_leftover_temporary_files(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".index.html.k1ll3d00.tmp").write_text("half a page")
    result = CliRunner().invoke(
        app, ["run", "--questions", "beijing", "--configurations", "loop+atomic",
              "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "removed 1 temporary file(s) a killed run left" in result.output
    assert not (out / ".index.html.k1ll3d00.tmp").exists()
    assert {"results.json", "index.html"} <= {p.name for p in out.iterdir()}


def test_a_refused_shard_creates_no_output_folder(tmp_path):
    result = CliRunner().invoke(app, ["run", "--shard", "2/99999", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert not (tmp_path / "o").exists()


def test_check_writable_removes_only_the_folders_it_made(tmp_path: Path) -> None:
    """The proof leaves no folder it made (a run that fails later leaves nothing behind) and
    never removes one that was there, even when the path reaches it through a folder that was
    not (``new/../existing``)."""
    from toolreplay.outputs import check_writable

    (tmp_path / "existing").mkdir()
    check_writable(tmp_path / "a" / "b" / "c")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"]
    check_writable(tmp_path / "new" / ".." / "existing")
    assert (tmp_path / "existing").is_dir() and not (tmp_path / "new").exists()
    check_writable(tmp_path / "existing")
    assert (tmp_path / "existing").is_dir() and not list((tmp_path / "existing").iterdir())


def test_check_writable_makes_again_a_folder_another_process_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs checking the same new folder at once: one may remove it between the other's
    making it and its proof file; the other makes it again rather than failing."""
    import tempfile as tempfile_module

    from toolreplay.outputs import check_writable

    real = tempfile_module.mkstemp
    removed: list[str] = []

    def once_removed(*args: Any, **kwargs: Any) -> Any:
        if not removed:
            removed.append(kwargs["dir"])
            os.rmdir(kwargs["dir"])  # the other process's check, done meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile_module, "mkstemp", once_removed)
    check_writable(tmp_path / "shards")
    assert removed and not (tmp_path / "shards").exists()
