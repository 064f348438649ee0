"""Griffe extension for the API reference: the package's reST-flavoured docstrings as Markdown.

mkdocstrings renders docstring text as Markdown. Three reST habits of the package's docstrings
would render badly or break the ``--strict`` build, so each docstring is rewritten as it is
loaded (the source is not touched):

- cross-reference roles (``:class:`~toolreplay.wire.episode.Episode```) become inline code,
  ``~`` shortening the name to its last part as Sphinx does;
- doctest examples (lines from ``>>>`` to a blank line) are fenced as Python console blocks
  (bare, ``schemas[0]["function"]`` would read as a Markdown reference link);
- simple tables (``=====  =====`` borders) are kept verbatim as preformatted text;
- a paragraph ending in ``::`` ends in ``:`` (the indented literal block after it is a
  Markdown code block already).

Loaded by mkdocstrings (see ``mkdocs.yml``); not part of the package.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?[a-z]+:`(~?)([^`]+)`")
_TABLE_BORDER = re.compile(r"^ *=+( +=+)+ *$")


def _code(match: re.Match[str]) -> str:
    """A role as inline code; ``~`` keeps the last part of the name."""
    name = match.group(2)
    if match.group(1):
        name = name.rsplit(".", 1)[-1]
    return f"`{name}`"


def _fence(lines: list[str], start: int, end: int, language: str) -> list[str]:
    """``lines[start:end]`` fenced, with a blank line before the fence."""
    before = [""] if start and lines[start - 1].strip() else []
    return [*before, f"```{language}", *lines[start:end], "```"]


def docstring_markdown(text: str) -> str:
    """``text`` (a docstring) with its reST habits made Markdown."""
    lines = text.split("\n")
    out: list[str] = []
    literal = False  # inside an indented literal block: kept as it is
    i = 0
    while i < len(lines):
        line = lines[i]
        if literal and (not line.strip() or line.startswith("    ")):
            out.append(line)
            i += 1
            continue
        literal = False
        if line.startswith(">>>"):
            end = i
            while end < len(lines) and lines[end].strip():
                end += 1
            out += _fence(lines, i, end, "pycon")
            i = end
        elif _TABLE_BORDER.match(line):
            # a simple table has three borders: top, under the header, bottom
            end, borders = i, 0
            while end < len(lines) and borders < 3:
                borders += bool(_TABLE_BORDER.match(lines[end]))
                end += 1
            out += _fence(lines, i, end, "text")  # verbatim: the columns stay aligned
            i = end
        elif line.endswith("::") and (i + 1 == len(lines) or not lines[i + 1].strip()):
            # a literal block follows; indented, it is already a Markdown code block
            text = line[:-2].rstrip()
            out.append(_ROLE.sub(_code, text + ":") if text else "")
            literal = True
            i += 1
        else:
            out.append(_ROLE.sub(_code, line))
            i += 1
    return "\n".join(out)


class ReSTDocstrings(griffe.Extension):
    """Rewrite every docstring as it is loaded (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = docstring_markdown(obj.docstring.value)
