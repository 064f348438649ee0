"""``results.json``'s fast writer gives the standard library's bytes: ``json.dumps(document,
ensure_ascii=False, indent=2)`` is the reference, on generated documents (every JSON type,
escapes, non-ASCII, big and odd numbers, keys of other types), on every committed results file,
and in its refusals."""

from __future__ import annotations

import enum
import io
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolreplay.cli.common import write_json
from toolreplay.results.json_text import write_indented

REPO = Path(__file__).resolve().parents[1]


def _text(document, batch: int = 4096) -> str:
    pieces: list[str] = []
    write_indented(document, pieces.append, batch)
    return "".join(pieces)


def _reference(document) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2)


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([1e-5, 1e-7, 1.5e16, 1e22, -0.0, 5e-324, 0.1, 100.0])
    | st.text()
    | st.text(alphabet=st.sampled_from('"\\\n\r\t\b\f\x00\x1f\x7f\u2028é中🙂 '))
)
_keys = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
_documents = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=5)
    | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(_documents, st.integers(min_value=1, max_value=50))
def test_the_bytes_of_json_dumps(document, batch):
    assert _text(document, batch) == _reference(document)


def test_every_committed_results_file_is_written_back_byte_for_byte():
    files = sorted(REPO.glob("reports/**/results.json")) + sorted(
        REPO.glob("examples/*/report/results.json")
    )
    assert len(files) >= 5
    for path in files:
        text = path.read_text(encoding="utf-8")
        out = io.StringIO()
        write_json(json.loads(text), out, batch=7)
        assert out.getvalue() == text, path


class Colour(enum.IntEnum):
    RED = 1


class Name(str, enum.Enum):  # noqa: UP042 (a str mixin, as older code writes it)
    A = "a"


class Floaty(float):
    def __repr__(self) -> str:
        return "not this"


def test_subclasses_are_written_as_their_base_type_as_the_standard_encoder_does():
    document = {"n": Colour.RED, "s": Name.A, "f": Floaty(2.5), Name.A: [Colour.RED]}
    assert _text(document) == _reference(document)
    assert _text([math.nan, math.inf, -math.inf]) == "[\n  NaN,\n  Infinity,\n  -Infinity\n]"


@pytest.mark.parametrize("bad", [{"a": object()}, [{1j: 1}], {(1, 2): 3}, {"a": {1, 2}}])
def test_what_the_standard_encoder_refuses_is_refused(bad):
    with pytest.raises(TypeError) as reference:
        _reference(bad)
    with pytest.raises(TypeError) as ours:
        _text(bad)
    assert str(ours.value) == str(reference.value)


def test_the_text_is_written_in_pieces_never_whole():
    document = {"episodes": [{"id": i, "answer": "x" * 10} for i in range(5000)]}
    pieces: list[str] = []
    write_indented(document, pieces.append, batch=64)
    assert len(pieces) > 100
    assert max(map(len, pieces)) < 2000
    assert "".join(pieces) == _reference(document)


def test_a_run_and_a_report_of_its_results_file_show_the_same_arguments(tmp_path: Path) -> None:
    """A model's arguments may hold ``NaN`` or ``Infinity`` (Python's JSON reader takes them):
    results.json writes them as null, and the run's pages, rendered from its results in
    memory, show them as the report of that results.json does."""
    from toolreplay.cli.common import write_outputs
    from toolreplay.report.render import report_pages
    from toolreplay.results.format import as_results, load_results

    document = json.loads((REPO / "examples/stock_agent/report/results.json").read_text("utf-8"))
    episode = next(e for e in document["episodes"] if e.get("calls"))
    call = episode["calls"][0]
    call["arguments"] = {**call["arguments"], "qty": math.nan, "more": [math.inf, 1]}
    assert as_results(document).episodes[0].calls is not None
    write_outputs(tmp_path, document)
    again = load_results(tmp_path / "results.json")
    written = json.loads((tmp_path / "results.json").read_text("utf-8"))
    shown = next(e for e in written["episodes"] if e["question_id"] == episode["question_id"]
                 and e["configuration"] == episode["configuration"])  # fmt: skip
    assert shown["calls"][0]["arguments"]["qty"] is None
    assert shown["calls"][0]["arguments"]["more"] == [None, 1]
    out = io.StringIO()
    report_pages(again, "index.html", results_href="results.json")["index.html"](out)
    assert (tmp_path / "index.html").read_text(encoding="utf-8") == out.getvalue()
