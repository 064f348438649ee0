"""Groundings shared while one episode is assessed: the verdict and the failure classifier
ground the same answer against the same tool results with the same judge, and
:func:`toolreplay.judging.grounding.ground_answer` does that work once inside :func:`sharing`.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

_T = TypeVar("_T")

#: The groundings made inside the current :func:`sharing` block, by their arguments (the
#: transcript by identity, kept with the grounding so its id is not reused); None outside.
KEPT: contextvars.ContextVar[dict[Any, tuple[Any, Any]] | None] = contextvars.ContextVar(
    "toolreplay_groundings", default=None
)


@contextlib.contextmanager
def sharing() -> Iterator[None]:
    """Within the block, a grounding asked for again with the same answer, transcript (the
    same object), target, units and vocabulary is the one already made (groundings are
    immutable); what is kept is dropped when the block ends. A block inside another shares
    the outer one's (the judges of one episode, each assessing in a block of its own, inside
    the block its replay worker opens around them); per thread."""
    if KEPT.get() is not None:  # inside a block already: share it
        yield
        return
    token = KEPT.set({})
    try:
        yield
    finally:
        KEPT.reset(token)


def made_once(key: Any, anchor: Any, make: Callable[[], _T]) -> _T:
    """``make()``, or inside :func:`sharing` what it gave for ``key`` before in the block.
    ``anchor`` (an object whose ``id`` is in ``key``) is kept with it so that id is not reused
    meanwhile. An unhashable ``key`` (an eval file's question) is never kept."""
    kept = KEPT.get()
    if kept is not None:
        try:
            hash(key)
        except TypeError:
            kept = None
    if kept is None:
        return make()
    if key not in kept:
        kept[key] = (anchor, make())
    return kept[key][1]


__all__ = ["KEPT", "made_once", "sharing"]
