"""Replacing a folder without losing it: atomic folder swaps, stale leftovers, locks, signals.

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

Files written one by one (atomically) and output folders published as one generation are
:mod:`toolreplay.outputs`' part.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import filelock

STAGING_PREFIX = ".recording-"
PREVIOUS_PREFIX = ".previous-"


class LockedError(RuntimeError):
    """Another process is writing the same folder; the message names the folder and lock."""


def fsync_folder(folder: Path) -> None:
    """Flush ``folder``'s entries (a rename into it) to disk; a no-op on Windows or where
    the folder cannot be opened."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


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
    folder = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{dest.name}-", dir=dest.parent))
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(folder, 0o777 & ~mask)  # the usual permissions, not mkdtemp's owner-only 0o700
    return folder


def _remove_tree(path: Path) -> bool:
    """Remove ``path``: a symbolic link itself (never what it points to: a set that was a
    link to a folder elsewhere), else the folder and everything in it. Whether it is gone."""
    if path.is_symlink():
        with contextlib.suppress(OSError):
            path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)
    return not os.path.lexists(path)


def replace_tree(new: Path, dest: Path) -> None:
    """Put folder ``new`` at ``dest`` atomically, replacing what was there (the module
    docstring says how, and what a kill at any point leaves). ``new`` is gone afterwards."""
    if not dest.exists():
        os.rename(new, dest)
        fsync_folder(dest.parent)
        return
    if _exchange(new, dest):
        fsync_folder(dest.parent)
        _remove_tree(new)  # the old set (or the link that was the set), now at the staging path
        return
    suffix = new.name.rsplit("-", 1)[-1]
    previous = dest.with_name(f"{PREVIOUS_PREFIX}{dest.name}-{suffix}")
    os.rename(dest, previous)
    try:
        os.rename(new, dest)
    except BaseException:
        os.rename(previous, dest)  # put the old set back before reporting the failure
        raise
    fsync_folder(dest.parent)
    _remove_tree(previous)


def leftovers(dest: Path) -> list[Path]:
    """Staging and previous folders of ``dest`` left beside it by an interrupted run (or
    belonging to a run in progress: only a holder of :func:`folder_lock` may remove them)."""
    if not dest.parent.is_dir():
        return []
    names = (f"{STAGING_PREFIX}{dest.name}-", f"{PREVIOUS_PREFIX}{dest.name}-")
    return sorted(
        p
        for p in dest.parent.iterdir()
        if p.name.startswith(names) and (p.is_dir() or p.is_symlink())
    )


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
        if _remove_tree(path):
            done.append(f"removed {path.name}, left beside {dest} by an interrupted run")
        else:
            done.append(f"could not remove {path.name} beside {dest}: remove it by hand")
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
