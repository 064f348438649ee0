"""Whether a reply answers at all, for a question that asks for no measured value (a test
suite's question with no measure declared, ``measure: any``): the sentences that say
something (:func:`says_something`), a promise the same reply goes on to keep
(:func:`find_unkept_promise`), and a reply that only declines (:func:`find_decline`: "I'm
sorry, but I don't have that information", 抱歉，我无法提供这些信息).

A sentence says something when it is no question, no offer conditional on the user, no
promise (:mod:`toolreplay.judging.intent`) and holds, in a clause that declines nothing, a
number or enough words to be an answer (:data:`SUBSTANTIAL_WORDS` Latin words, or
:data:`SUBSTANTIAL_CJK` Chinese characters): "2 + 2 = 4", "Here's one significant event
that occurred on September 17", but not "Sorry for the wait." or "I'm sorry"."""

from __future__ import annotations

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

_NOT = r"(?:do not|don[’']t|does not|doesn[’']t|cannot|can not|can[’']t|could not|couldn[’']t" \
    r"|did not|didn[’']t|won[’']t|will not|am not able to|[’']m not able to|am unable to" \
    r"|[’']m unable to|was unable to|wasn[’']t able to|are unable to|[’']re unable to" \
    r"|am not in a position to|[’']m not in a position to)"
_WHAT = r"(?:information|info|data|details|results?|records?|answers?|knowledge|idea|access)"

#: A clause saying the speaker has, knows or can give no answer, in English or Chinese.
_DECLINE = re.compile(
    r"(?<![A-Za-z])(?:i|we)\s+(?:really\s+|currently\s+|still\s+|just\s+|simply\s+)?" + _NOT
    + r"\s+(?:really\s+|currently\s+|actually\s+)?(?:have|know|find|access|provide|give"
    r"|answer|help|assist|retrieve|get|locate|see|tell|share|obtain|determine|say|offer"
    r"|confirm|comment|fulfil|fulfill|complete|do)(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:i|we)\s*(?:have|[’']ve|had)\s+(?:no|not got)\s+(?:\w+\s+)?" + _WHAT
    + r"(?![A-Za-z])"
    r"|(?<![A-Za-z])no\s+(?:\w+\s+)?" + _WHAT
    + r"\s+(?:is\s+|are\s+|was\s+|were\s+)?(?:available|found|provided)(?![A-Za-z])"
    r"|(?<![A-Za-z])there\s+(?:is|are|was|were)\s+no\s+(?:\w+\s+)?" + _WHAT + r"(?![A-Za-z])"
    r"|(?<![A-Za-z])(?:that|this|the|such)\s+(?:\w+\s+)?" + _WHAT
    + r"\s+(?:is|are)\s+(?:not available|unavailable)(?![A-Za-z])"
    r"|(?:我|我们|我們)?(?:目前|暂时|暫時|现在|現在|还|還)?"
    r"(?:没有|沒有|无法|無法|不能|不知道|不清楚|找不到|查不到|未能|没能|沒能|不了解|无从|無從)"
    r"(?:\S{0,12}?)(?:信息|資訊|资料|資料|数据|數據|答案|结果|結果|回答|提供|获取|獲取|得知|回答|帮助|幫助)"
    r"|暂无|暫無|爱莫能助|愛莫能助",
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


def says_something(text: str, start: int, end: int) -> bool:
    """Whether the sentence ``text[start:end]`` says something (module docstring)."""
    sentence = text[start:end]
    if sentence.rstrip().endswith(("?", "？")) or offers(sentence) or promised(text, start, end):
        return False
    return any(_substantial(c) and not _DECLINE.search(c) for c in _clauses(sentence))


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
    don't have that information", "I can't help with that", 抱歉，我无法提供相关信息), when no
    sentence of ``text`` says something and none promises a look-up; else None."""
    spans = sentences(text)
    found = None
    for start, end in spans:
        if says_something(text, start, end) or promised(text, start, end):
            return None
        if found is None and declines(text[start:end]):
            found = start, end
    return found


__all__ = ["declines", "find_decline", "find_unkept_promise", "says_something"]
