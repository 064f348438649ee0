"""Intervals and paired tests (issue 32): the exact methods against reference values, planted
flip / non-flip pairs of runs, and coverage of the stated level in seeded simulations."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from toolreplay.cli.main import app
from toolreplay.paired import (
    clopper_pearson,
    mcnemar,
    paired_bootstrap,
    paired_outcomes,
)
from toolreplay.report.render import render_report
from toolreplay.results.format import as_results
from toolreplay.results.intervals import (
    binomial_two_sided_p,
    bootstrap_mean,
    rate_interval,
    wilson,
)
from toolreplay.results.trials import summarize_trials

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "reports" / "results.json"

# scipy 1.11.4, scipy.stats.binomtest(k, n): .pvalue, .proportion_ci(0.95, "wilson"/"exact")
SCIPY = [
    # k, n, p-value, wilson, exact
    (0, 4, 0.125, (0.0, 0.4898908364545973), (0.0, 0.6023646356164858)),
    (1, 10, 0.021484375, (0.017876213095072896, 0.4041500267952385),
     (0.0025285785444625723, 0.44501611702819543)),
    (3, 3, 0.25, (0.4385029682449546, 1.0), (0.2924017738212867, 1.0)),
    (5, 12, 0.7744140625, (0.1932603136587566, 0.6804886874504502),
     (0.15165222980843474, 0.7233303143178942)),
]  # fmt: skip


# scipy 1.17.1, the same calls, where math.comb(n, i) no longer fits a float (n ≳ 1,030):
# k, n, p-value, exact interval
SCIPY_LARGE = [
    (560, 1200, 0.022536627567509532, (0.4381345412161703, 0.4953625141299505)),
    (600, 1200, 1.0, (0.47132320911732933, 0.5286767908826706)),
    (1, 2000, 0.0, (1.265882387067635e-05, 0.002782639834672444)),
    (1499, 3000, 0.9854339014842048, (0.4816157653553459, 0.5177182187560467)),
    (3000, 3000, 0.0, (0.9987711291961745, 1.0)),
    (4000, 10000, 1.7404316412268293e-89, (0.39037846558303124, 0.4096798111103393)),
    (5100, 10000, 0.04658552770494645, (0.5001504268210744, 0.519843746304514)),
]  # fmt: skip


@pytest.mark.parametrize(("k", "n", "p", "exact"), SCIPY_LARGE)
def test_exact_methods_hold_on_thousands_of_discordant_questions(
    k: int, n: int, p: float, exact: tuple[float, float]
) -> None:
    assert binomial_two_sided_p(k, n) == pytest.approx(p, rel=1e-9, abs=1e-300)
    assert clopper_pearson(k, n) == pytest.approx(exact, abs=1e-9)


def test_mcnemar_on_more_than_a_thousand_flips_gives_a_finite_answer() -> None:
    """A diff of two 10,000-episode runs with 1,200 changed verdicts in one configuration
    (it raised OverflowError: int too large to convert to float)."""
    pairs = [(True, False)] * 500 + [(False, True)] * 700 + [(True, True)] * 3800
    result = mcnemar(pairs)
    assert result.regressions == 500 and result.improvements == 700
    assert 0 < result.p < 1e-7 and result.low < 0.04 < result.high


@pytest.mark.parametrize(("k", "n", "p", "wil", "exact"), SCIPY)
def test_exact_methods_agree_with_scipy(
    k: int, n: int, p: float, wil: tuple[float, float], exact: tuple[float, float]
) -> None:
    assert binomial_two_sided_p(k, n) == pytest.approx(p, abs=1e-12)
    assert wilson(k, n) == pytest.approx(wil, abs=1e-12)
    assert clopper_pearson(k, n) == pytest.approx(exact, abs=1e-9)


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError):
        binomial_two_sided_p(5, 4)
    with pytest.raises(ValueError):
        wilson(3, 2)
    with pytest.raises(ValueError):
        bootstrap_mean([])
    with pytest.raises(ValueError):
        wilson(1, 2, level=1.0)


def test_bootstrap_is_seeded_and_deterministic() -> None:
    values = [1, 1, 1, 0.8, 0, 0.2, 0.6, 1, 1, 0.4, 1, 0]
    a, b = bootstrap_mean(values), bootstrap_mean(values)
    assert a == b
    # scipy.stats.bootstrap(percentile, 20,000 resamples) gives 0.4333 to 0.8833
    assert a.low == pytest.approx(0.4333, abs=0.03)
    assert a.high == pytest.approx(0.8833, abs=0.03)
    assert bootstrap_mean(values, seed=1) != a


def test_a_planted_flip_is_told_from_a_non_flip_on_trial_1() -> None:
    # 12 questions: run B fails 10 that run A passed; the non-flip pair swaps 2 each way
    flipped = [(True, False)] * 10 + [(True, True)] * 2
    balanced = [(True, False)] * 2 + [(False, True)] * 2 + [(True, True)] * 8
    f, n = mcnemar(flipped), mcnemar(balanced)
    assert f.p == pytest.approx(2 / 1024) and f.distinguishable
    assert f.high < 0 < -f.low
    assert "a real difference" in f.text()
    assert n.p == 1.0 and not n.distinguishable
    assert n.low < 0 < n.high
    assert n.text().endswith("not distinguishable from noise")
    same = mcnemar([(True, True)] * 4)
    assert "no question changed its verdict" in same.text() and not same.distinguishable


def test_a_planted_flip_is_told_from_a_non_flip_over_trials() -> None:
    rng = random.Random(7)
    base = [[rng.random() < 0.9 for _ in range(5)] for _ in range(12)]
    # the flip: B loses 3 of 5 trials on 8 of the questions
    worse = [t[:2] + [False] * 3 if i < 8 else t for i, t in enumerate(base)]
    # the non-flip: B is A's trials in another order
    shuffled = [list(reversed(t)) for t in base]
    f = paired_bootstrap(list(zip(base, worse, strict=True)))
    n = paired_bootstrap(list(zip(base, shuffled, strict=True)))
    assert f.distinguishable and f.high < 0 and f.test == "bootstrap" and f.trials == 5
    assert not n.distinguishable and n.difference == 0 and n.low <= 0 <= n.high
    assert "not distinguishable from noise" in n.text()
    # one question's single lost trial is noise
    one = paired_bootstrap([(t, t) for t in base[1:]] + [([True] * 5, [True] * 4 + [False])])
    assert not one.distinguishable


def test_a_run_with_every_trial_passing_is_not_called_better_on_a_few_questions() -> None:
    # 16/20 against 20/20 over 4 questions: a bootstrap sees no spread; the permutation test
    # (what decides) does: p = 2/16 exactly, here within Monte Carlo error
    r = paired_bootstrap([([True] * 4 + [False], [True] * 5)] * 4)
    assert r.p == pytest.approx(0.125, abs=0.03) and not r.distinguishable


def test_paired_outcomes_picks_the_test_by_trials() -> None:
    def o(q: str, passed: bool) -> SimpleNamespace:
        return SimpleNamespace(configuration="c", question_id=q, passed=passed)

    first = [o("q1", True), o("q2", False)]
    every = [o("q1", True), o("q2", False), o("q1", True), o("q2", True)]
    assert paired_outcomes((first, every), (first, every), "c", (2, 2)).test == "bootstrap"
    assert paired_outcomes((first, every), (first, first), "c", (2, 1)).test == "mcnemar"
    assert paired_outcomes((first, every), (first, every), "other", (2, 2)) is None


def test_wilson_covers_the_true_rate_at_the_stated_level() -> None:
    rng = random.Random(32)
    covered = total = 0
    for true in (0.3, 0.7, 0.9):
        for _ in range(400):
            passes = sum(rng.random() < true for _ in range(20))
            low, high = wilson(passes, 20)
            covered += low <= true <= high
            total += 1
    assert 0.92 <= covered / total <= 0.98


def test_bootstrap_over_questions_covers_the_true_rate_at_the_stated_level() -> None:
    # 30 questions a configuration passes with rates drawn from Beta(3, 1) (mean 0.75), 5
    # trials each; the interval is of the mean rate over such questions
    rng = random.Random(3)
    covered, sims = 0, 150
    for _ in range(sims):
        rates = [rng.betavariate(3, 1) for _ in range(30)]
        observed = [sum(rng.random() < p for _ in range(5)) / 5 for p in rates]
        (low, high), method = rate_interval(observed, 5)
        assert method == "bootstrap"
        covered += low <= 0.75 <= high
    assert 0.88 <= covered / sims <= 0.99


def test_paired_tests_hold_their_false_alarm_rate() -> None:
    rng = random.Random(11)
    alarms_1 = alarms_k = 0
    sims = 120
    for _ in range(sims):
        rates = [rng.betavariate(3, 1) for _ in range(15)]
        a = [[rng.random() < p for _ in range(3)] for p in rates]
        b = [[rng.random() < p for _ in range(3)] for p in rates]
        alarms_1 += mcnemar([(x[0], y[0]) for x, y in zip(a, b, strict=True)]).distinguishable
        alarms_k += paired_bootstrap(list(zip(a, b, strict=True)), resamples=400).distinguishable
    assert alarms_1 / sims <= 0.08
    assert alarms_k / sims <= 0.10


@pytest.fixture(scope="module")
def with_intervals() -> dict:
    results = as_results(json.loads(RESULTS.read_text(encoding="utf-8")))
    qids = list(dict.fromkeys(o.question_id for o in results.trial_outcomes or []))
    fields = summarize_trials(
        results.trial_outcomes or [], [c.name for c in results.configurations], qids
    )
    results.configurations = [
        c.model_copy(update=dict(fields[c.name])) for c in results.configurations
    ]
    return results.model_dump(mode="json", by_alias=True, exclude_none=True)


def test_the_reference_set_gets_an_interval_per_k(with_intervals: dict) -> None:
    single = next(c for c in with_intervals["configurations"] if c["name"] == "single+oneshot")
    one = single["pass_hat_k_interval"]["1"]
    # 19/20 over 4 questions × 5 trials: Wilson over the 4 questions (3.8 of 4)
    assert one == {"low": 0.4615, "high": 0.9976, "level": 0.95, "method": "wilson"}
    assert set(single["pass_hat_k_interval"]) == set(single["pass_hat_k"])


def test_the_report_prints_the_intervals(with_intervals: dict) -> None:
    page = render_report(with_intervals)
    assert "95% interval 46–100%" in page  # the scorecard, single+oneshot
    assert "0.46–1.00" in page  # the trials table's pass^1


def test_diff_says_a_small_difference_is_noise() -> None:
    other = REPO / "reports" / "llama-gemma3-270m" / "results.json"
    result = CliRunner().invoke(app, ["diff", str(RESULTS), str(other)])
    # 4 of 4 questions pass → fail in trial 1: p = 0.125 on 4 questions
    assert "B − A pass rate: −1.00 (95% interval −1.00 to +0.20, p = 0.12, exact McNemar" in (
        result.output
    )
    assert "not distinguishable from noise" in result.output
