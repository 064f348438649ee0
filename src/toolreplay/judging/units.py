"""Units as written after a number (:class:`Unit`, kept with the rest of the study's data in
:mod:`toolreplay.judging.vocabulary`), and finding one by name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolreplay.judging.vocabulary import Unit, Vocabulary, resolve


def unit_named(
    name: str, units: Sequence[Unit] | None = None, vocabulary: Vocabulary | None = None
) -> Unit | None:
    """The unit called ``name`` in ``units`` (None: all of the vocabulary's; no vocabulary:
    the default study's), else the one whose pattern matches all of ``name`` (so a tool's
    ``"°C"`` or ``"mm"`` finds its unit); None when none does."""
    if units is None:
        units = resolve(vocabulary).units
    for u in units:
        if u.name == name:
            return u
    for u in units:
        if re.fullmatch(u.pattern, name.strip(), re.IGNORECASE):
            return u
    return None


__all__ = ["Unit", "unit_named"]
