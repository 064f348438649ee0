"""Converting a cassette written by another serializer into toolreplay's shape.

Known shapes (:func:`~toolreplay.cassettes.store.foreign_shape` names them when a cassette is
loaded):

- **pydantic-ai's** test serializer (``tests/json_body_serializer.py`` in pydantic-ai's
  repository, copied by many projects): a JSON request body under ``request.parsed_body`` (as
  toolreplay's), a JSON response body under ``response.parsed_body`` beside ``status`` and
  ``headers`` (toolreplay: ``response.body.parsed_body``); headers as recorded, minus a few;
- **vcrpy's** own ``yaml`` serializer (bodies as strings, headers as sent): already loadable,
  converted for the readable form and the header policy.

The result is what a toolreplay recording of the same exchanges writes: JSON bodies stored
parsed, header names lower-cased and only ``content-type`` kept (cookies, keys, request ids
never reach the converted file), secret query parameters dropped, the loopback port dropped.
Bodies are kept value for value, so the converted cassette replays the same replies and
matches the same requests (toolreplay matches JSON bodies as parsed JSON).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.format import JsonBodySerializer
from toolreplay.inputs import InputFileError, load_yaml, read_checked


def _request(raw: dict[str, Any], where: str) -> dict[str, Any]:
    from toolreplay.cassettes.vcr import _before_record_request

    if not isinstance(raw, dict) or "method" not in raw or "uri" not in raw:
        raise CassetteError(f"{where}: request needs method and uri")
    if "parsed_body" in raw:
        body: Any = json.dumps(raw["parsed_body"], ensure_ascii=False)
    else:
        body = raw.get("body")

    from types import SimpleNamespace

    # the attributes _before_record_request reads and sets
    filtered = _before_record_request(
        SimpleNamespace(uri=str(raw["uri"]), headers=dict(raw.get("headers") or {}))
    )
    return {
        "method": str(raw["method"]),
        "uri": filtered.uri,
        "body": body,
        "headers": filtered.headers,
    }


def _response(raw: dict[str, Any], where: str) -> dict[str, Any]:
    from toolreplay.cassettes.vcr import _before_record_response

    if not isinstance(raw, dict) or "status" not in raw:
        raise CassetteError(f"{where}: response needs status")
    if "parsed_body" in raw and "body" not in raw:  # pydantic-ai's shape
        body: dict[str, Any] = {"string": json.dumps(raw["parsed_body"], ensure_ascii=False)}
    else:
        stored = raw.get("body")
        if isinstance(stored, dict) and "parsed_body" in stored:
            body = {"string": json.dumps(stored["parsed_body"], ensure_ascii=False)}
        elif isinstance(stored, dict):
            body = {"string": stored.get("string")}
        else:
            body = {"string": stored}
    headers = _before_record_response({"headers": dict(raw.get("headers") or {})})["headers"]
    return {"status": raw["status"], "headers": headers, "body": body}


def convert_text(text: str, source: str = "cassette") -> str:
    """A cassette's text in another serializer's shape (see the module docstring) → the text
    of the same interactions in toolreplay's shape. :class:`CassetteError` naming ``source``
    (and the interaction, from 1) when it is not YAML or not a cassette at all."""
    import yaml

    try:
        raw = load_yaml(text)
    except yaml.YAMLError as exc:
        raise CassetteError(f"{source}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("interactions"), list):
        raise CassetteError(f"{source}: not a cassette (no 'interactions' list)")
    interactions = []
    for i, item in enumerate(raw["interactions"], start=1):
        where = f"{source}: interaction {i}"
        if not isinstance(item, dict):
            raise CassetteError(f"{where}: not a mapping")
        interactions.append(
            {
                "request": _request(item.get("request"), where),  # type: ignore[arg-type]
                "response": _response(item.get("response"), where),  # type: ignore[arg-type]
            }
        )
    return JsonBodySerializer.serialize({"version": 1, "interactions": interactions})


def convert_file(source: Path, target: Path) -> int:
    """Convert the cassette at ``source`` and write it to ``target`` atomically (the same path
    converts in place); returns the number of interactions. The written file is checked with
    toolreplay's loader before it replaces anything: :class:`CassetteError` otherwise."""
    from toolreplay.cassettes.store import CASSETTE_LIMIT, _validate
    from toolreplay.outputs import atomic_write_text

    try:
        text = read_checked(source, what="cassette", limit=CASSETTE_LIMIT)
    except InputFileError as exc:
        raise CassetteError(str(exc)) from None
    converted = convert_text(text, str(source))
    interactions = _validate(target, converted.encode("utf-8"))
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, converted)
    return len(interactions)
