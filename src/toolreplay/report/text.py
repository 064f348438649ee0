"""Text to HTML: invisible characters marked, mixed-script segments tagged with their language,
long values clipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of message text; ``mark`` names the failure mode it is evidence of, if any;
    ``invisible`` is True for one invisible character (shown with a visible marker)."""

    text: str
    mark: str | None = None
    invisible: bool = False


#: Characters that take no visible space (line/paragraph separators, zero-width and bidi
#: controls, BOM, NEL, soft hyphen): each is shown as a visible marker (``⟨U+2028 LS⟩``)
#: followed by the character itself, so copied text is unchanged (bidi controls excepted).
INVISIBLE = re.compile(
    "[\u0085\u00ad\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


INVISIBLE_NAMES = {
    "\u0085": "NEL",
    "\u00ad": "SHY",
    "\u200b": "ZWSP",
    "\u200c": "ZWNJ",
    "\u200d": "ZWJ",
    "\u2028": "LS",
    "\u2029": "PS",
    "\u2060": "WJ",
    "\ufeff": "BOM",
}


#: Text longer than this many characters is shortened to its first ``CLIP_HEAD`` characters
#: with a ``<details>`` that shows the rest; pretty-printed JSON (a forecast is ~2,000) gets
#: ``CLIP_JSON``.
#: Shown by their marker only: kept in the page they would reorder the text around them.
BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


CLIP_AT = 600


CLIP_HEAD = 400


CLIP_JSON = 900


CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


LATIN = re.compile(r"[A-Za-z]")


CJK_RUN = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]+")


def _invisible_label(ch: str) -> str:
    name = INVISIBLE_NAMES.get(ch)
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def _split_invisible(segments: Iterable[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for seg in segments:
        if not INVISIBLE.search(seg.text):
            out.append(seg)
            continue
        at = 0
        for m in INVISIBLE.finditer(seg.text):
            if m.start() > at:
                out.append(Segment(seg.text[at : m.start()], seg.mark))
            out.append(Segment(m.group(), seg.mark, invisible=True))
            at = m.end()
        if at < len(seg.text):
            out.append(Segment(seg.text[at:], seg.mark))
    return out


def _lang(text: str | None) -> str | None:
    """``zh-CN`` for Chinese prose (at least one CJK character for every two Latin letters),
    else None (the page's ``en``)."""
    if not text:
        return None
    cjk = len(CJK.findall(text))
    if not cjk:
        return None
    return "zh-CN" if cjk * 2 >= len(LATIN.findall(text)) else None


def text_view(
    value: str | Sequence[Segment], *, limit: int = CLIP_AT, lang: bool = True
) -> dict[str, Any]:
    """Untrusted text for display: ``{"head": [Segment], "rest": [Segment] (empty unless the
    text is longer than ``limit``), "length", "lang"}``. Invisible separators become their own
    segments; long text is cut at ``CLIP_HEAD`` characters (or ``limit * 2 / 3`` when larger),
    at a line end near there when there is one."""
    if isinstance(value, str) and len(value) <= limit and not INVISIBLE.search(value):
        return {  # the common case: short, plain text
            "head": [Segment(value)],
            "rest": [],
            "length": len(value),
            "lang": _lang(value) if lang else None,
        }
    segments = [Segment(value)] if isinstance(value, str) else list(value)
    full = "".join(s.text for s in segments)
    out: dict[str, Any] = {
        "head": segments,
        "rest": [],
        "length": len(full),
        "lang": _lang(full) if lang else None,
    }
    if len(full) > limit:
        cut = max(CLIP_HEAD, limit * 2 // 3)
        newline = full.rfind("\n", cut // 2, cut)
        if newline > 0:
            cut = newline + 1
        head: list[Segment] = []
        rest: list[Segment] = []
        pos = 0
        for seg in segments:
            end = pos + len(seg.text)
            if end <= cut:
                head.append(seg)
            elif pos >= cut:
                rest.append(seg)
            else:
                head.append(Segment(seg.text[: cut - pos], seg.mark))
                rest.append(Segment(seg.text[cut - pos :], seg.mark))
            pos = end
        out["head"], out["rest"] = head, rest
    if any(INVISIBLE.search(s.text) for s in segments):
        out["head"] = _split_invisible(out["head"])
        out["rest"] = _split_invisible(out["rest"])
    return out


def mixed_script_html(text: str) -> Markup:
    """Mostly-English text with Chinese names in it: escaped, each run of Chinese wrapped in
    ``<span lang="zh-CN">`` so it is read and rendered as Chinese."""
    out = []
    at = 0
    for m in CJK_RUN.finditer(text):
        out.append(str(escape(text[at : m.start()])))
        out.append(f'<span lang="zh-CN">{escape(m.group())}</span>')
        at = m.end()
    out.append(str(escape(text[at:])))
    return Markup("".join(out))


def _escape_text(text: str) -> str:
    """Text for an element's content: ``&``, ``<`` and ``>`` escaped (quotes need no escaping
    outside attributes, and a tool result's JSON is full of them)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _segments_html(parts: Iterable[Segment]) -> str:
    """Segments as escaped HTML: evidence in ``<mark class="mode-…">``, each invisible
    character as a visible ``<span class="invis">⟨U+2028 LS⟩</span>`` followed by itself
    (bidi controls by their marker only)."""
    out = []
    for seg in parts:
        if seg.invisible:
            label = _invisible_label(seg.text)
            keep = "" if seg.text in BIDI_CONTROLS else seg.text
            inner = (
                f'<span class="invis" title="invisible character {label}">⟨{label}⟩</span>{keep}'
            )
        else:
            inner = _escape_text(seg.text)
        if seg.mark:
            inner = f'<mark class="mode-{escape(seg.mark)}">{inner}</mark>'
        out.append(inner)
    return "".join(out)


def block_html(
    t: Mapping[str, Any], tag: str = "div", cls: str = "", focusable: bool = False
) -> Markup:
    """A text block (from :func:`text_view`) as ``<tag class=cls>``; past ``CLIP_AT`` characters the
    rest sits in a ``<details class="more">`` ("show all N characters"). ``focusable`` adds
    ``tabindex="0"`` (for blocks that scroll sideways). A template filter: ``{{ t | block }}``."""
    lang = f' lang="{t["lang"]}"' if t["lang"] else ""
    tab = ' tabindex="0"' if focusable else ""
    if not t["rest"]:
        klass = f' class="{escape(cls)}"' if cls else ""
        return Markup(f"<{tag}{klass}{lang}{tab}>{_segments_html(t['head'])}</{tag}>")
    outer = f"long {escape(cls)}" if cls else "long"
    return Markup(
        f'<div class="{outer}"><{tag} class="head"{lang}{tab}>{_segments_html(t["head"])}'
        f'<span class="clip-mark">…</span></{tag}><details class="more"><summary>show all '
        f'{t["length"]:,} characters</summary><{tag} class="rest"{lang}{tab}>'
        f"{_segments_html(t['rest'])}</{tag}></details></div>"
    )


def inline_html(t: Mapping[str, Any]) -> Markup:
    """Text inside a line (from :func:`text_view`): a ``<span>``; a long one is cut, with a note
    that the whole text is in the transcript. A template filter: ``{{ t | inline }}``."""
    lang = f' lang="{t["lang"]}"' if t["lang"] else ""
    html = f"<span{lang}>{_segments_html(t['head'])}</span>"
    if t["rest"]:
        html += (
            f'<span class="clip-note">… ({t["length"]:,} characters; all in the transcript)</span>'
        )
    return Markup(html)


def plural_of(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def format_number(value: float, fmt: str) -> str:
    """``fmt``-formatted, except that a token count drops a trailing ``.0`` (1891, 4117.2)."""
    text = fmt.format(value)
    if fmt == "{:.1f}" and text.endswith(".0"):
        text = text[:-2]
    return text
