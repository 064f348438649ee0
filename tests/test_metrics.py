"""pass@k and pass^k against hand-computed cases."""

from __future__ import annotations

import pytest

from toolreplay.results.metrics import Spread, curve, mean_curve, pass_at_k, pass_hat_k, rate


@pytest.mark.parametrize(
    ("n", "c", "k", "at", "hat"),
    [
        (5, 0, 1, 0.0, 0.0),  # c = 0: nothing ever passes
        (5, 0, 5, 0.0, 0.0),
        (5, 5, 1, 1.0, 1.0),  # c = n: everything passes
        (5, 5, 5, 1.0, 1.0),
        # c < k: pass^k is 0 (cannot draw k passes), pass@k is 1 once k > n − c
        (5, 2, 3, 0.9, 0.0),  # C(3,3)/C(5,3) = 1/10
        (5, 1, 2, 1 - 6 / 10, 0.0),  # C(4,2)=6, C(5,2)=10
        # k = n: pass@n = 1 if any pass, pass^n = 1 only if all pass
        (5, 4, 5, 1.0, 0.0),
        (4, 1, 4, 1.0, 0.0),
        # interior cases
        (5, 3, 2, 1 - 1 / 10, 3 / 10),  # C(2,2)=1, C(3,2)=3, C(5,2)=10
        (5, 4, 2, 1.0, 6 / 10),  # C(1,2)=0, C(4,2)=6
        (4, 2, 1, 0.5, 0.5),  # k = 1: both are c/n
        (10, 7, 3, 1 - 1 / 120, 35 / 120),  # C(3,3)=1, C(7,3)=35, C(10,3)=120
    ],
)
def test_estimators_match_hand_computed_values(n, c, k, at, hat):
    assert pass_at_k(n, c, k) == pytest.approx(at, abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-12)


def test_pass_at_k_for_c_below_k_with_room_left():
    # n = 5, c = 2, k = 3: C(3,3)/C(5,3) = 1/10, so pass@3 = 0.9 and pass^3 = 0
    assert pass_at_k(5, 2, 3) == pytest.approx(0.9)
    assert pass_hat_k(5, 2, 3) == 0.0


def test_k_equal_one_is_the_pass_rate_for_both():
    for n in range(1, 7):
        for c in range(n + 1):
            assert pass_at_k(n, c, 1) == pytest.approx(c / n)
            assert pass_hat_k(n, c, 1) == pytest.approx(c / n)


def test_estimators_are_monotone_in_k():
    for n in range(1, 8):
        for c in range(n + 1):
            at = [pass_at_k(n, c, k) for k in range(1, n + 1)]
            hat = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
            assert at == sorted(at)
            assert hat == sorted(hat, reverse=True)


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_out_of_domain_is_refused(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_curve_and_mean_curve():
    assert curve([True, False, True]) == {
        1: pytest.approx(2 / 3),
        2: pytest.approx(1 / 3),
        3: 0.0,
    }
    assert curve([True, False], "pass_at_k") == {1: 0.5, 2: 1.0}
    assert curve([]) == {}
    assert mean_curve([{1: 1.0, 2: 1.0}, {1: 0.0, 2: 0.0, 3: 0.0}]) == {1: 0.5, 2: 0.5}
    assert mean_curve([]) == {}


def test_spread_and_rate():
    s = Spread.of([2, 4, 4, 4, 5, 5, 7, 9])
    assert (s.mean, s.sd, s.min, s.max) == (5.0, 2.0, 2, 9)
    empty = Spread.of([]).to_record().model_dump()
    assert empty == {"mean": 0.0, "sd": 0.0, "min": 0.0, "max": 0.0}
    counts = Spread.of([1, 2]).to_record()
    assert counts.model_dump() == {"mean": 1.5, "sd": 0.5, "min": 1, "max": 2}
    assert isinstance(counts.min, int)  # a count stays an integer
    assert rate(1, 4) == 0.25 and rate(0, 0) == 0.0
