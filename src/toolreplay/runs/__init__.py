"""Runs: configurations, one episode (live or replayed), many episodes (workers, shards), recording
a set, trials and snapshot updates.
"""
