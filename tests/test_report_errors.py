"""Model API errors grouped by cause in the failure gallery (issue 30): the llama report's 8
episodes refused with the same 1,821-character validation dump are one entry (status,
endpoint, the server's message cut at 200 characters, what it rejected, ×8, the episodes as
links, the dump folded once), and error bodies of the kinds real servers send (OpenAI and
Anthropic rate limits, vLLM's context-length 400, llama.cpp's and FastAPI's validation errors)
group when only their ids and numbers differ, and apart when their status or cause does."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from toolreplay.report.errors import (
    MESSAGE_CHARS,
    error_causes,
    normalised_message,
    validation_cause,
)
from toolreplay.report.render import render_report
from toolreplay.report.summary import episode_anchors
from toolreplay.results.format import as_results

REPO = Path(__file__).resolve().parents[1]
LLAMA = REPO / "reports" / "llama-gemma3-270m" / "results.json"
REJECTED = "messages[2].content: Input should be a valid string (got null)"

# error messages in the shapes these servers send (the server's own message, as the results
# keep it in error.message); ids and figures made up
OPENAI_429 = (
    "Rate limit reached for gpt-4o in organization org-{org} on tokens per min (TPM): "
    "Limit 30000, Used {used}, Requested {req}. Please try again in {wait}. Visit "
    "https://platform.openai.com/account/rate-limits to learn more."
)
OPENAI_429_TOO_LARGE = (
    "Request too large for gpt-4o in organization org-{org} on tokens per min (TPM): Limit "
    "30000, Requested {req}. The input or output tokens must be reduced in order to run "
    "successfully. Visit https://platform.openai.com/account/rate-limits to learn more."
)
# llama.cpp's server: the whole body, as a host that keeps it unparsed would record it
LLAMA_CPP_400 = (
    '{{"error":{{"code":400,"message":"the request exceeds the available context size. try '
    'increasing the context size or enable context shift","type":"exceed_context_size_error",'
    '"n_prompt_tokens":{n},"n_ctx":{ctx}}}}}'
)
ANTHROPIC_429 = (
    "This request would exceed the rate limit for your organization ({org}) of {n} input "
    "tokens per minute. request_id: req_{rid}"
)
VLLM_400 = (
    "This model's maximum context length is {ctx} tokens. However, you requested {req} tokens "
    "({msgs} in the messages, {comp} in the completion). Please reduce the length of the "
    "messages or completion."
)
VLLM_400_OTHER = "max_tokens must be at least 1, got {n}."
FASTAPI_422 = json.dumps(
    {
        "detail": [
            {
                "type": "string_type",
                "loc": ["body", "messages", 2, "content"],
                "msg": "Input should be a valid string",
                "input": None,
            }
        ]
    }
)


@pytest.fixture(scope="module")
def llama() -> dict[str, Any]:
    return json.loads(LLAMA.read_text(encoding="utf-8"))


def parse(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html5lib")


def text(node: Any) -> str:
    return " ".join(node.get_text(" ", strip=True).split())


# --------------------------------------------------------------------------- the llama report


def test_llama_errors_are_one_cause_with_the_dump_folded(llama: dict[str, Any]) -> None:
    messages = [e["error"]["message"] for e in llama["episodes"]]
    assert len(messages) == 8 and len(set(messages)) == 8  # ids and cities differ
    html = render_report(llama)
    page = parse(html)
    group = page.select_one("#failures .mode-group[data-mode='error']")
    assert group.select("article.card") == []  # no card per episode
    (cause,) = group.select(".error-cause")
    head = text(cause.select_one("h4"))
    assert head.startswith("HTTP 500 http://127.0.0.1/v1/chat/completions ×8 (8 episodes:")
    assert "single+oneshot ×4" in head and "loop+oneshot ×4" in head
    line = text(cause.select(".cause-line")[0])
    assert line.startswith("the server's message: 7 validation errors: {'type': 'literal_error'")
    shown = line.removeprefix("the server's message: ")
    assert len(shown) == MESSAGE_CHARS and shown.endswith("…")
    assert text(cause.select_one(".cause-digest")) == (
        f"what it rejected: {REJECTED}, checked as ChatCompletionRequestAssistantMessage"
    )
    links = cause.select("ul.cause-episodes li[data-k] a")
    assert len(links) == 8
    ids = {t["id"] for t in page.select("[id]")}
    assert all(a["href"].startswith("#") and a["href"][1:] in ids for a in links)
    dump = cause.select_one("details.error-dump")
    assert "1,821 characters" in text(dump.select_one("summary"))
    assert dump.select_one("pre").get_text() == messages[0]
    assert render_report(llama) == html  # deterministic


def test_gallery_view_lists_every_error_episode_once(llama: dict[str, Any]) -> None:
    results = as_results(llama)
    episodes = list(results.episodes)
    (cause,) = error_causes(episodes, episode_anchors(episodes))
    assert cause["count"] == 8 and cause["status"] == "HTTP 500"
    assert [e["question_id"] for e in cause["episodes"]] == [e.question_id for e in episodes]
    assert cause["same_dump"] is False and cause["dump_chars"] == 1821


def test_different_statuses_and_causes_are_separate_groups(llama: dict[str, Any]) -> None:
    mixed = copy.deepcopy(llama)
    eps = mixed["episodes"]
    for n, ep in enumerate(eps[:3]):
        message = OPENAI_429.format(
            org=f"AbC{n}xYz{n}Qr", used=29000 + n, req=1200 + n, wait=f"{n}s"
        )
        ep["error"] = {**ep["error"], "status": 429, "message": message, "text": message}
    eps[3]["error"] = {**eps[3]["error"], "status": 400, "message": "<script>alert(1)</script>"}
    results = as_results(mixed)
    episodes = list(results.episodes)
    causes = error_causes(episodes, episode_anchors(episodes))
    assert [(c["status"], c["count"]) for c in causes] == [
        ("HTTP 500", 4),
        ("HTTP 429", 3),
        ("HTTP 400", 1),
    ]
    assert causes[1]["message"]["head"][0].text.startswith("Rate limit reached for gpt-4o")
    assert causes[1]["cause"] is None
    html = render_report(mixed)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert len(parse(html).select("#failures .error-cause")) == 3


# --------------------------------------------------------------------------- normalising


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (
            OPENAI_429.format(org="AbC123xYz", used=29844, req=1203, wait="2.094s"),
            OPENAI_429.format(org="QqQ999zzZ", used=29100, req=1870, wait="174ms"),
        ),
        (
            LLAMA_CPP_400.format(n=14429, ctx=8192),
            LLAMA_CPP_400.format(n=1407, ctx=256),
        ),
        (
            ANTHROPIC_429.format(org="9f1c2a7e-1d2b-4c3d-8e9f-0a1b2c3d4e5f", n="50,000",
                                 rid="011CZAau32QzxDkriovTaFCB"),
            ANTHROPIC_429.format(org="0a1b2c3d-4e5f-4a6b-9c8d-7e6f5a4b3c2d", n="50,000",
                                 rid="011CcLPrMiu53v6Rp1jfe1Cd"),
        ),
        (
            VLLM_400.format(ctx=32768, req=41648, msgs=37552, comp=4096),
            VLLM_400.format(ctx=16384, req=122946, msgs=112946, comp=10000),
        ),
    ],
)  # fmt: skip
def test_the_same_cause_with_other_ids_and_numbers_is_one_key(one: str, other: str) -> None:
    assert one != other
    assert normalised_message(one) == normalised_message(other)


def test_another_cause_is_another_key() -> None:
    assert normalised_message(VLLM_400.format(ctx=1, req=2, msgs=1, comp=1)) != (
        normalised_message(VLLM_400_OTHER.format(n=-186))
    )
    assert normalised_message("Overloaded") != normalised_message("Internal server error")
    rate = OPENAI_429.format(org="AbC123xYz", used=29844, req=1203, wait="2s")
    too_large = OPENAI_429_TOO_LARGE.format(org="AbC123xYz", req=36278)
    assert normalised_message(rate) != normalised_message(too_large)


def test_echoed_request_values_are_set_aside() -> None:
    one = (
        "{'type': 'missing', 'loc': ('body', 'x'), 'msg': 'Field required', 'input': {'a': '宁德'}}"
    )
    other = (
        "{'type': 'missing', 'loc': ('body', 'x'), 'msg': 'Field required', 'input': {'a': '北京'}}"
    )
    assert normalised_message(one) == normalised_message(other)
    assert "'input': …" in normalised_message(one) and "宁德" not in normalised_message(one)


def test_validation_cause_reads_json_and_repr_dumps() -> None:
    assert validation_cause(FASTAPI_422) == REJECTED
    assert validation_cause("Overloaded") is None
    assert validation_cause(VLLM_400_OTHER.format(n=-186)) is None
