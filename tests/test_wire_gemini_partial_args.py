"""Gemini on Vertex AI streaming a call's arguments in pieces (``FunctionCall.partialArgs``,
``willContinue``; asked by ``toolConfig.functionCallingConfig.streamFunctionCallArguments``).

The replies are vercel/ai's recorded Vertex AI streams (Apache-2.0, Copyright 2023 Vercel,
Inc.), ``packages/google/src/__fixtures__/`` at ``ed857f50f112``, each chunk kept verbatim
as one ``data:`` event of a vcrpy cassette in ``tests/data/foreign/``:

- ``vercel-gemini-vertex-partial-args.yaml``: ``google-stream-tool-call-arguments.chunks.txt``
  (getWeather for Boston, then San Francisco; ``$.location`` sent as ``"Boston"`` then
  ``""``), with the request that asks for it and a second round answering both calls written
  around it (the recorded fixture holds the reply only);
- ``vercel-gemini-vertex-partial-args-nested.yaml``:
  ``google-vertex-stream-tool-call-arguments-nested.1.chunks.txt`` (cookRecipe: nested
  objects, arrays of objects and of strings, a step sent in two and three pieces);
- ``vercel-gemini-vertex-partial-args-mixed-calls.yaml``:
  ``google-stream-no-args-tool-call.chunks.txt`` (a thought, read_theme sent whole without
  arguments, then three read_screen calls streamed).

The last two requests are placeholders (the fixtures hold no request). Expected arguments are
read off the chunks by hand, as vercel/ai's own test snapshots give them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from toolreplay.cassettes.episodes import episodes_from_cassette
from toolreplay.wire.reader import episodes_from_interactions

FOREIGN = Path(__file__).resolve().parent / "data" / "foreign"
WEATHER = FOREIGN / "vercel-gemini-vertex-partial-args.yaml"
NESTED = FOREIGN / "vercel-gemini-vertex-partial-args-nested.yaml"
MIXED = FOREIGN / "vercel-gemini-vertex-partial-args-mixed-calls.yaml"


def _calls(path: Path) -> list[list[tuple[str, str, Any]]]:
    (episode,) = episodes_from_cassette(path)
    return [
        [(c.id, c.name, json.loads(c.arguments)) for c in r.reply.tool_calls]
        for r in episode.rounds
    ]


def test_streamed_arguments_are_assembled_and_answered_by_the_next_request():
    (episode,) = episodes_from_cassette(WEATHER)
    assert _calls(WEATHER) == [
        [
            ("getWeather#1.0", "getWeather", {"location": "Boston"}),
            ("getWeather#1.1", "getWeather", {"location": "San Francisco"}),
        ],
        [],
    ]
    first, last = episode.rounds
    assert first.reply.finish_reason == "tool_calls"
    assert [(r.call.id, json.loads(r.content)) for r in first.results] == [
        ("getWeather#1.0", {"output": {"temp": "12C"}}),
        ("getWeather#1.1", {"output": {"temp": "18C"}}),
    ]
    assert last.reply.content == "Boston 12C, San Francisco 18C."
    assert episode.stop_reason == "converged"


def test_nested_paths_build_objects_and_arrays_and_join_string_pieces():
    ((call,),) = _calls(NESTED)
    _, name, arguments = call
    recipe = arguments["recipe"]
    assert name == "cookRecipe" and list(arguments) == ["recipe"]
    assert list(recipe) == ["ingredients", "name", "steps"]
    assert recipe["name"] == "Lasagna"
    assert len(recipe["ingredients"]) == 10 and len(recipe["steps"]) == 10
    assert recipe["ingredients"][0] == {"amount": "16 oz", "name": "Lasagna noodles"}
    assert recipe["ingredients"][9] == {"amount": "1/2 tsp", "name": "Pepper"}
    assert recipe["steps"][1] == (
        "Cook lasagna noodles according to package directions, drain and set aside."
    )
    assert recipe["steps"][4] == "In a 9x13 baking dish, spread a thin layer of meat sauce."


def test_a_call_sent_whole_and_streamed_calls_keep_their_places():
    ((*calls,),) = _calls(MIXED)
    assert calls == [
        ("read_theme#1.0", "read_theme", {}),
        ("read_screen#1.1", "read_screen", {"id": "A"}),
        ("read_screen#1.2", "read_screen", {"id": "B"}),
        ("read_screen#1.3", "read_screen", {"id": "C"}),
    ]


def _with_first_path(path: Path, json_path: str) -> list[dict[str, Any]]:
    """The cassette's first interaction (the streamed calls) with its first ``jsonPath``
    replaced."""
    first = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"][0]
    body = first["response"]["body"]
    body["string"] = body["string"].replace('"$.location"', json.dumps(json_path), 1)
    return [first]


def test_a_piece_that_cannot_be_applied_makes_the_reply_unusable():
    for json_path, why in [
        ("location", "does not start with '$'"),
        ("$", "names no field"),
        ("$.location[1]", "skips items of its array"),
    ]:
        (episode,) = episodes_from_interactions(_with_first_path(WEATHER, json_path))
        assert episode.stop_reason == "error"
        assert "streamed function call arguments are unusable" in (episode.error or "")
        assert "'getWeather', partialArgs[0]" in (episode.error or "")
        assert why in (episode.error or "")


def test_a_string_piece_onto_another_kind_of_value_is_refused():
    first = yaml.safe_load(WEATHER.read_text(encoding="utf-8"))["interactions"][0]
    body = first["response"]["body"]
    body["string"] = body["string"].replace(
        '{"jsonPath":"$.location","stringValue":"Boston"',
        '{"jsonPath":"$.location","numberValue":1',
        1,
    )
    assert '"numberValue":1' in body["string"]
    (episode,) = episodes_from_interactions([first])
    assert episode.stop_reason == "error"
    assert "'$.location' is given a value again (1 already held)" in (episode.error or "")
