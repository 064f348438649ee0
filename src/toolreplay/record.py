"""Recording cassette sets: ``--stand-in`` (offline, against the bundled stand-in model and
Open-Meteo fixture server on loopback) or ``--live`` (a real OpenAI-compatible endpoint and the
real Open-Meteo API; needs a key).

Recording writes into a fresh temporary folder beside the set and moves the result into place
only when every episode succeeded: a failed recording never overwrites good cassettes.
Re-recording chosen episodes (``only``) replaces just those cassettes and manifest entries.

Trials: ``trials=k`` records every configuration × question k times into
``<set>/<configuration>/<question-id>/trial-<i>.yaml`` (one trial keeps
``<configuration>/<question-id>.yaml``). Against the stand-in, trial i talks to a stand-in
started for trial i with the set's ``seed`` (its per-trial variation; trial 1 is the study's
behaviour); against a live endpoint every trial is the same request and the model's own
sampling varies.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import requests

from .cassettes import (
    CassetteError,
    EpisodeRecord,
    Manifest,
    cassette_path,
    check_set_name,
    episode_key,
    make_vcr,
    manifest_path,
    read_manifest,
    redact_url,
    trial_cassette_path,
    write_manifest,
)
from .doubles.open_meteo import load_fixtures, open_meteo_fixture_server
from .doubles.standin import STANDIN_MODEL, standin_server
from .evals import EvalSuite
from .experiment import Configuration, Progress, fingerprint, run_episode
from .model import KEY_VARIABLES, ModelSettings, OpenAIChatModel
from .openmeteo import FORECAST_URL, GEOCODING_URL, OpenMeteoClient

PACKAGES = ("toolreplay", "openai", "httpx", "requests", "vcrpy")


class RecordingError(RuntimeError):
    """Recording could not start or did not finish; nothing in the set was changed."""


@dataclass(frozen=True)
class Target:
    """Where recording goes and what it talks to."""

    provenance: str  # "stand-in" or "live"
    model: ModelSettings
    geocoding_url: str
    forecast_url: str
    today: str
    trust_env: bool = True  # proxies etc. from the environment; off for loopback servers
    trial_model_urls: tuple[str, ...] = ()  # model base URL per trial (stand-in), else model's

    def model_for(self, trial: int) -> ModelSettings:
        """The model settings for ``trial`` (from 1)."""
        if trial <= len(self.trial_model_urls):
            return replace(self.model, base_url=self.trial_model_urls[trial - 1])
        return self.model


def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "unknown"
    return out


def _record_into(
    folder: Path,
    suite: EvalSuite,
    target: Target,
    episodes: Sequence[tuple[Configuration, str]],
    progress: Progress | None,
    trials: int = 1,
) -> dict[str, EpisodeRecord]:
    records: dict[str, EpisodeRecord] = {}
    recorder = make_vcr("all")
    runs = [(c, q, t) for c, q in episodes for t in range(1, trials + 1)]
    for config, question_id, trial in runs:
        question = suite.question(question_id)
        key = episode_key(config.name, question_id, trial)
        if progress:
            progress(key)
        if trials == 1:
            path = cassette_path(folder, config.name, question_id)
        else:
            path = trial_cassette_path(folder, config.name, question_id, trial)
        path.parent.mkdir(parents=True, exist_ok=True)
        with (
            httpx.Client(timeout=120, trust_env=target.trust_env) as http,
            requests.Session() as session,
        ):
            session.trust_env = target.trust_env
            model = OpenAIChatModel(target.model_for(trial), http, max_retries=2)
            client = OpenMeteoClient(session, target.geocoding_url, target.forecast_url)
            with recorder.use_cassette(str(path)):
                started = time.perf_counter()
                episode = run_episode(
                    suite, config, question, model=model, open_meteo=client, today=target.today
                )
                seconds = round(time.perf_counter() - started, 3)
        if episode.stop_reason == "error":
            raise RecordingError(f"episode {key} failed: {episode.error}")
        records[key] = EpisodeRecord(
            cassette=str(path.relative_to(folder)),
            cassette_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
            wall_time_s=seconds,
            prompt_tokens=episode.usage.prompt_tokens,
            completion_tokens=episode.usage.completion_tokens,
            rounds=len(episode.rounds),
        )
    return records


def record_set(
    set_dir: Path,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    target: Target,
    *,
    only: Sequence[str] = (),
    progress: Progress | None = None,
    trials: int = 1,
    seed: int = 0,
) -> Manifest:
    """Record ``configs`` × the suite's questions, ``trials`` times each, into ``set_dir`` (or
    only the episode keys ``only``, e.g. ``loop+atomic/ningde``, every trial of each, into an
    existing set with the same ``trials`` and ``seed``). Returns the new manifest.

    Raises :class:`RecordingError` when an episode fails or an ``only`` key is unknown; the
    set on disk is then untouched."""
    if trials < 1:
        raise RecordingError(f"--trials must be at least 1, not {trials}")
    try:
        check_set_name(set_dir.name)
    except ValueError as exc:
        raise RecordingError(str(exc)) from None
    wanted = [(c, q.id) for c in configs for q in suite.questions]
    if only:
        only = list(dict.fromkeys(only))  # a key given twice is recorded once
        known = {episode_key(c.name, q): (c, q) for c, q in wanted}
        unknown = [k for k in only if k not in known]
        if unknown:
            raise RecordingError(
                f"unknown episode(s): {', '.join(unknown)}; episodes look like "
                f"CONFIGURATION/QUESTION-ID, e.g. {next(iter(known))}"
            )
        wanted = [known[k] for k in only]
        if not manifest_path(set_dir).exists():
            raise RecordingError(f"--only needs an existing set; {set_dir} has no manifest")
    model_url, host = redact_url(target.model.base_url)
    header: dict[str, Any] = {
        "provenance": target.provenance,
        "today": target.today,
        "model": target.model.model,
        "model_base_url": model_url,
        "trials": trials,
        "seed": seed,
        **fingerprint(suite),
    }
    previous = read_manifest(set_dir) if only else None
    if previous is not None:
        # Checked before recording: a refused partial re-record costs no model calls.
        mixed = [name for name, value in header.items() if getattr(previous, name) != value]
        if mixed:
            raise RecordingError(
                f"{set_dir} was recorded with a different {', '.join(mixed)} "
                "(eval settings, prompt, tools, model, date or trials); re-recording only part of "
                "it would mix two recordings in one set. Re-record the whole set instead "
                "(drop --only); nothing was changed."
            )
    set_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".recording-{set_dir.name}-", dir=set_dir.parent))
    try:
        records = _record_into(staging, suite, target, wanted, progress, trials)
        manifest = Manifest(
            cassette_set=set_dir.name,
            endpoint_host=host,
            geocoding_url=redact_url(target.geocoding_url)[0],
            forecast_url=redact_url(target.forecast_url)[0],
            recorded_on=dt.date.today().isoformat(),
            eval_file=Path(suite.path).as_posix(),
            packages=package_versions(),
            episodes={**(previous.episodes if previous else {}), **records},
            **header,
        )
        if previous is not None:
            for key in records:
                dest = set_dir / records[key].cassette
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(staging / records[key].cassette, dest)
            write_manifest(set_dir, manifest)
        else:
            write_manifest(staging, manifest)
            backup = None
            if set_dir.exists():
                backup = set_dir.with_name(f".{set_dir.name}.previous")
                shutil.rmtree(backup, ignore_errors=True)
                set_dir.rename(backup)
            staging.rename(set_dir)
            if backup is not None:
                shutil.rmtree(backup)
        return manifest
    except CassetteError as exc:
        raise RecordingError(str(exc)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def trials_and_seed(
    set_dir: Path, only: Sequence[str], trials: int | None, seed: int | None
) -> tuple[int, int]:
    """The trials and seed to record with: as given; for a partial re-record (``only``) the
    existing set's unless given; otherwise 1 trial, seed 0."""
    if only and manifest_path(set_dir).exists():
        try:
            previous = read_manifest(set_dir)
        except CassetteError as exc:
            raise RecordingError(str(exc)) from None
        return (trials or previous.trials, previous.seed if seed is None else seed)
    return (trials or 1, seed or 0)


def record_stand_in(
    set_dir: Path,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    *,
    only: Sequence[str] = (),
    progress: Progress | None = None,
    trials: int | None = None,
    seed: int | None = None,
) -> Manifest:
    """Record against the stand-in model and the Open-Meteo fixture server (both on
    loopback, started and stopped here). The prompt date is the fixtures' ``today``.
    One stand-in per trial is started, with the set's ``seed`` (see
    :func:`trials_and_seed` for the defaults)."""
    n, s = trials_and_seed(set_dir, only, trials, seed)
    if n < 1:
        raise RecordingError(f"--trials must be at least 1, not {n}")
    with ExitStack() as stack:
        urls = tuple(
            stack.enter_context(standin_server(suite, seed=s, trial=t)) for t in range(1, n + 1)
        )
        om_url = stack.enter_context(open_meteo_fixture_server())
        model_url = urls[0]
        target = Target(
            provenance="stand-in",
            model=ModelSettings(
                base_url=model_url,
                model=STANDIN_MODEL,
                api_key="stand-in",
                temperature=suite.experiment.temperature,
            ),
            geocoding_url=f"{om_url}/v1/search",
            forecast_url=f"{om_url}/v1/forecast",
            today=str(load_fixtures()["today"]),
            trust_env=False,
            trial_model_urls=urls,
        )
        return record_set(
            set_dir, suite, configs, target, only=only, progress=progress, trials=n, seed=s
        )


def record_live(
    set_dir: Path,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    settings: ModelSettings,
    *,
    geocoding_url: str = GEOCODING_URL,
    forecast_url: str = FORECAST_URL,
    only: Sequence[str] = (),
    progress: Progress | None = None,
    trials: int | None = None,
) -> Manifest:
    """Record against a real endpoint (``settings``) and Open-Meteo (the public API unless
    ``geocoding_url``/``forecast_url`` say otherwise). The prompt date is today in
    Asia/Shanghai. :class:`RecordingError` when no key is set."""
    if not settings.api_key:
        raise RecordingError(
            "live recording needs an API key: set "
            + " or ".join(KEY_VARIABLES)
            + " (the key is sent to the endpoint only; it is never written to a cassette)."
            " To record offline instead, use `toolreplay record --stand-in`."
        )
    settings = ModelSettings(settings.base_url, settings.model, settings.api_key,
                             suite.experiment.temperature)  # fmt: skip
    target = Target(
        provenance="live",
        model=settings,
        geocoding_url=geocoding_url,
        forecast_url=forecast_url,
        today=dt.datetime.now(ZoneInfo("Asia/Shanghai")).date().isoformat(),
    )
    n, _ = trials_and_seed(set_dir, only, trials, None)
    return record_set(set_dir, suite, configs, target, only=only, progress=progress, trials=n)
