"""Numbers written in words, read like digits: Chinese numerals (``二十一``, ``三十点九``,
``一万二千``) by `cn2an <https://pypi.org/project/cn2an/>`_, English number words
(``seven``, ``twenty-one``, ``one hundred and five``, ``thirty point nine``) by `text2num
<https://pypi.org/project/text2num/>`_.

The lexer (:mod:`toolreplay.judging.values`) finds where a number in words is written with
:data:`CHINESE` and :data:`ENGLISH` (regexes of the closed word lists); the libraries give its
value. :func:`word_number` returns ``(value, decimals written)`` or None for text that is not
one number:

- a Chinese numeral its library rejects (``十一二``), or a run of bare digits with no 十/百/千/万
  (``三四度`` is "three or four degrees", an approximation, not 34);
- English words that are several numbers (``one two``) or none.

A number in words is then read exactly like one in digits: with the unit after it, as a
value, a bound or a range end (``seven units on hand``, ``二十一度``).
"""

from __future__ import annotations

import functools
import re

import cn2an
from text_to_num import alpha2digit

#: A Chinese numeral: digits and 十/百/千/万, with a decimal part after 点/點.
CHINESE = r"[零〇一二两兩三四五六七八九十百千万萬]+(?:[点點][零〇一二三四五六七八九]+)?"

_ONES = r"zero|one|two|three|four|five|six|seven|eight|nine"
_TEENS = r"ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
_TENS = r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_WORD = rf"(?:{_TENS}|{_TEENS}|{_ONES}|hundred|thousand|million)"
#: English number words: ``twenty-one``, ``one hundred and five``, ``thirty point nine``
#: (``and`` only after hundred, thousand or million), whole words only.
ENGLISH = (
    rf"(?<![a-z\-]){_WORD}"
    rf"(?:(?:[ \t]*-[ \t]*|[ \t]+|(?:(?<=hundred)|(?<=thousand)|(?<=million))[ \t]+and[ \t]+)"
    rf"{_WORD})*"
    rf"(?:[ \t]+point(?:[ \t]+(?:{_ONES}))+)?(?![a-z\-])"
)

_ENGLISH = re.compile(ENGLISH, re.IGNORECASE)
_BARE_DIGITS = re.compile(r"[零〇一二两兩三四五六七八九]{2,}")


def chinese_number(text: str) -> tuple[float, int] | None:
    """``"二十一"`` → (21, 0), ``"三十点九"`` → (30.9, 1), ``"一万二千"`` → (12000, 0);
    None for a run of bare digits (``三四``: three or four) or what cn2an cannot read."""
    whole, _, frac = text.replace("點", "点").partition("点")
    if _BARE_DIGITS.fullmatch(whole):
        return None
    try:
        value = cn2an.cn2an(text.replace("點", "点").replace("萬", "万"), "normal")
    except (ValueError, KeyError, IndexError):
        return None
    return float(value), len(frac)


def english_number(text: str) -> tuple[float, int] | None:
    """``"twenty-one"`` → (21, 0), ``"thirty point nine"`` → (30.9, 1); None when ``text`` is
    not one number in words."""
    if _ENGLISH.fullmatch(text) is None:
        return None
    spaced = re.sub(r"\s*-\s*", " ", text.lower())
    digits = alpha2digit(spaced, "en", threshold=0).strip()
    if not re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", digits):
        return None
    return float(digits), len(digits.partition(".")[2])


@functools.lru_cache(maxsize=1024)
def word_number(text: str) -> tuple[float, int] | None:
    """The value and decimals written of a number in Chinese or English words; None when
    ``text`` is not one (see the module docstring)."""
    if re.match(r"[a-z]", text, re.IGNORECASE):
        return english_number(text)
    return chinese_number(text)


__all__ = ["CHINESE", "ENGLISH", "chinese_number", "english_number", "word_number"]
