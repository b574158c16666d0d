"""commcomp.blas: the loaded OpenBLAS's thread count, read and set (skipped where numpy's BLAS is another)."""

import numpy as np
import pytest

from commcomp.blas import blas_threads, limit_blas_threads, set_blas_threads
from commcomp.errors import InvalidParameterError


def _openblas_or_skip() -> int:
    threads = blas_threads()
    if threads is None:
        pytest.skip("numpy's BLAS here is not OpenBLAS")
    return threads


def test_limit_sets_and_restores_the_count():
    before = _openblas_or_skip()
    target = 1 if before != 1 else 2
    with limit_blas_threads(target) as previous:
        assert previous == before and blas_threads() == target
        a = np.arange(64.0).reshape(8, 8)
        assert np.array_equal(a @ np.eye(8), a)          # products still run with the new count
    assert blas_threads() == before


def test_restored_after_an_exception():
    before = _openblas_or_skip()
    with pytest.raises(ZeroDivisionError):
        with limit_blas_threads(1):
            1 / 0
    assert blas_threads() == before


def test_set_returns_the_previous_count():
    before = _openblas_or_skip()
    assert set_blas_threads(1) == before
    assert set_blas_threads(before) == 1 and blas_threads() == before


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "1"])
def test_bad_counts_refused(bad):
    with pytest.raises(InvalidParameterError):
        set_blas_threads(bad)
