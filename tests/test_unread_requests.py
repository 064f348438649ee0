"""A cassette whose model request was recorded without a usable body, and the module it
leaves without an episode (found on a public Vertex AI cassette recorded with ``body: null``).

- The error used to say "no model request of a protocol read here (Chat Completions, ...)"
  of a ``POST …:generateContent``: a Gemini path. A request sent to a protocol's endpoint is
  now named as that protocol's, with what is wrong with its body (none, empty, not JSON, not
  an object, without the field the protocol needs); other requests keep the old words.
- A test module none of whose cassettes could be read had a 0/0 row in the console table,
  the report's tables and charts and the audit's table, which read as a result: it is now left
  out of them and named (the console table's caption, a notice on the report's first screen),
  its cassettes listed under "not read" as before.
- ``toolreplay audit`` on such a folder refused it ("set damaged": the manifest a run wrote has
  no entry for a cassette no episode was read from) where ``toolreplay run`` judged it: the
  audit now reads the manifest as the run does, and its completeness check says what is wrong.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.wire import WireEpisodeError
from toolreplay.wire.reader import PROTOCOLS, episodes_from_interactions
from toolreplay.wire.unread import ENDPOINT_PATHS, no_episode_error

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"
VERTEX = (
    "https://us-central1-aiplatform.googleapis.com/v1/projects/test-project/locations/"
    "us-central1/publishers/google/models/gemini-1.5-pro:generateContent"
)
GEMINI_REPLY = (
    '{"candidates":[{"content":{"parts":[{"text":"{\\"score_eval\\": 8}"}],"role":"model"},'
    '"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":10,'
    '"totalTokenCount":30}}'
)


def _interaction(uri: str, body: Any, method: str = "POST", reply: str = "{}") -> dict:
    return {
        "request": {
            "body": body,
            "headers": {"Content-Type": ["application/json"]},
            "method": method,
            "uri": uri,
        },
        "response": {
            "body": {"string": reply},
            "headers": {"Content-Type": ["application/json; charset=UTF-8"]},
            "status": {"code": 200, "message": "OK"},
        },
    }


CHAT = "https://api.openai.com/v1/chat/completions"

#: The public cassette's one interaction, as recorded: a Vertex AI request without its body.
VERTEX_NO_BODY = _interaction(VERTEX, None, reply=GEMINI_REPLY)


def _error(*interactions: dict) -> str:
    with pytest.raises(WireEpisodeError) as exc:
        episodes_from_interactions(list(interactions))
    assert str(exc.value) == str(no_episode_error(list(interactions)))
    return str(exc.value)


def test_a_vertex_request_recorded_without_its_body_is_named_as_such() -> None:
    said = _error(VERTEX_NO_BODY)
    assert said == (
        "no model request could be read: interaction 1: POST /v1/projects/test-project/"
        "locations/us-central1/publishers/google/models/gemini-1.5-pro:generateContent was "
        "sent to a path of Gemini but has no request body (was the cassette recorded without "
        "request bodies?)"
    )
    assert "of a protocol read here" not in said


@pytest.mark.parametrize(
    ("uri", "body", "protocol", "fault"),
    [
        (CHAT, "", "Chat Completions", "has no request body"),
        (CHAT, "  \n", "Chat Completions", "has no request body"),
        ("https://api.openai.com/v1/responses", {"model": "gpt-4o"}, "Responses API",
         "has a request body without 'input' (its fields: model)"),
        ("https://api.anthropic.com/v1/messages", "model=claude&max_tokens=5", "Anthropic Messages",
         "has a request body that is not JSON (25 characters)"),
        ("https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/"
         "anthropic/models/claude-3-5-sonnet:streamRawPredict", None, "Anthropic Messages",
         "has no request body"),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1"
         "%3A0/invoke", None, "Anthropic Messages", "has no request body"),
        ("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash%3A"
         "streamGenerateContent?alt=sse", {}, "Gemini",
         "has an empty JSON object as its request body"),
        ("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent",
         {"contents": "hello"}, "Gemini",
         "has a request body whose 'contents' is not what the protocol sends"),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse",
         [1, 2], "Bedrock Converse", "has a JSON request body that is not an object (a list)"),
    ],
)  # fmt: skip
def test_every_protocols_endpoint_with_a_body_it_cannot_read(
    uri: str, body: Any, protocol: str, fault: str
) -> None:
    said = _error(_interaction(uri, body))
    assert said.startswith("no model request could be read: interaction 1: POST ")
    assert f"was sent to a path of {protocol} but {fault}" in said


def test_at_most_three_are_named_and_the_rest_counted() -> None:
    said = _error(*[VERTEX_NO_BODY] * 5)
    assert said.count("was sent to a path of Gemini") == 3 and said.endswith(" and 2 more")


def test_requests_to_no_protocols_endpoint_keep_the_old_words() -> None:
    search = _interaction("https://api.example.com/v1/search", {"q": "x"})
    said = _error(search)
    assert said.startswith("no model request of a protocol read here (Chat Completions, ")
    assert "(requests seen: interaction 1: POST /v1/search)" in said
    # a GET to a model path is not a model request sent without its body
    got = _error(_interaction("https://api.openai.com/v1/chat/completions", None, "GET"))
    assert got.endswith("(no POST request in it)")


def test_the_endpoint_table_covers_every_protocol_read() -> None:
    assert [p.name for p, _, _ in ENDPOINT_PATHS] == [p.name for p in PROTOCOLS]


# ---- the module with no episode: console, report, audit ----


def _write(folder: Path, module: str, stem: str, interactions: list[dict]) -> None:
    (folder / module).mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump({"interactions": interactions, "version": 1}, allow_unicode=True)
    (folder / module / f"{stem}.yaml").write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def folder_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    root = tmp_path_factory.mktemp("nobody")
    folder = root / "cassettes"
    ok = yaml.safe_load((FOREIGN / "pydantic-ai-openai-tool-call.yaml").read_text("utf-8"))
    _write(folder, "test_ok", "test_tool_call", ok["interactions"])
    _write(folder, "test_vertex", "test_score", [VERTEX_NO_BODY])
    out = root / "out"
    result = CliRunner().invoke(app, ["run", "--cassettes", str(folder), "--out", str(out)])
    return folder, out, result


def test_run_names_the_unread_cassette_and_gives_the_module_no_row(folder_run) -> None:
    _, out, result = folder_run
    assert result.exit_code == 1, result.output  # the audit's completeness fails
    text = " ".join(result.output.split())
    assert "not read: test_vertex/test_score.yaml: no model request could be read" in text
    assert "was sent to a path of Gemini but has no request body" in text
    assert "no row for test_vertex: no episode was read from its cassettes" in text
    assert not re.search(r"test_vertex\s+0/0", result.output)
    assert re.search(r"test_ok\s+\d/1 ", result.output)
    # results.json keeps what was read: the module, with no episode
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert [(c["name"], c["total"]) for c in doc["configurations"]] == [
        ("test_ok", 1),
        ("test_vertex", 0),
    ]


def test_the_report_names_the_module_instead_of_a_0_of_0_row(folder_run) -> None:
    _, out, _ = folder_run
    html = (out / "index.html").read_text(encoding="utf-8")
    words = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert "No episode read for test_vertex . None of its cassettes could be read" in words
    assert "0/0" not in words and "0% (0/0)" not in words
    assert "1 episode under 1 configuration" in words
    # the one other place test_vertex is named: the completeness check's "not read" line
    rest = words.replace("No episode read for test_vertex", "")
    assert rest.count("test_vertex") == 1
    assert "not read: test_vertex/test_score.yaml" in rest


def test_audit_reads_the_folder_run_wrote_a_manifest_into(folder_run) -> None:
    folder, _, _ = folder_run
    assert (folder / "manifest.json").is_file()  # written by run, without test_vertex
    result = CliRunner().invoke(app, ["audit", "--cassettes", str(folder)])
    text = " ".join(result.output.split())
    assert "set damaged" not in text
    assert result.exit_code == 1
    assert "FAIL completeness" in text and "1 cassette(s) not read" in text
    assert "not read: test_vertex/test_score.yaml" in text
