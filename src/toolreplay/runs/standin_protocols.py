"""The stand-in model over any protocol the model clients speak: a study's stand-in policy
(Chat Completions only) behind the scripted loopback server, which answers Chat
Completions, the OpenAI Responses API and Anthropic Messages alike.

A study's stand-in (:attr:`toolreplay.studies.Study.standin_policy`, the weather study's
:class:`~toolreplay.study.weather.standin.StandinPolicy`) maps a Chat Completions request
body to a Chat Completions response body. For an eval file of ``experiment.protocol:
responses`` or ``anthropic_messages``, :func:`policy_script` turns it into a script of
:func:`toolreplay.doubles.scripted_chat_server`: each request, in whatever protocol it came,
is turned into the Chat Completions body the stand-in reads, and the assistant message of
its reply is what the scripted server answers, in the protocol asked (streamed when the
request asks). The Chat Completions body::

    {"model": MODEL, "messages": [...], "temperature": T,          # T when the request has one
     "tools": [{"type": "function",
                "function": {"name", "description", "parameters"}}, ...]}   # when offered

``messages``: :func:`toolreplay.doubles.conversation` (the protocol's wire reader, the one
that reads the cassette later); ``tools``: the Responses API's flat function tools
(``{"type": "function", "name", "description", "parameters"}``, platform.openai.com/docs/
api-reference/responses/create) and Anthropic's ``{"name", "description", "input_schema"}``
(docs.anthropic.com/en/api/messages), left out when the request offers none: the
Anthropic client's last round without tools declares the tools the conversation called with
``tool_choice: {"type": "none"}``, which offers nothing (as the Anthropic wire reader reads
it). Tools of another kind (hosted tools) are skipped.

The stand-in's reply is a function of that body, so a recording over any protocol asks it
the same questions as over Chat Completions and gets the same decisions; only the ids
(``toolu_…`` over Anthropic) and the usage estimate (the scripted server's, characters / 4)
are the protocol's. Nothing here runs in replay.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from toolreplay.doubles import Script, conversation, scripted_chat_server
from toolreplay.studies import ChatPolicy
from toolreplay.wire import calls_forbidden


class StandinReplyError(ValueError):
    """The stand-in's reply carries no assistant message (``choices[0].message``); the
    scripted server answers the request with HTTP 500 naming it."""


def chat_tool(tool: Any) -> dict[str, Any] | None:
    """A request's tool in Chat Completions form (``{"type": "function", "function": {name,
    description, parameters}}``), from the Responses flat form, Anthropic's ``input_schema``
    form or the Chat Completions form itself; None for a tool of another kind (a hosted
    tool, a value that is no tool)."""
    if not isinstance(tool, Mapping):
        return None
    if isinstance(tool.get("function"), Mapping):  # already Chat Completions
        return {"type": "function", "function": dict(tool["function"])}
    if not isinstance(tool.get("name"), str) or not tool["name"]:
        return None
    if "input_schema" in tool and tool.get("type") in (None, "custom"):  # Anthropic
        parameters = tool["input_schema"]
    elif tool.get("type") == "function":  # the Responses API's flat form
        parameters = tool.get("parameters")
    else:
        return None
    function: dict[str, Any] = {"name": tool["name"]}
    if tool.get("description") is not None:
        function["description"] = tool["description"]
    function["parameters"] = parameters if isinstance(parameters, Mapping) else {}
    return {"type": "function", "function": function}


def _tools_offered(body: Mapping[str, Any]) -> bool:
    """Whether the request lets the model call a tool: tools given, and no tool choice
    ``none`` in its protocol's form (tools declared, none callable:
    :func:`~toolreplay.wire.calls_forbidden`)."""
    return bool(body.get("tools")) and not calls_forbidden(body)


def chat_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Chat Completions body of a model request of any protocol (see the module
    docstring); :class:`~toolreplay.doubles.chat_form.ConversationError` when no wire reader
    reads it as a model request."""
    out: dict[str, Any] = {"model": body.get("model"), "messages": conversation(dict(body))}
    if "temperature" in body:
        out["temperature"] = body["temperature"]
    if _tools_offered(body):
        tools = [t for t in map(chat_tool, body.get("tools") or []) if t is not None]
        if tools:
            out["tools"] = tools
    return out


def policy_script(policy: ChatPolicy) -> Script:
    """A script of the scripted server answering every request with the assistant message
    of ``policy``'s reply to its Chat Completions body (:func:`chat_body`)."""

    def script(body: dict[str, Any]) -> dict[str, Any]:
        reply = policy.reply(chat_body(body))
        choices = reply.get("choices") if isinstance(reply, Mapping) else None
        message = choices[0].get("message") if isinstance(choices, list) and choices else None
        if not isinstance(message, Mapping):
            raise StandinReplyError("the stand-in's reply holds no choices[0].message")
        return dict(message)

    return script


@contextmanager
def standin_protocol_server(policy: ChatPolicy, protocol: str) -> Iterator[str]:
    """Serve ``policy`` on loopback over the scripted server until the block exits; yields
    the base URL the ``protocol``'s model client takes (``http://127.0.0.1:PORT/v1`` for
    ``chat_completions`` and ``responses``, ``http://127.0.0.1:PORT`` for
    ``anthropic_messages``, whose SDK adds ``/v1/messages``)."""
    with scripted_chat_server(policy_script(policy)) as server:
        yield server.root_url if protocol == "anthropic_messages" else server.base_url


__all__ = [
    "StandinReplyError",
    "chat_body",
    "chat_tool",
    "policy_script",
    "standin_protocol_server",
]
