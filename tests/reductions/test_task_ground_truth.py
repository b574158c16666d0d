"""Each task's vectorised ground truth against a plain-Python reading of its definition."""

import itertools

import networkx as nx
import numpy as np
import pytest

from reductions.tasks import (MQAR, Dyck, IndexLookup, IsTree, Match2, Match3, MultiIndexLookup,
                              NearestNeighbour, QSparseAveraging, StringDisjointness, StringEquality)
from reductions.tasks.nearest_neighbour import sign_vector_table

RNG = np.random.default_rng(12345)


# -- plain references, one instance at a time ----------------------------------------------------
def plain_dyck(s: str, depth: int) -> bool:
    pairs, stack = {")": "(", "]": "[", "}": "{", ">": "<"}, []
    for c in s:
        if c in "([{<":
            stack.append(c)
            if len(stack) > depth:
                return False
        elif not stack or stack.pop() != pairs[c]:
            return False
    return not stack


def plain_match(values, modulus, arity):
    out = []
    for i, v in enumerate(values):
        others = [w for j, w in enumerate(values) if j != i]
        combos = itertools.product(others, repeat=arity - 1)  # positions j, k != i; j = k allowed
        out.append(int(any((v + sum(c)) % modulus == 0 for c in combos)))
    return out


def plain_is_tree(n, pairs):
    parent = list(range(n))

    def find(a):
        while parent[a] != a:
            a = parent[a]
        return a
    for u, v in pairs:
        ru, rv = find(u), find(v)
        if ru == rv:
            return False  # a cycle (a repeated edge included)
        parent[ru] = rv
    return len(pairs) == n - 1


# -- hand-made sequences ------------------------------------------------------------------------
DYCK_CASES = ["", "()", "[]", "([])", "([)]", "(()", "))((", "()[]", "[(])", "(([]))", "[()][]", ")(",
              "((", "[[]]()", "[()()]", "(((", "([]())"]


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_dyck_hand_strings(depth):
    task = Dyck(types=2, depth=depth)
    for s in DYCK_CASES:
        if len(s) % 2 or not s:
            continue
        got = task.ground_truth(task.make_batch(len(s) // 2, task.encode_strings([s])))[0, 0]
        assert got == plain_dyck(s, depth), s


@pytest.mark.parametrize("types, depth", [(1, 1), (2, 1), (2, 2), (2, 4), (3, 3), (4, 3)])
def test_dyck_exhaustive_small_and_dfa_is_minimal(types, depth):
    task = Dyck(types=types, depth=depth)
    assert task.num_states == sum(types ** d for d in range(depth + 1)) + 1  # reference C6
    names = "".join(task.vocabulary(1)[:-1])
    for length in (2, 4, 6) if types <= 2 else (2, 4):
        strings = ["".join(p) for p in itertools.product(names, repeat=length)]
        got = task.ground_truth(task.make_batch(length // 2, task.encode_strings(strings)))[:, 0]
        assert got.tolist() == [int(plain_dyck(s, depth)) for s in strings]
    # Moore refinement: all states pairwise distinguishable, so no smaller DFA exists
    table = task.transitions[:, :-1]
    block = [int(s == 0) for s in range(len(table))]
    while True:
        sig = {s: (block[s],) + tuple(block[t] for t in table[s]) for s in range(len(table))}
        ids = {v: i for i, v in enumerate(sorted(set(sig.values())))}
        new = [ids[sig[s]] for s in range(len(table))]
        if len(set(new)) == len(set(block)):
            break
        block = new
    assert len(set(block)) == task.num_states


def test_index_lookup_and_multi_index_lookup_by_hand():
    il = IndexLookup(alphabet=3)
    tokens = np.array([[2, 0, 1, 1, 3 + 0], [2, 0, 1, 1, 3 + 2]])
    assert il.ground_truth(il.make_batch(4, tokens)).ravel().tolist() == [2, 1]
    mil = MultiIndexLookup()
    b = mil.sample(5, 20, RNG)
    for row, ans in zip(b.tokens, mil.ground_truth(b)):
        data, trailing = row[5:15], row[15:] - 2
        assert ans.tolist() == [int(data[p]) for p in trailing]


def test_nearest_neighbour_against_plain_distances():
    task = NearestNeighbour()
    n = 6
    b = task.sample(n, 50, RNG)
    table = task.table(n)
    assert np.allclose(np.linalg.norm(table, axis=1), 1)
    assert len({tuple(r) for r in sign_vector_table(task.table_size(n)).tolist()}) == task.table_size(n)
    for row, feats, ans in zip(b.tokens, b.features, task.ground_truth(b)):
        q = table[row[2 * n]]
        assert np.allclose(feats[2 * n], q) and np.allclose(feats[1], 0)
        dist = [round(float(np.sum((table[row[2 * i]] - q) ** 2)), 9) for i in range(n)]
        best = dist.index(min(dist))  # earliest pair among the nearest
        assert ans[0] == row[2 * best + 1] - task.table_size(n)


def test_mqar_against_a_dict():
    for task in (MQAR(num_queries=3), MQAR(num_queries=None, values=4)):
        b = task.sample(5, 30, RNG)
        K = task.key_space(5)
        for row, ans in zip(b.tokens, task.ground_truth(b)):
            table = {int(row[2 * i]): int(row[2 * i + 1]) - K for i in range(5)}
            assert ans.tolist() == [table.get(int(q), -1) for q in row[10:]]
    t = MQAR(num_queries=2)
    absent = np.array([[0, t.key_space(2) + 1, 1, t.key_space(2), 3, 1]])
    assert t.ground_truth(t.make_batch(2, absent)).tolist() == [[-1, 0]]


def test_string_tasks_by_hand():
    x = np.array([[1, 0, 1], [1, 0, 1], [0, 0, 0]])
    y = np.array([[1, 0, 1], [0, 1, 0], [0, 0, 0]])
    eq, dj = StringEquality(), StringDisjointness()
    assert eq.ground_truth(eq.make_batch(3, eq.assemble(x, y))).ravel().tolist() == [1, 0, 1]
    assert dj.ground_truth(dj.make_batch(3, dj.assemble(x, y))).ravel().tolist() == [0, 1, 1]


def test_qsa_against_plain_loops():
    task = QSparseAveraging(dim=3)
    q = 3
    b = task.sample(q, 10, RNG)
    got = task.ground_truth(b)
    for feats, out in zip(b.features, got):
        for i in range(2 * q + 1):
            ptr = [int(p) for p in feats[i, 3:3 + q]]
            assert feats[i, -1] == i
            assert np.allclose(out[i], np.mean([feats[j, :3] for j in ptr], axis=0))


@pytest.mark.parametrize("task, arity", [(Match2(), 2), (Match3(), 3), (Match3(modulus=7), 3)])
def test_match_against_brute_force(task, arity):
    for n in (1, 2, 3):
        M = task.modulus_at(n)
        b = task.make_batch(n, RNG.integers(0, M, size=(200, task.length(n))))
        got = task.ground_truth(b)
        for row, ans in zip(b.tokens.tolist(), got.tolist()):
            assert ans == plain_match(row, M, arity), row


def test_istree_against_networkx_multigraph_and_union_find():
    task = IsTree()
    n = 6
    edges = RNG.integers(0, n, size=(400, n - 1, 2))  # repeated edges and self-loops included
    b = task.from_edges(n, edges)
    got = task.ground_truth(b)[:, 0]
    for pairs, ans in zip(edges.tolist(), got):
        g = nx.MultiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from(pairs)
        assert ans == nx.is_tree(g) == plain_is_tree(n, pairs)
    assert 0 < got.sum() < len(got)


def _plain_wdl_tour(n, pairs):
    """WDL's euler_tour (rnn/data.py), transcribed."""
    lists = [[] for _ in range(n)]
    for a, c in pairs:
        lists[a].append(c)
        lists[c].append(a)
    visited, tour, flag = [False] * n, [], [True]

    def dfs(u, fa):
        visited[u] = True
        tour.append(u)
        for w in lists[u]:
            if not flag[0]:
                return
            if w == fa:
                continue
            if visited[w]:
                flag[0] = False
                return
            dfs(w, u)
            if flag[0]:
                tour.append(u)
    dfs(0, -1)
    return tour


def test_istree_cot_is_wdls_tour_and_passes_the_dfs_check():
    task = IsTree()
    for n in (4, 7, 12):
        b = task.sample(n, 60, RNG)
        suffix, lengths = task.cot_suffix(b)
        for pairs, row, L, truth in zip(task.edges(b).tolist(), suffix, lengths, b.answers[:, 0]):
            assert row[:L - 2].tolist() == [16 + v for v in _plain_wdl_tour(n, pairs)]
            assert row[L - 2:L].tolist() == [5, 6 if truth else 7]
        assert task.check_cot(b, suffix).all()
        full = task.with_cot(b)
        assert full.tokens.shape[1] == b.length + suffix.shape[1]
        rows = np.arange(len(lengths))
        assert np.all(full.tokens[rows, full.meta["lengths"] - 1] == suffix[rows, lengths - 1])


def test_istree_cot_check_rejects_broken_tours():
    task = IsTree()
    tree = np.array([[[1, 0], [3, 1], [2, 0]]])  # 0-1, 1-3, 0-2
    good = task.cot_suffix(task.from_edges(4, tree))[0][0]  # 0 1 3 1 0 2 0 [EOS] [TRUE]
    other_order = np.array([16, 18, 16, 17, 19, 17, 16, 5, 6])  # children in another order: valid
    bad = [
        np.array([16, 17, 19, 16, 18, 16, 5, 6, 4]),  # jumps 3 -> 0, not along an edge
        np.array([16, 17, 16, 18, 16, 5, 6, 4, 4]),  # leaves 1 before visiting 3
        np.array([16, 17, 19, 17, 16, 18, 16, 5, 7]),  # wrong answer
        np.array([17, 16, 18, 16, 5, 6, 4, 4, 4]),  # starts at node 1
        np.array([16, 17, 19, 17, 16, 5, 6, 4, 4]),  # stops at the root before node 2
    ]
    tours = np.stack([good, other_order] + bad)
    ok = task.check_cot(task.from_edges(4, np.repeat(tree, len(tours), axis=0)), tours)
    assert ok.tolist() == [True, True] + [False] * len(bad)
    cyc = task.from_edges(4, np.array([[[1, 0], [2, 1], [2, 0]]] * 3))  # triangle + isolated 3
    tours = np.array([[16, 17, 18, 5, 7], [16, 18, 17, 5, 7], [16, 17, 5, 7, 4]])
    assert task.check_cot(cyc, tours).tolist() == [True, True, False]  # 1 has no back edge yet
