"""Recording cassette sets: ``--model-source stand-in`` (offline, against the bundled stand-in
model and Open-Meteo fixture server on loopback) or ``--model-source live`` (a real
endpoint and the real Open-Meteo API; needs a key). The model client speaks the eval file's
``experiment.protocol`` (Chat Completions, the Responses API or Anthropic Messages;
:func:`toolreplay.models.endpoint.chat_model`).

Recording writes the whole new set into a staging folder beside the set and swaps it in
atomically only when every episode succeeded (:mod:`toolreplay.folders`): a failed or killed
recording never overwrites good cassettes, and a reader never sees half a set. Re-recording
chosen episodes (``only``) changes just those cassettes and manifest entries (the rest are
copied into the staging folder unchanged). One recording of a set at a time (a file lock).

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
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import requests

from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.format import LOOPBACK
from toolreplay.cassettes.manifest import (
    EpisodeRecord,
    Manifest,
    check_set_name,
    episode_key,
    manifest_path,
    read_manifest,
    recorded_cassette_path,
    redact_url,
    write_manifest,
)
from toolreplay.cassettes.vcr import make_vcr, one_request_at_a_time, use_cassette
from toolreplay.evals import DEFAULT_PROTOCOL, EvalSuite
from toolreplay.folders import (
    LockedError,
    deferred_interrupts,
    folder_lock,
    recover_tree,
    replace_tree,
    staging_folder,
)
from toolreplay.models.base import ModelSettings
from toolreplay.models.endpoint import KEY_VARIABLES, chat_model
from toolreplay.redaction import SecretFound, strip_url_credentials
from toolreplay.runs.configuration import Configuration, Progress, fingerprint
from toolreplay.runs.episode import run_episode
from toolreplay.runs.standin_protocols import standin_protocol_server
from toolreplay.runs.target import (
    RecordingError,
    Target,
    check_no_secret,
    check_provenance,
    package_versions,
    register_secrets,
)
from toolreplay.studies import load_study


def _record_into(
    folder: Path,
    suite: EvalSuite,
    target: Target,
    episodes: Sequence[tuple[Configuration, str]],
    progress: Progress | None,
    trials: int = 1,
) -> dict[str, EpisodeRecord]:
    with httpx.Client(timeout=120, trust_env=target.trust_env) as http:
        return _record_episodes(folder, suite, target, episodes, progress, trials, http)


def _record_episodes(
    folder: Path,
    suite: EvalSuite,
    target: Target,
    episodes: Sequence[tuple[Configuration, str]],
    progress: Progress | None,
    trials: int,
    http: httpx.Client,
) -> dict[str, EpisodeRecord]:
    # One httpx client for every episode (vcrpy patches httpx per cassette at the class
    # level; a client costs ~20-40 ms of TLS set-up). One requests session per episode: vcrpy
    # binds each urllib3 connection to the cassette it was opened under, so pooled
    # connections must not outlive their cassette.
    records: dict[str, EpisodeRecord] = {}
    recorder = make_vcr("all")
    runs = [(c, q, t) for c, q in episodes for t in range(1, trials + 1)]
    for config, question_id, trial in runs:
        question = suite.question(question_id)
        key = episode_key(config.name, question_id, trial)
        if progress:
            progress(key)
        path = recorded_cassette_path(folder, config.name, question_id, trial, trials)
        path.parent.mkdir(parents=True, exist_ok=True)
        with requests.Session() as session:
            session.trust_env = (
                target.trust_env if target.tools_trust_env is None else target.tools_trust_env
            )
            model = chat_model(  # the client of the settings' protocol
                target.model_for(trial),
                http,
                # A kept error must replay as recorded: retries would add interactions that a
                # replay (which never retries) leaves unplayed.
                max_retries=0 if target.keep_errors else 2,
                tool_choice=suite.experiment.tool_choice,
            )
            client = config.study_.tool_client(session, target.tool_urls)
            with (
                use_cassette(recorder, str(path)) as cassette,
                one_request_at_a_time(cassette),
            ):
                started = time.perf_counter()
                episode = run_episode(
                    suite, config, question, model=model, tool_client=client, today=target.today
                )
                seconds = round(time.perf_counter() - started, 3)
        if episode.stop_reason == "error" and not target.keep_errors:
            endpoint = strip_url_credentials(target.model_for(trial).base_url)
            raise RecordingError(
                f"episode {key} failed at the model endpoint {endpoint}: {episode.error} (to "
                "keep such episodes as a result, record --model-source live with --keep-errors)"
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
    force: bool = False,
    notify: Callable[[str], None] | None = None,
    trials: int = 1,
    seed: int = 0,
) -> Manifest:
    """Record ``configs`` × the suite's questions, ``trials`` times each, into ``set_dir`` (or
    only the episode keys ``only``, e.g. ``loop+atomic/ningde``, every trial of each, into an
    existing set with the same ``trials`` and ``seed``). Returns the new manifest.

    Raises :class:`RecordingError` when an episode fails, an ``only`` key is unknown, or
    ``set_dir`` holds a set of another provenance (stand-in or live, model, endpoint host) or
    something that is not a readable set, unless ``force``; the set on disk is then
    untouched. Holds the set's lock (:func:`~toolreplay.folders.folder_lock`) throughout and
    fails fast when another recording holds it; first cleans up after a killed run
    (:func:`~toolreplay.folders.recover_tree`), passing what it did to ``notify``. The new set
    replaces the old one atomically (:func:`~toolreplay.folders.replace_tree`); Ctrl-C or
    SIGTERM raises :class:`RecordingInterrupted` saying whether the set was replaced."""
    register_secrets(target)  # before any request: nothing printed or written shows them
    if not 1 <= trials <= MAX_TRIALS:
        raise RecordingError(f"--trials must be from 1 to {MAX_TRIALS}, not {trials}")
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
    try:
        set_dir.parent.mkdir(parents=True, exist_ok=True)
        with folder_lock(set_dir, what="recording"):  # fails fast: one recording of a set
            for note in recover_tree(set_dir):
                if notify:
                    notify(note)
            if not only and not force:
                check_provenance(set_dir, target)
                if lost := removed_cassettes(set_dir, [(c, q) for c, q in wanted], trials):
                    raise RecordingError(
                        f"re-recording {set_dir} with these settings would remove "
                        f"{len(lost)} of its cassettes ({', '.join(lost[:3])}"
                        f"{', ...' if len(lost) > 3 else ''}): fewer --trials than the set's, "
                        "configurations or questions left out. Pass --force to remove them, "
                        "or keep the set's shape (its --trials, ablations and eval file). "
                        "Nothing was changed."
                    )
            previous = read_manifest(set_dir) if only else None
            if previous is not None:
                # Checked before recording: a refused partial re-record costs no model calls.
                mixed = [k for k, value in header.items() if getattr(previous, k) != value]
                if mixed:
                    raise RecordingError(
                        f"{set_dir} was recorded with a different {', '.join(mixed)} "
                        "(eval settings, prompt, tools, model, date or trials); re-recording only "
                        "part of it would mix two recordings in one set. Re-record the whole set "
                        "instead (drop --only); nothing was changed."
                    )
            return _record_and_commit(
                set_dir, suite, target, wanted, previous, header, host, progress, trials
            )
    except (CassetteError, LockedError, SecretFound) as exc:
        raise RecordingError(str(exc)) from None
    except OSError as exc:
        raise RecordingError(
            f"recording into {set_dir} failed: {exc.strerror or exc}"
            + (f" ({exc.filename})" if exc.filename else "")
            + "; the set was not replaced"
        ) from None


class RecordingInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a recording; ``str()`` says whether the set was replaced."""


def _record_and_commit(
    set_dir: Path,
    suite: EvalSuite,
    target: Target,
    wanted: Sequence[tuple[Configuration, str]],
    previous: Manifest | None,
    header: dict[str, Any],
    host: str,
    progress: Progress | None,
    trials: int = 1,
) -> Manifest:
    """Record into a staging folder holding the whole new set (for a partial re-record, the
    untouched cassettes are copied in first), then swap it in with :func:`replace_tree`."""
    staging = staging_folder(set_dir)
    committed = False
    try:
        if previous is not None:
            redo = {
                recorded_cassette_path(set_dir, c.name, q, t, trials)
                for c, q in wanted
                for t in range(1, trials + 1)
            }
            redo.add(manifest_path(set_dir))
            for path in sorted(set_dir.rglob("*")):
                if path in redo or not path.is_file():
                    continue
                dest = staging / path.relative_to(set_dir)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, dest)  # keeps the file's mtime
        records = _record_into(staging, suite, target, wanted, progress, trials)
        check_no_secret(staging, target)
        manifest = Manifest(
            cassette_set=set_dir.name,
            endpoint_host=host,
            tool_urls={k: redact_url(url)[0] for k, url in target.tool_urls.items()},
            recorded_on=dt.date.today().isoformat(),
            eval_file=Path(suite.path).as_posix(),
            packages=package_versions(),
            episodes={**(previous.episodes if previous else {}), **records},
            **header,
        )
        write_manifest(staging, manifest)
        try:
            with deferred_interrupts():  # the swap completes, or never starts
                replace_tree(staging, set_dir)
                committed = True
        except KeyboardInterrupt:
            if committed:
                raise RecordingInterrupted(
                    f"interrupted after the new recording replaced {set_dir}; the set is complete"
                ) from None
            raise
        return manifest
    except KeyboardInterrupt as exc:
        if isinstance(exc, RecordingInterrupted):
            raise
        raise RecordingInterrupted(f"interrupted; {set_dir} is unchanged") from None
    finally:
        if not committed:
            shutil.rmtree(staging, ignore_errors=True)


#: The most trials an episode is recorded with.
MAX_TRIALS = 200


def trials_and_seed(
    set_dir: Path, only: Sequence[str], trials: int | None, seed: int | None
) -> tuple[int, int]:
    """The trials and seed to record with: as given; otherwise those of the set already in
    ``set_dir`` (a re-recording keeps the set's shape), or 1 trial, seed 0 for a new set (or
    one whose manifest cannot be read, which only ``--force`` replaces). Raises
    :class:`RecordingError` when a partial re-record (``only``) finds no readable set."""
    if manifest_path(set_dir).exists():
        try:
            previous = read_manifest(set_dir)
        except CassetteError as exc:
            if only:
                raise RecordingError(str(exc)) from None
        else:
            return (trials or previous.trials, previous.seed if seed is None else seed)
    return (trials or 1, seed or 0)


def removed_cassettes(
    set_dir: Path, wanted: Sequence[tuple[Configuration, str]], trials: int
) -> list[str]:
    """The episode keys of the set in ``set_dir`` (its manifest's) that recording ``wanted``
    (configuration, question id) × ``trials`` in full would not record again, and so remove:
    fewer trials, configurations left out (``--no-ablations``), questions no longer in the
    eval file. Empty when ``set_dir`` holds no readable set."""
    try:
        previous = read_manifest(set_dir)
    except CassetteError:
        return []
    kept = {episode_key(c.name, q, t) for c, q in wanted for t in range(1, trials + 1)}
    return sorted(k for k in previous.episodes if k not in kept)


def record_stand_in(
    set_dir: Path,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    *,
    only: Sequence[str] = (),
    progress: Progress | None = None,
    force: bool = False,
    notify: Callable[[str], None] | None = None,
    trials: int | None = None,
    seed: int | None = None,
) -> Manifest:
    """Record against the stand-in model and the study's fixture server (both on loopback,
    started and stopped here). The prompt date is the fixtures' ``today``.
    One stand-in per trial is started, with the set's ``seed`` (see
    :func:`trials_and_seed` for the defaults). Over the eval file's ``experiment.protocol``:
    the study's stand-in server for ``chat_completions``, its stand-in policy behind the
    scripted loopback server for ``responses`` and ``anthropic_messages``
    (:mod:`toolreplay.runs.standin_protocols`)."""
    from toolreplay.doubles import STANDIN_MODEL

    study = load_study(suite.study)
    protocol = suite.experiment.protocol
    chat = protocol == DEFAULT_PROTOCOL
    if (study.standin_server if chat else study.standin_policy) is None:
        raise RecordingError(f"the {study.name} study has no stand-in model")

    def standin(seed_: int, trial: int) -> AbstractContextManager[str]:
        """Trial ``trial``'s stand-in: the study's own server over Chat Completions, else its
        policy behind the scripted server speaking ``protocol``."""
        if chat:
            assert study.standin_server is not None
            return study.standin_server(suite, seed_, trial)
        assert study.standin_policy is not None
        return standin_protocol_server(study.standin_policy(suite, seed_, trial), protocol)

    n, s = trials_and_seed(set_dir, only, trials, seed)
    if n < 1:
        raise RecordingError(f"--trials must be at least 1, not {n}")
    with ExitStack() as stack:
        urls = tuple(stack.enter_context(standin(s, t)) for t in range(1, n + 1))
        tool_urls, today = stack.enter_context(_fixture_server(suite))
        target = Target(
            provenance="stand-in",
            model=ModelSettings(
                base_url=urls[0],
                model=STANDIN_MODEL,
                api_key="stand-in",
                temperature=suite.experiment.temperature,
                stream=suite.experiment.stream,
                protocol=protocol,
            ),
            tool_urls=tool_urls,
            today=today,
            trust_env=False,
            trial_model_urls=urls,
        )
        return record_set(
            set_dir, suite, configs, target, only=only, progress=progress, force=force,
            notify=notify, trials=n, seed=s,
        )  # fmt: skip


def record_live(
    set_dir: Path,
    suite: EvalSuite,
    configs: Sequence[Configuration],
    settings: ModelSettings,
    *,
    tool_urls: Mapping[str, str] | None = None,
    tools_fixture: bool = False,
    keep_errors: bool = False,
    only: Sequence[str] = (),
    progress: Progress | None = None,
    force: bool = False,
    notify: Callable[[str], None] | None = None,
    trials: int | None = None,
) -> Manifest:
    """Record against a real endpoint (``settings``) and the tools' live endpoints (the
    study's :attr:`~toolreplay.studies.Study.tool_urls`, each overridden by ``tool_urls``).
    The prompt date is today in Asia/Shanghai. :class:`RecordingError` when no key is set.

    With ``tools_fixture`` the tools talk to the study's fixture server on
    loopback instead (started and stopped here), so only the model is live: fixed tool data,
    and the prompt date is the fixtures' ``today`` so "today" matches the data.
    With ``keep_errors`` an episode that ends with stop reason ``error`` (a server's real
    failure) is kept in the set instead of failing the recording; requests are then not
    retried, so the cassette replays as recorded."""
    if not settings.api_key and redact_url(settings.base_url)[1] not in LOOPBACK:
        raise RecordingError(
            "live recording needs an API key: set "
            + " or ".join(KEY_VARIABLES)
            + " (the key is sent to the endpoint only; it is never written to a cassette)."
            " To record offline instead, use"
            " `toolreplay record --model-source stand-in --set NAME`."
        )
    settings = ModelSettings(settings.base_url, settings.model, settings.api_key,
                             suite.experiment.temperature, stream=suite.experiment.stream,
                             protocol=suite.experiment.protocol)  # fmt: skip
    n, _ = trials_and_seed(set_dir, only, trials, None)
    if tools_fixture:
        with _fixture_server(suite) as (fixture_urls, today):
            target = Target(
                provenance="live",
                model=settings,
                tool_urls=fixture_urls,
                today=today,
                tools_trust_env=False,
                keep_errors=keep_errors,
            )
            return record_set(
                set_dir, suite, configs, target, only=only, progress=progress, force=force,
                notify=notify, trials=n,
            )  # fmt: skip
    target = Target(
        provenance="live",
        model=settings,
        tool_urls={**load_study(suite.study).tool_urls, **(tool_urls or {})},
        today=dt.datetime.now(ZoneInfo("Asia/Shanghai")).date().isoformat(),
        keep_errors=keep_errors,
    )
    return record_set(
        set_dir, suite, configs, target, only=only, progress=progress, force=force,
        notify=notify, trials=n,
    )  # fmt: skip


def _fixture_server(suite: EvalSuite) -> AbstractContextManager[tuple[Mapping[str, str], str]]:
    """The suite's study's fixture server; :class:`RecordingError` when it has none."""
    study = load_study(suite.study)
    if study.fixture_server is None:
        raise RecordingError(f"the {study.name} study has no fixture server to record against")
    return study.fixture_server()
