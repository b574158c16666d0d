"""Rank over Q and over GF(2), against sympy and a plain elimination; certificates and tampering."""

import dataclasses
import math

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import commcomp.matrix.rank as rank_mod
from commcomp.errors import TooLargeError
from commcomp.matrix import check_certificate, problem_matrix, rank_gf2, rank_rational
from commcomp.matrix._modp import PRIMES, inverse_mod_p, lu_mod_p, matmul_mod

matrices = arrays(bool, st.tuples(st.integers(1, 8), st.integers(1, 8)))


def gf2_rank_naive(m):
    """Reference: Gaussian elimination on a uint8 array, one row operation at a time."""
    a = np.asarray(m, dtype=np.uint8).copy()
    r = 0
    for j in range(a.shape[1]):
        rows = [i for i in range(r, a.shape[0]) if a[i, j]]
        if not rows:
            continue
        a[[r, rows[0]]] = a[[rows[0], r]]
        for i in range(a.shape[0]):
            if i != r and a[i, j]:
                a[i] ^= a[r]
        r += 1
    return r


def rank_integer_elimination(m):
    """Reference: fraction-free elimination on lists of Python ints (exact over Q)."""
    a = [list(map(int, row)) for row in np.asarray(m, dtype=np.int64)]
    r = 0
    for j in range(len(a[0])):
        piv = next((i for i in range(r, len(a)) if a[i][j]), None)
        if piv is None:
            continue
        a[r], a[piv] = a[piv], a[r]
        for i in range(len(a)):
            if i != r and a[i][j]:
                f, g = a[r][j], a[i][j]
                a[i] = [f * x - g * y for x, y in zip(a[i], a[r])]
                h = math.gcd(*a[i])
                if h > 1:
                    a[i] = [x // h for x in a[i]]
        r += 1
    return r


def low_rank(rng, rows, cols, k, combine):
    left = (rng.random((rows, k)) < 0.5).astype(np.int64)
    right = (rng.random((k, cols)) < 0.5).astype(np.int64)
    return combine(left @ right)


@settings(max_examples=60, deadline=None)
@given(matrices, st.sampled_from(["modular", "bareiss"]))
def test_rational_rank_against_sympy(m, method):
    res = rank_rational(m, method=method)
    assert res.rank == sympy.Matrix(m.astype(int)).rank()
    assert check_certificate(res, m)


@settings(max_examples=60, deadline=None)
@given(matrices)
def test_gf2_rank_against_naive_elimination(m):
    res = rank_gf2(m)
    assert res.rank == gf2_rank_naive(m)
    assert check_certificate(res, m)


def test_rank_deficient_matrices_of_many_shapes():
    rng = np.random.default_rng(2)
    for t in range(60):
        r, c, k = rng.integers(2, 14), rng.integers(2, 14), rng.integers(1, 5)
        m = low_rank(rng, r, c, k, [lambda p: p % 2 == 1, lambda p: p >= 2, lambda p: p == 1][t % 3])
        exact = sympy.Matrix(m.astype(int)).rank()
        for method in ("modular", "bareiss"):
            res = rank_rational(m, method=method)
            assert res.rank == exact and check_certificate(res, m)
        assert rank_gf2(m).rank == gf2_rank_naive(m)


def test_fractional_and_large_coefficients_are_certified_exactly():
    # row 3 = (row 0 + row 1 + row 2) / 2: the certificate needs a denominator
    m = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [1, 0, 1, 0], [1, 1, 1, 0]], dtype=bool)
    res = rank_rational(m)
    cert = res.certificate
    assert res.rank == 3 and cert.denominator == 2 and cert.numerators.tolist() == [[1, 1, 1]]
    assert check_certificate(res, m)
    # a random 60-column basis under 30 more rows: coefficients are fractions with a denominator of
    # about 20 digits, beyond one prime; the Chinese remainder theorem and reconstruction recover it
    rng = np.random.default_rng(5)
    tall = rng.random((90, 60)) < 0.5
    res = rank_rational(tall)
    assert res.rank == 60 and res.certificate.denominator > 2 ** 40
    assert check_certificate(res, tall)
    assert res.rank == rank_integer_elimination(tall)


def test_an_unlucky_first_prime_is_overruled(monkeypatch):
    # det = 2: modulo 2 the rank is 2, over Q it is 3. Start with the prime 2 and check the
    # elimination notices a larger rank modulo the next prime and starts again from it.
    m = np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]], dtype=bool)
    monkeypatch.setattr(rank_mod, "PRIMES", (2,) + PRIMES)
    res = rank_rational(m)
    assert res.rank == 3 and res.certificate.prime != 2
    assert check_certificate(res, m)


@pytest.mark.parametrize("n", [1, 2, 3, 6, 9])
def test_known_ranks(n):
    two = 2 ** n
    assert rank_rational(problem_matrix("equality", n)).rank == two
    assert rank_rational(problem_matrix("disjointness", n)).rank == two
    assert rank_rational(problem_matrix("inner-product", n)).rank == two - 1
    assert rank_rational(problem_matrix("greater-than", n)).rank == two - 1
    assert rank_rational(problem_matrix("index", n)).rank == n
    assert rank_gf2(problem_matrix("equality", n)).rank == two
    assert rank_gf2(problem_matrix("inner-product", n)).rank == n  # a bilinear form over GF(2)
    assert rank_gf2(problem_matrix("greater-than", n)).rank == two - 1
    assert rank_gf2(problem_matrix("disjointness", n)).rank == two  # triangular under a reordering
    res = rank_rational(problem_matrix("equality", n))
    assert res.log_rank_bound == n  # D(EQ_n) >= ceil(log2 2^n)


@pytest.mark.parametrize("name", ["disjointness", "greater-than", "inner-product", "index"])
def test_certificates_at_n_10(name):
    m = problem_matrix(name, 10)
    for res in (rank_rational(m), rank_gf2(m)):
        assert check_certificate(res, m)


def test_rational_checker_rejects_tampering():
    m = problem_matrix("inner-product", 3)
    res = rank_rational(m)
    cert = res.certificate
    assert check_certificate(res, m)
    wrong = [
        dataclasses.replace(res, rank=res.rank + 1),
        dataclasses.replace(res, log_rank_bound=res.log_rank_bound + 1),
        dataclasses.replace(res, certificate=dataclasses.replace(cert, basis_rows=(0,) + cert.basis_rows[1:])),
        dataclasses.replace(res, certificate=dataclasses.replace(cert, prime=cert.prime - 1)),
    ]
    lower = cert.lower.copy()
    lower[-1, 0] = (lower[-1, 0] + 1) % cert.prime
    wrong.append(dataclasses.replace(res, certificate=dataclasses.replace(cert, lower=lower)))
    tall = problem_matrix("index", 3)
    res2 = rank_rational(tall)
    numer = res2.certificate.numerators.copy()
    numer[0, 0] += 1
    for bad in wrong:
        assert not check_certificate(bad, m)
    bad = dataclasses.replace(res2, certificate=dataclasses.replace(res2.certificate, numerators=numer))
    assert check_certificate(res2, tall) and not check_certificate(bad, tall)
    bad = dataclasses.replace(res2, certificate=dataclasses.replace(res2.certificate, denominator=2))
    assert not check_certificate(bad, tall)


def test_gf2_checker_rejects_tampering():
    m = problem_matrix("inner-product", 3)
    res = rank_gf2(m)
    cert = res.certificate
    assert check_certificate(res, m)
    deps = list(cert.dependencies)
    deps[-1] ^= 1
    for bad_cert in (dataclasses.replace(cert, dependencies=tuple(deps)),
                     dataclasses.replace(cert, pivot_cols=cert.pivot_cols[::-1]),
                     dataclasses.replace(cert, echelon=(cert.echelon[0] | 2,) + cert.echelon[1:])):
        assert not check_certificate(dataclasses.replace(res, certificate=bad_cert), m)
    assert not check_certificate(dataclasses.replace(res, rank=res.rank - 1), m)
    gt = problem_matrix("greater-than", 3)  # not symmetric: the certificate is for one orientation
    res = rank_gf2(gt)
    flipped = dataclasses.replace(res.certificate, axis=1 - res.certificate.axis)
    assert check_certificate(res, gt)
    assert not check_certificate(dataclasses.replace(res, certificate=flipped), gt)


def test_modular_kernels():
    rng = np.random.default_rng(0)
    p = PRIMES[0]
    a = rng.integers(0, p, size=(70, 9000)).astype(np.float64)  # dot products longer than KMAX
    b = rng.integers(0, p, size=(9000, 5)).astype(np.float64)
    exact = (a.astype(object) @ b.astype(object)) % p
    assert np.array_equal(matmul_mod(a, b, p), exact.astype(np.float64))
    g = (rng.random((150, 150)) < 0.5).astype(np.float64)
    w = inverse_mod_p(g, p)
    assert np.array_equal(matmul_mod(g, w, p), np.eye(150))
    rows, cols, lower, upper = lu_mod_p(g[:, :100], p)
    assert np.array_equal(matmul_mod(lower, upper, p), g[:, :100])


def test_size_limits(monkeypatch):
    monkeypatch.setattr(rank_mod, "MAX_SIDE_MODULAR", 7)
    with pytest.raises(TooLargeError, match="min\\(rows, cols\\) <= 7"):
        rank_rational(problem_matrix("equality", 3))
    rank_rational(np.vstack([np.eye(8, dtype=bool)[:7]] * 3))  # 21x8 with 7 distinct rows: fine
    with pytest.raises(TooLargeError, match="16384 cells"):
        rank_rational(problem_matrix("equality", 8), method="bareiss")
    import commcomp.matrix.gf2 as gf2

    monkeypatch.setattr(gf2, "MAX_SIDE_GF2", 15)
    with pytest.raises(TooLargeError, match="15"):
        rank_gf2(problem_matrix("equality", 4))
