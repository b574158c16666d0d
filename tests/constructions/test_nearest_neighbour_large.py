"""Nearest Neighbour's weights at the separation's lengths: the width stated without building, the
public table's blockwise Gram check, and the ladder that now reads the width past 4,100 tokens."""

import math

import numpy as np
import pytest

from models.constructions import get_construction
from models.constructions import jl
from models.constructions import nearest_neighbour as nn
from reductions.tasks import nearest_neighbour as task_nn


def _table_by_full_gram(size, gamma=0.5):
    """The recipe with the whole (V, V) Gram matrix, as it was written before the blocks."""
    k = math.ceil((4 * math.log(max(size, 2)) + 2 * math.log(2)) / gamma ** 2)
    rng = np.random.default_rng(20240609)
    while True:
        s = np.where(rng.random((size, k)) < 0.5, -1, 1).astype(np.int8)
        f = s.astype(np.float64)
        gram = f @ f.T
        np.fill_diagonal(gram, 0)
        if np.abs(gram).max(initial=0) <= gamma * k:
            return s


@pytest.mark.parametrize("size,gamma", [(1, 0.5), (2, 0.5), (9, 0.5), (300, 0.5), (40, 0.3)])
def test_tables_equal_the_full_gram_recipe(size, gamma, monkeypatch):
    monkeypatch.setattr(jl, "GRAM_BLOCK_ROWS", 7)          # several blocks, one cut mid-table
    nn.nn_table.cache_clear()
    task_nn.sign_vector_table.cache_clear()
    expected = _table_by_full_gram(size, gamma)
    assert np.array_equal(nn.nn_table(size, gamma), expected)
    assert np.array_equal(task_nn.sign_vector_table(size, gamma), expected)
    nn.nn_table.cache_clear()
    task_nn.sign_vector_table.cache_clear()


def test_max_overlap_against_the_full_matrix():
    rng = np.random.default_rng(3)
    s = np.where(rng.random((23, 11)) < 0.5, -1, 1).astype(np.int8)
    full = s.astype(np.int64) @ s.T.astype(np.int64)
    np.fill_diagonal(full, 0)
    for block in (1, 4, 23, 64, None):
        assert jl.max_abs_overlap(s, block) == np.abs(full).max()


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 63, 64, 65, 511, 512, 2784])
def test_width_without_building_is_the_built_width(n):
    spec = get_construction("nearest-neighbour-2tf")
    assert spec.width(n) == nn.nn_width(n) == spec.make(n).width


def test_ladder_reads_nn_width_past_the_build_limit():
    """The explicit crossover, recomputed here from the catalogue's bound and the built width."""
    from reductions.separations.catalogue import lower_bound
    from reductions.separations.ladder import EXPLICIT_MAX_LENGTH, WidthCurves, crossover, find_separations

    sep = find_separations(["nearest-neighbour"], 16, weak=["elman"])[0]
    curves = WidthCurves(sep, 16)
    x = crossover(curves.lower, curves.explicit)
    assert x is not None and curves.length(x) > EXPLICIT_MAX_LENGTH
    for n, crosses in ((x, True), (x - 1, False)):
        length = curves.length(n)
        weak = lower_bound("nearest-neighbour", "elman", 1, length, 16, 1, sep.problem).min_width
        built = get_construction("nearest-neighbour-2tf").make(n).width
        assert (weak > built) is crosses
