"""vcrpy adapter: the VCR configured with toolreplay's serializer, matchers and filters, the atomic
persister, call-order sends, and :func:`replay_cassette` (replay through the transport in record
mode ``none``, vcrpy otherwise).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from toolreplay.cassettes.errors import CassetteError, CassetteMiss, UnplayedInteractions
from toolreplay.cassettes.format import (
    KEPT_HEADERS,
    LOOPBACK,
    MATCH_ON,
    JsonBodySerializer,
    _json_body_matcher,
    _unparse_bodies,
    strip_secret_query,
)
from toolreplay.cassettes.miss import explain_miss, find_miss
from toolreplay.cassettes.store import CassetteDamaged, load_cassette, load_prepared
from toolreplay.outputs import (
    atomic_write_text,
)

if TYPE_CHECKING:  # vcrpy is imported when recording (or a test's cassette) needs it
    import vcr


def _before_record_request(request: Any) -> Any:
    # Header names are lower-cased so that a re-recording is byte-stable whatever casing the
    # HTTP library of the day sends (HTTP header names are case-insensitive).
    request.headers = {
        k.lower(): v for k, v in request.headers.items() if k.lower() in KEPT_HEADERS
    }
    request.uri = strip_secret_query(request.uri)
    parts = urlsplit(request.uri)
    if "@" in parts.netloc:  # userinfo (http://user:pass@host/v1) is a credential
        parts = parts._replace(netloc=parts.netloc.rpartition("@")[2])
        request.uri = urlunsplit(parts)
    if parts.hostname in LOOPBACK:
        request.uri = urlunsplit(parts._replace(netloc=parts.hostname or ""))
    return request


def _before_record_response(response: dict[str, Any]) -> dict[str, Any]:
    response["headers"] = {
        k.lower(): v for k, v in response.get("headers", {}).items() if k.lower() in KEPT_HEADERS
    }
    return response


#: The cassette :func:`replay_cassette` has just loaded and checked, so vcrpy's load does not
#: parse and validate the same file again.
_PRELOADED: contextvars.ContextVar[tuple[Path, list[dict[str, Any]]] | None] = (
    contextvars.ContextVar("toolreplay_preloaded_cassette", default=None)
)


class AtomicPersister:
    """vcrpy persister: cassettes are written atomically (:func:`~toolreplay.outputs.
    atomic_write_text`), so a killed recording never leaves a half-written cassette."""

    @staticmethod
    def load_cassette(cassette_path: str | Path, serializer: Any) -> Any:
        """Load through :func:`load_cassette` (every field validated); a missing file is
        vcrpy's "not found" (recording starts a new cassette)."""
        from vcr.persisters.filesystem import CassetteNotFoundError
        from vcr.request import Request as VcrRequest
        from vcr.serializers import compat

        path = Path(cassette_path)
        preloaded = _PRELOADED.get()
        if preloaded is not None and preloaded[0] == path:
            loaded = preloaded[1]  # replay_cassette has just loaded and checked it
        elif not path.is_file():
            raise CassetteNotFoundError()
        else:
            loaded = load_cassette(path)
        interactions = [_unparse_bodies(i) for i in loaded]
        requests = [VcrRequest._from_dict(i["request"]) for i in interactions]
        responses = [compat.convert_to_bytes(i["response"]) for i in interactions]
        return requests, responses

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize as vcr_serialize

        path = Path(cassette_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, vcr_serialize(cassette_dict, serializer))


class _Unpatching:
    """A vcrpy cassette context whose patches are undone even when saving the cassette
    raises (vcrpy leaves the HTTP libraries patched then, for every later request of the
    process): e.g. the serializer refusing a cassette that holds a secret."""

    def __init__(self, context: Any) -> None:
        self._context = context

    def __enter__(self) -> Any:
        return self._context.__enter__()

    def __exit__(self, *exc_info: Any) -> Any:
        try:
            return self._context.__exit__(*exc_info)
        finally:
            finish = getattr(self._context, "_CassetteContextDecorator__finish", None)
            if finish is not None:  # saving raised before vcrpy unpatched: do it now
                next(finish, None)
                self._context._CassetteContextDecorator__finish = None


def use_cassette(recorder: Any, path: str, **kwargs: Any) -> Any:
    """``recorder.use_cassette(path, **kwargs)`` (``recorder`` a ``vcr.VCR``), whose patches
    are undone however the block and the save end (:class:`_Unpatching`)."""
    return _Unpatching(type(recorder).use_cassette(recorder, path, **kwargs))


def unpatch_always(recorder: Any) -> None:
    """Make every ``recorder.use_cassette(...)`` undo its patches however it ends (for a VCR
    another library drives, e.g. pytest-recording's)."""
    recorder.use_cassette = lambda path=None, **kwargs: use_cassette(recorder, path, **kwargs)


def make_vcr(record_mode: Literal["none", "once", "new_episodes", "all"] = "none") -> vcr.VCR:
    """A VCR configured as the module docstring says."""
    import vcr

    v = vcr.VCR(
        record_mode=record_mode,
        match_on=MATCH_ON,
        serializer="toolreplay-yaml",
        before_record_request=_before_record_request,
        before_record_response=_before_record_response,
        decode_compressed_response=True,
    )
    v.register_serializer("toolreplay-yaml", JsonBodySerializer)
    v.register_persister(AtomicPersister)
    v.register_matcher("json_body", _json_body_matcher)
    return v


_SEND_LOCK = threading.Lock()


def _in_call_order(data: list[Any], tags: dict[int, tuple[int, int]]) -> list[Any]:
    """``data`` (a cassette's interactions) with each run of consecutive interactions made by
    the same tool round sorted by tool-call position (stable: a call's own requests keep
    their order). Interactions without a tag (model requests) stay where they are."""
    out: list[Any] = []
    i = 0
    while i < len(data):
        tag = tags.get(i)
        if tag is None:
            out.append(data[i])
            i += 1
            continue
        j = i
        while j < len(data) and (t := tags.get(j)) is not None and t[0] == tag[0]:
            j += 1
        out += [data[k] for k in sorted(range(i, j), key=lambda k: tags[k][1])]
        i = j
    return out


@contextmanager
def one_request_at_a_time(cassette: Any = None) -> Iterator[None]:
    """Serialise ``requests`` sends while a cassette is in use, and keep call order.

    Parallel tool calls send Open-Meteo requests from several threads, but vcrpy is not
    thread-safe: it briefly removes its patches, for every thread, while it builds a real
    connection, so a request sent from another thread at that moment would miss the cassette.
    Under a cassette the sends therefore take turns; in replay each request still gets the
    recorded reply that matches it, whatever order the threads arrive in. When recording
    into ``cassette``, each new interaction is tagged with the tool call that sent it
    (:mod:`toolreplay.cassettes.callorder`), and on exit (before vcrpy saves) the interactions of
    each
    tool round are put in call order, so a recording is the same file whatever order the
    threads ran in. Without a cassette (a live run) nothing is serialised."""
    from unittest import mock

    import requests.adapters

    from toolreplay.cassettes import callorder

    send = requests.adapters.HTTPAdapter.send
    tags: dict[int, tuple[int, int]] = {}

    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _SEND_LOCK:
            before = len(cassette.data) if cassette is not None else 0
            try:
                return send(self, *args, **kwargs)
            finally:
                tag = callorder.current()
                if cassette is not None and tag is not None:
                    for index in range(before, len(cassette.data)):
                        tags[index] = tag

    with mock.patch.object(requests.adapters.HTTPAdapter, "send", locked):
        yield
    if cassette is not None and tags:
        cassette.data[:] = _in_call_order(list(cassette.data), tags)


RecordMode = Literal["none", "once", "new_episodes", "all"]


@contextmanager
def replay_cassette(
    path: Path,
    episode: str,
    rerecord: str | Callable[[], str],
    record_mode: RecordMode = "none",
    expected_sha256: str | None = None,
    *,
    player: Any = None,
) -> Iterator[Any]:
    """Replay one episode's cassette with ``record_mode`` (``none`` unless the caller, e.g.
    pytest's ``--record-mode``, says otherwise; in the other modes a request that is not
    recorded goes to the endpoint and is added, and the unplayed check is off), after
    :func:`load_cassette` has checked it (in mode ``none`` against ``expected_sha256``, the
    manifest's, when given).

    With a :class:`toolreplay.cassettes.transport.Player` in record mode ``none``, the cassette is
    served
    to the player's clients (no patching; yields the :class:`~toolreplay.cassettes.transport.Tape`);
    otherwise vcrpy patches the HTTP libraries for the block (yields vcrpy's cassette).
    ``rerecord`` is the command that re-records the episode, or a function that makes it
    (called only when an error needs it). Either way the errors are the same:
    :class:`CassetteError` (missing/malformed),
    :class:`CassetteDamaged` (edited or damaged since recording), :class:`CassetteMiss` (a
    request not recorded: what differs and how to re-record) or
    :class:`UnplayedInteractions` (recorded interactions never requested)."""

    def command() -> str:
        return rerecord() if callable(rerecord) else rerecord

    def not_found() -> CassetteError:
        return CassetteError(
            f"cassette not found: {path} (episode {episode}); record it: {command()}"
        )

    preloaded = None
    recording = None
    try:
        if player is not None and record_mode == "none":
            from toolreplay.cassettes.transport import prepare

            # what matching and serving need, made once per cassette content
            recording = load_prepared(path, expected_sha256, prepare)
        elif record_mode == "none" or path.exists():
            checked = expected_sha256 if record_mode == "none" else None
            preloaded = (Path(str(path)), load_cassette(path, checked))
    except CassetteDamaged as exc:
        raise CassetteDamaged(f"{exc} (episode {episode}): {command()}") from None
    except CassetteError:
        if record_mode == "none" and not path.exists():
            raise not_found() from None
        raise
    token = _PRELOADED.set(preloaded)
    try:
        if recording is not None:
            from toolreplay.cassettes.transport import Tape

            with player.use(Tape(path, recording)) as tape:
                yield tape
            left = tape.unplayed()
        else:
            with (
                use_cassette(make_vcr(record_mode), str(path)) as cassette,
                one_request_at_a_time(cassette),
            ):
                yield cassette
                left = []
                if record_mode == "none" and not cassette.all_played:
                    left = [
                        f"interaction {i + 1}: {r.method} {urlsplit(r.uri).path}"
                        for i, r in enumerate(cassette.requests)
                        if not cassette.play_counts[i]
                    ]
        if left:
            raise UnplayedInteractions(
                f"episode {episode} left {len(left)} recorded interaction(s) of {path} "
                f"unplayed ({'; '.join(left)}): the host made fewer requests than were "
                f"recorded. Re-record if intended: {command()}"
            )
    except (CassetteMiss, UnplayedInteractions, CassetteError):
        raise
    except Exception as exc:
        miss = find_miss(exc)
        if miss is None:
            raise
        raise explain_miss(miss, episode, command()) from None
    finally:
        _PRELOADED.reset(token)
