"""The stand-in model's reply is a function of the request body (with the set's seed and the
trial) alone."""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache

from toolreplay.cassettes.manifest import cassette_path, read_manifest
from toolreplay.cassettes.store import read_cassette
from toolreplay.study.weather.standin import StandinPolicy

from .conftest import REFERENCE


@cache
def model_interactions() -> tuple:
    """``(configuration, trial, request, response)`` of every recorded model interaction
    (read once per session: the set holds every trial)."""
    return tuple(_model_interactions())


def _model_interactions():
    for key, record in sorted(read_manifest(REFERENCE).episodes.items()):
        config, _, rest = key.partition("/")
        trial = int(rest.rpartition("/trial-")[2]) if "/trial-" in rest else 1
        for i in read_cassette(REFERENCE / record.cassette):
            if i["request"]["uri"].endswith("/chat/completions"):
                body = i["response"]["body"]["parsed_body"]
                yield config, trial, i["request"]["parsed_body"], body


def canon(body) -> str:
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def test_same_request_gets_the_same_reply_whichever_host_sent_it():
    replies = defaultdict(set)
    configs = defaultdict(set)
    for config, trial, request, response in model_interactions():
        replies[(trial, canon(request))].add(canon(response))
        configs[(trial, canon(request))].add(config.split("+")[0])
    shared = [k for k, hosts in configs.items() if hosts == {"single", "loop"}]
    # the single and loop hosts send identical requests in rounds 1-2: there must be many
    assert len(shared) >= 16
    for key in shared:
        assert len(replies[key]) == 1, "one request body, two different replies"


def test_policy_reproduces_every_recorded_reply_from_the_body_alone(suite):
    seed = read_manifest(REFERENCE).seed
    policies: dict[int, StandinPolicy] = {}
    count = 0
    for _config, trial, request, response in model_interactions():
        policy = policies.setdefault(trial, StandinPolicy(suite, seed=seed, trial=trial))
        assert policy.reply(request) == response
        count += 1
    assert count > 80


def test_single_atomic_second_request_is_the_loops_second_request():
    def bodies(config: str) -> list[str]:
        path = cassette_path(REFERENCE, config, "beijing")
        return [
            canon(i["request"]["parsed_body"])
            for i in read_cassette(path)
            if i["request"]["uri"].endswith("/chat/completions")
        ]

    single, loop = bodies("single+atomic"), bodies("loop+atomic")
    assert single == loop[:2]


def test_withheld_tools_without_data_yields_no_numbers(suite):
    question = suite.question("beijing")
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": question.text},
        ],
    }
    reply = StandinPolicy(suite).reply(body)["choices"][0]["message"]
    assert "tool_calls" not in reply
    assert not any(ch.isdigit() for ch in reply["content"])
