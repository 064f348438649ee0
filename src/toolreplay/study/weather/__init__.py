"""The weather study: its toolsets (oneshot with the three reference heuristics, atomic), the Open-
Meteo client, the weather measures the judge reads, its baseline audit and its test doubles.

Its public names are importable from here, loaded on first use so that importing the package
(as the entry point ``toolreplay.study.weather.study:STUDY`` does) stays cheap:
:data:`STUDY`, :func:`oneshot_toolset`, :func:`atomic_toolset`, :class:`Heuristics` and
:class:`OpenMeteoClient`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> defining module (relative to this package).
_EXPORTS: dict[str, str] = {
    "STUDY": "study",
    "Heuristics": "toolsets",
    "oneshot_toolset": "toolsets",
    "atomic_toolset": "toolsets",
    "OpenMeteoClient": "openmeteo",
}

__all__ = ["STUDY", "Heuristics", "OpenMeteoClient", "atomic_toolset", "oneshot_toolset"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from toolreplay.study.weather.openmeteo import OpenMeteoClient
    from toolreplay.study.weather.study import STUDY
    from toolreplay.study.weather.toolsets import Heuristics, atomic_toolset, oneshot_toolset
