"""IsTree (WDL): is the graph given by an edge list a tree? With an optional DFS-tour CoT."""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from commcomp.errors import InvalidParameterError

from . import istree_cot
from .base import Task, TaskBatch, balanced_labels, check_batch

__all__ = ["IsTree", "WDL_SPECIALS", "NODE0", "DASH", "PAD", "EOS", "TRUE", "FALSE", "BOS"]

# WDL's vocabulary (rnn/data.py, IsTreeDataset.tokenize), ids in this order; node v is 16 + v.
WDL_SPECIALS = ("[", "]", ",", "-", "[PAD]", "[EOS]", "[TRUE]", "[FALSE]", " ", "\n", "[UNK]",
                "[BOS]", "[STARTSEARCH]", "[ENDSEARCH]", "[FAILED]", "~")
DASH, PAD, EOS, TRUE, FALSE, BOS = 3, 4, 5, 6, 7, 11
NODE0 = len(WDL_SPECIALS)  # token id of node 0


@dataclass(frozen=True)
class IsTree(Task):
    """IsTree on an edge list, in WDL's token format (reference C9); networkx is the ground truth.

    The size parameter n is the number of nodes V (nodes 0 .. n-1); a graph has n - 1 edges
    (as in WDL's data), each written as three tokens ``u - v``. Format (N = 3(n - 1) + 2)::

        position  0      1  2  3    4  5  6   ...   N-1
        token     [BOS]  u1 -  v1   u2 -  v2  ...   [EOS]     (answer read at N-1)

    The answer is 1 iff the multigraph of the listed edges is a tree (a repeated edge is a
    cycle); the model's answer token after ``[EOS]`` is ``[TRUE]`` or ``[FALSE]``.
    Vocabulary: WDL's ids exactly: the 16 specials of ``WDL_SPECIALS`` (``-`` = 3,
    ``[PAD]`` = 4, ``[EOS]`` = 5, ``[TRUE]`` = 6, ``[FALSE]`` = 7, ``[BOS]`` = 11, ...), then
    node v as id ``16 + v`` for v = 0 .. n (WDL also lists node n, never used).

    Chain of thought (WDL's ``use_cot``): :meth:`cot_suffix` writes WDL's DFS Euler tour from
    node 0 (neighbours in edge-list order, stopping at the first cycle), ``[EOS]`` and the
    answer token; :meth:`check_cot` accepts any valid DFS tour and the right answer.

    Worked example (n = 4)::

        tokens   [BOS] 1 - 0  3 - 1  2 - 0 [EOS]        answer 1 -> [TRUE]
        CoT      0 1 3 1 0 2 0 [EOS] [TRUE]

    Examples
    --------
    >>> import numpy as np
    >>> task = IsTree()
    >>> batch = task.from_edges(4, np.array([[[1, 0], [3, 1], [2, 0]], [[1, 0], [2, 1], [2, 0]]]))
    >>> task.ground_truth(batch).ravel().tolist()
    [1, 0]
    >>> task.render(batch.tokens[0], 4)
    '[BOS] 1 - 0 3 - 1 2 - 0 [EOS]'
    >>> suffix, lengths = task.cot_suffix(batch)
    >>> task.render(suffix[0, :lengths[0]], 4)
    '0 1 3 1 0 2 0 [EOS] [TRUE]'
    >>> task.check_cot(batch, suffix).tolist()
    [True, True]
    """

    name = "istree"
    aliases = ("is-tree", "is_tree", "tree")
    min_n = 2

    def vocabulary(self, n):
        return WDL_SPECIALS + tuple(str(v) for v in range(self.check_n(n) + 1))

    def vocab_size(self, n):
        return NODE0 + self.check_n(n) + 1

    def length(self, n):
        return 3 * (self.check_n(n) - 1) + 2

    # -- format -------------------------------------------------------------------------
    def from_edges(self, n, edges) -> TaskBatch:
        """A batch from node pairs ``(B, n-1, 2)``, written ``u - v`` in the given order."""
        n = self.check_n(n)
        edges = np.asarray(edges, dtype=np.int64)
        B = edges.shape[0]
        if edges.shape[1:] != (n - 1, 2) or np.any((edges < 0) | (edges >= n)):
            raise InvalidParameterError(f"istree: edges must be (B, {n - 1}, 2) nodes in [0, {n})")
        triples = np.stack([NODE0 + edges[:, :, 0], np.full((B, n - 1), DASH),
                            NODE0 + edges[:, :, 1]], axis=2).reshape(B, -1)  # (B, 3(n-1))
        tokens = np.concatenate([np.full((B, 1), BOS), triples, np.full((B, 1), EOS)], axis=1)
        return self.make_batch(n, tokens)

    def edges(self, batch: TaskBatch) -> np.ndarray:
        """The node pairs ``(B, n-1, 2)`` of a batch, validated."""
        n, tokens = batch.n, batch.tokens
        if tokens.shape[1] != self.length(n):
            raise InvalidParameterError(f"istree: expected length {self.length(n)}, got {tokens.shape[1]}")
        triples = tokens[:, 1:-1].reshape(tokens.shape[0], n - 1, 3)
        ends = triples[:, :, [0, 2]] - NODE0  # (B, n-1, 2)
        if (np.any(tokens[:, 0] != BOS) or np.any(tokens[:, -1] != EOS)
                or np.any(triples[:, :, 1] != DASH) or np.any((ends < 0) | (ends >= n))):
            raise InvalidParameterError("istree: expected [BOS] (node - node)* [EOS]")
        return ends

    # -- ground truth -------------------------------------------------------------------
    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        """networkx ``is_tree`` on each instance's graph (a loop over instances, on purpose:
        networkx is the independent reference).

        A repeated edge is a cycle of length 2, so such multigraphs are not trees; they are
        found for the whole batch at once and skip networkx (equal to ``nx.is_tree`` on the
        ``nx.MultiGraph``, which a test checks). The rest go to ``nx.is_tree`` on an ``nx.Graph``.
        """
        n, edges = batch.n, self.edges(batch)
        ordered = np.sort(np.sort(edges, axis=2) @ np.array([n, 1]), axis=1)  # (B, E) edge codes
        repeated = np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)  # (B,)
        out = np.zeros(edges.shape[0], dtype=np.int64)
        for b in np.nonzero(~repeated)[0]:
            graph = nx.empty_graph(n)
            graph.add_edges_from(edges[b].tolist())
            out[b] = nx.is_tree(graph)
        return out[:, None]  # (B, 1)

    # -- chain of thought ---------------------------------------------------------------
    def cot_suffix(self, batch: TaskBatch) -> tuple[np.ndarray, np.ndarray]:
        """WDL's CoT: DFS tour, ``[EOS]``, answer token; ``(B, T)`` right-padded with ``[PAD]``,
        and the ``(B,)`` unpadded lengths."""
        tour, tour_len = istree_cot.euler_tour(self.edges(batch), batch.n)  # node ids
        answer = np.where(self.ground_truth(batch)[:, 0] == 1, TRUE, FALSE)
        return istree_cot.assemble_suffix(tour + NODE0, tour_len, answer)

    def with_cot(self, batch: TaskBatch) -> TaskBatch:
        """The whole WDL CoT sequence ``[BOS] edges [EOS] tour [EOS] answer``, right-padded
        with ``[PAD]``; ``meta["lengths"]`` holds the unpadded lengths."""
        suffix, lengths = self.cot_suffix(batch)
        tokens = np.concatenate([batch.tokens, suffix], axis=1)
        return TaskBatch(tokens, None, batch.answers,
                         {**batch.meta, "cot": True, "lengths": batch.length + lengths})

    def check_cot(self, batch: TaskBatch, suffix) -> np.ndarray:
        """``(B,)`` bool: the suffix is a valid DFS tour from node 0 (any neighbour order, stopping
        only at a cycle or when the root is done), then ``[EOS]``, then the correct answer token."""
        truth = np.where(self.ground_truth(batch)[:, 0] == 1, TRUE, FALSE)
        return istree_cot.check_suffix(self.edges(batch), batch.n, np.asarray(suffix), truth)

    # -- sampling -----------------------------------------------------------------------
    def sample(self, n, batch, rng) -> TaskBatch:
        """Exactly half trees, half not, relabelled and shuffled; needs n >= 4.

        Trees are random recursive trees. Non-trees: nodes split into [0, s) and [s, n) for a
        random s in [3, n-1]; the first part is a recursive tree plus one edge that closes a
        cycle (node s-1 to a node other than its parent), the second a recursive tree. So
        every graph is simple with n - 1 edges. Edges are written larger id first, as WDL does.
        """
        n, batch = self.check_n(n), check_batch(batch)
        if n < 4:
            raise InvalidParameterError("istree: sampling needs n >= 4 (a simple non-tree with n-1 edges)")
        answers = balanced_labels(batch, 2, rng)  # (B,)
        split = np.where(answers == 1, n + 1, rng.integers(3, n, size=batch))  # (B,) s
        v = np.arange(1, n)[None, :]  # (1, n-1) child of each edge slot
        base = np.where(v >= split[:, None], split[:, None], 0)  # (B, n-1)
        width = np.maximum(v - base, 1)
        parent = base + np.floor(rng.random((batch, n - 1)) * width).astype(np.int64)  # (B, n-1)
        rows = np.nonzero(answers == 0)[0]
        s = split[rows]
        parent_of_last = parent[rows, s - 2]  # parent of node s-1 (slot s-2)
        other = rng.integers(0, s - 2)  # uniform in [0, s-1) without that parent
        other = other + (other >= parent_of_last)
        child = np.broadcast_to(v, (batch, n - 1)).copy()
        child[rows, s - 1], parent[rows, s - 1] = s - 1, other  # slot of node s: the cycle edge
        perm = np.argsort(rng.random((batch, n)), axis=1)  # (B, n) random relabelling
        pairs = np.stack([np.take_along_axis(perm, child, 1), np.take_along_axis(perm, parent, 1)], 2)
        pairs = np.sort(pairs, axis=2)[:, :, ::-1]  # larger id first
        order = np.argsort(rng.random((batch, n - 1)), axis=1)
        pairs = np.take_along_axis(pairs, order[:, :, None], axis=1)  # random edge order
        return self.from_edges(n, pairs).with_answers(answers[:, None])
