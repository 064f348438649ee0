"""pytest plugin (entry point ``pytest11``): toolreplay's cassettes for your own tests.

Loaded automatically when toolreplay is installed, and **opt-in**: it changes nothing for a test
that does not ask. With pytest-recording installed too (``pip install 'toolreplay[test]'``), a
``@pytest.mark.vcr`` test gets toolreplay's cassettes when

- it, its class or its module (``pytestmark``) is marked ``@pytest.mark.toolreplay``
  (``@pytest.mark.toolreplay(False)`` opts a test out under the ini option), or
- it uses a fixture that needs them (``chat_model``, ``toolreplay_model_settings``), or
- the ini option ``toolreplay_cassettes = true`` opts the whole suite in.

Every other ``@pytest.mark.vcr`` test runs exactly as pytest-recording runs it without
toolreplay (vcrpy's serializer, matchers and headers; no unplayed check). A test that opts in
gets:

- toolreplay's **readable cassettes**: YAML with JSON bodies stored parsed and non-ASCII text
  unescaped, header names lower-cased, only ``content-type`` headers kept (authorization, API
  keys, cookies, ``x-stainless-*``, dates and request ids never reach a file), secret query
  parameters (:data:`SECRET_QUERY_PARAMETERS`) dropped, loopback ports dropped from URIs;
- toolreplay's **matching**: method, path, query and the JSON body compared as parsed JSON
  (host and port are not compared, so a cassette recorded against a server on loopback
  replays under the real URL);
- a **completeness check**: with record mode ``none`` a test that leaves a recorded
  interaction unplayed fails (mark it ``@pytest.mark.allow_unplayed`` to opt out);
- **explained misses**: a request that is not in the cassette fails the test with
  :class:`~toolreplay.cassettes.errors.CassetteMiss` — what differs from the closest recorded
  request (a message, a tool schema, a parameter) and the command that re-records the test —
  whichever client sent it: httpx, httpx2 (vcrpy patches both) or requests, and whether the
  SDK raised the miss as itself or wrapped it in its connection error;
  a request under a cassette file that does not exist fails with
  :class:`~toolreplay.cassettes.errors.CassetteError` "cassette missing: PATH does not exist";
- cassettes read through the **checked loader** (:func:`~toolreplay.cassettes.store.
  load_cassette`): a malformed one fails the test with one line naming the file and the
  interaction; another serializer's shape (pydantic-ai's) is named, with ``toolreplay
  convert``;
- pytest-recording's ``--record-mode`` (``none`` by default; ``rewrite`` re-records).

``--toolreplay-report DIR`` (with ``--toolreplay-eval PATH``) writes results.json and
index.html for the episodes the session replayed, pytest-xdist's workers included
(:mod:`toolreplay.plugin.report`).

These are set as defaults on the VCR that pytest-recording builds for each test that opts in; a
``vcr_config`` fixture of your own overrides them key by key (:func:`default_vcr_config`
returns them as a dict).

Fixtures:

- ``toolreplay_model_settings``: :class:`~toolreplay.models.base.ModelSettings`: in record
  mode ``none`` the base URL and model of the test's own cassette (no environment needed, no
  key read); when recording, from the environment (:data:`toolreplay.plugin.settings.
  RECORDING_SETTINGS`: ``TOOLREPLAY_BASE_URL``, ``TOOLREPLAY_MODEL``, the key paired with its
  endpoint as :func:`~toolreplay.models.endpoint.resolve_endpoint` says: ``DASHSCOPE_API_KEY``
  for DashScope, ``OPENAI_API_KEY`` for the OpenAI API or ``$OPENAI_BASE_URL``, and for any
  other endpoint the variable ``TOOLREPLAY_API_KEY_ENV`` names), an error naming the variable
  to set;
- ``chat_model``: an :class:`~toolreplay.models.openai_chat.OpenAIChatModel` with those
  settings over an ``httpx.Client`` that ignores proxy settings (every openai SDK in range
  takes one); under a cassette it replays. Your own SDK clients may be httpx's or httpx2's
  (anthropic 2.x takes only httpx2's; docs/own-agent.md has the table);
- ``toolreplay_chat_server``: starts a scripted OpenAI-compatible model on loopback to record
  against (:mod:`toolreplay.doubles.scripted`; streams when asked) and points
  ``TOOLREPLAY_BASE_URL``/``TOOLREPLAY_MODEL`` at it for the test;
- ``http_session``: a ``requests.Session`` that ignores proxy settings, for your own tools;
- ``transcript_snapshot``: syrupy's ``snapshot`` for
  :func:`toolreplay.plugin.snapshots.normalise_episode` (readable JSON, volatile values left
  out; needs syrupy).

The weather study adds ``open_meteo_client`` (its own plugin,
:mod:`toolreplay.study.weather.fixtures`).
"""

from __future__ import annotations

from typing import Any

import pytest

from toolreplay.plugin.config import (
    INI_OPTION,
    MARKER,
    SECRET_QUERY_PARAMETERS,
    default_vcr_config,
    uses_toolreplay,
)

__all__ = ["SECRET_QUERY_PARAMETERS", "default_vcr_config", "uses_toolreplay"]


def pytest_addoption(parser: pytest.Parser) -> None:
    from toolreplay.plugin import report

    report.addoption(parser)
    parser.addini(
        INI_OPTION,
        type="bool",
        default=False,
        help="toolreplay: give every @pytest.mark.vcr test toolreplay's cassettes (readable "
        "serializer, JSON-body matching, header filter, unplayed check, explained misses); "
        "without it only tests marked @pytest.mark.toolreplay or using chat_model get them.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: give this @pytest.mark.vcr test (class, module) toolreplay's cassettes: "
        "readable serializer, JSON-body matching, header filter, unplayed check, explained "
        f"misses. {MARKER}(False) opts out under the ini option {INI_OPTION} = true.",
    )
    config.addinivalue_line(
        "markers",
        "allow_unplayed: the test may leave recorded interactions of its cassette unplayed.",
    )
    from toolreplay.plugin import report

    report.configure(config)
    if config.pluginmanager.hasplugin("recording"):  # pytest-recording
        from toolreplay.plugin import recording as _pytest_recording

        config.pluginmanager.register(_pytest_recording, "toolreplay-recording")
        from toolreplay.plugin import transaction as _transaction

        config.pluginmanager.register(_transaction, "toolreplay-transaction")


_SESSION = pytest.StashKey[pytest.Session]()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Kept so the report step can make the session fail when it cannot write the report."""
    session.config.stash[_SESSION] = session


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: send the replayed tests to the controller's report."""
    from toolreplay.plugin.report import send_to_controller

    send_to_controller(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist's controller: gather a worker's replayed tests for the report."""
    from toolreplay.plugin.report import receive_from_worker

    receive_from_worker(node.config, getattr(node, "workeroutput", {}))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """``--toolreplay-report DIR``: write the report of the replayed episodes
    (:mod:`toolreplay.plugin.report`)."""
    from toolreplay.plugin.report import write_session_report

    try:
        line = write_session_report(config)
    except (ValueError, OSError) as exc:  # a bad eval file, nothing readable, a bad path
        terminalreporter.write_line(f"toolreplay: report not written: {exc}", red=True)
        session = config.stash.get(_SESSION, None)
        if session is not None and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # asked for, not written: loud
        return
    for text in (line or "").splitlines():
        terminalreporter.write_line(text, red=text.startswith("toolreplay: not read"))


@pytest.fixture
def transcript_snapshot(snapshot: Any) -> Any:
    """syrupy's ``snapshot`` for :func:`toolreplay.plugin.snapshots.normalise_episode`: one
    readable JSON file per snapshot (non-ASCII unescaped, keys sorted), without the values
    that change with every recording (:data:`~toolreplay.plugin.snapshots.VOLATILE_FIELDS`).
    Needs syrupy."""
    from syrupy.extensions.json import JSONSnapshotExtension
    from syrupy.filters import props

    from toolreplay.plugin.snapshots import VOLATILE_FIELDS

    return snapshot.with_defaults(
        extension_class=JSONSnapshotExtension, exclude=props(*VOLATILE_FIELDS)
    )
