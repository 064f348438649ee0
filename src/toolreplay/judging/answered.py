"""Whether a reply answers at all, for a question that asks for no measured value (a test
suite's question with no measure declared, ``measure: any``): the sentences that say
something (:func:`says_something`), a promise the same reply goes on to keep
(:func:`find_unkept_promise`), and a reply that only declines (:func:`find_decline`: "I'm
sorry, but I don't have that information", 抱歉，我无法提供这些信息).

A sentence says something when it is no question, no offer conditional on the user, no
promise (:mod:`toolreplay.judging.intent`) and holds, in a clause that declines nothing, a
number or enough words to be an answer (:data:`SUBSTANTIAL_WORDS` Latin words, or
:data:`SUBSTANTIAL_CJK` Chinese characters): "2 + 2 = 4", "Here's one significant event
that occurred on September 17", but not "Sorry for the wait." or "I'm sorry". A decline
needs less to be undone: any clause that states something, however short ("but it's in
stock"), makes it a partial answer. Whether a tool's result holds anything to pass over:
:func:`holds_content`."""

from __future__ import annotations

import json
import re

from toolreplay.judging.intent import offers, promised, sentences

#: Latin words (runs of letters or digits) that make a clause an answer without a number.
SUBSTANTIAL_WORDS = 6

#: Chinese characters that make a clause an answer without a number.
SUBSTANTIAL_CJK = 8

_LATIN = re.compile(r"[A-Za-z0-9]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_DIGIT = re.compile(r"[0-9０-９]")

#: Where a sentence's clauses part: its punctuation, and the contrast after an apology ("I'm
#: sorry, but I don't have that", 抱歉，但是我无法…, "I don't know; however, …").
_CLAUSES = re.compile(
    r"[，,；;：:、]|(?<![A-Za-z])(?:but|however|though|although)(?![A-Za-z])|但是|但|不过|不過",
    re.IGNORECASE,
)

_AUX = r"(?:\s+|(?=[’']))"  # "I can't", "I'm unable", "we're not able"
_NOT = r"(?:do not|don[’']t|does not|doesn[’']t|cannot|can not|can[’']t|could not|couldn[’']t" \
    r"|did not|didn[’']t|won[’']t|will not|was unable to|wasn[’']t able to|were unable to" \
    r"|(?:[’']m|am|[’']re|are|was|were)\s+(?:not able to|unable to|not in a position to" \
    r"|not allowed to|not permitted to|not sure|not certain|unsure))"
_WHAT = r"(?:information|info|data|details|answers?|knowledge|idea|access|ability|capability" \
    r"|means|way|tools?)"

#: A clause saying the speaker lacks the ability, knowledge or access to answer, in English
#: or Chinese ("I don't have that information", "I'm unable to help", 我无法提供, 我不知道).
#: A negative finding is no decline: "I couldn't find any errors", "I don't see any
#: problems", "there are no records", "we don't have ABC-1 in stock", 没有找到结果 report
#: that what was looked for is not there, so "find", "see" and "have" decline only
#: information, access or an ability ("I couldn't find any information on that",
#: 我没有找到相关信息, "I don't have real-time data").
_DECLINE = re.compile(
    r"(?<![A-Za-z])(?:i|we)" + _AUX + r"(?:really\s+|currently\s+|still\s+|just\s+|simply\s+)?"
    + _NOT + r"(?:\s+(?:really\s+|currently\s+|actually\s+)?(?:know|access|provide|give"
    r"|answer|help|assist|retrieve|get|tell|share|obtain|determine|say|offer|check|look"
    r"|browse|search|fetch|verify|predict|guarantee|disclose|discuss|process|handle|support"
    r"|confirm|comment|fulfil|fulfill|complete|do)(?![A-Za-z])"
    r"|\s+(?:really\s+|currently\s+|actually\s+)?have\s+(?:[\w’'-]+\s+){0,3}?(?:" + _WHAT
    + r"|real-time|live|up-to-date)(?![A-Za-z])"
    r"|\s+(?:find|locate|see|get|retrieve)\s+(?:[\w’'-]+\s+){0,3}?" + _WHAT + r"(?![A-Za-z])"
    r"|(?<=sure)|(?<=certain)|(?<=unsure))"
    r"|(?<![A-Za-z])(?:i|we)\s*(?:have|[’']ve|had)\s+(?:no|not got)\s+(?:[\w-]+\s+)?" + _WHAT
    + r"(?![A-Za-z])"
    r"|^\W*(?:not\s+sure|no\s+idea|unsure)(?![A-Za-z])"
    r"|(?<![A-Za-z])no\s+(?:\w+\s+)?" + _WHAT
    + r"\s+(?:is\s+|are\s+|was\s+|were\s+)?(?:available|provided)(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:that|this|the|such)\s+(?:\w+\s+)?" + _WHAT
    + r"\s+(?:is|are)\s+(?:not available|unavailable)(?![A-Za-z])"
    r"|(?:我|我们|我們)?(?:目前|暂时|暫時|现在|現在|还|還)?"
    r"(?:(?:无法|無法|不能|未能|没能|沒能|无从|無從)\S{0,12}?"
    r"(?:提供|获取|獲取|得知|回答|帮助|幫助|确定|確定|确认|確認|访问|訪問|查询|查詢|告诉|告訴"
    r"|给出|給出|知道)"
    r"|(?:没有|沒有|找不到|查不到|未找到|未能找到)\S{0,12}?(?:信息|資訊|资料|資料|数据|數據|答案)"
    r"|不知道|不清楚|不确定|不確定|不了解)"
    r"|暂无(?:信息|数据|資訊|數據)|爱莫能助|愛莫能助",
    re.IGNORECASE,
)

#: A clause that neither answers nor declines: an apology, an interjection, thanks, a
#: pleasantry, "As an AI", "For the latest forecast" before a redirect.
_IDLE = re.compile(
    r"\W*(?:(?:i[’']m\s+|i\s+am\s+|we[’']re\s+|we\s+are\s+)?(?:so\s+|very\s+|really\s+|truly\s+)?"
    r"(?:sorry|apologi[sz]e|apologies)(?:\s+(?:for|about|if)\b.*)?"
    r"|(?:i|we)\s+apologi[sz]e(?:\s+(?:for|about|if)\b.*)?|my\s+apologies(?:\s+for\b.*)?"
    r"|unfortunately|regrettably|alas|sadly|hmm+|well|oh|ah|okay|ok|no|nope|nah"
    r"|as\s+an\s+ai(?:\s+[\w-]+){0,3}|thanks?(?:\s+you)?(?:\s+(?:for|so)\b.*)?"
    r"|(?:i\s+)?hope\s+(?:this|that)\s+helps.*|have\s+a\s+(?:\w+\s+)?(?:day|evening|one|time)"
    r"|for\s+(?:the\s+)?(?:most\s+)?(?:latest|recent|up-to-date|current|accurate|real-time|live"
    r"|more|further|reliable)\b.*"
    r"|抱歉|很抱歉|非常抱歉|对不起|對不起|不好意思|遗憾|遺憾|很遗憾|很遺憾|谢谢|謝謝)\W*",
    re.IGNORECASE,
)

#: A clause that sends the user elsewhere: an imperative or a suggestion to check, visit or
#: consult something ("Please check a weather website", "you can visit weather.com",
#: 请访问中国天气网查询, 建议您查看当地气象台).
_REDIRECT = re.compile(
    r"\W*(?:(?:please|kindly)\s+|(?:you|one)\s+(?:can|could|may|might|should)\s+(?:want\s+to\s+)?"
    r"|(?:i\s+)?(?:would\s+)?(?:recommend|suggest)(?:\s+(?:that\s+)?you)?\s+|try\s+to\s+|"
    r"consider\s+)(?:check|checking|visit|visiting|consult|consulting|refer|referring|look"
    r"|looking|use|using|contact|contacting|see|try|trying|go|going|search|searching|ask"
    r"|asking|call|calling|reach|head)\b"
    r"|\W*(?:请|請|建议您?|建議您?|您可以|你可以|可以)(?:您|你)?(?:访问|訪問|查询|查詢|查看|咨询|諮詢"
    r"|联系|聯繫|参考|參考|使用|前往|登录|登錄|关注|關注|拨打|撥打)",
    re.IGNORECASE,
)


def _substantial(clause: str) -> bool:
    """Whether ``clause`` is long enough to be an answer: a number, or enough words."""
    return bool(
        _DIGIT.search(clause)
        or len(_LATIN.findall(clause)) >= SUBSTANTIAL_WORDS
        or len(_CJK.findall(clause)) >= SUBSTANTIAL_CJK
    )


def _clauses(sentence: str) -> list[str]:
    return [c for c in _CLAUSES.split(sentence) if c.strip()]


def declines(sentence: str) -> bool:
    """Whether a clause of ``sentence`` says the speaker has, knows or can give no answer."""
    return any(_DECLINE.search(c) for c in _clauses(sentence))


def _redirects(clause: str) -> bool:
    """Whether ``clause`` sends the user elsewhere ("Please check weather.com")."""
    return bool(_REDIRECT.match(clause))


def says_something(text: str, start: int, end: int) -> bool:
    """Whether the sentence ``text[start:end]`` says something (module docstring)."""
    sentence = text[start:end]
    if sentence.rstrip().endswith(("?", "？")) or offers(sentence) or promised(text, start, end):
        return False
    return any(
        _substantial(c) and not _DECLINE.search(c) and not _redirects(c)
        for c in _clauses(sentence)
    )


def _informs(clause: str) -> bool:
    """Whether ``clause``, however short, states something: it holds a word and is no
    decline, apology, interjection, pleasantry or redirect ("The match was a draw", "but
    it's in stock", 但有库存)."""
    if not (_LATIN.search(clause) or _CJK.search(clause)):
        return False
    return not (_DECLINE.search(clause) or _IDLE.fullmatch(clause) or _redirects(clause))


def find_unkept_promise(text: str) -> tuple[int, int] | None:
    """The span of the first sentence of ``text`` that announces a look-up still to be taken
    and that no sentence after it keeps by saying something (:func:`says_something`): "Let me
    search for an event on September 17. Here's one: in 1939…" keeps its promise; "I'll look
    that up. Thanks for your patience." does not. None when every promise is kept."""
    spans = sentences(text)
    for n, (start, end) in enumerate(spans):
        if promised(text, start, end) and not any(
            says_something(text, a, b) for a, b in spans[n + 1 :]
        ):
            return start, end
    return None


def find_decline(text: str) -> tuple[int, int] | None:
    """The span of the first sentence of ``text`` that declines to answer ("I'm sorry, but I
    don't have that information", "I'm unable to help with that", 抱歉，我无法提供相关信息),
    when no clause of ``text`` states anything else and no sentence promises a look-up; else
    None. A clause beside an apology, a question, an offer or a redirect to somewhere else
    ("Please check a local weather service", 请访问中国天气网查询) states nothing; any other
    clause, however short, does ("I don't know the price, but it's in stock"): a partial
    answer is no decline, nor is a negative finding ("I couldn't find any errors")."""
    found = None
    for start, end in sentences(text):
        sentence = text[start:end]
        if promised(text, start, end):
            return None
        if sentence.rstrip().endswith(("?", "？")) or offers(sentence):
            continue
        for clause in _clauses(sentence):
            if _informs(clause):
                return None
            if found is None and _DECLINE.search(clause):
                found = start, end
    return found


#: A scalar of a tool result that holds no finding: a status word, a flag, nothing.
_STATUS = re.compile(
    r"\s*(?:ok|okay|success|succeeded|successful|done|complete|completed|empty|none|null|nil"
    r"|n/?a|unknown|missing|false|true|not[\s_-]?found|no[\s_-]?(?:results?|matches|data"
    r"|records?|rows?|hits)|zero_results|404)?\s*",
    re.IGNORECASE,
)

#: Keys whose value echoes the request or pages through results rather than answering.
_ECHO = re.compile(
    r"(?:query|q|search|search_?term|term|keywords?|input|filter|request|page|per_?page"
    r"|page_?size|limit|offset|start|cursor|next|took|took_?ms|elapsed(?:_?ms)?)",
    re.IGNORECASE,
)

#: Keys whose zero counts what was found: a zero under them finds nothing ("total": 0), a
#: zero elsewhere is a reading ("temperature": 0).
_COUNT = re.compile(r"(?:\w*_)?(?:count|total|n|num|size|length|hits|matches|results|found"
                    r"|total_?\w*|\w*_?count)", re.IGNORECASE)

_NOUN = r"(?:matches|results?|rows?|records?|documents?|docs|items?|entries|entry|hits|data" \
    r"|customers?|orders?|products?|users?|files?|pages?|articles?|messages?|events?)"

#: A tool text that reports finding nothing: "0 rows", "No matching documents.", "Customer
#: not found", "No results found for 'Jane Roe'".
_EMPTY_TEXT = re.compile(
    r"\W*(?:(?:0|zero|no)\s+(?:matching\s+|relevant\s+|such\s+)?(?:[\w-]+\s+)?" + _NOUN
    + r"(?:\s+(?:were\s+|was\s+)?(?:found|returned|matched|available))?(?:\s+(?:for|matching"
    r"|with)\b.*)?"
    r"|(?:[\w'\"-]+\s+){0,3}not\s+found(?:\s+for\b.*)?|nothing\s+(?:found|matched)"
    r"|(?:found|returned)\s+(?:0|no|zero)\s+" + _NOUN + r".*)\W*",
    re.IGNORECASE,
)


def _json_holds(value: object, key: str = "") -> bool:
    if isinstance(value, dict):
        return any(_json_holds(v, str(k)) for k, v in value.items())
    if isinstance(value, list):
        return any(_json_holds(v) for v in value)
    if isinstance(value, bool) or value is None or _ECHO.fullmatch(key):
        return False
    if isinstance(value, (int, float)):
        return value != 0 or not _COUNT.fullmatch(key)
    text = str(value)
    return not (_STATUS.fullmatch(text) or _EMPTY_TEXT.fullmatch(text))


def holds_content(result: str) -> bool:
    """Whether a tool's result holds something an answer could use: not JSON whose every
    collection is empty and whose scalars are only zero counts, flags, status words, null or
    an echo of the query (``{"results": []}``, ``{"customers": [], "total": 0}``,
    ``{"status": "not_found"}``), nor a text reporting that nothing was found ("0 rows", "No
    matching documents.", "not found")."""
    text = result.strip()
    if _STATUS.fullmatch(text) or text == '""':
        return False
    try:
        return _json_holds(json.loads(text))
    except ValueError:
        return not (len(text) <= 120 and _EMPTY_TEXT.fullmatch(text))


__all__ = [
    "declines", "find_decline", "find_unkept_promise", "holds_content", "says_something",
]
