"""Place names in any script: the Latin names of a Chinese place name (pinyin, with and without
tones, with and without its administrative suffix, and a few exonyms), matching a Latin name
in text whatever its diacritics and syllable breaks, and finding the Chinese characters a
Latin (pinyin) name stands for.

Shapes::

    romanisations("杭州市") -> ("Hang'zhou", "Háng'zhōu", "Hang'zhou City", "Hang'zhou Shi", ...)
    latin_pattern("Hang'zhou") -> compiled regex, matched against :func:`shadow` of a text
    shadow("Hángzhōu") -> "Hangzhou"                         # one character for one character
    key("Xi’an") == key("Xian") == "xian"                  # for comparing names
    chinese_names("Hong Kong") -> ("香港",)                  # the exonym table read backwards
    sounded(text, "Guangzhou") -> [(start, end), ...]      # CJK runs read as guang + zhou
    syllables("Suzhou") -> ("su", "zhou"); syllables("Tokyo") -> None

Pinyin comes from pypinyin (its phrase dictionary reads 重庆 chong-qing, 厦门 xia-men, 长沙
chang-sha). Syllable breaks are written with an apostrophe (``Hang'zhou``): a pattern lets a
text write each break as nothing, an apostrophe, a hyphen or a space (Hangzhou, Hang Zhou,
Xi'an, Xi’an, Xian). Letters match with any diacritics (``Hángzhōu``, ``Hangzhou``; ü as u),
and ``v`` stands for ü as pypinyin writes it (Lvliang, Lüliang, Luliang).

Suffixes: 特别行政区, 自治区/州/县 (with the ethnic designation before them: 新疆维吾尔自治区 is
Xinjiang, 广西壮族自治区 Guangxi), 地区, 省, 市, 县, 区; stripped when two characters or more
remain (朝阳区 → Chaoyang, Chaoyang District; 沙市 stays Shashi). The English word or the
suffix's pinyin may follow (Hangzhou City, Hangzhou Shi, Guangdong Province).

:data:`EXONYMS` is the table of Latin names pinyin does not give: each is a name in common
English use today (or a postal name still used for the place), not a historical spelling that
names other things more often (Peking: Peking duck, Peking University; Nanking).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

#: Chinese name (without suffix) → the Latin names pinyin does not give. 陕西's pinyin
#: (Shanxi) is 山西's: its name is Shaanxi, and it has no toneless pinyin (:data:`TAKEN`).
EXONYMS: dict[str, tuple[str, ...]] = {
    "广州": ("Canton",),
    "厦门": ("Amoy",),
    "天津": ("Tientsin",),
    "香港": ("Hong Kong",),
    "九龙": ("Kowloon",),
    "澳门": ("Macau", "Macao"),
    "台北": ("Taipei",),
    "高雄": ("Kaohsiung",),
    "台中": ("Taichung",),
    "新竹": ("Hsinchu",),
    "基隆": ("Keelung",),
    "西藏": ("Tibet",),
    "内蒙古": ("Inner Mongolia", "Nei Mongol"),
    "陕西": ("Shaanxi",),
    "哈尔滨": ("Harbin",),
    "乌鲁木齐": ("Urumqi",),
    "呼和浩特": ("Hohhot",),
    "拉萨": ("Lhasa",),
    "喀什": ("Kashgar",),
    "中国": ("China",),
}

#: Toneless pinyin a name does not have because another place of that spelling has it.
TAKEN: dict[str, frozenset[str]] = {"陕西": frozenset({"shanxi"})}

#: Administrative suffixes: (Chinese, English word), longest first.
SUFFIXES: tuple[tuple[str, str], ...] = (
    ("特别行政区", "SAR"),
    ("自治区", "Autonomous Region"),
    ("自治州", "Autonomous Prefecture"),
    ("自治县", "Autonomous County"),
    ("地区", "Prefecture"),
    ("省", "Province"),
    ("市", "City"),
    ("县", "County"),
    ("区", "District"),
)

#: Ethnic designations written before 自治区/州/县 (广西壮族自治区, 延边朝鲜族自治州).
_ETHNIC = re.compile(
    r"(?:维吾尔|壮族|回族|藏族|蒙古族|朝鲜族|土家族|苗族|彝族|哈萨克|柯尔克孜|傣族|白族|哈尼族"
    r"|景颇族|傈僳族|布依族|侗族|羌族|黎族)+$"
)

#: English words for the suffixes, as a text may write them after a Latin name.
SUFFIX_WORDS = re.compile(
    r"\s+(?:City|Province|County|District|Prefecture|SAR|Autonomous (?:Region|Prefecture|County)"
    r"|Shi|Sheng|Xian|Qu)$",
    re.IGNORECASE,
)


def is_cjk(ch: str) -> bool:
    """Whether ``ch`` is a CJK ideograph (the unified block and extension A)."""
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"


_CJK = re.compile("[\u4e00-\u9fff\u3400-\u4dbf]")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK ideograph (:func:`is_cjk`)."""
    return _CJK.search(text) is not None


def strip_suffix(name: str) -> tuple[str, str]:
    """``(bare name, English suffix word)``: 杭州市 → ("杭州", "City"); 广西壮族自治区 →
    ("广西", "Autonomous Region"); a name without one (or with one char left) → (name, "")."""
    for zh, en in SUFFIXES:
        if name.endswith(zh):
            bare = name[: -len(zh)]
            if zh.startswith("自治"):
                bare = _ETHNIC.sub("", bare)
            if len(bare) >= 2:
                return bare, en
    return name, ""


def _base(ch: str) -> str:
    """One character for one: a Latin letter without its diacritics, a typographic apostrophe
    as ``'``; anything else as it is."""
    if ch in "’‘`ʼ":
        return "'"
    if ch.isascii() or is_cjk(ch):
        return ch
    d = unicodedata.normalize("NFD", ch)
    return d[0] if len(d) > 1 and d[0].isascii() and d[0].isalpha() else ch


def shadow(text: str) -> str:
    """``text`` with each Latin letter's diacritics dropped, character for character (the
    offsets of the result are the offsets of ``text``; combining marks stay)."""
    return "".join(_base(c) for c in text)


@functools.lru_cache(maxsize=65536)
def key(name: str) -> str:
    """A Latin name's comparison key: letters and digits only, no diacritics, case-folded
    (``Xi’an``, ``Xian`` and ``XĪ'ĀN`` → ``xian``). A CJK name's key is the name itself."""
    if has_cjk(name):
        return name
    d = unicodedata.normalize("NFD", name)
    return "".join(c for c in d if c.isalnum() and not unicodedata.combining(c)).casefold()


_MARKS = "[\u0300-\u036f]*"
_BREAK = r"[\s'\-‐]?"


@functools.lru_cache(maxsize=4096)
def latin_pattern(name: str) -> re.Pattern[str]:
    """A regex for ``name`` (a Latin name) in :func:`shadow` of a text: its letters with any
    diacritics (combining marks after them too), case-insensitive, each break between its
    parts (apostrophe, hyphen, space) written as one of those or nothing; ``v`` also as ``u``
    (pypinyin's ü)."""
    parts = [p for p in re.split(r"[\s'’\-‐]+", shadow(name)) if p]
    out = []
    for part in parts:
        letters = []
        for c in part:
            letters.append(("[vuü]" if c in "vV" else re.escape(c)) + _MARKS)
        out.append("".join(letters))
    return re.compile(_BREAK.join(out), re.IGNORECASE)


#: What :func:`latin_pattern` matches besides a name's letters: a break, a combining mark.
_SKIPPED = re.compile(r"[\s'\-‐\u0300-\u036f]")
#: Letters case-insensitive matching takes for an ASCII letter (İ ı ſ K: every one there is,
#: tested), and what ``v`` matches (u, ü), all as one letter.
_FOLDED = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k",
                         "v": "u", "V": "u", "ü": "u", "Ü": "u"})  # fmt: skip


def latin_key(text: str) -> str:
    """``text`` without breaks and combining marks, its letters folded as
    :func:`latin_pattern` compares them: ``latin_pattern(name)`` finds nothing in
    ``shadow(t)`` unless ``latin_key(name)`` is in ``latin_key(shadow(t))``, so a name whose
    key is absent need not be searched for."""
    return _SKIPPED.sub("", text).translate(_FOLDED).lower()


def _join(syllables: list[str]) -> str:
    """Syllables joined by apostrophes, the first capitalised: ``Xi'an``, ``Hang'zhou``."""
    word = "'".join(syllables)
    return word[:1].upper() + word[1:]


@functools.lru_cache(maxsize=1024)
def romanisations(name: str) -> tuple[str, ...]:
    """The Latin names of the Chinese name ``name`` (empty when it holds a character that is not
    CJK): toneless pinyin, pinyin with tone marks, each with the suffix's English word and
    pinyin after it when ``name`` has a suffix, with ``v`` for ü; then :data:`EXONYMS`.
    Syllable breaks are apostrophes (see the module docstring)."""
    if not name or not all(is_cjk(c) for c in name):
        return ()
    from pypinyin import Style, lazy_pinyin

    bare, word = strip_suffix(name)
    suffix = name[len(bare) :] if word else ""
    plain = lazy_pinyin(bare, v_to_u=True)
    toned = lazy_pinyin(bare, style=Style.TONE)
    forms: list[str] = []
    taken = TAKEN.get(bare, frozenset())
    if "".join(plain) not in taken:
        forms.append(_join(plain))
        if any("ü" in s for s in plain):
            forms.append(_join([s.replace("ü", "v") for s in plain]))
    forms.append(_join(toned))
    forms += EXONYMS.get(bare, ())
    if not word:
        return tuple(dict.fromkeys(forms))
    said = [_join(lazy_pinyin(suffix))] if len(suffix) == 1 else []  # Hangzhou Shi
    out = list(forms)
    for f in forms:
        out += [f"{f} {w}" for w in (word, *said)]
    return tuple(dict.fromkeys(out))


#: Chinese place names an answer may name without a suffix, known without a tool result naming
#: them: China's provincial-level divisions, their capitals, and a few large cities. A name
#: outside the tool results and the question is an unknown place (its values are not the
#: asked place's); with a suffix (苏州市, 昆山县) any name is.
GAZETTEER: tuple[str, ...] = (
    "北京", "天津", "上海", "重庆", "河北", "山西", "辽宁", "吉林", "黑龙江", "江苏", "浙江",
    "安徽", "福建", "江西", "山东", "河南", "湖北", "湖南", "广东", "海南", "四川", "贵州",
    "云南", "陕西", "甘肃", "青海", "台湾", "内蒙古", "广西", "西藏", "宁夏", "新疆", "香港",
    "澳门", "石家庄", "太原", "沈阳", "长春", "哈尔滨", "南京", "杭州", "合肥", "福州", "南昌",
    "济南", "郑州", "武汉", "长沙", "广州", "海口", "成都", "贵阳", "昆明", "西安", "兰州",
    "西宁", "台北", "呼和浩特", "南宁", "拉萨", "银川", "乌鲁木齐", "深圳", "大连", "青岛",
    "宁波", "厦门", "苏州", "无锡", "佛山", "东莞", "珠海", "温州", "三亚", "桂林", "丽江",
    "洛阳", "高雄", "台中",
)  # fmt: skip


#: Spellings a pinyin syllable has and English words rarely do (zh, x, q, a final ng, ao, ou,
#: ui, iu, ie, uo, ia, ua, ei): ``Suzhou`` and ``Kunming`` are pinyin-shaped; ``China``,
#: ``Change`` and ``Open`` (chi-na, chan-ge, o-pen) are not.
_PINYIN_MARK = re.compile(r"zh|^x|^q|ng$|ao|ou|ui|iu|ie|uo|ia|ua|ei")


def pinyin_shaped(word: str) -> bool:
    """Whether the Latin ``word`` reads as a Chinese place name in pinyin: two syllables or
    more as pinyin spells them (:func:`syllables`, ``strict``), one of them spelt as English
    words rarely are (:data:`_PINYIN_MARK`)."""
    found = syllables(word, strict=True)
    return found is not None and len(found) >= 2 and any(_PINYIN_MARK.search(s) for s in found)


#: Words before 市/县/省 that make no place (城市 a city, 超市 a supermarket, 全省 the whole
#: province, 节省 to save).
_NOT_PLACE = re.compile(
    r"(?:城|都|超|上|股|夜|全|本|该|各|门|集|菜|闹|黑|开|街|早|午|罢|此|外|节|反|这|那|哪|每|大"
    r"|小|新|老|省)[市县省]$"
)


#: Characters no two-character place name before 市/县/省 is read with: function words, time
#: words (明天市区 is tomorrow downtown), measure words.
_NOT_IN_NAME = frozenset("的了在是和与及或到从对给把被往向于我你他她它这那个座天日年月时分点度")

#: Characters after 市/县/省 that make it part of a word (市区, 市民, 市场, 省份, 县城).
_WORD_GOES_ON = frozenset("区民场内外中里面政值长委级郊容貌况份城")


def suffixed_names(text: str) -> list[tuple[int, int]]:
    """Where ``text`` writes two Chinese characters and 市, 县 or 省 that are a place name by
    their suffix (昆山市, 萧山县), not a common word (城市, 超市, 全省, 明天市区);
    ``(start, end)``."""
    out = []
    for m in re.finditer(r"[\u4e00-\u9fff]{2}[市县省]", text):
        after = text[m.end() : m.end() + 1]
        if (
            not _NOT_PLACE.search(m.group())
            and not _NOT_IN_NAME.intersection(m.group()[:2])
            and after not in _WORD_GOES_ON
        ):
            out.append(m.span())
    return out


def chinese_names(latin: str) -> tuple[str, ...]:
    """The Chinese names :data:`EXONYMS` gives the Latin name ``latin`` (any case, diacritics,
    breaks; a suffix word after it ignored): ``Hong Kong`` → 香港, ``Canton`` → 广州."""
    return _exonym_index().get(key(SUFFIX_WORDS.sub("", latin)), ())


@functools.lru_cache(maxsize=1)
def _exonym_index() -> dict[str, tuple[str, ...]]:
    """:data:`EXONYMS` by the key of each Latin name: its Chinese names, in the table's order
    (built once; the judge asks for every name it grounds)."""
    index: dict[str, list[str]] = {}
    for zh, names in EXONYMS.items():
        for n in names:
            found = index.setdefault(key(n), [])
            if zh not in found:
                found.append(zh)
    return {k: tuple(v) for k, v in index.items()}


@functools.lru_cache(maxsize=1)
def _syllable_set() -> frozenset[str]:
    from pypinyin.constants import PINYIN_DICT

    readings = {r for joined in set(PINYIN_DICT.values()) for r in joined.split(",")}
    out = {key(r) for r in readings}
    return frozenset(
        s for s in out if s.isascii() and s.isalpha() and any(v in s for v in "aeiouv")
    )


@functools.lru_cache(maxsize=4096)
def syllables(word: str, strict: bool = False) -> tuple[str, ...] | None:
    """``word`` (Latin) split into Mandarin syllables, fewest syllables first (``Suzhou`` →
    su, zhou; ``Xi'an`` → xi, an at its apostrophe); None when it is not pinyin (``Tokyo``).
    ``strict``: as pinyin spells a word, a syllable beginning with a, o or e only at the start
    of a part (pinyin writes ``Xi'an``, ``Tai'an``): ``Meaning`` (me-a-ning) and ``Mango``
    (mang-o) are no pinyin."""
    parts = [key(p) for p in re.split(r"[\s'’\-‐]+", word) if p]
    if not parts or not all(p.isascii() and p.isalpha() for p in parts):
        return None
    known = _syllable_set()
    out: list[str] = []
    for part in parts:
        best: list[list[str] | None] = [None] * (len(part) + 1)
        best[0] = []
        for i in range(len(part)):
            prefix = best[i]
            if prefix is None:
                continue
            if strict and i > 0 and part[i] in "aoe":
                continue
            for j in range(i + 1, min(len(part), i + 6) + 1):
                if part[i:j] in known:
                    cand = [*prefix, part[i:j]]
                    if best[j] is None or len(cand) < len(best[j] or ()):
                        best[j] = cand
        found = best[len(part)]
        if found is None:
            return None
        out += found
    return tuple(out)


@functools.lru_cache(maxsize=8192)
def _readings(ch: str) -> frozenset[str]:
    from pypinyin import Style, pinyin

    return frozenset(key(r) for r in pinyin(ch, style=Style.NORMAL, heteronym=True)[0])


def sounded(text: str, latin: str) -> list[tuple[int, int]]:
    """Where ``text`` writes in Chinese characters the Latin (pinyin) name ``latin``: two
    characters or more whose readings (any of each character's) spell its letters exactly
    (``Guangzhou`` → 广州; a suffix word after it ignored), each followed by an administrative
    suffix character when there is one (广州市). A name that is not pinyin sounds nowhere.
    Homophones are read too (背景 sounds like Beijing): callers use it only for names of the
    tool results."""
    bare = SUFFIX_WORDS.sub("", latin)
    target = key(bare)
    if syllables(bare) is None or len(target) < 4:
        return []
    out: list[tuple[int, int]] = []
    for run in re.finditer(r"[\u4e00-\u9fff\u3400-\u4dbf]{2,}", text):
        s, e = run.span()
        i = s
        while i < e - 1:
            end = _spell(text, i, e, target)
            if end is not None:
                if end < e and text[end] in "市省县区":
                    end += 1
                out.append((i, end))
                i = end
            else:
                i += 1
    return out


def _spell(text: str, start: int, stop: int, target: str) -> int | None:
    """The end of the shortest run of characters from ``start`` (two at least) whose readings
    spell ``target``; None when none does."""
    states = {0}
    for i in range(start, stop):
        nxt = set()
        for pos in states:
            for r in _readings(text[i]):
                if r and target.startswith(r, pos):
                    nxt.add(pos + len(r))
        if not nxt:
            return None
        if len(target) in nxt and i > start:
            return i + 1
        states = {p for p in nxt if p < len(target)}
        if not states:
            return None
    return None


@functools.lru_cache(maxsize=65536)
def same_place_name(a: str, b: str) -> bool:
    """Whether the names ``a`` and ``b`` can name one place across scripts: two Chinese names
    when one is the other with a suffix (杭州, 杭州市), never by their sound (苏州 and 宿州 are
    both Suzhou, and two places); two Latin names when their keys are equal (``Xi'an``,
    ``Xian``; a suffix word aside); a Chinese and a Latin name when the Latin one is among the
    Chinese one's romanisations and exonyms (杭州, ``Hángzhōu``)."""
    if not a or not b:
        return False
    ca, cb = has_cjk(a), has_cjk(b)
    if ca and cb:
        sa, sb = strip_suffix(a)[0], strip_suffix(b)[0]
        return sa == sb or a.startswith(b) or b.startswith(a)
    if not ca and not cb:
        return key(SUFFIX_WORDS.sub("", a)) == key(SUFFIX_WORDS.sub("", b))
    zh, latin = (a, b) if ca else (b, a)
    return key(SUFFIX_WORDS.sub("", latin)) in names_key_set([zh]) or zh in chinese_names(latin)


def names_key_set(names: Iterable[str]) -> frozenset[str]:
    """The comparison keys (:func:`key`) of ``names`` and of the romanisations of those in
    Chinese characters (a suffix stripped first)."""
    out: set[str] = set()
    for n in names:
        if not n:
            continue
        out.add(key(n))
        if has_cjk(n):
            bare = strip_suffix(n)[0]
            out.add(bare)
            taken = TAKEN.get(bare, frozenset())
            out.update(k for k in map(key, romanisations(n)) if k not in taken)
        else:
            out.add(key(SUFFIX_WORDS.sub("", n)))
            out.update(chinese_names(n))
    return frozenset(out)


__all__ = [
    "EXONYMS", "GAZETTEER", "SUFFIXES", "SUFFIX_WORDS", "TAKEN", "chinese_names", "has_cjk",
    "is_cjk", "key", "latin_pattern", "names_key_set", "pinyin_shaped", "romanisations",
    "same_place_name", "shadow", "sounded", "strip_suffix", "suffixed_names", "syllables",
]  # fmt: skip
