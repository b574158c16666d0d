"""Discrepancy under the uniform distribution against brute force over every rectangle."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from commcomp.errors import TooLargeError
from commcomp.matrix import check_certificate, measure_problem, problem_matrix
from commcomp.matrix.discrepancy import check_discrepancy, discrepancy, max_imbalance_batch


def _masks(k: int) -> np.ndarray:
    return (np.arange(1 << k)[:, None] >> np.arange(k)) & 1  # (2^k, k)


def brute_force_imbalance(signs: np.ndarray) -> np.ndarray:
    """max over every (row subset, column subset) of |sum|, for a batch (B, R, C): no best-response step."""
    rs, cs = _masks(signs.shape[1]), _masks(signs.shape[2])
    sums = np.einsum("si,bij,tj->bst", rs, signs, cs)  # (B, 2^R, 2^C)
    return np.abs(sums).reshape(len(signs), -1).max(axis=1)


def test_every_4x4_matrix_equals_brute_force():
    codes = np.arange(1 << 16)
    matrices = ((codes[:, None] >> np.arange(16)) & 1).reshape(-1, 4, 4)  # (65536, 4, 4) every 0/1 matrix
    signs = 1 - 2 * matrices
    got = max_imbalance_batch(signs)[0]
    want = brute_force_imbalance(signs)
    assert np.array_equal(got, want)
    assert np.flatnonzero(want == 16).tolist() == [0, (1 << 16) - 1]  # only the constant matrices reach 16


def test_the_entry_point_equals_brute_force_on_random_4x4_and_6x6():
    rng = np.random.default_rng(24)
    for shape, count in (((4, 4), 300), ((6, 6), 150), ((3, 7), 100), ((6, 2), 100)):
        for _ in range(count):
            m = rng.integers(0, 2, size=shape)
            if rng.random() < 0.3:  # repeated rows and columns exercise the distinct-line weighting
                m[rng.integers(0, shape[0])] = m[0]
                m[:, rng.integers(0, shape[1])] = m[:, 0]
            d = discrepancy(m)
            want = int(brute_force_imbalance((1 - 2 * m)[None])[0])
            assert d.exact and abs(d.imbalance) == want, m
            assert d.fraction == str(Fraction(want, m.size)) and d.value == want / m.size
            check_discrepancy(d, m)
            assert d.value <= d.spectral_bound * (1 + 1e-9)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_inner_product_under_lindsey_and_spectral_equal_to_it(n):
    m = problem_matrix("inner-product", n)
    d = discrepancy(m)
    assert d.exact and d.value <= 2 ** (-n / 2)
    assert d.spectral_bound == pytest.approx(2 ** (-n / 2), rel=1e-9)  # Hadamard: ||A||_2 = 2^(n/2)
    if n <= 3:  # 2^(2^n) subsets a side
        assert abs(d.imbalance) == int(brute_force_imbalance((1 - 2 * m)[None].astype(np.int64))[0])
    assert check_certificate(d, m).ok


def test_known_values():
    assert discrepancy(problem_matrix("inner-product", 2)).fraction == "5/16"  # rows/cols {00,01,10}: 9 - 4
    assert discrepancy(problem_matrix("equality", 3)).fraction == "3/4"  # the whole matrix: (64 - 16)/64
    assert discrepancy(np.zeros((3, 5), dtype=np.uint8)).value == 1


def test_beyond_the_exact_limit_the_spectral_bound_and_a_lower_bound():
    m = problem_matrix("inner-product", 5)
    d = discrepancy(m)
    assert not d.exact and d.value == pytest.approx(2 ** -2.5, rel=1e-9)
    assert 0 < d.lower_bound <= d.value
    check_discrepancy(d, m)
    with pytest.raises(TooLargeError):
        discrepancy(m, exact=True)


def test_the_checker_rejects_a_wrong_rectangle():
    m = problem_matrix("inner-product", 3)
    d = discrepancy(m)
    forged = type(d)(d.value, d.exact, d.imbalance + 2, d.rows, d.cols, d.cells, d.spectral_bound, d.method)
    with pytest.raises(ValueError):
        check_discrepancy(forged, m)
    assert not check_certificate(forged, m).ok
    # a rectangle that is right but not maximal: the re-search over column subsets rejects the claim
    small = type(d)(1 / 64, True, 1, (0,), (0,), d.cells, d.spectral_bound, d.method)
    check = check_certificate(small, m)
    assert not check.ok and "reaches 11" in check.detail


def test_matrix_report_fields():
    out = measure_problem("inner-product", 3, ["discrepancy"]).to_json()
    assert out["discrepancy"]["exact"] is True and out["discrepancy"]["fraction"] == "11/64"
    assert set(out["discrepancy"]["rectangle"]) == {"rows", "cols"}
    assert out["spectral_discrepancy_bound"] == pytest.approx(math.sqrt(1 / 8), rel=1e-9)
