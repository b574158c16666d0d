"""Deterministic finite automata with outputs: minimisation, products, graphs.

A :class:`DFA` is a complete Moore machine: ``delta (S, A)`` int64 (state x letter index -> state),
a start state and an output class per state (``output (S,)`` int64; a language is the set of words
whose state has output 1). Words are tuples of letter indices; ``letters`` names them (token ids
of a model, or characters).

* :func:`minimize`: the minimal DFA of the reachable part, by partition refinement (Moore's
  algorithm: split blocks by output, then by the blocks their letters reach, until stable);
  blocks are numbered by first visit in breadth-first order from the start, so the result is
  canonical (two equivalent DFAs minimise to equal tables).
* :func:`shortest_difference`: breadth-first search of the product of two DFAs over the same
  letters: the shortest word (least in letter order among the shortest) on which their
  acceptance differs, or None when they accept the same language at every length.
* :func:`to_networkx`, :func:`to_dot`, :func:`to_json`, :func:`from_json`: the transition graph.

Examples
--------
>>> parity = DFA(np.array([[0, 1], [1, 0]]), 0, np.array([1, 0]), ("0", "1"))
>>> doubled = DFA(np.array([[2, 1], [3, 0], [0, 3], [1, 2]]), 0, np.array([1, 0, 1, 0]), ("0", "1"))
>>> minimize(doubled).delta.tolist(), shortest_difference(parity, doubled)
([[0, 1], [1, 0]], None)
>>> shortest_difference(parity, DFA(np.array([[0, 0]]), 0, np.array([1]), ("0", "1")))
(1,)
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

__all__ = ["DFA", "minimize", "reachable_part", "shortest_difference", "accepts", "run_word", "to_networkx",
           "to_dot", "to_json", "from_json", "words_up_to"]


@dataclass(frozen=True, eq=False)
class DFA:
    """A complete DFA with an output class per state (module docstring).

    Attributes
    ----------
    delta : ``(S, A)`` int64
    start : int
    output : ``(S,)`` int64 (1 = accept for a language)
    letters : tuple of str, one name per letter index
    """

    delta: np.ndarray
    start: int
    output: np.ndarray
    letters: tuple

    def __post_init__(self):
        delta = np.asarray(self.delta, dtype=np.int64)
        output = np.asarray(self.output, dtype=np.int64).reshape(-1)
        if delta.ndim != 2 or delta.shape[0] != output.shape[0] or delta.shape[0] == 0:
            raise InvalidParameterError(f"a DFA needs delta (S, A) and one output per state; got {delta.shape} "
                                        f"and {output.shape}")
        if delta.size and (delta.min() < 0 or delta.max() >= delta.shape[0]):
            raise InvalidParameterError("a DFA's transitions must name its states 0..S-1")
        if not 0 <= int(self.start) < delta.shape[0] or len(self.letters) != delta.shape[1]:
            raise InvalidParameterError(f"start {self.start} or letters {self.letters} do not fit delta {delta.shape}")
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "output", output)
        object.__setattr__(self, "start", int(self.start))
        object.__setattr__(self, "letters", tuple(str(a) for a in self.letters))

    @property
    def states(self) -> int:
        return int(self.delta.shape[0])


def run_word(dfa: DFA, word) -> int:
    """The state ``dfa`` reaches on ``word`` (letter indices) from its start."""
    q = dfa.start
    for a in word:
        q = int(dfa.delta[q, int(a)])
    return q


def accepts(dfa: DFA, word) -> bool:
    return bool(dfa.output[run_word(dfa, word)] == 1)


def words_up_to(A: int, length: int):
    """Every word over ``A`` letters of length ``0..length``, shortest first, in letter order."""
    yield ()
    frontier = [()]
    for _ in range(length):
        frontier = [w + (a,) for w in frontier for a in range(A)]
        yield from frontier


def _bfs_order(delta: np.ndarray, start: int) -> list:
    seen, order, queue = {start}, [start], deque([start])
    while queue:
        q = queue.popleft()
        for r in delta[q].tolist():
            if r not in seen:
                seen.add(r)
                order.append(r)
                queue.append(r)
    return order


def reachable_part(dfa: DFA) -> DFA:
    """The DFA restricted to the states reachable from the start, renumbered in BFS order."""
    order = _bfs_order(dfa.delta, dfa.start)
    new = np.full(dfa.states, -1, dtype=np.int64)
    new[order] = np.arange(len(order))
    return DFA(new[dfa.delta[order]], 0, dfa.output[order], dfa.letters)


def minimize(dfa: DFA) -> DFA:
    """The minimal DFA (module docstring): reachable part, then Moore's partition refinement.

    Each round gives every state the signature (its block, the blocks of its successors) and
    renumbers blocks by signature; the number of blocks never falls and the partition is stable
    when it stops growing (at most S rounds).
    """
    d = reachable_part(dfa)
    _, block = np.unique(d.output, return_inverse=True)
    block = block.reshape(-1)
    while True:
        signature = np.concatenate([block[:, None], block[d.delta]], axis=1)  # (S, 1 + A)
        _, new = np.unique(signature, axis=0, return_inverse=True)
        new = new.reshape(-1)
        if new.max() == block.max():
            break
        block = new
    # one representative per block, blocks numbered by BFS from the start's block
    K = int(block.max()) + 1
    rep = np.zeros(K, dtype=np.int64)
    rep[block[::-1]] = np.arange(d.states)[::-1]  # the first state of each block
    quotient = block[d.delta[rep]]  # (K, A)
    order = _bfs_order(quotient, int(block[0]))
    rank = np.empty(K, dtype=np.int64)
    rank[order] = np.arange(K)
    return DFA(rank[quotient[order]], 0, d.output[rep[order]], d.letters)


def shortest_difference(a: DFA, b: DFA, *, accept: int = 1):
    """The shortest word (least in letter order) accepted by exactly one of ``a`` and ``b``
    (output ``== accept``), or None when they agree on every word of every length."""
    if a.letters != b.letters:
        raise InvalidParameterError(f"the two DFAs have different letters: {a.letters} and {b.letters}")
    start = (a.start, b.start)
    parent = {start: None}
    queue = deque([start])
    while queue:
        p, q = queue.popleft()
        if (a.output[p] == accept) != (b.output[q] == accept):
            word = []
            node = (p, q)
            while parent[node] is not None:
                node, letter = parent[node]
                word.append(letter)
            return tuple(word[::-1])
        for letter in range(a.delta.shape[1]):
            nxt = (int(a.delta[p, letter]), int(b.delta[q, letter]))
            if nxt not in parent:
                parent[nxt] = ((p, q), letter)
                queue.append(nxt)
    return None


def to_networkx(dfa: DFA):
    """A :class:`networkx.MultiDiGraph`: nodes are states (attributes ``output``, ``start``), one
    edge per (state, letter) with attribute ``letter``."""
    import networkx as nx

    g = nx.MultiDiGraph()
    for q in range(dfa.states):
        g.add_node(q, output=int(dfa.output[q]), start=q == dfa.start)
    for q in range(dfa.states):
        for i, r in enumerate(dfa.delta[q].tolist()):
            g.add_edge(q, int(r), letter=dfa.letters[i])
    return g


def to_dot(dfa: DFA, name: str = "automaton") -> str:
    """Graphviz DOT text: accepting states (output 1) double circles, parallel edges merged."""
    lines = [f"digraph {json.dumps(name)} {{", "  rankdir=LR;", '  __start [shape=point, label=""];']
    for q in range(dfa.states):
        shape = "doublecircle" if dfa.output[q] == 1 else "circle"
        lines.append(f'  {q} [shape={shape}, label="{q}/{int(dfa.output[q])}"];')
    lines.append(f"  __start -> {dfa.start};")
    for q in range(dfa.states):
        by_target = {}
        for i, r in enumerate(dfa.delta[q].tolist()):
            by_target.setdefault(int(r), []).append(dfa.letters[i])
        for r, names in by_target.items():
            lines.append(f"  {q} -> {r} [label={json.dumps(','.join(names))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_json(dfa: DFA) -> dict:
    return {"letters": list(dfa.letters), "start": dfa.start, "output": dfa.output.tolist(),
            "delta": dfa.delta.tolist()}


def from_json(data: dict) -> DFA:
    """A DFA from :func:`to_json`'s fields (``letters``, ``start``, ``output``, ``delta``)."""
    try:
        return DFA(np.asarray(data["delta"]), int(data["start"]), np.asarray(data["output"]),
                   tuple(data["letters"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidParameterError(f"a DFA file needs letters, start, output and delta: {exc}") from None
