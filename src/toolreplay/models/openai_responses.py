"""The Responses API client: the hosts' conversation (Chat Completions messages and tools) sent
as one ``POST /responses`` per round through the openai SDK, the reply read by the Responses
wire reader (:data:`toolreplay.wire.responses.RESPONSES`).

Conversion (:func:`responses_request`), after the Responses API reference
(https://platform.openai.com/docs/api-reference/responses/create) and the openai SDK's
``ResponseInputItemParam`` and ``FunctionToolParam`` types:

- the first message, when it is a ``system`` message, becomes ``instructions``; any other
  ``system`` or ``developer`` message becomes an input message of that role, in place;
- a ``user`` message becomes ``{"role": "user", "content": ...}``: a string as is, content
  parts as ``input_text`` (``text`` parts) and ``input_image`` (``image_url`` parts);
- an ``assistant`` message becomes its encrypted reasoning as ``reasoning`` items (the
  ``reasoning_details`` the Responses reader keeps, when they hold ``encrypted_content``:
  the only reasoning a request with ``store: false`` can send back), ``{"role":
  "assistant", "content": text}`` when it holds text (its refusal when it holds none), then
  one ``function_call`` item per tool call (``call_id`` the call's id, ``name``,
  ``arguments`` the JSON string);
- a ``tool`` message becomes ``{"type": "function_call_output", "call_id", "output"}``;
- a tool ``{"type": "function", "function": {name, description, parameters, strict}}``
  becomes the flat ``{"type": "function", "name", "description", "parameters", "strict"}``
  (``strict`` false unless the tool sets it: Chat Completions' default, where the Responses
  API's is true); ``tool_choice`` ``"auto"``/``"none"``/``"required"`` is kept and a named
  ``{"type": "function", "function": {"name": N}}`` becomes ``{"type": "function",
  "name": N}``.

Every request carries the whole conversation with ``store: false``: no state on the server,
so a replayed episode depends on its cassette alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.models.base import ConversionError, ModelSettings, content_text
from toolreplay.models.raw_response import reply_of, sorted_body, status_fault
from toolreplay.wire.episode import Message, ModelReply
from toolreplay.wire.responses import RESPONSES


def _input_parts(content: Any, where: str) -> Any:
    """A user or system message's content in Responses form: a string as is; ``text``
    parts as ``input_text``, ``image_url`` parts as ``input_image``."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise ConversionError(f"{where}: content is {type(content).__name__}, not text or parts")
    parts: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, str):
            parts.append({"type": "input_text", "text": part})
        elif kind == "text":
            parts.append({"type": "input_text", "text": str(part.get("text") or "")})
        elif kind == "image_url":
            image = part.get("image_url") or {}
            url = image.get("url") if isinstance(image, dict) else image
            item = {"type": "input_image", "image_url": url, "detail": "auto"}
            if isinstance(image, dict) and image.get("detail"):
                item["detail"] = image["detail"]
            parts.append(item)
        else:
            raise ConversionError(f"{where}: a content part of type {kind!r} has no Responses form")
    return parts


def _reasoning_items(message: Message) -> list[dict[str, Any]]:
    """An assistant message's Responses reasoning (``reasoning_details`` items of the
    ``openai-responses-v1`` format, as the Responses reader keeps them) as ``reasoning``
    items, one per item id: only those holding ``encrypted_content``, the one form a
    request with ``store: false`` can send back."""
    details = message.get("reasoning_details")
    found: dict[str, dict[str, Any]] = {}
    for d in details if isinstance(details, list) else []:
        if not isinstance(d, dict) or d.get("format") != "openai-responses-v1":
            continue
        item = found.setdefault(
            str(d.get("id") or ""), {"type": "reasoning", "id": d.get("id"), "summary": []}
        )
        if d.get("type") == "reasoning.summary":
            item["summary"].append({"type": "summary_text", "text": str(d.get("summary"))})
        elif d.get("type") == "reasoning.encrypted" and d.get("data"):
            item["encrypted_content"] = d["data"]
    return [i for i in found.values() if i.get("encrypted_content")]


def responses_input(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(instructions, input)``: Chat Completions ``messages`` as the Responses API's
    ``instructions`` (the first message's text when it is a ``system`` message, else None)
    and ``input`` items (see the module docstring). :class:`ConversionError` names a message
    of an unknown role or a content part with no Responses form."""
    instructions: str | None = None
    items: list[dict[str, Any]] = []
    for n, message in enumerate(messages, 1):
        where = f"message {n}"
        role = message.get("role")
        content = message.get("content")
        if role == "system" and n == 1:
            instructions = content_text(content)
        elif role in ("system", "developer", "user"):
            items.append({"role": role, "content": _input_parts(content, where)})
        elif role == "assistant":
            items.extend(_reasoning_items(message))
            text = content_text(content) or str(message.get("refusal") or "")
            if text:
                items.append({"role": "assistant", "content": text})
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                arguments = function.get("arguments")
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments or {}, ensure_ascii=False)
                items.append(
                    {
                        "type": "function_call",
                        "call_id": str(call.get("id") or ""),
                        "name": str(function.get("name") or ""),
                        "arguments": arguments,
                    }
                )
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("tool_call_id") or ""),
                    "output": content_text(content),
                }
            )
        else:
            raise ConversionError(f"{where}: role {role!r} has no Responses form")
    return instructions, items


def responses_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions function tools in the Responses API's flat form (module docstring);
    :class:`ConversionError` names a tool that is not a function tool."""
    found = []
    for n, tool in enumerate(tools, 1):
        function = tool.get("function")
        if tool.get("type") != "function" or not isinstance(function, Mapping):
            raise ConversionError(
                f"tool {n}: type {tool.get('type')!r} is not a function tool "
                '({"type": "function", "function": {...}})'
            )
        flat: dict[str, Any] = {"type": "function", "name": function.get("name")}
        if function.get("description") is not None:
            flat["description"] = function["description"]
        flat["parameters"] = function.get("parameters")
        flat["strict"] = bool(function.get("strict", False))
        found.append(flat)
    return found


def responses_tool_choice(choice: Any) -> Any:
    """A Chat Completions ``tool_choice`` in Responses form: a string as is, a named
    function ``{"type": "function", "function": {"name": N}}`` as ``{"type": "function",
    "name": N}``; anything else as given."""
    if isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        return {"type": "function", "name": choice["function"].get("name")}
    return choice


def responses_request(
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: Any = "auto",
) -> dict[str, Any]:
    """The Responses API request fields for one round (besides ``model``, sampling and
    ``stream``): ``instructions`` (when the conversation opens with a system message),
    ``input``, ``store: false``, and when tools are offered ``tools``, ``tool_choice`` and
    ``parallel_tool_calls: true``. :class:`ConversionError` as :func:`responses_input` and
    :func:`responses_tools` raise it."""
    instructions, items = responses_input(messages)
    request: dict[str, Any] = {"input": items, "store": False}
    if instructions is not None:
        request["instructions"] = instructions
    if tools:
        request["tools"] = responses_tools(tools)
        request["tool_choice"] = responses_tool_choice(tool_choice)
        request["parallel_tool_calls"] = True
    return request


class OpenAIResponsesModel:
    """The Responses API through the openai SDK (``client.responses.create``).

    ``http_client`` is the ``httpx.Client`` the SDK sends through; ``max_retries`` 0 by
    default (a retry would hide a cassette miss). Request body: ``model``, ``temperature``,
    :func:`responses_request`'s fields, ``max_output_tokens`` when ``settings.max_tokens``
    is set, ``stream: true`` with ``settings.stream``.

    The reply is read from the raw HTTP response by the Responses wire reader (a streamed
    reply's events assembled there), in Chat Completions terms (``finish_reason``
    ``tool_calls``, ``stop``, ``length`` for ``incomplete_details.reason``
    ``max_output_tokens``, ``content_filter``).
    Errors: :class:`~toolreplay.wire.replies.ModelReplyError` for an error status (worded
    ``BadRequestError: Error code: 400 - {...}`` as every reader words it), an unusable body
    or a stream broken off; ``openai.APIConnectionError`` when no response arrived; a
    cassette miss raised as itself; :class:`ConversionError` before anything is sent.
    """

    def __init__(
        self,
        settings: ModelSettings,
        http_client: Any,
        *,
        max_retries: int = 0,
        tool_choice: Any = "auto",
    ) -> None:
        from openai import OpenAI

        self.settings = settings
        self.name = settings.model
        self.tool_choice = tool_choice
        self._client = sorted_body(OpenAI)(
            api_key=settings.api_key or "replay-no-key",
            base_url=settings.base_url,
            http_client=http_client,
            max_retries=max_retries,
        )

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply:
        body = responses_request(messages, tools, self.tool_choice)
        body["temperature"] = self.settings.temperature
        if self.settings.max_tokens is not None:
            body["max_output_tokens"] = self.settings.max_tokens
        if self.settings.stream:
            body["stream"] = True
        from openai import APIConnectionError, APIStatusError

        from toolreplay.cassettes.miss import find_miss

        try:
            raw = self._client.responses.with_raw_response.create(model=self.settings.model, **body)
        except APIStatusError as exc:
            raise status_fault(exc.response) from None
        except Exception as exc:
            miss = find_miss(exc)
            if miss is not None:
                raise miss from None
            if isinstance(exc, APIConnectionError) or not _is_transport_error(exc):
                raise
            # openai 3.x lets an httpx client's own transport errors through unwrapped:
            # report them as a connection error, as 1.x and 2.x do.
            raise APIConnectionError(request=_request_of(exc, self.settings.base_url)) from exc
        return reply_of(raw.http_response, RESPONSES)


def _is_transport_error(exc: BaseException) -> bool:
    import httpx

    return isinstance(exc, httpx.TransportError)


def _request_of(exc: Any, base_url: str) -> Any:
    import httpx

    try:
        return exc.request
    except (AttributeError, RuntimeError):
        return httpx.Request("POST", base_url)


__all__ = [
    "ConversionError",
    "OpenAIResponsesModel",
    "responses_input",
    "responses_request",
    "responses_tool_choice",
    "responses_tools",
]
