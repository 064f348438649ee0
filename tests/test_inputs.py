"""Bad input ends in one clear error naming the file, the place and what is wrong; never a
traceback, never gigabytes, and a damaged cassette is not mistaken for a cassette miss."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.manifest import read_manifest
from toolreplay.cassettes.store import CassetteDamaged, load_cassette
from toolreplay.cli.main import app
from toolreplay.evals import EvalFileError, load_eval
from toolreplay.runs.configuration import Configuration
from toolreplay.runs.replay import replay_set

from .conftest import EVAL_FILE, REFERENCE

CASSETTE = "loop+atomic/ningde/trial-1.yaml"  # the reference set holds 5 trials


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def one_line(text: str) -> str:
    return " ".join(text.split())


# ---- eval files -----------------------------------------------------------------------------


def test_eval_file_with_a_non_utf8_byte(tmp_path):
    data = EVAL_FILE.read_bytes()
    cut = data.index(b"\n", data.index(b"\n") + 1) + 5  # line 3, column 5
    bad = tmp_path / "weather.yaml"
    bad.write_bytes(data[:cut] + b"\xff" + data[cut + 1 :])
    result = run("run", "--eval", str(bad), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert f"{bad}: eval file is not UTF-8 text: byte 0xff at line 3, column 5" in one_line(
        result.output
    )
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_eval_naming_a_folder(tmp_path):
    result = run("run", "--eval", str(tmp_path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert f"{tmp_path}: is a folder; expected the eval file itself" in one_line(result.output)


def test_oversized_eval_file_is_refused_unread(tmp_path, monkeypatch):
    import toolreplay.evals.load as evals

    monkeypatch.setattr(evals, "EVAL_FILE_LIMIT", 100)
    with pytest.raises(EvalFileError, match="larger than 100 bytes"):
        load_eval(EVAL_FILE)


# ---- cassettes ------------------------------------------------------------------------------


def copy_set(tmp_path: Path) -> Path:
    dest = tmp_path / "reference"
    shutil.copytree(REFERENCE, dest)
    return dest


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_truncated_inside_usage_is_damage_not_a_miss_at_every_cut(suite, tmp_path):
    dest = copy_set(tmp_path)
    path = dest / CASSETTE
    data = path.read_bytes()
    recorded = read_manifest(REFERENCE).episodes["loop+atomic/ningde"].cassette_sha256
    start = data.rindex(b"usage:")
    end = data.index(b"\n", data.index(b"total_tokens", start))
    for cut in range(start, end):
        path.write_bytes(data[:cut])
        with pytest.raises(CassetteDamaged, match="edited or damaged since recording"):
            load_cassette(path, recorded)
        try:  # without the manifest: a clean error naming the file, or a loadable file
            load_cassette(path)
        except CassetteError as exc:
            assert str(exc).startswith(f"{path}: ")
    path.write_bytes(data[: data.index(b"prompt_tokens", start) + 5])
    with pytest.raises(CassetteDamaged) as info:  # replay: damage, never a miss or a crash
        replay_set(dest, suite, [Configuration("loop", "atomic")])
    assert "edited or damaged since recording" in str(info.value)
    assert "cassette miss" not in str(info.value)


@pytest.mark.slow
def test_a_damaged_cassette_is_reported_as_such_by_run(tmp_path):
    dest = copy_set(tmp_path)
    path = dest / CASSETTE
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b"completion_tokens") + 5])  # inside usage
    result = run(
        "run", "--eval", str(EVAL_FILE), "--cassettes", str(tmp_path), "--out", str(tmp_path / "o")
    )
    assert result.exit_code == 1
    text = one_line(result.output)
    assert f"{path}: edited or damaged since recording" in text
    assert "it also fails to load: not valid YAML" in text
    assert "cassette miss" not in text and "re-record if intended" not in text.lower()
    assert "--only loop+atomic/ningde" in text


def test_an_edited_cassette_is_not_a_miss(suite, tmp_path):
    dest = copy_set(tmp_path)
    path = dest / CASSETTE
    path.write_text(path.read_text(encoding="utf-8").replace("宁德", "宁得", 1), encoding="utf-8")
    load_cassette(path)  # still a well-formed cassette...
    with pytest.raises(CassetteDamaged) as info:  # ...but not the one recorded
        replay_set(dest, suite, [Configuration("loop", "atomic")])
    assert "edited or damaged since recording" in str(info.value)
    assert "cassette miss" not in str(info.value)


BOMB = {
    "a": ["lol"] * 9,
}


def bomb_yaml(levels: int = 9) -> str:
    lines = ['        a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"        a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines)


def test_a_yaml_alias_bomb_costs_milliseconds(tmp_path):
    path = copy_set(tmp_path) / CASSETTE
    text = path.read_text(encoding="utf-8")
    # inside the first response body: 9 levels of 9 aliases, 387 million strings if expanded
    marker = "    body:\n      parsed_body:\n"
    at = text.index(marker, text.index("  response:")) + len(marker)
    path.write_text(text[:at] + bomb_yaml() + "\n" + text[at:], encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(CassetteError) as info:
        load_cassette(path)
    assert time.perf_counter() - started < 2
    assert re.search(
        r"not valid YAML: YAML alias to the node anchored at line \d+, column \d+: cassettes "
        r"may not use anchors or aliases",
        str(info.value),
    )
    with pytest.raises(CassetteDamaged, match="anchors or aliases"):  # replay says both
        load_cassette(path, read_manifest(REFERENCE).episodes["loop+atomic/ningde"]
                      .cassette_sha256)  # fmt: skip


def test_a_single_alias_is_refused_too(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(
        "version: 1\ninteractions:\n- request: &r {method: GET, uri: 'http://h/p', headers: {},"
        " body: null}\n  response: {status: {code: 200, message: OK}, headers: {}, body:"
        " {string: ''}}\n- request: *r\n  response: {status: {code: 200, message: OK},"
        " headers: {}, body: {string: ''}}\n",
        encoding="utf-8",
    )
    with pytest.raises(CassetteError, match="line 3, column 12: cassettes may not use"):
        load_cassette(path)


def rewrite(path: Path, data: dict) -> None:
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def at(*keys):
    def get(data):
        node = data
        for key in keys[:-1]:
            node = node[key]
        return node, keys[-1]

    return get


REPLY = ("interactions", 0, "response", "body", "parsed_body")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        (at("version"), 2, "version: Input should be 1"),
        (at("extra"), 1, "extra: Extra inputs are not permitted"),
        (at("interactions", 0, "request", "uri"), 5, "interaction 1: request.uri"),
        (at("interactions", 0, "request", "method"), "", "interaction 1: request.method"),
        (at("interactions", 0, "request", "headers", "x"), "v", "request.headers.x"),
        (at("interactions", 0, "request", "body"), "x", "needs exactly one of 'body'"),
        (at("interactions", 0, "response", "status", "message"), None, "status.message"),
        (at("interactions", 0, "response", "status", "code"), 99, "status.code"),
        (at("interactions", 0, "response", "headers"), {"a": [1]}, "response.headers.a.0"),
        (at("interactions", 0, "response", "body", "string"), "x", "exactly one of 'string'"),
        (at(*REPLY, "created"), float("nan"), "created: nan is not a JSON number"),
        (at(*REPLY, "usage", "when"), {1: 2}, "usage.when: key 1 is not a string"),
        (at("interactions", 0, "request", "parsed_body", 7), "x", "key 7 is not a string"),
    ],
)
def test_every_cassette_field_is_validated(tmp_path, where, value, expected):
    path = copy_set(tmp_path) / CASSETTE
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    node, key = where(data)
    node[key] = value
    rewrite(path, data)
    with pytest.raises(CassetteError) as info:
        load_cassette(path)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)


def test_a_yaml_date_in_a_body_is_not_json(tmp_path):
    path = copy_set(tmp_path) / CASSETTE
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("      model: ", "      day: 2026-09-17\n      model: ", 1),
                    encoding="utf-8")  # fmt: skip
    with pytest.raises(CassetteError, match=r"parsed_body\.day: a YAML date, not a JSON value"):
        load_cassette(path)


def test_cassette_that_is_a_folder_or_too_big(tmp_path, monkeypatch):
    import toolreplay.cassettes.store as cassettes

    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(CassetteError, match="is a folder; expected the cassette itself"):
        load_cassette(tmp_path / "dir.yaml")
    monkeypatch.setattr(cassettes, "CASSETTE_LIMIT", 1000)
    with pytest.raises(CassetteError, match="larger than 1,000 bytes"):
        load_cassette(REFERENCE / CASSETTE)


def test_manifest_errors_name_the_file(tmp_path):
    dest = copy_set(tmp_path)
    (dest / "manifest.json").write_bytes(b'{"format": 1, "x": "\xff"}')
    with pytest.raises(CassetteError, match=r"manifest.json: manifest is not UTF-8 text: byte "
                                            r"0xff at line 1, column 21"):  # fmt: skip
        read_manifest(dest)
    (dest / "manifest.json").unlink()
    (dest / "manifest.json").mkdir()
    with pytest.raises(CassetteError, match="is a folder; expected the manifest itself"):
        read_manifest(dest)


def test_recording_into_an_unwritable_place_fails_before_any_request(suite, tmp_path):
    from toolreplay.runs.record import record_stand_in
    from toolreplay.runs.target import RecordingError

    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(RecordingError, match=r"recording into .* failed: .*; the set was not"):
        record_stand_in(tmp_path / "file" / "set", suite, [Configuration("loop", "atomic")])


def test_the_committed_cassettes_all_load():
    manifest = read_manifest(REFERENCE)
    for key, record in manifest.episodes.items():
        assert load_cassette(REFERENCE / record.cassette, record.cassette_sha256), key
    assert json.loads(json.dumps(copy.deepcopy(BOMB)))  # the test data itself is plain JSON
