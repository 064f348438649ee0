"""Experiments: configurations (host × toolset × baseline variant) run over an eval's
questions, replayed from a cassette set or recorded into one.

Configuration names: ``single+oneshot``, ``loop+atomic``...; a baseline variant with one
heuristic off is ``single+oneshot-no_shi_retry``. The HTTP clients (``httpx.Client`` for the
model, ``requests.Session`` for Open-Meteo) are made here and passed down.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import requests

from .cassettes import (
    Manifest,
    RecordMode,
    cassette_path,
    episode_key,
    read_manifest,
    replay_cassette,
    sha256_json,
)
from .episode import Episode, Message
from .evals import DEFAULT_REPEAT_WINDOW, HEURISTICS, EvalSuite, Question
from .hosts import HOST_NAMES, LoopLimits, run_host
from .model import ChatModel, ModelSettings, OpenAIChatModel
from .openmeteo import OpenMeteoClient
from .toolsets import TOOLSET_NAMES, Heuristics, all_tool_schemas, make_toolset

NAME_RE = re.compile(r"^(single|loop)\+(oneshot|atomic)(?:-no_([a-z_]+))?$")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Configuration:
    """Host × toolset, optionally with one baseline heuristic ablated (oneshot only)."""

    host: str
    toolset: str
    ablated: str | None = None
    baseline: tuple[str, ...] = HEURISTICS  # heuristics on in the oneshot baseline

    def __post_init__(self) -> None:
        if self.host not in HOST_NAMES:
            raise ValueError(f"unknown host {self.host!r}; known: {', '.join(HOST_NAMES)}")
        if self.toolset not in TOOLSET_NAMES:
            raise ValueError(f"unknown toolset {self.toolset!r}; known: {', '.join(TOOLSET_NAMES)}")
        if self.ablated is not None and (
            self.toolset != "oneshot" or self.ablated not in HEURISTICS
        ):
            raise ValueError(f"cannot ablate {self.ablated!r} from {self.toolset}")

    @property
    def name(self) -> str:
        base = f"{self.host}+{self.toolset}"
        return f"{base}-no_{self.ablated}" if self.ablated else base

    @property
    def heuristics(self) -> Heuristics | None:
        if self.toolset != "oneshot":
            return None
        base = Heuristics(**{name: name in self.baseline for name in HEURISTICS})
        return base.without(self.ablated) if self.ablated else base

    @classmethod
    def parse(cls, name: str) -> Configuration:
        """Inverse of :attr:`name`; :class:`ValueError` naming the accepted forms."""
        m = NAME_RE.match(name)
        if not m:
            raise ValueError(
                f"bad configuration name {name!r}: use HOST+TOOLSET[-no_HEURISTIC], "
                "e.g. loop+atomic or single+oneshot-no_shi_retry"
            )
        return cls(m.group(1), m.group(2), m.group(3))


def study_configurations(suite: EvalSuite) -> list[Configuration]:
    """The 2×2 in the study's order: toolset-major (oneshot first), single before loop."""
    spec = suite.experiment
    return [Configuration(h, t, baseline=spec.baseline) for t in spec.toolsets for h in spec.hosts]


def ablation_configurations(suite: EvalSuite) -> list[Configuration]:
    """The full oneshot baseline with each ablated heuristic, under every host."""
    spec = suite.experiment
    if "oneshot" not in spec.toolsets:
        return []
    return [Configuration(h, "oneshot", a) for a in spec.ablations for h in spec.hosts]


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
    open_meteo: OpenMeteoClient,
    today: str,
) -> Episode:
    """Run one episode live (whatever sits under the clients: network, vcrpy, a double)."""
    toolset = make_toolset(config.toolset, open_meteo, config.heuristics)
    spec = suite.experiment
    limits = LoopLimits(spec.max_rounds, spec.token_budget, spec.repeat_window)
    episode = run_host(
        config.host, model, toolset, initial_messages(suite, question, today), limits
    )
    return replace(
        episode, configuration=config.name, question_id=question.id, question=question.text
    )


@contextmanager
def replay_clients() -> Iterator[tuple[httpx.Client, requests.Session]]:
    """HTTP clients for replay: a :class:`~toolreplay.replay.Player`'s, answering from the
    cassette in play through the libraries' transport hooks (nothing is patched or sent).
    They ignore proxy and certificate settings from the environment (``trust_env`` off), so
    ``ALL_PROXY`` and the like do not matter."""
    from .replay import Player

    with Player() as player:
        yield player.http, player.session


def standin_hints(suite: EvalSuite) -> dict[str, dict[str, Any]]:
    """The stand-in's per-question hints (the eval file's ``standin:`` blocks), by question
    id: ``{"ningde": {"narrates_followups": True}, ...}``. They script what the stand-in
    writes (whether a sentence goes beside a follow-up tool call), so they are part of a set's
    fingerprint."""
    return {q.id: {"narrates_followups": q.narrates_followups} for q in suite.questions}


def fingerprint(suite: EvalSuite) -> dict[str, Any]:
    """What a recording depends on besides the model: hashes of the system prompt template
    and of each toolset's schemas, the settings every arm shares, and the stand-in's hints
    (``settings["standin_hints"]``, compared for stand-in sets only). Kept in the manifest;
    a set whose fingerprint differs from today's code and eval file is stale. Settings added
    later (``repeat_window``, ``tool_choice``) are listed only when they differ from their
    default, so sets recorded before they existed stay current."""
    settings: dict[str, Any] = {
        "temperature": suite.experiment.temperature,
        "max_rounds": suite.experiment.max_rounds,
        "token_budget": suite.experiment.token_budget,
        "baseline_heuristics": list(suite.experiment.baseline),
        "standin_hints": standin_hints(suite),
    }
    if suite.experiment.repeat_window != DEFAULT_REPEAT_WINDOW:
        settings["repeat_window"] = suite.experiment.repeat_window
    if suite.experiment.tool_choice != "auto":
        settings["tool_choice"] = suite.experiment.tool_choice
    return {
        "system_prompt_sha256": sha256_json(suite.system_prompt_template),
        "tool_schemas_sha256": {
            name: sha256_json(list(schemas)) for name, schemas in all_tool_schemas().items()
        },
        "settings": settings,
    }


def stale_parts(manifest: Manifest, suite: EvalSuite) -> list[str]:
    """What changed since the set was recorded, in words (empty when current)."""
    now = fingerprint(suite)
    out = []
    if manifest.system_prompt_sha256 != now["system_prompt_sha256"]:
        out.append("system prompt")
    out += [
        f"{name} tool schemas"
        for name, digest in sorted(now["tool_schemas_sha256"].items())
        if manifest.tool_schemas_sha256.get(name) != digest
    ]
    out += [
        f"setting {key} ({manifest.settings.get(key)!r} → {value!r})"
        for key, value in now["settings"].items()
        if key != "standin_hints" and manifest.settings.get(key) != value
    ]
    out += [
        f"setting {key} ({value!r} → default)"
        for key, value in manifest.settings.items()
        if key not in now["settings"]
    ]
    if manifest.provenance == "stand-in":  # a live model reads no hints
        was = manifest.settings.get("standin_hints") or {}
        hints = now["settings"]["standin_hints"]
        changed = [
            f"{qid}.{name} ({(was.get(qid) or {}).get(name)!r} → {value!r})"
            for qid, fields in hints.items()
            for name, value in fields.items()
            if (was.get(qid) or {}).get(name) != value
        ]
        if changed or set(was) - set(hints):
            out.append("stand-in hints " + (", ".join(changed) or "(questions removed)"))
    return out


DEFAULT_CASSETTES = Path("cassettes")
DEFAULT_EVAL = Path("evals/weather.yaml")


def rerecord_command(
    set_dir: Path, manifest: Manifest, suite: EvalSuite, keys: Iterable[str] = ()
) -> str:
    """The command that re-records ``keys`` (episode keys) of the set at ``set_dir``, or the
    whole set when the set is stale (a partial re-record would mix two recordings)."""
    parts = ["toolreplay record", f"--model-source {manifest.provenance}"]
    if set_dir.parent.resolve() != DEFAULT_CASSETTES.resolve():
        parts.append(f"--cassettes {set_dir.parent}")
    if Path(suite.path).resolve() != DEFAULT_EVAL.resolve():
        parts.append(f"--eval {suite.path}")
    parts.append(f"--set {set_dir.name}")
    if not stale_parts(manifest, suite):
        parts += [f"--only {k}" for k in keys]  # --only keeps the set's trials and seed
    elif manifest.trials > 1:
        parts.append(f"--trials {manifest.trials}")
        if manifest.seed:
            parts.append(f"--seed {manifest.seed}")
    return " ".join(parts)


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
    first. Raises :class:`~toolreplay.cassettes.CassetteMiss`,
    :class:`~toolreplay.cassettes.UnplayedInteractions` or
    :class:`~toolreplay.cassettes.CassetteError` (:class:`~toolreplay.cassettes.CassetteDamaged`
    when the cassette was edited or damaged since recording)."""
    from .replay import Player, player_for

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
    )
    def rerecord() -> str:  # made only when an error needs it (it hashes the prompt and tools)
        # --only names an episode; it re-records every trial of it
        return rerecord_command(set_dir, manifest, suite, [episode_key(config.name, question.id)])

    tool_choice = suite.experiment.tool_choice

    def make_model() -> OpenAIChatModel:
        return OpenAIChatModel(settings, http, tool_choice=tool_choice)

    # The SDK client is made once per set of replay clients (it is stateless between calls).
    model = (
        player.memo(("model", settings, json.dumps(tool_choice, sort_keys=True)), make_model)
        if player is not None
        else make_model()
    )
    client = OpenMeteoClient(session, manifest.geocoding_url, manifest.forecast_url)
    record = manifest.episodes.get(key)
    path = cassette_path(set_dir, config.name, question.id, trial)
    expected = record.cassette_sha256 if record else None
    with replay_cassette(
        path, key, rerecord, record_mode, expected_sha256=expected, player=player
    ):
        episode = run_episode(
            suite, config, question, model=model, open_meteo=client, today=manifest.today
        )
    return replace(episode, wall_time_s=record.wall_time_s if record else 0.0)


def replay_set(
    set_dir: Path,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    progress: Progress | None = None,
    *,
    record_mode: RecordMode = "none",
    workers: int = 1,
) -> list[Episode]:
    """Replay every configuration × question of the set (trial 1), in order (``record_mode``
    as in :func:`replay_episode`; in record mode ``none``, ``workers`` processes replay it,
    :func:`toolreplay.replay.replay_jobs`, the same list whatever their number)."""
    from .replay import Job, replay_jobs

    manifest = read_manifest(set_dir)
    if record_mode == "none":
        jobs = [Job(config, question.id) for config in configs for question in suite.questions]
        return replay_jobs(set_dir, manifest, suite, jobs, workers=workers, progress=progress)
    episodes = []
    for config in configs:
        for question in suite.questions:
            if progress:
                progress(episode_key(config.name, question.id))
            episodes.append(
                replay_episode(
                    set_dir, manifest, suite, config, question, record_mode=record_mode
                )
            )
    return episodes
