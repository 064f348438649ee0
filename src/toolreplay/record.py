"""Recording cassette sets: ``--stand-in`` (offline, against the bundled stand-in model and
Open-Meteo fixture server on loopback) or ``--live`` (a real OpenAI-compatible endpoint and the
real Open-Meteo API; needs a key).

Recording writes into a fresh temporary folder beside the set and moves the result into place
only when every episode succeeded: a failed recording never overwrites good cassettes.
Re-recording chosen episodes (``only``) replaces just those cassettes and manifest entries.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
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
    one_request_at_a_time,
    read_manifest,
    redact_url,
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
    keep_errors: bool = False  # keep episodes ending with stop reason error (no retries then)
    tools_trust_env: bool | None = None  # for the Open-Meteo session; None: as trust_env


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
) -> dict[str, EpisodeRecord]:
    records: dict[str, EpisodeRecord] = {}
    recorder = make_vcr("all")
    for config, question_id in episodes:
        question = suite.question(question_id)
        key = episode_key(config.name, question_id)
        if progress:
            progress(key)
        path = cassette_path(folder, config.name, question_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        with (
            httpx.Client(timeout=120, trust_env=target.trust_env) as http,
            requests.Session() as session,
        ):
            session.trust_env = (
                target.trust_env if target.tools_trust_env is None else target.tools_trust_env
            )
            model = OpenAIChatModel(
                target.model,
                http,
                # A kept error must replay as recorded: retries would add interactions that a
                # replay (which never retries) leaves unplayed.
                max_retries=0 if target.keep_errors else 2,
                tool_choice=suite.experiment.tool_choice,
            )
            client = OpenMeteoClient(session, target.geocoding_url, target.forecast_url)
            with (
                recorder.use_cassette(str(path)) as cassette,
                one_request_at_a_time(cassette),
            ):
                started = time.perf_counter()
                episode = run_episode(
                    suite, config, question, model=model, open_meteo=client, today=target.today
                )
                seconds = round(time.perf_counter() - started, 3)
        if episode.stop_reason == "error" and not target.keep_errors:
            raise RecordingError(
                f"episode {key} failed: {episode.error} (to keep such episodes as a result, "
                "record --live with --keep-errors)"
            )
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
) -> Manifest:
    """Record ``configs`` × the suite's questions into ``set_dir`` (or only the episode keys
    ``only``, e.g. ``loop+atomic/ningde``, into an existing set). Returns the new manifest.

    Raises :class:`RecordingError` when an episode fails or an ``only`` key is unknown; the
    set on disk is then untouched."""
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
        **fingerprint(suite),
    }
    previous = read_manifest(set_dir) if only else None
    if previous is not None:
        # Checked before recording: a refused partial re-record costs no model calls.
        mixed = [name for name, value in header.items() if getattr(previous, name) != value]
        if mixed:
            raise RecordingError(
                f"{set_dir} was recorded with a different {', '.join(mixed)} "
                "(eval settings, prompt, tools, model or date); re-recording only part of "
                "it would mix two recordings in one set. Re-record the whole set instead "
                "(drop --only); nothing was changed."
            )
    set_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".recording-{set_dir.name}-", dir=set_dir.parent))
    try:
        records = _record_into(staging, suite, target, wanted, progress)
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


def record_stand_in(
    set_dir: Path,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    *,
    only: Sequence[str] = (),
    progress: Progress | None = None,
) -> Manifest:
    """Record against the stand-in model and the Open-Meteo fixture server (both on
    loopback, started and stopped here). The prompt date is the fixtures' ``today``."""
    with standin_server(suite) as model_url, open_meteo_fixture_server() as om_url:
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
        )
        return record_set(set_dir, suite, configs, target, only=only, progress=progress)


def record_live(
    set_dir: Path,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    settings: ModelSettings,
    *,
    geocoding_url: str = GEOCODING_URL,
    forecast_url: str = FORECAST_URL,
    open_meteo_fixture: bool = False,
    keep_errors: bool = False,
    only: Sequence[str] = (),
    progress: Progress | None = None,
) -> Manifest:
    """Record against a real endpoint (``settings``) and Open-Meteo (the public API unless
    ``geocoding_url``/``forecast_url`` say otherwise). The prompt date is today in
    Asia/Shanghai. :class:`RecordingError` when no key is set.

    With ``open_meteo_fixture`` the tools talk to the bundled Open-Meteo fixture server on
    loopback instead (started and stopped here), so only the model is live: fixed tool data,
    and the prompt date is the fixtures' ``today`` so "today" matches the data.
    With ``keep_errors`` an episode that ends with stop reason ``error`` (a server's real
    failure) is kept in the set instead of failing the recording; requests are then not
    retried, so the cassette replays as recorded."""
    if not settings.api_key:
        raise RecordingError(
            "live recording needs an API key: set "
            + " or ".join(KEY_VARIABLES)
            + " (the key is sent to the endpoint only; it is never written to a cassette)."
            " To record offline instead, use `toolreplay record --stand-in`."
        )
    settings = ModelSettings(settings.base_url, settings.model, settings.api_key,
                             suite.experiment.temperature)  # fmt: skip
    if open_meteo_fixture:
        with open_meteo_fixture_server() as om_url:
            target = Target(
                provenance="live",
                model=settings,
                geocoding_url=f"{om_url}/v1/search",
                forecast_url=f"{om_url}/v1/forecast",
                today=str(load_fixtures()["today"]),
                tools_trust_env=False,
                keep_errors=keep_errors,
            )
            return record_set(set_dir, suite, configs, target, only=only, progress=progress)
    target = Target(
        provenance="live",
        model=settings,
        geocoding_url=geocoding_url,
        forecast_url=forecast_url,
        today=dt.datetime.now(ZoneInfo("Asia/Shanghai")).date().isoformat(),
        keep_errors=keep_errors,
    )
    return record_set(set_dir, suite, configs, target, only=only, progress=progress)
