"""The framework examples on the other wire protocols, each a user's own agent recorded by the
pytest plugin against the scripted model (which speaks every protocol) and a loopback tool API:

- ``examples/agents_responses``: openai-agents on the Responses API (one test streamed) and the
  same agent on Chat Completions, its ``@function_tool`` dict sent back as ``str(dict)``;
- ``examples/anthropic_agent``: a plain anthropic SDK tool-use loop, one lookup failing with
  ``is_error: true``, one test streamed;
- ``examples/pydantic_ai_responses``: pydantic-ai with ``OpenAIResponsesModel``;
- ``examples/gemini_agent``: a google-genai manual function-calling loop, one test streamed.

Each replays offline (record mode none, network blocked, no environment): its own tests check
that the episode read from every cassette equals the framework's own history. Its eval file
judges the episodes (some expectations fail on purpose), and the committed report regenerates
byte for byte. The SDKs are in the ``examples`` extra: without one, its example is skipped."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app

# end to end (pytest run in-process on each example, the CLI): the inner loop
# `pytest -m "not slow"` leaves them to CI
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Example:
    """What one example holds and what its committed report says."""

    folder: str
    sdk: str  # the module its tests import (skipped without it)
    tests: int
    model: str
    passed: dict[tuple[str, str], bool]  # (configuration, question) -> trial 1 passed
    pass_hat_k: dict[str, dict[str, float]]  # configuration -> pass^k
    modes: dict[str, list[str]] = field(default_factory=dict)  # question -> failure modes

    @property
    def path(self) -> Path:
        return REPO / "examples" / self.folder


EXAMPLES = [
    Example(
        "agents_responses",
        "agents",
        12,
        "library-demo",
        {
            (configuration, question): question != "unknown-book"
            for configuration in ("test_agents_chat", "test_agents_responses")
            for question in ("one-book", "two-books", "unknown-book")
        },
        # two-books fails in trial 2 (B-205 not looked up); unknown-book always (invented)
        {c: {"1": 0.5, "2": 0.3333} for c in ("test_agents_chat", "test_agents_responses")},
        {"unknown-book": ["fabricated_value"]},
    ),
    Example(
        "anthropic_agent",
        "anthropic",
        6,
        "parcels-demo",
        {
            ("test_parcels", "one-parcel"): True,
            ("test_parcels", "two-parcels"): False,  # max_tool_calls: 1, on purpose
            ("test_parcels", "unknown-parcel"): True,  # trial 1 says it could not find it
        },
        {"test_parcels": {"1": 0.5, "2": 0.3333}},
    ),
    Example(
        "pydantic_ai_responses",
        "pydantic_ai",
        6,
        "rooms-demo",
        {
            ("test_rooms", "one-room"): True,
            ("test_rooms", "two-rooms"): True,  # trial 2 takes 3 rounds
            ("test_rooms", "unknown-room"): False,
        },
        {"test_rooms": {"1": 0.5, "2": 0.3333}},
        {"unknown-room": ["fabricated_value"]},
    ),
    Example(
        "gemini_agent",
        "google.genai",
        6,
        "flights-demo",
        {
            ("test_flights", "one-flight"): True,
            ("test_flights", "two-flights"): False,  # max_tool_calls: 1, on purpose
            ("test_flights", "unknown-flight"): False,
        },
        {"test_flights": {"1": 0.3333, "2": 0.3333}},
        {"unknown-flight": ["fabricated_value"]},
    ),
]


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TOOLREPLAY_BASE_URL", "TOOLREPLAY_MODEL", "TOOLREPLAY_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.folder)
def test_the_example_replays_offline_and_its_report_regenerates(
    example: Example,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    no_environment: None,
) -> None:
    pytest.importorskip(example.sdk)
    result = pytester.runpytest(
        str(example.path), "--record-mode=none", "--block-network", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=example.tests)

    monkeypatch.chdir(REPO)  # results name the eval file relative to the working folder
    run = _run("run", "--eval", f"examples/{example.folder}/eval.yaml", "--out", str(tmp_path))
    assert run.exit_code == 0, run.output
    for name in ("results.json", "index.html"):
        assert (tmp_path / name).read_bytes() == (example.path / "report" / name).read_bytes()

    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert results["provenance"]["provenance"] == "pytest"
    assert results["provenance"]["model"] == example.model
    assert results["trials"] == 2
    passed = {(e["configuration"], e["question_id"]): e["passed"] for e in results["episodes"]}
    assert passed == example.passed
    assert {c["name"]: c["pass_hat_k"] for c in results["configurations"]} == example.pass_hat_k
    modes = {e["question_id"]: [f["mode"] for f in e["failure_modes"]] for e in results["episodes"]}
    for question, expected in example.modes.items():
        assert modes[question] == expected
    checks = {c["name"]: c for c in results["fidelity"]["checks"]}
    assert checks["completeness"]["passed"] is True


def _trial_outcomes(results: dict[str, Any], question: str) -> dict[tuple[str, int], bool]:
    return {
        (o["configuration"], o["trial"]): o["passed"]
        for o in results["trial_outcomes"]
        if o["question_id"] == question
    }


def _committed(example: str) -> dict[str, Any]:
    path = REPO / "examples" / example / "report" / "results.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def test_a_str_dict_tool_result_is_grounded_by_the_key_the_measure_names(tmp_path: Path) -> None:
    """openai-agents sends a tool's dict as ``str(dict)``, on either wire: the judge reads it
    as data, so the correct answer is grounded at the key the measure's ``fields:`` names
    (``copies``) and the invented number is a fabricated value. Without the key, the same
    correct answer is not grounded: the key is what grounds it."""
    results = _committed("agents_responses")
    by = {(e["configuration"], e["question_id"]): e for e in results["episodes"]}
    for configuration in ("test_agents_chat", "test_agents_responses"):
        one = by[(configuration, "one-book")]
        assert one["passed"] is True
        assert "at $.copies of tool message 3 (B-101)" in one["verdict"]
        tool = next(m for m in one["transcript"] if m["role"] == "tool")
        assert tool["content"] == "{'book_id': 'B-101', 'title': 'Dune', 'copies': 3}"
        unknown = by[(configuration, "unknown-book")]
        failed = {x["kind"]: x["explanation"] for x in unknown["expectations"] if not x["passed"]}
        assert failed == {
            "strict_grounding": "fabricated value: no tool result holds 2 copies; the tool "
            "results hold no measured value"
        }
        assert [f["mode"] for f in unknown["failure_modes"]] == ["fabricated_value"]

    example = REPO / "examples" / "agents_responses"
    shutil.copytree(example / "cassettes", tmp_path / "cassettes")
    (tmp_path / "cassettes" / "manifest.json").unlink()
    text = (example / "eval.yaml").read_text(encoding="utf-8")
    assert "    fields: [copies]\n" in text
    (tmp_path / "eval.yaml").write_text(text.replace("    fields: [copies]\n", ""), "utf-8")
    run = _run("run", "--eval", str(tmp_path / "eval.yaml"), "--out", str(tmp_path / "out"))
    assert run.exit_code == 0, run.output
    keyless = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    one = next(e for e in keyless["episodes"] if e["question_id"] == "one-book")
    assert one["passed"] is False
    assert "no tool result holds 3 copies" in one["verdict"]


def test_an_invented_number_beside_a_str_dict_tool_result_is_a_fabricated_value(
    tmp_path: Path,
) -> None:
    """The same ``str(dict)`` tool result, now with a number to contradict: the recorded
    answer "3 copies" edited into "5 copies" on either wire fails as ``fabricated_value``,
    naming the value the tool result holds at its key; the other questions keep their
    verdicts."""
    example = REPO / "examples" / "agents_responses"
    shutil.copytree(example / "cassettes", tmp_path / "cassettes")
    (tmp_path / "cassettes" / "manifest.json").unlink()
    shutil.copy(example / "eval.yaml", tmp_path / "eval.yaml")
    for cassette in (tmp_path / "cassettes").glob("*/test_one_book*.yaml"):
        text = cassette.read_text(encoding="utf-8")
        assert "3 copies available" in text
        cassette.write_text(text.replace("3 copies available", "5 copies available"), "utf-8")
    run = _run("run", "--eval", str(tmp_path / "eval.yaml"), "--out", str(tmp_path / "out"))
    assert run.exit_code == 0, run.output
    edited = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    committed = _committed("agents_responses")
    for configuration in ("test_agents_chat", "test_agents_responses"):
        one = next(
            e
            for e in edited["episodes"]
            if (e["configuration"], e["question_id"]) == (configuration, "one-book")
        )
        assert one["answer"] == "B-101 (Dune): 5 copies available."
        assert one["passed"] is False
        assert [f["mode"] for f in one["failure_modes"]] == ["fabricated_value"]
        assert "the nearest copies is 3 copies at $.copies of tool message 3" in one["verdict"]
    verdicts = {
        (e["configuration"], e["question_id"]): e["passed"]
        for e in edited["episodes"]
        if e["question_id"] != "one-book"
    }
    assert verdicts == {
        (e["configuration"], e["question_id"]): e["passed"]
        for e in committed["episodes"]
        if e["question_id"] != "one-book"
    }


def test_the_examples_mark_what_streamed_and_fail_on_purpose_by_trial() -> None:
    """The streamed tests' episodes and the non-streamed ones are in one set each (a set is
    labelled streamed only when every episode is); the failures on purpose are per trial as
    the scripted models were told."""
    agents = _committed("agents_responses")
    assert agents["provenance"].get("streamed") is not True
    assert _trial_outcomes(agents, "two-books") == {
        ("test_agents_chat", 1): True,
        ("test_agents_chat", 2): False,
        ("test_agents_responses", 1): True,
        ("test_agents_responses", 2): False,
    }
    parcels = _committed("anthropic_agent")
    assert _trial_outcomes(parcels, "unknown-parcel") == {
        ("test_parcels", 1): True,
        ("test_parcels", 2): False,
    }
    rooms = _committed("pydantic_ai_responses")
    assert _trial_outcomes(rooms, "two-rooms") == {
        ("test_rooms", 1): True,
        ("test_rooms", 2): False,
    }
    outcome = next(
        o for o in rooms["trial_outcomes"] if o["question_id"] == "two-rooms" and o["trial"] == 2
    )
    assert outcome["rounds"] == 3


@pytest.mark.parametrize(
    ("folder", "streamed_test"),
    [
        ("agents_responses", ("test_agents_responses", "one-book")),  # Runner.run_streamed
        ("anthropic_agent", ("test_parcels", "one-parcel")),  # stream=True
        ("gemini_agent", ("test_flights", "one-flight")),  # generate_content_stream
        ("pydantic_ai_responses", None),
    ],
)
def test_streamed_is_said_per_episode(folder: str, streamed_test: tuple[str, str] | None) -> None:
    """Each episode the tests streamed, and only those, is ``streamed: true`` in results.json
    (every trial), marked in its episode table row and its transcript's heading; the page
    says how many of the set's episodes streamed, not "streamed replies" (the set mixes both)."""
    results = _committed(folder)
    records = [*results["episodes"], *results.get("trial_episodes", [])]
    streamed = {
        (e["configuration"], e["question_id"], e.get("trial", 1))
        for e in records
        if e.get("streamed")
    }
    expected = set() if streamed_test is None else {(*streamed_test, 1), (*streamed_test, 2)}
    assert streamed == expected
    assert all(e.get("streamed") in (True, None) for e in records)  # absent unless streamed
    page = (REPO / "examples" / folder / "report" / "index.html").read_text(encoding="utf-8")
    assert "streamed replies" not in page
    if streamed_test is None:
        assert "streamed</span>" not in page and " · streamed" not in page
        return
    assert f">{len(streamed)} of {len(records)} episodes streamed</span>" in page
    assert page.count(' <span class="qid">streamed</span></td></tr>') == len(streamed)
    assert page.count(" · streamed</span>") == len(streamed)


def test_a_failed_lookup_reaches_the_episode_as_an_error() -> None:
    """Anthropic's ``is_error: true`` tool_result and Gemini's ``{"error": ...}`` function
    response are read as the tool message's error (``is_error`` in the transcript)."""
    from toolreplay.cassettes.episodes import episode_from_cassette

    parcels = REPO / "examples" / "anthropic_agent" / "cassettes" / "test_parcels"
    episode = episode_from_cassette(parcels / "test_unknown_parcel[1].yaml")
    (result,) = episode.rounds[0].results
    assert result.error == "no parcel P-999 in the tracking system"
    assert any(m.get("is_error") is True for m in episode.transcript if m["role"] == "tool")
    flights = REPO / "examples" / "gemini_agent" / "cassettes" / "test_flights"
    episode = episode_from_cassette(flights / "test_unknown_flight[1].yaml")
    (result,) = episode.rounds[0].results
    assert result.error == "no flight XX-1"


def _canonical(value: Any) -> Any:
    """A cassette's data with JSON held in strings (tool-call arguments) parsed, so that an
    SDK release that orders a request's keys differently compares equal."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            return _canonical(json.loads(value))
        except ValueError:
            return value
    return value


def _interactions(path: Path) -> list[str]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [json.dumps(_canonical(i), sort_keys=True) for i in data["interactions"]]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.folder)
def test_the_example_rerecords_to_the_same_interactions(
    example: Example, pytester: pytest.Pytester, loopback: None, no_environment: None
) -> None:
    """``pytest --record-mode=rewrite`` against the scripted model (answering the example's
    protocol) and the loopback tool API gives the committed interactions again (compared as
    data: each SDK release may order its request's keys its own way), and the fresh
    cassettes replay with the network blocked."""
    pytest.importorskip(example.sdk)
    copy = pytester.path / example.folder
    shutil.copytree(example.path, copy, ignore=shutil.ignore_patterns("__pycache__", "report"))
    (copy / "cassettes" / "manifest.json").unlink()
    committed = sorted((example.path / "cassettes").glob("*/*.yaml"))
    for cassette in (copy / "cassettes").glob("*/*.yaml"):
        cassette.write_text("not a cassette", encoding="utf-8")  # rewrite must not read these
    result = pytester.runpytest(str(copy), "--record-mode=rewrite", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=example.tests)
    for path in committed:
        fresh = _interactions(copy / "cassettes" / path.parent.name / path.name)
        held = _interactions(path)
        # the model requests in order; the tool API's, which openai-agents and pydantic-ai
        # send concurrently for one reply's calls, in any order (replay matches either)
        assert [i for i in fresh if '"POST"' in i] == [i for i in held if '"POST"' in i]
        assert sorted(fresh) == sorted(held), path.name
    result = pytester.runpytest(
        str(copy), "--record-mode=none", "--block-network", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=example.tests)

