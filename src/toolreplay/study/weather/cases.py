"""Generated geocoding cases for the ``baseline_properties`` check
(:mod:`toolreplay.study.weather.properties`), and the in-memory Open-Meteo that answers the
baseline's requests from one of them.

A case (:class:`Case`) is a city name and two geocoding answers, for the name and for the name
with 市 appended (each a tuple of candidates in Open-Meteo's order, or ``None``: nothing
found). Candidates mix ``PPLC``/``PPLA``–``PPLA4`` seats with ``PPL``/``PPLX`` places and no
feature code, populations from a small pool (ties are common; missing populations too), now and
then no coordinates; names are Chinese, with and without 市, and in other scripts. The first
answer's candidates are labelled ``A1``, ``A2``… in their ``admin1`` field, the retry's ``B1``,
``B2``…, so a place label says where it came from: ``甲 (A2 PPLA2)``.

:func:`generate` draws them from :class:`random.Random` seeded with :data:`SEED`: the same
cases, in the same order, on every Python this project supports.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from requests.adapters import BaseAdapter

from toolreplay.study.weather import reference as ref
from toolreplay.study.weather.traffic import OpenMeteoRequest, open_meteo_request

#: The generator's seed: the same cases, in the same order, on every run.
SEED = 31

#: How many cases each variant of the baseline (full, and without each heuristic) is run on.
CASES = 300

#: Feature codes, plainest first (the shrinker moves a code towards the front).
CODES: tuple[str | None, ...] = ("PPL", "PPLA", "PPLA2", "PPLA3", "PPLA4", "PPLC", "PPLX", None)

#: Populations drawn from (few values, so ties are common); None: the API gives none.
POPULATIONS: tuple[int | None, ...] = (None, 0, 1, 2, 95_647, 163_326, 429_260, 3_093_980)

#: City names: Chinese with and without 市, and other scripts.
CITIES = (
    "宁德", "通州", "长沙", "丽江", "北京", "呼和浩特", "厦门市", "宁德市", "乌鲁木齐市", "市",
    "Beijing", "São Paulo", "Москва", "東京", "서울", "Zürich",
)  # fmt: skip

#: The plainest cities the shrinker tries (one without 市, one with).
PLAIN_CITY, PLAIN_SHI_CITY = "甲", "甲市"


@dataclass(frozen=True)
class Candidate:
    """One generated geocoding candidate: its GeoNames ``code`` (None: no feature code), its
    ``population`` (None: missing), and whether it has coordinates."""

    code: str | None = "PPL"
    population: int | None = 0
    located: bool = True


@dataclass(frozen=True)
class Case:
    """A get_weather call on generated answers: ``city``, the geocoding answer for it
    (``first``) and for ``city + "市"`` (``retry``); an answer is a tuple of candidates in
    Open-Meteo's order, or None (nothing found: no ``results``)."""

    city: str
    first: tuple[Candidate, ...] | None
    retry: tuple[Candidate, ...] | None

    def answer(self, name: str) -> list[dict[str, Any]] | None:
        """The API's ``results`` for a query of ``name`` (None: nothing found)."""
        if name == self.city:
            found, label = self.first, "A"
        elif name == ref.retry_name(self.city):
            found, label = self.retry, "B"
        else:
            return None
        if found is None:
            return None
        out = []
        for i, c in enumerate(found):
            row: dict[str, Any] = {"id": i + 1, "name": name}
            if c.located:
                base = 10.0 if label == "A" else 40.0
                row |= {"latitude": base + i, "longitude": 100.0 + i}
            if c.code is not None:
                row["feature_code"] = c.code
            row |= {"country": "中国", "admin1": f"{label}{i + 1}"}
            if c.population is not None:
                row["population"] = c.population
            out.append(row)
        return out

    def __str__(self) -> str:
        parts = [f"{name} → {_answer_text(self.answer(name), name)}" for name in self.names]
        return f"get_weather({self.city}) with the geocoding answers {'; '.join(parts)}"

    @property
    def names(self) -> tuple[str, ...]:
        """The names a faithful get_weather may query (the city, and with 市 unless it ends
        in 市)."""
        if self.city.endswith(ref.SHI):
            return (self.city,)
        return (self.city, ref.retry_name(self.city))


def _answer_text(found: list[dict[str, Any]] | None, name: str) -> str:
    if not found:
        return "nothing found"
    return ", ".join(_candidate_text(c) for c in found)


def _candidate_text(c: Mapping[str, Any]) -> str:
    pop = c.get("population")
    notes = [f"population {pop:,}" if pop is not None else "no population"]
    if "latitude" not in c:
        notes.append("no coordinates")
    return f"{c['admin1']} {c.get('feature_code', 'no feature code')} ({', '.join(notes)})"


# ---- generation ------------------------------------------------------------------------------


def generate(seed: int = SEED, n: int = CASES) -> list[Case]:
    """``n`` cases drawn from ``random.Random(seed)``: the same list on every run."""
    rng = random.Random(seed)
    return [_case(rng) for _ in range(n)]


def _answer(rng: random.Random) -> tuple[Candidate, ...] | None:
    roll = rng.random()
    if roll < 0.12:
        return None
    if roll < 0.15:
        return ()  # "results": [] reads as nothing found too
    out: list[Candidate] = []
    for _ in range(rng.choice((1, 1, 2, 2, 2, 3, 3, 4, 5))):
        code = rng.choice(("PPL", "PPL", "PPLX", None, *ref.ADMIN_SEATS, "PPLA", "PPLA2"))
        if out and rng.random() < 0.35:
            population = rng.choice(out).population  # a tie
        else:
            population = rng.choice(POPULATIONS)
        out.append(Candidate(code, population, rng.random() > 0.06))
    return tuple(out)


def _case(rng: random.Random) -> Case:
    return Case(rng.choice(CITIES), _answer(rng), _answer(rng))


# ---- running the baseline on a case ----------------------------------------------------------


class OpenMeteoAnswers(BaseAdapter):
    """Answers the baseline's Open-Meteo requests from one :class:`Case`, in memory (honouring
    ``count``, as the API does), and logs them as :class:`OpenMeteoRequest`."""

    def __init__(self, case: Case) -> None:
        super().__init__()
        self.case = case
        self.log: list[OpenMeteoRequest] = []

    def send(  # type: ignore[override]  # the keyword arguments are not read
        self, request: Any, **kwargs: Any
    ) -> requests.Response:
        url = str(request.url)
        params = parse_qs(urlsplit(url).query, keep_blank_values=True)
        path = urlsplit(url).path
        status, body = 404, {"error": True, "reason": "not found"}
        if path.endswith("/search"):
            status, body = 200, {"generationtime_ms": 0.1}
            found = self.case.answer(params.get("name", [""])[0])
            try:
                count = int(params.get("count", ["10"])[0])
            except ValueError:
                count = 10
            if found is not None:
                body["results"] = found[: max(count, 0)]
        elif path.endswith("/forecast"):
            status, body = 200, _forecast(params)
        self.log.append(open_meteo_request(url, status, body, len(self.log)))
        response = requests.Response()
        response.status_code = status
        response._content = json.dumps(body, ensure_ascii=False).encode()
        response.headers["Content-Type"] = "application/json"
        response.url = url
        response.request = request
        response.encoding = "utf-8"
        return response

    def close(self) -> None:
        pass


def _forecast(params: Mapping[str, list[str]]) -> dict[str, Any]:
    """A forecast body for the point asked (its values do not matter to the place chosen)."""
    point = {k: float(params[k][0]) for k in ("latitude", "longitude") if k in params}
    return {
        **point,
        "timezone": "Asia/Shanghai",
        "current_units": {"time": "iso8601", "temperature_2m": "°C"},
        "current": {"time": "2026-09-17T12:00", "temperature_2m": 20.0},
        "daily_units": {"time": "iso8601", "temperature_2m_max": "°C"},
        "daily": {"time": ["2026-09-17"], "temperature_2m_max": [25.0]},
    }
