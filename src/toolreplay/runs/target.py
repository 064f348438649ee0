"""What a recording talks to (:class:`Target`: provenance, model, tool endpoints, prompt date)
and the checks around it: the set it would replace keeps its provenance
(:func:`check_provenance`, before any request) and no file written holds the live key
(after the last one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.manifest import read_manifest, redact_url
from toolreplay.models.base import ModelSettings
from toolreplay.redaction import MIN_SECRET, find_secret, register, register_url

PACKAGES = ("toolreplay", "openai", "httpx", "requests", "vcrpy")


class RecordingError(RuntimeError):
    """Recording could not start or did not finish; nothing in the set was changed."""


@dataclass(frozen=True)
class Target:
    """Where recording goes and what it talks to."""

    provenance: str  # "stand-in" or "live"
    model: ModelSettings
    tool_urls: Mapping[str, str]  # the tools' endpoints by manifest key (the study's)
    today: str
    trust_env: bool = True  # proxies etc. from the environment; off for loopback servers
    keep_errors: bool = False  # keep episodes ending with stop reason error (no retries then)
    tools_trust_env: bool | None = None  # for the Open-Meteo session; None: as trust_env
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


#: Keys shorter than this are not searched for in what was written (a short test key such as
#: ``k`` would match ordinary text); real keys are far longer.
MIN_SCANNED_KEY = MIN_SECRET


def register_secrets(target: Target) -> None:
    """Make what ``target`` sends that is secret known to the redaction step
    (:mod:`toolreplay.redaction`): the live key, credentials in the model's and the tools' URLs.
    The stand-in's placeholder key is no secret."""
    if target.provenance == "live":
        register(target.model.api_key)
    for url in (target.model.base_url, *target.trial_model_urls, *target.tool_urls.values()):
        register_url(url)


def _check_no_secret(folder: Path, target: Target) -> None:
    """Refuse to keep a recording whose files hold a secret (an endpoint that echoes the key
    in a body, say). Headers and credential query parameters are filtered before writing and a
    cassette holding a secret is refused before it is written (the serializer's check); this
    is the last check, over every byte written, read as UTF-8, UTF-16 or gzip."""
    register_secrets(target)
    for path in sorted(folder.rglob("*")):
        if path.is_file() and find_secret(path.read_bytes()) is not None:
            raise RecordingError(
                f"a secret (the API key or a credential) appears in {path.relative_to(folder)} "
                "(the endpoint echoed it?); the recording was discarded and nothing was written"
            )


def check_provenance(set_dir: Path, target: Target) -> None:
    """:class:`RecordingError` unless recording ``target`` into ``set_dir`` keeps its
    provenance: the folder is absent or empty, or its manifest names the same provenance,
    model and endpoint host. Called before any request; ``--force`` skips it."""
    if not set_dir.exists() or (set_dir.is_dir() and not any(set_dir.iterdir())):
        return
    host = redact_url(target.model.base_url)[1]
    new = f"{target.provenance} (model {target.model.model} at {host})"
    try:
        old = read_manifest(set_dir)
    except CassetteError as exc:
        raise RecordingError(
            f"{set_dir} exists but is not a cassette set this recording can replace ({exc}); "
            "pass --force to replace it, or record into another --set. Nothing was changed."
        ) from None
    if (old.provenance, old.model, old.endpoint_host) != (
        target.provenance, target.model.model, host,
    ):  # fmt: skip
        raise RecordingError(
            f"{set_dir} holds a {old.provenance} recording (model {old.model} at "
            f"{old.endpoint_host}, recorded on {old.recorded_on}); this one would be {new}. "
            "Pass --force to replace it, or record into another --set. Nothing was changed."
        )


