"""Failure classifier: why an episode's answer failed, with the evidence each label rests on.

:func:`classify` gives an :class:`~toolreplay.wire.episode.Episode` zero or more
:class:`FailureMode` labels (an episode can carry several):

=======================  ==================================================================
mode                     when
=======================  ==================================================================
``error``                the model endpoint failed and the episode ended there (stop reason
                         ``error``): an HTTP error status from the server, a body that is no
                         chat completion, or a transport failure (no response). The label's
                         explanation names the status, the endpoint and the round; its
                         evidence quotes the server's message (:class:`EpisodeError`). It is
                         the episode's only label: there is no answer to read.
``empty_answer``         form A: the final text is empty. Usually the last reply held tool
                         calls the host never executed (:attr:`Episode.pending_tool_calls`);
                         also a forced final round (tools withheld) that returned no text, or
                         a reply with neither text nor tool calls.
``unfulfilled_promise``  form B: the final reply carries tool calls the host never
                         executed beside text with no measured value (whatever the text
                         says: "retrying now", a narration), or, with nothing pending, its
                         text announces a look-up still to be taken (the intent grammar of
                         :func:`find_promise`: 我将重新查询, 让我再查一下, 這就幫您查詢, I'll
                         look that up, one moment while I check, 稍后给您结果, I'm looking
                         that up now, 正在为您查询...) and holds no measured value.
``fabricated_value``     a value in the answer that no tool result of the episode holds for
                         the day, field and place the answer states it for, after unit
                         conversion and rounding to the answer's precision (one label per
                         such value; :func:`toolreplay.judging.grounding.ground_answer`).
``wrong_place``          the answer is about another place than the question asks: its
                         values are tool values of a place it names that the question does not
                         ask about, and none is a value of an asked place
                         (:func:`toolreplay.judging.verdicts.wrong_place`); evidence quotes
                         the place it names, the explanation names both.
``no_measurement``       a non-empty answer with no measured value and no promise (an offer
                         conditional on the user: 等您需要时我可以再查, if you like I can...,
                         到时..., a question, a statement that nothing was found).
``refusal``              the final reply carries the model's ``refusal`` text (the OpenAI
                         refusal field or a refusal content part); evidence quotes it.
=======================  ==================================================================

Structure comes first (an error that ended the episode, pending tool calls), then the text.
"Measured value" means what :func:`toolreplay.judging.values.scan` reads with the judge's
units, so numbers in dates (``2026-09-17``, ``9月17日``) and coordinates (``31.2222,
121.4581``, ``北纬39.9度``, ``39.9°N``, ``39°54′``) never count. The pass/fail verdict and the
stop reason are not failure modes; they are reported beside them.

Serialised shape of one label (:meth:`FailureMode.to_dict`, consumed by the HTML report)::

    {"mode": str, "explanation": str,
     "evidence": {"message_index": int | None,   # index into episode.transcript
                  "span": [start, end] | None,    # char offsets into that message's content
                  "text": str | None,             # the quoted sentence or value
                  "tool_call": {"name": str, "arguments": Any} | None}}
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolreplay.judging.grounding import Expectation, ground_answer
from toolreplay.judging.toolvalues import ToolValue, tool_values
from toolreplay.judging.values import relevant_values
from toolreplay.judging.verdicts import FULL_JUDGE, NO_VALUE, FormatJudge, wrong_place
from toolreplay.wire.episode import Episode, ToolCall

if TYPE_CHECKING:
    from toolreplay.evals import Question


ERROR = "error"


EMPTY_ANSWER = "empty_answer"


UNFULFILLED_PROMISE = "unfulfilled_promise"


FABRICATED_VALUE = "fabricated_value"


WRONG_PLACE = "wrong_place"


NO_MEASUREMENT = "no_measurement"


REFUSAL = "refusal"


#: Every mode, in the order labels are given and counted.
FAILURE_MODES = (
    EMPTY_ANSWER, UNFULFILLED_PROMISE, FABRICATED_VALUE, WRONG_PLACE, NO_MEASUREMENT, REFUSAL,
    ERROR,
)  # fmt: skip


@dataclass(frozen=True)
class Evidence:
    """What a label rests on. ``message_index`` indexes ``episode.transcript``; ``span`` is
    ``(start, end)`` character offsets into that message's ``content``; ``text`` quotes the
    sentence or value; ``tool_call`` is the pending tool call the label points at. Any of
    them may be None."""

    message_index: int | None = None
    span: tuple[int, int] | None = None
    text: str | None = None
    tool_call: ToolCall | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape in the module docstring (tool call arguments parsed)."""
        return {
            "message_index": self.message_index,
            "span": list(self.span) if self.span is not None else None,
            "text": self.text,
            "tool_call": (
                {"name": self.tool_call.name, "arguments": self.tool_call.parsed_arguments()}
                if self.tool_call is not None
                else None
            ),
        }


@dataclass(frozen=True)
class FailureMode:
    """One label: ``mode`` (one of :data:`FAILURE_MODES`), a one-line ``explanation`` and
    the :class:`Evidence`."""

    mode: str
    explanation: str
    evidence: Evidence

    def to_dict(self) -> dict[str, Any]:
        """``{"mode", "explanation", "evidence": {...}}`` (see the module docstring)."""
        return {
            "mode": self.mode,
            "explanation": self.explanation,
            "evidence": self.evidence.to_dict(),
        }


# How the hosts record a model API error (``str`` of
# :class:`toolreplay.wire.replies.ModelReplyError`): ``<endpoint>: HTTP <status>: <problem>``,
# or ``<endpoint>: <problem>`` when no response arrived; an SDK error without a response is
# ``<ExceptionName>: <message>``.
_HTTP_ERROR = re.compile(
    r"(?P<endpoint>[a-z][a-z0-9+.-]*://\S+?): (?:HTTP (?P<status>\d{3}): )?(?P<problem>.*)\Z",
    re.DOTALL,
)


# The OpenAI SDK's status errors end with the response body: ``Error code: 500 - {...}``.
_BODY = re.compile(r"Error code: \d{3} - (?P<body>[\[{].*[\]}])\s*\Z", re.DOTALL)


def _server_message(problem: str) -> str | None:
    """The message the server put in its error body (``{"error": {"message": ...}}``,
    ``{"message": ...}``, ``{"detail": ...}``), read from the SDK's text, or None."""
    found = _BODY.search(problem)
    if found is None or len(found["body"]) > 200_000:
        return None
    body: Any = None
    for parse in (json.loads, ast.literal_eval):  # JSON, or the SDK's Python repr of it
        try:
            body = parse(found["body"])
            break
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    for _ in range(3):
        if isinstance(body, dict):
            inner = body.get("error", body.get("message", body.get("detail")))
            if isinstance(inner, str):
                return inner
            body = inner
    return None


@dataclass(frozen=True)
class EpisodeError:
    """The model API error an episode ended on, read from :attr:`Episode.error`:
    ``status`` (the HTTP status; None when no response arrived), ``endpoint`` (the request
    URL, when known), ``message`` (the server's own message when its error body holds one,
    else the error text without endpoint and status) and ``text`` (the error as recorded)."""

    status: int | None
    endpoint: str | None
    message: str
    text: str

    @classmethod
    def parse(cls, text: str | None) -> EpisodeError:
        """Read an episode's ``error`` text (None: an ``error`` stop with no text)."""
        if not text:
            return cls(None, None, "no error text was recorded", "")
        found = _HTTP_ERROR.match(text)
        if found is None:
            return cls(None, None, text, text)
        status = int(found["status"]) if found["status"] else None
        problem = found["problem"]
        return cls(status, found["endpoint"], _server_message(problem) or problem, text)

    def to_dict(self) -> dict[str, Any]:
        """``{"status", "endpoint", "message", "text"}`` (the ``error`` of a results episode)."""
        return {
            "status": self.status,
            "endpoint": self.endpoint,
            "message": self.message,
            "text": self.text,
        }

    def summary(self) -> str:
        """The error in a few words: ``HTTP 500 from http://…/chat/completions``, ``HTTP 200
        from …, not a chat completion``, ``no response from …`` or ``no response
        (APIConnectionError)``."""
        where = f" from {self.endpoint}" if self.endpoint else ""
        if self.status is not None:
            return f"HTTP {self.status}{where}" + (", not a chat completion" * (self.status < 400))
        if self.endpoint:
            return f"no response{where}"
        kind = self.text.split(":", 1)[0].strip()
        return f"no response ({kind})" if kind.isidentifier() else "no response"


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
            r"look(?:ing)?(?=\s+(?:up|it up|that up|this up|them up|into|for))",
            r"see(?=\s+(?:if|whether))",
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


def _read_clause(clause: str) -> tuple[int | None, bool]:
    """``(offset, conditional)`` for one clause: the offset of the look-up verb (or waiting
    form) that makes it a promise, or None; and whether it states a condition on the user
    (which makes its whole sentence an offer, not a promise)."""
    subject_me = addressed = blocked = intent = gerund = past = temporal = False
    verb_at: int | None = None
    wait_at: int | None = None
    previous: re.Match[str] | None = None
    for m in _INTENT.finditer(clause):
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
            return None, True
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
        elif kind in ("letme", "marker"):
            intent = True
        elif kind == "past":
            past = True
        elif kind in ("verb", "back") and verb_at is None:
            verb_at = m.start()
            word = m.group().lower()
            if word.isascii() and word.endswith("ing"):
                if not clause[: m.start()].strip(_OPENING):
                    gerund = True  # a clause that opens with it: "Fetching the forecast..."
            elif word.isascii() and not (subject_me or intent):
                addressed = True  # an English imperative ("Try again later") is advice
        previous = m
    if temporal and not subject_me:
        return None, True
    if wait_at is not None:
        return wait_at, False
    if gerund and not past:
        intent = True
    if verb_at is None or addressed or blocked or not intent:
        return None, False
    return verb_at, False


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


def find_promise(text: str) -> tuple[int, int] | None:
    """The span of the first sentence of ``text`` that announces a look-up still to be taken
    (the grammar above), or None. Questions, and sentences with a clause that puts a condition
    on the user (an offer), are never promises."""
    for start, end in sentences(text):
        sentence = text[start:end]
        if sentence.rstrip().endswith(("?", "？")):
            continue
        promised = False
        for part in _CLAUSE_BREAK.split(sentence):
            at, conditional = _read_clause(part)
            if conditional:
                promised = False
                break
            promised = promised or at is not None
        if promised:
            return start, end
    return None


def _final_index(episode: Episode) -> int | None:
    """Index of the final assistant reply in the transcript (None when the episode ended
    before one, e.g. on an API error)."""
    if episode.transcript and episode.transcript[-1].get("role") == "assistant":
        return len(episode.transcript) - 1
    return None


def _call_text(call: ToolCall) -> str:
    args = call.parsed_arguments()
    shown = json.dumps(args, ensure_ascii=False) if not isinstance(args, str) else args
    return f"{call.name}({shown})"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _empty(episode: Episode, index: int | None) -> FailureMode:
    pending = episode.pending_tool_calls
    last = episode.rounds[-1] if episode.rounds else None
    if pending:
        calls = ", ".join(_call_text(c) for c in pending)
        why = (
            f"the final reply has no text, only {_plural(len(pending), 'tool call')} the host "
            f'never executed: {calls}; the host stopped ({episode.stop_reason}) and returned ""'
        )
    elif index is None:
        why = f"the episode ended before any answer (stop reason {episode.stop_reason})"
    elif last is not None and not last.tools_offered:
        why = (
            f"tools were withheld in the final round (stop reason {episode.stop_reason}) and "
            "the model returned no text"
        )
    else:
        why = "the model's final reply has neither text nor tool calls"
    return FailureMode(
        EMPTY_ANSWER, why, Evidence(index, None, None, pending[0] if pending else None)
    )


def _error(episode: Episode) -> FailureMode:
    err = EpisodeError.parse(episode.error)
    failed = len(episode.rounds) + 1  # the request that failed: the round after the last one
    why = (
        f"the model endpoint failed in round {failed} ({err.summary()}) and the episode ended "
        "there, with no answer (stop reason error)"
    )
    return FailureMode(ERROR, why, Evidence(None, None, err.message, None))


def classify(
    episode: Episode,
    judge: FormatJudge = FULL_JUDGE,
    measure: Question | str | Expectation | None = None,
) -> tuple[FailureMode, ...]:
    """The failure modes of ``episode`` (see the module docstring), in :data:`FAILURE_MODES`
    order; ``()`` for an answer that holds only grounded measured values.

    An episode that ended on a model API error (stop reason ``error``) is ``error`` and nothing
    else: there is no answer to read. Structure first: a final reply whose tool calls the host
    never executed is the strongest
    signal (no text: ``empty_answer``; text without a measured value: ``unfulfilled_promise``,
    whatever the text says, e.g. "retrying now"). Then the text: a promise by the intent grammar
    (:func:`find_promise`), else ``no_measurement``. ``judge`` supplies the units (so with the
    narrow judge "26度" is no measurement); ``measure`` is the question (or just its measure
    name) whose values count as answering it, and whose day and places each value is grounded
    against (:func:`toolreplay.judging.grounding.ground_answer`). Never raises for a well-formed
    episode."""
    if episode.stop_reason == "error":
        return (_error(episode),)
    expect = Expectation.of(measure)
    index = _final_index(episode)
    answer = episode.answer
    refusal = episode.rounds[-1].reply.refusal if episode.rounds else None
    if refusal:
        refused = FailureMode(
            REFUSAL,
            f"the model refused (stop reason {episode.stop_reason}): {refusal}",
            Evidence(index, None, refusal, None),
        )
        if not answer.strip():
            return (refused,)
    if not answer.strip():
        return (_empty(episode, index),)
    vocab = judge.resolved_vocabulary()
    grounding = ground_answer(answer, episode.transcript, expect, judge.resolved_units(), vocab)
    values = tuple(c.value for c in grounding.checks)
    relevant = relevant_values(answer, values, expect.measure, vocab)
    pending = episode.pending_tool_calls
    labels: list[FailureMode] = []
    of = f" of {expect.measure}" if expect.measure else ""
    if not relevant:
        promise = find_promise(answer)
        if pending:
            calls = ", ".join(_call_text(c) for c in pending)
            span = promise or (0, len(answer))
            said = "announces it" if promise else "holds no measured value and announces nothing"
            labels.append(
                FailureMode(
                    UNFULFILLED_PROMISE,
                    f"the final reply carries {_plural(len(pending), 'tool call')} the host never "
                    f"executed ({calls}) and its text {said}; no measured value{of}, and the host "
                    f"has stopped ({episode.stop_reason})",
                    Evidence(index, span, answer[span[0] : span[1]], pending[0]),
                )
            )
        elif promise is not None:
            start, end = promise
            labels.append(
                FailureMode(
                    UNFULFILLED_PROMISE,
                    "the answer announces a look-up still to be taken and holds no measured "
                    f"value{of}, but the host has stopped ({episode.stop_reason})",
                    Evidence(index, promise, answer[start:end], None),
                )
            )
        elif expect.measure != NO_VALUE:  # a `none` question needs no measured value
            labels.append(
                FailureMode(
                    NO_MEASUREMENT,
                    f"the answer holds no measured value with a unit "
                    f"{'for ' + expect.measure + ' ' if expect.measure else ''}({judge.name} "
                    "judge) and announces no further action",
                    Evidence(index, (0, len(answer)), answer, None),
                )
            )
    for check in grounding.checks:
        if check.grounded:
            continue
        labels.append(
            FailureMode(
                FABRICATED_VALUE,
                f"the answer states {check.text}, which no tool result holds for what it is "
                f"stated for (after unit conversion and rounding): {check.reason}",
                Evidence(index, check.span, check.text, None),
            )
        )
    answering = {id(v) for v in relevant}
    elsewhere = wrong_place([c for c in grounding.checks if id(c.value) in answering], expect)
    if elsewhere is not None:
        start, end = elsewhere.span
        labels.append(
            FailureMode(
                WRONG_PLACE,
                elsewhere.explanation(answer),
                Evidence(index, elsewhere.span, answer[start:end], None),
            )
        )
    if refusal:
        labels.append(refused)
    return tuple(labels)


__all__ = [
    "EMPTY_ANSWER", "ERROR", "FABRICATED_VALUE", "FAILURE_MODES", "NO_MEASUREMENT",
    "UNFULFILLED_PROMISE", "WRONG_PLACE", "EpisodeError", "Evidence", "FailureMode", "ToolValue",
    "classify",
    "find_promise", "mode_counts", "sentences", "tool_values",
]  # fmt: skip


def mode_counts(labels_per_episode: Iterable[Iterable[str]]) -> dict[str, int]:
    """How many episodes carry each mode (an episode with two fabricated values counts
    once), in :data:`FAILURE_MODES` order, modes with no episode left out."""
    counts = Counter(mode for modes in labels_per_episode for mode in set(modes))
    return {m: counts[m] for m in FAILURE_MODES if counts[m]}
