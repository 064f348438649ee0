"""Chat models: the protocol the hosts call (base), endpoints and keys (endpoint), the openai SDK
client (openai_chat), scripted and in-process models for tests.
"""

from __future__ import annotations

import importlib
from typing import Any

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "ChatModel": "base",
    "EndpointError": "endpoint",
    "KEY_VARIABLES": "endpoint",
    "ModelSettings": "base",
    "OpenAIChatModel": "openai_chat",
    "ScriptedModel": "scripted",
    "StandinModel": "inprocess",
    "model_settings": "endpoint",
    "reply_from_completion": "inprocess",
    "resolve_endpoint": "endpoint",
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
