"""The fidelity section: checks in plain words, glossary, the near-miss table and ablation flips."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolreplay.report.labels import toolset_labels
from toolreplay.report.summary import ordered_names, pass_status, split_configuration_name
from toolreplay.report.text import mixed_script_html, plural_of
from toolreplay.results.format import Fidelity

#: Plain-words title and lead sentence per fidelity check (what it asks, before the result);
#: a study's :attr:`~toolreplay.studies.Study.fidelity_checks` say it in its own terms.
CHECKS: dict[str, tuple[str, str]] = {
    "baseline_heuristics": (
        "Is the baseline the reference's best version?",
        "The baseline toolset must keep every heuristic of the reference, and each must be "
        "seen acting in the recorded tool traffic.",
    ),
    "ablation": (
        "What does each heuristic contribute?",
        "The baseline is replayed with one heuristic switched off at a time (an ablation); "
        "the table shows which questions then change verdict.",
    ),
    "judge_breadth": (
        "Is the judge as broad as the questions?",
        "Every question's measure must be accepted by the judge in use; a narrower judge is "
        "run alongside to show what it would miss.",
    ),
    "near_miss": (
        "What would a sloppier comparison have shown?",
        "The faithful table stands next to the one a weakened baseline and a narrow judge "
        "give: the near miss this audit guards against.",
    ),
    "arm_parity": (
        "Did every configuration get the same conditions?",
        "Model, sampling settings, system prompt, questions, round cap and tool descriptions "
        "are read from the recorded requests and must match across configurations.",
    ),
    "completeness": (
        "Is every episode recorded, current and fully replayed?",
        "Every configuration × question needs a cassette whose every interaction is played, "
        "unchanged since recording, made with today's prompt and tool schemas.",
    ),
}


#: Terms the fidelity section uses, explained once (a study's
#: :attr:`~toolreplay.studies.Study.glossary` replaces it).
GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "heuristics",
        "the named rules of the baseline toolset that a configuration may switch off.",
    ),
    (
        "ablation",
        "the same baseline replayed with one heuristic switched off, to see what that "
        "heuristic changes.",
    ),
    (
        "judge breadth",
        "whether the judge accepts every kind of measured value the questions ask for.",
    ),
    (
        "near miss",
        "the table a less careful study would have published: a weakened baseline judged by "
        "a narrow judge.",
    ),
    (
        "arm parity",
        "every configuration (arm) ran under the same model, prompt, settings and questions.",
    ),
)


#: The checks' words on a set recorded by the pytest plugin (some checks not applicable):
#: what each check that applies asks of such a set; the study's terms are left out.
SUITE_FOLDER_CHECKS: dict[str, tuple[str, str]] = {
    **{name: (title, "") for name, (title, _lead) in CHECKS.items()},
    "judge_breadth": (
        "Is the judge as broad as the questions?",
        "Every question's measure, the study's or one the eval file declares, must be "
        "accepted by the judge in use.",
    ),
    "arm_parity": (
        "Did every configuration get the same conditions?",
        "Model, temperature, system prompt and tool schemas are read from each test module's "
        "recorded requests and must match across configurations.",
    ),
    "completeness": (
        "Is every episode recorded and unchanged?",
        "Every question needs an episode in every configuration, every cassette must read, "
        "and each must be unchanged since the set's manifest was written.",
    ),
}


def _texts() -> tuple[dict[str, tuple[str, str]], tuple[tuple[str, str], ...]]:
    """The checks' words and the glossary: the engine's, in the study's terms where it has
    them (the only installed study's; the engine's alone when that cannot be told)."""
    from toolreplay.studies import StudyError, load_study

    try:
        study = load_study()
    except StudyError:
        return CHECKS, GLOSSARY
    return {**CHECKS, **study.fidelity_checks}, tuple(study.glossary) or GLOSSARY


_IN_ZERO = re.compile(r"changed the place chosen in 0\b")


_IN_N = re.compile(r"changed the place chosen in (\d+)\b")


_PLURAL_S = re.compile(r"\b(\d+) ((?:[a-z_]+ )?)([a-z]+)\(s\)")


def _plain(evidence: str) -> str:
    """Audit evidence in plain words: "changed the place chosen in 0" → "never changed the
    place chosen"; "6 episode(s)" → "6 episodes"."""
    text = _IN_ZERO.sub("never changed the place chosen", evidence)
    text = _IN_N.sub(
        lambda m: f"changed the place chosen in {plural_of(int(m.group(1)), 'episode')}", text
    )
    text = _PLURAL_S.sub(
        lambda m: (
            m.group(1) + " " + m.group(2) + plural_of(int(m.group(1)), m.group(3)).split(" ")[1]
        ),
        text,
    )
    return text


def _score_sign(a: str, b: str) -> int:
    """Sign of ``a - b`` for two ``passed/total`` scores, compared as fractions."""

    def frac(x: str) -> float:
        p, _, t = x.partition("/")
        return int(p) / int(t) if t and int(t) else 0.0

    return (frac(a) > frac(b)) - (frac(a) < frac(b))


def _near_miss(tables: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The faithful and near-miss tables side by side (rows differing marked) and the
    takeaway in words; None unless both tables are present."""
    by_key = {t["key"]: t for t in tables}
    faithful, near = by_key.get("faithful"), by_key.get("near_miss")
    if faithful is None or near is None:
        return None
    near_rows = {r["name"]: r for r in near["rows"]}
    rows = []
    for r in faithful["rows"]:
        n = near_rows.get(r["name"])
        rows.append(
            {
                "name": r["name"],
                "faithful": f"{r['passed']}/{r['total']}",
                "faithful_status": r["status"],
                "near": "–" if n is None else f"{n['passed']}/{n['total']}",
                "near_status": "empty" if n is None else n["status"],
                "differs": n is not None and (n["passed"], n["total"]) != (r["passed"], r["total"]),
            }
        )
    # per toolset: would the near miss have ordered the single and loop hosts differently?
    scores = {r["name"]: r for r in rows}
    claims, named = [], set()
    for toolset in ordered_names(
        (p[1] for p in map(split_configuration_name, scores) if p), toolset_labels()
    ):
        s, lp = scores.get(f"single+{toolset}"), scores.get(f"loop+{toolset}")
        if not s or not lp:
            continue
        before = _score_sign(lp["faithful"], s["faithful"])
        after = _score_sign(lp["near"], s["near"])
        if before == after:
            continue
        named |= {s["name"], lp["name"]}
        seems = {
            1: "the loop would have seemed to win",
            -1: "the single host would have seemed to win",
            0: "the two hosts would have seemed level",
        }[after]
        claims.append(
            f"single+{toolset} {s['near']} against loop+{toolset} {lp['near']}, where the "
            f"faithful run gives {s['faithful']} against {lp['faithful']}: {seems} with the "
            f"{toolset} toolset"
        )
    others = [
        f"{r['name']} {r['faithful']} → {r['near']}"
        for r in rows
        if r["differs"] and r["name"] not in named
    ]
    if claims:
        takeaway = (
            "A sloppier baseline and a narrower judge would have scored " + "; ".join(claims) + "."
        )
    else:
        takeaway = "The weakened baseline and narrow judge would not have changed which host wins."
    if others:
        takeaway += " Also changed: " + ", ".join(others) + "."
    return {
        "titles": (faithful["title"], near["title"]),
        "rows": rows,
        "takeaway": takeaway,
    }


def fidelity_view(fidelity: Fidelity | None) -> dict[str, Any] | None:
    """None when the audit has not run (no ``fidelity`` key); else checks (each with its
    plain-words title and lead, and the table that belongs to it), tables, ablations."""
    if fidelity is None:
        return None
    words, glossary = _texts()
    found = fidelity.checks or []
    if any(c.not_applicable for c in found):
        # a set recorded by the pytest plugin: no study baseline, so none of its terms
        words = SUITE_FOLDER_CHECKS
        glossary = tuple(g for g in GLOSSARY if g[0] in ("judge breadth", "arm parity"))
    tables = [
        {
            "key": key,
            "title": key if t.title is None else t.title,
            "rows": [{**r.model_dump(), "status": pass_status(r.passed, r.total)} for r in t.rows],
        }
        for key, t in (fidelity.tables or {}).items()
    ]
    ablations = [
        {
            "heuristic": a.heuristic,
            "configuration": a.configuration,
            "passed": a.passed,
            "total": a.total,
            "status": pass_status(a.passed, a.total),
            # dicts: the template reads a flip's "from", a Python keyword
            "flips": [f.model_dump(by_alias=True) for f in a.flips or []],
        }
        for a in fidelity.ablations or []
    ]
    near = _near_miss(tables)
    names = {c.name for c in found}
    checks = []
    for c in found:
        title, lead = words.get(c.name, (c.name.replace("_", " "), ""))
        attach = None
        if c.name == "ablation" and ablations:
            attach = "ablations"
        elif c.name == "near_miss" and near is not None:
            attach = "near_miss"
        checks.append(
            {
                "name": c.name,
                "title": title,
                "lead": mixed_script_html(lead),
                "passed": c.passed,
                "not_applicable": bool(c.not_applicable),
                # the near-miss explanation only restates its table's numbers
                "explanation": "" if attach == "near_miss" else _plain(c.explanation or ""),
                # the ablation evidence only restates its table's rows
                "evidence": []
                if attach == "ablations"
                else [mixed_script_html(_plain(e)) for e in c.evidence or []],
                "attach": attach,
            }
        )
    shown = {"faithful", "near_miss"} if "near_miss" in names and near is not None else set()
    return {
        "checks": checks,
        "checks_passed": sum(1 for c in checks if c["passed"]),
        "checks_not_applicable": sum(1 for c in checks if c["not_applicable"]),
        "tables": [t for t in tables if t["key"] not in shown],
        "near_miss": near,
        "ablations": ablations,
        "ablations_shown": "ablation" in names,
        "glossary": [{"term": t, "text": mixed_script_html(x)} for t, x in glossary],
    }
