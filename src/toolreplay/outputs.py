"""Writing files without losing anything: atomic files, checked output paths, outputs
published as one generation.

**Files.** :func:`atomic_write_text` / :func:`atomic_writer` write to a temporary file with a
unique name (``.<name>.<random>.tmp``, made by :func:`tempfile.mkstemp`) in the destination's
own folder, flush and fsync it, then :func:`os.replace` it over the destination (and fsync the
folder). A reader sees the old file or the new one, never a half-written one; two writers
never share a temporary file; a failure while writing (a full disk: ``ENOSPC``) removes the
temporary file and leaves the old file as it was. The new file gets the usual permissions
(``0o666`` less the umask), not ``mkstemp``'s ``0o600``. Every piece written passes through
:mod:`toolreplay.redaction`.

**Output paths.** :func:`check_output_file` refuses to replace anything but a regular file
(a device, FIFO, socket, folder or symbolic link), :func:`check_name_lengths` a path the file
system cannot hold, :func:`check_writable` a folder nothing can be made in, and
:func:`check_outside_cassettes` a folder inside cassettes (a set, a test suite's cassette
folder, or a folder the command reads): said before any work starts.

**Outputs.** :func:`publish` writes several files of one folder (``results.json`` and
``index.html``) as one generation, through a journal that :func:`recover_outputs` completes
after a killed run.

Folder swaps, locks and deferred signals are :mod:`toolreplay.folders`' part; reading input
files is :mod:`toolreplay.inputs`'.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import re
import signal
import stat
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, cast

from toolreplay.folders import deferred_interrupts, fsync_folder
from toolreplay.inputs import InputFileError, file_kind, read_checked
from toolreplay.redaction import known_secrets, redact_bytes, redact_text

# ---- files ----------------------------------------------------------------------------------


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_MODE = _default_mode()


@contextlib.contextmanager
def atomic_writer(path: Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a unique temporary file beside ``path`` for writing (text ``"w"`` with
    ``encoding`` and ``\\n`` line ends, or bytes ``"wb"``); when the block ends without an
    exception it is flushed, fsynced and moved over ``path``. On an exception (``OSError``
    such as ``ENOSPC``, ``KeyboardInterrupt``...) the temporary file is removed and ``path``
    is untouched. The folder must exist."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with contextlib.suppress(OSError):
            os.fchmod(fd, _MODE)
        binary = "b" in mode
        with os.fdopen(
            fd, mode, encoding=None if binary else encoding, newline=None if binary else "\n"
        ) as f:
            yield cast(IO[Any], _Redacting(f, binary))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_folder(path.parent)


class _Redacting:
    """A file whose ``write`` passes every piece through :mod:`toolreplay.redaction`."""

    def __init__(self, f: IO[Any], binary: bool) -> None:
        self._f = f
        self._binary = binary
        self._secrets = known_secrets()  # once per file: a page is written in many pieces

    def write(self, data: Any) -> int:
        if not self._secrets:
            self._f.write(data)
            return len(data)
        redact = redact_bytes if self._binary else redact_text
        safe = redact(data, self._secrets)
        self._f.write(safe)
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)


def write_in_chunks(
    pieces: Iterable[str], write: Callable[[str], object], size: int = 1 << 16
) -> None:
    """``pieces`` (of a page a template yields: millions of small ones at 10,000
    transcripts) passed to ``write`` joined in chunks of about ``size`` characters."""
    chunk: list[str] = []
    n = 0
    for piece in pieces:
        chunk.append(piece)
        n += len(piece)
        if n >= size:
            write("".join(chunk))
            chunk, n = [], 0
    if chunk:
        write("".join(chunk))


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically (see atomic_writer)."""
    with atomic_writer(path) as f:
        f.write(text)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically; see :func:`atomic_writer`."""
    with atomic_writer(path, "wb", None) as f:
        f.write(data)


def check_writable(folder: Path) -> None:
    """Prove a file can be made in ``folder`` (made and removed at once), creating it and
    its missing parents for the proof and removing again only the folders this call made, so
    a run that fails later leaves no empty folder behind (the writer makes them when it
    writes); a folder that was there is never removed. ``OSError`` otherwise, for the caller
    to report before any work starts."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(folder))
    # the folder the system would make (``new/../old`` is ``old``), outermost part first
    target = Path(os.path.realpath(folder))
    parts = [*reversed(target.parents), target]
    made: list[Path] = []
    try:
        for attempt in range(3):
            try:
                for part in parts:
                    if not part.is_dir():
                        try:
                            part.mkdir()
                            made.append(part)
                        except FileExistsError:
                            pass  # made meanwhile by another process: not ours
                fd, tmp = tempfile.mkstemp(prefix=".writable-", dir=target)
            except FileNotFoundError:  # another process's check removed a folder meanwhile
                if attempt == 2:
                    raise
                continue
            os.close(fd)
            os.unlink(tmp)
            return
    finally:
        for made_here in reversed(made):  # innermost first; one filled meanwhile stays
            with contextlib.suppress(OSError):
                made_here.rmdir()


# ---- outputs --------------------------------------------------------------------------------

class OutputPathError(ValueError):
    """An output path toolreplay will not write: a device, FIFO, socket, folder or symbolic
    link. The message is one line naming the path and what it is."""


def check_name_lengths(path: Path, what: str = "output") -> None:
    """:class:`OutputPathError` when a component of ``path`` is longer than the file system
    allows (``NAME_MAX``, 255 bytes on most), or the whole path longer than ``PATH_MAX``:
    said before anything is made, rather than as an ``OSError`` halfway."""
    path = Path(path)
    existing = next((p for p in (path, *path.parents) if os.path.isdir(p)), Path("."))
    try:
        name_max = os.pathconf(existing, "PC_NAME_MAX")
        path_max = os.pathconf(existing, "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):
        name_max, path_max = 255, 4096
    for part in path.parts:
        if len(os.fsencode(part)) > name_max:
            raise OutputPathError(
                f"{what} path: the name {part[:40]}... is {len(os.fsencode(part))} bytes long; "
                f"this file system allows {name_max}"
            )
    if len(os.fsencode(os.path.abspath(path))) >= path_max:
        raise OutputPathError(f"{what} path longer than this file system allows ({path_max})")


def check_output_file(path: Path, what: str = "output") -> None:
    """:class:`OutputPathError` unless ``path`` is absent or a regular file (not a symbolic
    link): toolreplay replaces only regular files it could have written itself, never a
    device (``/dev/null``), a FIFO, a socket, a folder or a link (``/dev/stdout``)."""
    path = Path(path)
    check_name_lengths(path, what)
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return  # nothing there (whether its folder can be made is checked by the writer)
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot check the {what} path: {exc.strerror}") from None
    dash = " or - for standard output" if what == "page" else ""
    if stat.S_ISLNK(info.st_mode):
        try:
            target = file_kind(os.stat(path).st_mode)
        except OSError:
            target = "nothing"
        target = "a regular file" if target == "not a regular file" else target
        raise OutputPathError(
            f"{path}: is a symbolic link (to {target}); toolreplay writes only regular files, "
            f"give the {what} a plain path{dash}"
        )
    if not stat.S_ISREG(info.st_mode):
        raise OutputPathError(
            f"{path}: is {file_kind(info.st_mode)}; toolreplay writes only regular files, give the "
            f"{what} a plain path{dash}"
        )


#: The environment variable that lets results and reports be written among cassettes anyway.
ALLOW_OUT_IN_CASSETTES = "TOOLREPLAY_ALLOW_OUT_IN_CASSETTES"

#: How many entries of a folder are looked at to tell whether it holds cassettes.
_SCAN = 200


def _is_cassette_file(path: Path) -> bool:
    """Whether ``path`` is a regular YAML or JSON file with vcrpy's ``interactions`` key near
    its start (read: at most 4 KiB)."""
    if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b"interactions:" in head or b'"interactions"' in head


def cassette_folder_kind(folder: Path) -> str | None:
    """What ``folder`` is when it holds cassettes: ``"a cassette set"`` (a ``manifest.json``
    naming a ``cassette_set``) or ``"a folder of cassettes"`` (a vcrpy cassette file directly
    in it, among its first 200 entries); None otherwise, or when it cannot be read."""
    manifest = folder / "manifest.json"
    try:
        if manifest.is_file() and b'"cassette_set"' in manifest.read_bytes()[:4096]:
            return "a cassette set"
        with os.scandir(folder) as entries:
            for n, entry in enumerate(entries):
                if n >= _SCAN:
                    break
                if _is_cassette_file(Path(entry.path)):
                    return "a folder of cassettes"
    except OSError:
        return None
    return None


def check_outside_cassettes(folder: Path, inputs: tuple[Path, ...] = ()) -> None:
    """:class:`OutputPathError` when output folder ``folder`` lies among cassettes: it is, or
    is inside, one of ``inputs`` (the folders the command reads) or a folder that holds
    cassettes (:func:`cassette_folder_kind`), or it holds such folders itself (the ``cassettes/``
    of a project, a test suite's cassette root). Results and reports written there would mix
    with the recordings (a set's completeness check, a later ``convert``). Setting
    :data:`ALLOW_OUT_IN_CASSETTES` to ``1`` allows it."""
    if os.environ.get(ALLOW_OUT_IN_CASSETTES) == "1":
        return
    where = Path(os.path.abspath(folder))
    problem = None
    for given in inputs:
        read = Path(os.path.abspath(given))
        if where == read or read in where.parents:
            problem = f"is inside {given}, the cassette folder this command reads"
            break
    for place in (where, *where.parents):
        if problem is not None:
            break
        kind = cassette_folder_kind(place) if place.is_dir() else None
        if kind is not None:
            at = "is" if place == where else f"is inside {place},"
            problem = f"{at} {kind}"
    if problem is None and where.is_dir():
        try:
            with os.scandir(where) as entries:
                inner = [Path(e.path) for e in itertools.islice(entries, _SCAN) if e.is_dir()]
        except OSError:
            inner = []
        for child in sorted(inner):
            kind = cassette_folder_kind(child)
            if kind is not None:
                problem = f"holds {kind} ({child.name})"
                break
    if problem is not None:
        raise OutputPathError(
            f"{folder}: {problem}; results and reports are not written among cassettes. "
            f"Give another folder (e.g. reports/), or set {ALLOW_OUT_IN_CASSETTES}=1 to write "
            "there anyway"
        )


#: The journal of a publication in progress (see :func:`publish`).
JOURNAL = ".toolreplay-publish.json"

_TMP_NAME = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}\.tmp$|^\.writable-[A-Za-z0-9_]{8}$")


def publish(
    folder: Path,
    writers: Mapping[str, Callable[[IO[str]], object]],
    alongside: Collection[str] = (),
) -> None:
    """Write the files ``writers`` names (file name → function writing its text) into
    ``folder`` as one generation: every file is written to a temporary file first (fsynced);
    then a journal naming each temporary file and its destination is written, the files are
    moved into place, and the journal is removed. A kill before the journal leaves the old
    files (and temporary files that :func:`recover_outputs` removes); a kill after it is
    completed by :func:`recover_outputs`: a reader never keeps a new file beside an old one of
    another run. Every destination must be absent or a regular file
    (:func:`check_output_file`). Call while holding :func:`folder_lock` for ``folder``.

    ``alongside``: names among ``writers`` each written by a forked child process of its own
    while this one writes the others (the cores write a large report's files in about the
    time of the longest), where that is safe: on Linux, from a process with no other thread.
    Elsewhere, or when a child does not finish its file (it died, its writer raised there),
    the file is written here, as without it: the same bytes either way, and a writer's error
    is raised here."""
    folder = Path(folder)
    for name in writers:
        check_output_file(folder / name, name)
    temporary: dict[str, str] = {}
    journal = folder / JOURNAL
    journaled = False
    children: dict[str, int] = {}  # file name → the pid of the child writing it
    try:
        for name in writers:
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
            os.close(fd)
            temporary[name] = tmp
        away = [n for n in writers if n in alongside] if _can_fork() else []
        for name in away:
            children[name] = _write_in_child(temporary[name], writers[name])
        for name, write in writers.items():
            if name not in away:
                _write_file(temporary[name], write)
        while children:  # an interrupt here still kills and reaps those left
            name, child = next(iter(children.items()))
            succeeded = _child_succeeded(child)
            del children[name]
            if not succeeded:  # written here instead, as without a child
                _write_file(temporary[name], writers[name])
        entries = [[Path(tmp).name, name] for name, tmp in temporary.items()]
        with deferred_interrupts():  # the files change together, or not at all
            atomic_write_text(journal, json.dumps({"publish": entries}) + "\n")
            journaled = True
            for name, tmp in temporary.items():
                os.replace(tmp, folder / name)
            fsync_folder(folder)
            os.unlink(journal)
    except BaseException:
        for child in children.values():  # stopped and reaped before their files are removed
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
            _child_succeeded(child)
        if not journaled:
            for tmp in temporary.values():
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        raise


def _write_file(tmp: str, write: Callable[[IO[str]], object]) -> None:
    """Write the temporary file ``tmp`` whole (truncated first) through ``write``, fsynced."""
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        with contextlib.suppress(OSError):
            os.fchmod(f.fileno(), _MODE)
        write(cast(IO[str], _Redacting(f, False)))
        f.flush()
        os.fsync(f.fileno())


def _can_fork() -> bool:
    """Whether a child may be forked to write files: Linux, and no other thread in this
    process (a fork copies only the calling thread; a lock another thread held would stay
    held in the child)."""
    import sys
    import threading

    return sys.platform == "linux" and threading.active_count() == 1


def _write_in_child(tmp: str, write: Callable[[IO[str]], object]) -> int:
    """Fork a child that writes the temporary file ``tmp`` through ``write`` and exits 0 when
    it is written, 1 otherwise (it never returns, nor runs this process's exit handlers); its
    pid."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # nothing buffered before the fork is written twice
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child's coverage is not collected)
        code = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it at once
            with contextlib.suppress(OSError, AttributeError):  # and so does its parent's end
                import ctypes

                ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            _write_file(tmp, write)
            code = 0
        except BaseException:
            pass
        finally:
            os._exit(code)
    return pid


def _child_succeeded(pid: int) -> bool:
    """Reap the child ``pid`` (waiting for it); whether it exited 0."""
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return False
        return os.waitstatus_to_exitcode(status) == 0


def recover_outputs(folder: Path) -> list[str]:
    """Clean up an output folder after a killed run; call only while holding
    :func:`folder_lock` for it. A publication cut short after its journal was written is
    completed (its files then belong to one run again); temporary files a killed writer left
    (``.<name>.<random>.tmp``) are removed. Returns one sentence per action, to print."""
    folder = Path(folder)
    done: list[str] = []
    journal = folder / JOURNAL
    if journal.is_file():
        try:
            text = read_checked(journal, what="publication journal", limit=1 << 16)
            entries = json.loads(text)["publish"]
            pairs = [(str(tmp), str(name)) for tmp, name in entries]
        except (InputFileError, ValueError, KeyError, TypeError):
            pairs = []
        moved = []
        for tmp, name in pairs:
            if "/" in tmp or "/" in name or "\\" in tmp or "\\" in name:
                continue
            if (folder / tmp).is_file():
                os.replace(folder / tmp, folder / name)
                moved.append(name)
        fsync_folder(folder)
        os.unlink(journal)
        done.append(
            f"completed the publication of {', '.join(moved) or 'nothing'} in {folder}, "
            "cut short by a killed run"
            if moved
            else f"removed the journal of a finished publication in {folder}"
        )
    stale = sorted(
        p.name for p in folder.iterdir() if _TMP_NAME.match(p.name) and p.is_file()
    ) if folder.is_dir() else []
    for name in stale:
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
    if stale:
        done.append(
            f"removed {len(stale)} temporary file(s) a killed run left in {folder}: "
            + ", ".join(stale)
        )
    return done
