"""Alice's exact attention sums as a zero-sum instance: the term differences ``t_i(1) - t_i(0)``.

In the 1-layer Transformer split (DESIGN §3) Alice's message for a query ``q`` is, per head, the
integer sums ``sum_j w_j v_j`` and ``sum_j w_j`` over her positions j, each term on the fixed-point
grid and a function of the token at j, of j and of ``q`` only (the shift ``c`` and the grid are
agreed from ``q``, the weights and N). Each of her positions holds one bit of x or a constant (the
reduction's encoder is probed and checked, :func:`~reductions.search.reachable.letters.probe_positions`;
a bit may sit at several positions, as in DISJ -> Dyck's outer bracket pair). With ``t_i(b)`` the
summed terms of the positions holding bit i when that bit is b, Alice's message on x is

    S(x) = base + sum_i x_i (t_i(1) - t_i(0))

so ``S(x) = S(x')`` exactly when ``δ D = 0`` for ``δ = x - x' ∈ {-1, 0, 1}^n``, with ``D`` the
``(n, d)`` matrix of differences (a bit no position holds has a zero row). Stacking the coordinates of *every query Bob may send* (every token his
read position can hold) makes a solution a collision for every y at once (a *strong* collision).

The arithmetic is int64 and wraps: every true value here (a sum, or the difference of two sums,
each within the grid's ``P + ceil(log2 N) <= 64`` bits) is below ``2^64`` in absolute value, so
its residue mod ``2^64`` is zero exactly when the value is.

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> sim = prepare("string-equality", "transformer", 6, "fixed:8:4", width=1, seed=0)
>>> inst = transformer_instance(sim)
>>> inst.differences.shape, inst.strong, inst.queries
((6, 2), True, (ReadQuery(o=12, token=2, how='public'),))
>>> import numpy as np
>>> x = np.array([[1, 0, 1, 1, 0, 0]], np.uint8)
>>> bool(np.array_equal(inst.sums(x), inst.model_sums(x)))   # the model's own partial sums
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.backend import namespace_of, to_numpy
from commcomp.errors import UnsupportedSplitError

from ...base import ALICE

__all__ = ["ZeroSumInstance", "ReadQuery", "transformer_instance", "bob_query_tokens", "queries_of_y", "exact_zero"]

MAX_TERM_ROWS = 256        # (position, token) rows per call of model.partial
MAX_ENUMERATED_TOKENS = 1 << 22   # Bob's inputs x sequence length encoded to list his read tokens


def exact_zero(values) -> np.ndarray:
    """Rows of int64 ``values`` ``(..., d)`` that are zero in every coordinate (module docstring)."""
    return np.all(np.asarray(values) == 0, axis=-1)


@dataclass(frozen=True)
class ReadQuery:
    """One query Alice answers: read position ``o``, the token there (None: the query does not
    depend on it), and ``how`` it is known (the split's mode)."""

    o: int
    token: int | None
    how: str


@dataclass(frozen=True, eq=False)
class ZeroSumInstance:
    """Alice's message as ``base + x @ D`` (module docstring).

    Attributes
    ----------
    sim : Simulation
    differences : ``(n, d)`` int64
        Row i: ``t_i(1) - t_i(0)``, every query's numerators then denominators per head, concatenated.
    base : ``(d,)`` int64
        Alice's sums at x = 0 (her constant positions included).
    unread : ``(u,)`` int64
        Bits of x that no position of Alice's holds (zero rows: flipping one changes no message).
    queries : tuple of ReadQuery
        The queries stacked, ``width`` coordinates each.
    width : int
        Coordinates per query: ``H (d_v + 1)``.
    strong : bool
        Whether ``queries`` holds every query Bob may send (a solution is then a collision for every y).
    query_note : str
        How the queries were listed.
    term_bits : int
        Bits of one term on the grid.
    """

    sim: object
    differences: np.ndarray
    base: np.ndarray
    unread: np.ndarray
    queries: tuple
    width: int
    strong: bool
    query_note: str
    term_bits: int
    kind: str = "transformer"

    @property
    def d(self) -> int:
        return int(self.differences.shape[1])

    @property
    def n(self) -> int:
        return int(self.sim.n)

    def sums(self, x) -> np.ndarray:
        """Alice's sums ``(B, d)`` int64 for inputs ``x`` ``(B, n)`` from the terms."""
        x = np.asarray(x, dtype=np.int64).reshape(-1, self.n)  # (B, n)
        return self.base[None, :] + x @ self.differences  # (B, d), exact (module docstring)

    def model_sums(self, x) -> np.ndarray:
        """The same sums from the model's own ``partial`` over Alice's positions (an independent check)."""
        return _model_sums(self.sim, np.asarray(x, dtype=np.uint8).reshape(-1, self.n), self.queries)

    def query_slice(self, i: int) -> slice:
        return slice(i * self.width, (i + 1) * self.width)


def _flat(part, B: int) -> np.ndarray:
    xp = namespace_of(part.numerator)
    num, den = xp.reshape(part.numerator, (B, -1)), xp.reshape(part.denominator, (B, -1))
    return np.concatenate([to_numpy(num), to_numpy(den)], axis=1).astype(np.int64)  # (B, width)


def _query(sim, q: ReadQuery, B: int):
    model = sim.model
    tok = np.full((B,), 0 if q.token is None else q.token, dtype=np.int64)
    return model.query(tok, q.o)  # (B, H, d_k)


def _model_sums(sim, x, queries) -> np.ndarray:
    """``model.partial`` over Alice's positions for every query: ``(B, d)`` int64."""
    positions = np.nonzero(sim.split.owners == ALICE)[0]
    y = sim.problem.sample(sim.n, 1, np.random.default_rng(0))[1][:1]
    tokens = sim.reduction.encode(x, np.repeat(y, len(x), axis=0), sim.n).tokens  # Alice's columns only read
    parts = [_flat(sim.model.partial(tokens, positions, query=_query(sim, q, len(x)), output_position=q.o),
                   len(x)) for q in queries]
    return np.concatenate(parts, axis=1)


def bob_query_tokens(sim) -> tuple[tuple, bool, str]:
    """The queries Alice may be asked: ``(queries, every, note)`` (``every``: all that Bob can send).

    Per read position: one query when Alice knows it (a public or fixed token, or a query that does
    not depend on the token); else every token Bob's inputs put there (all of Bob's inputs encoded
    when there are few), else every token of the vocabulary (a superset: still every query he may send).
    """
    split, red, n = sim.split, sim.reduction, sim.n
    prob = sim.problem
    queries, notes = [], []
    enumerable = prob.bob_input_bits(n) <= 16 and (1 << prob.bob_input_bits(n)) * split.length <= \
        MAX_ENUMERATED_TOKENS
    ys = prob.bob_inputs(n) if enumerable else prob.sample(n, 64, np.random.default_rng([sim.seed, 29]))[1]
    tokens = red.encode(np.zeros((len(ys), n), np.uint8), ys, n).tokens  # (Y, N)
    for o in (int(t) for t in split.read):
        mode = split.modes[o]
        seen = np.unique(tokens[:, o])
        if mode == "constant":
            queries.append(ReadQuery(o, None, mode))
            continue
        if mode in ("public", "fixed") and len(seen) == 1:
            queries.append(ReadQuery(o, int(seen[0]), mode))
            continue
        if enumerable:
            toks, how = seen, f"the {len(seen)} tokens Bob's {len(ys)} inputs put at {o}"
        else:
            toks, how = np.arange(sim.model.vocab_size), f"every token of the vocabulary at {o}"
        queries += [ReadQuery(o, int(t), "bob") for t in toks]
        notes.append(how)
    note = "; ".join(notes) if notes else "the query is known to Alice (one per read position)"
    return tuple(queries), True, note


def queries_of_y(sim, y) -> tuple:
    """The queries Alice answers when Bob holds ``y``: one per read position (its token under y)."""
    tokens = sim.reduction.encode(np.zeros((1, sim.n), np.uint8), np.asarray(y)[None, ...], sim.n).tokens  # (1, N)
    return tuple(ReadQuery(int(o), None if sim.split.modes[int(o)] == "constant" else int(tokens[0, int(o)]),
                           sim.split.modes[int(o)]) for o in sim.split.read)


def _terms(sim, positions, tokens, q: ReadQuery) -> np.ndarray:
    """Terms ``(k, 2, width)`` int64: position ``positions[t]`` holding ``tokens[t, b]`` alone."""
    model, N = sim.model, sim.split.length
    k = len(positions)
    at = np.repeat(positions, 2)  # (2k,)
    toks = tokens.reshape(-1)  # (2k,)
    out = []
    for a in range(0, 2 * k, MAX_TERM_ROWS):
        r = slice(a, min(a + MAX_TERM_ROWS, 2 * k))
        B = r.stop - r.start
        rows = np.zeros((B, N), dtype=np.int64)
        rows[np.arange(B), at[r]] = toks[r]
        mask = np.zeros((B, N), dtype=bool)
        mask[np.arange(B), at[r]] = True
        out.append(_flat(model.partial(rows, mask, query=_query(sim, q, B), output_position=q.o), B))
    return np.concatenate(out, axis=0).reshape(k, 2, -1)


def transformer_instance(sim, queries=None) -> ZeroSumInstance:
    """The zero-sum instance of a prepared 1-layer Transformer simulation (module docstring).

    ``queries`` (default: every query Bob may send, :func:`bob_query_tokens`) picks the stacked queries.

    Raises
    ------
    UnsupportedSplitError
        For another split, float sums (no precision), or x not one bit per position.
    """
    from ..reachable.letters import probe_positions

    split = sim.split
    from ...simulate.transformer import TransformerSplit

    if not isinstance(split, TransformerSplit) or not split.exact:
        raise UnsupportedSplitError("the attention zero-sum engine runs the exact 1-layer Transformer split "
                                    "(a precision set)")
    positions = np.nonzero(split.owners == ALICE)[0]
    bit_at, table, unread = probe_positions(sim.reduction, sim.n, positions, sim.seed, repeated=True)
    strong, note = True, "the queries Alice was given"
    if queries is None:
        queries, strong, note = bob_query_tokens(sim)
    terms = np.concatenate([_terms(sim, positions, table, q) for q in queries], axis=2)  # (k, 2, d)
    base = terms[:, 0, :].sum(axis=0)  # (d,) x = 0: every position's bit-0 token
    held = bit_at >= 0
    diffs = np.zeros((sim.n, terms.shape[2]), dtype=np.int64)  # (n, d)
    np.add.at(diffs, bit_at[held], terms[held, 1, :] - terms[held, 0, :])  # a bit's positions summed
    return ZeroSumInstance(sim, diffs, base, np.asarray(unread, np.int64), tuple(queries),
                           terms.shape[2] // len(queries), strong, note, int(split.grid.term_bits))
