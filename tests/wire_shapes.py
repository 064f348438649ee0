"""Wire bodies real OpenAI-compatible servers send, each with the outcome the host must give.

Shared by the mock-transport tests and the hand-made cassette set replayed by
``toolreplay run``. A shape is its first HTTP reply (status, content type, body text) and,
when the episode goes on, the text of the model's second reply.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


def completion(message: Any, finish: str | None = "stop", **extra: Any) -> dict[str, Any]:
    """A chat-completions body holding one choice with ``message``."""
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
        **extra,
    }


def tool_call_message(arguments: Any, *, call_id: str | None = "call_a") -> dict[str, Any]:
    function = {"name": "TOOL", "arguments": arguments}
    call: dict[str, Any] = {"type": "function", "function": function}
    if call_id is not None:
        call["id"] = call_id
    return {"role": "assistant", "content": None, "tool_calls": [call]}


@dataclass(frozen=True)
class Shape:
    """``body`` is sent as is (a dict is JSON-encoded) with ``content_type`` and ``status``.
    ``stop``: the expected stop reason; ``label``: a failure mode the episode must carry (None:
    neither ``empty_answer`` nor ``refusal``); ``says``: text the episode's error (stop
    reason error), answer or refusal must hold; ``answer``: the second reply's text when the
    episode goes on after tool messages."""

    name: str
    body: Any
    stop: str
    label: str | None
    says: tuple[str, ...]
    status: int = 200
    content_type: str = "application/json"
    answer: str | None = None

    def text(self, tool: str, arg: str, value: Any) -> str:
        """The body as sent, with the placeholders ``TOOL``, ``ARG``, ``VALUE`` filled in."""
        if isinstance(self.body, str):
            return self.body
        text = json.dumps(self.body, ensure_ascii=False)
        for name, real in (("TOOL", tool), ("ARG", arg), ("VALUE", value)):
            text = text.replace(f'"{name}"', json.dumps(real, ensure_ascii=False))
        return text


ENDPOINT = "/v1/chat/completions"

SHAPES = (
    # -- arguments given parsed instead of as a JSON string: accepted, the schema judges them
    Shape("arguments-object", completion(tool_call_message({"ARG": "VALUE"}), "tool_calls"),
          "converged", None, (), answer="ANSWER"),
    Shape("arguments-list", completion(tool_call_message(["VALUE"]), "tool_calls"),
          "converged", None, (), answer="ANSWER"),
    Shape("arguments-number", completion(tool_call_message(3), "tool_calls"),
          "converged", None, (), answer="ANSWER"),
    Shape("tool-call-without-id", completion(tool_call_message({"ARG": "VALUE"}, call_id=None),
          "tool_calls"), "converged", None, (), answer="ANSWER"),
    # -- no usable choice
    Shape("choices-empty", completion(None) | {"choices": []}, "error", "error",
          (ENDPOINT, "HTTP 200", "'choices' is an empty list")),
    Shape("choices-null", completion(None) | {"choices": None}, "error", "error",
          (ENDPOINT, "HTTP 200", "'choices' is missing or null")),
    Shape("message-null", completion(None), "error", "error",
          (ENDPOINT, "HTTP 200", "choices.0.message is null, not a message object")),
    Shape("error-object-with-200", {"error": {"message": "model overloaded", "code": 503}},
          "error", "error", (ENDPOINT, "HTTP 200", "the body reports an error",
                                    "model overloaded")),
    # -- bodies that are not JSON
    Shape("html", "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>",
          "error", "error", (ENDPOINT, "HTTP 200", "the body is HTML", "502 Bad Gateway"),
          content_type="text/html"),
    Shape("plain-text", "upstream connect error or disconnect/reset before headers",
          "error", "error", (ENDPOINT, "HTTP 200", "not JSON (text/plain)",
                                    "upstream connect error"), content_type="text/plain"),
    Shape("event-stream",
          'data: {"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n',
          "error", "error", (ENDPOINT, "HTTP 200", "event stream"),
          content_type="text/event-stream"),
    Shape("invalid-json", '{"id": "x", "choices": [', "error", "error",
          (ENDPOINT, "HTTP 200", "not valid JSON")),
    Shape("http-500", {"error": {"message": "internal failure", "type": "server_error"}},
          "error", "error", (ENDPOINT, "HTTP 500", "internal failure"), status=500),
    # -- text shapes
    Shape("content-parts",
          completion({"role": "assistant", "content": [
              {"type": "text", "text": "PART1"}, {"type": "text", "text": "PART2"}]}),
          "converged", None, ("PART1PART2",)),
    Shape("refusal",
          completion({"role": "assistant", "content": None,
                      "refusal": "I can't help with that request."}),
          "converged", "refusal", ("I can't help with that request.",)),
    Shape("refusal-part",
          completion({"role": "assistant", "content": [
              {"type": "refusal", "refusal": "Sorry, I cannot assist."}]}),
          "converged", "refusal", ("Sorry, I cannot assist.",)),
    # -- finish reasons that end the episode
    Shape("finish-length", completion({"role": "assistant", "content": "The weather in"},
                                      "length"), "truncated", None, ("The weather in",)),
    Shape("finish-content-filter", completion({"role": "assistant", "content": None},
                                              "content_filter"), "filtered", "empty_answer", ()),
    # -- a legacy function_call beside no tool_calls (llama.cpp-style servers)
    Shape("legacy-function-call",
          completion({"role": "assistant", "content": None,
                      "function_call": {"name": "TOOL", "arguments": {"ARG": "VALUE"}}},
                     "function_call"),
          "converged", None, (), answer="ANSWER"),
)  # fmt: skip
