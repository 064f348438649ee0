"""Confidence intervals for pass rates and paired tests between two runs.

Methods (all deterministic; no third-party statistics library, see ``docs/intervals.md``):

- :func:`wilson`: the Wilson score interval of a binomial proportion (``passes`` of
  ``total`` independent trials, e.g. one trial per question); ``z`` from the stdlib's
  :class:`statistics.NormalDist`.
- :func:`binomial_two_sided_p`: the exact two-sided binomial test of ``k`` successes in ``n``
  against p = ½ (what ``scipy.stats.binomtest(k, n).pvalue`` gives), the *exact McNemar test*
  when ``k`` and ``n − k`` are the two kinds of discordant pairs (flips each way).
- :func:`bootstrap_mean`: the percentile bootstrap of a mean over questions (each question's
  value resampled with replacement, ``RESAMPLES`` draws from :class:`random.Random`
  seeded with ``SEED``); with ``paired=True`` on per-question differences it also gives a
  two-sided p-value (share of centred resampled means at least as far from 0 as the observed).

Intervals are ``(low, high)`` floats in the statistic's units; ``level`` is the coverage in
(0, 1), 0.95 unless given.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

#: Coverage of every interval toolreplay prints.
LEVEL = 0.95
#: Bootstrap resamples and the seed of their generator.
RESAMPLES = 2000
SEED = 0
#: Fewest questions a rate's interval is bootstrapped over (fewer: Wilson over the questions).
MIN_BOOTSTRAP_QUESTIONS = 10


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return NormalDist().inv_cdf(0.5 + level / 2)


def wilson(passes: float, total: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson score interval of ``passes / total`` (``passes`` may be fractional: a sum of
    per-question rates); ``(0.0, 1.0)`` when ``total`` is 0. :class:`ValueError` unless
    ``0 ≤ passes ≤ total``."""
    if total == 0:
        return (0.0, 1.0)
    if not 0 <= passes <= total:
        raise ValueError(f"passes={passes} must be between 0 and total={total}")
    z = _z(level)
    p = passes / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def binomial_two_sided_p(k: int, n: int) -> float:
    """Exact two-sided p-value of ``k`` successes in ``n`` trials against p = ½:
    ``min(1, 2 · P(X ≤ min(k, n − k)))``, X ~ Binomial(n, ½); 1.0 when ``n`` is 0.
    :class:`ValueError` unless ``0 ≤ k ≤ n``."""
    if not 0 <= k <= n:
        raise ValueError(f"k={k} must be between 0 and n={n}")
    if n == 0:
        return 1.0
    # exact: C(n, i) from C(n, i - 1) as integers, one product a term (math.comb for each
    # term cost O(n) products each: minutes at n = 8,000)
    term = tail = 1
    for i in range(min(k, n - k)):
        term = term * (n - i) // (i + 1)
        tail += term
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


@dataclass(frozen=True)
class Bootstrap:
    """A percentile bootstrap of a mean: the observed ``mean``, the interval ``(low,
    high)`` at ``level``, and ``p`` (two-sided, against a mean of 0; None unless paired)."""

    mean: float
    low: float
    high: float
    level: float
    p: float | None = None


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (numpy's default) of an ascending sequence."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bootstrap_mean(
    values: Sequence[float],
    *,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    paired: bool = False,
) -> Bootstrap:
    """Percentile bootstrap interval of the mean of ``values`` (one per question), resampling
    the questions with replacement ``resamples`` times from ``random.Random(seed)``; the same
    inputs give the same interval. ``paired``: ``values`` are per-question differences B − A
    and ``p`` is the share of resampled means, centred on the observed one, at least as far
    from 0 as the observed mean (plus one, over resamples plus one). :class:`ValueError` on no
    values."""
    _z(level)
    n = len(values)
    if n == 0:
        raise ValueError("need at least one value")
    mean = sum(values) / n
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    alpha = (1 - level) / 2
    low, high = _quantile(means, alpha), _quantile(means, 1 - alpha)
    p = None
    if paired:
        if all(v == values[0] for v in values) and mean == 0:
            p = 1.0
        else:
            far = sum(1 for m in means if abs(m - mean) >= abs(mean) - 1e-12)
            p = (far + 1) / (resamples + 1)
    return Bootstrap(mean, min(low, mean), max(high, mean), level, p)


def rate_interval(
    per_question: Sequence[float], trials: int, level: float = LEVEL
) -> tuple[tuple[float, float], str]:
    """The interval of a configuration's rate (the mean of ``per_question`` values in [0, 1],
    each over ``trials`` trials) and the method's name: ``"bootstrap"`` over the questions
    for more than one trial, at least :data:`MIN_BOOTSTRAP_QUESTIONS` questions and some
    spread between them; otherwise ``"wilson"`` over the questions (the score interval with
    the summed rates as passes: exact in kind for one trial, each question one independent
    pass/fail, and conservative for a mean of per-question rates, whose variance is at most
    p(1 − p)); a bootstrap over a few questions, or over questions that all scored alike, is
    too narrow. ``((0.0, 1.0), "none")`` for no questions."""
    n = len(per_question)
    if n == 0:
        return (0.0, 1.0), "none"
    if (
        trials > 1
        and n >= MIN_BOOTSTRAP_QUESTIONS
        and any(v != per_question[0] for v in per_question)
    ):
        b = bootstrap_mean(per_question, level=level)
        return (b.low, b.high), "bootstrap"
    return wilson(sum(per_question), n, level), "wilson"
