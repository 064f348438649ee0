"""The stand-in model: an OpenAI-compatible ``/v1/chat/completions`` server on loopback.

A test double, labelled so in every manifest and report. Its reply is a deterministic
function of the request body alone (the messages and the tools offered), never of which host
or configuration sent it: failure modes must come from host logic. It reads per-question
hints from the eval file (places to query first, the region each must be in, what is
measured, whether it narrates follow-up calls) and behaves like the study's model did:

- with ``get_weather`` offered, it asks for each place's weather; a result in the wrong
  region makes it ask again with ``name + "市"``;
- with ``geocode_city``/``get_weather_by_coords`` offered, it geocodes every place (in
  parallel), picks the candidate in the expected region itself, re-geocodes ``name + "市"``
  when none fits, then asks for weather by coordinates;
- when a question's hint says it narrates, a reply that carries follow-up tool calls also
  carries a sentence announcing them (the study's "我将重新查询…");
- once it has every place's data it answers, every number taken from tool results; when tools
  are withheld before it has data it says so without inventing numbers.

Token usage is an estimate (characters / 2) so that budgets can be exercised. A request
asking ``"stream": true`` gets the same reply as an event stream (:mod:`.sse`; the usage chunk
when ``stream_options.include_usage`` asks for it).

**Trials.** A sampled model answers the same request differently from one run to the next; the
stand-in imitates that with draws from ``(seed, trial, question id, what is drawn)`` hashed
with SHA-256, at the probabilities the eval file declares per question
(:class:`~toolreplay.study.weather.hints.Variation`): narrating follow-up calls or not, the order of
parallel calls, asking for the last of several places a round later, a wrong first pick among
geocoding candidates that it corrects after seeing the weather, another wording. The
variation is the double's, not a model's. Trial 1 draws nothing: it is the study's observed
behaviour, reply for reply. The trial reaches the stand-in as *which server it is sent to*:
:func:`standin_server` runs one policy per trial, so the request bodies carry nothing extra
(trial 1's requests are byte-identical to a one-trial recording) and the reply is still a
function of the request body, the set's seed and the trial, never of the host or
configuration.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from toolreplay.doubles import STANDIN_MODEL
from toolreplay.doubles.loopback import EventStream, serve
from toolreplay.doubles.sse import completion_events
from toolreplay.evals import EvalSuite, Place, Question
from toolreplay.study.weather.hints import Variation, hints_of

__all__ = ["STANDIN_MODEL", "StandinPolicy", "draw", "standin_server"]


@dataclass
class _PlaceState:
    place: Place
    queries: tuple[str, ...] = ()  # the place's query, then its retries (hints.queries)
    geocoded: list[str] = field(default_factory=list)  # queries sent to a geocoder
    wrong: dict[str, Any] | None = None  # the last candidate seen outside the region
    chosen: dict[str, Any] | None = None  # candidate in the region (atomic)
    weather: dict[str, Any] | None = None  # tool result with current/daily
    label: str = ""
    not_found: int = 0  # geocoding answers with no candidate at all
    misled: dict[str, Any] | None = None  # a wrong first pick, noticed after its weather
    fit: dict[str, Any] | None = None  # the candidate in the region, kept behind a wrong pick


def _related(query: str, state: _PlaceState) -> bool:
    return query in state.queries


def draw(seed: int, trial: int, question_id: str, what: str) -> float:
    """A number in [0, 1) determined by the set's ``seed``, the ``trial``, the question and
    what is drawn (SHA-256; the same on every machine and Python version)."""
    digest = hashlib.sha256(f"{seed}|{trial}|{question_id}|{what}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _coords(value: Any) -> float:
    return round(float(value), 4)


class StandinPolicy:
    """Maps a chat-completions request body to a response body (see module docstring)."""

    def __init__(self, suite: EvalSuite, *, seed: int = 0, trial: int = 1) -> None:
        if trial < 1:
            raise ValueError(f"trials are numbered from 1, not {trial}")
        self.suite = suite
        self.seed = seed
        self.trial = trial

    def _drawn(self, question: Question, what: str, probability: float | None) -> bool:
        """Whether a variation with ``probability`` happens in this trial (never in trial 1)."""
        if self.trial == 1 or not probability:
            return False
        return draw(self.seed, self.trial, question.id, what) < probability

    def _narrates(self, question: Question) -> bool:
        p = hints_of(question).variation.narrate
        if self.trial == 1 or p is None:
            return hints_of(question).narrates_followups
        return draw(self.seed, self.trial, question.id, "narrate") < p

    def _wording(self, question: Question) -> int:
        """0 for the study's wording, 1 or 2 for another one."""
        if not self._drawn(question, "rephrase", hints_of(question).variation.rephrase):
            return 0
        return 1 + int(draw(self.seed, self.trial, question.id, "rephrase-which") * 2)

    # ---- reading the conversation --------------------------------------------------------

    def _state(self, question: Question, messages: list[dict[str, Any]]) -> list[_PlaceState]:
        hints = hints_of(question)
        states = [_PlaceState(p, hints.queries(p.query)) for p in question.places]
        results: dict[str, Any] = {}
        for m in messages:
            if m.get("role") == "tool":
                try:
                    results[m.get("tool_call_id", "")] = json.loads(m.get("content") or "")
                except ValueError:
                    results[m.get("tool_call_id", "")] = {"error": "unreadable"}
        for m in messages:
            for tc in m.get("tool_calls") or [] if m.get("role") == "assistant" else []:
                fn = tc.get("function", {})
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    continue
                result = results.get(tc.get("id"))
                if not isinstance(result, dict):
                    continue
                if "error" in result:
                    # A place the geocoder does not know: the oneshot tool says so in an error.
                    if fn.get("name") == "get_weather" and "找不到" in str(result["error"]):
                        self._absorb(question, states, "geocode_city", args, {"candidates": []})
                    continue
                self._absorb(question, states, fn.get("name"), args, result)
        return states

    def _absorb(
        self,
        question: Question,
        states: list[_PlaceState],
        name: Any,
        args: dict[str, Any],
        result: dict[str, Any],
    ) -> None:
        if name in ("get_weather", "geocode_city"):
            city = str(args.get("city", ""))
            for st in states:
                if not _related(city, st):
                    continue
                first_look = not st.geocoded
                st.geocoded.append(city)
                candidates = (
                    [result["place"]] if name == "get_weather" else result.get("candidates", [])
                )
                if not candidates:
                    st.not_found += 1
                fit = next((c for c in candidates if c.get("admin1") == st.place.region), None)
                if fit is None:
                    st.wrong = candidates[0] if candidates else None
                    continue
                others = [c for c in candidates if c.get("admin1") != st.place.region]
                if (
                    name == "geocode_city"
                    and first_look
                    and others
                    and self._drawn(
                        question,
                        f"wrong_pick|{st.place.query}",
                        hints_of(question).variation.wrong_pick,
                    )
                ):
                    st.chosen, st.fit = others[0], fit  # a wrong first pick, corrected later
                    st.label = str(others[0].get("name", st.place.query))
                    continue
                st.chosen = fit
                st.label = str(fit.get("name", st.place.query))
                if name == "get_weather":
                    st.weather = result
        elif name == "get_weather_by_coords":
            lat, lon = _coords(args.get("latitude", 0)), _coords(args.get("longitude", 0))
            for st in states:
                c = st.chosen
                if c and (_coords(c["latitude"]), _coords(c["longitude"])) == (lat, lon):
                    if st.fit is not None and c is not st.fit:
                        st.misled, st.chosen = c, st.fit  # noticed: not in the region
                        st.label = str(st.fit.get("name", st.place.query))
                        continue
                    st.weather = result

    # ---- deciding ------------------------------------------------------------------------

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The ``/chat/completions`` response body for request ``body``."""
        messages: list[dict[str, Any]] = body.get("messages", [])
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        user = next((m.get("content") for m in messages if m.get("role") == "user"), "")
        question = self.suite.question_for_text(str(user))
        calls: list[tuple[str, dict[str, Any]]] = []
        narration: list[str] = []
        if question is None:
            content: str | None = "抱歉，这个问题不在我的评测文件里，我无法回答。"
        else:
            states = self._state(question, messages)
            if offered:
                calls, narration = self._plan(question, states, offered)
                first_round = not any(m.get("role") == "assistant" for m in messages)
                calls = self._vary_calls(question, calls, first_round, len(messages))
            content = (" ".join(narration) or None) if calls else self._answer(question, states)
        return self._response(body, messages, content, calls)

    def _vary_calls(
        self,
        question: Question,
        calls: list[tuple[str, dict[str, Any]]],
        first_round: bool,
        position: int,
    ) -> list[tuple[str, dict[str, Any]]]:
        """Trial variation of a reply's parallel calls: the last place left for the next
        round (first round only), then another order."""
        v: Variation = hints_of(question).variation
        if first_round and len(calls) > 1 and self._drawn(question, "split", v.split_parallel):
            calls = calls[:-1]
        if len(calls) > 1 and self._drawn(question, f"shuffle|{position}", v.shuffle_parallel):
            keyed = [
                (draw(self.seed, self.trial, question.id, f"order|{position}|{n}"), n, call)
                for n, call in enumerate(calls)
            ]
            shuffled = [call for _, _, call in sorted(keyed)]
            calls = shuffled if shuffled != calls else calls[1:] + calls[:1]
        return calls

    def _plan(
        self, question: Question, states: list[_PlaceState], offered: set[str]
    ) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
        calls: list[tuple[str, dict[str, Any]]] = []
        says: list[str] = []
        follow_up = any(st.geocoded for st in states)
        day = "今天" if question.day == "today" else "明天"
        wording = self._wording(question)
        for st in states:
            if st.weather is not None:
                continue
            if "get_weather" in offered:
                nxt = next((n for n in st.queries if n not in st.geocoded), None)
                if nxt is not None:
                    calls.append(("get_weather", {"city": nxt}))
                    if st.geocoded:
                        says.append(self._requery_sentence(st, nxt, wording))
            elif {"geocode_city", "get_weather_by_coords"} <= offered:
                if st.chosen is not None:
                    c = st.chosen
                    lat, lon = _coords(c["latitude"]), _coords(c["longitude"])
                    calls.append(("get_weather_by_coords", {"latitude": lat, "longitude": lon}))
                    says.append(self._coords_sentence(st, c, lat, lon, day, wording))
                else:
                    nxt = next((n for n in st.queries if n not in st.geocoded), None)
                    if nxt is not None:
                        calls.append(("geocode_city", {"city": nxt}))
                        if st.geocoded:
                            says.append(self._requery_sentence(st, nxt, wording))
        if not (self._narrates(question) and follow_up):
            says = []
        return calls, says

    @staticmethod
    def _coords_sentence(
        st: _PlaceState, c: dict[str, Any], lat: float, lon: float, day: str, wording: int
    ) -> str:
        if st.misled is not None:
            m = st.misled
            return (
                f"刚才查的是{m.get('admin1', '')}的「{m.get('name')}」，不是{st.place.region}的"
                f"{st.place.query}。我将改用{c.get('name')}（{c.get('admin1')}）的坐标"
                f"（{lat}, {lon}）重新查询{day}的天气。"
            )
        if wording == 1:
            return (
                f"{c.get('name')}位于{c.get('admin1')}，坐标（{lat}, {lon}）。"
                f"我再查一下{day}的天气。"
            )
        if wording == 2:
            return f"好的，定位到{c.get('name')}（{lat}, {lon}），我将继续查询{day}的天气预报。"
        return (
            f"已找到{c.get('name')}（{c.get('admin1')}）的坐标（{lat}, {lon}），"
            f"接下来我将查询{day}的天气预报。"
        )

    @staticmethod
    def _requery_sentence(st: _PlaceState, nxt: str, wording: int = 0) -> str:
        q = st.place.query
        if st.wrong is None:
            return f"没有找到「{st.geocoded[-1]}」这个地名，我将换成「{nxt}」重新查询。"
        w = st.wrong
        where = f"{w.get('country', '')}{w.get('admin1', '')}{w.get('admin2', '')}"
        if wording == 1:
            return (
                f"查到的{w.get('name', q)}在{where}，不是{st.place.region}的{q}。"
                f"让我用「{nxt}」再查一次。"
            )
        if wording == 2:
            return f"这个结果不对（{where}），我将改查「{nxt}」。"
        return (
            f"刚才的候选地点是{where}的「{w.get('name', q)}」"
            f"（{w.get('feature_code', '?')}），显然不是{st.place.region}的{q}。"
            f"我将重新查询，明确指定「{nxt}」以提高准确性。"
        )

    def _answer(self, question: Question, states: list[_PlaceState]) -> str:
        english = question.text.isascii()
        wording = self._wording(question)
        if not states:  # a question that needs no tool
            if english:
                return "I can look up temperature, rain and wind for a city, today or tomorrow."
            return "我可以帮你查询某个城市今天或明天的气温、降水和风力，请告诉我城市名。"
        unknown = [st.place.query for st in states if st.weather is None and st.not_found
                   and st.wrong is None]  # fmt: skip
        if unknown and len(unknown) == len(states):
            if english:
                return f"Sorry, I could not find a place called {', '.join(unknown)}."
            return f"抱歉，没有找到名为「{'、'.join(unknown)}」的地点，无法查询它的天气。"
        missing = [st.place.query for st in states if st.weather is None]
        if missing:
            return f"抱歉，我还没有拿到{'、'.join(missing)}的天气数据，现在无法给出具体数值。"
        i = question.day_index or 0
        day_word = "今天" if i == 0 else "明天"
        days = [(st, st.weather["daily"][i]) for st in states if st.weather is not None]
        if question.measure == "comparison":
            parts = [f"{st.label} {d['temperature_2m_max']['value']}°C" for st, d in days]
            hottest = max(days, key=lambda sd: sd[1]["temperature_2m_max"]["value"])[0]
            if wording:
                return f"{hottest.label}最热。{day_word}各地最高气温：{'，'.join(parts)}。"
            return f"{day_word}最高气温：{'，'.join(parts)}。{hottest.label}最热。"
        st, d = days[0]
        region = st.place.region or ""
        where = st.label if region.startswith(st.label[:2]) else region + st.label
        cur = st.weather.get("current", {}) if i == 0 and st.weather else {}
        if english:
            return self._answer_en(question, st, d, cur)
        if question.measure == "wind":
            km = d["wind_speed_10m_max"]["value"]
            now = f"当前风速 {cur['wind_speed_10m']['value']} km/h，" if cur else ""
            verdict = "风比较大" if km >= 20 else "风不大"
            if wording:
                return f"{day_word}{where}{verdict}：{now}最大风速约 {km} km/h。"
            return f"{where}{day_word}{verdict}，{now}最大风速约 {km} km/h（{d['weather']}）。"
        if question.measure == "precipitation":
            mm = d["precipitation_sum"]["value"]
            verdict = "会下雨" if mm > 0 else "不太会下雨"
            if wording:
                return f"预计{where}{day_word}降水量约 {mm} 毫米，{verdict}（{d['weather']}）。"
            return f"{where}{day_word}{verdict}：天气{d['weather']}，预计降水量约 {mm} 毫米。"
        now = f"当前气温 {cur['temperature_2m']['value']}°C，" if cur else ""
        if wording:
            return (
                f"{day_word}{where}气温 {d['temperature_2m_min']['value']}～"
                f"{d['temperature_2m_max']['value']}°C，{now}天气{d['weather']}。"
            )
        return (
            f"{where}{day_word}{d['weather']}，{now}"
            f"最高 {d['temperature_2m_max']['value']}°C，"
            f"最低 {d['temperature_2m_min']['value']}°C。"
        )

    @staticmethod
    def _answer_en(
        question: Question, st: _PlaceState, d: dict[str, Any], cur: dict[str, Any]
    ) -> str:
        day_word = "today" if question.day_index == 0 else "tomorrow"
        name = st.place.query
        if question.measure == "wind":
            now = f", {cur['wind_speed_10m']['value']} km/h right now" if cur else ""
            peak = d["wind_speed_10m_max"]["value"]
            return f"In {name} {day_word} the wind peaks at {peak} km/h{now}."
        if question.measure == "precipitation":
            mm = d["precipitation_sum"]["value"]
            return f"{name} {day_word}: about {mm} mm of rain expected."
        now = f"it is {cur['temperature_2m']['value']} °C now, " if cur else ""
        return (
            f"In {name} {day_word} {now}with a high of {d['temperature_2m_max']['value']} °C "
            f"and a low of {d['temperature_2m_min']['value']} °C."
        )

    # ---- wire format ---------------------------------------------------------------------

    @staticmethod
    def _response(
        body: dict[str, Any],
        messages: list[dict[str, Any]],
        content: str | None,
        calls: list[tuple[str, dict[str, Any]]],
    ) -> dict[str, Any]:
        canon = json.dumps(body, sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]
        round_no = 1 + sum(1 for m in messages if m.get("role") == "assistant")
        tool_calls = [
            {
                "id": f"call_{round_no}_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
            for n, (name, args) in enumerate(calls, start=1)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        prompt_chars = len(json.dumps([messages, body.get("tools")], ensure_ascii=False))
        completion_chars = len(content or "") + sum(
            len(json.dumps(args, ensure_ascii=False)) + 20 for _, args in calls
        )
        prompt_tokens, completion_tokens = prompt_chars // 2, completion_chars // 2 + 1
        return {
            "id": f"chatcmpl-standin-{digest}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", STANDIN_MODEL),
            "system_fingerprint": "toolreplay-standin",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    # ---- HTTP ----------------------------------------------------------------------------

    def __call__(
        self, method: str, path: str, query: dict[str, str], body: bytes
    ) -> tuple[int, Any]:
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            return 404, {
                "error": {
                    "message": f"stand-in serves POST /v1/chat/completions, not {method} {path}"
                }
            }
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return 400, {"error": {"message": "request body is not JSON"}}
        reply = self.reply(request)
        if request.get("stream") is True:  # streamed as OpenAI streams it
            options = request.get("stream_options") or {}
            return 200, EventStream(completion_events(reply, options.get("include_usage") is True))
        return 200, reply


@contextmanager
def standin_server(suite: EvalSuite, *, seed: int = 0, trial: int = 1) -> Iterator[str]:
    """Run the stand-in for one trial on loopback; yields the base URL to give the SDK
    (``.../v1``). Record one trial per server (see the module docstring)."""
    with serve(StandinPolicy(suite, seed=seed, trial=trial)) as base:
        yield base + "/v1"
