"""A report at any size: past :data:`~toolreplay.report.render.TABLE_ROWS` table rows the episode
table and the question matrix go on a page of their own (``index-episodes.html``) on every path
that writes a report, so a 2,500-episode report page stays under 2 MB with its pieces linked;
and a smaller run written into the same folder removes the pages the previous report left
there, only ours (the generator marker, linked from the previous page), never a user's file."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.report import render
from toolreplay.report.render import (
    GENERATOR,
    TABLE_ROWS,
    report_pages,
    splits_table,
    stale_pages,
    table_rows,
    write_report,
)

from .conftest import with_summaries

RESULTS = Path(__file__).resolve().parents[1] / "reports" / "results.json"
TRIAL_FIELDS = ("trials", "trial_outcomes", "trial_episodes", "selection", "mutation")


def committed() -> dict[str, Any]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def many_episodes(questions: int) -> dict[str, Any]:
    """The committed reference set's trial-1 episodes repeated as ``questions`` questions × its
    configurations, each question id and text its own; the transcripts cut to the question and
    the answer (fast to render: the page's size is in its table, not its transcripts)."""
    doc = committed()
    for k in TRIAL_FIELDS:
        doc.pop(k, None)
    base = {(e["configuration"], e["question_id"]): e for e in doc["episodes"]}
    ids = list(dict.fromkeys(e["question_id"] for e in doc["episodes"]))
    episodes = []
    for n in range(questions):
        for c in doc["configurations"]:
            ep = copy.deepcopy(base[(c["name"], ids[n % len(ids)])])
            ep["question_id"], ep["question"] = f"q{n:04d}", f"{ep['question']} ({n})"
            ep["transcript"] = [m for m in ep["transcript"] if m["role"] in ("user",)]
            ep["transcript"].append({"role": "assistant", "content": ep["answer"]})
            for f in ep.get("failure_modes") or []:
                f["evidence"] = None
            ep.pop("grounding", None)
            episodes.append(ep)
    doc["episodes"] = episodes
    for c in doc["configurations"]:
        c.pop("questions", None)
    return with_summaries(doc)


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,500 episodes written by ``toolreplay report``: the folder."""
    doc = many_episodes(2500 // len(committed()["configurations"]))
    assert len(doc["episodes"]) == 2500
    folder = tmp_path_factory.mktemp("huge")
    (folder / "results.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    result = CliRunner().invoke(app, ["report", "--results", str(folder)])
    assert result.exit_code == 0, result.output
    assert "index-episodes.html" in result.output
    return folder


def test_2500_episode_page_is_under_2_mb_with_its_pieces_linked(huge: Path) -> None:
    page_bytes = (huge / "index.html").read_bytes()
    assert len(page_bytes) < 2_000_000
    page = BeautifulSoup(page_bytes.decode("utf-8"), "html5lib")
    # the table and matrix are linked, not here; the summary, gallery and audit still are
    assert page.select_one("#episode-table") is None and page.select_one("table.matrix") is None
    assert page.select_one("#episodes a[href='index-episodes.html']") is not None
    assert page.select_one("#chains a[href='index-episodes.html#chains']") is not None
    assert page.select_one("#episodes a[href='index-episodes.csv']") is not None
    assert page.select_one("#transcripts a[href='index-transcripts.html']") is not None
    for section in ("verdict", "failures", "metrics", "fidelity"):
        assert page.select_one(f"#{section}") is not None
    # the episodes page: every row, the filter bar, the links back and into the transcripts
    rows_page = (huge / "index-episodes.html").read_text(encoding="utf-8")
    assert GENERATOR in rows_page[:4096]
    body = rows_page[rows_page.index('<table class="episodes" id="episode-table">') :]
    body = body[: body.index("</table>")]
    assert body.count("<tr data-c=") == 2500
    assert 'id="filters"' in rows_page and 'href="index.html"' in rows_page
    linked = set(re.findall(r'href="index-transcripts\.html#([^"]+)"', body))
    assert len(linked) == 2500
    transcripts = (huge / "index-transcripts.html").read_text(encoding="utf-8")
    assert linked <= set(re.findall(r' id="([^"]+)"', transcripts))
    assert '<table class="matrix compact">' in rows_page
    assert rows_page.count('<tr class="question" data-q=') == 2500 // 4
    # the CSV holds every row too
    assert len((huge / "index-episodes.csv").read_text(encoding="utf-8").splitlines()) == 2501


def test_every_writer_splits_by_table_rows_later_trials_included() -> None:
    small = many_episodes(10)
    assert not splits_table(small) and "index-episodes.html" not in report_pages(
        small, "index.html"
    )
    # 300 episodes of 4 trials: 1,200 rows, the table's and so the split's measure
    doc = many_episodes(75)
    doc["trials"] = 4
    doc["trial_outcomes"] = [
        {"configuration": e["configuration"], "question_id": e["question_id"], "trial": t,
         "passed": e["passed"], "failure_modes": e.get("modes") or []}
        for e in doc["episodes"] for t in (1, 2, 3, 4)
    ]  # fmt: skip
    assert table_rows(doc) == 1200 > TABLE_ROWS
    pages = report_pages(doc, "report.html")
    assert list(pages)[:2] == ["report-transcripts.html", "report-episodes.html"]
    assert splits_table(doc)


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Thresholds the committed results (16 episodes) pass: both side pages written."""
    monkeypatch.setattr(render, "TABLE_ROWS", 10)
    monkeypatch.setattr(render, "LARGE_RUN", 10)
    return monkeypatch


def _results(tmp_path: Path) -> Path:
    doc = committed()
    for k in TRIAL_FIELDS:
        doc.pop(k, None)
    src = tmp_path / "results.json"
    src.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return src


def test_a_smaller_run_removes_the_pages_the_previous_report_left(
    tmp_path: Path, small_thresholds: pytest.MonkeyPatch
) -> None:
    src = _results(tmp_path)
    out = write_report(src, tmp_path / "index.html")
    sides = [tmp_path / "index-transcripts.html", tmp_path / "index-episodes.html"]
    assert all(p.is_file() for p in sides)
    small_thresholds.undo()
    write_report(src, out)
    assert not any(p.exists() for p in sides)
    assert out.is_file() and (tmp_path / "index-episodes.csv").is_file()


def test_the_cli_paths_remove_them_too(
    tmp_path: Path, small_thresholds: pytest.MonkeyPatch
) -> None:
    from toolreplay.cli.common import write_outputs

    doc = json.loads(_results(tmp_path).read_text(encoding="utf-8"))
    write_outputs(tmp_path, doc)
    assert (tmp_path / "index-episodes.html").is_file()
    small_thresholds.undo()
    result = CliRunner().invoke(app, ["report", "--results", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "index-episodes.html").exists()
    assert not (tmp_path / "index-transcripts.html").exists()


def test_never_a_file_that_is_not_ours(
    tmp_path: Path, small_thresholds: pytest.MonkeyPatch
) -> None:
    src = _results(tmp_path)
    out = write_report(src, tmp_path / "index.html")
    # a user's file in place of one side page; the other linked one is ours
    user = tmp_path / "index-transcripts.html"
    user.write_text("<html><body>my notes</body></html>\n", encoding="utf-8")
    small_thresholds.undo()
    doc = json.loads(src.read_text(encoding="utf-8"))
    assert stale_pages(out, report_pages(doc, "index.html")) == [tmp_path / "index-episodes.html"]
    write_report(src, out)
    assert user.read_text(encoding="utf-8") == "<html><body>my notes</body></html>\n"
    assert not (tmp_path / "index-episodes.html").exists()


def test_not_removed_when_the_previous_page_did_not_link_it(tmp_path: Path) -> None:
    src = _results(tmp_path)
    # ours by its marker, but no report here linked it (e.g. copied in by hand)
    side = tmp_path / "index-episodes.html"
    side.write_text(f"<!DOCTYPE html><html><head>{GENERATOR}</head></html>\n", encoding="utf-8")
    write_report(src, tmp_path / "index.html")
    write_report(src, tmp_path / "index.html")
    assert side.is_file()


def test_the_pages_of_a_report_share_one_view_and_read_as_if_each_built_its_own(
    small_thresholds: pytest.MonkeyPatch,
) -> None:
    """The report, its episodes page and its transcripts page are built from one view of the
    results (building it three times was seconds at 10,000 episodes); each page is byte for
    byte what it is when built alone."""
    import io

    doc = committed()
    for k in TRIAL_FIELDS:
        doc.pop(k, None)
    calls = []
    real = render.build_page

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs.get("table", True))
        return real(*args, **kwargs)

    small_thresholds.setattr(render, "build_page", counted)
    pages = render.report_pages(doc, "index.html")
    assert {"index.html", "index-transcripts.html", "index-episodes.html"} <= set(pages)
    shared = {}
    for name, write in pages.items():
        buffer = io.StringIO()
        write(buffer)
        shared[name] = buffer.getvalue()
    assert len(calls) == 1
    alone = {  # each page as it is built on its own (no shared view)
        "index-transcripts.html": lambda w: render.stream_transcripts(doc, w, "index.html"),
        "index-episodes.html": lambda w: render.stream_episodes(
            doc, w, "index.html", "index-transcripts.html", {"csv": "index-episodes.csv"}
        ),
        "index.html": lambda w: render.stream_report(
            doc,
            w,
            None,
            "index-transcripts.html",
            {"csv": "index-episodes.csv"},
            "index-episodes.html",
        ),
    }
    for name, build in alone.items():
        buffer = io.StringIO()
        build(buffer.write)
        assert buffer.getvalue() == shared[name], name


def test_the_transcripts_page_needs_only_its_own_part_of_the_view(
    small_thresholds: pytest.MonkeyPatch,
) -> None:
    """The transcripts page (written by another process beside the run) is built from its own
    part of the view (``transcripts_page_view``: the same values as the whole view's), so it
    need not wait for the whole view; the same bytes as when built alone."""
    import io

    doc = committed()
    results = render.as_results(doc)
    whole = render.build_page(results)
    view = render.transcripts_page_view(results)
    def plain(v: dict[str, Any]) -> dict[str, Any]:  # transcripts are made as they are read
        groups = [{**g, "episodes": list(g["episodes"])} for g in v["transcripts"]]
        return {**v, "transcripts": groups}

    assert plain(view) == plain({k: whole[k] for k in view})
    alone = io.StringIO()
    render.stream_transcripts(doc, alone.write, "index.html")

    def refused(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("the whole view was built for the transcripts page")

    small_thresholds.setattr(render, "build_page", refused)
    pages = render.report_pages(doc, "index.html")  # builds nothing yet
    buffer = io.StringIO()
    pages["index-transcripts.html"](buffer)
    assert buffer.getvalue() == alone.getvalue()


def test_every_path_written_is_printed_on_one_line_however_narrow_the_output(
    small_thresholds: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A path is there to be copied: never folded, whatever the console's width (a width set
    when the console was made, by ``COLUMNS`` or a narrow pipe)."""
    from toolreplay.cli import common

    small_thresholds.setattr(common.out, "width", 40)
    folder = tmp_path / ("a-long-folder-name-" * 4)
    folder.mkdir()
    _results(folder)
    result = CliRunner().invoke(app, ["report", "--results", str(folder / "results.json")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for name in ("index.html", "index-transcripts.html", "index-episodes.html"):
        assert f"wrote {folder / name}" in lines, result.output
