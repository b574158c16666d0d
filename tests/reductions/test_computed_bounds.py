"""Computed bounds against independent brute force (plain Python, one prefix at a time)."""

import itertools
import math

import pytest

from reductions.search.computed import computed_state_bits
from reductions.registry import get_task


def brute_force_classes(task_name, n):
    """Myhill-Nerode classes per cut, by dictionaries over explicit prefixes and suffixes."""
    task = get_task(task_name)
    from reductions.search.computed import product_domain

    domain = [tuple(r) for r in product_domain(task, n).tolist()]
    truth = task.ground_truth(task.make_batch(n, list(map(list, domain))))
    answer = {seq: tuple(truth[i].reshape(-1).tolist()) for i, seq in enumerate(domain)}
    N = len(domain[0])
    out = []
    for cut in range(1, N):
        prefixes = sorted({s[:cut] for s in domain})
        suffixes = sorted({s[cut:] for s in domain})
        rows = {tuple(answer[p + q] for q in suffixes) for p in prefixes}
        out.append(len(rows))
    return tuple(out)


@pytest.mark.parametrize("task,n", [("index-lookup", 3), ("string-equality", 3), ("string-disjointness", 3),
                                    ("dyck", 2), ("dyck", 3)])
def test_classes_match_brute_force(task, n):
    got = computed_state_bits(task, n)
    assert got.classes_per_cut == brute_force_classes(task, n)
    assert got.max_state_bits == max(math.ceil(math.log2(c)) for c in got.classes_per_cut)


def test_known_values():
    # Index Lookup: every prefix of symbols is its own class (2^t at cut t), so n bits.
    assert computed_state_bits("index-lookup", 6).classes_per_cut == tuple(2 ** t for t in range(1, 7))
    # Equality: 2^n classes after x; Dyck-(2,2): never more than the 8 DFA states, 3 bits at every n.
    assert computed_state_bits("string-equality", 4).max_state_bits == 4
    for n in (2, 3, 4):
        assert computed_state_bits("dyck", n).max_state_bits == 3


def test_unsupported_task_is_refused():
    from commcomp.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="product"):
        computed_state_bits("mqar", 3)
