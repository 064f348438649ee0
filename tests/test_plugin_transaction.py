"""Recording under pytest is a transaction (issue 34): with ``--record-mode=rewrite`` a test's
cassette is replaced only when its recording completed. A failing test, an endpoint that is
down, a skip, or a run killed mid-recording keep the old cassette (and say so); two tests
writing one cassette are refused, naming both (serial and under pytest-xdist)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # pytest sessions against a server on loopback

TESTS = """\
import os

import pytest
import requests

pytestmark = [pytest.mark.vcr, pytest.mark.toolreplay]


@pytest.mark.parametrize("n", [1, 2])
def test_item(n):
    reply = requests.post(os.environ["ITEM_URL"], json={"n": n}, timeout=5)
    assert reply.json()["n"] == n
    if os.environ.get("FAIL_AFTER") == "fail":
        raise AssertionError("the test failed after recording")
    if os.environ.get("FAIL_AFTER") == "skip":
        pytest.skip("skipped after recording")
    if os.environ.get("FAIL_AFTER") == "hang":
        print("recording", flush=True)
        import time
        time.sleep(60)
"""

SHARED = """\
import os

import pytest
import requests

pytestmark = [pytest.mark.vcr, pytest.mark.toolreplay]


@pytest.fixture
def default_cassette_name():
    return "shared"


def test_first():
    requests.post(os.environ["ITEM_URL"], json={"n": 1}, timeout=5)


def test_second():
    requests.post(os.environ["ITEM_URL"], json={"n": 2}, timeout=5)
"""


class _Handler(BaseHTTPRequestHandler):
    version = "v1"

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps({"n": sent["n"], "version": type(self).version}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server(loopback: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Handler]]:
    handler = type("Handler", (_Handler,), {"version": "v1"})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    monkeypatch.setenv("ITEM_URL", f"http://127.0.0.1:{httpd.server_address[1]}/item")
    monkeypatch.delenv("FAIL_AFTER", raising=False)
    try:
        yield handler
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def suite(pytester: pytest.Pytester, server: type[_Handler]) -> pytest.Pytester:
    """A suite of two tests recorded once (version v1 of the server's answers)."""
    pytester.makepyfile(test_items=TESTS)
    result = pytester.runpytest("--record-mode=once", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert len(_cassettes(pytester)) == 2
    return pytester


def _cassettes(suite: pytest.Pytester) -> dict[str, bytes]:
    folder = suite.path / "cassettes" / "test_items"
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _rewrite(suite: pytest.Pytester, *args: str) -> pytest.RunResult:
    return suite.runpytest("--record-mode=rewrite", "-p", "no:cacheprovider", *args)


@pytest.mark.parametrize("fault", ["fail", "skip"])
def test_a_recording_that_does_not_complete_keeps_the_cassette(
    suite: pytest.Pytester, server: type[_Handler], monkeypatch, fault
) -> None:
    before = _cassettes(suite)
    server.version = "v2"
    monkeypatch.setenv("FAIL_AFTER", fault)
    result = _rewrite(suite)
    assert result.ret != 0 or fault == "skip"
    assert _cassettes(suite) == before  # no hidden file left either
    result.stdout.fnmatch_lines(["*kept the previous cassette*test_item?1?.yaml*"])


def test_an_endpoint_that_is_down_keeps_every_cassette(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _cassettes(suite)
    monkeypatch.setenv("ITEM_URL", "http://127.0.0.1:9/item")  # nothing listens there
    result = _rewrite(suite)
    result.assert_outcomes(failed=2)
    assert _cassettes(suite) == before
    replay = suite.runpytest("--record-mode=none", "--block-network", "-p", "no:cacheprovider")
    replay.assert_outcomes(passed=2)


def test_an_endpoint_that_is_down_keeps_every_cassette_under_xdist(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    before = _cassettes(suite)
    monkeypatch.setenv("ITEM_URL", "http://127.0.0.1:9/item")
    result = _rewrite(suite, "-n", "2")
    result.assert_outcomes(failed=2)
    assert _cassettes(suite) == before


def test_a_completed_recording_replaces_the_cassette(
    suite: pytest.Pytester, server: type[_Handler]
) -> None:
    server.version = "v2"
    result = _rewrite(suite)
    result.assert_outcomes(passed=2)
    after = _cassettes(suite)
    assert sorted(after) == ["test_item[1].yaml", "test_item[2].yaml"]
    assert all(b"v2" in data and b"v1" not in data for data in after.values())


def test_a_recording_killed_midway_keeps_the_cassette(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _cassettes(suite)
    env = {**os.environ, "FAIL_AFTER": "hang"}
    command = [sys.executable, "-m", "pytest", "--record-mode=rewrite", "-p",
               "no:cacheprovider", "-s", "-k", "test_item and 1"]  # fmt: skip
    with subprocess.Popen(
        command, cwd=suite.path, env=env, stdout=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:  # the request recorded, the test now waiting
            if "recording" in line:
                break
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    folder = suite.path / "cassettes" / "test_items"
    assert (folder / "test_item[1].yaml").read_bytes() == before["test_item[1].yaml"]
    replay = suite.runpytest("--record-mode=none", "--block-network", "-p", "no:cacheprovider")
    replay.assert_outcomes(passed=2)
    assert _cassettes(suite) == before  # the leftovers were cleared


def test_a_cassette_missing_after_a_kill_is_restored_before_replay(
    suite: pytest.Pytester,
) -> None:
    """Killed in the instant pytest-recording had deleted the cassette and toolreplay had not
    yet put it back: the next session restores it from its second name."""
    folder = suite.path / "cassettes" / "test_items"
    before = _cassettes(suite)
    cassette = folder / "test_item[1].yaml"
    os.replace(cassette, folder / ".test_item[1].yaml.toolreplay-old")
    replay = suite.runpytest("--record-mode=none", "--block-network", "-p", "no:cacheprovider")
    replay.assert_outcomes(passed=2)
    replay.stdout.fnmatch_lines(["*restored*test_item?1?.yaml*killed recording*"])
    assert _cassettes(suite) == before


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_two_tests_writing_one_cassette_are_refused(
    pytester: pytest.Pytester, server: type[_Handler], workers: list[str]
) -> None:
    if workers:
        pytest.importorskip("xdist")
    pytester.makepyfile(test_shared=SHARED)
    result = pytester.runpytest("--record-mode=once", "-p", "no:cacheprovider", *workers)
    result.assert_outcomes(passed=1, errors=1)  # refused at the cassette's setup
    text = result.stdout.str()
    assert "would record into" in text and "shared.yaml" in text
    assert "test_shared.py::test_first" in text and "test_shared.py::test_second" in text
    cassette = pytester.path / "cassettes" / "test_shared" / "shared.yaml"
    assert cassette.is_file() and cassette.read_text(encoding="utf-8").count("- request:") == 1


def _claim_in_process(args: tuple[str, str, str, float]) -> str | None:
    import time
    from types import SimpleNamespace

    from toolreplay.plugin import transaction

    run_id, path, nodeid, slow_write = args
    if slow_write:  # this test's claim takes a while to write its id (a busy disk)
        real_fdopen = os.fdopen

        def slow_fdopen(fd: int, *a: object, **k: object) -> object:
            f = real_fdopen(fd, *a, **k)  # type: ignore[call-overload]
            write = f.write

            def slow(text: str) -> int:
                time.sleep(slow_write)
                return int(write(text))

            f.write = slow
            return f

        os.fdopen = slow_fdopen  # type: ignore[assignment]
    else:
        time.sleep(0.1)  # starts while the other is writing
    config = SimpleNamespace(workerinput={"testrunuid": run_id})
    return transaction._claim(config, Path(path), nodeid)  # type: ignore[arg-type]


def test_a_claim_is_never_seen_without_its_test_id(tmp_path: Path) -> None:
    """Two workers claiming one cassette at once, the first slow to write its test id: the
    other still reads a whole test id, never an empty claim (once, a claim was seen between
    its creation and its write, and the refusal named no other test)."""
    import multiprocessing
    import uuid

    ctx = multiprocessing.get_context("fork")
    for n in range(3):
        with ctx.Pool(2, maxtasksperchild=1) as pool:
            run_id, path = uuid.uuid4().hex, str(tmp_path / f"c{n}.yaml")
            got = pool.map(
                _claim_in_process, [(run_id, path, "t::a", 0.4), (run_id, path, "t::b", 0.0)],
                chunksize=1,
            )
        assert None in got and ({"t::a", "t::b"} & set(got)), got
