"""The scripted model's reply bodies, one builder per protocol, from one scripted assistant
message (:mod:`toolreplay.doubles.scripted` serves them).

A script gives an assistant message in Chat Completions form; :func:`assistant_message`
completes it (``role``, each tool call's ``type`` and ``id``: ``call_<round>_<index>`` when
left out, ``arguments`` as JSON text). Each builder turns it into the non-streamed reply body
of its protocol, deterministic (fixed ids, no clock) and with a usage estimate (characters / 4,
:func:`tokens`; the prompt from the request's conversation, the completion from the message):

- :func:`chat_reply`: a Chat Completions ``chat.completion`` (id ``chatcmpl-scripted-N``,
  ``created`` 0, ``finish_reason`` ``tool_calls``/``stop``);
- :func:`responses_reply`: an OpenAI Responses API ``Response`` (id ``resp_scripted_N``,
  ``status`` ``completed``, ``output`` a ``reasoning`` item when the message carries
  reasoning, a ``message`` item (``output_text``) and ``function_call`` items (``id``
  ``fc_scripted_N_I``, ``call_id`` the message's call id); ``usage`` with ``input_tokens``,
  ``output_tokens``, ``total_tokens`` and their details). Shapes: the API reference's
  ``Response`` object (platform.openai.com/docs/api-reference/responses/object) and the
  openai SDK's ``openai.types.responses.Response``;
- :func:`anthropic_reply`: an Anthropic Messages ``Message`` (id ``msg_scripted_N``,
  ``content`` ``thinking``/``text``/``tool_use`` blocks, a ``tool_use`` id ``toolu_`` + the
  call id unless it starts so, ``stop_reason`` ``tool_use``/``end_turn``, ``usage``
  ``input_tokens``/``output_tokens``). Shapes: docs.anthropic.com/en/api/messages and the
  anthropic SDK's ``anthropic.types.Message``;
- :func:`gemini_reply`: a Gemini ``GenerateContentResponse`` (``candidates[0].content.parts``
  ``thought`` text, text and ``functionCall`` {``name``, ``args``, ``id`` only when the script
  named the call}, ``finishReason`` ``STOP``, ``usageMetadata``, ``modelVersion`` the model of
  the request's path, ``responseId`` ``scripted-N``). Shapes:
  ai.google.dev/api/generate-content#generatecontentresponse and google-genai's
  ``types.GenerateContentResponse``.

Reasoning in the scripted message (``reasoning_details`` items ``reasoning.text``,
``reasoning.summary``, ``reasoning.encrypted`` with a ``signature``, or a
``reasoning_content``/``reasoning`` string; :mod:`toolreplay.wire.protocol`'s convention)
becomes each protocol's own reasoning part (a signature is passed as given: Gemini's
``thoughtSignature`` is base64 text). A tool call whose ``arguments`` are not a JSON
object cannot be an Anthropic ``input`` or a Gemini ``args``: :class:`ScriptReplyError`.
"""

from __future__ import annotations

import json
from typing import Any

#: The model name a script answers as when the request names none.
SCRIPTED_MODEL = "scripted-model"

#: A reply body's protocol by the key that marks a whole body of it (see :func:`body_protocol`).
PROTOCOL_NAMES = {
    "chat": "Chat Completions",
    "responses": "Responses API",
    "anthropic": "Anthropic Messages",
    "gemini": "Gemini",
}


class ScriptReplyError(ValueError):
    """A scripted reply that cannot be served in the protocol asked (the message says which
    reply and what was wrong); answered with HTTP 500."""


def tokens(text: str) -> int:
    """The usage estimate of ``text``: one token per 4 characters, at least 1."""
    return max(1, len(text) // 4)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def assistant_message(raw: dict[str, Any], round_: int) -> dict[str, Any]:
    """The scripted message ``raw`` completed (see the module docstring); any other key
    (reasoning fields, ``refusal``...) is kept as given."""
    message: dict[str, Any] = {"role": "assistant", "content": raw.get("content")}
    calls = []
    for i, call in enumerate(raw.get("tool_calls") or []):
        function = dict(call.get("function") or {})
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = _json(arguments)
        calls.append(
            {
                "id": call.get("id") or f"call_{round_}_{i}",
                "type": "function",
                "function": {"name": function.get("name", ""), "arguments": arguments},
            }
        )
    if calls:
        message["tool_calls"] = calls
    for key, value in raw.items():  # reasoning fields, refusal...: served as given
        if key not in message and key not in ("role", "tool_calls"):
            message[key] = value
    return message


def body_protocol(answer: dict[str, Any]) -> str | None:
    """The protocol of which ``answer`` is a whole reply body (``chat``: ``choices``;
    ``responses``: ``output``; ``anthropic``: ``type: message`` with ``content``;
    ``gemini``: ``candidates``), None for an assistant message."""
    if "choices" in answer:
        return "chat"
    if "output" in answer:
        return "responses"
    if answer.get("type") == "message" and "content" in answer:
        return "anthropic"
    if "candidates" in answer:
        return "gemini"
    return None


def _text(message: dict[str, Any]) -> str:
    """The message's content as one text (a list of content parts joined)."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return content or ""


def _reasoning(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The message's reasoning as ``reasoning_details`` items (a plain string as one
    ``reasoning.text``)."""
    details = message.get("reasoning_details")
    if isinstance(details, list):
        return [item for item in details if isinstance(item, dict)]
    for name in ("reasoning_content", "reasoning"):
        if isinstance(message.get(name), str) and message[name]:
            return [{"type": "reasoning.text", "text": message[name]}]
    return []


def _arguments_object(call: dict[str, Any], protocol: str) -> dict[str, Any]:
    arguments = call["function"]["arguments"]
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ScriptReplyError(
            f"tool call {call['id']} ({call['function']['name']}): arguments {arguments!r} "
            f"are not a JSON object, which a {PROTOCOL_NAMES[protocol]} reply needs"
        )
    return value


def _completion_tokens(message: dict[str, Any]) -> int:
    return tokens(_json(message))


def chat_reply(request: dict[str, Any], message: dict[str, Any], round_: int) -> dict[str, Any]:
    """The Chat Completions reply carrying ``message`` (see the module docstring)."""
    prompt = tokens(_json(request.get("messages", [])))
    completion = _completion_tokens(message)
    return {
        "id": f"chatcmpl-scripted-{round_}",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model") or SCRIPTED_MODEL,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _responses_reasoning(details: list[dict[str, Any]], round_: int) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": f"rs_scripted_{round_}",
        "summary": [
            {"type": "summary_text", "text": d["summary"]}
            for d in details
            if isinstance(d.get("summary"), str)
        ],
    }
    texts = [
        {"type": "reasoning_text", "text": d["text"]}
        for d in details
        if isinstance(d.get("text"), str)
    ]
    if texts:
        item["content"] = texts
    signature = next((d["signature"] for d in details if d.get("signature")), None)
    if signature is not None:
        item["encrypted_content"] = signature
    return item


def responses_reply(
    request: dict[str, Any], message: dict[str, Any], round_: int
) -> dict[str, Any]:
    """The Responses API ``Response`` carrying ``message`` (see the module docstring)."""
    output: list[dict[str, Any]] = []
    if details := _reasoning(message):
        output.append(_responses_reasoning(details, round_))
    calls = message.get("tool_calls") or []
    text = _text(message)
    if text or not calls:
        content = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        output.append(
            {
                "type": "message",
                "id": f"msg_scripted_{round_}",
                "status": "completed",
                "role": "assistant",
                "content": [content],
            }
        )
    for i, call in enumerate(calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_scripted_{round_}_{i}",
                "call_id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
                "status": "completed",
            }
        )
    prompt = tokens(_json([request.get("instructions"), request.get("input", [])]))
    completion = _completion_tokens(message)
    return {
        "id": f"resp_scripted_{round_}",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": request.get("model") or SCRIPTED_MODEL,
        "output": output,
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "previous_response_id": request.get("previous_response_id"),
        "store": request.get("store", True),
        "temperature": request.get("temperature", 1.0),
        "text": request.get("text") or {"format": {"type": "text"}},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "top_p": request.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        },
        "metadata": request.get("metadata") or {},
    }


def _anthropic_thinking(details: list[dict[str, Any]]) -> list[dict[str, Any]]:
    blocks = []
    for d in details:
        text = d.get("text") if isinstance(d.get("text"), str) else d.get("summary")
        if isinstance(text, str):
            signature = d.get("signature") or ""
            blocks.append({"type": "thinking", "thinking": text, "signature": signature})
        elif d.get("type") == "reasoning.encrypted":
            data = d.get("signature") or d.get("data") or ""
            blocks.append({"type": "redacted_thinking", "data": data})
    return blocks


def anthropic_tool_use_id(call_id: str) -> str:
    """The ``tool_use`` id of a scripted call id: ``toolu_`` + the id, unless it starts so."""
    return call_id if call_id.startswith("toolu_") else f"toolu_{call_id}"


def anthropic_reply(
    request: dict[str, Any], message: dict[str, Any], round_: int
) -> dict[str, Any]:
    """The Anthropic Messages ``Message`` carrying ``message`` (see the module docstring)."""
    content = _anthropic_thinking(_reasoning(message))
    calls = message.get("tool_calls") or []
    text = _text(message)
    if text or not calls:
        content.append({"type": "text", "text": text})
    for call in calls:
        content.append(
            {
                "type": "tool_use",
                "id": anthropic_tool_use_id(call["id"]),
                "name": call["function"]["name"],
                "input": _arguments_object(call, "anthropic"),
            }
        )
    prompt = tokens(_json([request.get("system"), request.get("messages", [])]))
    return {
        "id": f"msg_scripted_{round_}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model") or SCRIPTED_MODEL,
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": _completion_tokens(message)},
    }


def gemini_reply(
    request: dict[str, Any],
    message: dict[str, Any],
    round_: int,
    model: str,
    named_calls: frozenset[int] = frozenset(),
) -> dict[str, Any]:
    """The Gemini ``GenerateContentResponse`` carrying ``message`` (see the module
    docstring); ``model`` from the request's path, ``named_calls`` the indexes of the tool
    calls to which the script gave an id (the others go without one, as Gemini's do)."""
    parts: list[dict[str, Any]] = []
    for d in _reasoning(message):
        text = d.get("text") if isinstance(d.get("text"), str) else d.get("summary")
        part: dict[str, Any] = {"text": text if isinstance(text, str) else "", "thought": True}
        if d.get("signature"):
            part["thoughtSignature"] = d["signature"]
        parts.append(part)
    calls = message.get("tool_calls") or []
    text = _text(message)
    if text or not calls:
        parts.append({"text": text})
    for i, call in enumerate(calls):
        function_call: dict[str, Any] = {
            "name": call["function"]["name"],
            "args": _arguments_object(call, "gemini"),
        }
        if i in named_calls:
            function_call["id"] = call["id"]
        parts.append({"functionCall": function_call})
    prompt = tokens(_json([request.get("systemInstruction"), request.get("contents", [])]))
    completion = _completion_tokens(message)
    return {
        "candidates": [
            {"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": completion,
            "totalTokenCount": prompt + completion,
        },
        "modelVersion": model or SCRIPTED_MODEL,
        "responseId": f"scripted-{round_}",
    }


__all__ = [
    "PROTOCOL_NAMES",
    "SCRIPTED_MODEL",
    "ScriptReplyError",
    "anthropic_reply",
    "anthropic_tool_use_id",
    "assistant_message",
    "body_protocol",
    "chat_reply",
    "gemini_reply",
    "responses_reply",
    "tokens",
]
