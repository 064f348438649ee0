"""Which tool call the current thread is executing.

The hosts run the tool calls of one assistant message concurrently. Each call runs inside
:func:`executing`, which tags the thread with ``(batch, index)``: ``batch`` numbers the
host's tool rounds (process-wide, increasing), ``index`` is the call's position in its
message. A recording reads the tag of every HTTP request (:func:`current`) to store a round's
interactions in call order, whatever order the threads ran in.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_local = threading.local()


_batches = itertools.count(1)


_batches_lock = threading.Lock()


def new_batch() -> int:
    """A number for one tool round, unique in the process."""
    with _batches_lock:
        return next(_batches)


def current() -> tuple[int, int] | None:
    """``(batch, index)`` of the tool call this thread is executing, or None."""
    tag: tuple[int, int] | None = getattr(_local, "tag", None)
    return tag


@contextmanager
def executing(batch: int, index: int) -> Iterator[None]:
    """Tag this thread as executing call ``index`` of tool round ``batch``."""
    previous = current()
    _local.tag = (batch, index)
    try:
        yield
    finally:
        _local.tag = previous
