"""Average-case bounds (commcomp.bounds.average) against exact optima computed by brute force."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from commcomp.bounds import compute_bounds, get_bound
from commcomp.bounds.average import AVERAGE_BOUNDS, h2_inverse_floor, index_error_floor, ip_error_floor
from commcomp.errors import InvalidParameterError


def _h2(t: float) -> float:
    return 0.0 if t in (0.0, 1.0) else -(t * math.log2(t) + (1 - t) * math.log2(1 - t))


def _words(n: int) -> np.ndarray:
    return ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.int64)  # (2^n, n)


def optimal_index_error(n: int, b: int) -> Fraction:
    """The least error of a one-way INDEX_n protocol with 2^b messages under uniform (x, i), by brute force:
    Bob's answers to message m are a word c_m, Alice sends the nearest; minimise over every code."""
    words = _words(n)
    dist = (words[:, None, :] != words[None, :, :]).sum(axis=2)  # (2^n, 2^n) Hamming distances
    size = min(1 << b, 1 << n)
    best = None
    codes = np.array(list(itertools.combinations(range(1 << n), size)))  # (K, size)
    for start in range(0, len(codes), 4096):
        chunk = codes[start:start + 4096]  # (k, size)
        total = dist[:, chunk].min(axis=2).sum(axis=0)  # (k,): Σ_x distance to the code
        best = int(total.min()) if best is None else min(best, int(total.min()))
    return Fraction(best, n << n)


@pytest.mark.parametrize("n,b", [(n, b) for n in range(1, 5) for b in range(0, n + 1)] + [(5, 1), (5, 2)])
def test_index_floor_never_exceeds_the_exact_optimum(n, b):
    floor, optimum = index_error_floor(b, n), optimal_index_error(n, b)
    assert floor <= optimum
    assert (floor == 0) == (b >= n)  # a positive floor whenever the message is shorter than x


def test_the_brute_force_can_catch_a_floor_that_is_too_high():
    # a floor claiming twice the entropy deficit (H2^-1(1 - b/(2n))) is above the optimum somewhere
    too_high = [(n, b) for n in range(2, 5) for b in range(1, n)
                if h2_inverse_floor(1 - Fraction(b, 2 * n)) > optimal_index_error(n, b)]
    assert too_high
    assert optimal_index_error(3, 1) == Fraction(1, 4)  # codes {000, 111}: 6 of 24 answers wrong


@pytest.mark.parametrize("y", [Fraction(1, 100), Fraction(1, 2), Fraction(9, 10), Fraction(999, 1000)])
def test_h2_inverse_floor_brackets_the_inverse(y):
    t = float(h2_inverse_floor(y))
    assert 0 <= t <= 0.5
    assert _h2(t) <= float(y) <= _h2(t + 1e-12)


def optimal_ip_one_way_error(n: int, b: int) -> Fraction:
    """Least error of a one-way IP2_n protocol with 2^b messages under uniform inputs: over every map of
    Alice's inputs to messages, Bob's best answer per (message, y) is the majority."""
    words = _words(n)
    signs = 1 - 2 * ((words @ words.T) % 2)  # (2^n, 2^n) (-1)^{x.y}
    rows, classes = 1 << n, 1 << b
    maps = np.array(list(itertools.product(range(classes), repeat=rows)))  # (K, 2^n) message of each x
    onehot = (maps[:, :, None] == np.arange(classes)).astype(np.int64)  # (K, 2^n, 2^b)
    sums = np.einsum("kxm,xy->kmy", onehot, signs)  # (K, 2^b, 2^n) signed count per (message, y)
    advantage = np.abs(sums).sum(axis=(1, 2)).max()  # right minus wrong, out of 4^n
    return Fraction((1 << 2 * n) - int(advantage), 2 << 2 * n)


@pytest.mark.parametrize("n,b", [(1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2)])
def test_ip_one_way_floor_never_exceeds_the_exact_optimum(n, b):
    floor, optimum = ip_error_floor(b, n, rounds=1), optimal_ip_one_way_error(n, b)
    assert floor <= optimum
    assert floor > 0


def test_ip_one_way_values_by_hand():
    # b = 0: Bob guesses from y alone; every column of IP_2 but y = 0 is balanced, so the best error
    # is (3/4)(1/2) = 3/8, above the floor (1 - 2^(-2/2))/2 = 1/4; with b = n the floor and optimum are 0
    assert optimal_ip_one_way_error(2, 0) == Fraction(3, 8)
    assert ip_error_floor(0, 2, rounds=1) == Fraction(1, 4)
    assert ip_error_floor(2, 2, rounds=1) == 0 == optimal_ip_one_way_error(2, 2)


def test_ip_two_way_floor_closed_form():
    # (1 - 2^(c + 1 - n/2))/2 with Bob's unsent answer, (1 - 2^(c - n/2))/2 with the answer sent
    assert ip_error_floor(2, 10, rounds=2) == Fraction(1, 2) * (1 - Fraction(1, 4))
    assert ip_error_floor(2, 10, rounds=2, answer_sent=True) == Fraction(1, 2) * (1 - Fraction(1, 8))
    assert ip_error_floor(5, 6, rounds=2) == 0


def test_floors_reject_bad_arguments():
    with pytest.raises(InvalidParameterError):
        index_error_floor(-1, 8)
    with pytest.raises(InvalidParameterError):
        index_error_floor(3, 0)


def test_error_rows_appear_only_with_error_and_match_the_formula():
    plain = compute_bounds(1000, 32, task="index-lookup", arch="lstm")
    assert not any(r.error is not None for r in plain)
    rows = compute_bounds(1000, 32, task=["index-lookup", "nearest-neighbour", "mqar"], arch="lstm", error=0.01)
    avg = {r.theorem: r for r in rows if r.error is not None}
    assert set(avg) == {"COMMCOMP-AVG-IL-RNN", "COMMCOMP-AVG-NN-RNN", "COMMCOMP-AVG-MQAR-RNN",
                        "COMMCOMP-AVG-IP-MQAR-RNN",  # the IP2 route (tests/bounds/test_average_ip.py)
                        "BHBK-AVG-IL-RNN", "BHBK-AVG-NN-RNN", "BHBK-AVG-MQAR-RNN"}
    assert avg["COMMCOMP-AVG-IL-RNN"].value == pytest.approx((1 - _h2(0.01)) * 1000, rel=1e-12)
    assert avg["COMMCOMP-AVG-NN-RNN"].value == pytest.approx((1 - _h2(0.01)) * 499, rel=1e-12)
    # LSTM: 2m numbers of 32 bits; the smallest m with 64 m >= 919.2 is 15
    assert avg["COMMCOMP-AVG-IL-RNN"].min_width == math.ceil((1 - _h2(0.01)) * 1000 / 64) == 15
    assert avg["BHBK-AVG-IL-RNN"].tag == "[A]" and avg["BHBK-AVG-IL-RNN"].value is None
    assert all(r.error == 0.01 for r in avg.values())
    with pytest.raises(InvalidParameterError):
        compute_bounds(1000, 32, error=0.5)


def test_catalogue_holds_the_average_rows_with_tags():
    for bound in AVERAGE_BOUNDS:
        assert get_bound(bound.id) is bound and bound.error_model == "uniform"
    assert get_bound("CC-INDEX-avg").tag == "[D✓]" and get_bound("COMMCOMP-AVG-IL-RNN").tag == "[D]"
