"""A run holds its episodes to the end, so ``toolreplay run`` asks the cycle collector for few
full passes while it evaluates and writes (issue 33: full passes over 10,000 episodes were
12 s of the serial tail) and freezes what it built before writing; both are undone after, so
code that calls the command in-process keeps its own settings."""

from __future__ import annotations

import gc

import pytest

from toolreplay.cli import run as run_cli
from toolreplay.cli.common import rare_full_collections


def test_full_collections_are_rare_inside_and_as_before_after():
    before = gc.get_threshold()
    with rare_full_collections():
        assert gc.get_threshold()[2] >= 1000
        assert gc.get_threshold()[:2] == before[:2]  # young garbage collected as before
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), rare_full_collections():
        raise RuntimeError("a run that fails")
    assert gc.get_threshold() == before


def test_a_whole_run_leaves_the_collector_as_it_found_it(tmp_path, monkeypatch):
    from .conftest import _cli_run

    seen: list[tuple[tuple[int, int, int], int]] = []
    real = run_cli.publish_run

    def publish(*args, **kwargs):
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        return real(*args, **kwargs)

    monkeypatch.setattr(run_cli, "publish_run", publish)
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    _cli_run(tmp_path / "out", "--workers", "1")
    ((threshold, frozen_while_writing),) = seen
    assert threshold[2] >= 1000
    # frozen while writing, unless the process had frozen objects of its own (left alone)
    assert frozen_while_writing > frozen if frozen == 0 else frozen_while_writing == frozen
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen


def test_objects_the_process_froze_itself_stay_frozen():
    """Unfreezing releases every frozen object: a process that froze its own (a server about
    to fork) keeps them frozen through a replay and a run's writing."""
    from toolreplay.runs.replay import collector_frozen

    def kept(mine: int) -> bool:  # neither released nor added to (a frozen object may die)
        return mine * 0.99 <= gc.get_freeze_count() <= mine

    gc.freeze()
    try:
        mine = gc.get_freeze_count()
        assert mine > 0
        with collector_frozen() as freeze:
            freeze()
            assert kept(mine)
        assert kept(mine)
    finally:
        gc.unfreeze()
    with collector_frozen() as freeze:  # nothing frozen before: frozen, then all released
        assert gc.get_freeze_count() > 0
        freeze()
    assert gc.get_freeze_count() == 0
