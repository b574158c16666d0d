"""Separating Bob's inputs: a y with f(x, y) != f(x', y) for a colliding pair x != x'.

Every collision of Alice's messages is a witness as soon as some y separates the pair. For a
problem whose communication matrix has pairwise distinct rows, some y always does;
:func:`rows_pairwise_distinct` checks that per problem by brute force at small sizes (it is not
assumed), and :func:`separating_y` tries the problem's rule first: the first index where x and x'
differ (INDEX), the unit vector there (Disjointness, Inner Product), x itself and x' (Equality,
Greater-Than), their complements; every candidate is evaluated, so a rule that does not fit a
problem finds nothing rather than a wrong y. Problems whose rows need not be distinct (users'
own) are searched among all of Bob's inputs when there are few, else a seeded sample.

Examples
--------
>>> import numpy as np
>>> from commcomp.problems import get_problem
>>> x, x2 = np.array([0, 1, 1], np.uint8), np.array([0, 0, 1], np.uint8)
>>> int(separating_y(get_problem("index"), 3, x, x2)[0])
1
>>> separating_y(get_problem("equality"), 3, x, x2)[0].tolist()
[0, 1, 1]
>>> rows_pairwise_distinct(get_problem("greater-than"))
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["separating_y", "separating_inputs", "rows_pairwise_distinct", "ROWS_CHECK_N"]

ROWS_CHECK_N = (1, 2, 3, 4, 5, 6)


@lru_cache(maxsize=None)
def _distinct_by_name(name: str) -> bool:
    from . import get_problem

    return rows_pairwise_distinct(get_problem(name))


def rows_pairwise_distinct(problem) -> bool:
    """Whether the communication matrix of ``problem`` has pairwise distinct rows at every n in
    ``ROWS_CHECK_N`` (brute force over all (x, y)); cached for the registered problems."""
    from . import get_problem

    try:
        registered = get_problem(problem.name) is problem
    except Exception:  # noqa: BLE001 - a user's problem, not in the registry
        registered = False
    return _distinct_by_name(problem.name) if registered else _check_rows(problem)


def _check_rows(problem) -> bool:
    for n in ROWS_CHECK_N:
        xs, ys = problem.alice_inputs(n), problem.bob_inputs(n)
        X, Y = len(xs), len(ys)
        x = np.repeat(xs, Y, axis=0)
        y = np.tile(ys, (X,) + (1,) * (np.ndim(ys) - 1))
        rows = np.asarray(problem.evaluate(x, y), dtype=np.uint8).reshape(X, Y)
        if len(np.unique(rows, axis=0)) != X:
            return False
    return True

def separating_inputs(problem, n: int, x, x_prime, rng: np.random.Generator, extra: int = 256) -> np.ndarray:
    """Bob's inputs to try on a colliding pair: all of them when there are few (<= 65536); else
    the unit vectors, x, x', their complements and ``extra`` random ones."""
    ys = None
    if problem.bob_input_bits(n) <= 16:
        ys = problem.bob_inputs(n)
    if ys is None:
        x, x_prime = np.asarray(x, np.uint8), np.asarray(x_prime, np.uint8)
        ys = np.concatenate([np.eye(n, dtype=np.uint8), np.stack([x, x_prime, 1 - x, 1 - x_prime]),
                             rng.integers(0, 2, size=(extra, n), dtype=np.uint8)])
    return ys


def _rule_candidates(problem, n: int, x: np.ndarray, x_prime: np.ndarray) -> np.ndarray:
    index_like = np.ndim(problem.bob_inputs(1)) == 1
    differ = np.nonzero(x != x_prime)[0]
    i = int(differ[0]) if differ.size else 0
    if index_like:
        return np.array([i], dtype=np.int64)
    unit = np.zeros(n, np.uint8)
    unit[i] = 1
    return np.stack([unit, x, x_prime, 1 - x, 1 - x_prime]).astype(np.uint8)


def _first_separating(problem, x, x_prime, ys):
    if len(ys) == 0:
        return None
    k = len(ys)
    fx = problem.evaluate(np.repeat(x[None, :], k, axis=0), ys)
    fx2 = problem.evaluate(np.repeat(x_prime[None, :], k, axis=0), ys)
    hits = np.nonzero(np.asarray(fx) != np.asarray(fx2))[0]
    return ys[hits[0]] if hits.size else None


def separating_y(problem, n: int, x, x_prime, seed: int = 0):
    """``(y, how)``: a y that separates x and x' and how it was found (``"rule"``, ``"all"``,
    ``"sample"``), or ``(None, how)`` when the search found none."""
    x, x_prime = np.asarray(x, np.uint8), np.asarray(x_prime, np.uint8)
    y = _first_separating(problem, x, x_prime, _rule_candidates(problem, n, x, x_prime))
    if y is not None:
        return y, "rule"
    if problem.bob_input_bits(n) <= 16:
        return _first_separating(problem, x, x_prime, problem.bob_inputs(n)), "all"
    ys = separating_inputs(problem, n, x, x_prime, np.random.default_rng([int(seed), 13]))
    return _first_separating(problem, x, x_prime, ys), "sample"
