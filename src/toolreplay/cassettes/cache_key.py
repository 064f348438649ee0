"""The parse cache folder's key: each disk entry of the parse cache
(:class:`toolreplay.cassettes.store.ParseCache`) carries an HMAC-SHA256 made with a key only
the user running can read (``.key`` in the folder), so an entry planted or edited by someone
else is never trusted."""

from __future__ import annotations

import hmac
import os
import stat
from pathlib import Path


def entry_mac(key: bytes, head: bytes, payload: bytes) -> bytes:
    """The HMAC-SHA256 (32 bytes) of a disk entry: over its head (the cassette's sha256) and
    its payload, with the folder's key."""
    mac = hmac.new(key, head, "sha256")
    mac.update(payload)
    return mac.digest()


#: The parse cache folder's HMAC key file (32 random bytes, mode 0600).
KEY_FILE = ".key"


def _read_key(path: Path) -> bytes | None:
    """The key in ``path`` when it is a regular file (not a link) of 32 bytes that only its
    owner, the user running, can read or write; None otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != 32:
            return None
        if hasattr(os, "geteuid") and (info.st_uid != os.geteuid() or info.st_mode & 0o077):
            return None
        key = os.read(fd, 33)
    except OSError:
        return None
    finally:
        os.close(fd)
    return key if len(key) == 32 else None


def folder_key(folder: Path) -> bytes | None:
    """The HMAC key of the parse cache in ``folder``: read from ``folder/.key``, else 32 new
    random bytes written there (mode 0600, created whole: a temporary file linked into place,
    so a concurrent process's key wins and is used; a key file that is not a valid key, a
    link or someone else's, is replaced). None when no key can be read or written there."""
    import tempfile

    path = folder / KEY_FILE
    key = _read_key(path)
    if key is not None:
        return key
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".key")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(32))
            try:
                os.link(tmp, path)  # only when there is none
            except FileExistsError:
                if _read_key(path) is None:  # not a key: ours replaces it
                    os.replace(tmp, path)
            except OSError:  # no hard links here
                os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError:
        return None
    return _read_key(path)


__all__ = ["KEY_FILE", "entry_mac", "folder_key"]
