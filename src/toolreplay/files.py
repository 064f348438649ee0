"""Writing without losing anything: atomic files, atomic folder swaps, locks, stale leftovers.

**Files.** :func:`atomic_write_text` / :func:`atomic_writer` write to a temporary file with a
unique name (``.<name>.<random>.tmp``, made by :func:`tempfile.mkstemp`) in the destination's
own folder, flush and fsync it, then :func:`os.replace` it over the destination (and fsync the
folder). A reader sees the old file or the new one, never a half-written one; two writers
never share a temporary file; a failure while writing (a full disk: ``ENOSPC``) removes the
temporary file and leaves the old file as it was. The new file gets the usual permissions
(``0o666`` less the umask), not ``mkstemp``'s ``0o600``.

**Folders.** A cassette set is a plain folder (git must see plain files under
``cassettes/reference`` in the committed tree and on a fresh clone, so the set cannot be a
symlink to a generation folder). It is recorded into a staging folder beside it
(``.recording-<set>-<random>``, same file system) and :func:`replace_tree` swaps the two:

- where the kernel can exchange two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``,
  macOS ``renamex_np(RENAME_SWAP)``), that one call is the commit: a reader sees the whole old
  set or the whole new one, and a kill at any moment leaves a complete set in place. The old
  set, now at the staging path, is then deleted;
- elsewhere (or where the file system refuses the exchange) two renames: the set to
  ``.previous-<set>-<random>``, then the staging folder to the set. A kill between them leaves
  the set missing and the previous set beside it under that name.

Either way a killed run can leave a staging or previous folder behind.
:func:`recover_tree`, called by the next writer while it holds the set's lock, puts a
previous set back if the set is missing and deletes every other leftover, returning what it
did so the caller can say so; :func:`leftovers` lets readers report them without touching
anything.

**Locks.** :func:`folder_lock` takes a :mod:`filelock` lock on ``<parent>/.<name>.lock`` for
one writer of a folder at a time: recording a set fails fast when another recording holds it;
writing reports waits a while for the other writer, then fails with a clear message.

**Signals.** :func:`deferred_interrupts` holds Ctrl-C / SIGTERM back while a commit runs
(milliseconds), so the message after an interrupt can say truthfully whether the commit
happened.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, cast

import filelock

from toolreplay.secrets import known_secrets, redact_bytes, redact_text

STAGING_PREFIX = ".recording-"
PREVIOUS_PREFIX = ".previous-"


class LockedError(RuntimeError):
    """Another process is writing the same folder; the message names the folder and lock."""


# ---- files ----------------------------------------------------------------------------------


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_MODE = _default_mode()


def _fsync_folder(folder: Path) -> None:
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


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
    _fsync_folder(path.parent)


class _Redacting:
    """A file whose ``write`` passes every piece through :mod:`toolreplay.secrets`."""

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


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically (see atomic_writer)."""
    with atomic_writer(path) as f:
        f.write(text)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically; see :func:`atomic_writer`."""
    with atomic_writer(path, "wb", None) as f:
        f.write(data)


def check_writable(folder: Path) -> None:
    """Create ``folder`` if needed and prove a file can be made in it (made and removed at
    once); ``OSError`` otherwise, for the caller to report before any work starts."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(folder))
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".writable-", dir=folder)
    os.close(fd)
    os.unlink(tmp)


# ---- outputs --------------------------------------------------------------------------------


class OutputPathError(ValueError):
    """An output path toolreplay will not write: a device, FIFO, socket, folder or symbolic
    link. The message is one line naming the path and what it is."""


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


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
            target = _kind(os.stat(path).st_mode)
        except OSError:
            target = "nothing"
        target = "a regular file" if target == "not a regular file" else target
        raise OutputPathError(
            f"{path}: is a symbolic link (to {target}); toolreplay writes only regular files, "
            f"give the {what} a plain path{dash}"
        )
    if not stat.S_ISREG(info.st_mode):
        raise OutputPathError(
            f"{path}: is {_kind(info.st_mode)}; toolreplay writes only regular files, give the "
            f"{what} a plain path{dash}"
        )


#: The journal of a publication in progress (see :func:`publish`).
JOURNAL = ".toolreplay-publish.json"

_TMP_NAME = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}\.tmp$|^\.writable-[A-Za-z0-9_]{8}$")


def publish(folder: Path, writers: Mapping[str, Callable[[IO[str]], object]]) -> None:
    """Write the files ``writers`` names (file name → function writing its text) into
    ``folder`` as one generation: every file is written to a temporary file first (fsynced);
    then a journal naming each temporary file and its destination is written, the files are
    moved into place, and the journal is removed. A kill before the journal leaves the old
    files (and temporary files that :func:`recover_outputs` removes); a kill after it is
    completed by :func:`recover_outputs`: a reader never keeps a new file beside an old one of
    another run. Every destination must be absent or a regular file
    (:func:`check_output_file`). Call while holding :func:`folder_lock` for ``folder``."""
    folder = Path(folder)
    for name in writers:
        check_output_file(folder / name, name)
    temporary: dict[str, str] = {}
    journal = folder / JOURNAL
    journaled = False
    try:
        for name, write in writers.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
            temporary[name] = tmp
            with contextlib.suppress(OSError):
                os.fchmod(fd, _MODE)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                write(cast(IO[str], _Redacting(f, False)))
                f.flush()
                os.fsync(f.fileno())
        entries = [[Path(tmp).name, name] for name, tmp in temporary.items()]
        with deferred_interrupts():  # the files change together, or not at all
            atomic_write_text(journal, json.dumps({"publish": entries}) + "\n")
            journaled = True
            for name, tmp in temporary.items():
                os.replace(tmp, folder / name)
            _fsync_folder(folder)
            os.unlink(journal)
    except BaseException:
        if not journaled:
            for tmp in temporary.values():
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        raise


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
            text = read_input_text(journal, "publication journal", 1 << 16)
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
        _fsync_folder(folder)
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


# ---- reading input files -------------------------------------------------------------------


class InputFileError(ValueError):
    """An input file cannot be read as text: missing (``missing`` is True), a folder, not
    readable, too large, or not UTF-8. The message starts with the path and says where and
    what is wrong (for bad UTF-8: line, column and byte offset)."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def _place(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column} (byte {offset})"


def read_input_bytes(path: Path, what: str, limit: int) -> bytes:
    """The bytes of input file ``path`` (at most ``limit`` bytes); :class:`InputFileError`
    naming it as ``what`` (e.g. ``"eval file"``) when it is missing, a folder, unreadable or
    larger than ``limit``."""
    path = Path(path)
    try:
        # A FIFO or a device would block or never end: only regular files (or links to one)
        # are opened. O_NONBLOCK: a FIFO swapped in after the check does not block the open.
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
            kind = _kind(info.st_mode)
            raise InputFileError(f"{path}: is {kind}; the {what} must be a regular file")
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise InputFileError(f"{path}: the {what} must be a regular file")
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise InputFileError(f"{path}: {what} not found", missing=True) from None
    except IsADirectoryError:
        raise InputFileError(f"{path}: is a folder; expected the {what} itself") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputFileError(
            f"{path}: {what} larger than {limit:,} bytes; refusing to read it (not one of ours?)"
        )
    return data


def decode_input(path: Path, data: bytes, what: str) -> str:
    """``data`` (read from ``path``) as UTF-8 text; :class:`InputFileError` giving line,
    column and byte of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"{path}: {what} is not UTF-8 text: byte 0x{data[exc.start]:02x} at "
            f"{_place(data, exc.start)}"
        ) from None


YAML_DEPTH_LIMIT = 200
"""How deep collections in a YAML input (eval file, cassette) may nest."""


def check_yaml_depth(text: str, loader: Any, limit: int = YAML_DEPTH_LIMIT) -> None:
    """``yaml.YAMLError`` when ``text`` nests collections deeper than ``limit`` levels.

    Read from the parser's event stream (libyaml's, with ``loader`` a ``CSafeLoader``),
    which does not recurse: composing such a document recurses once per level and, in some
    PyYAML builds (6.0, 6.0.1), overflows the C stack (a crash, not an exception). A YAML
    syntax error found on the way is raised as PyYAML raises it."""
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > limit:
                raise yaml.YAMLError(f"collections nest deeper than {limit} levels")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def read_input_text(path: Path, what: str, limit: int = 16 * 1024 * 1024) -> str:
    """:func:`read_input_bytes` then :func:`decode_input`: one error path for a text input."""
    return decode_input(path, read_input_bytes(path, what, limit), what)


# ---- folders --------------------------------------------------------------------------------


def _libc() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to ask
        return None


def _exchange(a: Path, b: Path) -> bool:
    """Swap paths ``a`` and ``b`` in one system call; False when this system cannot."""
    libc = _libc()
    if libc is None:
        return False
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        at_fdcwd, rename_exchange = -100, 2
        result = libc.renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    elif sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        rename_swap = 2
        result = libc.renamex_np(os.fsencode(a), os.fsencode(b), rename_swap)
    else:
        return False
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # the file system cannot exchange: fall back to two renames
    raise OSError(code, os.strerror(code), str(b))


def staging_folder(dest: Path) -> Path:
    """A fresh, empty staging folder beside ``dest`` (same file system, so the swap is a
    rename), named ``.recording-<name>-<random>``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{dest.name}-", dir=dest.parent))


def replace_tree(new: Path, dest: Path) -> None:
    """Put folder ``new`` at ``dest`` atomically, replacing what was there (the module
    docstring says how, and what a kill at any point leaves). ``new`` is gone afterwards."""
    if not dest.exists():
        os.rename(new, dest)
        _fsync_folder(dest.parent)
        return
    if _exchange(new, dest):
        _fsync_folder(dest.parent)
        shutil.rmtree(new, ignore_errors=True)  # the old set, now at the staging path
        return
    suffix = new.name.rsplit("-", 1)[-1]
    previous = dest.with_name(f"{PREVIOUS_PREFIX}{dest.name}-{suffix}")
    os.rename(dest, previous)
    try:
        os.rename(new, dest)
    except BaseException:
        os.rename(previous, dest)  # put the old set back before reporting the failure
        raise
    _fsync_folder(dest.parent)
    shutil.rmtree(previous, ignore_errors=True)


def leftovers(dest: Path) -> list[Path]:
    """Staging and previous folders of ``dest`` left beside it by an interrupted run (or
    belonging to a run in progress: only a holder of :func:`folder_lock` may remove them)."""
    if not dest.parent.is_dir():
        return []
    names = (f"{STAGING_PREFIX}{dest.name}-", f"{PREVIOUS_PREFIX}{dest.name}-")
    return sorted(p for p in dest.parent.iterdir() if p.name.startswith(names) and p.is_dir())


def recover_tree(dest: Path) -> list[str]:
    """Clean up after a run killed while replacing ``dest``; call only while holding
    :func:`folder_lock` for ``dest``. If ``dest`` is missing and a previous set is beside it,
    the previous set is put back; every other staging or previous folder is deleted.
    Returns one sentence per action, for the caller to print."""
    done: list[str] = []
    found = leftovers(dest)
    previous = [p for p in found if p.name.startswith(PREVIOUS_PREFIX)]
    if not dest.exists() and previous:
        newest = max(previous, key=lambda p: p.stat().st_mtime_ns)
        os.rename(newest, dest)
        found.remove(newest)
        done.append(
            f"restored {dest} from {newest.name}, left by a run killed while replacing it"
        )
    for path in found:
        shutil.rmtree(path, ignore_errors=True)
        done.append(f"removed {path.name}, left beside {dest} by an interrupted run")
    return done


# ---- locks ----------------------------------------------------------------------------------


LOCK_NAME = ".toolreplay.lock"


def lock_path(folder: Path, *, inside: bool = False) -> Path:
    """``<parent>/.<name>.lock`` (outside the folder, so swapping the folder keeps the lock;
    for cassette sets), or ``<folder>/.toolreplay.lock`` with ``inside`` (for an output folder
    whose files are replaced one by one, e.g. ``reports/``)."""
    folder = Path(folder)
    return folder / LOCK_NAME if inside else folder.parent / f".{folder.name}.lock"


@contextlib.contextmanager
def folder_lock(
    folder: Path, *, wait: float = 0.0, inside: bool = False, what: str = "writing"
) -> Iterator[None]:
    """Hold the lock of ``folder`` (:func:`lock_path`) for one writer at a time. Waits up to
    ``wait`` seconds for another holder, then raises :class:`LockedError` naming the folder,
    the lock file and ``what`` the other process is doing."""
    path = lock_path(Path(folder), inside=inside)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(path), timeout=wait, thread_local=False)
    try:
        lock.acquire()
    except filelock.Timeout:
        waited = f" (waited {wait:g} s)" if wait else ""
        raise LockedError(
            f"another toolreplay process is {what} {folder}{waited}; try again when it has "
            f"finished (lock file {path})"
        ) from None
    try:
        yield
    finally:
        lock.release()


# ---- signals --------------------------------------------------------------------------------


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the duration of the block (main thread only; a
    no-op elsewhere); a signal that arrived meanwhile is delivered when the block ends, so
    it interrupts before or after the block, never inside it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    saved: dict[signal.Signals, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        saved[sig] = signal.getsignal(sig)
        signal.signal(sig, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        for signum in dict.fromkeys(pending):
            handler = saved[signal.Signals(signum)]
            if callable(handler):
                handler(signum, None)  # e.g. raises KeyboardInterrupt
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)
