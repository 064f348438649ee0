"""Test doubles of any study: what toolreplay records *against* when no real endpoint is used.

- :mod:`.loopback`: the small threaded HTTP server a double runs on;
- :mod:`.scripted`: a scripted model server (replies given in advance) answering Chat
  Completions, the Responses API, Anthropic Messages and Gemini on one port;
- :mod:`.replies`: its reply bodies, one builder per protocol;
- :mod:`.sse`: reply bodies as server-sent event streams, per protocol;
- :mod:`.chat_form`: a request's conversation in Chat Completions form, for a script.

A study's own doubles (the weather study's stand-in model and Open-Meteo fixture server) live
in its package (:mod:`toolreplay.study.weather.standin`,
:mod:`toolreplay.study.weather.fixture_server`) and reach the engine through its
:class:`~toolreplay.studies.Study` (``standin_policy``, ``standin_server``,
``fixture_server``). Nothing here runs during replay.
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

#: The model name every stand-in model answers as (recorded in a stand-in set's manifest; the
#: audit tells stand-in replies from live ones by it).
STANDIN_MODEL = "toolreplay-standin"

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "EventStream": "loopback",
    "SCRIPTED_MODEL": "scripted",
    "Script": "scripted",
    "ScriptedChatServer": "scripted",
    "conversation": "chat_form",
    "completion_events": "sse",
    "scripted_chat_server": "scripted",
    "serve": "loopback",
}

__all__ = [*sorted(_EXPORTS), "STANDIN_MODEL"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
