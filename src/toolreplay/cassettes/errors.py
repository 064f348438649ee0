"""Cassette errors: malformed files, requests not recorded, interactions left unplayed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # vcrpy is imported when recording (or a test's cassette) needs it
    pass


class CassetteError(ValueError):
    """A cassette or manifest file is missing or malformed; the message names the file
    (and the interaction, counted from 1)."""


class UnplayedInteractions(AssertionError):
    """The episode finished but the cassette holds recorded interactions it never requested."""


class CassetteMiss(RuntimeError):
    """Replay met a request that is not in the cassette. The message says which episode,
    what differs from the closest recorded request, and the command that re-records it."""
