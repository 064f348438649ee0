"""Tools: toolsets (schemas + functions, validated arguments, faults as tool messages) and tools
from plain Python callables.
"""

from __future__ import annotations

import importlib
from typing import Any

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "Tool": "functions",
    "ToolError": "toolset",
    "Toolset": "toolset",
    "is_cassette_miss": "toolset",
    "tool": "functions",
    "tool_schema": "functions",
    "toolset_from_functions": "functions",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
