"""toolreplay: record/replay and evaluation of LLM tool-calling loops.

Data flow, one module per stage::

    evals ─► experiment ─► hosts ─► model (openai SDK over httpx) ─┐
                             │                                     ├─ cassettes (vcrpy)
                          toolsets ─► openmeteo (requests) ────────┘
                             ▼
                          episode ─► judge / failures / audit ─► report
"""

__version__ = "0.1.0"
