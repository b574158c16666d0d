"""Issue 23 tasks: induction heads, function composition (two layouts), copy. Ground truth against a
plain loop, samplers against the ground truth, malformed inputs refused, and the reductions' splits."""

import numpy as np
import pytest

from commcomp.errors import InvalidParameterError
from reductions import get_reduction
from reductions.composition import bit_places, composition_sizes
from reductions.tasks.copy import Copy
from reductions.tasks.function_composition import FunctionComposition
from reductions.tasks.induction_heads import InductionHeads


def _induction_loop(row, bottom):
    for j in range(len(row) - 2, -1, -1):
        if row[j] == row[-1]:
            return row[j + 1]
    return bottom


@pytest.mark.parametrize("n, alphabet", [(2, None), (5, 2), (9, None), (12, 3)])
def test_induction_heads_against_a_loop_all_short_and_sampled(n, alphabet):
    task = InductionHeads(alphabet=alphabet)
    s = task.symbols(n)
    if s ** n <= 5000:  # every sequence
        tokens = np.stack(np.meshgrid(*[np.arange(s)] * n, indexing="ij"), -1).reshape(-1, n)
    else:
        tokens = task.sample(n, 500, np.random.default_rng(n)).tokens
    truth = task.ground_truth(task.make_batch(n, tokens))[:, 0]
    assert truth.tolist() == [_induction_loop(r, s) for r in tokens]
    batch = task.sample(n, 300, np.random.default_rng(1))
    assert np.array_equal(batch.answers, task.ground_truth(batch))
    assert np.all(batch.answers != s)  # the sampler always plants a previous occurrence
    assert batch.tokens.max() < task.vocab_size(n) == len(task.vocabulary(n))


@pytest.mark.parametrize("layout", ["pairs", "split"])
def test_function_composition_against_dicts(layout):
    task = FunctionComposition(layout=layout)
    for n in (2, 3, 7):
        batch = task.sample(n, 400, np.random.default_rng(n))
        assert batch.tokens.shape == (400, task.length(n)) and batch.tokens.max() < task.vocab_size(n)
        gi, gv, fi, fv, q = task.entries(batch)
        want = [dict(zip(gi[r], gv[r]))[dict(zip(fi[r], fv[r]))[q[r]]] for r in range(400)]
        assert task.ground_truth(batch)[:, 0].tolist() == want == batch.answers[:, 0].tolist()
        assert len(set(want)) == n  # every value is answered


def test_function_composition_refuses_a_repeated_input():
    task = FunctionComposition()
    bad = task.assemble(np.array([[0, 0]]), np.array([[1, 1]]), np.array([[0, 1]]), np.array([[0, 0]]),
                        np.array([0]), 2)
    with pytest.raises(InvalidParameterError, match="one entry per input"):
        task.ground_truth(task.make_batch(2, bad))


def test_copy_answers_are_the_string():
    task = Copy(alphabet=3)
    batch = task.sample(6, 50, np.random.default_rng(0))
    assert np.array_equal(task.ground_truth(batch), batch.tokens[:, :6])
    assert task.output_positions(6).tolist() == list(range(7, 13))
    broken = batch.tokens.copy()
    broken[0, 8] = 0  # a symbol where a blank belongs
    with pytest.raises(InvalidParameterError):
        task.ground_truth(task.make_batch(6, broken))


def test_bit_places_fill_each_value_within_floor_log2_n():
    for k in range(1, 200):
        n, capacity = composition_sizes(k)
        blocks, places = bit_places(k)
        assert capacity >= k and n == max(2, blocks.max() + 1) and np.all(2 ** (places + 1) <= n)
        assert len(set(zip(blocks.tolist(), places.tolist()))) == k  # no two bits share a place
    for k in (10, 1000, 10 ** 4):  # closed form: 1 + sum_{m=2..n} floor(log2 m) = n log2 n - O(n)
        n, capacity = composition_sizes(k)
        L = n.bit_length() - 1
        assert capacity == 1 + (n + 1) * L - 2 ** (L + 1) + 2 >= n * np.log2(n) - 3 * n


def test_the_splits_each_reduction_declares():
    assert get_reduction("induction-heads").query_fixed and get_reduction("induction-heads").split == "partition"
    assert get_reduction("induction-heads", "index@prefix").split_point(4) == 8  # Alice's last bit at 7
    # the split layout's second partition interleaves Bob's input tokens with Alice's values
    red = get_reduction("function-composition", "index@split")
    assert "".join(".AB"[o] for o in red.owners(3)[6:]) == "BABABA."
    assert get_reduction("copy").split_point(5) == 5


def test_composition_with_one_bit_per_entry_is_positionwise_where_the_default_is_not():
    """The 1-layer witness search reads Alice's tokens one bit each: index@bits has that layout (each
    g-entry i n + x_i), the default (log n bits per entry) is refused by the same probe."""
    from reductions.search.reachable.letters import NotPositionwiseError, alice_letters

    bits = get_reduction("function-composition", "index@bits")
    letters = alice_letters(bits, 9)
    assert letters.bit_at.tolist() == list(range(9))
    assert letters.tokens.tolist() == [[9 * i, 9 * i + 1] for i in range(9)]
    with pytest.raises(NotPositionwiseError, match="several bits"):
        alice_letters(get_reduction("function-composition"), 9)
