"""``publish(..., alongside=...)``: a large report's transcripts page and results.json are each
written by a forked child of its own while this process writes the other files (issue 33: the
serial tail of a large run).
The files are the same bytes either way; a child that dies or whose writer raises is made up
for here (the writer's error raised here, nothing replaced); an error here stops and reaps the
child and leaves no temporary file; with another thread running, nothing is forked."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from toolreplay import outputs
from toolreplay.outputs import publish

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the child is forked on Linux")


@pytest.fixture(autouse=True)
def forking(request, monkeypatch):
    """The child is forked whatever other threads this test process holds (an earlier test's
    idle tool-call threads): the thread rule itself is the last test's, unpatched."""
    if "another_thread" not in request.node.name:
        monkeypatch.setattr(outputs, "_can_fork", lambda: True)


def _writers(record: Path | None = None) -> dict[str, object]:
    def big(f):
        if record is not None:  # which process wrote it (a child's memory is its own)
            record.write_text(str(os.getpid()), encoding="utf-8")
        for i in range(20_000):
            f.write(f"line {i} ✓\n")

    return {
        "results.json": lambda f: f.write('{"a": 1}\n'),
        "index.html": lambda f: f.write("<p>page</p>\n"),
        "index-transcripts.html": big,
    }


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _no_child_left() -> None:
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_the_same_bytes_with_and_without_the_child(tmp_path: Path, monkeypatch) -> None:
    forked, serial = tmp_path / "forked", tmp_path / "serial"
    forked.mkdir(), serial.mkdir()
    record = tmp_path / "pid"
    publish(forked, _writers(record), alongside=("index-transcripts.html",))
    assert record.read_text(encoding="utf-8") != str(os.getpid())  # written by the child
    monkeypatch.setattr(outputs, "_can_fork", lambda: False)
    publish(serial, _writers(record))
    assert record.read_text(encoding="utf-8") == str(os.getpid())
    assert _files(forked) == _files(serial)
    assert len(_files(forked)) == 3  # no temporary file, no journal left
    _no_child_left()


def test_each_file_alongside_has_a_child_of_its_own(tmp_path: Path, monkeypatch) -> None:
    forked, serial = tmp_path / "forked", tmp_path / "serial"
    forked.mkdir(), serial.mkdir()
    pids = tmp_path / "pids"
    pids.mkdir()

    def by(name, write):
        def recorded(f):
            (pids / name).write_text(str(os.getpid()), encoding="utf-8")
            write(f)

        return recorded

    def writers():
        return {name: by(name, w) for name, w in _writers().items()}

    publish(forked, writers(), alongside=("index-transcripts.html", "results.json"))
    who = {p.name: p.read_text(encoding="utf-8") for p in pids.iterdir()}
    assert who["index.html"] == str(os.getpid())
    assert len({who["index.html"], who["results.json"], who["index-transcripts.html"]}) == 3
    monkeypatch.setattr(outputs, "_can_fork", lambda: False)
    publish(serial, writers(), alongside=("index-transcripts.html", "results.json"))
    assert set((pids / n).read_text(encoding="utf-8") for n in who) == {str(os.getpid())}
    assert _files(forked) == _files(serial)
    _no_child_left()


def test_one_failed_child_of_two_is_made_up_for_here(tmp_path: Path) -> None:
    parent = os.getpid()
    writers = _writers()
    json_writer = writers["results.json"]

    def dies_in_the_child(f):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        json_writer(f)

    writers["results.json"] = dies_in_the_child
    publish(tmp_path, writers, alongside=("index-transcripts.html", "results.json"))
    files = _files(tmp_path)
    assert files["results.json"] == b'{"a": 1}\n'
    assert files["index-transcripts.html"].count(b"\n") == 20_000
    assert len(files) == 3
    _no_child_left()


@pytest.mark.parametrize("how", ["raises", "dies"])
def test_a_failed_child_is_made_up_for_here(tmp_path: Path, how: str) -> None:
    parent = os.getpid()
    writers = _writers()
    big = writers["index-transcripts.html"]

    def fails_in_the_child(f):
        if os.getpid() != parent:
            if how == "raises":
                raise ValueError("only in the child")
            os.kill(os.getpid(), signal.SIGKILL)
        big(f)

    writers["index-transcripts.html"] = fails_in_the_child
    publish(tmp_path, writers, alongside=("index-transcripts.html",))
    assert _files(tmp_path)["index-transcripts.html"].count(b"\n") == 20_000
    _no_child_left()


def test_a_writer_error_replaces_nothing_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("old\n", encoding="utf-8")
    writers = _writers()

    def broken(f):
        raise ValueError("broken writer")

    writers["index-transcripts.html"] = broken  # raises in the child, then here
    with pytest.raises(ValueError, match="broken writer"):
        publish(tmp_path, writers, alongside=("index-transcripts.html",))
    assert _files(tmp_path) == {"index.html": b"old\n"}
    _no_child_left()


def test_an_error_here_stops_and_reaps_the_child(tmp_path: Path) -> None:
    writers = _writers()
    started = tmp_path / "started"

    def slow(f):
        started.touch()
        signal.pause()  # never ends by itself: only the parent's kill stops it

    def broken(f):
        raise KeyboardInterrupt  # as a Ctrl-C while this process writes

    writers["index-transcripts.html"] = slow
    writers["results.json"] = broken
    with pytest.raises(KeyboardInterrupt):
        publish(tmp_path, writers, alongside=("index-transcripts.html",))
    assert [p.name for p in tmp_path.iterdir() if p.name != "started"] == []
    _no_child_left()


def test_nothing_is_forked_beside_another_thread(tmp_path: Path) -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        record = tmp_path.parent / f"{tmp_path.name}-pid"
        publish(tmp_path, _writers(record), alongside=("index-transcripts.html",))
        assert record.read_text(encoding="utf-8") == str(os.getpid())
    finally:
        stop.set()
        other.join()


def test_an_interrupt_while_waiting_for_the_child_stops_and_reaps_it(tmp_path: Path) -> None:
    """Ctrl-C while this process waits for the child (its own files written): the child is
    killed and reaped, and no temporary file is left, not even one the child would reopen."""
    started = tmp_path / "started"

    def slow(f):
        started.touch()
        signal.pause()

    def fast(f):
        f.write("fast\n")
        signal.setitimer(signal.ITIMER_REAL, 0.3)  # an interrupt once publish waits

    def interrupt(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    out = tmp_path / "out"
    out.mkdir()
    try:
        with pytest.raises(KeyboardInterrupt):
            publish(out, {"a.txt": fast, "b.html": slow, "c.html": slow},
                    alongside=("b.html", "c.html"))  # fmt: skip
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert started.exists()  # the child was writing
    _no_child_left()
    assert list(out.iterdir()) == []
