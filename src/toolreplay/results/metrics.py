"""Metrics over repeated trials: unbiased pass@k and pass^k, means with their spread.

With ``n`` trials of one episode (configuration × question) of which ``c`` passed:

- ``pass@k = 1 − C(n−c, k) / C(n, k)``: the chance that at least one of ``k`` trials drawn
  without replacement from the ``n`` passes (Chen et al. 2021, the HumanEval estimator);
- ``pass^k = C(c, k) / C(n, k)``: the chance that all ``k`` drawn trials pass (τ-bench's
  consistency measure).

Both are defined for ``1 ≤ k ≤ n``; a configuration's value is the mean over its questions.
Values are plain floats in [0, 1]; exact fractions are computed with integers first, so
``pass^k`` for ``c = n`` is exactly 1.0 and for ``c < k`` exactly 0.0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from toolreplay.results.format import SpreadRecord


def _check(n: int, c: int, k: int) -> None:
    if n < 1:
        raise ValueError(f"need at least one trial (n={n})")
    if not 0 <= c <= n:
        raise ValueError(f"passes c={c} must be between 0 and n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must be between 1 and n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: ``1 − C(n−c, k)/C(n, k)``. :class:`ValueError` unless
    ``n ≥ 1``, ``0 ≤ c ≤ n`` and ``1 ≤ k ≤ n``."""
    _check(n, c, k)
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k: ``C(c, k)/C(n, k)``. Same domain as :func:`pass_at_k`."""
    _check(n, c, k)
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


def curve(outcomes: Sequence[bool], estimator: str = "pass_hat_k") -> dict[int, float]:
    """``{k: value}`` for k = 1..n over one episode's trial ``outcomes`` (True = passed);
    ``estimator`` is ``pass_at_k`` or ``pass_hat_k``. Empty for no trials."""
    fn = {"pass_at_k": pass_at_k, "pass_hat_k": pass_hat_k}[estimator]
    n, c = len(outcomes), sum(1 for o in outcomes if o)
    return {k: fn(n, c, k) for k in range(1, n + 1)}


def mean_curve(curves: Iterable[dict[int, float]]) -> dict[int, float]:
    """The mean of several curves at each k they all have (questions with fewer trials cut
    the curve at their n). Empty when there are no curves."""
    cs = list(curves)
    if not cs:
        return {}
    ks = set.intersection(*(set(c) for c in cs))
    return {k: sum(c[k] for c in cs) / len(cs) for k in sorted(ks)}


@dataclass(frozen=True)
class Spread:
    """Mean, population standard deviation, min and max of a sample (0s when empty)."""

    mean: float
    sd: float
    min: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if not values:
            return cls(0.0, 0.0, 0.0, 0.0)
        mean = sum(values) / len(values)
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return cls(mean, sd, min(values), max(values))

    def to_record(self, digits: int = 4) -> SpreadRecord:
        """As results store it, each figure rounded to ``digits`` places (an integer stays
        one: ``min`` and ``max`` of counts)."""
        return SpreadRecord(
            mean=round(self.mean, digits),
            sd=round(self.sd, digits),
            min=round(self.min, digits),
            max=round(self.max, digits),
        )


def rate(count: int, total: int) -> float:
    """``count / total`` (0.0 when ``total`` is 0)."""
    return count / total if total else 0.0
