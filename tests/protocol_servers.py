"""Scripted model servers of three wire protocols, as ``MockTransport`` handlers: one script of
Chat Completions assistant messages served as Chat Completions, Responses API or Anthropic
Messages replies, streamed or not.

The bodies are written from the APIs' references, not from toolreplay's readers:

- Chat Completions: https://platform.openai.com/docs/api-reference/chat/object and its
  streaming chunks (``toolreplay.doubles`` writes them, as the stand-in serves them);
- Responses: https://platform.openai.com/docs/api-reference/responses/object (a ``Response``
  with ``output`` items ``message`` / ``function_call``; ``status: incomplete`` with
  ``incomplete_details.reason`` ``max_output_tokens`` for a reply cut off) and its streaming
  events (``response.created``, ``response.output_item.added``,
  ``response.content_part.added``, ``response.output_text.delta``,
  ``response.function_call_arguments.delta``, ``…done``, ``response.completed``);
- Anthropic Messages: https://docs.anthropic.com/en/api/messages (a ``message`` with
  ``text`` and ``tool_use`` blocks, ``stop_reason`` ``end_turn``/``tool_use``/
  ``max_tokens``) and https://docs.anthropic.com/en/docs/build-with-claude/streaming
  (``message_start``, ``content_block_start``, ``ping``, ``content_block_delta`` with
  ``text_delta`` / ``input_json_delta``, ``content_block_stop``, ``message_delta``,
  ``message_stop``).

A script step is an assistant message (``content``, ``tool_calls`` with ids), optionally with
``finish_reason`` ``length``; or ``{"status": N, "error": {...}}`` for an error status.
Round ``n`` reports ``10 * n`` input tokens and ``5`` output tokens on every protocol.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from toolreplay.doubles.sse import completion_events

USAGE_OUT = 5


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def chat_body(message: dict[str, Any], n: int) -> dict[str, Any]:
    finish = message.get("finish_reason") or ("tool_calls" if message.get("tool_calls") else "stop")
    reply = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        reply["tool_calls"] = message["tool_calls"]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": reply, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": 10 * n,
            "completion_tokens": USAGE_OUT,
            "total_tokens": 10 * n + USAGE_OUT,
        },
    }


def responses_body(message: dict[str, Any], n: int) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if message.get("content"):
        output.append(
            {
                "type": "message",
                "id": f"msg_{n}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": message["content"], "annotations": []}],
            }
        )
    for i, call in enumerate(message.get("tool_calls") or []):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{n}_{i}",
                "call_id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
                "status": "completed",
            }
        )
    cut = message.get("finish_reason") == "length"
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 0,
        "status": "incomplete" if cut else "completed",
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "model": "m",
        "output": output,
        "parallel_tool_calls": True,
        "store": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10 * n,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": USAGE_OUT,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 10 * n + USAGE_OUT,
        },
    }


def responses_events(body: dict[str, Any]) -> str:
    events: list[dict[str, Any]] = []
    started = {**body, "status": "in_progress", "output": [], "usage": None}
    events.append({"type": "response.created", "response": started})
    events.append({"type": "response.in_progress", "response": started})
    for index, item in enumerate(body["output"]):
        if item["type"] == "message":
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            common = {"item_id": item["id"], "output_index": index, "content_index": 0}
            events.append({"type": "response.content_part.added", **common, "part": part})
            text = item["content"][0]["text"]
            for piece in _pieces(text):
                events.append({"type": "response.output_text.delta", **common, "delta": piece})
            events.append({"type": "response.output_text.done", **common, "text": text})
            events.append(
                {"type": "response.content_part.done", **common, "part": item["content"][0]}
            )
        else:
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "arguments": ""},
                }
            )
            common = {"item_id": item["id"], "output_index": index}
            for piece in _pieces(item["arguments"]):
                events.append(
                    {"type": "response.function_call_arguments.delta", **common, "delta": piece}
                )
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    **common,
                    "arguments": item["arguments"],
                }
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    final = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    events.append({"type": final, "response": body})
    out = []
    for number, event in enumerate(events):
        event["sequence_number"] = number
        out.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
    return "".join(out)


def anthropic_body(message: dict[str, Any], n: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if message.get("content"):
        content.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        arguments = call["function"]["arguments"]
        content.append(
            {
                "type": "tool_use",
                "id": call["id"],
                "name": call["function"]["name"],
                "input": json.loads(arguments),
            }
        )
    if message.get("finish_reason") == "length":
        stop = "max_tokens"
    else:
        stop = "tool_use" if message.get("tool_calls") else "end_turn"
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10 * n, "output_tokens": USAGE_OUT},
    }


def anthropic_events(body: dict[str, Any]) -> str:
    start = {**body, "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": body["usage"]["input_tokens"], "output_tokens": 1}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                }
            )
            if index == 0:
                events.append({"type": "ping"})
            for piece in _pieces(block["text"]):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    }
                )
        else:
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {**block, "input": {}},
                }
            )
            for piece in _pieces(json.dumps(block["input"])):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    }
                )
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": body["usage"]["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


PATHS = {
    "chat_completions": "/v1/chat/completions",
    "responses": "/v1/responses",
    "anthropic_messages": "/v1/messages",
}

BASE_URLS = {
    "chat_completions": "http://model.test/v1",
    "responses": "http://model.test/v1",
    "anthropic_messages": "http://model.test",
}


class ScriptedServer:
    """A ``MockTransport`` handler serving ``script`` over ``protocol``; ``requests`` keeps
    the parsed bodies received, ``paths`` their paths."""

    def __init__(self, protocol: str, script: list[dict[str, Any]]) -> None:
        self.protocol = protocol
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.interactions: list[dict[str, Any]] = []  # as a cassette holds them

    def __call__(self, request: Any) -> Any:
        response = self._answer(request)
        response.read()
        self.interactions.append(
            {
                "request": {
                    "method": request.method,
                    "uri": str(request.url),
                    "parsed_body": json.loads(request.content),
                },
                "response": {
                    "status": {"code": response.status_code},
                    "headers": {"content-type": [response.headers.get("content-type", "")]},
                    "body": {"string": response.content.decode("utf-8")},
                },
            }
        )
        return response

    def _answer(self, request: Any) -> Any:
        module = httpx if isinstance(request, httpx.Request) else _httpx2()
        body = json.loads(request.content)
        self.requests.append(body)
        self.paths.append(request.url.path)
        n = len(self.requests)
        step = self.script[n - 1]
        if request.url.path != PATHS[self.protocol]:
            return module.Response(404, json={"error": {"message": "wrong path"}})
        if "status" in step:
            return module.Response(step["status"], json=step["error"])
        make = {
            "chat_completions": chat_body,
            "responses": responses_body,
            "anthropic_messages": anthropic_body,
        }[self.protocol]
        reply = make(step, n)
        if not body.get("stream"):
            return module.Response(200, json=reply)
        if self.protocol == "chat_completions":
            text = "".join(f"data: {e}\n\n" for e in completion_events(reply, True))
        elif self.protocol == "responses":
            text = responses_events(reply)
        else:
            text = anthropic_events(reply)
        return module.Response(
            200, headers={"content-type": "text/event-stream"}, content=text.encode()
        )


def _httpx2() -> Any:
    import httpx2

    return httpx2
