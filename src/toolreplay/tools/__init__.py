"""Tools: toolsets (schemas + functions, validated arguments, faults as tool messages) and tools
from plain Python callables.
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
