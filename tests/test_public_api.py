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


def test_studies_are_public_and_the_weather_study_is_not_the_api() -> None:
    """``Study`` and ``register_study`` are exported; the weather study's own names stay in
    ``toolreplay.study.weather``."""
    from toolreplay.studies import Study, register_study
    from toolreplay.study.weather import (
        STUDY,
        Heuristics,
        OpenMeteoClient,
        atomic_toolset,
        oneshot_toolset,
    )
    from toolreplay.study.weather.toolsets import oneshot_toolset as defined

    assert toolreplay.Study is Study and toolreplay.register_study is register_study
    for name in ("Heuristics", "oneshot_toolset", "atomic_toolset", "OpenMeteoClient"):
        assert name not in toolreplay.__all__
        with pytest.raises(AttributeError):
            getattr(toolreplay, name)
    assert all(callable(x) for x in (OpenMeteoClient, Heuristics, atomic_toolset, oneshot_toolset))
    assert oneshot_toolset is defined and isinstance(STUDY, Study)
