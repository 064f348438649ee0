"""Shared fixtures. Tests never touch the network: pytest runs with ``--block-network``
(pytest-recording) and cassettes replay with record mode ``none``; the only sockets are the
stand-in and fixture servers on loopback, started by the tests that record."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any, cast

# httpx imports httpcore when it first builds a transport and keeps a map of httpcore's
# exception classes. A test that runs pytest in-process (pytester) drops every module its
# inner run imported; if httpcore were first imported there, a later import would make new
# exception classes that httpx's map no longer knows, and a refused connection would escape
# as a raw httpcore error (openai 1.x/2.x hide it; 3.x does not). Imported here, it stays.
import httpcore  # noqa: F401
import pytest

from toolreplay.cassettes.manifest import read_manifest
from toolreplay.cassettes.vcr import RecordMode
from toolreplay.evals import EvalSuite, load_eval
from toolreplay.judging.verdicts import FULL_JUDGE
from toolreplay.results.build import build_results
from toolreplay.results.format import Results
from toolreplay.runs.configuration import study_configurations
from toolreplay.runs.replay import replay_set
from toolreplay.wire.episode import Episode

REPO = Path(__file__).resolve().parents[1]
EVAL_FILE = REPO / "evals" / "weather.yaml"
REFERENCE = REPO / "cassettes" / "reference"
HARD_EVAL_FILE = REPO / "evals" / "weather-hard.yaml"
#: A key-like value put in the environment of the shared runs; it must reach no output.
KEY_MARKER = "-".join(["sk", "never", "read", "0123456789abcdef"])  # built: no key literal

pytest_plugins = ("pytester",)

# The parse cache goes to a folder of this test run's (each xdist worker its own), never to
# the user's ~/.cache; subprocesses the tests start inherit it.
os.environ["TOOLREPLAY_CACHE_DIR"] = tempfile.mkdtemp(prefix="toolreplay-test-cache-")

@pytest.fixture(scope="session")
def suite() -> EvalSuite:
    return load_eval(EVAL_FILE)


@pytest.fixture
def reference_copy(tmp_path: Path) -> Path:
    """A copy of the reference set to edit (a cassette, the manifest) in one test."""
    target = tmp_path / "reference"
    shutil.copytree(REFERENCE, target)
    return target


def replay_mode(record_mode: str) -> RecordMode:
    """pytest's ``--record-mode`` (pytest-recording) for the project's own replays; ``rewrite``
    (delete, then record) becomes ``all``. The default, ``none``, sends nothing."""
    return cast(RecordMode, "all" if record_mode == "rewrite" else record_mode)


@pytest.fixture(scope="session")
def reference_episodes(suite: EvalSuite, record_mode: str) -> dict[tuple[str, str], Episode]:
    """Every committed study episode, replayed once per test session (with ``--record-mode``)."""
    episodes = replay_set(
        REFERENCE, suite, study_configurations(suite), record_mode=replay_mode(record_mode)
    )
    return {(e.configuration, e.question_id): e for e in episodes}


@pytest.fixture(scope="session")
def reference_results(suite: EvalSuite, reference_episodes: dict) -> Results:
    names = [c.name for c in study_configurations(suite)]
    episodes = list(reference_episodes.values())
    return build_results(read_manifest(REFERENCE), episodes, names, FULL_JUDGE, suite.by_id)


def committed_bytes(path: Path) -> bytes:
    """The committed content of ``path`` (in the repository): git's ``HEAD`` version in a
    checkout, so a `toolreplay run` of the README (which writes reports/ without the mutation
    section) does not make the committed report look stale; the file itself otherwise."""
    import subprocess

    relative = path.resolve().relative_to(REPO).as_posix()
    try:
        shown = subprocess.run(
            ["git", "show", f"HEAD:{relative}"], cwd=REPO, capture_output=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return path.read_bytes()
    return shown.stdout if shown.returncode == 0 else path.read_bytes()


def with_summaries(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` (a results document a test edited: episodes added, verdicts flipped) with each
    configuration's trial-1 summary recomputed by the builder
    (:func:`toolreplay.results.build.summarize`), as a run would have written it; `report`
    and `diff` refuse a summary that disagrees with its episodes."""
    from toolreplay.results.build import summarize
    from toolreplay.results.format import as_results

    names = [c["name"] for c in doc["configurations"]]
    fresh = {s.name: s for s in summarize(as_results(doc).episodes, names)}
    for c in doc["configurations"]:
        summary = fresh[c["name"]]
        for field in ("passed", "total", "avg_rounds", "avg_tool_calls", "recorded_wall_time_s",
                      "avg_tokens", "stop_reasons", "failure_modes"):  # fmt: skip
            c[field] = getattr(summary, field)
    return doc


def _cli_run(out: Path, *args: str) -> Any:
    from typer.testing import CliRunner

    from toolreplay.cli.main import app

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)  # results name the eval file relative to the working folder
        mp.setenv("DASHSCOPE_API_KEY", KEY_MARKER)
        mp.setenv("OPENAI_API_KEY", KEY_MARKER)
        return CliRunner().invoke(
            app, ["run", *args, "--cassettes", str(REPO / "cassettes"), "--out", str(out)]
        )


@pytest.fixture(scope="session")
def committed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """`toolreplay run` on the committed reference set (every trial), once per session:
    ``(CLI result, folder holding results.json and index.html)``. Replaying every trial of
    every episode takes a while; tests that need the whole run share this one."""
    out = tmp_path_factory.mktemp("committed-run")
    # --mutate: the committed reports/ carries the mutation score (tools/regenerate-reports)
    return _cli_run(out, "--eval", str(EVAL_FILE), "--mutate"), out


@pytest.fixture(scope="session")
def hard_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """`toolreplay run --eval evals/weather-hard.yaml --set hard`, once per session."""
    out = tmp_path_factory.mktemp("hard-run")
    return _cli_run(out, "--eval", str(HARD_EVAL_FILE), "--set", "hard"), out


def _loopback_works() -> bool:
    server = socket.socket()
    try:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=2):
            return True
    except OSError:
        return False
    finally:
        server.close()


def _bring_up_loopback() -> None:
    if not _loopback_works():
        subprocess.run(["ip", "link", "set", "dev", "lo", "up"], capture_output=True, check=False)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Bring loopback up in a fresh network namespace (``unshare --net``, as the newcomer's
    check runs the README's ``pytest``) before any test, in every pytest-xdist worker: the
    tests serving a scripted model on ``127.0.0.1`` must not depend on a test that asked for
    :func:`loopback` having run first in that process (``lo`` is up or down for the whole
    namespace). Where it cannot be (not root), the :func:`loopback` tests skip."""
    del session
    _bring_up_loopback()


@pytest.fixture(scope="session")
def loopback() -> None:
    """Loopback must carry traffic for the recording tests. In a fresh network namespace
    (``unshare --net``) ``lo`` starts down: bring it up there (root only), else skip."""
    _bring_up_loopback()
    if not _loopback_works():
        pytest.skip("loopback interface is down and cannot be brought up here")


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts in the repository root, wherever pytest was started from
    (``cd / && pytest <repo>/tests``): commands printed in messages name paths relative to
    it, as a user running from the root sees them. Tests that need another folder chdir."""
    monkeypatch.chdir(REPO)


PROXY_VARIABLES = ("ALL_PROXY", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests talk only to loopback servers: a proxy in the caller's environment must not
    reroute them (replay itself ignores the environment; the live recording path does not)."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def default_workers(config: pytest.Config) -> int:
    """How many pytest-xdist workers a run gets without asking: the README's ``pytest`` (no
    paths named, so the ``testpaths`` of ``pyproject.toml``) runs on every core the plugin
    counts (``-n auto``; ``PYTEST_XDIST_AUTO_NUM_WORKERS`` overrides it). 0, one process, when
    the plugin is absent or blocked (``-p no:xdist``), ``-n``/``--dist``/``--tx`` is given
    (``-n 0`` too), paths or node ids are named, or the run needs one process: ``--pdb``,
    ``--trace``, ``-s``, ``--sw``, ``--snapshot-update``, a ``--record-mode`` other than
    ``none``."""
    option = config.option
    if not config.pluginmanager.has_plugin("xdist") or hasattr(config, "workerinput"):
        return 0
    if getattr(option, "numprocesses", 0) is not None or option.dist != "no" or option.tx:
        return 0
    if config.args_source is not pytest.Config.ArgsSource.TESTPATHS:
        return 0
    alone = (option.usepdb, option.trace, option.capture == "no", option.collectonly,
             getattr(option, "stepwise", False), getattr(option, "update_snapshots", False),
             (getattr(option, "record_mode", None) or "none") != "none")  # fmt: skip
    if any(alone):
        return 0
    workers = int(config.hook.pytest_xdist_auto_num_workers(config=config))
    return workers if workers > 1 else 0


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Turn on pytest-xdist for :func:`default_workers` (as ``-n auto --dist loadfile`` would,
    before the plugin reads its options: a module's tests, and so its module-scoped fixtures,
    stay in one worker). pytest calls this hook of an initial conftest only, so an inner run
    (pytester, a subprocess on an example) never inherits it."""
    workers = default_workers(config)
    if workers:
        config.option.numprocesses = workers
        config.option.dist = "loadfile"
        config.option.tx = ["popen"] * workers


def replay_reference_episode(config_name: str, question_id: str) -> Any:
    """The reference set's episode of ``config_name`` × ``question_id``, replayed in this
    process (the parse cache in use): what the parse-cache tests compare."""
    from toolreplay.cassettes.manifest import read_manifest
    from toolreplay.evals import load_eval
    from toolreplay.runs.configuration import study_configurations
    from toolreplay.runs.episode import replay_clients, replay_episode

    suite = load_eval(EVAL_FILE)
    config = next(c for c in study_configurations(suite) if c.name == config_name)
    manifest = read_manifest(REFERENCE)
    with replay_clients() as (http, session):
        return replay_episode(
            REFERENCE, manifest, suite, config, suite.question(question_id), http=http,
            session=session,
        )
