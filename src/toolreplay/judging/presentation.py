"""Presentation: an answer's markup stripped into plain clauses before anything is read.

Chat models answer in Markdown: emphasis around a number or between a number and its unit
(``**29**°C``, ``*29* ℃``), bullet and numbered lists, headings, block quotes, links, inline
code, tables and emoji. :func:`plain` turns that into the plain text the judge's grammar reads:

* emphasis (``*``, ``**``, ``_``, ``__``, ``~~``) and code marks are dropped (an underscore
  between two letters or digits, as in ``temperature_2m``, is kept); ``[text](url)`` keeps its
  text; HTML tags are dropped;
* a line's list marker (``-``, ``*``, ``+``, ``•``, ``1.``, ``1)``), heading marks and quote
  marks are dropped; a rule (``---``) is dropped; each line stays a line (a sentence break);
* emoji and pictographs are dropped (a space is left between two words they separated);
* a table becomes one clause per row: ``| 上海 | *29* ℃ |`` under the header
  ``| 城市 | 最高气温 |`` reads ``上海：最高气温 29 ℃。`` — the row's first cell, then each
  other cell after its column's header, so a value is read with the row's place (or field)
  and the column's field (or place), whichever way round the table is drawn.

The plain text keeps, for each of its characters, the offset of the character of the answer it
came from (:attr:`Plain.origin`; a header repeated in a row points at the header), so every
span the judge reports is a span of the answer as written (:meth:`Plain.span`). Text with no
markup is returned unchanged, offsets and all.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from dataclasses import dataclass, field

#: Characters that can start markup; text without any of them (and without emoji or a line
#: that starts with a list marker) is already plain.
_MARKUP = re.compile(r"[*_`#|~\[\]<>]")


_EMOJI = re.compile(
    "(?:[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2190-\u21ff\u2300-\u23ff"
    "\u3030\u303d\u3297\u3299][\ufe0f\ufe0e\u200d\u20e3\U0001f3fb-\U0001f3ff]*)+"
)


_LINE_MARKERS = re.compile(
    r"[ \t]*(?:>[ \t]?)*[ \t]*(?:#{1,6}[ \t]+|(?:[-*+•·▪◦‣]|\d{1,2}[.)、])[ \t]+)?"
)


_RULE = re.compile(r"[ \t]*(?:[-*_][ \t]*){3,}")


_TABLE_SEPARATOR = re.compile(
    r"[ \t]*\|?(?:[ \t]*:?-{2,}:?[ \t]*\|)+(?:[ \t]*:?-{2,}:?[ \t]*)?\|?[ \t]*"
)


_LINK = re.compile(r"!?\[([^\]\n]*)\]\(([^)\s]*)\)")


_TAG = re.compile(r"</?[A-Za-z][^<>\n]*>")


_EMPTY_CELL = re.compile(r"[\s\-—–/]*")


@dataclass
class _Out:
    """The plain text being built: its characters and where each came from."""

    chars: list[str] = field(default_factory=list)
    origin: list[int] = field(default_factory=list)
    copied: dict[int, int] = field(default_factory=dict)  # answer offset → plain offset

    def copy(self, text: str, start: int, end: int) -> None:
        """Append ``text[start:end]`` with inline markup removed."""
        i = start
        while i < end:
            link = _LINK.match(text, i)
            if link and link.end() <= end:
                self.copy(text, link.start(1), link.end(1))
                i = link.end()
                continue
            tag = _TAG.match(text, i)
            if tag and tag.end() <= end:
                i = tag.end()
                continue
            emoji = _EMOJI.match(text, i)
            if emoji and emoji.end() <= end:
                before = self.chars[-1] if self.chars else " "
                after = text[emoji.end()] if emoji.end() < end else " "
                if not before.isspace() and not after.isspace():
                    self.add(" ", i)
                i = emoji.end()
                continue
            ch = text[i]
            if text.startswith("~~", i) and i + 1 < end:
                i += 2
                continue
            if ch in "*`" or (ch == "_" and not _inside_word(text, i)):
                i += 1
                continue
            self.copied.setdefault(i, len(self.chars))
            self.add(ch, i)
            i += 1

    def add(self, chars: str, at: int) -> None:
        """Append ``chars`` that stand for the answer's character at ``at`` (punctuation the
        table pass inserts, a space for an emoji)."""
        for ch in chars:
            self.chars.append(ch)
            self.origin.append(at)


def _inside_word(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


@dataclass(frozen=True)
class Plain:
    """An answer as plain clauses: ``text``, and ``origin[i]``, the offset in ``source`` (the
    answer as written) of the character ``text[i]`` came from."""

    text: str
    origin: tuple[int, ...]
    source: str
    _copied: tuple[tuple[int, int], ...] = ()  # (answer offset, plain offset), sorted

    @property
    def unchanged(self) -> bool:
        return self.text is self.source

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the answer that the plain span ``start:end`` was read from."""
        if self.unchanged:
            return start, end
        if start >= end:
            at = self.origin[start] if start < len(self.origin) else len(self.source)
            return at, at
        return self.origin[start], self.origin[end - 1] + 1

    def to_plain(self, offset: int) -> int:
        """The plain offset of the answer's character at ``offset`` (of the first character
        copied from at or after it, for markup that was dropped)."""
        if self.unchanged:
            return offset
        keys = [a for a, _ in self._copied]
        n = bisect.bisect_left(keys, offset)
        return self._copied[n][1] if n < len(keys) else len(self.text)


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The cells of a table row ``text[start:end]`` as trimmed spans."""
    bars = [i for i in range(start, end) if text[i] == "|" and (i == 0 or text[i - 1] != "\\")]
    bounds = [start - 1, *bars, end]
    spans = []
    for a, b in itertools.pairwise(bounds):
        s, e = a + 1, b
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        spans.append((s, e))
    if bars and not text[start:bars[0]].strip():
        spans = spans[1:]
    if bars and not text[bars[-1] + 1 : end].strip():
        spans = spans[:-1]
    return spans


def _empty(text: str, span: tuple[int, int]) -> bool:
    return _EMPTY_CELL.fullmatch(text, span[0], span[1]) is not None


def _table(out: _Out, text: str, rows: list[tuple[int, int]]) -> None:
    """Rows of a table (the header first, then the separator, then data rows) as clauses."""
    header = _cells(text, *rows[0])
    for start, end in rows[2:]:
        cells = _cells(text, start, end)
        if not cells:
            continue
        label, rest = cells[0], cells[1:]
        labelled = not _empty(text, label)
        if labelled:
            out.copy(text, *label)
        wrote = False
        for n, cell in enumerate(rest, start=1):
            if _empty(text, cell):
                continue
            if wrote:
                out.add("，", cell[0])
            elif labelled:
                out.add("：", cell[0])
            head = header[n] if n < len(header) else None
            if head is not None and not _empty(text, head):
                out.copy(text, *head)
                out.add(" ", cell[0])
            out.copy(text, *cell)
            wrote = True
        if wrote or labelled:
            out.add("。", end)
        if end < len(text):
            out.add("\n", end)


def _lines(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in re.finditer(r"\n", text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return spans


def _is_row(text: str, span: tuple[int, int]) -> bool:
    return text.count("|", *span) >= 1


@functools.lru_cache(maxsize=2048)
def plain(text: str) -> Plain:
    """``text`` with its presentation stripped (see the module docstring)."""
    lines = _lines(text)
    if not _MARKUP.search(text) and not _EMOJI.search(text) and not any(
        _LINE_MARKERS.match(text, s, e).end() > s for s, e in lines  # type: ignore[union-attr]
    ):
        return Plain(text, tuple(range(len(text))), text)
    out = _Out()
    n = 0
    while n < len(lines):
        start, end = lines[n]
        if (
            n + 1 < len(lines)
            and _is_row(text, lines[n])
            and _TABLE_SEPARATOR.fullmatch(text, *lines[n + 1])
        ):
            rows = [lines[n], lines[n + 1]]
            n += 2
            while n < len(lines) and _is_row(text, lines[n]):
                rows.append(lines[n])
                n += 1
            _table(out, text, rows)
            continue
        if not _RULE.fullmatch(text, start, end):
            marker = _LINE_MARKERS.match(text, start, end)
            out.copy(text, marker.end() if marker else start, end)
        if end < len(text):
            out.copied.setdefault(end, len(out.chars))
            out.add("\n", end)
        n += 1
    return Plain(
        "".join(out.chars), tuple(out.origin), text, tuple(sorted(out.copied.items()))
    )


__all__ = ["Plain", "plain"]
