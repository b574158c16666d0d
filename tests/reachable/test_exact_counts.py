"""The exact correct count of ``verify --exhaustive`` (:func:`index_correct_count`), independently.

Three references, none sharing the backward pass under test:

* a plain loop over every x (n <= 12): each x walked through the transition tables to its final
  class, and ``answers[class, y] == x_y`` counted over every (x, y);
* the earlier algorithm (forward counts times backward completions, one product of two big
  numbers per level), kept here as it was, at n where the sums are far beyond int64, with random
  answer tables (so both sides of the signed sums, and tables that differ, are exercised);
* the Bob table with Bob's tokens encoded in many small chunks against one chunk.
"""

from __future__ import annotations

import numpy as np
import pytest

from commcomp.problems import all_bit_strings
from commcomp.problems.index import Index
from reductions.search.reachable import analyses
from models.constructions.dyck_rnn import make_dyck_rnn
from reductions.search.reachable.analyses import BobTable, bob_table, index_correct_count, is_index_problem
from reductions.search.reachable.engine import explore, explore_model
from reductions.search.reachable.letters import AliceLetters
from reductions.simulate.setup import prepare


def _loop_count(reach, answers) -> int:
    """Every x of n bits walked to its final class through the tables; every (x, y) compared."""
    n = reach.layout.n
    xs = all_bit_strings(n).astype(np.int64)  # (2^n, n)
    cls = np.zeros(len(xs), dtype=np.int64)
    for lv in reach.levels:  # a loop over positions, every x at once
        letter = xs[:, lv.bit] if lv.bit >= 0 else np.zeros(len(xs), dtype=np.int64)
        cls = lv.next_class[cls, letter]
    a = np.asarray(answers, dtype=np.int64)[cls]  # (2^n, n): Bob's answer for each (x, y)
    return int((a == xs).sum())


def _earlier_count(reach, answers) -> int:
    """The algorithm ``index_correct_count`` had before (forward counts x backward completions)."""
    a = np.asarray(answers, dtype=np.int64)
    counts = reach.final_counts
    K, s = len(counts), len(reach.levels)
    w = 2 * a - 1
    total = sum(int(c) * int((a[k] == 0).sum()) for k, c in enumerate(counts))
    for i in reach.layout.unread:
        total += sum(int(w[k, i]) * (int(c) // 2) for k, c in enumerate(counts))
    back = np.eye(K, dtype=object)
    for t in range(s - 1, -1, -1):
        level = reach.levels[t]
        if level.bit >= 0:
            v = back[level.next_class[:, 1]] @ w[:, level.bit].astype(object)
            fwd = reach.levels[t - 1].counts if t else np.array([reach.unread_factor], dtype=object)
            total += int(fwd.astype(object) @ v)
        nxt = level.next_class
        back = back[nxt[:, 0]] if nxt.shape[1] == 1 else back[nxt[:, 0]] + back[nxt[:, 1]]
    return total


SMALL = [("index-lookup", "lstm", "fixed:4:2", 10), ("index-lookup", "gru", "fixed:8:4", 9),
         ("index-lookup", "elman", "float16", 8), ("mqar", "gru", "fixed:6:3", 6),
         ("nearest-neighbour", "mamba", "fixed:6:3", 6), ("index-lookup", "linear-attention", "fixed:4:2", 11)]


@pytest.mark.parametrize("task,arch,precision,n", SMALL)
def test_count_equals_a_plain_loop_over_every_input(task, arch, precision, n):
    sim = prepare(task, arch, n, precision, width=2, seed=3)
    reach = explore(sim)
    table = bob_table(sim, reach)
    rng = np.random.default_rng(5)
    random = rng.integers(0, 2, size=table.answers.shape).astype(bool)
    tables = [table.answers, table.model_answers, random, ~random, np.zeros_like(random), np.ones_like(random)]
    got = index_correct_count(sim, reach, table, tables)
    assert got == [_loop_count(reach, t) for t in tables]
    assert index_correct_count(sim, reach, table) == got[0]


def test_a_bit_no_position_reads_counts_half_of_each_class():
    """A layout that never reads bit 2 (``unread``): the count takes half of each class to have it
    set. The plain loop knows nothing of ``unread``: it enumerates that bit like any other."""
    c = make_dyck_rnn(4, "fixed:2:0", types=2, depth=2)
    layout = AliceLetters(4, 3, np.array([0, 1, 3]), np.tile([[0, 2]], (3, 1)), np.array([2]))
    reach = explore_model(c.model, layout)
    K = reach.keys.shape[0]
    rng = np.random.default_rng(0)
    for _ in range(5):
        answers = rng.integers(0, 2, size=(K, 4)).astype(bool)
        table = BobTable(np.arange(4), True, answers, answers, np.ones((K, 4), bool), np.ones(K, bool), 0.0)
        assert index_correct_count(None, reach, table) == _loop_count(reach, answers)


@pytest.mark.parametrize("task,arch,n", [("index-lookup", "lstm", 300), ("index-lookup", "gru", 200),
                                         ("mqar", "elman", 90)])
def test_count_equals_the_earlier_algorithm_far_beyond_int64(task, arch, n):
    sim = prepare(task, arch, n, "fixed:8:4", width=4, seed=2)
    reach = explore(sim)
    table = bob_table(sim, reach)
    rng = np.random.default_rng(n)
    K = table.answers.shape[0]
    skewed = rng.random((K, n)) < 0.85  # mostly +1: the signed sums take the -1 side
    tables = [table.answers, table.model_answers, ~skewed, skewed, np.ones_like(skewed), np.zeros_like(skewed)]
    got = index_correct_count(sim, reach, table, tables)
    assert got == [_earlier_count(reach, t) for t in tables]
    assert len(reach.levels) > analyses.BIG_FROM + 20 and max(got) > 2 ** 80  # the Python-int part ran
    assert reach.total_inputs == 2 ** n


def test_bob_tokens_in_small_chunks_are_the_same(monkeypatch):
    sim = prepare("index-lookup", "gru", 40, "fixed:6:3", width=3, seed=1)
    reach = explore(sim)
    whole = bob_table(sim, reach)
    monkeypatch.setattr(analyses, "ENCODE_TOKENS", 7 * (sim.split.length))  # 7 y's per chunk, 6 chunks
    chunked = bob_table(sim, reach)
    assert chunked.exhaustive and whole.exhaustive
    for key in ("ys", "answers", "model_answers", "faithful", "representatives_match"):
        assert np.array_equal(getattr(whole, key), getattr(chunked, key)), key


class _IndexExceptOneY(Index):
    """x_y for every y but the last, where it answers 1 - x_y (so sampling y could miss it)."""

    def evaluate(self, x, y):
        out = super().evaluate(x, y)
        last = np.asarray(y).reshape(-1) == np.asarray(x).shape[1] - 1
        return np.where(last, ~out, out)


def test_the_index_check_reads_every_y():
    assert is_index_problem(Index(), 300)
    assert not is_index_problem(_IndexExceptOneY(), 300)


def test_counts_computed_on_demand_equal_a_plain_forward_loop_in_any_order():
    """The exploration keeps no counts; asked for in any order (crossing checkpoints), every level's
    counts equal a plain loop over the tables, and ``total_inputs`` (a product of letter counts)
    equals the sum of the final counts."""
    from reductions.search.reachable import engine

    sim = prepare("mqar", "gru", 300, "fixed:6:3", width=3, seed=4)
    reach = explore(sim)
    assert reach.checkpoints == {} and len(reach.levels) > 2 * engine.COUNT_CHECKPOINT
    want, counts = [], [1 << len(reach.layout.unread)]
    for lv in reach.levels:  # plain Python: each (parent, letter) adds its count to the class it reaches
        nxt = [0] * lv.size
        for p, row in enumerate(lv.next_class.tolist()):
            for q in row:
                nxt[q] += counts[p]
        counts = nxt
        want.append(counts)
    order = np.random.default_rng(0).permutation(len(reach.levels))
    for i in order[:40].tolist() + [len(reach.levels) - 1, 0, engine.COUNT_CHECKPOINT]:
        assert [int(c) for c in reach.counts_at(i)] == want[i], i
    assert reach.total_inputs == sum(want[-1]) == sum(int(c) for c in reach.final_counts)
