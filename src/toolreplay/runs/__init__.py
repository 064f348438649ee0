"""Runs: configurations, one episode (live or replayed), many episodes (workers, shards), recording
a set, trials and snapshot updates.
"""

from __future__ import annotations

from toolreplay.lazy import lazy_exports

#: What other packages may use: name -> its module (relative to this package), loaded
#: on first use so importing the package stays cheap.
_EXPORTS: dict[str, str] = {
    "Configuration": "configuration",
    "CassetteProbe": "replay",
    "Job": "replay",
    "ProbeSet": "replay",
    "collector_frozen": "replay",
    "Progress": "configuration",
    "RecordingError": "target",
    "MAX_TRIALS": "record",
    "RecordingInterrupted": "record",
    "ShardError": "shards",
    "ShardSpec": "shards",
    "SnapshotUpdateError": "snapshots",
    "SuiteFolder": "suite_folder",
    "SuiteFolderError": "suite_folder",
    "WorkerDied": "pool",
    "end_with_parent": "pool",
    "watched_map": "pool",
    "ablation_configurations": "configuration",
    "build_manifest": "suite_folder",
    "changed_cassettes": "suite_folder",
    "check_can_update": "snapshots",
    "default_workers": "replay",
    "discover": "suite_folder",
    "ensure_manifest": "suite_folder",
    "key": "suite_folder",
    "parse_shard": "replay",
    "pinned_keys": "snapshots",
    "read_shards": "shards",
    "read_spec": "shards",
    "read_suite_folder": "suite_folder",
    "unread_cassettes": "suite_folder",
    "record_live": "record",
    "record_stand_in": "record",
    "replay_outcomes": "replay",
    "replay_set": "replay",
    "rerecord_command": "configuration",
    "shard": "replay",
    "shard_file_name": "shards",
    "stale_parts": "configuration",
    "study_configurations": "configuration",
    "trial_jobs": "trials",
    "trials_and_seed": "record",
    "update_snapshots": "snapshots",
    "write_shard": "shards",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
