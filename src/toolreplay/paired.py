"""Is a difference between two runs real? A paired test per configuration.

Two runs over the same questions are compared question by question (the pairs), so the
question-to-question spread in difficulty cancels out:

- **trial 1** (either run has one trial, or their trial counts differ): the exact McNemar
  test. Only the discordant questions count: ``regressions`` (pass → fail) and
  ``improvements`` (fail → pass); under no difference each is a fair coin flip, so the
  two-sided p-value is the exact binomial test of ``improvements`` in ``regressions +
  improvements`` against ½ (:func:`~toolreplay.results.intervals.binomial_two_sided_p`). The
  interval of the difference in pass rate (B − A) is the exact Clopper–Pearson interval of
  the discordant share, scaled: ``d (2π − 1) / N`` for ``d`` discordant of ``N`` questions,
  so it excludes 0 exactly when p < 1 − level.
- **several trials** (both runs, as many each): a two-stage paired bootstrap: the questions
  resampled with replacement, then each run's trials of each drawn question (a binomial
  draw at the question's observed rate), ``RESAMPLES`` times from ``random.Random(SEED)``;
  the difference is B's mean pass rate over the questions minus A's and the interval is the
  percentile interval. Its p-value is a stratified permutation test (each question's A and
  B trials shuffled together, the same seed): a bootstrap draws no variation from a
  question every trial passed (or failed), so it alone would call 16/20 against 20/20 real.
  The test decides; near p = 0.05 the interval may just include or exclude 0 against it.

A difference is *distinguishable from noise* when p < 1 − level (0.05).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from toolreplay.results.intervals import LEVEL, RESAMPLES, SEED, binomial_two_sided_p

__all__ = [
    "Paired",
    "clopper_pearson",
    "mcnemar",
    "p_text",
    "paired_bootstrap",
    "paired_outcomes",
    "signed",
]


@dataclass(frozen=True)
class Paired:
    """One configuration's paired comparison: ``test`` (``"mcnemar"`` on trial 1 or
    ``"bootstrap"`` over questions and trials), ``difference`` B − A in pass rate (in
    [−1, 1]) with its interval ``low``..``high`` at ``level``, the two-sided ``p``,
    ``questions`` paired, ``trials`` per question compared (1 for McNemar), and for
    McNemar the discordant ``regressions`` and ``improvements``."""

    test: str
    difference: float
    low: float
    high: float
    p: float
    questions: int
    trials: int = 1
    level: float = LEVEL
    regressions: int = 0
    improvements: int = 0

    @property
    def distinguishable(self) -> bool:
        """True when p < 1 − level: the difference is unlikely to be trial noise."""
        return self.p < 1 - self.level

    @property
    def verdict(self) -> str:
        """``"a real difference"`` or ``"not distinguishable from noise"``."""
        return "a real difference" if self.distinguishable else "not distinguishable from noise"

    @property
    def method(self) -> str:
        """The test in words: ``"exact McNemar on trial 1"`` or ``"paired bootstrap over
        questions and 5 trials"``."""
        if self.test == "mcnemar":
            return "exact McNemar on trial 1"
        return f"paired bootstrap over questions and {self.trials} trials"

    @property
    def interval_text(self) -> str | None:
        """``"−0.10 to +0.20"``; None for McNemar when no question changed its verdict."""
        if self.test == "mcnemar" and not self.regressions + self.improvements:
            return None
        return f"{signed(self.low)} to {signed(self.high)}"

    def text(self) -> str:
        """In words: ``"+0.05 (95% interval −0.10 to +0.20, p = 0.62, exact McNemar on
        trial 1, 4 questions): not distinguishable from noise"``."""
        span = (
            f"{round(100 * self.level)}% interval {self.interval_text}"
            if self.interval_text
            else "no question changed its verdict"
        )
        return (
            f"{signed(self.difference)} ({span}, p = {p_text(self.p)}, {self.method}, "
            f"{self.questions} question{'' if self.questions == 1 else 's'}): {self.verdict}"
        )


def signed(x: float) -> str:
    """``"+0.05"``, ``"−0.10"`` (a minus sign), ``"0.00"``."""
    return f"{x:+.2f}".replace("-", "−") if round(x, 2) != 0 else "0.00"


def p_text(p: float) -> str:
    """A p-value to two places, four below 0.01, ``"< 0.0001"`` below that."""
    return f"{p:.2f}" if p >= 0.01 else f"{p:.4f}" if p >= 0.0001 else "< 0.0001"


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k), X ~ Binomial(n, p), summed in logarithms (each term from ``lgamma``, scaled
    by the largest), so no term overflows or underflows whatever ``n`` (``math.comb(n, i)``
    is past a float's range from n ≈ 1,030); O(k)."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    lp, lq, top = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    logs = [
        top - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
        for i in range(k + 1)
    ]
    peak = max(logs)
    return min(1.0, math.exp(peak) * math.fsum(math.exp(t - peak) for t in logs))


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of a binomial proportion, ``k`` of ``n``, by
    bisection on the binomial distribution (60 halvings: to 1e-15); ``(0.0, 1.0)`` for
    ``n`` = 0. :class:`ValueError` unless ``0 ≤ k ≤ n``."""
    if not 0 <= k <= n:
        raise ValueError(f"k={k} must be between 0 and n={n}")
    if n == 0:
        return (0.0, 1.0)
    alpha = (1 - level) / 2

    def solve(f: Callable[[float], float], increasing: bool) -> float:
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if (f(mid) < alpha) == increasing:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    # lower: P(X ≥ k | p) = alpha, rising in p; upper: P(X ≤ k | p) = alpha, falling in p
    low = 0.0 if k == 0 else solve(lambda p: 1 - _binom_cdf(k - 1, n, p), True)
    high = 1.0 if k == n else solve(lambda p: _binom_cdf(k, n, p), False)
    return (low, high)


def mcnemar(pairs: Sequence[tuple[bool, bool]], level: float = LEVEL) -> Paired:
    """The exact McNemar test of trial-1 verdict ``pairs`` ``(A passed, B passed)``, one per
    question (see the module docstring)."""
    n = len(pairs)
    worse = sum(1 for a, b in pairs if a and not b)
    better = sum(1 for a, b in pairs if b and not a)
    d = worse + better
    if d == 0 or n == 0:
        low = high = 0.0
    else:
        lo, hi = clopper_pearson(better, d, level)
        low, high = d * (2 * lo - 1) / n, d * (2 * hi - 1) / n
    return Paired(
        test="mcnemar",
        difference=(better - worse) / n if n else 0.0,
        low=low,
        high=high,
        p=binomial_two_sided_p(better, d),
        questions=n,
        level=level,
        regressions=worse,
        improvements=better,
    )


def paired_bootstrap(
    pairs: Sequence[tuple[Sequence[bool], Sequence[bool]]],
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Paired:
    """The two-stage paired bootstrap of ``pairs`` ``(A's trial verdicts, B's trial
    verdicts)``, one per question (see the module docstring). :class:`ValueError` on no
    pairs or a question with no trial."""
    if not pairs or any(not a or not b for a, b in pairs):
        raise ValueError("need at least one question with trials in both runs")
    rates = [(sum(a) / len(a), len(a), sum(b) / len(b), len(b)) for a, b in pairs]
    n = len(rates)
    observed = sum(rb - ra for ra, _, rb, _ in rates) / n
    rng = random.Random(seed)

    def draw(rate: float, trials: int) -> float:
        if rate in (0.0, 1.0):
            return rate
        return sum(1 for _ in range(trials) if rng.random() < rate) / trials

    diffs = []
    for _ in range(resamples):
        total = 0.0
        for ra, na, rb, nb in rng.choices(rates, k=n):
            total += draw(rb, nb) - draw(ra, na)
        diffs.append(total / n)
    diffs.sort()
    alpha = (1 - level) / 2
    low, high = _quantile(diffs, alpha), _quantile(diffs, 1 - alpha)
    p = _permutation_p(pairs, observed, resamples, random.Random(seed))
    return Paired(
        test="bootstrap",
        difference=observed,
        low=min(low, observed),
        high=max(high, observed),
        p=p,
        questions=n,
        trials=min(min(na, nb) for _, na, _, nb in rates),
        level=level,
    )


def _permutation_p(
    pairs: Sequence[tuple[Sequence[bool], Sequence[bool]]],
    observed: float,
    resamples: int,
    rng: random.Random,
) -> float:
    """Two-sided p of a stratified permutation test: under no difference A's and B's trials
    of a question are exchangeable, so each question's pooled verdicts are shuffled and split
    back into A's and B's counts; p = (resampled differences at least as far from 0 as
    ``observed``, plus one) / (``resamples`` + 1); 1.0 when ``observed`` is 0."""
    if observed == 0:
        return 1.0
    pools = [([*a, *b], len(a), len(b)) for a, b in pairs]
    n = len(pools)
    far = 0
    for _ in range(resamples):
        total = 0.0
        for pool, na, nb in pools:
            shuffled = rng.sample(pool, len(pool))
            total += sum(shuffled[na:]) / nb - sum(shuffled[:na]) / na
        if abs(total / n) >= abs(observed) - 1e-12:
            far += 1
    return (far + 1) / (resamples + 1)


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


class _Outcome(Protocol):
    configuration: str
    question_id: str
    passed: bool


def _verdicts(outcomes: Iterable[_Outcome], configuration: str) -> dict[str, list[bool]]:
    """Per question id, the verdicts in trial order (outcomes are listed in trial order)."""
    out: dict[str, list[bool]] = {}
    for o in outcomes:
        if o.configuration == configuration:
            out.setdefault(o.question_id, []).append(bool(o.passed))
    return out


def paired_outcomes(
    a: tuple[Iterable[_Outcome], Iterable[_Outcome]],
    b: tuple[Iterable[_Outcome], Iterable[_Outcome]],
    configuration: str,
    trials: tuple[int, int],
) -> Paired | None:
    """The paired test of one ``configuration`` between run A and run B, each given as
    ``(trial-1 episodes, every trial's outcomes)`` (records with ``configuration``,
    ``question_id``, ``passed``; every-trial outcomes sorted by trial) and ``trials`` per
    question each recorded: McNemar on trial 1 unless both recorded the same number (> 1)
    of trials. None when no question is in both runs."""
    first_a, first_b = _verdicts(a[0], configuration), _verdicts(b[0], configuration)
    common = [q for q in first_b if q in first_a]
    if not common:
        return None
    if trials[0] == trials[1] > 1:
        every_a, every_b = _verdicts(a[1], configuration), _verdicts(b[1], configuration)
        both = [q for q in common if every_a.get(q) and every_b.get(q)]
        if both:
            return paired_bootstrap([(every_a[q], every_b[q]) for q in both])
    return mcnemar([(first_a[q][0], first_b[q][0]) for q in common])
