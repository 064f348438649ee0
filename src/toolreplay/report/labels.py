"""Labels and orders shared by the report's sections.
"""

from __future__ import annotations

#: Failure modes in the order the gallery shows them; unknown modes follow, sorted by name.
FAILURE_MODES: dict[str, str] = {
    "error": "Error",
    "empty_answer": "Empty answer",
    "unfulfilled_promise": "Unfulfilled promise",
    "fabricated_value": "Fabricated value",
    "no_measurement": "No measurement",
    "declined": "Declined",
    "refusal": "Refusal",
    "truncated": "Truncated",
}


#: Grid rows and columns in the study's order; hosts/toolsets not listed here follow.
HOSTS: dict[str, str] = {"single": "one tool round (if)", "loop": "until no tool call (while)"}


def toolset_labels() -> dict[str, str]:
    """Toolset name → caption, in the study's column order (the only installed study's;
    empty when that cannot be told: columns then follow in order of appearance)."""
    from toolreplay.studies import StudyError, load_study

    try:
        study = load_study()
    except StudyError:
        return {}
    return {t: study.toolset_labels.get(t, "") for t in study.toolsets}


#: Metrics charted per configuration: (results key, label, number format).
METRICS: tuple[tuple[str, str, str], ...] = (
    ("avg_rounds", "avg rounds", "{:.2f}"),
    ("avg_tool_calls", "avg tool calls", "{:.2f}"),
    ("recorded_wall_time_s", "recorded wall time (s, sum)", "{:.3f}"),
    ("avg_tokens", "avg tokens per episode", "{:.1f}"),
)


#: What answered at an endpoint (``provenance.endpoints[i]["source"]``), in words.
SOURCES: dict[str, str] = {
    "live": "live",
    "fixture-server": "the fixture server",
    "stand-in": "the stand-in",
    "pytest": "as recorded by the tests (toolreplay cannot tell what answered)",
}
