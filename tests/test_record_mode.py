"""The project's own replays honour pytest's ``--record-mode``: ``none`` (the default) plays
every recorded interaction and sends nothing; another mode turns the unplayed check off and
lets unrecorded requests through to the endpoint."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from toolreplay.cassettes.errors import UnplayedInteractions
from toolreplay.cassettes.manifest import cassette_path, read_manifest
from toolreplay.evals import EvalSuite
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.episode import replay_episode

from .conftest import REFERENCE, replay_mode


def test_pytest_record_mode_reaches_the_project_replays(record_mode: str) -> None:
    assert replay_mode(record_mode) == ("all" if record_mode == "rewrite" else record_mode)
    assert replay_mode("none") == "none" and replay_mode("rewrite") == "all"


@pytest.fixture
def padded_set(tmp_path: Path) -> Path:
    """A copy of one reference episode whose cassette holds one interaction too many."""
    set_dir = tmp_path / "reference"
    source = cassette_path(REFERENCE, "loop+atomic", "beijing")
    target = set_dir / source.relative_to(REFERENCE)
    target.parent.mkdir(parents=True)
    text = source.read_text(encoding="utf-8")
    extra = "- request:" + text.rsplit("- request:", 1)[1]
    target.write_text(text + extra, encoding="utf-8")
    # the manifest records the padded cassette's digest: the set is consistent, only unplayed
    manifest = json.loads((REFERENCE / "manifest.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    manifest["episodes"]["loop+atomic/beijing"]["cassette_sha256"] = digest
    # a set is its manifest: this one holds that episode's first trial only
    manifest["episodes"] = {"loop+atomic/beijing": manifest["episodes"]["loop+atomic/beijing"]}
    manifest["trials"] = 1
    (set_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return set_dir


def test_record_mode_none_fails_an_unplayed_interaction(
    suite: EvalSuite, padded_set: Path
) -> None:
    args = (padded_set, read_manifest(padded_set), suite, Configuration.parse("loop+atomic"))
    with pytest.raises(UnplayedInteractions, match="left 1 recorded interaction"):
        replay_episode(*args, suite.question("beijing"))
    episode = replay_episode(*args, suite.question("beijing"), record_mode="once")
    assert episode.stop_reason == "converged"
