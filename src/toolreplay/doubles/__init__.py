"""Test doubles: what toolreplay records *against* when no real endpoint is used.

- :mod:`.standin`: the stand-in model, an OpenAI-compatible server on loopback whose replies
  are a deterministic policy over the request it receives;
- :mod:`.open_meteo`: the Open-Meteo fixture server (``/v1/search``, ``/v1/forecast``) serving
  ``fixtures/open_meteo.yaml`` in the real API's shapes;
- :mod:`.loopback`: the small threaded HTTP server both run on.

Nothing here runs during replay; production code imports this package only to record.
"""
