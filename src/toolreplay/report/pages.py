"""The files beside a report page: where its transcripts page and its episodes page go
(:func:`transcripts_path`, :func:`episodes_path`), and which of them a previous report left
that the new one no longer writes (:func:`stale_pages`, removed by :func:`remove_stale`): a
run that drops below the thresholds of :func:`toolreplay.report.render.report_pages` must not
leave an old page beside the new report, and a file of the user's is never touched."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

#: What every page toolreplay writes carries in its head; a page beside a report is removed as
#: stale (:func:`stale_pages`) only when it carries this and the previous report linked it.
GENERATOR = '<meta name="generator" content="toolreplay">'


def transcripts_path(out_path: Path) -> Path:
    """Where the transcripts of a large run go beside ``out_path``: ``index.html`` →
    ``index-transcripts.html``."""
    return out_path.with_name(f"{out_path.stem}-transcripts{out_path.suffix or '.html'}")


def episodes_path(out_path: Path) -> Path:
    """Where the episode table and question matrix of a very large run go beside ``out_path``
    (:func:`splits_table`): ``index.html`` → ``index-episodes.html``."""
    return out_path.with_name(f"{out_path.stem}-episodes{out_path.suffix or '.html'}")


def stale_pages(out_path: Path, pages: Iterable[str]) -> list[Path]:
    """The pages beside ``out_path`` that the previous report there wrote and the one about to
    be written (file names ``pages``, :func:`report_pages`' keys) no longer has: its
    transcripts page (:func:`transcripts_path`) or episodes page (:func:`episodes_path`), each
    only when the previous report at ``out_path`` carries :data:`GENERATOR` and links to it, and
    it is a regular file carrying :data:`GENERATOR` too (never a file of the user's). Call before
    writing ``pages`` (the previous report is read); remove them after with
    :func:`remove_stale`. Unreadable files count as not ours."""
    out = Path(out_path)
    names = set(pages)
    sides = [p for p in (transcripts_path(out), episodes_path(out)) if p.name not in names]
    if not sides or not _ours(out):
        return []
    try:
        previous = out.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [p for p in sides if f'href="{quote(p.name)}"' in previous and _ours(p)]


def remove_stale(paths: Iterable[Path]) -> list[Path]:
    """Remove the pages :func:`stale_pages` found (each checked again to carry
    :data:`GENERATOR`); returns those removed. A file that cannot be removed is left."""
    removed = []
    for p in paths:
        if _ours(p):
            try:
                p.unlink()
            except OSError:
                continue
            removed.append(p)
    return removed


def _ours(path: Path) -> bool:
    """Whether ``path`` is a regular file (not a link) whose head carries :data:`GENERATOR`."""
    try:
        if path.is_symlink() or not path.is_file():
            return False
        with path.open("rb") as f:
            head = f.read(8192)
    except OSError:
        return False
    return GENERATOR.encode() in head


__all__ = ["GENERATOR", "episodes_path", "remove_stale", "stale_pages", "transcripts_path"]
