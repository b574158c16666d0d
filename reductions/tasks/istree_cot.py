"""IsTree chain of thought: WDL's DFS Euler tour, and a checker for any valid DFS tour.

Both run over the whole batch with a loop over steps, never over instances. Nodes here are
plain ids 0 .. n-1 (the task adds the token offset).
"""

from __future__ import annotations

import numpy as np

__all__ = ["euler_tour", "assemble_suffix", "check_suffix"]

_PAD, _EOS, _NODE0 = 4, 5, 16  # WDL ids (see istree.py)


def _adjacency_lists(edges: np.ndarray, n: int):
    """Per-instance neighbour lists in edge-list order, as CSR: ``(nbr, start, stop)``.

    WDL appends y to x's list and x to y's list for each edge (x, y) in order; the stable sort
    of the half-edges by their source keeps exactly that order.
    """
    B, E, _ = edges.shape
    src = edges.reshape(B, 2 * E)  # half-edges u0->v0, v0->u0, u1->v1, ...: sources
    dst = edges[:, :, ::-1].reshape(B, 2 * E)  # and their targets
    order = np.argsort(src, axis=1, kind="stable")
    nbr = np.take_along_axis(dst, order, axis=1)  # (B, 2E)
    counts = np.zeros((B, n), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(B), 2 * E), src.ravel()), 1)
    stop = np.cumsum(counts, axis=1)  # (B, n)
    return nbr, stop - counts, stop


def euler_tour(edges, n: int) -> tuple[np.ndarray, np.ndarray]:
    """WDL's ``euler_tour`` with ``cycle_shut_down=True``, for a batch.

    DFS from node 0; a node is written when entered and again after each child returns;
    neighbours are tried in edge-list order, the parent is skipped, and the tour stops for
    good at the first neighbour already visited (a cycle).

    Parameters
    ----------
    edges : array ``(B, E, 2)`` of node ids
    n : int
        Number of nodes.

    Returns
    -------
    tour : ``(B, 2n - 1)`` int64 node ids, ``-1`` after the end
    length : ``(B,)`` int64

    Examples
    --------
    >>> tour, length = euler_tour(np.array([[[1, 0], [3, 1], [2, 0]]]), 4)
    >>> tour[0, :length[0]].tolist()
    [0, 1, 3, 1, 0, 2, 0]
    """
    edges = np.asarray(edges, dtype=np.int64)
    B = edges.shape[0]
    nbr, ptr, stop = _adjacency_lists(edges, n)
    ptr = ptr.copy()
    stack = np.zeros((B, n + 1), dtype=np.int64)  # (B, depth) node ids, root 0 at the bottom
    depth = np.ones(B, dtype=np.int64)
    visited = np.zeros((B, n), dtype=bool)
    visited[:, 0] = True
    tour = np.full((B, 2 * n - 1), -1, dtype=np.int64)
    tour[:, 0] = 0
    length = np.ones(B, dtype=np.int64)
    active = np.ones(B, dtype=bool)
    while active.any():  # each pass consumes one half-edge or one return, per instance
        b = np.nonzero(active)[0]
        u = stack[b, depth[b] - 1]
        parent = np.where(depth[b] >= 2, stack[b, np.maximum(depth[b] - 2, 0)], -1)
        finished = ptr[b, u] >= stop[b, u]
        # a finished node returns to its parent, which is written again (the root ends the tour)
        fb = b[finished]
        depth[fb] -= 1
        back = depth[fb] >= 1
        active[fb[~back]] = False
        rb = fb[back]
        tour[rb, length[rb]] = stack[rb, depth[rb] - 1]
        length[rb] += 1
        # otherwise try the next neighbour y
        nb, nu = b[~finished], u[~finished]
        y = nbr[nb, ptr[nb, nu]]
        ptr[nb, nu] += 1
        skip = y == parent[~finished]
        cycle = ~skip & visited[nb, y]
        active[nb[cycle]] = False
        go = ~skip & ~cycle
        gb, gy = nb[go], y[go]
        visited[gb, gy] = True
        stack[gb, depth[gb]] = gy
        depth[gb] += 1
        tour[gb, length[gb]] = gy
        length[gb] += 1
    return tour, length


def assemble_suffix(tour_tokens, length, answer) -> tuple[np.ndarray, np.ndarray]:
    """``tour, [EOS], answer`` per row, right-padded with ``[PAD]``; returns (tokens, lengths)."""
    B = tour_tokens.shape[0]
    width = int(length.max(initial=0)) + 2
    out = np.full((B, width), _PAD, dtype=np.int64)
    col = np.arange(width)[None, :]
    body = col < length[:, None]
    out[body] = np.pad(tour_tokens, ((0, 0), (0, max(0, width - tour_tokens.shape[1]))),
                       constant_values=_PAD)[:, :width][body]
    out[np.arange(B), length] = _EOS
    out[np.arange(B), length + 1] = answer
    return out, length + 2


def check_suffix(edges, n: int, suffix, truth_token) -> np.ndarray:
    """Whether each row of ``suffix`` is a valid DFS tour, ``[EOS]``, and ``truth_token``.

    A tour is valid when it starts at node 0 and each step either enters an unvisited node
    along an unused edge (a tree edge) or returns to the parent from a node all of whose
    edges are tree edges; and it ends either back at the root with all the root's edges
    used, or at a node that has an edge, other than the tree edges, to a visited node (a
    cycle stops the DFS). Any neighbour order is accepted; a repeated edge counts as a cycle.
    """
    edges = np.asarray(edges, dtype=np.int64)
    suffix = np.asarray(suffix, dtype=np.int64)
    B, T = suffix.shape
    adj = np.zeros((B, n, n), dtype=np.int32)  # edge multiplicities
    rows = np.repeat(np.arange(B), edges.shape[1])
    np.add.at(adj, (rows, edges[:, :, 0].ravel(), edges[:, :, 1].ravel()), 1)
    np.add.at(adj, (rows, edges[:, :, 1].ravel(), edges[:, :, 0].ravel()), 1)
    degree = adj.sum(axis=2)  # (B, n)
    is_eos = suffix == _EOS
    has_eos = is_eos.any(axis=1)
    length = np.where(has_eos, np.argmax(is_eos, axis=1), 0)  # tour length = first [EOS]
    node = suffix - _NODE0
    ok = has_eos & (length >= 1) & (length + 1 < T)
    ok &= node[:, 0] == 0
    all_rows = np.arange(B)
    ok[ok] &= suffix[all_rows[ok], length[ok] + 1] == np.asarray(truth_token)[ok]
    stack = np.zeros((B, n + 1), dtype=np.int64)
    depth = np.ones(B, dtype=np.int64)
    visited = np.zeros((B, n), dtype=bool)
    visited[:, 0] = True
    tree = np.zeros((B, n), dtype=np.int64)  # tree edges at each node
    for t in range(1, T):
        b = np.nonzero(ok & (t < length))[0]
        if b.size == 0:
            break
        w = node[b, t]
        in_range = (w >= 0) & (w < n)
        ok[b[~in_range]] = False
        b, w = b[in_range], w[in_range]
        u = stack[b, depth[b] - 1]
        parent = np.where(depth[b] >= 2, stack[b, np.maximum(depth[b] - 2, 0)], -1)
        enter = ~visited[b, w] & (adj[b, u, w] > 0)
        leave = ~enter & (w == parent) & (tree[b, u] == degree[b, u])
        ok[b[~enter & ~leave]] = False
        eb, ew, eu = b[enter], w[enter], u[enter]
        visited[eb, ew] = True
        tree[eb, eu] += 1
        tree[eb, ew] += 1
        stack[eb, depth[eb]] = ew
        depth[eb] += 1
        depth[b[leave]] -= 1
    b = np.nonzero(ok)[0]
    u = stack[b, depth[b] - 1]
    done = (depth[b] == 1) & (tree[b, 0] == degree[b, 0])
    to_visited = np.einsum("bk,bk->b", adj[b, u].astype(np.int64), visited[b].astype(np.int64))
    ok[b] = done | (to_visited > tree[b, u])
    return ok
