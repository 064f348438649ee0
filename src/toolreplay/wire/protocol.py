"""What a wire reader of one protocol provides: the shape every protocol module under
:mod:`toolreplay.wire` fills (:class:`WireProtocol`) and what it gives back for one model
request (:class:`ModelRequest`).

A protocol reader turns the protocol's own shapes into the one vocabulary episodes are kept
in: the conversation as Chat Completions messages (``system``, ``user``, ``assistant`` with
``tool_calls``, ``tool`` with ``tool_call_id``), and the reply as a
:class:`~toolreplay.wire.episode.ModelReply` whose ``finish_reason`` is in Chat Completions
terms (``stop``, ``tool_calls``, ``length``, ``content_filter``). The episode builder
(:mod:`toolreplay.wire.reader`) then works the same for every protocol: rounds, tool results,
episodes, stop reasons.

Conventions every reader keeps, so that the builder can pair calls with results:

- a tool call's ``id`` in the request's conversation is the protocol's own call id
  (``call_id``, ``tool_use.id``, ``toolUseId``); where the protocol has none (Gemini), the
  reader gives one that is the same in every request holding that turn (from the turn's
  position), and its ``tool`` messages name it;
- a ``tool`` message may carry ``"is_error": true`` (Anthropic's ``is_error``, Bedrock's
  ``status: error``): its content is then the result's error text;
- reasoning is kept on the reply (:attr:`ModelReply.reasoning`) under ``reasoning_details``,
  a list of ``{"type": "reasoning.text", "text": ...}``, ``{"type": "reasoning.summary",
  "summary": ...}`` or ``{"type": "reasoning.encrypted"}`` items (a signature, if any, under
  ``signature``), and in the conversation's assistant messages the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from toolreplay.wire.episode import Message, ModelReply
from toolreplay.wire.interactions import Exchange

#: The conversations that earlier replies ended, by the reply's id (a Responses API
#: ``previous_response_id`` names one): each the request's messages and the reply's assistant
#: message. The reader fills it in order as it reads a cassette.
History = Mapping[str, tuple[Message, ...]]


@dataclass(frozen=True)
class ModelRequest:
    """One model request as a protocol reader reads it: ``messages``, the whole conversation
    the request carries in Chat Completions form (a history the server keeps, such as a
    Responses ``previous_response_id`` chain, resolved in front of it); ``tools_offered``
    when it offers the model any tool; ``streamed`` when it asks for a streamed reply."""

    messages: tuple[Message, ...]
    tools_offered: bool
    streamed: bool


class WireProtocol(Protocol):
    """A wire reader of one protocol. ``name`` is its label in notes and docs (``Chat
    Completions``, ``Responses API``...)."""

    @property
    def name(self) -> str: ...

    def is_request(self, exchange: Exchange) -> bool:
        """Whether ``exchange`` is a model request of this protocol (by method, path and
        body). Never raises."""
        ...

    def request(self, exchange: Exchange, history: History) -> ModelRequest:
        """The request of ``exchange`` (one :meth:`is_request` accepted) in Chat Completions
        form. Never raises for a body :meth:`is_request` accepted; parts it does not know
        are skipped."""
        ...

    def reply(self, exchange: Exchange) -> ModelReply:
        """The reply of ``exchange``, streamed or not;
        :class:`~toolreplay.wire.replies.ModelReplyError` (endpoint, status, what was
        wrong) for an error status or a body that is not a usable reply."""
        ...

    def reply_id(self, exchange: Exchange) -> str | None:
        """The id a later request may name the reply by (:data:`History`), None when the
        protocol keeps no history on the server."""
        ...

    def settled(
        self, exchange: Exchange, later: Sequence[Exchange]
    ) -> tuple[Exchange, tuple[int, ...]]:
        """The exchange that holds the request's final reply, and the numbers of the ``later``
        exchanges that went into getting it (they are then no tool traffic): ``(exchange,
        ())`` but where the protocol finishes a reply after the request (a Responses API
        background response, polled with ``GET …/responses/{id}``). Never raises."""
        ...


class RequestCarriesAll:
    """What a protocol whose every request carries the whole conversation, and whose reply
    comes with its request, gives for the two history methods of :class:`WireProtocol`
    (Chat Completions, Anthropic Messages, Gemini, Bedrock Converse): no reply id, and the
    exchange itself as the settled one."""

    def reply_id(self, exchange: Exchange) -> str | None:
        return None

    def settled(
        self, exchange: Exchange, later: Sequence[Exchange]
    ) -> tuple[Exchange, tuple[int, ...]]:
        return exchange, ()


__all__ = ["History", "ModelRequest", "RequestCarriesAll", "WireProtocol"]
