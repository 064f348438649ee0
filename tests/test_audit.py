"""The fidelity audit on the committed set, and the failures it must catch."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest
import yaml
from typer.testing import CliRunner

from toolreplay.audit.run import run_audit
from toolreplay.cassettes.manifest import SetDamaged, cassette_path, read_manifest
from toolreplay.cli.main import app
from toolreplay.judging.verdicts import FULL_JUDGE, NARROW_JUDGE

from .conftest import EVAL_FILE, REFERENCE, REPO
from .weakened import weakened_oneshot

CHECKS = [
    "baseline_heuristics",
    "baseline_properties",
    "ablation",
    "judge_breadth",
    "near_miss",
    "arm_parity",
    "completeness",
]


@pytest.fixture(scope="module")
def audit(suite, reference_episodes):
    return run_audit(REFERENCE, suite, FULL_JUDGE, episodes=reference_episodes)


def rows(table):
    return {r.name: (r.passed, r.total) for r in table.rows}


@pytest.mark.slow
def test_committed_set_passes_every_check(audit):
    assert [c.name for c in audit.checks] == CHECKS
    assert audit.passed, [c for c in audit.checks if not c.passed]
    for check in audit.checks:
        assert check.explanation and check.evidence


@pytest.mark.slow
def test_judge_breadth_reads_the_external_corpus_too(audit):
    """The answers in real models' styles count in judge_breadth beside the project's own, and
    a judge that rejects one of them fails the check naming that corpus."""
    check = audit.check("judge_breadth")
    assert "all 54 correct phrasings of phrasings-external.yaml" in check.explanation
    assert any("phrasings-external.yaml: 54 of 54" in e and "90 of 90 verdicts" in e
               for e in check.evidence)  # fmt: skip

    from toolreplay.audit.judges import corpus_breadth
    from toolreplay.evals import load_eval
    from toolreplay.judging.verdicts import narrowed

    celsius_sign_only = narrowed(FULL_JUDGE, ["℃", "度", "摄氏度"])
    ok, text, _ = corpus_breadth(load_eval(EVAL_FILE), celsius_sign_only)
    assert not ok and "phrasings-external.yaml" in text and "phrasings.yaml" in text


@pytest.mark.slow
def test_both_tables(audit):
    assert rows(audit.tables["faithful"]) == {
        "single+oneshot": (4, 4),
        "loop+oneshot": (4, 4),
        "single+atomic": (0, 4),
        "loop+atomic": (4, 4),
    }
    assert rows(audit.tables["near_miss"]) == {
        "single+oneshot": (2, 4),
        "loop+oneshot": (3, 4),
        "single+atomic": (0, 4),
        "loop+atomic": (3, 4),
    }


def test_ablation_flips_only_ningde_without_shi_retry(audit):
    flips = {a.configuration: a.flips for a in audit.ablations}
    assert [f.model_dump(by_alias=True, exclude_unset=True)
            for f in flips["single+oneshot-no_shi_retry"] or ()] == [
        {"question_id": "ningde", "from": True, "to": False}
    ]  # fmt: skip
    assert all(not f for c, f in flips.items() if c != "single+oneshot-no_shi_retry")
    by_config = {a.configuration: a.passed for a in audit.ablations}
    assert by_config["single+oneshot-no_shi_retry"] == 3


def test_each_heuristic_is_exercised(audit):
    check = audit.check("baseline_heuristics")
    evidence = "\n".join(check.evidence)
    assert "shi_retry: acted in 2 recorded episode(s)" in evidence
    assert "re-queried 宁德市" in evidence
    assert "preferred 北京 (北京市 PPLC)" in evidence
    # honest about what decided: on these questions only the 市 retry changes the place chosen
    assert "changed the place chosen in 2 (loop+oneshot/ningde, single+oneshot/ningde:" in evidence
    changed = 'get_weather({"city": "宁德"}) returned 宁德市 (福建省 PPLA2) with it, 宁德 (西藏'
    assert changed in evidence
    assert "admin_seat: acted in 6" in evidence and "changed the place chosen in 0" in evidence
    assert "only shi_retry changed the place chosen" in check.explanation


def test_narrow_judge_flips_the_rain_question(audit):
    assert {(f.configuration, f.question_id) for f in audit.judge_flips} == {
        ("single+oneshot", "shanghai-rain"),
        ("loop+oneshot", "shanghai-rain"),
        ("loop+atomic", "shanghai-rain"),
    }


@pytest.mark.slow
def test_baseline_without_shi_retry_fails_the_baseline_check(suite):
    weakened = replace(
        suite, experiment=replace(suite.experiment, baseline=("admin_seat", "population_order"))
    )
    result = run_audit(REFERENCE, weakened, FULL_JUDGE)
    assert not result.passed
    check = result.check("baseline_heuristics")
    assert not check.passed and "shi_retry" in check.explanation
    # the recorded baseline no longer matches what the weakened code sends
    assert not result.check("completeness").passed
    row = next(r for r in result.tables["faithful"].rows if r.name == "single+oneshot")
    assert row.total == 4 and (row.missing or 0) >= 1  # not hidden from the table


def test_narrow_judge_fails_judge_breadth(suite, reference_episodes):
    result = run_audit(REFERENCE, suite, NARROW_JUDGE, episodes=reference_episodes)
    check = result.check("judge_breadth")
    assert not check.passed
    assert "shanghai-rain (precipitation)" in check.explanation
    assert result.check("baseline_heuristics").passed


@pytest.mark.slow
def test_stale_system_prompt_fails_completeness_with_the_rerecord_command(suite):
    changed = replace(suite, system_prompt_template=suite.system_prompt_template + "。")
    check = run_audit(REFERENCE, changed, FULL_JUDGE).check("completeness")
    assert not check.passed
    assert "toolreplay record --model-source stand-in --set reference" in check.explanation
    assert any("system prompt" in e for e in check.evidence)


@pytest.mark.slow
def test_arm_parity_reads_recorded_bodies(suite, tmp_path):
    dest = tmp_path / "reference"
    shutil.copytree(REFERENCE, dest)
    path = cassette_path(dest, "loop+atomic", "beijing")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for interaction in data["interactions"]:
        body = interaction["request"].get("parsed_body")
        if isinstance(body, dict) and "temperature" in body:
            body["temperature"] = 0.7
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    check = run_audit(dest, suite, FULL_JUDGE).check("arm_parity")
    assert not check.passed and "temperature" in check.explanation
    assert any("0.7 in loop+atomic" in e for e in check.evidence)


@pytest.mark.slow
def test_missing_ablation_cassette_fails(suite, reference_episodes, tmp_path):
    dest = tmp_path / "reference"
    shutil.copytree(REFERENCE, dest)
    (cassette_path(dest, "single+oneshot-no_shi_retry", "ningde")).unlink()
    # The manifest lists it, its file is gone: the set is damaged before anything replays.
    with pytest.raises(SetDamaged, match=r"file is missing: single\+oneshot-no_shi_retry/ningde"):
        run_audit(dest, suite, FULL_JUDGE, episodes=reference_episodes)


@pytest.mark.slow
def test_audit_command_exit_codes():
    runner = CliRunner()
    common = ["--eval", str(EVAL_FILE), "--cassettes", str(REPO / "cassettes")]
    ok = runner.invoke(app, ["audit", *common])
    assert ok.exit_code == 0, ok.output
    for name in CHECKS:
        assert f"PASS {name}" in ok.output
    assert "near-miss" in ok.output and "2/4" in ok.output
    bad = runner.invoke(app, ["audit", *common, "--narrow-judge"])
    assert bad.exit_code == 1
    assert "FAIL judge_breadth" in bad.output


@pytest.mark.slow
def test_edited_cassette_fails_completeness(suite, tmp_path):
    dest = tmp_path / "reference"
    shutil.copytree(REFERENCE, dest)
    path = cassette_path(dest, "loop+atomic", "ningde")
    text = path.read_text(encoding="utf-8")
    assert "最高 30.2°C" in text
    path.write_text(text.replace("最高 30.2°C", "最高 99.2°C"), encoding="utf-8")
    check = run_audit(dest, suite, FULL_JUDGE).check("completeness")
    assert not check.passed and "1 cassette(s) edited since recording" in check.explanation
    assert any("loop+atomic/ningde" in e and "edited" in e for e in check.evidence)


@pytest.mark.slow
def test_retry_lost_in_code_is_caught_from_the_recorded_traffic(
    suite, tmp_path, loopback, monkeypatch
):
    """The study's near-miss made in code, not config: get_weather silently loses the 市
    retry, the set is re-recorded, and the audit must notice from the cassettes alone."""
    import toolreplay.study.weather.toolsets as experiment
    from toolreplay.runs.configuration import study_configurations
    from toolreplay.runs.record import record_stand_in

    real = experiment.make_toolset

    def without_retry(name, client, heuristics=None):
        if heuristics is not None:
            heuristics = heuristics.without("shi_retry")
        return real(name, client, heuristics)

    monkeypatch.setattr(experiment, "make_toolset", without_retry)
    oneshot = [c for c in study_configurations(suite) if c.toolset == "oneshot"]
    record_stand_in(tmp_path / "reference", suite, oneshot)
    monkeypatch.setattr(experiment, "make_toolset", real)
    check = run_audit(tmp_path / "reference", suite, FULL_JUDGE).check("baseline_heuristics")
    assert not check.passed
    # the reference says the retry was due: the baseline is at fault, not the eval file
    assert "shi_retry ×2" in check.explanation
    assert (
        "single+oneshot/ningde: get_weather(宁德) sent no 市 retry, but the reference re-queries "
        "宁德市 after picking 宁德 (西藏自治区 PPL) (not an admin seat)" in check.explanation
    )
    assert "never acted" not in check.explanation
    assert "shi_retry: acted in no recorded episode" in check.evidence


def _edit_requests(path, edit):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for interaction in data["interactions"]:
        body = interaction["request"].get("parsed_body")
        if isinstance(body, dict) and "messages" in body:
            edit(body)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


@pytest.mark.slow
def test_arm_parity_catches_different_tool_descriptions(suite, tmp_path):
    dest = tmp_path / "reference"
    shutil.copytree(REFERENCE, dest)

    def edit(body):
        for tool in body.get("tools", []):
            tool["function"]["description"] += "（旧版）"

    _edit_requests(cassette_path(dest, "single+atomic", "beijing"), edit)
    check = run_audit(dest, suite, FULL_JUDGE).check("arm_parity")
    assert not check.passed and "atomic tool descriptions" in check.explanation


@pytest.mark.slow
def test_arm_parity_catches_a_different_question_set(suite, tmp_path):
    dest = tmp_path / "reference"
    shutil.copytree(REFERENCE, dest)

    def edit(body):
        for m in body["messages"]:
            if m["role"] == "user":
                m["content"] = "深圳今天多少度？"

    _edit_requests(cassette_path(dest, "loop+oneshot", "beijing"), edit)
    check = run_audit(dest, suite, FULL_JUDGE).check("arm_parity")
    assert not check.passed and "question set" in check.explanation


@pytest.mark.slow
def test_changed_tool_schema_makes_the_set_stale(suite, monkeypatch):
    from toolreplay.study.weather.toolsets import GET_WEATHER_BY_COORDS_SCHEMA

    fn = GET_WEATHER_BY_COORDS_SCHEMA["function"]
    monkeypatch.setitem(fn, "description", fn["description"] + "。")
    result = run_audit(REFERENCE, suite, FULL_JUDGE)
    check = result.check("completeness")
    assert not check.passed and "the set is stale" in check.explanation
    assert any("atomic tool schemas" in e for e in check.evidence)


@pytest.mark.slow
def test_near_miss_is_not_called_faithful_when_the_judge_is_too_narrow(suite, reference_episodes):
    result = run_audit(REFERENCE, suite, NARROW_JUDGE, episodes=reference_episodes)
    near = result.check("near_miss")
    assert not near.passed and "not" in near.evidence[0]


# ---- outcomes, not traffic -------------------------------------------------------------------


def test_an_ablation_without_effect_is_reported_and_explained(audit):
    evidence = "\n".join(audit.check("ablation").evidence)
    for name in ("single+oneshot-no_admin_seat", "loop+oneshot-no_population_order"):
        line = next(e for e in audit.check("ablation").evidence if e.startswith(name))
        assert "ablation had no effect on any question" in line
        assert "expected: on these questions' recorded geocoding answers" in line
    assert "single+oneshot-no_shi_retry: 3/4; flips: ningde pass→fail" in evidence
    no_effect = {a.configuration: a.no_effect for a in audit.ablations}
    assert no_effect["single+oneshot-no_shi_retry"] is False
    assert no_effect["loop+oneshot-no_admin_seat"] is True


def _discarding_retry(real):
    """get_weather whose 市 retry still sends the second query but throws its result away."""
    return weakened_oneshot(real, keep_retry=False)


@pytest.mark.slow
def test_a_retry_that_discards_its_result_fails_the_audit(suite, tmp_path, loopback, monkeypatch):
    """The mutation the traffic cannot show: the 市 query is sent, its answer is thrown away.
    Re-recorded with the stand-in, single+oneshot drops to 3/4 and `toolreplay audit` exits 1
    naming the checks that read the returned places."""
    import toolreplay.study.weather.toolsets as toolsets
    from toolreplay.runs.configuration import ablation_configurations, study_configurations
    from toolreplay.runs.record import record_stand_in

    monkeypatch.setattr(toolsets, "oneshot_toolset", _discarding_retry(toolsets.oneshot_toolset))
    study = study_configurations(suite)
    oneshot = [c for c in study if c.toolset == "oneshot"]
    record_stand_in(tmp_path / "reference", suite, [*oneshot, *ablation_configurations(suite)])
    set_dir = tmp_path / "reference"
    manifest = json.loads((set_dir / "manifest.json").read_text(encoding="utf-8"))
    committed = json.loads((REFERENCE / "manifest.json").read_text(encoding="utf-8"))
    for c in study:  # the atomic arms do not use get_weather: the committed ones stand
        if c.toolset == "atomic":
            for q in suite.questions:  # their first trials, entered in the set's manifest
                key, name = f"{c.name}/{q.id}", f"{c.name}/{q.id}.yaml"
                (set_dir / c.name).mkdir(exist_ok=True)
                shutil.copy(cassette_path(REFERENCE, c.name, q.id), set_dir / name)
                manifest["episodes"][key] = {**committed["episodes"][key], "cassette": name}
    (set_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    out = CliRunner().invoke(app, ["audit", "--eval", str(EVAL_FILE), "--cassettes", str(tmp_path)])
    assert out.exit_code == 1, out.output
    assert "FAIL baseline_heuristics" in out.output
    assert "FAIL ablation" in out.output
    assert "fidelity audit failed: baseline_heuristics, baseline_properties, ablation" in out.output

    result = run_audit(tmp_path / "reference", suite, FULL_JUDGE)
    assert rows(result.tables["faithful"])["single+oneshot"] == (3, 4)
    # on generated answers too: the retry's answer (甲市) thrown away, named shi_retry
    generated = result.check("baseline_properties").explanation
    assert "naming shi_retry: shi_retry (the baseline, " in generated
    assert "(the 市 retry's answer (甲市) was not used)" in generated
    check = result.check("baseline_heuristics")
    assert (
        "get_weather(宁德) returned 宁德 (西藏自治区 PPL), but the reference heuristics pick "
        "宁德市 (福建省 PPLA2) from the geocoding answers recorded for it (the 市 retry's answer "
        "(宁德市) was not used)" in check.explanation
    )
    # named: every departure is the retry's, in the full and in the ablated baselines alike
    departures = [e for e in check.evidence if e.startswith("unfaithful:")]
    assert departures and all(e.startswith("unfaithful: shi_retry: ") for e in departures)
    assert any("single+oneshot-no_admin_seat/ningde" in e for e in departures)
    assert "shi_retry ×" in check.explanation
    shi = next(e for e in check.evidence if e.startswith("shi_retry:"))
    assert "changed the place chosen in 0" in shi  # never claimed from the traffic alone
    line = next(e for e in result.check("ablation").evidence if "single+oneshot-no_shi_retry" in e)
    assert "ablation had no effect on any question" in line and "unexpected" in line
    assert result.check("completeness").passed  # the recording itself is consistent


@pytest.mark.slow
def test_narrowing_the_temperature_units_fails_judge_breadth(monkeypatch):
    from toolreplay.judging import verdicts
    from toolreplay.judging.verdicts import GROUNDED_JUDGE, narrowed

    celsius_sign_only = narrowed(GROUNDED_JUDGE, ["℃", "度", "摄氏度"])
    # `toolreplay audit` imports its judge when it runs: replace it where it is looked up
    monkeypatch.setattr(verdicts, "FULL_JUDGE", celsius_sign_only)
    out = CliRunner().invoke(
        app, ["audit", "--eval", str(EVAL_FILE), "--cassettes", str(REPO / "cassettes")]
    )
    assert out.exit_code == 1, out.output
    assert "FAIL judge_breadth" in out.output
    assert "fidelity audit failed: judge_breadth" in out.output  # (near_miss follows from it)
    assert "rejects '北京现在 26.1℃。' (℃)" in out.output
    assert "rejects '北京现在26度。' (度)" in out.output
    assert "rejects '北京现在 26 摄氏度。' (摄氏度)" in out.output
    # every recorded answer still passes (the stand-in writes °C): only the corpus catches it
    faithful = "faithful: single+oneshot 4/4, loop+oneshot 4/4, single+atomic 0/4, loop+atomic 4/4"
    assert faithful in out.output


@pytest.mark.slow
def test_a_live_label_on_a_stand_in_recording_fails_completeness(suite, tmp_path):
    import json

    dest = tmp_path / "reference"
    shutil.copytree(REFERENCE, dest)
    manifest = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    manifest["provenance"] = "live"
    (dest / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False), "utf-8")
    check = run_audit(dest, suite, FULL_JUDGE).check("completeness")
    assert not check.passed
    assert "the manifest says provenance live, but model toolreplay-standin" in check.explanation


@pytest.mark.slow
def test_a_changed_stand_in_hint_makes_the_set_stale(suite):
    from toolreplay.runs.configuration import fingerprint, stale_parts

    ningde = suite.question("ningde")
    quiet = replace(ningde, hints={"narrates_followups": False})  # the study's block says so
    changed = replace(suite, questions=tuple(quiet if q.id == "ningde" else q
                                             for q in suite.questions))  # fmt: skip
    assert fingerprint(suite)["settings"]["standin_hints"]["ningde"] == {"narrates_followups": True}
    manifest = read_manifest(REFERENCE)
    assert stale_parts(manifest, suite) == []
    assert stale_parts(manifest, changed) == [
        "stand-in hints ningde.narrates_followups (True → False)"
    ]
    check = run_audit(REFERENCE, changed, FULL_JUDGE).check("completeness")
    assert not check.passed and "the set is stale" in check.explanation
    # a live set does not depend on the stand-in's hints
    live = manifest.model_copy(update={"provenance": "live"})
    assert stale_parts(live, changed) == []
