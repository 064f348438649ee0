"""The Chat Completions wire reader: episodes rebuilt from a cassette's interactions alone,
whatever program sent the requests (toolreplay's hosts, pydantic-ai, ``llm``, a hand-written
openai SDK loop), streamed replies or not.

What is read:

- **model exchanges**: ``POST`` requests whose path ends in ``/chat/completions`` and whose
  JSON body holds ``messages``. Each is one round; its reply is read by
  :func:`toolreplay.wire.replies.parse_chat_reply` (an event stream, when the request asked
  ``"stream": true``, is assembled as the openai SDK does);
- **tool traffic**: every other interaction (Open-Meteo, a database API...), kept in order
  on the round during which it happened (:attr:`~toolreplay.wire.interactions.WireRound.traffic`);
- the rounds' **tool results**: the ``role: tool`` messages of the next request that answer
  the round's tool calls (by ``tool_call_id``; a legacy ``function_call`` by the
  ``role: function`` message of its name); a result whose content is a JSON object with a
  string ``error`` (and at most a ``reason``), as toolreplay's toolsets report a failed call,
  has that text as its ``error``;
- **episodes**: a request whose messages do not continue the previous request's (fewer
  messages, or a different first user message) starts a new episode
  (:func:`episodes_from_interactions`).

The interactions are read by :func:`toolreplay.wire.interactions.read_exchanges` (the shapes
it knows are listed there). Reading a cassette file:
:func:`toolreplay.cassettes.episodes.episodes_from_cassette`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import httpx

from toolreplay.wire.episode import (
    FINISH_STOP_REASONS,
    Episode,
    ModelReply,
    Round,
    ToolCall,
    ToolResult,
    Usage,
)
from toolreplay.wire.interactions import (
    Exchange,
    WireEpisodeError,
    WireRecord,
    WireRound,
    read_exchanges,
)
from toolreplay.wire.replies import (
    ModelReplyError,
    parse_chat_reply,
    status_error_name,
    status_error_text,
)


def _reply(exchange: Exchange) -> ModelReply:
    """The exchange's reply through the one parser the model client uses."""
    request = httpx.Request(
        "POST", exchange.uri, content=json.dumps(exchange.request_body).encode("utf-8")
    )
    headers = {"content-type": exchange.content_type} if exchange.content_type else {}
    response = httpx.Response(
        exchange.status, headers=headers, content=exchange.response_body, request=request
    )
    if exchange.status >= 400:  # worded as the model client words the SDK's status error
        endpoint = str(request.url.copy_with(query=None))
        problem = f"{status_error_name(exchange.status)}: {status_error_text(response)}"
        raise ModelReplyError(endpoint, exchange.status, problem)
    return parse_chat_reply(response)


def _first_user(messages: Sequence[Any]) -> Any:
    return next(
        (m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"),
        None,
    )


def _continues(previous: Sequence[Any], current: Sequence[Any]) -> bool:
    """Whether ``current`` (a request's messages) continues the conversation ``previous``
    held: more messages, and the same first user message."""
    return len(current) > len(previous) and _first_user(current) == _first_user(previous)


def _group(exchanges: Sequence[Exchange]) -> list[list[WireRound]]:
    groups: list[list[WireRound]] = []
    pending: list[Exchange] = []  # traffic before the first model request
    for exchange in exchanges:
        if not exchange.is_chat_completion:
            if groups:
                last = groups[-1][-1]
                groups[-1][-1] = replace(last, traffic=(*last.traffic, exchange))
            else:
                pending.append(exchange)
            continue
        messages = exchange.request_body["messages"]
        if groups and _continues(groups[-1][-1].exchange.request_body["messages"], messages):
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
    answers: dict[str, str] = {}
    legacy: dict[str, list[str]] = {}  # function name → contents of its function messages
    for n, m in enumerate(next_messages):
        if isinstance(m, dict) and m.get("role") in ("tool", "function"):
            text = m.get("content")
            text = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
            if m["role"] == "tool":
                answers[str(m.get("tool_call_id"))] = text
            elif n >= start:
                legacy.setdefault(str(m.get("name")), []).append(text)
    found = []
    for call in calls:
        queue = legacy.get(call.name, []) if not call.id else []
        content = answers[call.id] if call.id in answers else (queue.pop(0) if queue else None)
        if content is not None:
            found.append(ToolResult(call, content, error=_tool_error(content)))
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


def _tools_offered(body: Mapping[str, Any]) -> bool:
    return bool(body.get("tools") or body.get("functions"))


def _stop_reason(rounds: Sequence[Round], replies_ok: bool) -> str:
    """The stop reason as the wire shows it: ``error`` (the last reply unusable, or none
    usable), ``truncated``
    or ``filtered`` (its finish reason), ``converged`` (no tool calls, tools offered),
    ``converged`` also when no request offered tools at all (a plain chat), ``repeated``
    (tools withheld after a round repeating the calls of one of the two before it),
    ``max_rounds`` otherwise (calls left unanswered, or tools withheld)."""
    if not replies_ok or not rounds:
        return "error"
    last = rounds[-1]
    if (stop := FINISH_STOP_REASONS.get(last.reply.finish_reason)) is not None:
        return stop
    if not last.reply.tool_calls and (
        last.tools_offered or not any(r.tools_offered for r in rounds)
    ):
        return "converged"
    if not last.reply.tool_calls and len(rounds) >= 3:
        previous = sorted(c.signature() for c in rounds[-2].reply.tool_calls)
        earlier = [sorted(c.signature() for c in r.reply.tool_calls) for r in rounds[-4:-2]]
        if previous and previous in earlier:
            return "repeated"
    return "max_rounds"


def _episode(group: Sequence[WireRound], configuration: str, question_id: str) -> WireRecord:
    rounds: list[Round] = []
    faults: list[str] = []
    usage = Usage()
    error: str | None = None
    final: ModelReply | None = None
    for i, wire_round in enumerate(group):
        body = wire_round.exchange.request_body
        try:
            reply = _reply(wire_round.exchange)
        except ModelReplyError as exc:
            if i + 1 < len(group):  # the program recovered: a later request continues
                faults.append(f"request {i + 1} (interaction {wire_round.exchange.number}): {exc}")
                continue
            error = str(exc)
            break
        usage = usage + reply.usage
        following = group[i + 1].exchange.request_body["messages"] if i + 1 < len(group) else []
        reply = _sent_back(reply, body["messages"], following)
        rounds.append(
            Round(
                i + 1,
                _tools_offered(body),
                reply,
                _results(reply.tool_calls, following, len(body["messages"])),
            )
        )
        final = reply
    last = group[-1]  # the last request: the conversation so far
    transcript = [dict(m) for m in last.exchange.request_body["messages"]]
    if final is not None and error is None:
        transcript.append(final.to_message())
    stop = _stop_reason(rounds, error is None)
    answer = "" if error or final is None else (final.content or "")
    streamed = any(r.exchange.request_body.get("stream") is True for r in group)
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
    groups = _group(read_exchanges(list(interactions)))
    return [_episode(g, configuration, question_id) for g in groups]


def episodes_from_interactions(
    interactions: Iterable[Mapping[str, Any]], configuration: str = "", question_id: str = ""
) -> list[Episode]:
    """Every episode held by a cassette's interactions, in order, read from the wire alone.

    ``interactions`` are a cassette's ``interactions`` list in any shape the module docstring
    lists (e.g. :func:`toolreplay.cassettes.store.load_cassette`'s result, or a foreign
    cassette's ``yaml.safe_load(...)["interactions"]``). For each episode:

    - ``rounds``: one per chat-completions request, numbered from 1, ``tools_offered`` when
      the request held ``tools``, the reply as :func:`parse_chat_reply` reads it, and as
      results the tool messages the next request sends for the reply's tool calls;
    - ``transcript``: the last request's messages plus the final reply's assistant message
      (none when that reply is unusable);
    - ``answer``: the final reply's ``content`` (``""`` when None); ``usage``: summed;
    - ``stop_reason``: ``converged``, ``max_rounds``, ``repeated``, ``truncated``,
      ``filtered`` or ``error`` as the wire shows it (``budget`` cannot be told from the wire
      and reads as ``max_rounds``); ``error`` holds the last reply's fault (an error status,
      a stream cut off...), the rounds before it kept. An unusable reply that the program
      recovered from (a later request continues) is skipped, and named in
      :attr:`Episode.faults` (:func:`read_wire_episodes`); round numbers count requests,
      so they then skip it too;
    - ``configuration``/``question_id``: as given; ``wall_time_s``: 0.

    An episode with no rounds is never returned: :class:`WireEpisodeError` when the
    interactions hold no chat-completions request at all."""
    found = read_wire_episodes(interactions, configuration, question_id)
    if not found:
        raise WireEpisodeError(
            "no Chat Completions request (POST .../chat/completions with messages) in the "
            "interactions"
        )
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
    "episode_from_interactions",
    "episodes_from_interactions",
    "read_wire_episodes",
]
