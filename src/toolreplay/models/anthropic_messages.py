"""The Anthropic Messages client: the hosts' conversation (Chat Completions messages and tools)
sent as one ``POST /v1/messages`` per round through the anthropic SDK
(``client.messages.create``), the reply read by the Anthropic Messages wire reader
(:data:`toolreplay.wire.anthropic_messages.ANTHROPIC_MESSAGES`).

Conversion (:func:`anthropic_request`), after the Messages API reference
(https://docs.anthropic.com/en/api/messages) and its tool-use guide:

- every ``system`` (or ``developer``) message's text goes to ``system``: a string for one,
  a list of ``text`` blocks for several (the API has no system turn inside ``messages``);
- a ``user`` message is a user turn: a string as is, ``text`` parts as ``text`` blocks,
  ``image_url`` parts as ``image`` blocks (a ``data:`` URL as a ``base64`` source, any
  other as a ``url`` source);
- an ``assistant`` message is an assistant turn: its signed reasoning
  (``reasoning_details`` items ``reasoning.text`` with a ``signature`` as ``thinking``
  blocks, ``reasoning.encrypted`` with ``data`` as ``redacted_thinking``), its text as a
  ``text`` block when there is any, then one ``tool_use`` block per tool call (``id`` the
  call's id, ``input`` its arguments parsed: they must be a JSON object);
- a ``tool`` message is a ``tool_result`` block (``tool_use_id``, ``content``, and
  ``is_error: true`` when the message carries it) in a user turn; consecutive messages of
  one turn's role (the tool results of one reply, a user message after them) share one turn,
  as the API requires the roles to alternate and the results to follow their calls at once;
- a tool ``{"type": "function", "function": {name, description, parameters}}`` becomes
  ``{"name", "description", "input_schema"}``; ``tool_choice`` ``"auto"``, ``"required"``,
  ``"none"`` and a named function become ``{"type": "auto"}``, ``{"type": "any"}``,
  ``{"type": "none"}`` and ``{"type": "tool", "name": N}`` (parallel calls allowed, as the
  API's default);
- tools withheld (``tools`` None) from a conversation that already holds ``tool_use`` or
  ``tool_result`` blocks, which the API refuses without tool definitions ("Requests which
  include tool_use or tool_result blocks must define tools"): the tools the conversation
  called are declared by name (``input_schema`` ``{"type": "object"}``) with
  ``tool_choice: {"type": "none"}``, so the model cannot call any.

The SDK (``pip install 'toolreplay[anthropic]'``) is imported when a model is made.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.models.base import ConversionError, ModelSettings, content_text
from toolreplay.models.raw_response import reply_of, sorted_body, status_fault
from toolreplay.wire.anthropic_messages import ANTHROPIC_MESSAGES
from toolreplay.wire.episode import Message, ModelReply
from toolreplay.wire.replies import ModelReplyError

#: ``max_tokens`` sent when the settings give none: the API requires one.
DEFAULT_MAX_TOKENS = 1024


def _image_block(part: Mapping[str, Any]) -> dict[str, Any]:
    image = part.get("image_url") or {}
    url = str(image.get("url") if isinstance(image, Mapping) else image)
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[5:].split(";base64,", 1)
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }
    return {"type": "image", "source": {"type": "url", "url": url}}


def _user_blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if content is None or isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        raise ConversionError(f"{where}: content is {type(content).__name__}, not text or parts")
    blocks: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif kind == "text":
            if part.get("text"):
                blocks.append({"type": "text", "text": str(part["text"])})
        elif kind == "image_url":
            blocks.append(_image_block(part))
        else:
            raise ConversionError(
                f"{where}: a content part of type {kind!r} has no Anthropic Messages form"
            )
    return blocks


def _thinking_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The signed reasoning of an assistant message as ``thinking`` / ``redacted_thinking``
    blocks (the API wants them back unchanged in a tool-use turn); unsigned reasoning is
    left out: the API refuses a thinking block without its signature."""
    details = message.get("reasoning_details")
    blocks: list[dict[str, Any]] = []
    for item in details if isinstance(details, list) else []:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "reasoning.text" and item.get("signature"):
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": str(item.get("text") or ""),
                    "signature": item["signature"],
                }
            )
        elif item.get("type") == "reasoning.encrypted" and item.get("data"):
            blocks.append({"type": "redacted_thinking", "data": item["data"]})
    return blocks


def _tool_use(call: Mapping[str, Any], where: str) -> dict[str, Any]:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        value = None
    if value is None and arguments in (None, ""):
        value = {}
    if not isinstance(value, dict):
        raise ConversionError(
            f"{where}: the arguments of tool call {call.get('id')!r} are not a JSON object "
            f"({str(arguments)[:60]!r}); a tool_use block's input must be one"
        )
    return {
        "type": "tool_use",
        "id": str(call.get("id") or ""),
        "name": str(function.get("name") or ""),
        "input": value,
    }


def anthropic_messages(
    messages: Sequence[Message],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(system, turns)``: Chat Completions ``messages`` as the Messages API's ``system``
    text blocks and alternating ``messages`` turns, each turn's content a list of blocks
    (see the module docstring). :class:`ConversionError` names a message of an unknown role,
    a content part with no Messages form, or tool-call arguments that are not an object."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return  # the API refuses an empty turn
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": list(blocks)})

    for n, message in enumerate(messages, 1):
        where = f"message {n}"
        role = message.get("role")
        content = message.get("content")
        if role in ("system", "developer"):
            if text := content_text(content):
                system.append({"type": "text", "text": text})
        elif role == "user":
            add("user", _user_blocks(content, where))
        elif role == "assistant":
            blocks = _thinking_blocks(message)
            if text := content_text(content):
                blocks.append({"type": "text", "text": text})
            blocks.extend(_tool_use(c, where) for c in message.get("tool_calls") or [])
            add("assistant", blocks)
        elif role == "tool":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(message.get("tool_call_id") or ""),
            }
            if text := content_text(content):
                result["content"] = text
            if message.get("is_error") is True:
                result["is_error"] = True
            add("user", [result])
        else:
            raise ConversionError(f"{where}: role {role!r} has no Anthropic Messages form")
    return system, turns


def anthropic_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions function tools as Messages API tools (``name``, ``description``
    when given, ``input_schema``: the parameters, an empty object schema when none);
    :class:`ConversionError` names a tool that is not a function tool."""
    found = []
    for n, tool in enumerate(tools, 1):
        function = tool.get("function")
        if tool.get("type") != "function" or not isinstance(function, Mapping):
            raise ConversionError(
                f"tool {n}: type {tool.get('type')!r} is not a function tool "
                '({"type": "function", "function": {...}})'
            )
        item: dict[str, Any] = {"name": function.get("name")}
        if function.get("description") is not None:
            item["description"] = function["description"]
        item["input_schema"] = function.get("parameters") or {"type": "object", "properties": {}}
        found.append(item)
    return found


_CHOICES = {"auto": "auto", "required": "any", "none": "none"}


def anthropic_tool_choice(choice: Any) -> dict[str, Any]:
    """A Chat Completions ``tool_choice`` in Messages form (module docstring); a choice
    already in that form (``{"type": "auto" | "any" | "none" | "tool", ...}``) as given.
    :class:`ConversionError` for any other."""
    if isinstance(choice, str) and choice in _CHOICES:
        return {"type": _CHOICES[choice]}
    if isinstance(choice, Mapping):
        if isinstance(choice.get("function"), Mapping):
            return {"type": "tool", "name": choice["function"].get("name")}
        if choice.get("type") in ("auto", "any", "none", "tool"):
            return dict(choice)
    raise ConversionError(f"tool_choice {choice!r} has no Anthropic Messages form")


def anthropic_request(
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: Any = "auto",
) -> dict[str, Any]:
    """The Messages API request fields for one round (besides ``model``, ``max_tokens``,
    sampling and ``stream``): ``system`` (when the conversation has system text),
    ``messages``, and ``tools`` with ``tool_choice`` when tools are offered or must be
    declared (module docstring). :class:`ConversionError` as :func:`anthropic_messages` and
    :func:`anthropic_tools` raise it."""
    system, turns = anthropic_messages(messages)
    for turn in turns:  # a lone text block reads best as the string it was
        blocks = turn["content"]
        if len(blocks) == 1 and blocks[0]["type"] == "text":
            turn["content"] = blocks[0]["text"]
    request: dict[str, Any] = {"messages": turns}
    if system:
        request["system"] = system[0]["text"] if len(system) == 1 else system
    if tools:
        request["tools"] = anthropic_tools(tools)
        request["tool_choice"] = anthropic_tool_choice(tool_choice)
        return request
    called = [
        b["name"]
        for t in turns
        if isinstance(t["content"], list)
        for b in t["content"]
        if b["type"] == "tool_use"
    ]
    if called or any(
        isinstance(t["content"], list) and any(b["type"] == "tool_result" for b in t["content"])
        for t in turns
    ):
        names = list(dict.fromkeys(called))
        request["tools"] = [{"name": n, "input_schema": {"type": "object"}} for n in names]
        request["tool_choice"] = {"type": "none"}
    return request


def _sdk() -> Any:
    """The anthropic SDK; :class:`ImportError` naming the extra that installs it."""
    try:
        import anthropic
    except ImportError:
        raise ImportError(
            "AnthropicMessagesModel needs the anthropic SDK: "
            "pip install 'toolreplay[anthropic]' (or pip install anthropic)"
        ) from None
    return anthropic


class AnthropicMessagesModel:
    """Anthropic Messages through the anthropic SDK (``client.messages.create``).

    ``http_client``: an ``httpx2.Client`` (what anthropic 2.x takes), or an
    ``httpx.Client``, which it then sends through
    (:func:`~toolreplay.models.httpx_bridge.httpx2_client`: the client vcrpy and the replay
    player serve). ``settings.base_url`` is the SDK's base URL, without ``/v1``
    (``https://api.anthropic.com``); ``max_retries`` 0 by default (a retry would hide a
    cassette miss). Request body: ``model``, ``max_tokens`` (``settings.max_tokens``, else
    :data:`DEFAULT_MAX_TOKENS`), ``temperature``, :func:`anthropic_request`'s fields,
    ``stream: true`` with ``settings.stream``.

    The reply is read from the raw HTTP response by the Anthropic Messages wire reader (a
    streamed reply's events assembled there), in Chat Completions terms (``stop_reason``
    ``tool_use`` as ``tool_calls``, ``end_turn`` as ``stop``, ``max_tokens`` as ``length``).
    Errors: :class:`~toolreplay.wire.replies.ModelReplyError` for an error status (worded
    ``BadRequestError: Error code: 400 - {...}`` as every reader words it), an unusable
    body, a stream broken off, or no response at all (status None: ``APIConnectionError``);
    a cassette miss raised as itself; :class:`~toolreplay.models.base.ConversionError`
    before anything is sent; :class:`ImportError` when the SDK is not installed.
    """

    def __init__(
        self,
        settings: ModelSettings,
        http_client: Any,
        *,
        max_retries: int = 0,
        tool_choice: Any = "auto",
    ) -> None:
        from toolreplay.models.httpx_bridge import httpx2_client

        anthropic = _sdk()
        self.settings = settings
        self.name = settings.model
        self.tool_choice = tool_choice
        self._client = sorted_body(anthropic.Anthropic)(
            api_key=settings.api_key or "replay-no-key",
            base_url=settings.base_url,
            http_client=httpx2_client(http_client),
            max_retries=max_retries,
        )

    @property
    def endpoint(self) -> str:
        """The URL requests go to (``{base_url}/v1/messages``)."""
        return str(self._client.base_url).rstrip("/") + "/v1/messages"

    def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> ModelReply:
        body = anthropic_request(messages, tools, self.tool_choice)
        body["max_tokens"] = self.settings.max_tokens or DEFAULT_MAX_TOKENS
        # anthropic 2.x has no ``temperature`` argument; the API still takes the field
        body["extra_body"] = {"temperature": self.settings.temperature}
        if self.settings.stream:
            body["stream"] = True
        anthropic = _sdk()
        from toolreplay.cassettes.miss import find_miss

        try:
            raw = self._client.messages.with_raw_response.create(model=self.settings.model, **body)
        except anthropic.APIStatusError as exc:
            raise status_fault(exc.response) from None
        except Exception as exc:
            miss = find_miss(exc)
            if miss is not None:
                raise miss from None
            if not isinstance(exc, anthropic.APIConnectionError):
                raise
            cause = exc.__cause__ or exc.__context__
            why = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
            raise ModelReplyError(self.endpoint, None, f"{type(exc).__name__}: {exc}{why}") from exc
        return reply_of(raw.http_response, ANTHROPIC_MESSAGES)


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "AnthropicMessagesModel",
    "anthropic_messages",
    "anthropic_request",
    "anthropic_tool_choice",
    "anthropic_tools",
]
