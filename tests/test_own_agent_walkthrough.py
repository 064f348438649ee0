"""docs/own-agent.md followed as a newcomer would: a library-catalogue agent written on the raw
openai SDK (sync, ``AsyncOpenAI`` and ``stream=True``) with its own HTTP tool server on
loopback, recorded against the scripted model, replayed with no ``TOOLREPLAY_*`` variable and
the network blocked, judged by ``toolreplay run`` with an eval file of its own, re-rendered by
``toolreplay report``, compared by ``toolreplay diff`` and reported by ``pytest
--toolreplay-report`` (pytest-xdist's ``-n`` too). And the frictions met on the way: the
scripted server started after the settings fixture, ``report``'s page written beside its
results, a missing cassette folder, a stale manifest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app

# end to end (the walk-through's agent recorded and replayed by pytest in-process, the CLI on
# its folder): the inner loop `pytest -m "not slow"` leaves them to CI
pytestmark = pytest.mark.slow

LIBRARY = """\
import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import httpx

BOOKS = {"978-0-14-044913-6": ("Crime and Punishment", 2), "978-0-452-28423-4": ("1984", 0)}
TOOLS = [
    {"type": "function", "function": {"name": "search_books", "parameters": {
        "type": "object", "properties": {"title": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "check_availability", "parameters": {
        "type": "object", "properties": {"isbn": {"type": "string"}}}}},
]


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/search":
            title = parse_qs(url.query)["title"][0].lower()
            body = {"results": [{"isbn": i, "title": t} for i, (t, _) in BOOKS.items()
                                if title in t.lower()]}
        else:
            isbn = url.path.rsplit("/", 1)[1]
            body = {"isbn": isbn, "copies_available": BOOKS[isbn][1]}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@contextmanager
def catalogue_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


def _tool(http, catalogue, call):
    args = json.loads(call["function"]["arguments"])
    if call["function"]["name"] == "search_books":
        return http.get(f"{catalogue}/search", params={"title": args["title"]})
    return http.get(f"{catalogue}/availability/{args['isbn']}")


def _message(m):
    msg = {"role": "assistant", "content": m.content}
    if m.tool_calls:
        msg["tool_calls"] = [{"id": c.id, "type": "function", "function": {
            "name": c.function.name, "arguments": c.function.arguments}} for c in m.tool_calls]
    return msg


def _streamed(stream):
    content, calls = [], {}
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        content.append(delta.content or "")
        for tc in delta.tool_calls or []:
            slot = calls.setdefault(tc.index, {"id": None, "type": "function",
                                               "function": {"name": "", "arguments": ""}})
            slot["id"] = tc.id or slot["id"]
            slot["function"]["name"] += tc.function.name or ""
            slot["function"]["arguments"] += tc.function.arguments or ""
    msg = {"role": "assistant", "content": "".join(content) or None}
    if calls:
        msg["tool_calls"] = [calls[i] for i in sorted(calls)]
    return msg


def ask(client, model, catalogue, question, stream=False):
    http = httpx.Client(trust_env=False)
    messages = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = client.chat.completions.create(
            model=model, messages=messages, tools=TOOLS, stream=stream)
        msg = _streamed(reply) if stream else _message(reply.choices[0].message)
        messages.append(msg)
        if not msg.get("tool_calls"):
            return msg["content"]
        for call in msg["tool_calls"]:
            messages.append({"role": "tool", "tool_call_id": call["id"],
                             "content": _tool(http, catalogue, call).text})


async def ask_async(client, model, catalogue, question):
    messages = [{"role": "user", "content": question}]
    async with httpx.AsyncClient(trust_env=False) as http:
        for _ in range(5):
            reply = await client.chat.completions.create(
                model=model, messages=messages, tools=TOOLS)
            msg = _message(reply.choices[0].message)
            messages.append(msg)
            if not msg.get("tool_calls"):
                return msg["content"]
            for call in msg["tool_calls"]:
                args = json.loads(call["function"]["arguments"])
                if call["function"]["name"] == "search_books":
                    r = await http.get(f"{catalogue}/search", params={"title": args["title"]})
                else:
                    r = await http.get(f"{catalogue}/availability/{args['isbn']}")
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": r.text})
"""

CONFTEST = """\
import json

import httpx
import openai
import pytest

from library import catalogue_server

ANSWER = "There are {n} copies available."


def script(body):
    messages = body["messages"]
    results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    question = messages[0]["content"]
    if not results:
        title = "1984" if "1984" in question else question.split(" available")[0][3:]
        return {"tool_calls": [{"id": "call_1", "function": {
            "name": "search_books", "arguments": json.dumps({"title": title})}}]}
    if len(results) == 1:
        if not results[0]["results"]:  # invents a number, on purpose
            return {"content": "There are 3 copies available."}
        isbn = results[0]["results"][0]["isbn"]
        return {"tool_calls": [{"id": "call_2", "function": {
            "name": "check_availability", "arguments": json.dumps({"isbn": isbn})}}]}
    return {"content": ANSWER.format(n=results[1]["copies_available"])}


@pytest.fixture
def catalogue(toolreplay_chat_server, record_mode):
    if record_mode == "none":
        yield "http://catalogue.invalid"
        return
    toolreplay_chat_server(script, model="library-demo")
    with catalogue_server() as url:
        yield url


@pytest.fixture
def client(CLIENT_ARGS):
    s = toolreplay_model_settings
    return openai.OpenAI(base_url=s.base_url, api_key=s.api_key or "-",
                         http_client=httpx.Client(trust_env=False))


@pytest.fixture
def async_client(catalogue, toolreplay_model_settings):
    s = toolreplay_model_settings
    return openai.AsyncOpenAI(base_url=s.base_url, api_key=s.api_key or "-",
                              http_client=httpx.AsyncClient(trust_env=False))
"""

TESTS = """\
import asyncio

import pytest

from library import ask, ask_async


@pytest.mark.vcr
@pytest.mark.parametrize("trial", [1, 2])
def test_crime(client, catalogue, toolreplay_model_settings, trial):
    answer = ask(client, toolreplay_model_settings.model, catalogue,
                 "Is Crime and Punishment available?")
    assert "2 copies" in answer


@pytest.mark.vcr
def test_1984_streamed(client, catalogue, toolreplay_model_settings):
    answer = ask(client, toolreplay_model_settings.model, catalogue, "Is 1984 available?",
                 stream=True)
    assert "0 copies" in answer


@pytest.mark.vcr
def test_crime_async(async_client, catalogue, toolreplay_model_settings):
    answer = asyncio.run(ask_async(async_client, toolreplay_model_settings.model, catalogue,
                                   "Is Crime and Punishment available?"))
    assert "2 copies" in answer


@pytest.mark.vcr
@pytest.mark.toolreplay_expect({"tool_called": "check_availability"})
def test_war_and_peace(client, catalogue, toolreplay_model_settings):
    answer = ask(client, toolreplay_model_settings.model, catalogue,
                 "Is War and Peace available?")
    assert "copies" in answer
"""

EVAL = """\
version: 1
name: library-agent
cassettes: cassettes
measures:
  - name: copies
    units: [{name: copies, spellings: [copy]}]
    words: [available]
    fields: [copies_available]
    entity: isbn
expect:
  - stop_reason: converged
questions:
  - id: crime
    text: Is Crime and Punishment available?
    measure: copies
    expect:
      - tool_sequence: [search_books, check_availability]
      - tool_arguments: {tool: check_availability, equals: {isbn: 978-0-14-044913-6}}
      - answer_contains: "2 copies"
      - strict_grounding: [copies]
  - id: nineteen-eighty-four
    tests: ["test_1984_streamed"]
    text: Is 1984 available?
    measure: copies
    expect:
      - max_rounds: 2
  - id: war-and-peace
    text: Is War and Peace available?
    measure: copies
    expect:
      - strict_grounding: [copies]
"""

#: The client fixture as the docs show it: the fixture starting the scripted server first.
IN_ORDER = "catalogue, toolreplay_model_settings"


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _suite(pytester: pytest.Pytester, client_args: str = IN_ORDER) -> pytest.Pytester:
    pytester.makepyfile(
        library=LIBRARY,
        conftest=CONFTEST.replace("CLIENT_ARGS", client_args),
        test_library=TESTS,
    )
    (pytester.path / "eval.yaml").write_text(EVAL, encoding="utf-8")
    return pytester


def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TOOLREPLAY_BASE_URL", "TOOLREPLAY_MODEL", "TOOLREPLAY_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)


def _replay(suite: pytest.Pytester, *args: str) -> pytest.RunResult:
    return suite.runpytest("--record-mode=none", "--block-network", "-p", "no:cacheprovider", *args)


@pytest.fixture
def recorded(
    pytester: pytest.Pytester, loopback: None, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """The newcomer's suite, recorded against the scripted model and its own tool server."""
    _no_model_env(monkeypatch)
    suite = _suite(pytester)
    result = suite.runpytest("--record-mode=rewrite", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)
    monkeypatch.chdir(suite.path)
    return suite


def test_the_walkthrough_as_written(recorded: pytest.Pytester) -> None:
    cassettes = recorded.path / "cassettes" / "test_library"
    streamed = (cassettes / "test_1984_streamed.yaml").read_text(encoding="utf-8")
    assert "text/event-stream" in streamed and "data: [DONE]" in streamed
    _replay(recorded).assert_outcomes(passed=5)  # no TOOLREPLAY_* variable, network blocked

    result = _cli("run", "--eval", "eval.yaml", "--out", "report")
    assert result.exit_code == 0, result.output
    assert "wrote cassettes/manifest.json (provenance pytest)" in result.output
    results = json.loads(Path("report/results.json").read_text(encoding="utf-8"))
    assert {e["question_id"]: e["passed"] for e in results["episodes"]} == {
        "crime": True,
        "nineteen-eighty-four": False,  # three rounds, two expected
        "war-and-peace": False,  # "3 copies" invented
    }
    war = next(e for e in results["episodes"] if e["question_id"] == "war-and-peace")
    assert [m["mode"] for m in war["failure_modes"]] == ["fabricated_value"]
    # three trials of one question, one of the others: pass^k beyond one trial is "-"
    assert "consistency over up to 3 trial(s) per configuration × question" in result.output
    crime = [t for t in results["trial_outcomes"] if t["question_id"] == "crime"]
    assert len(crime) == 3  # test_crime[1], test_crime[2] and the async test: the same text

    # `toolreplay report` renders beside the results it is given, a folder or the file
    Path("report/index.html").unlink()
    result = _cli("report", "--results", "report")
    assert result.exit_code == 0, result.output
    assert Path("report/index.html").is_file() and not Path("reports").exists()

    # two runs compared, then two recordings
    assert _cli("run", "--eval", "eval.yaml", "--out", "again").exit_code == 0
    result = _cli("diff", "report/results.json", "again/results.json")
    assert result.exit_code == 0 and "no differences" in result.output
    shutil.copytree("cassettes", "before")
    conftest = recorded.path / "conftest.py"
    conftest.write_text(
        conftest.read_text(encoding="utf-8").replace(
            '"There are {n} copies available."', '"{n} copies are available."'
        ),
        encoding="utf-8",
    )
    rerecorded = recorded.runpytest(
        "--record-mode=rewrite", "-p", "no:cacheprovider", "--toolreplay-report", "rec"
    )
    rerecorded.assert_outcomes(passed=5)
    rerecorded.stdout.fnmatch_lines(
        ["toolreplay: no replayed cassette in this session (record mode rewrite: *); rec not*"]
    )
    assert not Path("rec").exists()
    result = _cli("diff", "before", "cassettes", "--eval", "eval.yaml")
    assert result.exit_code == 0, result.output
    assert 'B assistant: "2 copies are available."' in result.output

    # re-recorded under a manifest: the run says which check failed and why, not only its name
    result = _cli("run", "--eval", "eval.yaml", "--out", "stale")
    assert result.exit_code == 1
    assert "completeness: 4 episode(s) changed since the manifest was written" in result.output
    assert "rm cassettes/manifest.json && toolreplay run --eval eval.yaml" in result.output


def test_pytest_report_gathers_xdist_workers(recorded: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    _replay(recorded, "--toolreplay-report", "one").assert_outcomes(passed=5)
    result = _replay(recorded, "-n", "2", "--toolreplay-report", "two")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["toolreplay: 3 of 4 episodes passed in trial 1; 4 of 5 *"])
    one = json.loads(Path("one/results.json").read_text(encoding="utf-8"))
    two = json.loads(Path("two/results.json").read_text(encoding="utf-8"))
    assert one == two
    war = next(e for e in one["episodes"] if e["question_id"] == "test_war_and_peace")
    assert [(x["kind"], x["passed"]) for x in war["expectations"]] == [("tool_called", False)]


def test_a_scripted_server_started_after_the_settings_is_named(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_model_env(monkeypatch)
    for name in ("DASHSCOPE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    suite = _suite(pytester, client_args="toolreplay_model_settings, catalogue")
    result = suite.runpytest("--record-mode=rewrite", "-p", "no:cacheprovider", "-k", "streamed")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "This test uses toolreplay_chat_server, but toolreplay_model_settings was set up" in out
    assert "Traceback" not in out


def test_a_missing_cassette_folder_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("eval.yaml").write_text(EVAL, encoding="utf-8")
    result = _cli("run", "--eval", "eval.yaml", "--cassettes", "nowhere")
    assert result.exit_code == 2
    assert "cassette folder nowhere does not exist" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.yaml"]


def test_cassettes_option_names_a_test_recorded_folder(recorded: pytest.Pytester) -> None:
    """An eval file without ``cassettes:`` is told where to look with ``--cassettes``; left
    without both, its missing ``system_prompt`` says what to write instead."""
    mapped = EVAL.replace("cassettes: cassettes\n", "")  # a question still has tests:
    Path("mapped.yaml").write_text(mapped, encoding="utf-8")
    result = _cli("run", "--eval", "mapped.yaml", "--cassettes", "cassettes", "--out", "m")
    assert result.exit_code == 0, result.output
    eval_text = mapped.replace('    tests: ["test_1984_streamed"]\n', "")
    Path("bare.yaml").write_text(eval_text, encoding="utf-8")
    result = _cli("run", "--eval", "bare.yaml", "--cassettes", "cassettes")
    assert "system_prompt: required but missing (an eval file judging cassettes" in result.output
    assert "cassettes: PATH" in result.output
    prompted = "system_prompt: You are a library assistant.\n" + eval_text
    Path("prompted.yaml").write_text(prompted, encoding="utf-8")
    result = _cli("run", "--eval", "prompted.yaml", "--cassettes", "cassettes", "--out", "o")
    assert result.exit_code == 0, result.output
    results = json.loads(Path("o/results.json").read_text(encoding="utf-8"))
    assert results["provenance"]["provenance"] == "pytest"
    assert len(results["trial_outcomes"]) == 5


@pytest.mark.parametrize(
    ("pattern", "stem", "named"),
    [
        ("test_crime[*]", "test_crime[1]", True),  # brackets as a newcomer writes them
        ("test_crime[*]", "test_crime_async", False),
        ("test_crime", "test_crime[2]", True),  # a function names its parametrisations
        ("test_crime", "test_crime_async", False),
        ("test_crime[2]", "test_crime[2]", True),
        ("test_crime[2]", "test_crime[1]", False),
        ("test_price[[]*]", "test_price[3]", True),  # the shell pattern still works
        ("test_crime*", "test_crime_async", True),
    ],
)
def test_tests_entries_name_tests_as_written(pattern: str, stem: str, named: bool) -> None:
    from toolreplay.runs.suite_folder import names_test

    assert names_test(pattern, stem) is named
