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
never reach the converted file), header values recorded as bytes (botocore's ``!!binary``)
stored as text, secret query parameters dropped, the loopback port dropped. A reply body
recorded still compressed (vcrpy without ``decode_compressed_response``: ``!!binary`` gzip
under ``Content-Encoding: gzip``) is stored decoded, as toolreplay's recorder stores it, by
the decoder the wire readers use (:func:`toolreplay.wire.content_encoding.decode_body`:
gzip, deflate, br, zstd, chained codings); one it cannot decode (an unknown coding, a module
not installed) keeps its ``content-encoding`` header beside the body, so the two still agree.
Bodies are kept value for value, so the converted cassette replays the same replies and
matches the same requests (toolreplay matches JSON bodies as parsed JSON).

Before anything is written, the converted cassette is loaded by toolreplay's checked loader
and its episodes, as the wire readers read them, are compared with the original's:
:class:`CassetteError` when they differ (a body or header lost in the conversion), and the
original is left as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.format import JsonBodySerializer
from toolreplay.inputs import InputFileError, load_yaml, read_checked
from toolreplay.wire.content_encoding import decode_body
from toolreplay.wire.interactions import header_text


def _headers(raw: Any) -> dict[str, list[str]]:
    """Recorded headers as toolreplay stores them: name → list of text values (a single
    value becomes a list of one; names and values recorded as bytes decoded by
    :func:`~toolreplay.wire.interactions.header_text`)."""
    if not isinstance(raw, dict):
        return {}
    headers: dict[str, list[str]] = {}
    for name, value in raw.items():
        values = value if isinstance(value, list) else [] if value is None else [value]
        headers[header_text(name)] = [header_text(v) for v in values]
    return headers


def _decoded(string: Any, encodings: list[str]) -> tuple[Any, bool]:
    """A recorded reply body ``string`` with the ``Content-Encoding`` values ``encodings``
    undone, as the wire readers undo them (text when the result is UTF-8, else bytes), and
    whether it was decoded: False (the body as recorded) when a coding cannot be undone
    (its header must then stay beside it)."""
    if not encodings or not isinstance(string, (str, bytes)) or not string:
        return string, True
    data = string.encode("utf-8") if isinstance(string, str) else string
    body, fault = decode_body(data, ", ".join(encodings))
    if fault:
        return string, False
    if body == data:
        return string, True
    try:
        return body.decode("utf-8"), True
    except UnicodeDecodeError:
        return body, True


def _request(raw: dict[str, Any], where: str) -> dict[str, Any]:
    from toolreplay.cassettes.vcr import before_record_request

    if not isinstance(raw, dict) or "method" not in raw or "uri" not in raw:
        raise CassetteError(f"{where}: request needs method and uri")
    if "parsed_body" in raw:
        body: Any = json.dumps(raw["parsed_body"], ensure_ascii=False)
    else:
        body = raw.get("body")

    from types import SimpleNamespace

    # the attributes before_record_request reads and sets
    filtered = before_record_request(
        SimpleNamespace(uri=str(raw["uri"]), headers=_headers(raw.get("headers")))
    )
    return {
        "method": str(raw["method"]),
        "uri": filtered.uri,
        "body": body,
        "headers": filtered.headers,
    }


def _response(raw: dict[str, Any], where: str) -> dict[str, Any]:
    from toolreplay.cassettes.vcr import before_record_response

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
    recorded = _headers(raw.get("headers"))
    encodings = [v for k, vs in recorded.items() if k.lower() == "content-encoding" for v in vs]
    body["string"], decoded = _decoded(body["string"], encodings)
    headers = before_record_response({"headers": recorded})["headers"]
    if not decoded:  # still encoded: the header that says so stays with it
        headers["content-encoding"] = encodings
    return {"status": raw["status"], "headers": headers, "body": body}


def _parse(text: str, source: str) -> list[Any]:
    """The ``interactions`` list of a cassette's text; :class:`CassetteError` naming
    ``source`` when it is not YAML or not a cassette at all."""
    import yaml

    try:
        raw = load_yaml(text)
    except yaml.YAMLError as exc:
        raise CassetteError(f"{source}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("interactions"), list):
        raise CassetteError(f"{source}: not a cassette (no 'interactions' list)")
    return list(raw["interactions"])


def _convert(interactions: list[Any], source: str) -> str:
    converted = []
    for i, item in enumerate(interactions, start=1):
        where = f"{source}: interaction {i}"
        if not isinstance(item, dict):
            raise CassetteError(f"{where}: not a mapping")
        converted.append(
            {
                "request": _request(item.get("request"), where),  # type: ignore[arg-type]
                "response": _response(item.get("response"), where),  # type: ignore[arg-type]
            }
        )
    return JsonBodySerializer.serialize({"version": 1, "interactions": converted})


def convert_text(text: str, source: str = "cassette") -> str:
    """A cassette's text in another serializer's shape (see the module docstring) → the text
    of the same interactions in toolreplay's shape. :class:`CassetteError` naming ``source``
    (and the interaction, from 1) when it is not YAML or not a cassette at all."""
    return _convert(_parse(text, source), source)


def _read(interactions: list[Any]) -> Any:
    """What the wire readers read of ``interactions``: per episode, the episode with the
    fields its equality leaves out (streamed, faults); or the error reading them raised."""
    from toolreplay.wire.reader import episodes_from_interactions

    try:
        episodes = episodes_from_interactions(interactions)
    except Exception as exc:  # the same failure on both sides is no difference
        return f"{type(exc).__name__}: {exc}"
    return [(e, e.streamed, e.faults) for e in episodes]


def _outline(read: Any) -> str:
    if isinstance(read, str):
        return f"no episode ({read})"
    return "; ".join(
        f"{len(e.rounds)} round{'s' if len(e.rounds) != 1 else ''} ending {e.stop_reason}"
        + (f" ({(e.error or faults[0])[:300]})" if e.error or faults else "")
        for e, _, faults in read
    )


def check_episodes(original: list[Any], converted: list[Any], source: str) -> None:
    """:class:`CassetteError` naming ``source`` when the episodes the wire readers read from
    the ``converted`` interactions differ from those of the ``original`` ones (rounds,
    messages, answer, usage, stop reason, error, streamed, faults), URIs aside: the
    conversion drops credential query parameters and loopback ports on purpose, so the
    original is read with the converted interactions' URIs."""
    if len(original) != len(converted):
        raise CassetteError(
            f"{source}: the converted cassette holds {len(converted)} interactions, the "
            f"original {len(original)}; nothing was written"
        )
    with_uris = []
    for item, ours in zip(original, converted, strict=True):
        request = item.get("request") if isinstance(item, dict) else None
        if isinstance(request, dict):
            item = {**item, "request": {**request, "uri": ours["request"]["uri"]}}
        with_uris.append(item)
    before, after = _read(with_uris), _read(converted)
    if before != after:
        raise CassetteError(
            f"{source}: the converted cassette would not read the same episodes: before, "
            f"{_outline(before)}; after, {_outline(after)}. Nothing was written"
        )


def convert_file(source: Path, target: Path) -> int:
    """Convert the cassette at ``source`` and write it to ``target`` atomically (the same path
    converts in place); returns the number of interactions. Before anything is replaced the
    converted text is checked with toolreplay's loader, and the episodes the wire readers
    read from it against the original's (:func:`check_episodes`): :class:`CassetteError`
    otherwise, and nothing is written."""
    from toolreplay.cassettes.store import CASSETTE_LIMIT, validate_cassette
    from toolreplay.outputs import atomic_write_text

    try:
        text = read_checked(source, what="cassette", limit=CASSETTE_LIMIT)
    except InputFileError as exc:
        raise CassetteError(str(exc)) from None
    original = _parse(text, str(source))
    converted = _convert(original, str(source))
    interactions = validate_cassette(target, converted.encode("utf-8"))
    check_episodes(original, interactions, str(source))
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, converted)
    return len(interactions)
