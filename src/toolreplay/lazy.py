"""Names of a package loaded from their modules on first use, so importing the package stays
cheap (no heavy dependency imported until a name needs it). Every subpackage's ``__init__``
declares what other packages may use this way; plain code, importing nothing of toolreplay."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` (its ``__name__``): a name of ``exports``
    (name → module relative to the package) is imported from its module when first asked
    for and kept in ``namespace`` (the package's ``globals()``); any other name is an
    :class:`AttributeError` naming the package."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *exports])

    return __getattr__, __dir__
