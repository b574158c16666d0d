"""Tasks with float features: their width is known before encoding, and the memory checks count it.

``Task.feature_width(n)`` must equal the last axis of the features an encoding really carries
(Nearest Neighbour's vectors T(j), qSA's rows), and 0 for token-only tasks; the run's memory check
and its default chunk size then count ``8 d`` bytes a position on top of the token.
"""

from __future__ import annotations

import numpy as np
import pytest

from commcomp.errors import TooLargeError
from commcomp.limits import TOKEN_BYTES
from commcomp.problems import get_problem
from reductions.registry import list_reductions
from reductions.simulate.batch import check_run_memory, chunk_rows, position_bytes


@pytest.mark.parametrize("red", list_reductions(), ids=lambda r: r.name)
@pytest.mark.parametrize("n", [2, 5, 9])
def test_feature_width_is_the_width_the_encoding_carries(red, n):
    x, y = get_problem(red.problem).sample(n, 3, np.random.default_rng(n))
    feats = red.encode(x, y, n).task_batch.features
    want = 0 if feats is None else int(feats.shape[-1])
    assert red.task.feature_width(red.task_size(n)) == want
    assert position_bytes(red, n) == TOKEN_BYTES + 8 * want


def test_default_chunks_shrink_with_the_features():
    assert chunk_rows(33) == chunk_rows(33, None, TOKEN_BYTES)  # token-only: as before
    assert chunk_rows(33, None, 16 + 8 * 61) < chunk_rows(33)
    assert chunk_rows(33, 100, 10 ** 6) == 100  # asked for: kept


def test_the_memory_check_counts_the_features(monkeypatch):
    """A limit the tokens of a chunk fit in, but not their vectors: refused, naming the features."""
    nn = next(r for r in list_reductions() if r.name == "index->nearest-neighbour")
    n, rows = 64, 4096
    length = nn.length(n)
    tokens_only = TOKEN_BYTES * rows * length
    monkeypatch.setenv("COMMCOMP_MEMORY_LIMIT", str(2 * tokens_only))
    with pytest.raises(TooLargeError, match="of features a position"):
        check_run_memory("verify", nn, n, rows)
    monkeypatch.setenv("COMMCOMP_MEMORY_LIMIT", str(position_bytes(nn, n) * rows * length))
    check_run_memory("verify", nn, n, rows)  # exactly fits


def test_a_sampled_run_is_checked_for_the_instances_it_draws(monkeypatch):
    """A run of 100 instances never holds a default chunk: the check counts at most 100 rows."""
    nn = next(r for r in list_reductions() if r.name == "index->nearest-neighbour")
    n = 64
    hundred = position_bytes(nn, n) * 100 * nn.length(n)
    monkeypatch.setenv("COMMCOMP_MEMORY_LIMIT", str(hundred))
    check_run_memory("verify", nn, n, at_most=100)
    with pytest.raises(TooLargeError):
        check_run_memory("verify", nn, n, at_most=101)
    with pytest.raises(TooLargeError):
        check_run_memory("verify", nn, n)  # a default chunk (about 2^27 bytes) does not fit
