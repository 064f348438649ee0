"""examples/unit_converter: a user's own loop (a unit-converter tool behind an HTTP API) tested
through the pytest plugin. It replays offline with the network blocked, re-records with
``--record-mode=rewrite`` against loopback servers to the same bytes, and a changed request or
a skipped one fails with toolreplay's explanation."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "unit_converter"
CASSETTES = EXAMPLE / "cassettes" / "test_converter"
TESTS = 2


def _servers_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unit_converter_servers", EXAMPLE / "servers.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def copy(pytester: pytest.Pytester) -> Path:
    """The example copied into pytester's folder: its own ``pyproject.toml`` (which opts the
    suite in with ``toolreplay_cassettes = true``) and no ini file above it."""
    target = pytester.path / "unit_converter"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture
def servers(loopback: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    with _servers_module().servers() as env:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        yield env


@pytest.mark.slow
def test_example_replays_offline_with_the_network_blocked(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        str(EXAMPLE), "--record-mode=none", "--block-network", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=TESTS)


def test_example_opts_in_with_the_ini_option(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig(str(EXAMPLE))
    assert config.inipath == EXAMPLE / "pyproject.toml"
    assert config.getini("toolreplay_cassettes") is True


@pytest.mark.slow
def test_example_rerecords_to_the_same_bytes(
    pytester: pytest.Pytester, copy: Path, servers: dict[str, str]
) -> None:
    for cassette in (copy / "cassettes" / "test_converter").iterdir():
        cassette.write_text("not a cassette", encoding="utf-8")  # rewrite must not read these
    result = pytester.runpytest(str(copy), "--record-mode=rewrite")
    result.assert_outcomes(passed=TESTS)
    for committed in CASSETTES.iterdir():
        fresh = copy / "cassettes" / "test_converter" / committed.name
        assert fresh.read_bytes() == committed.read_bytes(), committed.name
    # and the fresh cassettes replay with the network blocked
    result = pytester.runpytest(str(copy), "--record-mode=none", "--block-network")
    result.assert_outcomes(passed=TESTS)


def test_a_changed_request_is_an_explained_miss(pytester: pytest.Pytester, copy: Path) -> None:
    test_file = copy / "test_converter.py"
    text = test_file.read_text(encoding="utf-8")
    test_file.write_text(text.replace("26.2 mi in km", "26.2 mi in  km"), encoding="utf-8")
    result = pytester.runpytest(str(copy), "--record-mode=none", "--block-network", "-k", "miles")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "CassetteMiss: cassette miss in episode" in out
    assert "POST /v1/chat/completions" in out and "0 of 3 recorded interactions played" in out
    assert "message 2 (user) content differs" in out
    assert "test_miles_to_kilometres --record-mode=rewrite" in out
    assert "Connection error" not in out


@pytest.mark.slow
def test_an_unplayed_interaction_fails_the_test(pytester: pytest.Pytester, copy: Path) -> None:
    cassette = copy / "cassettes" / "test_converter" / "test_miles_to_kilometres.yaml"
    text = cassette.read_text(encoding="utf-8")
    _head, interactions = text.split("interactions:\n", 1)
    last = "- request:" + interactions.rsplit("- request:", 1)[1]
    cassette.write_text(text + last, encoding="utf-8")
    result = pytester.runpytest(str(copy), "--record-mode=none", "-k", "miles")
    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert "left 1 recorded interaction(s)" in out
    assert "interaction 4: POST /v1/chat/completions" in out

    # opting out with the marker
    test_file = copy / "test_converter.py"
    text = test_file.read_text(encoding="utf-8")
    marked = text.replace(
        "@pytest.mark.vcr\ndef test_miles",
        "@pytest.mark.allow_unplayed\n@pytest.mark.vcr\ndef test_miles",
    )
    test_file.write_text(marked, encoding="utf-8")
    result = pytester.runpytest(str(copy), "--record-mode=none", "-k", "miles")
    result.assert_outcomes(passed=1)
