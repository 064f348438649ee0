"""``toolreplay record``: record a cassette set (stand-in or live model).
"""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolreplay.cli.app import app
from toolreplay.cli.common import (
    EvalOpt,
    ModelSource,
    check_set_name_option,
    err,
    fail,
    load_suite,
    not_stdout,
    out,
    progress,
    terminate_as_interrupt,
)
from toolreplay.cli.run import run
from toolreplay.defaults import DEFAULT_CASSETTES, DEFAULT_EVAL

if TYPE_CHECKING:
    from toolreplay.runs.configuration import Configuration

#: The help panel of the options only ``--model-source live`` uses.
LIVE = "Live recording"


class ToolsSource(str, Enum):  # noqa: UP042 (typer shows and parses it as before)
    """Where ``record --model-source live`` sends the tools' requests: the study's real
    endpoints, or its fixture server on loopback."""

    live = "live"
    fixture = "fixture"


@app.command()
def record(
    model_source: Annotated[
        ModelSource | None,
        typer.Option(
            "--model-source",
            help="Required: stand-in (offline) or live (a key).",
            case_sensitive=False,
            show_default=False,
        ),
    ] = None,
    eval_path: EvalOpt = DEFAULT_EVAL,
    cassettes: Annotated[
        Path,
        typer.Option(
            help="Folder of cassette sets (not -).",
            callback=not_stdout("--cassettes", "a folder of cassette sets"),
        ),
    ] = DEFAULT_CASSETTES,
    set_name: Annotated[
        str | None,
        typer.Option(
            "--set",
            help="Required: the set to record (in --cassettes).",
            callback=lambda v: None if v is None else check_set_name_option(v),
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace a set of another provenance.",
        ),
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            help="Re-record just this episode; repeatable.",
            metavar="CONFIG/QUESTION",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="Endpoint base URL \\[default: the key's endpoint]",
            rich_help_panel=LIVE,
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            "--api-key-env",
            metavar="NAME",
            help="Environment variable holding the key.",
            rich_help_panel=LIVE,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="Model name \\[default: $TOOLREPLAY_MODEL]",
            rich_help_panel=LIVE,
        ),
    ] = None,
    tool_url: Annotated[
        list[str] | None,
        typer.Option(
            "--tool-url",
            metavar="KEY=URL",
            help="A tool endpoint by its key; repeatable.",
            rich_help_panel=LIVE,
            show_default=False,
        ),
    ] = None,
    tools: Annotated[
        ToolsSource,
        typer.Option(
            "--tools",
            help="Real APIs or the fixture server",
            rich_help_panel=LIVE,
        ),
    ] = ToolsSource.live,
    no_ablations: Annotated[
        bool,
        typer.Option(
            "--no-ablations",
            help="Skip the ablated baselines.",
        ),
    ] = False,
    trials: Annotated[
        int | None,
        typer.Option(
            "--trials",
            min=1,
            metavar="N",
            help="Trials an episode, 1-200 \\[default: the set's]",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            min=0,
            metavar="N",
            help="Stand-in variation seed \\[default: the set's]",
            show_default=False,
        ),
    ] = None,
    keep_errors: Annotated[
        bool,
        typer.Option(
            "--keep-errors",
            help="Keep episodes ending in error; no retries.",
            rich_help_panel=LIVE,
        ),
    ] = False,
    update_snapshots_: Annotated[
        bool,
        typer.Option(
            "--update-snapshots",
            help="Then update the episodes' snapshots.",
        ),
    ] = False,
) -> None:
    """Record a cassette set.

    Every configuration × question (and the ablated baselines), against the stand-in model
    or a live endpoint; the set is replaced only when every episode succeeded."""
    from toolreplay.models.endpoint import EndpointError, resolve_endpoint
    from toolreplay.redaction import register_url
    from toolreplay.runs.configuration import ablation_configurations, study_configurations
    from toolreplay.runs.record import (
        MAX_TRIALS,
        RecordingInterrupted,
        record_live,
        record_stand_in,
        trials_and_seed,
    )
    from toolreplay.runs.snapshots import (
        SnapshotUpdateError,
        check_can_update,
        pinned_keys,
        update_snapshots,
    )
    from toolreplay.runs.target import RecordingError

    register_url(base_url)  # its userinfo and credential parameters are never printed
    if trials is not None and trials > MAX_TRIALS:  # a usage error, before anything runs
        raise typer.BadParameter(f"{trials} is more than {MAX_TRIALS}", param_hint="'--trials'")
    if model_source is None:  # checked here: typer releases differ on required options
        raise typer.BadParameter(
            "missing: choose stand-in or live", param_hint="'--model-source'"
        )
    if set_name is None:
        raise fail(
            "name the cassette set to record with --set NAME; `--set reference` re-records "
            f"the committed set `toolreplay run` replays by default ({cassettes / 'reference'})",
            2,
        )
    suite = load_suite(eval_path)
    tool_urls = _tool_urls(suite, tool_url or [])
    snapshot_tests = _study_of(suite).snapshot_tests
    if update_snapshots_:
        try:
            check_can_update(snapshot_tests, Path.cwd(), cassettes / set_name)
        except SnapshotUpdateError as exc:
            raise typer.BadParameter(str(exc), param_hint="'--update-snapshots'") from None
    configs: list[Configuration] = study_configurations(suite)
    if not no_ablations:
        configs += ablation_configurations(suite)
    set_dir = cassettes / set_name
    keys = list(dict.fromkeys(only or []))
    from toolreplay.cassettes.manifest import episode_key

    known = [episode_key(c.name, q.id) for c in configs for q in suite.questions]
    if unknown := [k for k in keys if k not in known]:  # a usage error, before anything runs
        raise fail(
            f"--only: unknown episode(s) {', '.join(unknown)}; episodes look like "
            f"CONFIGURATION/QUESTION-ID, e.g. {known[0]}",
            2,
        )
    try:
        n_trials, _ = trials_and_seed(set_dir, keys, trials, seed)
    except RecordingError as exc:
        raise fail(str(exc)) from None
    total = (len(keys) or len(configs) * len(suite.questions)) * n_trials
    endpoint = None
    if model_source is ModelSource.live:
        try:  # before any request: which endpoint, which model, whose key
            endpoint = resolve_endpoint(base_url, model, api_key_env)
        except EndpointError as exc:
            raise fail(str(exc)) from None
        from toolreplay.redaction import register, register_url

        register(endpoint.settings.api_key)  # never printed nor written from here on
        register_url(endpoint.settings.base_url)
        out.print(f"recording live: {endpoint.describe()}", highlight=False, soft_wrap=True)
    elif base_url or model or api_key_env or tool_url or tools is ToolsSource.fixture:
        raise fail(
            "--base-url, --model, --api-key-env, --tool-url and --tools apply to "
            "--model-source live only (stand-in records against the study's own doubles)",
            2,
        )
    try:
        with progress(total, "recording") as step, terminate_as_interrupt():
            extra: dict[str, Any] = {"notify": _notice}
            if force:
                extra["force"] = True
            if endpoint is None:
                manifest = record_stand_in(
                    set_dir,
                    suite,
                    configs,
                    only=keys,
                    progress=step,
                    trials=trials,
                    seed=seed,
                    **extra,
                )
            else:
                manifest = record_live(
                    set_dir,
                    suite,
                    configs,
                    endpoint.settings,
                    tool_urls=tool_urls,
                    tools_fixture=tools is ToolsSource.fixture,
                    keep_errors=keep_errors,
                    only=keys,
                    progress=step,
                    trials=trials,
                    **extra,
                )
    except RecordingError as exc:
        raise fail(str(exc)) from None
    except RecordingInterrupted as exc:  # says whether the set was replaced
        raise fail(str(exc), 130) from None
    except KeyboardInterrupt:
        raise fail(f"interrupted; {set_dir} is unchanged", 130) from None
    out.print(
        f"recorded {total} episode(s) into {set_dir} "
        + (f"({manifest.trials} trials each, seed {manifest.seed}) " if manifest.trials > 1 else "")
        + f"({manifest.provenance}, model {manifest.model}, prompt date {manifest.today})"
    )
    if update_snapshots_:
        pinned = [k for k in keys if k in pinned_keys(suite)]
        if keys and not pinned:
            out.print("no snapshot pins these episodes (ablated baselines); none updated")
        elif snapshot_tests and (code := update_snapshots(snapshot_tests, Path.cwd(), pinned)):
            raise fail(f"updating snapshots failed (pytest exit code {code})", code)
        # The committed reports come from these cassettes too: regenerate them in the same step.
        _regenerate_reports(eval_path, cassettes, set_name)


def _notice(message: str) -> None:
    err.print(f"note: {message}", highlight=False, markup=False, soft_wrap=True)


def _regenerate_reports(eval_path: Path, cassettes: Path, set_name: str) -> None:
    out.print("regenerating reports/ from the re-recorded set")
    run(eval_path=eval_path, cassettes_given=cassettes, set_name=set_name, out_dir=Path("reports"))


def _study_of(suite: Any) -> Any:
    """The eval file's study; exit 1 naming a study that is not installed."""
    from toolreplay.studies import StudyError, load_study

    try:
        return load_study(suite.study)
    except StudyError as exc:
        raise fail(str(exc)) from None


def _tool_urls(suite: Any, given: list[str]) -> dict[str, str]:
    """``--tool-url KEY=URL`` values over the study's defaults; exit 2 naming a malformed value
    or a key the study does not have."""
    defaults = dict(_study_of(suite).tool_urls)
    urls = dict(defaults)
    for value in given:
        key, sep, url = value.partition("=")
        if not sep or not key or not url:
            raise fail(f"--tool-url {value!r}: give KEY=URL, e.g. {next(iter(defaults), 'key')}"
                       "=https://mirror.example/v1", 2)  # fmt: skip
        if key not in defaults:
            known = ", ".join(defaults) or "none"
            raise fail(f"--tool-url {key}: the study has no such endpoint (its keys: {known})", 2)
        urls[key] = url
    return urls
