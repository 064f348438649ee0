"""The public-cassette sweep: how many recorded cassettes of other projects the wire readers
read into episodes, per protocol, and why the others are not read.

    python benchmarks/wire_sweep.py [NAME=]FOLDER [...] [--within cassettes] [--json FILE]
                                    [--markdown] [--list not-read|crashed|in-error|doubted]
    python benchmarks/wire_sweep.py pydantic-ai=../corpus/pydantic-ai/tests --within cassettes

Each FOLDER is searched for cassettes (``*.yaml`` and ``*.yml``, ``--glob`` to change; with
``--within cassettes`` only files in a folder named ``cassettes``); ``NAME=FOLDER`` names the
source in the table (the folder's name otherwise).

Each cassette's protocols are told **independently of the readers**, by each interaction's
request method and URI path alone (:func:`request_protocol`):

- ``POST …/chat/completions``: Chat Completions;
- ``POST …/responses``: Responses (not ``/responses/compact``, ``/responses/input_tokens``
  or a ``GET`` of a stored response);
- ``POST …/v1/messages``, or a ``POST`` whose JSON body holds ``anthropic_version`` (Bedrock's
  ``invoke``, Vertex AI's ``rawPredict``): Anthropic Messages;
- ``POST …:generateContent`` or ``…:streamGenerateContent``: Gemini;
- ``POST …/converse`` or ``…/converse-stream``: Bedrock Converse;
- anything else (embeddings, token counts, file uploads, Cohere, downloads, tool traffic)
  is no model request. A cassette with no model request at all (or interactions that are no
  HTTP exchange, such as a realtime websocket's messages) is counted apart, as "no model
  protocol".

A file that is no YAML the safe loader loads (multidict's ``istr`` header names, which
aiohttp cassettes hold, are read as strings) has its requests told from its text
(:func:`raw_request_protocols`: each ``- request:`` item's ``method:`` and ``uri:`` lines),
so a cassette of a model protocol that cannot be loaded counts as **not read** under that
protocol, with the loader's error as the reason, never as "no model protocol".

Each cassette is then read with :func:`toolreplay.cassettes.episodes.episodes_from_cassette`
(the whole file: loaded and checked, then read) and its interactions with
:func:`toolreplay.wire.reader.read_wire_episodes` (which interactions became rounds). For
each protocol of the cassette the outcome is:

- **read**: the cassette gives at least one episode and every request of that protocol is a
  round of one (``ending in error`` also counts those of its episodes whose last reply was
  unusable: an error status the test recorded on purpose, or a reply the reader refused;
  their ``episode.error`` is grouped by its first words);
- **not read**: :class:`~toolreplay.cassettes.errors.CassetteError` or
  :class:`~toolreplay.wire.interactions.WireEpisodeError` (the documented errors), or some of
  the protocol's requests not read as model requests; the reason's first words are grouped
  and counted;
- **crashed**: any other exception (a reader bug: it must be 0), with the exception's type,
  message and the frame it came from.

Output: a table per source and protocol, the reasons grouped under it, and with ``--json``
a file holding the summary and one record per cassette. The exit status is 1 when anything
crashed, 0 otherwise. Results of a run on public corpora are in ``docs/wire.md`` ("Public
cassettes").
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from toolreplay.cassettes.episodes import episodes_from_cassette
from toolreplay.cassettes.errors import CassetteError
from toolreplay.wire.interactions import WireEpisodeError, WireRecord
from toolreplay.wire.reader import read_wire_episodes
from toolreplay.yaml_tags import ISTR_TAGS, construct_istr

#: The protocols told, in table order, with their labels.
PROTOCOLS: dict[str, str] = {
    "chat": "Chat Completions",
    "responses": "Responses",
    "anthropic": "Anthropic Messages",
    "gemini": "Gemini",
    "bedrock": "Bedrock Converse",
}
#: The row of cassettes that hold no model request of these protocols.
NO_MODEL = "no model protocol"
#: The documented errors of a cassette that cannot be read; anything else is a crash.
DOCUMENTED = (CassetteError, WireEpisodeError)

#: The safe loader (libyaml's when PyYAML has it: a sweep loads every file), reading
#: multidict's ``istr`` header names as strings, as toolreplay's loader does.
_LOADER: Any = type("SweepLoader", (getattr(yaml, "CSafeLoader", yaml.SafeLoader),), {})
for _tag in ISTR_TAGS:  # on the subclass's own copy of the table
    _LOADER.add_constructor(_tag, construct_istr)


def _body(request: Mapping[str, Any]) -> Any:
    """A request's body as recorded (pydantic-ai's ``parsed_body``, vcrpy's ``body`` text or
    ``body.string``), parsed as JSON when it is JSON text."""
    if "parsed_body" in request:
        return request["parsed_body"]
    body = request.get("body")
    if isinstance(body, Mapping):
        body = body.get("string")
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            return json.loads(body)
        except ValueError:
            return body
    return body


def request_protocol(method: str, uri: str, body: Any = None) -> str | None:
    """The protocol key (:data:`PROTOCOLS`) of a model request told by its method, URI path
    and, for Anthropic models served elsewhere, a top-level ``anthropic_version`` in its JSON
    body; None for any other request."""
    if str(method).upper() != "POST":
        return None
    path = urlsplit(str(uri)).path.rstrip("/")
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/v1/messages"):
        return "anthropic"
    if path.endswith((":generateContent", ":streamGenerateContent")):
        return "gemini"
    if path.endswith(("/converse", "/converse-stream")):
        return "bedrock"
    if isinstance(body, Mapping) and "anthropic_version" in body:
        return "anthropic"
    return None


def interaction_protocols(interactions: Sequence[Any]) -> dict[int, str]:
    """The model requests among ``interactions``: protocol key by interaction number (1-based,
    as :class:`~toolreplay.wire.interactions.Exchange` numbers them). An item that is no
    recorded HTTP exchange is no model request."""
    found = {}
    for number, item in enumerate(interactions, 1):
        request = item.get("request") if isinstance(item, Mapping) else None
        if not isinstance(request, Mapping):
            continue
        key = request_protocol(
            str(request.get("method", "")), str(request.get("uri", "")), _body(request)
        )
        if key is not None:
            found[number] = key
    return found


@dataclass
class CassetteResult:
    """One cassette swept: its ``path``, ``source``, ``requests`` (model requests per
    protocol key), ``episodes`` read, ``outcome`` per protocol key (``read``, ``not read``,
    ``crashed``; ``no model protocol`` under :data:`NO_MODEL`), ``reason`` per protocol key
    that was not read, ``ended_in_error`` per protocol key (the error text of each episode
    whose last reply, of that protocol, was unusable), ``faults`` (replies recovered from)
    and ``doubts`` per protocol key: rounds read that look wrong (:func:`doubts`);
    ``other_rounds``: interactions the readers took as model requests though their method
    and path name no protocol; ``stop_reasons``: the episodes' stop reasons counted, by the
    protocol key of each episode's last request."""

    path: str
    source: str
    requests: dict[str, int] = field(default_factory=dict)
    episodes: int = 0
    outcome: dict[str, str] = field(default_factory=dict)
    reason: dict[str, str] = field(default_factory=dict)
    ended_in_error: dict[str, list[str]] = field(default_factory=dict)
    faults: list[str] = field(default_factory=list)
    doubts: dict[str, list[str]] = field(default_factory=dict)
    other_rounds: list[int] = field(default_factory=list)
    stop_reasons: dict[str, dict[str, int]] = field(default_factory=dict)


#: A non-zero input token count in a reply body, in any of the protocols read.
_TOKEN_COUNT = re.compile(
    rb'"(prompt_tokens|input_tokens|promptTokenCount|inputTokens)"\s*:\s*[1-9]'
)


def doubts(records: Sequence[WireRecord], told: Mapping[int, str]) -> dict[str, list[str]]:
    """Rounds that were read but look wrong, by the protocol key of their request (a hint of
    a part the reader missed, to look at by hand; a program can cause each too):

    - ``empty reply``: no text, refusal, tool call or reasoning, though the reply counts
      output tokens and was not filtered;
    - ``usage not read``: no input tokens read, though the body gives a non-zero count
      (``prompt_tokens``, ``input_tokens``, ``promptTokenCount`` or ``inputTokens``);
    - ``calls unanswered``: a round before the episode's last whose tool calls the next
      request does not all answer.
    """
    found: dict[str, list[str]] = {}
    for record in records:
        last = len(record.episode.rounds)
        for n, round_ in enumerate(record.episode.rounds, 1):
            exchange = record.rounds[round_.index - 1].exchange
            key = told.get(exchange.number, "other")
            reply = round_.reply
            where = f"interaction {exchange.number}"
            if not (reply.content or reply.refusal or reply.tool_calls or reply.reasoning):
                if reply.usage.completion_tokens > 0 and reply.finish_reason != "content_filter":
                    tokens = reply.usage.completion_tokens
                    found.setdefault(key, []).append(
                        f"{where}: empty reply ({tokens} output tokens)"
                    )
            if reply.usage.prompt_tokens == 0 and _TOKEN_COUNT.search(exchange.response_body):
                found.setdefault(key, []).append(f"{where}: usage not read")
            if n < last and len(round_.results) < len(reply.tool_calls):
                found.setdefault(key, []).append(
                    f"{where}: calls unanswered ({len(round_.results)} results for "
                    f"{len(reply.tool_calls)} calls)"
                )
    return found


#: An interaction's start in a cassette's text (``- request:`` as vcrpy and pydantic-ai write
#: it), and a request's ``method:`` and ``uri:`` lines (quoted or not).
_RAW_ITEM = re.compile(r"^-[ \t]+request:", re.MULTILINE)
_RAW_METHOD = re.compile(r"^[ \t]+method:[ \t]*['\"]?([A-Za-z]+)", re.MULTILINE)
_RAW_URI = re.compile(r"^[ \t]+uri:[ \t]*['\"]?([^'\"\s]+)", re.MULTILINE)
_RAW_RESPONSE = re.compile(r"^[ \t]+response:", re.MULTILINE)


def raw_request_protocols(text: str) -> dict[int, str]:
    """The model requests a cassette's ``text`` names, for a file no YAML loader loads:
    protocol key by interaction number, each ``- request:`` item read for its first
    ``method:`` and ``uri:`` lines before its ``response:`` (and an ``anthropic_version``
    there, for Anthropic models served elsewhere), told as :func:`request_protocol` tells
    them."""
    found = {}
    starts = [m.end() for m in _RAW_ITEM.finditer(text)]
    ends = [*starts[1:], len(text)]
    for number, (start, end) in enumerate(zip(starts, ends, strict=True), 1):
        response = _RAW_RESPONSE.search(text, start, end)
        request = text[start : response.start() if response else end]
        method, uri = _RAW_METHOD.search(request), _RAW_URI.search(request)
        if method is None or uri is None:
            continue
        body = {"anthropic_version": ""} if "anthropic_version" in request else None
        key = request_protocol(method.group(1), uri.group(1), body)
        if key is not None:
            found[number] = key
    return found


def _load_interactions(path: Path) -> list[Any]:
    """The ``interactions`` list of a cassette file as plain YAML ([] when it has none)."""
    with path.open("rb") as handle:
        data = yaml.load(handle, Loader=_LOADER)  # a safe loader
    items = data.get("interactions") if isinstance(data, dict) else None
    return list(items) if isinstance(items, list) else []


def no_model_kind(interactions: Sequence[Any]) -> str:
    """What a cassette without a model request holds, in a few words: its first ``POST``
    (the path's last segment: ``POST …/embeddings``), ``GET requests only``, or ``no HTTP
    exchange`` (a realtime websocket's messages, gRPC samples)."""
    requests = [
        i["request"]
        for i in interactions
        if isinstance(i, Mapping) and isinstance(i.get("request"), Mapping)
    ]
    if not requests:
        return "no HTTP exchange (websocket messages, gRPC samples)"
    posts = [r for r in requests if str(r.get("method", "")).upper() == "POST"]
    if not posts:
        return f"{str(requests[0].get('method', '')).upper()} requests only"
    url = urlsplit(str(posts[0].get("uri", "")))
    tail = re.split(r"(?=:)|/", url.path.rstrip("/"))[-1]
    return f"POST {url.hostname or ''} …{tail if tail.startswith(':') else '/' + tail}"


def _not_json(interactions: Sequence[Any], numbers: Sequence[int]) -> str:
    """A note naming the requests among ``numbers`` whose body is text that is not JSON (a
    cassette edited by hand), ``""`` when there is none."""
    bad = [n for n in numbers if isinstance(_body(interactions[n - 1]["request"]), str)]
    if not bad:
        return ""
    return f"; the request body is not JSON (interaction {', '.join(map(str, bad[:5]))})"


def _crash_text(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"


def sweep_cassette(path: Path, source: str = "") -> CassetteResult:
    """Sweep one cassette file (see the module docstring). Never raises for a file's
    content: a failure to read is the record's ``outcome`` and ``reason``."""
    result = CassetteResult(str(path), source)
    try:
        interactions = _load_interactions(path)
    except Exception as exc:  # no YAML: still handed to the reader below, which names it
        interactions = []
        load_error: str | None = f"{type(exc).__name__}: {exc}"
        told = raw_request_protocols(path.read_bytes().decode("utf-8", "replace"))
    else:
        load_error = None
        told = interaction_protocols(interactions)
    result.requests = dict(Counter(told.values()))
    keys = [k for k in PROTOCOLS if k in result.requests]
    try:
        episodes = episodes_from_cassette(path)
        records = read_wire_episodes(interactions) if load_error is None else []
    except DOCUMENTED as exc:
        outcome, reason = "not read", f"{type(exc).__name__}: {exc}"
        reason += _not_json(interactions, list(told)) if load_error is None else ""
    except Exception as exc:
        outcome, reason = "crashed", _crash_text(exc)
    else:
        if load_error is not None and keys:  # toolreplay loads what the sweep's loader cannot
            for key in keys:
                result.outcome[key] = "not read"
                result.reason[key] = f"the sweep cannot load the YAML: {load_error}"
            return result
        result.episodes = len(episodes)
        for record in records:
            key = told.get(record.rounds[-1].exchange.number, "other")
            stops = result.stop_reasons.setdefault(key, {})
            stops[record.episode.stop_reason] = stops.get(record.episode.stop_reason, 0) + 1
            if record.episode.error:
                result.ended_in_error.setdefault(key, []).append(record.episode.error)
        result.faults = [f for e in episodes for f in e.faults]
        result.doubts = doubts(records, told)
        rounds = {r.exchange.number for w in records for r in w.rounds}
        result.other_rounds = sorted(rounds - told.keys())
        for key in keys:
            wanted = [n for n, k in told.items() if k == key]
            missed = [n for n in wanted if n not in rounds]
            if missed:
                result.outcome[key] = "not read"
                result.reason[key] = (
                    f"{len(missed)} of {len(wanted)} {PROTOCOLS[key]} requests not read as "
                    f"model requests (interaction {', '.join(map(str, missed[:5]))})"
                    + _not_json(interactions, missed)
                )
            else:
                result.outcome[key] = "read"
        if not keys:
            result.outcome[NO_MODEL] = "no model protocol"
            result.reason[NO_MODEL] = no_model_kind(interactions)
            if rounds:  # the readers found model requests that the method and path did not
                result.reason[NO_MODEL] += f" ({len(rounds)} read as model requests)"
        return result
    if not keys:
        result.outcome[NO_MODEL] = "no model protocol" if outcome != "crashed" else outcome
        kind = load_error or no_model_kind(interactions)
        result.reason[NO_MODEL] = reason if outcome == "crashed" else kind
        return result
    for key in keys:
        result.outcome[key] = outcome
        result.reason[key] = reason
    return result


def reason_group(text: str, words: int = 8) -> str:
    """The first words of a reason, numbers, quoted values and paths made alike so that the
    same failure in two cassettes groups together."""
    text = re.sub(r"https?://\S+?(?=:? |$)", "URL", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"(?<![\w.])/[\w./:@-]+", "/…", text)
    text = re.sub(r"(?<!HTTP )(?<!\d)\d+", "N", text)
    return " ".join(text.split()[:words])


def cassettes_in(folder: Path, globs: Sequence[str], within: str | None = None) -> list[Path]:
    """The cassette files under ``folder`` whose names match ``globs``, sorted (``folder``
    itself when it is a file); with ``within``, only those with a folder of that name on
    their path below ``folder`` (``cassettes``: a repository's other YAML left out)."""
    if folder.is_file():
        return [folder]
    found = {p for g in globs for p in folder.rglob(g) if p.is_file()}
    if within is not None:
        found = {p for p in found if within in p.relative_to(folder).parts[:-1]}
    return sorted(found)


#: An episode error on a reply the server sent with a 2xx status.
_REFUSED = re.compile(r"\bHTTP 2\d\d\b")


def summarise(results: Iterable[CassetteResult]) -> dict[str, Any]:
    """Counts per source and protocol label (and ``all`` sources when there are several):
    ``cassettes``, ``read``, ``ending_in_error`` (read cassettes with an episode whose last
    reply, of that protocol, was unusable), ``refused`` (of those, the ones where that reply
    had a 2xx status: the server answered, the reader could not use the answer),
    ``doubted`` (read cassettes with a round :func:`doubts` names), ``not_read``,
    ``crashed``; the grouped ``reasons`` of the not read and crashed (for
    :data:`NO_MODEL`: what the cassettes hold), the grouped ``errors`` of the episodes ending
    in error and the grouped ``doubts``."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    results = list(results)
    sources = sorted({r.source for r in results})
    scopes = [*sources, "all"] if len(sources) > 1 else sources
    for scope in scopes:
        rows: dict[str, dict[str, Any]] = {}
        for result in results:
            if scope != "all" and result.source != scope:
                continue
            for key, outcome in result.outcome.items():
                label = PROTOCOLS.get(key, NO_MODEL)
                row = rows.setdefault(
                    label,
                    {
                        "cassettes": 0,
                        "read": 0,
                        "ending_in_error": 0,
                        "refused": 0,
                        "not_read": 0,
                        "crashed": 0,
                        "reasons": Counter(),
                        "errors": Counter(),
                        "doubted": 0,
                        "doubts": Counter(),
                        "stop_reasons": Counter(),
                    },
                )
                row["cassettes"] += 1
                row["stop_reasons"].update(result.stop_reasons.get(key, {}))
                if outcome == "read":
                    row["read"] += 1
                    if errors := result.ended_in_error.get(key):
                        row["ending_in_error"] += 1
                        row["refused"] += any(_REFUSED.search(e) for e in errors)
                        row["errors"].update({reason_group(e) for e in errors})
                    if result.doubts.get(key):
                        row["doubted"] += 1
                        row["doubts"].update(
                            {reason_group(d.split(": ", 1)[1], 3) for d in result.doubts[key]}
                        )
                elif outcome == "not read":
                    row["not_read"] += 1
                    row["reasons"][reason_group(result.reason[key])] += 1
                elif outcome == "no model protocol":
                    row["reasons"][result.reason.get(key, "")] += 1
                elif outcome == "crashed":
                    row["crashed"] += 1
                    row["reasons"][reason_group(result.reason[key], 14)] += 1
        order = [*PROTOCOLS.values(), NO_MODEL]
        table[scope] = {
            label: {
                **rows[label],
                **{
                    key: dict(rows[label][key].most_common())
                    for key in ("reasons", "errors", "doubts", "stop_reasons")
                },
            }
            for label in order
            if label in rows
        }
    return table


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def render(table: Mapping[str, Mapping[str, Mapping[str, Any]]], reasons: int = 6) -> str:
    """The summary as text: a line per source and protocol, the grouped reasons under it."""
    lines = []
    width = max([14, *(len(scope) for scope in table)])
    head = f"{'source':<{width}} {'protocol':<20} {'cassettes':>9} {'read':>6} {'%':>8} " + (
        f"{'in error':>8} {'refused':>7} {'doubted':>7} {'not read':>8} {'crashed':>7}"
    )
    lines += [head, "-" * len(head)]
    for scope, rows in table.items():
        for label, row in rows.items():
            read = "" if label == NO_MODEL else str(row["read"])
            pct = "" if label == NO_MODEL else _percent(row["read"], row["cassettes"])
            lines.append(
                f"{scope:<{width}} {label:<20} {row['cassettes']:>9} {read:>6} {pct:>8} "
                f"{row['ending_in_error']:>8} {row['refused']:>7} {row['doubted']:>7} "
                f"{row['not_read']:>8} "
                f"{row['crashed']:>7}"
            )
    for scope, rows in table.items():
        if scope == "all":  # each source's reasons are listed; their sum says less
            continue
        for label, row in rows.items():
            first = "what it holds" if label == NO_MODEL else "not read / crashed"
            titles = ((first, "reasons"), ("ending in error", "errors"), ("doubts", "doubts"))
            for title, key in titles:
                if row[key]:
                    lines.append(f"\n{scope} · {label} · {title}:")
                    for text, count in list(row[key].items())[:reasons]:
                        lines.append(f"  {count:>4}  {text}")
                    if len(row[key]) > reasons:
                        lines.append(f"        … and {len(row[key]) - reasons} more groups")
    scope, rows = list(table.items())[-1]  # "all" when there are several sources
    stops = [(label, row["stop_reasons"]) for label, row in rows.items() if row["stop_reasons"]]
    if stops:
        lines.append(f"\nstop reasons of the episodes read ({scope}), by protocol:")
        for label, counts in stops:
            lines.append(f"  {label:<20} " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return "\n".join(lines)


def render_markdown(table: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """The counts as a Markdown table (the one ``docs/wire.md`` shows)."""
    lines = [
        "| source | protocol | cassettes | read | % | ending in error (refused) | doubted "
        "| not read | crashed |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for scope, rows in table.items():
        for label, row in rows.items():
            if label == NO_MODEL:
                lines.append(f"| {scope} | *{label}* | {row['cassettes']} | | | | | | |")
                continue
            lines.append(
                f"| {scope} | {label} | {row['cassettes']} | {row['read']} | "
                f"{_percent(row['read'], row['cassettes'])} | {row['ending_in_error']} "
                f"({row['refused']}) | {row['doubted']} | {row['not_read']} | {row['crashed']} |"
            )
    return "\n".join(lines)


def _source(argument: str) -> tuple[str, Path]:
    name, sep, folder = argument.partition("=")
    if sep and name and not Path(argument).exists():
        return name, Path(folder)
    path = Path(argument)
    return path.resolve().name or str(path), path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(
            "Sweep folders of recorded cassettes with toolreplay's wire readers: each "
            "cassette's protocols told by request method and URI path alone, each read with "
            "episodes_from_cassette and read_wire_episodes; prints, per source and protocol, "
            "the cassettes, those read into episodes, those not read (reasons grouped) and "
            "those that crashed (must be 0). Exit status 1 when anything crashed."
        ),
        epilog="example: python benchmarks/wire_sweep.py pydantic-ai=../corpus/pydantic-ai/tests",
    )
    parser.add_argument(
        "folders",
        nargs="+",
        metavar="[NAME=]FOLDER",
        help="a folder searched for cassettes (or one cassette file); NAME labels the source",
    )
    parser.add_argument(
        "--glob",
        action="append",
        metavar="PATTERN",
        help="file name patterns of cassettes (default: *.yaml and *.yml)",
    )
    parser.add_argument(
        "--within",
        metavar="NAME",
        help="only files with a folder of that name on their path (e.g. cassettes)",
    )
    parser.add_argument(
        "--json", type=Path, metavar="FILE", help="write the summary and one record per cassette"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="also print the counts as a Markdown table"
    )
    parser.add_argument(
        "--reasons", type=int, default=6, metavar="N", help="reason groups printed per row"
    )
    parser.add_argument(
        "--list",
        choices=["not-read", "crashed", "in-error", "doubted"],
        action="append",
        default=[],
        help="also list the cassettes of that outcome, one a line, with the reason",
    )
    args = parser.parse_args(argv)
    globs = args.glob or ["*.yaml", "*.yml"]
    results: list[CassetteResult] = []
    for argument in args.folders:
        source, folder = _source(argument)
        if not folder.exists():
            parser.error(f"{folder}: no such file or folder")
        results += [sweep_cassette(p, source) for p in cassettes_in(folder, globs, args.within)]
    table = summarise(results)
    print(render(table, args.reasons))
    if args.markdown:
        print("\n" + render_markdown(table))
    if others := [r for r in results if r.other_rounds]:
        count = sum(len(r.other_rounds) for r in others)
        print(
            f"\n{count} interactions in {len(others)} cassettes were read as model requests "
            f"though their method and path name no protocol, e.g. {others[0].path} "
            f"(interaction {others[0].other_rounds[0]})"
        )
    wanted = {"not-read": "not read", "crashed": "crashed"}
    for choice in args.list:
        print(f"\n{choice}:")
        for r in results:
            if choice == "in-error":
                for key, errors in r.ended_in_error.items():
                    print(f"  {r.path} [{PROTOCOLS.get(key, key)}]: {errors[-1][:200]}")
            if choice == "doubted":
                for key, found in r.doubts.items():
                    print(f"  {r.path} [{PROTOCOLS.get(key, key)}]: {'; '.join(found)[:300]}")
            for key, outcome in r.outcome.items():
                if outcome == wanted.get(choice):
                    print(f"  {r.path} [{PROTOCOLS.get(key, key)}]: {r.reason.get(key, '')[:300]}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"summary": table, "cassettes": [asdict(r) for r in results]},
                indent=1,
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
    return 1 if any(o == "crashed" for r in results for o in r.outcome.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
