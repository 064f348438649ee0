"""Nothing lost: atomic files and set swaps, locks for concurrent writers, leftovers of a
killed run cleaned up and reported, outputs checked before any work."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import toolreplay.cli.main as cli
import toolreplay.cli.report as cli_report
import toolreplay.folders as folders
import toolreplay.outputs as outputs
import toolreplay.runs.record as record_mod
from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.manifest import read_manifest, write_manifest
from toolreplay.folders import (
    folder_lock,
    leftovers,
    recover_tree,
    replace_tree,
    staging_folder,
)
from toolreplay.outputs import atomic_write_text
from toolreplay.report.render import render_report, write_report
from toolreplay.results.build import write_results
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.record import RecordingInterrupted, record_stand_in
from toolreplay.runs.target import RecordingError

from .conftest import EVAL_FILE, REFERENCE, REPO

RESULTS = REPO / "reports" / "results.json"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


# ---- files ----------------------------------------------------------------------------------


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch):
    """Every file opened by the atomic writer fails with ENOSPC after 100 characters."""
    real = os.fdopen

    class Full:
        def __init__(self, f):
            self.f, self.written = f, 0

        def write(self, data):
            self.written += len(data)
            if self.written > 100:
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.f.write(data)

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.f.__exit__(*exc)

    monkeypatch.setattr(outputs.os, "fdopen", lambda *a, **k: Full(real(*a, **k)))


def test_full_disk_leaves_the_old_files_intact(tmp_path, full_disk):
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    shutil.copy(RESULTS, tmp_path / "results.json")
    (tmp_path / "index.html").write_text("old page", encoding="utf-8")
    (tmp_path / "manifest.json").write_text("{}", encoding="utf-8")
    before = snapshot(tmp_path)
    with pytest.raises(OSError, match="No space left"):
        write_results(tmp_path / "results.json", {**results, "cassette_set": "new"})
    with pytest.raises(OSError, match="No space left"):
        write_report(RESULTS, tmp_path / "index.html")
    with pytest.raises(OSError, match="No space left"):
        write_manifest(tmp_path, read_manifest(REFERENCE))
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before)  # no temporary files


def test_report_on_a_full_disk_says_so_and_keeps_the_old_page(tmp_path, full_disk):
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("old page", encoding="utf-8")
    result = CliRunner().invoke(
        cli.app, ["report", "--results", str(RESULTS), "--out", str(out / "index.html")]
    )
    assert result.exit_code == 1
    assert "no space left on the device" in result.output and "wrote" not in result.output
    assert snapshot(out) == {"index.html": b"old page"}
    assert sorted(p.name for p in out.iterdir()) == [".toolreplay.lock", "index.html"]


def test_temporary_names_are_unique_and_permissions_usual(tmp_path, monkeypatch):
    names = []
    real = outputs.tempfile.mkstemp

    def mkstemp(**kwargs):
        fd, name = real(**kwargs)
        names.append(name)
        return fd, name

    monkeypatch.setattr(outputs.tempfile, "mkstemp", mkstemp)
    for _ in range(3):
        atomic_write_text(tmp_path / "index.html", "x")
    assert len(set(names)) == 3 and all(Path(n).parent == tmp_path for n in names)
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "index.html").stat().st_mode & 0o777 == 0o666 & ~mask


WRITER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from toolreplay.cli.common import write_outputs
    out, tag, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    results = json.loads(Path(sys.argv[4]).read_text(encoding="utf-8"))
    results["episodes"] = results["episodes"][:2]  # small: many rounds in little time
    for i in range(rounds):
        results["cassette_set"] = f"{tag}-{i}"
        write_outputs(out, results)
    """
)


@pytest.mark.slow
def test_two_processes_writing_one_folder_never_corrupt_it(tmp_path):
    out = tmp_path / "reports"
    rounds = 20
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(out), tag, str(rounds), str(RESULTS)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    reads = 0
    while any(p.poll() is None for p in procs):  # a reader meanwhile: never a partial file
        for name in ("results.json", "index.html"):
            try:
                data = (out / name).read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            reads += 1
            if name == "results.json":
                json.loads(data)
            else:
                assert data.rstrip().endswith("</html>"), "half-written page"
        time.sleep(0.01)
    for p in procs:
        assert p.wait() == 0, p.stderr.read() if p.stderr else ""
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert len(results["episodes"]) == 2
    assert results["cassette_set"] in (f"a-{rounds - 1}", f"b-{rounds - 1}")
    # the two files are a pair: the page is the one rendered from the results beside it
    beside = {"csv": "index-episodes.csv", "results": "results.json"}
    assert (out / "index.html").read_text(encoding="utf-8") == render_report(
        results, downloads=beside
    )
    assert sorted(p.name for p in out.iterdir()) == [".toolreplay.lock", "index-episodes.csv",
                                                     "index.html", "results.json"]  # fmt: skip
    assert reads > 0


def test_a_held_report_lock_fails_with_a_clear_message(tmp_path, monkeypatch):
    out = tmp_path / "site"
    monkeypatch.setattr(cli_report, "LOCK_WAIT_S", 0.2)
    with folder_lock(out, inside=True):
        result = CliRunner().invoke(
            cli.app, ["report", "--results", str(RESULTS), "--out", str(out / "index.html")]
        )
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert f"another toolreplay process is writing reports into {out} (waited 0.2 s)" in text
    assert not (out / "index.html").exists()


def test_report_out_equal_to_results_is_refused(tmp_path):
    results = tmp_path / "results.json"
    shutil.copy(RESULTS, results)
    for out in (results, tmp_path / "." / "results.json"):
        result = CliRunner().invoke(
            cli.app, ["report", "--results", str(results), "--out", str(out)]
        )
        assert result.exit_code == 2
        assert "is the results file itself" in result.output
    assert results.read_bytes() == RESULTS.read_bytes()


def test_run_checks_its_output_folder_before_replaying(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    import toolreplay.runs.replay

    monkeypatch.setattr(
        toolreplay.runs.replay, "replay_outcomes", lambda *a, **k: pytest.fail("replayed anyway")
    )
    result = CliRunner().invoke(
        cli.app,
        ["run", "--eval", str(EVAL_FILE), "--cassettes", str(REPO / "cassettes"), "--out",
         str(tmp_path / "file" / "reports")],
    )  # fmt: skip
    assert result.exit_code == 1 and "cannot write" in result.output


# ---- set swaps ------------------------------------------------------------------------------


def two_sets(tmp_path: Path) -> tuple[Path, Path]:
    dest = tmp_path / "reference"
    shutil.copytree(REFERENCE, dest)
    new = staging_folder(dest)
    (new / "manifest.json").write_text('{"new": true}', encoding="utf-8")
    return dest, new


KILLER = textwrap.dedent(
    """
    import os, shutil, sys
    from pathlib import Path
    import toolreplay.folders as folders
    mode, new, dest = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    if mode == "two-renames":  # no exchange here; killed between the two renames
        folders._exchange = lambda a, b: False
        real = os.rename
        def rename(a, b):
            real(a, b)
            os._exit(137)
        folders.os.rename = rename
    else:  # killed right after the exchange, before the old set is deleted
        folders.shutil.rmtree = lambda *a, **k: os._exit(137)
    folders.replace_tree(new, dest)
    """
)


def kill_during_swap(mode: str, new: Path, dest: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", KILLER, mode, str(new), str(dest)], check=False)
    assert proc.returncode == 137


def test_killed_between_the_two_renames_is_reported_then_restored(tmp_path):
    dest, new = two_sets(tmp_path)
    before = snapshot(dest)
    kill_during_swap("two-renames", new, dest)
    assert not dest.exists() and len(leftovers(dest)) == 2  # previous + staging
    # a reader says what happened instead of "no set"
    with pytest.raises(CassetteError, match="interrupted while replacing it"):
        read_manifest(dest)
    result = CliRunner().invoke(
        cli.app,
        ["run", "--eval", str(EVAL_FILE), "--cassettes", str(tmp_path), "--out",
         str(tmp_path / "out")],
    )  # fmt: skip
    assert result.exit_code == 1 and ".previous-reference-" in result.output
    # the next writer puts the previous set back and removes the rest
    notes = recover_tree(dest)
    assert notes[0].startswith(f"restored {dest} from .previous-reference-")
    assert any("removed .recording-reference-" in n for n in notes)
    assert snapshot(dest) == before and not leftovers(dest)


def test_killed_after_the_exchange_keeps_the_new_set(tmp_path):
    dest, new = two_sets(tmp_path)
    kill_during_swap("exchange", new, dest)
    assert json.loads((dest / "manifest.json").read_text()) == {"new": True}
    assert [p.name for p in leftovers(dest)] == [new.name]  # the old set, not yet deleted
    assert recover_tree(dest) == [f"removed {new.name}, left beside {dest} by an interrupted run"]
    assert not leftovers(dest)


@pytest.mark.parametrize("exchange", [True, False])
def test_replace_tree_swaps_whole_sets(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(folders, "_exchange", lambda a, b: False)
    dest, new = two_sets(tmp_path)
    replace_tree(new, dest)
    assert snapshot(dest) == {"manifest.json": b'{"new": true}'}
    assert not new.exists() and not leftovers(dest)


@pytest.mark.slow
def test_an_interrupted_second_rename_puts_the_set_back(suite, tmp_path, monkeypatch, loopback):
    monkeypatch.setattr(folders, "_exchange", lambda a, b: False)
    set_dir = tmp_path / "reference"
    shutil.copytree(REFERENCE, set_dir)
    before = snapshot(set_dir)
    real = os.rename

    def rename(a, b):
        if Path(a).name.startswith(".recording-"):
            raise KeyboardInterrupt  # as if Ctrl-C landed between the two renames
        real(a, b)

    monkeypatch.setattr(folders.os, "rename", rename)
    with pytest.raises(RecordingInterrupted, match="is unchanged"):
        record_stand_in(set_dir, suite, [Configuration("loop", "atomic")], force=True, trials=1)
    assert snapshot(set_dir) == before and not leftovers(set_dir)


@pytest.mark.slow
def test_a_signal_during_the_swap_waits_and_the_message_says_the_set_changed(
    suite, tmp_path, monkeypatch, loopback
):
    set_dir = tmp_path / "reference"
    shutil.copytree(REFERENCE, set_dir)
    real = record_mod.replace_tree

    def swap_with_a_signal(new, dest):
        os.kill(os.getpid(), signal.SIGINT)  # arrives mid-commit
        time.sleep(0.05)
        real(new, dest)

    monkeypatch.setattr(record_mod, "replace_tree", swap_with_a_signal)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as usual
    try:
        with pytest.raises(RecordingInterrupted, match="after the new recording replaced"):
            record_stand_in(set_dir, suite, [Configuration("loop", "atomic")], force=True, trials=1)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(read_manifest(set_dir).episodes) == 4 and not leftovers(set_dir)


def test_a_second_recording_of_one_set_fails_fast(suite, tmp_path):
    set_dir = tmp_path / "reference"
    with folder_lock(set_dir):
        started = time.monotonic()
        with pytest.raises(RecordingError, match="another toolreplay process is recording"):
            record_stand_in(set_dir, suite, [Configuration("loop", "atomic")], force=True, trials=1)
    assert time.monotonic() - started < 5 and not set_dir.exists()


@pytest.mark.slow
def test_stale_staging_is_removed_and_reported(tmp_path, loopback):
    set_dir = tmp_path / "reference"
    shutil.copytree(REFERENCE, set_dir)
    stale = staging_folder(set_dir)
    (stale / "half.yaml").write_text("interactions: [", encoding="utf-8")
    result = CliRunner().invoke(
        cli.app,
        ["record", "--model-source", "stand-in", "--set", "reference", "--cassettes",
         str(tmp_path), "--eval", str(EVAL_FILE), "--no-ablations",
         "--only", "loop+atomic/beijing"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"note: removed {stale.name}, left beside {set_dir} by an interrupted run" in (
        " ".join(result.output.split())
    )
    assert not stale.exists() and not leftovers(set_dir)
