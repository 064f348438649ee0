"""``toolreplay convert`` on cassettes vcrpy stored as the server sent them: a reply body still
compressed (``!!binary`` under ``Content-Encoding``) is stored decoded and the header dropped,
for every coding the wire readers decode; one that cannot be decoded keeps its header beside
it; header values stored as bytes are text; the converted file is refused, and nothing
written, when its episodes as the wire readers read them differ from the original's; and in a
folder, a file that cannot be converted is named with its reason while the others are
converted (exit 1)."""

from __future__ import annotations

import gzip
import sys
import types
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from toolreplay.cassettes import convert as convert_module
from toolreplay.cassettes.convert import convert_file
from toolreplay.cassettes.episodes import episodes_from_cassette
from toolreplay.cassettes.errors import CassetteError
from toolreplay.cassettes.store import load_cassette
from toolreplay.cli.main import app
from toolreplay.inputs import load_yaml
from toolreplay.wire.interactions import header_text

FOREIGN = Path(__file__).parent / "data" / "foreign"
#: Future-House/ldp (f0a29f1) tests/cassettes/TestReActAgent.test_multi_step[False].yaml:
#: vcrpy's yaml, six gzip replies stored as ``!!binary`` under ``Content-Encoding: gzip``.
LDP_GZIP = FOREIGN / "ldp-react-gzip.yaml"
#: crewAIInc/crewAI (f4731f5025f8) lib/crewai/tests/cassettes/agents/
#: TestBedrockNativeToolCalling.test_bedrock_parallel_native_tool_calling_test_agent_kickoff
#: .yaml: botocore's request ``Content-Type`` stored as bytes (``!!binary``).
CREWAI_BYTES = FOREIGN / "crewai-bedrock-binary-header.yaml"


def _read(path: Path) -> list[tuple[int, str, str]]:
    return [(len(e.rounds), e.stop_reason, e.answer) for e in episodes_from_cassette(path)]


def test_a_gzip_cassette_converts_to_the_same_episodes(tmp_path: Path) -> None:
    """Future-House/ldp ``tests/cassettes/TestReActAgent.test_multi_step[False].yaml``: the
    converter used to keep the gzip bytes and drop ``Content-Encoding``, so the converted
    file read as no round and an error ("the body is not valid JSON ... '\\x1f\\x8b...'")
    where the original reads six rounds ending ``max_rounds``."""
    original = LDP_GZIP.read_bytes()
    assert _read(LDP_GZIP)[0][:2] == (6, "max_rounds")
    run = CliRunner().invoke(app, ["convert", str(LDP_GZIP), "--out", str(tmp_path)])
    assert run.exit_code == 0, run.output
    converted = tmp_path / LDP_GZIP.name
    text = converted.read_text(encoding="utf-8")
    assert "!!binary" not in text and "content-encoding" not in text.lower()
    replies = [i["response"]["body"] for i in load_cassette(converted)]
    assert all("parsed_body" in body for body in replies)  # JSON, stored parsed
    assert episodes_from_cassette(converted) == episodes_from_cassette(LDP_GZIP)
    assert _read(converted)[0][:2] == (6, "max_rounds")
    assert LDP_GZIP.read_bytes() == original  # --out: the original untouched


def test_a_gzip_cassette_converts_in_place(tmp_path: Path) -> None:
    copy = tmp_path / "ldp.yaml"
    copy.write_bytes(LDP_GZIP.read_bytes())
    run = CliRunner().invoke(app, ["convert", str(copy)])
    assert run.exit_code == 0, run.output
    assert "!!binary" not in copy.read_text(encoding="utf-8")
    assert episodes_from_cassette(copy) == episodes_from_cassette(LDP_GZIP)


def _fake_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """``brotli`` and ``compression.zstd`` stand-ins (zlib underneath), so the br and zstd
    paths run where the real modules are not installed."""
    brotli = types.ModuleType("brotli")
    brotli.decompress = zlib.decompress  # type: ignore[attr-defined]
    compression = types.ModuleType("compression")
    zstd = types.ModuleType("compression.zstd")
    zstd.ZstdDecompressor = zlib.decompressobj  # type: ignore[attr-defined]
    for name, module in (
        ("brotli", brotli),
        ("compression", compression),
        ("compression.zstd", zstd),
    ):
        monkeypatch.setitem(sys.modules, name, module)


_ENCODE = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": zlib.compress,  # the stand-in brotli
    "zstd": zlib.compress,  # the stand-in zstd
}


def _recoded(coding: str) -> dict[str, Any]:
    """The ldp cassette with each reply body re-encoded with ``coding`` (a comma-separated
    chain, applied in order) under that ``Content-Encoding``."""
    data = load_yaml(LDP_GZIP.read_text(encoding="utf-8"))
    for item in data["interactions"]:
        response = item["response"]
        body = gzip.decompress(response["body"]["string"])
        for one in coding.split(", "):
            body = _ENCODE[one](body)
        response["body"]["string"] = body
        response["headers"]["Content-Encoding"] = [coding]
    return data


@pytest.mark.parametrize("coding", ["gzip", "x-gzip", "deflate", "br", "zstd", "deflate, gzip"])
def test_every_coding_the_reader_decodes_is_decoded(
    coding: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_modules(monkeypatch)
    source = tmp_path / "source.yaml"
    source.write_text(yaml.safe_dump(_recoded(coding)), encoding="utf-8")
    assert _read(source)[0][:2] == (6, "max_rounds")
    target = tmp_path / "out" / "converted.yaml"
    assert convert_file(source, target) == 6
    text = target.read_text(encoding="utf-8")
    assert "!!binary" not in text and "content-encoding" not in text
    assert episodes_from_cassette(target) == episodes_from_cassette(source)


def test_a_body_that_cannot_be_decoded_keeps_its_header(tmp_path: Path) -> None:
    """A coding the reader does not know, on bytes that are not text: body and header are
    kept together, so the converted file reads (and replays) as the original."""
    data = _recoded("gzip")
    for item in data["interactions"]:
        item["response"]["headers"]["Content-Encoding"] = ["compress"]
    source = tmp_path / "source.yaml"
    source.write_text(yaml.safe_dump(data), encoding="utf-8")
    target = tmp_path / "converted.yaml"
    convert_file(source, target)
    for item in load_cassette(target):
        assert item["response"]["headers"]["content-encoding"] == ["compress"]
        assert isinstance(item["response"]["body"]["string"], bytes)
    assert [e.faults for e in episodes_from_cassette(target)] == [
        e.faults for e in episodes_from_cassette(source)
    ]


def test_a_conversion_that_changes_the_episodes_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The converter's own check: with the body left encoded and its header dropped (what
    the converter once did), the episodes differ, and nothing is written, in place or not."""
    monkeypatch.setattr(convert_module, "_decoded", lambda string, encodings: (string, True))
    copy = tmp_path / "ldp.yaml"
    copy.write_bytes(LDP_GZIP.read_bytes())
    target = tmp_path / "out" / "ldp.yaml"
    with pytest.raises(CassetteError, match="would not read the same episodes") as caught:
        convert_file(copy, target)
    assert "6 rounds ending max_rounds" in str(caught.value)
    assert "0 rounds ending error" in str(caught.value)
    assert not target.exists()
    run = CliRunner().invoke(app, ["convert", str(copy)])
    assert run.exit_code == 1
    assert "would not read the same episodes" in run.output
    assert copy.read_bytes() == LDP_GZIP.read_bytes()


def test_header_values_stored_as_bytes_are_text(tmp_path: Path) -> None:
    """crewAI's ``agents/TestBedrockNativeToolCalling.test_bedrock_parallel_native_tool_
    calling_test_agent_kickoff.yaml`` (crewAIInc/crewAI ``lib/crewai/tests/cassettes``):
    ``Content-Type: - !!binary YXBwbGljYXRpb24vanNvbg==`` used to stop the conversion
    ("request.headers.content-type.0: Input should be a valid string")."""
    assert b"!!binary" in CREWAI_BYTES.read_bytes()
    run = CliRunner().invoke(app, ["convert", str(CREWAI_BYTES), "--out", str(tmp_path)])
    assert run.exit_code == 0, run.output
    converted = tmp_path / CREWAI_BYTES.name
    for item in load_cassette(converted):
        assert item["request"]["headers"] == {"content-type": ["application/json"]}
    assert episodes_from_cassette(converted) == episodes_from_cassette(CREWAI_BYTES)
    assert header_text(b"application/json") == "application/json"
    assert header_text(b"caf\xe9") == "café"  # not UTF-8: Latin-1


def test_a_folder_converts_every_file_it_can_and_names_the_others(tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "a-not-a-cassette.yaml").write_text("interactions: [1]\n", encoding="utf-8")
    (folder / "b.yaml").write_bytes(CREWAI_BYTES.read_bytes())
    (folder / "c.yaml").write_bytes(LDP_GZIP.read_bytes())
    out = tmp_path / "out"
    run = CliRunner().invoke(app, ["convert", str(folder), "--out", str(out)])
    assert run.exit_code == 1
    assert f"skipped {folder / 'a-not-a-cassette.yaml'}: interaction 1: not a mapping" in (
        run.output
    )
    assert "1 of 3 cassettes not converted" in run.output
    assert sorted(p.name for p in out.iterdir()) == ["b.yaml", "c.yaml"]
    assert f"wrote {out / 'c.yaml'} (6 interactions)" in run.output
    # in place, the file that failed is left as it was and the others are converted
    run = CliRunner().invoke(app, ["convert", str(folder)])
    assert run.exit_code == 1
    assert (folder / "a-not-a-cassette.yaml").read_text(encoding="utf-8") == (
        "interactions: [1]\n"
    )
    assert "!!binary" not in (folder / "c.yaml").read_text(encoding="utf-8")
