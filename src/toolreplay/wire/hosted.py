"""Hosted tools: the tools a provider runs on its own side during one reply (web search, code
execution, file search, a remote MCP server), read from the reply in every protocol's form.

The wire readers skip these tools' calls and results (they are not the program's tool calls,
and the host never executes them); what a reply keeps of them is their names,
:attr:`~toolreplay.wire.episode.ModelReply.hosted_tools`, so the judge can tell that an
answer may draw on results the recording does not give it (a web search's pages are not in
the traffic, or only as citations): such values cannot be checked, and are not called made
up (the judge counts only the tools whose results hold data an answer could quote:
:func:`toolreplay.judging.checkable.quotable`). Read per protocol:

- Responses API ``output`` items: ``web_search_call`` → ``web_search``, ``file_search_call``,
  ``code_interpreter_call``, ``image_generation_call`` (:data:`RESPONSES_ITEMS`; a
  ``computer_call`` is the program's to run); ``mcp_call`` → its ``name``; an xAI
  server-side ``custom_tool_call`` (see :func:`toolreplay.wire.responses.reply_from_response`)
  → its ``name``;
- Anthropic Messages ``content`` blocks: ``server_tool_use`` and ``mcp_tool_use`` → their
  ``name`` (``web_search``, ``web_fetch``, ``code_execution``); a ``*_tool_result`` block of
  a server tool (``web_search_tool_result``...) → the name before ``_tool_result``;
- Gemini candidate: ``groundingMetadata`` holding search queries, chunks or an entry point
  (the ``google_search`` tool), ``urlContextMetadata`` (``url_context``), parts
  ``executableCode``/``codeExecutionResult`` (``code_execution``);
- Bedrock Converse ``content``: a ``toolUse`` of ``type: server_tool_use`` → its ``name``;
- Chat Completions message: ``annotations`` of type ``url_citation`` (OpenAI's search
  models) → ``web_search``; ``executed_tools`` (Groq's compound models) → each ``type`` or
  ``name``; a body's top-level ``citations`` or ``search_results`` (Perplexity) →
  ``web_search``.

A tool search (finding the program's own tools) is none of these: it returns no data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: Responses API output items a provider runs itself, and the tool each is.
RESPONSES_ITEMS = {
    "web_search_call": "web_search",
    "file_search_call": "file_search",
    "code_interpreter_call": "code_interpreter",
    "image_generation_call": "image_generation",
    "mcp_call": "mcp",
}

#: A ``*_tool_result`` block of Anthropic's that is a client tool's, not a server tool's.
_CLIENT_RESULTS = ("tool_result", "mcp_tool_result")


def distinct(names: Iterable[Any]) -> tuple[str, ...]:
    """The non-empty string ``names``, each once, in order; a tool search (Anthropic's
    ``tool_search_tool_bm25``/``_regex``, its ``tool_search_tool_result``) left out: it finds
    the program's tools, and its results hold no data an answer could state."""
    return tuple(
        dict.fromkeys(
            n for n in names if isinstance(n, str) and n and not n.startswith("tool_search")
        )
    )


def responses_hosted(items: Any) -> tuple[str, ...]:
    """The hosted tools of a Responses API ``output`` list (an ``mcp_call`` by its name)."""
    found: list[Any] = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, Mapping) and item.get("type") in RESPONSES_ITEMS:
            kind = item["type"]
            found.append(item.get("name") if kind == "mcp_call" else RESPONSES_ITEMS[kind])
    return distinct(found)


def anthropic_hosted(content: Any) -> tuple[str, ...]:
    """The server tools of an Anthropic ``content`` list."""
    found: list[Any] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, Mapping):
            continue
        kind = str(block.get("type") or "")
        if kind in ("server_tool_use", "mcp_tool_use"):
            found.append(block.get("name"))
        elif kind.endswith("_tool_result") and kind not in _CLIENT_RESULTS:
            found.append(kind.removesuffix("_tool_result"))
    return distinct(found)


def _get(obj: Any, camel: str) -> Any:
    """A Gemini field by its camelCase name or the snake_case one Vertex AI's SDKs write."""
    if not isinstance(obj, Mapping):
        return None
    if camel in obj:
        return obj[camel]
    return obj.get("".join("_" + c.lower() if c.isupper() else c for c in camel))


def gemini_hosted(candidate: Any) -> tuple[str, ...]:
    """The hosted tools a Gemini candidate shows it used."""
    found = []
    grounding = _get(candidate, "groundingMetadata")
    if isinstance(grounding, Mapping) and any(
        _get(grounding, k)
        for k in ("webSearchQueries", "groundingChunks", "searchEntryPoint", "groundingSupports")
    ):
        found.append("google_search")
    if _get(candidate, "urlContextMetadata"):
        found.append("url_context")
    parts = _get(_get(candidate, "content"), "parts")
    if any(
        _get(p, "executableCode") or _get(p, "codeExecutionResult")
        for p in (parts if isinstance(parts, list) else ())
    ):
        found.append("code_execution")
    return distinct(found)


def bedrock_hosted(content: Any) -> tuple[str, ...]:
    """The server-side tools of a Bedrock Converse message's ``content``."""
    found = []
    for block in content if isinstance(content, list) else ():
        use = block.get("toolUse") if isinstance(block, Mapping) else None
        if isinstance(use, Mapping) and use.get("type") == "server_tool_use":
            found.append(use.get("name"))
    return distinct(found)


def choice_zero(choices: Any) -> int | None:
    """The position in ``choices`` (a Chat Completions body's) of choice 0: the choice whose
    ``index`` is 0, or when a choice has no ``index`` the one at position 0 (``n`` > 1 may
    send them in any order); None when there is none."""
    for position, choice in enumerate(choices if isinstance(choices, list) else ()):
        index = choice.get("index", position) if isinstance(choice, Mapping) else position
        if index == 0 and not isinstance(index, bool):
            return position
    return None


def chat_hosted(body: Any) -> tuple[str, ...]:
    """The hosted tools a Chat Completions body shows (choice 0's message, picked by its
    ``index`` as the reply's text is (:func:`choice_zero`), and the body's own search
    fields). A streamed reply shows them once assembled
    (:func:`toolreplay.wire.stream.assemble_chat_stream` keeps ``annotations``,
    ``executed_tools`` and the top-level ``citations``/``search_results``)."""
    if not isinstance(body, Mapping):
        return ()
    found: list[Any] = []
    choices = body.get("choices")
    at = choice_zero(choices)
    first = choices[at] if at is not None and isinstance(choices, list) else None
    message = first.get("message") if isinstance(first, Mapping) else None
    if isinstance(message, Mapping):
        notes = message.get("annotations")
        if any(
            isinstance(a, Mapping) and a.get("type") == "url_citation"
            for a in (notes if isinstance(notes, list) else ())
        ):
            found.append("web_search")
        executed = message.get("executed_tools")
        for tool in executed if isinstance(executed, list) else ():
            if isinstance(tool, Mapping):
                found.append(tool.get("type") or tool.get("name"))
    if body.get("citations") or body.get("search_results"):
        found.append("web_search")
    return distinct(found)


__all__ = [
    "RESPONSES_ITEMS", "anthropic_hosted", "bedrock_hosted", "chat_hosted", "choice_zero",
    "distinct", "gemini_hosted", "responses_hosted",
]  # fmt: skip
