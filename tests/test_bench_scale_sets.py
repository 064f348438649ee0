"""The scale generator (``benchmarks/scale_sets.py``) without recording: 5,000 distinct
questions (10,000 episodes over its two configurations), every one about places the fixture
server answers for, the same list on every call and every prefix the start of the longer list;
the eval file it writes loads as an eval file of that many questions; and the merge of sets
recorded in parts (one per recording process) joins cassettes and manifests in the order one
recording of the whole eval file writes them."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
FIXTURE_DATA = REPO / "src" / "toolreplay" / "study" / "weather" / "data" / "open_meteo.yaml"


@pytest.fixture(scope="module")
def scale_sets() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scale_sets", REPO / "benchmarks/scale_sets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["scale_sets"] = module
    spec.loader.exec_module(module)
    return module


def _identity(q: dict) -> tuple:
    return (q["measure"], q["day"], q["text"], tuple(p["query"] for p in q["places"]))


def test_ten_thousand_episodes_of_distinct_questions(scale_sets: ModuleType) -> None:
    assert scale_sets.MAX_QUESTIONS * scale_sets.CONFIGURATIONS >= 10_000
    made = scale_sets.questions(5000)
    assert len(made) == 5000
    assert len({q["id"] for q in made}) == 5000
    assert len({q["text"] for q in made}) == 5000  # no two questions worded alike
    assert len({_identity(q) for q in made}) == 5000
    known = set(yaml.safe_load(FIXTURE_DATA.read_text(encoding="utf-8"))["search"])
    asked = {p["query"] for q in made for p in q["places"]}
    assert asked <= known, asked - known
    assert asked == {p[0] for p in scale_sets.PLACES}  # all 12 places used
    for q in made:
        names = [p["query"] for p in q["places"]]
        assert len(set(names)) == len(names)
        assert all(name in q["text"] for name in names), q
        assert (q["measure"] == "comparison") == (len(names) > 1)
    sizes = [len(q["places"]) for q in made]
    assert set(sizes) == {1, 2, 3}


def test_deterministic_and_prefixes(scale_sets: ModuleType) -> None:
    full = scale_sets.questions(5000)
    assert scale_sets.questions(5000) == full
    assert scale_sets.questions(500) == full[:500]
    assert scale_sets.questions(1250) == full[:1250]
    # every prefix mixes one, two and three places much as the whole list does
    share = {n: sum(len(q["places"]) == 3 for q in full[:n]) / n for n in (500, 1250, 5000)}
    assert max(share.values()) - min(share.values()) < 0.05, share


def test_at_most_max_questions(scale_sets: ModuleType) -> None:
    assert len(scale_sets.questions(scale_sets.MAX_QUESTIONS)) == scale_sets.MAX_QUESTIONS
    with pytest.raises(ValueError, match="at most"):
        scale_sets.questions(scale_sets.MAX_QUESTIONS + 1)


@pytest.mark.slow  # loading 5,000 questions: ~5 s
def test_generated_eval_loads(
    scale_sets: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolreplay.evals import load_eval
    from toolreplay.runs.configuration import ablation_configurations, study_configurations

    monkeypatch.setattr(scale_sets, "CACHE", tmp_path)
    path = scale_sets.generated_eval(5000)
    assert path == tmp_path / "evals" / "scale-x5000.yaml"
    assert (path.parent / "phrasings.yaml").is_file()
    before = path.stat().st_mtime_ns
    assert scale_sets.generated_eval(5000) == path
    assert path.stat().st_mtime_ns == before  # unchanged text: not written again
    suite = load_eval(path)
    assert len(suite.questions) == 5000
    configs = [*study_configurations(suite), *ablation_configurations(suite)]
    assert len(configs) == scale_sets.CONFIGURATIONS
    assert len(configs) * len(suite.questions) == 10_000


def _part(folder: Path, qids: list[str], configs: list[str]) -> None:
    episodes = {}
    for c in configs:
        for q in qids:
            cassette = f"{c}/{q}.yaml"
            (folder / c).mkdir(parents=True, exist_ok=True)
            (folder / cassette).write_text(f"{c} {q}\n", encoding="utf-8")
            episodes[f"{c}/{q}"] = {"cassette": cassette, "wall_time_s": 0.1}
    manifest = {
        "format": 1,
        "cassette_set": folder.name,
        "model": "toolreplay-standin",
        "eval_file": f"{folder.name}.yaml",
        "settings": {"temperature": 0.0, "standin_hints": {q: {"n": q} for q in qids}},
        "episodes": episodes,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_merge_parts(scale_sets: ModuleType, tmp_path: Path) -> None:
    order = ["g001", "g002", "g003", "g004", "g005"]
    configs = ["loop+oneshot", "loop+atomic"]
    parts = [tmp_path / "s.part-1-of-2", tmp_path / "s.part-2-of-2"]
    _part(parts[0], order[0::2], configs)
    _part(parts[1], order[1::2], configs)
    into = tmp_path / "s"
    scale_sets.merge_parts(parts, into, tmp_path / "s.yaml", order)
    merged = json.loads((into / "manifest.json").read_text(encoding="utf-8"))
    assert list(merged["episodes"]) == [f"{c}/{q}" for c in configs for q in order]
    assert list(merged["settings"]["standin_hints"]) == order
    assert merged["settings"]["temperature"] == 0.0
    assert merged["cassette_set"] == "s"
    for c in configs:
        for q in order:
            assert (into / c / f"{q}.yaml").read_text(encoding="utf-8") == f"{c} {q}\n"


def test_merge_refuses_parts_of_different_recordings(
    scale_sets: ModuleType, tmp_path: Path
) -> None:
    parts = [tmp_path / "a", tmp_path / "b"]
    _part(parts[0], ["g001"], ["loop+atomic"])
    _part(parts[1], ["g002"], ["loop+atomic"])
    other = json.loads((parts[1] / "manifest.json").read_text(encoding="utf-8"))
    other["model"] = "another-model"
    (parts[1] / "manifest.json").write_text(json.dumps(other), encoding="utf-8")
    with pytest.raises(ValueError, match="model"):
        scale_sets.merge_parts(parts, tmp_path / "s", tmp_path / "s.yaml", ["g001", "g002"])
