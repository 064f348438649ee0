"""Compare two runs: what changed between two results files or two cassette sets.

``toolreplay diff A B`` and ``toolreplay report --compare A`` use this module. A *run* is a
results document (``reports/results.json``, see :mod:`toolreplay.results`); a cassette set
(a folder with ``manifest.json``) is replayed and judged first, which also gives the
manifest's hashes of the system prompt template and tool schemas.

The comparison is per episode, keyed by ``(configuration, question_id)``:

* pass/fail **flips** (the verdict changed);
* failure modes gained or lost;
* rounds and tool-call deltas, stop-reason changes;
* the first message where the two transcripts differ;

per configuration, the trials each run recorded, the passes in trial 1 and over every trial,
and the regressions (pass → fail) and improvements (fail → pass) of trial 1; and, for the
runs as a whole, whether they are **comparable**: the same questions, system
prompt, tool schemas and judge (otherwise which of them differ). A flip between runs that are
not comparable may come from that difference rather than from the model or host. Runs that
recorded different numbers of trials are compared on trial 1 (the episodes), and their
over-trials rates are shown but not compared (:attr:`RunDiff.trial_note`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolreplay.paired import Paired, paired_outcomes
from toolreplay.results.format import ConfigurationSummary, Results, as_results
from toolreplay.transcript_diff import MessageDifference, first_difference

__all__ = [
    "Aspect",
    "DiffError",
    "EpisodeChange",
    "MessageDifference",
    "Run",
    "RunDiff",
    "Score",
    "diff_runs",
    "load_run",
    "trial_count",
]


class DiffError(ValueError):
    """A path that is neither a results file nor a cassette set, or one that cannot be read
    or replayed; the message names the path."""


@dataclass(frozen=True)
class Run:
    """One side of a comparison. ``results`` is a results document
    (:class:`~toolreplay.results.format.Results`; a mapping given here is validated into one,
    :class:`~toolreplay.results.format.ResultsError` when it does not validate);
    ``fingerprint`` holds the manifest's ``system_prompt_sha256``, ``tool_schemas_sha256`` and
    ``settings`` when the run was replayed from a cassette set (None for a results file, which
    does not record them)."""

    label: str
    results: Results
    fingerprint: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        # a results dict still built by a caller (the run pipeline, the plugin): typed once here
        object.__setattr__(self, "results", as_results(self.results))


@dataclass(frozen=True)
class Aspect:
    """One thing both runs must share to be comparable. ``same`` is None when it cannot be
    told from the inputs (e.g. tool schemas of results files); ``a``/``b`` describe each side
    in a few words. ``required`` is False for what is shown but does not make two runs
    incomparable (the model: comparing a re-recording with the reference is the point)."""

    name: str
    same: bool | None
    a: str = ""
    b: str = ""
    required: bool = True


@dataclass(frozen=True)
class Score:
    """A configuration's passed/total in each run: ``a`` (``–`` when run A lacks the
    configuration) and ``b`` as ``"passed/total"`` of trial 1 (the episodes); ``changed`` when
    they differ. ``trials`` is the trials per question each run recorded (0: the run lacks the
    configuration); ``over_trials`` the passes over every trial as ``(passes, trials run)`` per
    run (``(0, 0)`` when it lacks the configuration); ``regressions``/``improvements`` count
    its episodes that went pass → fail / fail → pass in trial 1; ``paired`` the paired test of
    B against A over the questions both ran (:mod:`toolreplay.paired`; None when none)."""

    name: str
    a: str
    b: str
    changed: bool
    trials: tuple[int, int] = (1, 1)
    over_trials: tuple[tuple[int, int], tuple[int, int]] = ((0, 0), (0, 0))
    regressions: int = 0
    improvements: int = 0
    paired: Paired | None = None

    @property
    def rates(self) -> tuple[float | None, float | None]:
        """The share of trials passed in each run, in [0, 1] (None when it ran none)."""
        return tuple(p / n if n else None for p, n in self.over_trials)  # type: ignore[return-value]


@dataclass(frozen=True)
class EpisodeChange:
    """What changed in one episode between run A and run B.

    ``passed`` is ``(a, b)``; ``gained``/``lost`` are failure-mode names (B has, A had);
    ``rounds``/``tool_calls`` are ``(a, b)`` counts; ``first_difference`` is the first
    differing transcript message (None when the transcripts are equal)."""

    configuration: str
    question_id: str
    question: str
    passed: tuple[bool, bool]
    gained: tuple[str, ...]
    lost: tuple[str, ...]
    rounds: tuple[int, int]
    tool_calls: tuple[int, int]
    stop_reason: tuple[str, str]
    first_difference: MessageDifference | None
    answer: tuple[str, str]

    @property
    def key(self) -> str:
        return f"{self.configuration}/{self.question_id}"

    @property
    def flipped(self) -> bool:
        return self.passed[0] != self.passed[1]


@dataclass(frozen=True)
class RunDiff:
    """The comparison of run ``a`` (before) with run ``b`` (after)."""

    a: str
    b: str
    aspects: tuple[Aspect, ...]
    changes: tuple[EpisodeChange, ...]
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    scores: tuple[Score, ...] = field(default_factory=tuple)
    trials: tuple[int, int] = (1, 1)

    @property
    def comparable(self) -> bool:
        return all(x.same is not False for x in self.aspects if x.required)

    @property
    def differing(self) -> list[str]:
        return [x.name for x in self.aspects if x.same is False and x.required]

    @property
    def flips(self) -> list[EpisodeChange]:
        return [c for c in self.changes if c.flipped]

    @property
    def regressions(self) -> int:
        """Episodes that went pass → fail (trial 1)."""
        return sum(1 for c in self.changes if c.passed == (True, False))

    @property
    def improvements(self) -> int:
        """Episodes that went fail → pass (trial 1)."""
        return sum(1 for c in self.changes if c.passed == (False, True))

    @property
    def real_drops(self) -> list[Score]:
        """The configurations whose paired test finds a real difference (p < 0.05) in the worse
        direction: B's pass rate below A's, over every trial when both runs recorded as many
        (:mod:`toolreplay.paired`); ``toolreplay diff`` exits 1 for them as for a flip."""
        return [
            s
            for s in self.scores
            if s.paired is not None and s.paired.distinguishable and s.paired.difference < 0
        ]

    @property
    def trials_differ(self) -> bool:
        return self.trials[0] != self.trials[1]

    @property
    def trial_note(self) -> str | None:
        """The trial difference in a sentence (None when both runs recorded as many trials):
        ``"5 trials before, 1 after: over-trials rates are not comparable; trial 1
        compared"``."""
        if not self.trials_differ:
            return None
        a, b = self.trials
        return (
            f"{_trials(a)} before, {b} after: over-trials rates are not comparable; "
            "trial 1 compared"
        )

    @property
    def identical(self) -> bool:
        """Nothing changed: same episodes, verdicts and transcripts, the same trial counts and
        the same passes over every trial, between comparable runs."""
        return (
            not self.changes
            and not self.only_a
            and not self.only_b
            and self.comparable
            and not self.trials_differ
            and all(s.over_trials[0] == s.over_trials[1] for s in self.scores)
        )


def _trials(n: int) -> str:
    return f"{n} trial{'' if n == 1 else 's'}"


# --------------------------------------------------------------------------- loading


def load_run(path: Path, eval_path: Path | None = None) -> Run:
    """A run from ``path``: a results file, a folder holding ``results.json`` (e.g.
    ``reports/``), or a cassette set (a folder holding ``manifest.json``), which is replayed
    offline and judged with the eval file ``eval_path`` (default ``evals/weather.yaml``); with
    an eval file of a set recorded by the pytest plugin (``cassettes:``), a folder of such
    cassettes, its episodes read from them (nothing written).
    Raises :class:`DiffError` naming ``path``."""
    from toolreplay.results.format import ResultsError as ReportError
    from toolreplay.results.validate import read_results

    p = Path(path)
    if p.is_dir():
        from toolreplay.evaluation.folder import holds_test_suite, judges_a_test_suite

        if eval_path is None and holds_test_suite(p):
            return _folder_run(p, None)  # each test a question, as `toolreplay run --cassettes`
        if (p / "manifest.json").is_file():
            return _folder_run(p, eval_path)
        if (p / "results.json").is_file():
            p = p / "results.json"
        elif judges_a_test_suite(eval_path):
            return _folder_run(p, eval_path)
        else:
            sets = sorted(s.parent.name for s in p.glob("*/manifest.json"))
            raise DiffError(
                f"{path}: neither a results file nor a cassette set (no results.json or "
                "manifest.json in the folder)"
                + (f"; it holds cassette sets: name one, e.g. {p / sets[0]}" if sets else "")
            )
    try:
        return Run(label=str(path), results=read_results(p))
    except ReportError as exc:
        raise DiffError(str(exc)) from None


def _folder_run(folder: Path, eval_path: Path | None) -> Run:
    """A cassette folder evaluated as ``toolreplay run`` would (see
    :func:`toolreplay.evaluation.folder.evaluate_folder`), nothing written."""
    from toolreplay.evaluation.folder import FolderError, evaluate_folder

    try:
        results, fingerprint = evaluate_folder(folder, eval_path)
    except FolderError as exc:
        raise DiffError(str(exc)) from None
    return Run(label=str(folder), results=results, fingerprint=fingerprint)


# --------------------------------------------------------------------------- comparing


def _questions(results: Results) -> dict[str, str]:
    return {e.question_id: e.question for e in results.episodes}


def _system_prompts(results: Results) -> list[str]:
    out: dict[str, None] = {}
    for e in results.episodes:
        for m in e.transcript[:1]:
            if m.get("role") == "system" and isinstance(m.get("content"), str):
                out[m["content"]] = None
    return list(out)


def _judge(results: Results) -> str:
    return "unknown" if results.judge is None else results.judge


def _hash(value: Any) -> str:
    import hashlib

    data = json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hashlib.sha256(data).hexdigest()[:12]


def _aspects(a: Run, b: Run) -> list[Aspect]:
    ra, rb = a.results, b.results
    out = []
    qa, qb = _questions(ra), _questions(rb)
    if qa == qb:
        out.append(Aspect("questions", True, f"{len(qa)} questions", f"{len(qb)} questions"))
    else:
        only_a = sorted(set(qa) - set(qb))
        only_b = sorted(set(qb) - set(qa))
        reworded = sorted(k for k in set(qa) & set(qb) if qa[k] != qb[k])
        parts_a = [f"only here: {', '.join(only_a)}"] if only_a else []
        parts_b = [f"only here: {', '.join(only_b)}"] if only_b else []
        if reworded:
            parts_a.append(f"worded differently: {', '.join(reworded)}")
            parts_b.append(f"worded differently: {', '.join(reworded)}")
        out.append(Aspect("questions", False, "; ".join(parts_a) or "—", "; ".join(parts_b) or "—"))
    pa, pb = _system_prompts(ra), _system_prompts(rb)
    out.append(
        Aspect(
            "system prompt",
            pa == pb,
            f"sha256 {_hash(pa)}" if pa else "none",
            f"sha256 {_hash(pb)}" if pb else "none",
        )
    )
    da, db = ra.provenance.today, rb.provenance.today
    out.append(Aspect("prompt date", da == db, str(da), str(db)))
    fa, fb = a.fingerprint, b.fingerprint
    if fa is not None and fb is not None:
        ta, tb = fa["tool_schemas_sha256"], fb["tool_schemas_sha256"]
        fmt = lambda t: ", ".join(f"{k} {v[:12]}" for k, v in sorted(t.items()))  # noqa: E731
        out.append(Aspect("tool schemas", ta == tb, fmt(ta), fmt(tb)))
        sa, sb = fa.get("settings", {}), fb.get("settings", {})
        keys = sorted(k for k in set(sa) | set(sb) if sa.get(k) != sb.get(k))
        out.append(
            Aspect(
                "settings",
                not keys,
                ", ".join(f"{k}={sa.get(k)!r}" for k in keys) or "same",
                ", ".join(f"{k}={sb.get(k)!r}" for k in keys) or "same",
            )
        )
    else:
        out.append(
            Aspect(
                "tool schemas",
                None,
                "not recorded" if fa is None else "recorded",
                "not recorded" if fb is None else "recorded",
            )
        )
    ja, jb = _judge(ra), _judge(rb)
    out.append(Aspect("judge", ja == jb, str(ja), str(jb)))
    na, nb = trial_count(ra), trial_count(rb)
    # trial 1 is compared whatever the counts: shown, never a reason to refuse (trial_note)
    out.append(Aspect("trials", na == nb, _trials(na), _trials(nb), required=False))
    ma, mb = ra.provenance.model, rb.provenance.model
    # the model is what a re-recording usually changes: shown, never a reason to refuse
    out.append(Aspect("model", ma == mb, str(ma), str(mb), required=False))
    return out


def diff_runs(a: Run, b: Run) -> RunDiff:
    """Compare run ``a`` (before) with run ``b`` (after). Episodes are matched by
    configuration and question id, in B's order (then those only in A)."""
    ea = {(e.configuration, e.question_id): e for e in a.results.episodes}
    eb = {(e.configuration, e.question_id): e for e in b.results.episodes}
    changes = []
    for key, y in eb.items():
        x = ea.get(key)
        if x is None:
            continue
        ma, mb = x.modes, y.modes
        diff = first_difference(x.transcript, y.transcript)
        change = EpisodeChange(
            configuration=key[0],
            question_id=key[1],
            question=y.question,
            passed=(x.passed, y.passed),
            gained=tuple(m for m in mb if m not in ma),
            lost=tuple(m for m in ma if m not in mb),
            rounds=(x.rounds, y.rounds),
            tool_calls=(x.tool_calls, y.tool_calls),
            stop_reason=(x.stop_reason, y.stop_reason),
            first_difference=diff,
            answer=(x.answer, y.answer),
        )
        if (
            change.flipped
            or change.gained
            or change.lost
            or change.rounds[0] != change.rounds[1]
            or change.tool_calls[0] != change.tool_calls[1]
            or change.stop_reason[0] != change.stop_reason[1]
            or diff is not None
        ):
            changes.append(change)
    ca = {c.name: c for c in a.results.configurations}
    ta, tb = _over_trials(a.results), _over_trials(b.results)
    na, nb = trial_count(a.results), trial_count(b.results)
    scores = tuple(
        _with_paired(
            a.results,
            b.results,
            name=c.name,
            a=f"{ca[c.name].passed}/{ca[c.name].total}" if c.name in ca else "–",
            b=f"{c.passed}/{c.total}",
            changed=c.name not in ca
            or (ca[c.name].passed, ca[c.name].total) != (c.passed, c.total),
            trials=(_configuration_trials(ca.get(c.name), na), _configuration_trials(c, nb)),
            over_trials=(ta.get(c.name, (0, 0)), tb.get(c.name, (0, 0))),
            regressions=sum(
                1 for x in changes if x.configuration == c.name and x.passed == (True, False)
            ),
            improvements=sum(
                1 for x in changes if x.configuration == c.name and x.passed == (False, True)
            ),
        )
        for c in b.results.configurations
    )
    return RunDiff(
        a=a.label,
        b=b.label,
        aspects=tuple(_aspects(a, b)),
        changes=tuple(changes),
        only_a=tuple(f"{k[0]}/{k[1]}" for k in ea if k not in eb),
        only_b=tuple(f"{k[0]}/{k[1]}" for k in eb if k not in ea),
        scores=scores,
        trials=(na, nb),
    )


def _with_paired(ra: Results, rb: Results, **fields: Any) -> Score:
    """A :class:`Score` from ``fields`` with its paired test of ``rb`` against ``ra``."""
    score = Score(**fields)
    paired = paired_outcomes(
        (ra.episodes, sorted(ra.trial_outcomes or ra.episodes, key=_trial)),
        (rb.episodes, sorted(rb.trial_outcomes or rb.episodes, key=_trial)),
        score.name,
        score.trials,
    )
    return Score(**fields, paired=paired)


def _trial(outcome: Any) -> int:
    return getattr(outcome, "trial", None) or 1


def trial_count(results: Results) -> int:
    """Trials per configuration × question a run recorded: ``results.trials``, else the
    largest trial number in ``trial_outcomes``, else 1 (results without trial fields)."""
    if results.trials:
        return results.trials
    return max((t.trial for t in results.trial_outcomes or []), default=1)


def _configuration_trials(c: ConfigurationSummary | None, run: int) -> int:
    if c is None:
        return 0
    return c.trials if c.trials else run


def _over_trials(results: Results) -> dict[str, tuple[int, int]]:
    """Per configuration, ``(passes, trials run)`` over every trial (``trial_outcomes``;
    without them the episodes, trial 1)."""
    out: dict[str, list[int]] = {}
    for t in results.trial_outcomes or results.episodes:
        n = out.setdefault(t.configuration, [0, 0])
        n[0] += 1 if t.passed else 0
        n[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}
