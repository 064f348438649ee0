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

Token usage is an estimate (characters / 2) so that budgets can be exercised.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..evals import EvalSuite, Place, Question
from .loopback import serve

STANDIN_MODEL = "toolreplay-standin"


@dataclass
class _PlaceState:
    place: Place
    geocoded: list[str] = field(default_factory=list)  # queries sent to a geocoder
    wrong: dict[str, Any] | None = None  # the last candidate seen outside the region
    chosen: dict[str, Any] | None = None  # candidate in the region (atomic)
    weather: dict[str, Any] | None = None  # tool result with current/daily
    label: str = ""


def _related(query: str, place: Place) -> bool:
    return query == place.query or query == place.query + "市"


def _coords(value: Any) -> float:
    return round(float(value), 4)


class StandinPolicy:
    """Maps a chat-completions request body to a response body (see module docstring)."""

    def __init__(self, suite: EvalSuite) -> None:
        self.suite = suite

    # ---- reading the conversation --------------------------------------------------------

    def _state(self, question: Question, messages: list[dict[str, Any]]) -> list[_PlaceState]:
        states = [_PlaceState(p) for p in question.places]
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
                if not isinstance(result, dict) or "error" in result:
                    continue
                self._absorb(states, fn.get("name"), args, result)
        return states

    def _absorb(
        self, states: list[_PlaceState], name: Any, args: dict[str, Any], result: dict[str, Any]
    ) -> None:
        if name in ("get_weather", "geocode_city"):
            city = str(args.get("city", ""))
            for st in states:
                if not _related(city, st.place):
                    continue
                st.geocoded.append(city)
                candidates = (
                    [result["place"]] if name == "get_weather" else result.get("candidates", [])
                )
                fit = next((c for c in candidates if c.get("admin1") == st.place.region), None)
                if fit is None:
                    st.wrong = candidates[0] if candidates else None
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
            content = (" ".join(narration) or None) if calls else self._answer(question, states)
        return self._response(body, messages, content, calls)

    def _plan(
        self, question: Question, states: list[_PlaceState], offered: set[str]
    ) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
        calls: list[tuple[str, dict[str, Any]]] = []
        says: list[str] = []
        follow_up = any(st.geocoded for st in states)
        day = "今天" if question.day == "today" else "明天"
        for st in states:
            if st.weather is not None:
                continue
            q = st.place.query
            if "get_weather" in offered:
                nxt = next((n for n in (q, q + "市") if n not in st.geocoded), None)
                if nxt is not None:
                    calls.append(("get_weather", {"city": nxt}))
                    if st.wrong is not None:
                        says.append(self._requery_sentence(st))
            elif {"geocode_city", "get_weather_by_coords"} <= offered:
                if st.chosen is not None:
                    c = st.chosen
                    lat, lon = _coords(c["latitude"]), _coords(c["longitude"])
                    calls.append(("get_weather_by_coords", {"latitude": lat, "longitude": lon}))
                    says.append(
                        f"已找到{c.get('name')}（{c.get('admin1')}）的坐标（{lat}, {lon}），"
                        f"接下来我将查询{day}的天气预报。"
                    )
                else:
                    nxt = next((n for n in (q, q + "市") if n not in st.geocoded), None)
                    if nxt is not None:
                        calls.append(("geocode_city", {"city": nxt}))
                        if st.wrong is not None:
                            says.append(self._requery_sentence(st))
        if not (question.narrates_followups and follow_up):
            says = []
        return calls, says

    @staticmethod
    def _requery_sentence(st: _PlaceState) -> str:
        w = st.wrong or {}
        where = f"{w.get('country', '')}{w.get('admin1', '')}{w.get('admin2', '')}"
        return (
            f"刚才的候选地点是{where}的「{w.get('name', st.place.query)}」"
            f"（{w.get('feature_code', '?')}），显然不是{st.place.region}的{st.place.query}。"
            f"我将重新查询，明确指定「{st.place.query}市」以提高准确性。"
        )

    def _answer(self, question: Question, states: list[_PlaceState]) -> str:
        missing = [st.place.query for st in states if st.weather is None]
        if missing:
            return f"抱歉，我还没有拿到{'、'.join(missing)}的天气数据，现在无法给出具体数值。"
        i = question.day_index
        day_word = "今天" if i == 0 else "明天"
        days = [(st, st.weather["daily"][i]) for st in states if st.weather is not None]
        if question.measure == "comparison":
            parts = [f"{st.label} {d['temperature_2m_max']['value']}°C" for st, d in days]
            hottest = max(days, key=lambda sd: sd[1]["temperature_2m_max"]["value"])[0]
            return f"{day_word}最高气温：{'，'.join(parts)}。{hottest.label}最热。"
        st, d = days[0]
        region = st.place.region
        where = st.label if region.startswith(st.label[:2]) else region + st.label
        if question.measure == "precipitation":
            mm = d["precipitation_sum"]["value"]
            verdict = "会下雨" if mm > 0 else "不太会下雨"
            return f"{where}{day_word}{verdict}：天气{d['weather']}，预计降水量约 {mm} 毫米。"
        cur = st.weather.get("current", {}) if i == 0 and st.weather else {}
        now = f"当前气温 {cur['temperature_2m']['value']}°C，" if cur else ""
        return (
            f"{where}{day_word}{d['weather']}，{now}"
            f"最高 {d['temperature_2m_max']['value']}°C，"
            f"最低 {d['temperature_2m_min']['value']}°C。"
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
        return 200, self.reply(request)


@contextmanager
def standin_server(suite: EvalSuite) -> Iterator[str]:
    """Run the stand-in on loopback; yields the base URL to give the SDK (``.../v1``)."""
    with serve(StandinPolicy(suite)) as base:
        yield base + "/v1"
