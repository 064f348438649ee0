"""Episodes rebuilt from a cassette's interactions alone, whatever program sent the requests
and whatever protocol it spoke: the wire readers of :data:`PROTOCOLS` (Chat Completions, the
Responses API, Anthropic Messages, Gemini, Bedrock Converse), each reading its requests into
Chat Completions form (:mod:`toolreplay.wire.protocol`), and one episode builder for all.

What is read:

- **model exchanges**: each interaction that a protocol reader recognises (by method, path
  and body; :func:`protocol_of`) is one round, its reply read by that protocol's reader. The
  protocol is told per interaction, so a cassette of an agent that calls two providers is
  read in order;
- **tool traffic**: every other interaction (Open-Meteo, a database API, an MCP server...),
  kept in order on the round during which it happened
  (:attr:`~toolreplay.wire.interactions.WireRound.traffic`);
- the rounds' **tool results**: the ``tool`` messages of the next request that answer the
  round's tool calls (by call id; a legacy ``function_call`` by the ``role: function``
  message of its name); a result marked ``is_error`` (Anthropic, Bedrock), or whose content
  is a JSON object with a string ``error`` (and at most a ``reason``), as toolreplay's
  toolsets report a failed call, has that text as its ``error``;
- **episodes**: a request whose conversation does not continue the previous request's
  (fewer messages, or a different first user message) starts a new episode. A Responses API
  request naming a ``previous_response_id`` (or a Conversations API ``conversation``)
  continues the conversation that reply ended. A request sending again the conversation of
  one whose reply was unusable (an SDK's retry after a 429, 500 or 503, or a stream cut off)
  is a retry, not a new episode: the failed reply is named in :attr:`Episode.faults`
  (``"...; the request was sent again"``), not a round.

The interactions are read by :func:`toolreplay.wire.interactions.read_exchanges` (the shapes
it knows are listed there). Reading a cassette file:
:func:`toolreplay.cassettes.episodes.episodes_from_cassette`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote

from toolreplay.wire.anthropic_messages import ANTHROPIC_MESSAGES
from toolreplay.wire.bedrock_converse import BEDROCK_CONVERSE
from toolreplay.wire.chat_completions import CHAT_COMPLETIONS
from toolreplay.wire.episode import (
    FINISH_STOP_REASONS,
    Episode,
    Message,
    ModelReply,
    Round,
    ToolCall,
    ToolResult,
    Usage,
    ended_stop_reason,
)
from toolreplay.wire.gemini import GEMINI
from toolreplay.wire.interactions import (
    Exchange,
    WireEpisodeError,
    WireRecord,
    WireRound,
    read_exchanges,
)
from toolreplay.wire.protocol import ModelRequest, WireProtocol
from toolreplay.wire.replies import ModelReplyError
from toolreplay.wire.responses import RESPONSES
from toolreplay.wire.unread import no_episode_error

#: The protocols read, in the order they are tried on an interaction.
PROTOCOLS: tuple[WireProtocol, ...] = (
    CHAT_COMPLETIONS,
    RESPONSES,
    ANTHROPIC_MESSAGES,
    GEMINI,
    BEDROCK_CONVERSE,
)


def protocol_of(exchange: Exchange) -> WireProtocol | None:
    """The protocol whose model request ``exchange`` is (:data:`PROTOCOLS`), None for any
    other interaction (tool traffic)."""
    return next((p for p in PROTOCOLS if p.is_request(exchange)), None)


@dataclass(frozen=True)
class _Read:
    """A model exchange read once: its protocol, its request, and its reply or the fault
    that made the reply unusable."""

    protocol: WireProtocol
    request: ModelRequest
    reply: ModelReply | ModelReplyError


def _first_user(messages: Sequence[Any]) -> Any:
    return next(
        (m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"),
        None,
    )


def _continues(previous: Sequence[Any], current: Sequence[Any]) -> bool:
    """Whether ``current`` (a request's messages) continues the conversation ``previous``
    held: more messages, and the same first user message."""
    return len(current) > len(previous) and _first_user(current) == _first_user(previous)


def _retries(previous: _Read, current: _Read) -> bool:
    """Whether ``current`` is the program sending ``previous`` again because its reply was
    unusable in a way worth retrying (a status SDKs retry: 408, 409, 429, 5xx; no
    response; a stream cut off or a body that could not be read): the same conversation,
    re-sent after such a fault. An SDK's retry, not a new episode. After any other client
    error (400, 401, 403, 404, 422...) no SDK retries, so the same conversation sent again
    is a new episode (a test that caught the error and asked again)."""
    if not isinstance(previous.reply, ModelReplyError):
        return False
    status = previous.reply.status
    if status is not None and 400 <= status < 500 and status not in _RETRIED_CLIENT_ERRORS:
        return False
    return current.request.messages == previous.request.messages


#: The 4xx statuses the model SDKs retry (openai, anthropic, google-genai: timeout,
#: conflict, rate limit); every 5xx is retried as well.
_RETRIED_CLIENT_ERRORS = frozenset({408, 409, 429})


def _read(exchanges: Sequence[Exchange]) -> tuple[dict[int, _Read], set[int]]:
    """Every model exchange read, by exchange number, in order (a Responses request's
    history resolved from the replies before it; a background response read from the poll
    that finished it), and the numbers of the exchanges that were such polls."""
    history: dict[str, tuple[Message, ...]] = {}
    found: dict[int, _Read] = {}
    polls: set[int] = set()
    for n, exchange in enumerate(exchanges):
        if exchange.number in polls:
            continue
        protocol = protocol_of(exchange)
        if protocol is None:
            continue
        request = protocol.request(exchange, history)
        exchange, used = protocol.settled(exchange, exchanges[n + 1 :])
        polls.update(used)
        try:
            reply: ModelReply | ModelReplyError = protocol.reply(exchange)
        except ModelReplyError as exc:
            reply = exc
        if isinstance(reply, ModelReply) and (rid := protocol.reply_id(exchange)):
            history[rid] = (*request.messages, reply.to_message())
        found[exchange.number] = _Read(protocol, request, reply)
    return found, polls


def _group(
    exchanges: Sequence[Exchange], read: Mapping[int, _Read], polls: set[int]
) -> list[list[WireRound]]:
    groups: list[list[WireRound]] = []
    pending: list[Exchange] = []  # traffic before the first model request
    for exchange in exchanges:
        if exchange.number in polls:  # part of a model exchange, not tool traffic
            continue
        if exchange.number not in read:
            if groups:
                last = groups[-1][-1]
                groups[-1][-1] = replace(last, traffic=(*last.traffic, exchange))
            else:
                pending.append(exchange)
            continue
        this = read[exchange.number]
        before = read[groups[-1][-1].exchange.number] if groups else None
        if before is not None and (
            _continues(before.request.messages, this.request.messages) or _retries(before, this)
        ):
            groups[-1].append(WireRound(exchange))
        else:
            groups.append([WireRound(exchange, tuple(pending))])
            pending = []
    return groups


def _sent_back(
    reply: ModelReply, messages: Sequence[Any], next_messages: Sequence[Any]
) -> ModelReply:
    """``reply`` with the tool-call ids the program sent back in the next request's copy of
    the assistant message (a host fills a missing id with one of its own), when that copy
    holds as many tool calls."""
    if len(next_messages) <= len(messages) or not reply.tool_calls:
        return reply
    echoed = next_messages[len(messages)]
    calls = echoed.get("tool_calls") if isinstance(echoed, dict) else None
    if echoed.get("role") != "assistant" or not isinstance(calls, list):
        return reply
    if len(calls) != len(reply.tool_calls):
        return reply
    ids = [c.get("id") if isinstance(c, dict) else None for c in calls]
    fixed = tuple(
        replace(call, id=sent) if isinstance(sent, str) and sent and sent != call.id else call
        for call, sent in zip(reply.tool_calls, ids, strict=True)
    )
    return replace(reply, tool_calls=fixed) if fixed != reply.tool_calls else reply


def _results(
    calls: Sequence[ToolCall], next_messages: Sequence[Any], start: int = 0
) -> tuple[ToolResult, ...]:
    """The tool messages of the next request answering ``calls``, in call order: by
    ``tool_call_id``; a legacy ``function_call`` (no id) by the next ``role: function``
    message of its name among the messages added from ``start`` on."""
    answers: dict[str, tuple[str, bool]] = {}
    legacy: dict[str, list[tuple[str, bool]]] = {}  # function name → its function messages
    for n, m in enumerate(next_messages):
        if isinstance(m, dict) and m.get("role") in ("tool", "function"):
            text = m.get("content")
            text = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
            failed = m.get("is_error") is True
            if m["role"] == "tool":
                answers[str(m.get("tool_call_id"))] = (text, failed)
            elif n >= start:
                legacy.setdefault(str(m.get("name")), []).append((text, failed))
    found = []
    for call in calls:
        queue = legacy.get(call.name, []) if not call.id else []
        answer = answers[call.id] if call.id in answers else (queue.pop(0) if queue else None)
        if answer is not None:
            content, failed = answer
            error = (content or "the tool reported an error") if failed else None
            found.append(ToolResult(call, content, error=error or _tool_error(content)))
    return tuple(found)


def _tool_error(content: str) -> str | None:
    """The error a tool message reports, as toolreplay's toolsets write it: a JSON object
    holding a string ``error`` (and at most a ``reason``); None for any other content."""
    try:
        value = json.loads(content)
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("error"), str):
        if set(value) <= {"error", "reason"}:
            return str(value["error"])
    return None


def _question_text(content: Any) -> str:
    """The first user message's content as text (parts joined); ``""`` when there is none."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") if isinstance(p, dict) else p for p in content]
        if all(isinstance(t, str) for t in texts):
            return "".join(texts)  # type: ignore[arg-type]
    return json.dumps(content, ensure_ascii=False)


#: How the agent frameworks name the tool that hands a conversation to another agent
#: (``transfer_to_agent2`` in the OpenAI Agents SDK, Swarm and LangGraph's supervisor and
#: swarm, called with no arguments; ``transfer_to_agent`` in Google's ADK, with the agent's
#: name), lower-cased.
HANDOFF_PREFIX = "transfer_to"
ADK_HANDOFF = "transfer_to_agent"


def hands_off(call: ToolCall) -> bool:
    """Whether a tool call is a handoff to another agent: named :data:`HANDOFF_PREFIX`… with
    no arguments (``{}``), or ADK's :data:`ADK_HANDOFF`; a ``transfer_to_savings(amount=…)``
    of a banking agent's is an ordinary tool."""
    name = call.name.lower()
    if name == ADK_HANDOFF:
        return True
    return name.startswith(HANDOFF_PREFIX) and call.parsed_arguments() in ({}, "")


def _system(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """A request's system prompt and instructions (its ``system`` and ``developer`` messages),
    each as canonical JSON: which agent sent it."""
    return [
        json.dumps(m.get("content"), sort_keys=True, ensure_ascii=False)
        for m in messages
        if m.get("role") in ("system", "developer")
    ]


def _stop_reason(rounds: Sequence[Round], replies_ok: bool, handed_off: bool = False) -> str:
    """The stop reason as the wire shows it: ``error`` (the last reply unusable, or none
    usable), ``truncated``
    or ``filtered`` (its finish reason), ``converged`` (no tool calls, tools offered),
    ``converged`` also when no request offered tools at all (a plain chat) and when the last
    request came from another agent (``handed_off``: the round before called a handoff tool,
    :func:`hands_off`, and the system prompt or instructions changed: an agent with no
    tools answered), ``repeated``
    (tools withheld after a round repeating the calls of one of the two before it),
    ``max_rounds`` otherwise (calls left unanswered, or tools withheld from the same agent).
    ``unknown`` in place of ``converged`` when the last reply named no finish reason
    (:data:`~toolreplay.wire.episode.NO_FINISH_REASON`): finished or cut off, not told."""
    if not replies_ok or not rounds:
        return "error"
    last = rounds[-1]
    if (stop := FINISH_STOP_REASONS.get(last.reply.finish_reason)) is not None:
        return stop
    if not last.reply.tool_calls and (
        last.tools_offered or not any(r.tools_offered for r in rounds) or handed_off
    ):
        return ended_stop_reason(last.reply)
    if not last.reply.tool_calls and len(rounds) >= 3:
        previous = sorted(c.signature() for c in rounds[-2].reply.tool_calls)
        earlier = [sorted(c.signature() for c in r.reply.tool_calls) for r in rounds[-4:-2]]
        if previous and previous in earlier:
            return "repeated"
    return "max_rounds"


def _episode(
    group: Sequence[WireRound], read: Mapping[int, _Read], configuration: str, question_id: str
) -> WireRecord:
    rounds: list[Round] = []
    faults: list[str] = []
    usage = Usage()
    error: str | None = None
    final: ModelReply | None = None
    asked: list[int] = []
    for i, wire_round in enumerate(group):
        this = read[wire_round.exchange.number]
        reply = this.reply
        if isinstance(reply, ModelReplyError):
            if i + 1 < len(group):  # the program recovered: a later request continues
                where = f"request {i + 1} (interaction {wire_round.exchange.number})"
                again = _retries(this, read[group[i + 1].exchange.number])
                sent = "; the request was sent again" if again else ""
                faults.append(f"{where}: {reply}{sent}")
                continue
            error = str(reply)
            break
        usage = usage + reply.usage
        messages = this.request.messages
        following = (
            read[group[i + 1].exchange.number].request.messages if i + 1 < len(group) else ()
        )
        reply = _sent_back(reply, messages, following)
        asked.append(wire_round.exchange.number)  # the request of each round
        rounds.append(
            Round(
                i + 1,
                this.request.tools_offered,
                reply,
                _results(reply.tool_calls, following, len(messages)),
            )
        )
        final = reply
    last = read[group[-1].exchange.number]  # the last request: the conversation so far
    transcript = [dict(m) for m in last.request.messages]
    if final is not None and error is None:
        transcript.append(final.to_message())
    handed_off = (
        len(rounds) > 1
        and any(hands_off(c) for c in rounds[-2].reply.tool_calls)
        and _system(read[asked[-1]].request.messages) != _system(read[asked[-2]].request.messages)
    )
    stop = _stop_reason(rounds, error is None, handed_off)
    answer = "" if error or final is None else (final.content or "")
    streamed = any(read[r.exchange.number].request.streamed for r in group)
    user = _first_user(transcript)
    episode = Episode(
        configuration=configuration,
        question_id=question_id,
        question=_question_text(user),
        transcript=tuple(transcript),
        rounds=tuple(rounds),
        stop_reason=stop,
        answer=answer,
        usage=usage,
        error=error,
        streamed=streamed,
        faults=tuple(faults),
    )
    return WireRecord(episode, tuple(group))


def read_wire_episodes(
    interactions: Iterable[Mapping[str, Any]], configuration: str = "", question_id: str = ""
) -> list[WireRecord]:
    """Every episode in ``interactions`` with where it came from (:class:`WireRecord`), in
    order; see :func:`episodes_from_interactions`."""
    exchanges = read_exchanges(list(interactions))
    read, polls = _read(exchanges)
    groups = _group(exchanges, read, polls)
    return [_episode(g, read, configuration, question_id) for g in groups]


#: The endpoint part of a model request's path, per protocol: what follows the base URL a
#: client is given (Gemini's and Bedrock's hold the model name).
_ENDPOINT = re.compile(
    r"(/chat/completions|/responses|/v1/messages|/messages"
    r"|/models/(?P<gemini>[^/:]+):\w+|/model/(?P<bedrock>[^/]+)/(converse|converse-stream|invoke"
    r"|invoke-with-response-stream))/?$"
)


def model_endpoint(exchange: Exchange) -> tuple[str, str]:
    """``(base_url, model)`` of a model request: the URI before the protocol's endpoint path
    (``…/v1`` before ``/chat/completions`` or ``/responses``; the root before
    ``/v1/messages``; ``…/v1beta`` before ``/models/M:generateContent``), and the body's
    ``model``, else the model the path names (Gemini, Bedrock); ``""`` for what is not
    there."""
    path = exchange.path
    found = _ENDPOINT.search(path)
    body = exchange.request_body
    model = body.get("model") if isinstance(body, dict) else None
    if not isinstance(model, str) or not model:
        model = (found.group("gemini") or found.group("bedrock") or "") if found else ""
        model = unquote(model)
    if found is None:
        return exchange.uri.split("?", 1)[0], model
    start = exchange.uri.index(path) + found.start()
    return exchange.uri[:start], model


def episodes_from_interactions(
    interactions: Iterable[Mapping[str, Any]], configuration: str = "", question_id: str = ""
) -> list[Episode]:
    """Every episode held by a cassette's interactions, in order, read from the wire alone.

    ``interactions`` are a cassette's ``interactions`` list in any shape
    :mod:`toolreplay.wire.interactions` lists (e.g.
    :func:`toolreplay.cassettes.store.load_cassette`'s result, or a foreign cassette's
    ``yaml.safe_load(...)["interactions"]``), of any protocol of :data:`PROTOCOLS`. For each
    episode:

    - ``rounds``: one per model request, numbered from 1, ``tools_offered`` when the request
      offered tools, the reply as its protocol's reader reads it, and as results the tool
      messages the next request sends for the reply's tool calls;
    - ``transcript``: the last request's conversation in Chat Completions form plus the
      final reply's assistant message (none when that reply is unusable);
    - ``answer``: the final reply's text (``""`` when none); ``usage``: summed;
    - ``stop_reason``: ``converged``, ``max_rounds``, ``repeated``, ``truncated``,
      ``filtered``, ``error`` or ``unknown`` (it would be ``converged``, but the last reply
      named no finish reason: it may have been cut off) as the wire shows it (``budget``
      cannot be told from the wire and reads as ``max_rounds``); ``error`` holds the last
      reply's fault (an error status, a stream cut off...), the rounds before it kept. An
      unusable reply that the program recovered from (a later request continues it, or
      sends its conversation again: a retry after an error status) is skipped, and named in
      :attr:`Episode.faults` (:func:`read_wire_episodes`); round numbers count requests, so
      they then skip it too;
    - ``streamed``: whether any of its requests asked for a streamed reply;
    - ``configuration``/``question_id``: as given; ``wall_time_s``: 0.

    An episode with no rounds is never returned: :class:`WireEpisodeError` when the
    interactions hold no model request (:func:`toolreplay.wire.unread.no_episode_error`:
    a request to a protocol's endpoint whose body was not recorded or is not the protocol's
    is named so, else the protocols read and the requests seen)."""
    items = list(interactions)
    found = read_wire_episodes(items, configuration, question_id)
    if not found:
        raise no_episode_error(items)
    return [w.episode for w in found]


def episode_from_interactions(
    interactions: Iterable[Mapping[str, Any]], configuration: str = "", question_id: str = ""
) -> Episode:
    """The one episode in ``interactions`` (see :func:`episodes_from_interactions`);
    :class:`WireEpisodeError` when they hold none or several (use the plural then)."""
    found = episodes_from_interactions(interactions, configuration, question_id)
    if len(found) != 1:
        raise WireEpisodeError(
            f"the interactions hold {len(found)} episodes (conversations that do not continue "
            "one another); read them with episodes_from_interactions"
        )
    return found[0]


__all__ = [
    "PROTOCOLS",
    "episode_from_interactions",
    "episodes_from_interactions",
    "hands_off",
    "model_endpoint",
    "no_episode_error",
    "protocol_of",
    "read_wire_episodes",
]
