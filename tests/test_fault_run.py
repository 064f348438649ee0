"""The scripted fault run (issue 34): every example's cassettes re-recorded with
``--record-mode=rewrite`` while the model endpoint is down, while the endpoint needs a key
nobody set, and killed (SIGKILL) at a random moment of a working re-recording. After each
fault every cassette is still there (byte for byte after the two failures), and at the end
the example replays offline with the network blocked.

The faults come from a small pytest plugin loaded into the example's session (``-p``): it
hands the example's ``toolreplay_chat_server`` a server whose URLs point at a closed port
(``down``) or at a host that is not on loopback, whose key is not set (``nokey``).
``examples/unit_converter`` reads its endpoints from the environment, so there the same faults
are environment variables."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO

pytestmark = pytest.mark.slow  # 4 pytest sessions for each of 7 examples

FAULTS_PLUGIN = '''\
"""Take the scripted model away: TOOLREPLAY_FAULT=down (a closed port) or nokey (a host that
is not on loopback and whose key is not set)."""
import contextlib
import os

import toolreplay.doubles.scripted as scripted

ROOTS = {"down": "http://127.0.0.1:9", "nokey": "https://model.example.invalid"}
FAULT = os.environ.get("TOOLREPLAY_FAULT", "")
if FAULT in ROOTS:
    real = scripted.scripted_chat_server

    @contextlib.contextmanager
    def broken(*args, **kwargs):
        with real(*args, **kwargs) as server:
            server.root_url = ROOTS[FAULT]
            server.base_url = ROOTS[FAULT] + "/v1"
            yield server

    scripted.scripted_chat_server = broken
'''

#: Each example and the module its tests need (skipped without it).
EXAMPLES = {
    "stock_agent": "pydantic_ai",
    "streamed_loop": "openai",
    "unit_converter": "openai",
    "agents_responses": "agents",
    "anthropic_agent": "anthropic",
    "pydantic_ai_responses": "pydantic_ai",
    "gemini_agent": "google.genai",
}

#: unit_converter's endpoints, by fault (it reads them from the environment).
UNIT_CONVERTER = {
    "down": {"TOOLREPLAY_BASE_URL": "http://127.0.0.1:9/v1", "CONVERTER_URL": "http://127.0.0.1:9"},
    "nokey": {"TOOLREPLAY_BASE_URL": "https://model.example.invalid/v1",
              "CONVERTER_URL": "http://127.0.0.1:9"},
}  # fmt: skip


def _cassettes(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``'s cassettes, hidden ones included, by relative path."""
    root = folder / "cassettes"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp), str(REPO / "src"), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _pytest(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
            "toolreplay_faults", *args]  # fmt: skip


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_a_faulty_rewrite_never_costs_a_cassette(
    example: str, tmp_path: Path, loopback: None
) -> None:
    pytest.importorskip(EXAMPLES[example])
    (tmp_path / "toolreplay_faults.py").write_text(FAULTS_PLUGIN, encoding="utf-8")
    copy = tmp_path / example
    shutil.copytree(
        REPO / "examples" / example, copy, ignore=shutil.ignore_patterns("__pycache__", "report")
    )
    before = _cassettes(copy)
    assert before
    for fault in ("down", "nokey"):
        extra = UNIT_CONVERTER[fault] if example == "unit_converter" else {}
        env = _env(tmp_path, TOOLREPLAY_FAULT=fault, **extra)
        done = subprocess.run(
            _pytest("--record-mode=rewrite"),
            cwd=copy, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode != 0, (fault, done.stdout[-2000:])
        assert _cassettes(copy) == before, (fault, done.stdout[-2000:])
    # a working re-recording killed at a random moment (seeded by the example's name)
    delay = random.Random(example).uniform(0.5, 4.0)
    env = _env(tmp_path)
    with contextlib.ExitStack() as stack:
        if example == "unit_converter":  # its servers, as its own re-recording test starts
            env.update(stack.enter_context(_unit_converter_servers()))
        with subprocess.Popen(
            _pytest("--record-mode=rewrite"), cwd=copy, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ) as process:  # fmt: skip
            time.sleep(delay)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=60)
    visible = {name for name in _cassettes(copy) if not Path(name).name.startswith(".")}
    assert visible == {name for name in before if not Path(name).name.startswith(".")}
    env = _env(tmp_path)
    replay = subprocess.run(
        _pytest("--record-mode=none", "--block-network"),
        cwd=copy, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stdout[-3000:]
    leftovers = [n for n in _cassettes(copy) if n.endswith((".toolreplay-old", ".toolreplay-new"))]
    assert leftovers == []  # the replay cleared what the kill left


def _unit_converter_servers() -> Any:
    """unit_converter's loopback servers (its ``servers()``: a context giving their URLs)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "unit_converter_servers_faults", REPO / "examples" / "unit_converter" / "servers.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.servers()
