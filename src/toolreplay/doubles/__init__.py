"""Test doubles of any study: what toolreplay records *against* when no real endpoint is used.

- :mod:`.loopback`: the small threaded HTTP server a double runs on;
- :mod:`.scripted`: a scripted chat-completions server (replies given in advance);
- :mod:`.sse`: a chat completion as a server-sent event stream.

A study's own doubles (the weather study's stand-in model and Open-Meteo fixture server) live
in its package (:mod:`toolreplay.study.weather.standin`,
:mod:`toolreplay.study.weather.fixture_server`) and reach the engine through its
:class:`~toolreplay.studies.Study` (``standin_policy``, ``standin_server``,
``fixture_server``). Nothing here runs during replay.
"""

#: The model name every stand-in model answers as (recorded in a stand-in set's manifest; the
#: audit tells stand-in replies from live ones by it).
STANDIN_MODEL = "toolreplay-standin"
