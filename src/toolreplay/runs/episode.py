"""One episode: the initial messages, a live run through a host, and a replay from its cassette."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import requests

from toolreplay.cassettes.errors import UnplayedInteractions
from toolreplay.cassettes.manifest import (
    Manifest,
    cassette_path,
    episode_key,
    recorded_cassette_path,
)
from toolreplay.cassettes.vcr import RecordMode, replay_cassette
from toolreplay.evals import EvalSuite, Question
from toolreplay.hosts import LoopLimits, run_host
from toolreplay.models.base import ChatModel, ModelSettings
from toolreplay.models.endpoint import chat_model
from toolreplay.runs.configuration import Configuration, rerecord_command
from toolreplay.wire.episode import Episode, Message


def initial_messages(suite: EvalSuite, question: Question, today: str) -> list[Message]:
    """``[system, user]``: the system prompt with ``today`` filled in, then the question."""
    return [
        {"role": "system", "content": suite.system_prompt(today)},
        {"role": "user", "content": question.text},
    ]


def run_episode(
    suite: EvalSuite,
    config: Configuration,
    question: Question,
    *,
    model: ChatModel,
    tool_client: Any,
    today: str,
) -> Episode:
    """Run one episode live (whatever sits under the clients: network, vcrpy, a double).
    ``tool_client`` is what the configuration's study makes its toolsets over
    (:attr:`toolreplay.studies.Study.tool_client`, e.g. an Open-Meteo client)."""
    toolset = config.study_.make_toolset(config.toolset, tool_client, config.heuristics)
    spec = suite.experiment
    limits = LoopLimits(spec.max_rounds, spec.token_budget, spec.repeat_window)
    episode = run_host(
        config.host, model, toolset, initial_messages(suite, question, today), limits
    )
    return replace(
        episode,
        configuration=config.name,
        question_id=question.id,
        question=question.text,
        streamed=spec.stream,
    )


@contextmanager
def replay_clients() -> Iterator[tuple[httpx.Client, requests.Session]]:
    """HTTP clients for replay: a :class:`~toolreplay.cassettes.transport.Player`'s, answering
    from the
    cassette in play through the libraries' transport hooks (nothing is patched or sent).
    They ignore proxy and certificate settings from the environment (``trust_env`` off), so
    ``ALL_PROXY`` and the like do not matter."""
    from toolreplay.cassettes.transport import Player

    with Player() as player:
        yield player.http, player.session


def replay_episode(
    set_dir: Path,
    manifest: Manifest,
    suite: EvalSuite,
    config: Configuration,
    question: Question,
    *,
    http: httpx.Client | None = None,
    session: requests.Session | None = None,
    record_mode: RecordMode = "none",
    trial: int = 1,
) -> Episode:
    """Replay one episode (its ``trial``, counted from 1) from its cassette (record mode
    ``none``, no key read or needed; another ``record_mode``, e.g. from pytest's
    ``--record-mode``, lets requests that are not recorded go to the endpoints in the manifest
    and be added).

    ``http``/``session`` may be shared across episodes (nothing is sent over them in replay;
    making an ``httpx.Client`` costs ~20 ms of TLS set-up). The recorded wall time and the
    prompt date come from the manifest; the cassette's sha256 is compared with the manifest's
    first. Raises :class:`~toolreplay.cassettes.errors.CassetteMiss`,
    :class:`~toolreplay.cassettes.errors.UnplayedInteractions` or
    :class:`~toolreplay.cassettes.errors.CassetteError`
    (:class:`~toolreplay.cassettes.store.CassetteDamaged`
    when the cassette was edited or damaged since recording)."""
    from toolreplay.cassettes.transport import Player, player_for

    player = player_for(http)
    if record_mode == "none" and player is None:
        # Replay is served to a player's clients; other clients get one for this episode.
        with Player() as own:
            return replay_episode(
                set_dir, manifest, suite, config, question, http=own.http, session=own.session,
                trial=trial,
            )  # fmt: skip
    if record_mode != "none" and (player is not None or http is None or session is None):
        # vcrpy records through the libraries' own transports: plain clients.
        with httpx.Client(trust_env=False) as h, requests.Session() as s:
            s.trust_env = False
            return replay_episode(
                set_dir, manifest, suite, config, question, http=h, session=s,
                record_mode=record_mode, trial=trial,
            )  # fmt: skip
    assert http is not None and session is not None
    key = episode_key(config.name, question.id, trial)
    settings = ModelSettings(
        base_url=manifest.model_base_url,
        model=manifest.model,
        api_key=None,
        temperature=suite.experiment.temperature,
        stream=suite.experiment.stream,
        protocol=suite.experiment.protocol,
    )

    def rerecord() -> str:  # made only when an error needs it (it hashes the prompt and tools)
        # --only names an episode; it re-records every trial of it
        return rerecord_command(set_dir, manifest, suite, [episode_key(config.name, question.id)])

    tool_choice = suite.experiment.tool_choice

    def make_model() -> ChatModel:  # the client of the eval file's protocol
        return chat_model(settings, http, tool_choice=tool_choice)

    # The SDK client is made once per set of replay clients (it is stateless between calls);
    # the settings, and so the memo's key, carry the protocol.
    model = (
        player.memo(("model", settings, json.dumps(tool_choice, sort_keys=True)), make_model)
        if player is not None
        else make_model()
    )
    client = config.study_.tool_client(session, manifest.tool_urls)
    record = manifest.episodes.get(key)
    path = cassette_path(set_dir, config.name, question.id, trial)
    if manifest.trials > 1 and not path.exists():  # named where recording the set puts it
        path = recorded_cassette_path(set_dir, config.name, question.id, trial, manifest.trials)
    expected = record.cassette_sha256 if record else None
    episode = None
    try:
        with replay_cassette(
            path, key, rerecord, record_mode, expected_sha256=expected, player=player
        ):
            episode = run_episode(
                suite, config, question, model=model, tool_client=client, today=manifest.today
            )
    except UnplayedInteractions as exc:
        if episode is None or episode.stop_reason != "error" or not episode.error:
            raise
        # The real cause first: a recorded reply the client could not read (a body that is
        # not JSON, compressed wrongly, binary...) ended the episode before the rest played.
        body = _unreadable_body(path)
        raise UnplayedInteractions(
            f"episode {key} ended on an error a recorded reply caused ({episode.error})"
            + (f": {body}" if body else "")
            + f". So {exc}"
        ) from None
    assert episode is not None
    return replace(episode, wall_time_s=record.wall_time_s if record else 0.0)


def _unreadable_body(path: Path) -> str | None:
    """Which recorded response body of the cassette at ``path`` a client cannot read, and
    why (compressed wrongly or with an encoding it does not decode, not UTF-8, not the JSON
    its content type says), e.g. ``interaction 1: the body is marked gzip but is not gzip
    data``; None when every body reads."""
    import gzip
    import zlib

    from toolreplay.cassettes.store import load_cassette

    try:
        interactions = load_cassette(path)
    except Exception:
        return None
    for i, interaction in enumerate(interactions, 1):
        response = interaction.get("response") or {}
        body = (response.get("body") or {}).get("string")
        if not isinstance(body, (bytes, str)) or not body:
            continue
        data = body.encode("utf-8") if isinstance(body, str) else body
        headers = {str(k).lower(): v for k, v in (response.get("headers") or {}).items()}
        encoding = " ".join(headers.get("content-encoding") or []).strip().lower()
        kind = " ".join(headers.get("content-type") or []).lower()
        try:
            if encoding == "gzip":
                data = gzip.decompress(data)
            elif encoding == "deflate":
                data = zlib.decompress(data)
            elif encoding:
                return f"interaction {i}: the body is encoded {encoding!r}, which is not decoded"
        except (OSError, EOFError, zlib.error):
            return f"interaction {i}: the body is marked {encoding} but is not {encoding} data"
        if "json" in kind:
            try:
                json.loads(data.decode("utf-8"))
            except UnicodeDecodeError:
                return f"interaction {i}: the body is not UTF-8 (its content type says JSON)"
            except ValueError:
                return f"interaction {i}: the body is not the JSON its content type says"
    return None
