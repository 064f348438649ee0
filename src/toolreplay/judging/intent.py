"""Reading intent: the one grammar that tells a promise (the model says it will look something
up, wait, or come back with the result) from an offer conditional on the user, a question or
a statement; :func:`find_promise` gives the promise sentence of a reply and its span."""

from __future__ import annotations

import re

_B = r"(?<![A-Za-z])"  # an English word starts here


_E = r"(?![A-Za-z])"  # and ends here


def _en(*words: str) -> str:
    """English words or phrases as one alternative, each a whole word."""
    return _B + "(?:" + "|".join(words) + ")" + _E


# The parts of the intent grammar, one named group each. At any position the first group that
# matches wins, so the order matters: a waiting form before the address it contains (请稍等), a
# condition on the user before the "let me" it may start with (let me know...), a report-back
# form before the "for you"/"you" it ends with (给您结果, get back to you), a complementizer
# before the negation it contains (有没有).
_PARTS: tuple[tuple[str, str], ...] = (
    # Waiting forms: the speaker asks for time to act ("one moment while I look that up").
    (
        "wait",
        r"请?稍等|請?稍等|请?稍候|請?稍候|稍待|等我一下|等我片刻|"
        + _en(
            r"(?:just|give me|wait|one)\s+(?:a\s+|one\s+)?(?:moment|second|sec|minute)",
            r"hold on", r"hang on", r"hang tight", r"bear with me", r"please (?:wait|hold)",
            r"stand by",
        ),
    ),
    # A condition on the user: a conditional conjunction, a time clause whose subject is the
    # user, a deferral to a later time (到时, next time), or a request the user must act on
    # first, opening the clause ("Tell me which city and I'll check", 告诉我城市名...).
    (
        "cond",
        r"如果|假如|若是|要是|如需|如有需要|需要的话|需要的話|倘若|只要|只需|一旦"
        r"|(?:等到?|待|当|當)(?=[您你妳])|到时候?|到時候?|届时|屆時|下次|下回"
        r"|^\s*(?:(?:请|請|您|你)(?:可以|能|也可以)?|只要|只需)?(?:告诉我|告訴我|提供|说明|說明|告知|发给我|發給我|说一声|說一聲)"
        r"|"
        + _en(
            r"if", r"unless", r"should you", r"in case", r"whenever", r"as long as",
            r"(?:the\s+)?next time",
            r"(?:when|once|as soon as|after)(?=\s+(?:you|your|needed|necessary|required)"
            + _E
            + ")",
        )
        + r"|^\s*(?:(?:please|just|simply|so|you can|you could|you may)\s+)*"
        + _en(
            r"ask(?:\s+me)?", r"tell me", r"let me know", r"give me", r"send me", r"provide",
            r"specify", r"share", r"choose", r"pick",
        ),
    ),
    # A time clause closing its clause (需要时，…; 您方便的时候，…): a condition on the user
    # unless the speaker is its subject.
    ("when", r"(?<![小同及实實准準按此这這那])(?:的时候|的時候|时候|時候|时|時)(?=\s*$)"),
    # Report-back forms: a promise to return with the result ("let me check and get back to
    # you", 稍后给您结果); the "you" in them is the receiver, not an addressee.
    (
        "back",
        r"(?:回复|回覆|答复|答覆|告诉|告訴|告知|通知|转告|轉告|反馈给|反饋給)(?:您|你|妳)"
        r"|(?:给|給)(?:您|你)(?:结果|結果|答复|答覆|回复|回覆|消息|答案)|回来|回來|"
        + _en(
            r"get(?:ting)? back to (?:you|u)", r"com(?:e|ing) back(?: to you)?",
            r"be (?:right )?back", r"report(?:ing)? back", r"follow(?:ing)? up(?: with you)?",
            r"let you know", r"keep you (?:posted|updated)", r"updat(?:e|ing) you",
        ),
    ),
    # An embedded question after a look-up verb: what follows is what is to be checked
    # (查一下有没有雨, check whether it rains); "if" right after a verb reads the same way.
    ("comp", r"是否|有没有|有沒有|是不是|会不会|會不會|能不能|有无|有無|" + _en("whether")),
    (
        "foryou",
        r"为您|帮您|给您|為您|幫您|給您|为你|帮你|给你|" + _en(r"for you", r"help(?:ing)? you"),
    ),
    ("letme", r"让我们?|讓我們?|" + _en(r"let me", r"let's", r"let us", r"allow me to")),
    ("you", r"您|你|妳|请|請|" + _en("you", "your", "please")),
    (
        "neg",
        r"不|无法|無法|没|沒|未|别|別|"
        + _en("not", "never", "cannot", "unable", "no longer")
        + r"|n[’']t"
        + _E,
    ),
    (
        "done",
        r"已经|已經|已|刚才|剛才|刚刚|剛剛|之前|先前|" + _en("already", "previously", "earlier"),
    ),
    ("able", r"可以|能够|能夠|能|" + _en("can", "could", "may", "might")),
    ("me", r"我们|我們|咱们|咱們|我|" + _en("i", "we")),
    # Verbs of looking up: Chinese (not followed by a result complement: 查到, 查询了, 查过),
    # English in the base form or the -ing form (a past form is no intent).
    (
        "verb",
        r"(?:查询|查詢|查看|查找|查一查|查查|查|核实|核實|核对|核對|核查|确认|確認|检查|檢查|获取|獲取"
        r"|搜索|搜寻|搜尋|搜|检索|檢索|寻找|尋找|找找|找|调用|調用|调取|調取|拉取|定位|重试|重試"
        r"|看一?下|看看|试试|試試|尝试|嘗試|再试|再試|了解一下)(?![询詢看找]?[到了過过完])|"
        + _en(
            r"re-?check(?:ing)?", r"check(?:ing)?", r"re-?quer(?:y|ying)", r"quer(?:y|ying)",
            r"re-?try(?:ing)?", r"tr(?:y|ying)", r"search(?:ing)?", r"fetch(?:ing)?",
            r"get(?:ting)?", r"retriev(?:e|ing)", r"find(?:ing)?", r"call(?:ing)?",
            r"verif(?:y|ying)", r"confirm(?:ing)?", r"pull(?:ing)?", r"grab(?:bing)?",
            r"gather(?:ing)?", r"obtain(?:ing)?", r"consult(?:ing)?", r"dig(?:ging)?",
            r"look(?:ing)?(?=\s+(?:up|it up|that up|this up|them up|into|for)(?![A-Za-z]))",
            r"see(?=\s+(?:if|whether)(?![A-Za-z]))",
        ),
    ),
    # Markers of intent and aspect: future (将, will, 'll), immediacy (马上, now), sequence
    # (接下来, next), repetition (再, again), the progressive (正在, 在查, 查询中, I'm, am).
    (
        "marker",
        r"[’']ll|[’']m|[’']d like to|[’']re|中(?=[。.！!\s…]|$)|一下|将|將|会|會|要|打算"
        r"|准备|準備|需要|这就|這就|马上|馬上|立即|立刻|稍后|稍後|现在|現在|接下来|接下來|下一步"
        r"|随后|隨後|即将|即將|尽快|盡快|再次|再|重新|先|正在"
        r"|在(?=(?:为您|為您|帮您|幫您|为你|帮你)?(?:查|搜|检|檢|获|獲|核|调|調|找|寻|尋))|来|來|去|"
        + _en(
            "will", "shall", "going to", "gonna", "about to", "now", "again", "next",
            "right away", "straight away", "immediately", "shortly", "soon", "currently",
            "need to", "have to", "would like to", "am", "are",
        ),
    ),
    # An English finite past ("Searching for 北京 returned nothing"): a clause that opens
    # with an -ing verb is an announcement only without one.
    ("past", _en(r"[a-z]+ed", "was", "were", "did", "found", "got", "gave", "came", "had")),
)


_INTENT = re.compile("|".join(f"(?P<{name}>{rx})" for name, rx in _PARTS), re.IGNORECASE)


_CLAUSE_BREAK = re.compile(r"[，,；;：:]")


#: What may open a clause before an announcing -ing verb ("Fetching...", "— Checking now").
_OPENING = " \t\"'“”‘’*-–—…>#"

#: Finite verbs (forms of be, have and do, modals, and the commonest verbs in the past or the
#: third person) that make an English clause a statement: after an -ing verb that opens its
#: clause, that verb is their subject ("Getting the s'mores right took finesse", "Finding a
#: balance is key"), not an announcement; a clause holding one makes a later -ing clause of
#: its sentence a participle of it ("People could populate it, getting a second opinion").
_FINITE = re.compile(
    _en(
        "is", "are", "was", "were", "has", "have", "had", "does", "did", "can", "could",
        "will", "would", "shall", "should", "may", "might", "must", "took", "takes", "made",
        "makes", "gave", "gives", "went", "goes", "became", "becomes", "seems", "means",
        "meant", "requires", "helps", "remains", "needs", "keeps", "kept", "brought",
        "brings", "felt", "feels", "proves", "began", "begins", "allows", "involves",
        "depends", "matters", "works", "costs", "saves", "leads", "led", "gets", "got",
        "came", "comes", r"[a-z]+n[’']t",
    ),
    re.IGNORECASE,
)

#: Markers of the progressive: intent only beside an -ing verb ("I'm checking").
_ASPECT = ("am", "are", "'m", "'re")

#: Words that open a relative clause: a finite verb right after one is the relative clause's
#: ("Fetching the data that is needed"), not the clause's own.
_RELATIVE = ("that", "which", "who", "whom", "whose", "where", "when", "what")


#: Where the predicate of an -ing subject can no longer be: a dash or an opening bracket
#: starts a new clause ("Searching for the forecast — this will take a moment", "Pulling the
#: data (it could take a few seconds)"), whose "this will" is not the -ing verb's predicate.
_GERUND_BREAK = re.compile(r"\s*[—–(]|\s-\s")


def _finite_in(text: str) -> bool:
    """Whether ``text`` holds a finite verb of :data:`_FINITE` outside a relative clause."""
    for m in _FINITE.finditer(text):
        before = re.findall(r"[A-Za-z]+", text[: m.start()])
        if not before or before[-1].lower() not in _RELATIVE:
            return True
    return False


def _read_clause(clause: str, after_past: bool = False) -> tuple[int | None, bool, bool]:
    """``(offset, conditional, finite)`` for one clause: the offset of the look-up verb (or
    waiting form) that makes it a promise, or None; whether it states a condition on the user
    (which makes its whole sentence an offer, not a promise); and whether it is a finite
    statement (a past, or a finite verb of :data:`_FINITE`) with no mark of intent.
    ``after_past``: an earlier clause of the sentence was such a statement, so a clause
    opening with an -ing verb goes on in it ("The searches were run, querying the release
    notes"; "People could populate it, getting a second opinion"), not an announcement. A
    clause opening with an -ing verb that a finite verb follows is that verb's subject
    ("Getting the s'mores right took finesse"), never an announcement."""
    subject_me = addressed = blocked = intent = gerund = past = temporal = aspect = False
    gerund_end = 0
    progressive = False
    verb_at: int | None = None
    wait_at: int | None = None
    previous: re.Match[str] | None = None
    gerund_stop = len(clause)
    for m in _INTENT.finditer(clause):
        if m.start() >= gerund_stop:
            break  # a new clause after the -ing opening's dash: "— this could take a minute"
        kind = m.lastgroup
        if (
            kind == "cond"
            and m.group().lower() == "if"
            and previous is not None
            and previous.lastgroup in ("verb", "back")
            and not clause[previous.end() : m.start()].strip()
        ):
            kind = "comp"  # "check if it rains": an embedded question, no condition
        if kind == "comp":
            if verb_at is not None:
                break  # the rest is the thing to be checked
        elif kind == "cond":
            return None, True, False
        elif kind == "when":
            temporal = True
        elif kind == "wait":
            wait_at = m.start() if wait_at is None else wait_at
        elif kind == "you":
            addressed = addressed or verb_at is None  # an addressee before the verb
        elif kind in ("neg", "done", "able"):
            blocked = True
        elif kind == "me":
            subject_me = True
        elif kind == "marker" and m.group().lower().replace("’", "'") in _ASPECT:
            aspect = True  # the progressive only with an -ing verb: not "ideas that are to try"
        elif kind in ("letme", "marker"):
            intent = True
        elif kind == "past":
            past = True
        elif kind in ("verb", "back") and verb_at is None:
            verb_at = m.start()
            word = m.group().lower()
            progressive = word.isascii() and word.endswith("ing")
            if progressive:
                if not clause[: m.start()].strip(_OPENING):
                    gerund = True  # a clause that opens with it: "Fetching the forecast..."
                    gerund_end = m.end()
                    cut = _GERUND_BREAK.search(clause, gerund_end)
                    gerund_stop = cut.start() if cut else gerund_stop
            elif word.isascii() and not (subject_me or intent):
                addressed = True  # an English imperative ("Try again later") is advice
        previous = m
    intent = intent or (aspect and progressive)
    finite = (past or _finite_in(clause)) and not intent and wait_at is None
    if temporal and not subject_me:
        return None, True, False
    if wait_at is not None:
        return wait_at, False, False
    if gerund and _finite_in(clause[gerund_end:gerund_stop]):
        return None, False, True  # a gerund subject: "Getting it right took finesse"
    retry = verb_at is not None and clause[verb_at : verb_at + 2].lower() == "re"
    if gerund and not past and (not after_past or retry):
        intent = True
    if verb_at is None or addressed or blocked or not intent:
        return None, False, finite
    return verb_at, False, finite


# A sentence ends at Chinese or English end punctuation or a line break. A full stop ends one
# only before whitespace or the end, so decimals (31.2222) stay inside their sentence.
_SENTENCE_END = re.compile(r"[。！？!?；;…]+|\.(?=\s|$)|\n+")


def sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` spans of the sentences of ``text``, end punctuation included,
    surrounding whitespace excluded, empty sentences skipped."""
    spans: list[tuple[int, int]] = []

    def add(start: int, end: int) -> None:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append((start, end))

    start = 0
    for m in _SENTENCE_END.finditer(text):
        add(start, m.start() if m.group().startswith("\n") else m.end())
        start = m.end()
    add(start, len(text))
    return spans


#: A list item: a bullet or a number opening its line.
_ITEM = re.compile(r"(?:[-*•]|\d+[.)、])\s+")

#: What an introduction of advice says: whom it addresses, or that it recommends.
_ADVICE = re.compile(
    r"您|你|建议|建議|推荐|推薦|"
    + _en("you", "your", "recommend", "suggest", "advise", "consider"),
    re.IGNORECASE,
)


def _advice_item(text: str, start: int) -> bool:
    """Whether the sentence at ``start`` is an item of a list that a line ending in a colon
    introduces as advice to the user (``To get the rate, I recommend:`` / ``- Checking a
    financial website``): the user's options, not the model's next step."""
    line_start = text.rfind("\n", 0, start) + 1
    opening = text[line_start:start]  # "1. " when the number ended a sentence of its own
    if not (_ITEM.fullmatch(opening) if opening.strip() else _ITEM.match(text, start)):
        return False
    before = text[:line_start].rstrip("\n")
    lines = [ln for ln in before.split("\n") if ln.strip()]
    for line in reversed(lines):  # skip the items before it, up to the introduction
        if _ITEM.match(line.lstrip()):
            continue
        return line.rstrip().endswith((":", "：")) and _ADVICE.search(line) is not None
    return False


#: What makes a past clause a failure, after which an -ing clause is the next attempt
#: ("Searching for 北京 returned nothing, trying 北京市"), not the past going on.
_FAILED = re.compile(
    _en("nothing", "no", "none", "failed", "fails", "empty", "error", "errors", "unsuccessful")
    + r"|n[’']t|\bnot\b",
    re.IGNORECASE,
)


def promised(text: str, start: int, end: int) -> bool:
    """Whether the sentence ``text[start:end]`` (a span of :func:`sentences`) announces a
    look-up still to be taken (the grammar above). Questions, sentences with a clause that
    puts a condition on the user (an offer), and the items of a list introduced as advice to
    the user (``I recommend:``, ``you would need to:``) never do."""
    sentence = text[start:end]
    if sentence.rstrip().endswith(("?", "？")) or _advice_item(text, start):
        return False
    found = after_past = False
    for part in _CLAUSE_BREAK.split(sentence):
        at, conditional, past = _read_clause(part, after_past)
        if conditional:
            return False
        found = found or at is not None
        after_past = after_past or (past and not _FAILED.search(part))
    return found


def offers(sentence: str) -> bool:
    """Whether ``sentence`` has a clause that puts a condition on the user (an offer: "If you
    like, I can check again", "Let me know which city")."""
    return any(_read_clause(part)[1] for part in _CLAUSE_BREAK.split(sentence))


def find_promise(text: str) -> tuple[int, int] | None:
    """The span of the first sentence of ``text`` that announces a look-up still to be taken
    (:func:`promised`), or None."""
    for start, end in sentences(text):
        if promised(text, start, end):
            return start, end
    return None
