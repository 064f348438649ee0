"""Cassettes: the format, reading and validation with the parse cache, miss explanations, the
manifest, the vcrpy adapter and the replay transport.
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "AtomicPersister": "vcr",
    "CassetteError": "errors",
    "CassetteMiss": "errors",
    "EpisodeRecord": "manifest",
    "JsonBodySerializer": "format",
    "LOOPBACK": "format",
    "MATCH_ON": "format",
    "Manifest": "manifest",
    "Player": "transport",
    "RecordMode": "vcr",
    "UnplayedInteractions": "errors",
    "before_record_request": "vcr",
    "before_record_response": "vcr",
    "cassette_path": "manifest",
    "check_set_name": "manifest",
    "convert_file": "convert",
    "episode_from_cassette": "episodes",
    "episode_key": "manifest",
    "episodes_from_cassette": "episodes",
    "explain_miss": "miss",
    "find_miss": "miss",
    "json_body_matcher": "format",
    "load_cassette": "store",
    "load_cassette_digest": "store",
    "load_recorded": "episodes",
    "make_vcr": "vcr",
    "manifest_path": "manifest",
    "normalise_environment": "environment",
    "one_request_at_a_time": "vcr",
    "player_for": "transport",
    "read_cassette": "store",
    "read_manifest": "manifest",
    "redact_url": "manifest",
    "replay_cassette": "vcr",
    "sha256_json": "manifest",
    "trial_cassette_path": "manifest",
    "recorded_cassette_path": "manifest",
    "unpatch_always": "vcr",
    "use_cassette": "vcr",
    "write_manifest": "manifest",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
