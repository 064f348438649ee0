"""results.json has one definition: the pydantic models in :mod:`toolreplay.results`. The
committed JSON Schema is generated from them, every field is documented, and what the writer
produces, the report reads and the committed file holds all validate against them."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel

from toolreplay.results import format as results_module
from toolreplay.results import records as records_module
from toolreplay.results.build import write_results
from toolreplay.results.format import (
    RESULTS_FORMAT,
    Results,
    ResultsError,
    as_results,
    check_results,
    load_results,
    results_document,
    results_json_schema,
    results_json_text,
)

REPO = Path(__file__).resolve().parents[1]
COMMITTED_SCHEMA = REPO / "schemas" / "results.schema.json"
COMMITTED_RESULTS = REPO / "reports" / "results.json"


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    return json.loads(COMMITTED_RESULTS.read_text(encoding="utf-8"))


def test_committed_schema_is_generated_from_the_models() -> None:
    """Fails when the models changed and schemas/results.schema.json was not regenerated:
    run `python -m toolreplay.results > schemas/results.schema.json`."""
    committed = json.loads(COMMITTED_SCHEMA.read_text(encoding="utf-8"))
    assert committed == results_json_schema()


def _models() -> list[type[BaseModel]]:
    return [
        obj
        for module in (results_module, records_module)
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, BaseModel)
        and obj.__module__ == module.__name__
        and not obj.__name__.startswith("_")
    ]


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.__name__)
def test_every_field_is_documented(model: type[BaseModel]) -> None:
    assert model.__doc__ and model.__doc__.strip()
    undocumented = [n for n, f in model.model_fields.items() if not f.description]
    assert not undocumented, f"{model.__name__}: {undocumented}"


def test_committed_results_validate_against_models_and_schema(committed: dict) -> None:
    check_results(committed)
    jsonschema.Draft202012Validator(results_json_schema()).validate(committed)
    assert committed["format"] == RESULTS_FORMAT


def test_built_results_validate(reference_results: Results) -> None:
    """The built model is a valid document, and reads back from its JSON as the same bytes."""
    document = results_document(reference_results)
    check_results(document)
    assert results_json_text(Results.model_validate(document)) == results_json_text(
        reference_results
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda r: r.update(format=2), "at $.format"),
        (lambda r: r.update(format=True), "at $.format"),
        (lambda r: r["configurations"][1].update(passed="4"), "at $.configurations[1].passed"),
        (lambda r: r["episodes"][3].update(passed=1), "at $.episodes[3].passed"),
        (lambda r: r["episodes"][0].pop("transcript"), "field 'transcript' is missing"),
        (lambda r: r["episodes"][0]["transcript"][1].pop("role"), "$.episodes[0].transcript[1]"),
        (lambda r: r["provenance"].update(model=None), "at $.provenance.model"),
        (lambda r: r["fidelity"]["checks"][0].update(passed="yes"), "$.fidelity.checks[0].passed"),
        (lambda r: r["fidelity"]["ablations"][0]["flips"].append({"question_id": "x"}), "'from'"),
    ],
)
def test_malformed_results_are_rejected_with_the_path(
    committed: dict, edit: Any, expected: str
) -> None:
    bad = copy.deepcopy(committed)
    edit(bad)
    with pytest.raises(ResultsError) as info:
        check_results(bad)
    assert expected in str(info.value)
    # the committed schema agrees with the models
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(results_json_schema()).validate(bad)


def test_unknown_fields_are_allowed(committed: dict) -> None:
    """Other stages add optional data; readers ignore what they do not know, and keep it (after
    the known fields) when the document is dumped again."""
    extended = copy.deepcopy(committed)
    extended["experiment"] = {"k": 3}
    extended["episodes"][0]["trial"] = 2
    extended["configurations"][0]["pass_at_3"] = 1.0
    check_results(extended)
    again = results_document(extended)
    assert again["experiment"] == {"k": 3} and list(again)[-1] == "experiment"
    assert again["episodes"][0]["trial"] == 2
    assert again["configurations"][0]["pass_at_3"] == 1.0


def test_trial_fields_are_typed(committed: dict) -> None:
    """The trial fields are part of the format: a wrong type is refused with its path."""
    for edit, where in [
        (lambda r: r.update(trials="5"), "at $.trials"),
        (lambda r: r["configurations"][0]["pass_at_k"].update({"1": "1"}), "pass_at_k"),
        (lambda r: r["trial_outcomes"][0].update(passed=1), "$.trial_outcomes[0].passed"),
        (lambda r: r["selection"].update(all_questions="yes"), "$.selection.all_questions"),
        (lambda r: r["episodes"][0]["verdict_evidence"].pop("values"), "field 'values' is missing"),
    ]:
        bad = copy.deepcopy(committed)
        edit(bad)
        with pytest.raises(ResultsError, match=re.escape(where)):
            check_results(bad)


def _untyped(value: Any, path: str = "$") -> list[str]:
    """Where ``value`` holds fields no model declares (a transcript message's are the wire's)."""
    if isinstance(value, BaseModel):
        here = [f"{path}.{k}" for k in value.model_extra or {}]
        for name in type(value).model_fields:
            here += _untyped(getattr(value, name), f"{path}.{name}")
        return here
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _untyped(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _untyped(v, f"{path}.{k}")]
    return []


COMMITTED_DOCUMENTS = sorted(
    [*(REPO / "reports").rglob("results.json"), *(REPO / "examples").glob("*/report*/results.json")]
)


def test_every_committed_results_file_is_found() -> None:
    names = {p.relative_to(REPO).as_posix() for p in COMMITTED_DOCUMENTS}
    assert {"reports/results.json", "examples/stock_agent/report/results.json"} <= names


@pytest.mark.parametrize(
    "path", COMMITTED_DOCUMENTS, ids=lambda p: p.relative_to(REPO).parent.as_posix()
)
def test_committed_results_round_trip_through_the_models(path: Path) -> None:
    """Read into :class:`Results` and written back, every committed results.json is the same
    bytes: the models hold every field, in the writer's key order, and leave out what the
    file leaves out."""
    raw = path.read_bytes()
    model = load_results(path)
    assert _untyped(model) == []  # every field is a typed one (a message's own are the wire's)
    text = json.dumps(results_document(model), ensure_ascii=False, indent=2) + "\n"
    assert text.encode("utf-8") == raw
    assert results_json_text(model).encode("utf-8") == raw
    jsonschema.Draft202012Validator(results_json_schema()).validate(json.loads(raw))


def test_as_results_validates_a_mapping_once(committed: dict) -> None:
    model = as_results(committed)
    assert isinstance(model, Results) and as_results(model) is model
    assert model.episodes[0].question_id == committed["episodes"][0]["question_id"]
    bad = copy.deepcopy(committed)
    bad["episodes"][0]["rounds"] = "2"
    with pytest.raises(ResultsError, match=re.escape("at $.episodes[0].rounds")):
        as_results(bad)


def test_writer_refuses_an_invalid_document(tmp_path: Path, committed: dict) -> None:
    bad = copy.deepcopy(committed)
    del bad["episodes"]
    target = tmp_path / "results.json"
    with pytest.raises(ResultsError, match="the required field 'episodes' is missing"):
        write_results(target, bad)
    assert not target.exists()


def test_validation_does_not_change_the_document(committed: dict, tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    write_results(target, committed)
    assert target.read_bytes() == COMMITTED_RESULTS.read_bytes()


@pytest.mark.parametrize(
    ("role", "url", "provenance", "source"),
    [
        ("model", "http://127.0.0.1/v1", "stand-in", "stand-in"),  # the bundled double
        ("model", "http://127.0.0.1/v1", "live", "live"),  # a model server on this machine
        ("model", "https://api.example.com/v1", "live", "live"),
        ("tool", "http://127.0.0.1/v1/search", "live", "fixture-server"),
        ("tool", "http://localhost/v1/forecast", "stand-in", "fixture-server"),
        ("tool", "https://geocoding-api.open-meteo.com/v1/search", "live", "live"),
    ],
)
def test_endpoint_source_is_judged_from_the_url(
    role: str, url: str, provenance: str, source: str
) -> None:
    from toolreplay.results.build import endpoint_source

    assert endpoint_source(role, url, provenance) == source


def test_provenance_names_what_answered_at_each_endpoint() -> None:
    from toolreplay.cassettes.manifest import read_manifest
    from toolreplay.results.build import provenance

    llama = provenance(read_manifest(REPO / "cassettes" / "llama-gemma3-270m"))
    assert [(e.name, e.role, e.source) for e in llama.endpoints or ()] == [
        ("model", "model", "live"),
        ("geocoding_url", "tool", "fixture-server"),
        ("forecast_url", "tool", "fixture-server"),
    ]
    reference = provenance(read_manifest(REPO / "cassettes" / "reference"))
    assert [e.source for e in reference.endpoints or ()] == [
        "stand-in", "fixture-server", "fixture-server"
    ]  # fmt: skip
    assert all(e.loopback and e.host == "127.0.0.1" for e in reference.endpoints or ())
