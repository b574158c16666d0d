"""Issue 23 catalogue rows: evaluated against the reductions' own sizes and brute-force counts."""

from fractions import Fraction
from itertools import product

import pytest

from commcomp.bounds import compute_bounds, evaluate_bound, get_bound, list_bounds
from commcomp.bounds.newer import NEWER_BOUNDS, composition_capacity, copy_error_floor
from reductions import get_reduction
from reductions.composition import composition_sizes


@pytest.mark.parametrize("k", [1, 2, 3, 5, 9, 12, 40, 333])
def test_capacity_formula_is_the_reduction_capacity(k):
    n, capacity = composition_sizes(k)
    N = get_reduction("function-composition").length(k)
    assert N == 2 * n + 1
    assert composition_capacity(n) == capacity
    assert evaluate_bound("COMMCOMP-FC-RNN", N=N, p=1) == capacity if N >= 5 else True


def test_one_way_rows_are_the_index_sizes_of_their_reductions():
    for k in (3, 10, 100):
        N = get_reduction("induction-heads").length(k)
        assert evaluate_bound("COMMCOMP-IH-RNN", N=N, p=1) == k
        assert evaluate_bound("COMMCOMP-IH-1TF", N=N, p=5) == pytest.approx(k / (5 + (N - 1).bit_length()))
        Ns = get_reduction("function-composition", "index@split").length(k)
        assert evaluate_bound("SAF-FE-split-1TF", N=Ns, p=3) == pytest.approx(k / (3 + (Ns - 1).bit_length()))
        Nc = get_reduction("copy").length(k)
        assert evaluate_bound("JBKM-copy-GSSM", N=Nc, p=1) == k  # binary alphabet


def test_copy_error_floor_against_counting_correct_strings():
    # a model with S states is right on at most S strings: check against every map strings -> states
    for L, S in ((2, 1), (2, 3), (3, 5)):
        strings = list(product(range(2), repeat=L))
        best = min(S, len(strings)) / len(strings)  # decode each state to one string it was sent
        assert copy_error_floor(S, 2, L) == Fraction(1) - Fraction(best).limit_denominator()
    assert copy_error_floor(10, 2, 3) == 0


def test_every_row_has_a_source_and_tags_and_shows_in_the_table():
    for b in NEWER_BOUNDS:
        assert b.tags and b.source and b.citation
    for task in ("induction-heads", "function-composition", "copy"):
        ids = {r.theorem for r in compute_bounds(1025, 16, task=task)}
        assert ids == {b.id for b in list_bounds(task=task) if b.variant is None}, task
    assert get_bound("JBKM-copy-GSSM-error").variant  # shown on request only
    assert get_bound("PNP-FC-1TF").evidence == "S" and get_bound("SAF-FE-split-1TF").evidence == "D"
