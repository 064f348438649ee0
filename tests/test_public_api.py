"""The public API: every name re-exported from ``toolreplay`` resolves and is documented, and
``import toolreplay`` alone imports none of the heavy dependencies."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

import toolreplay


@pytest.mark.parametrize("name", [n for n in toolreplay.__all__ if n != "__version__"])
def test_every_public_name_resolves_and_is_documented(name: str) -> None:
    obj = getattr(toolreplay, name)
    if callable(obj):
        assert (obj.__doc__ or "").strip(), f"{name} has no docstring"
    assert name in dir(toolreplay)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = toolreplay.nope  # type: ignore[attr-defined]


def test_version_comes_from_package_metadata() -> None:
    assert toolreplay.__version__ == version("toolreplay")


def test_import_is_cheap() -> None:
    code = (
        "import sys, toolreplay\n"
        "heavy = [m for m in ('openai', 'httpx', 'vcr', 'pydantic', 'requests', 'yaml', 'jinja2')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
