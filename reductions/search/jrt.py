"""Just read twice (Arora et al. 2024): the state a recurrent reader needs for Disjointness depends on
which set comes first, and reading the context twice brings it down to the smaller set.

On the same Disjointness instances (Alice's set A of size a, Bob's set B of size b, over [n]), a one-pass
reader split after the first set sends a message that must tell apart every first set with a different
row of the communication matrix: exactly ``ceil(log2 distinct_rows)`` bits, counted here by brute force
over all sets.  With the context repeated (A B A B, or B A B A), the reader may skip the first set on the
first pass, store the second set, and check the first against it on the second pass: the explicit
reader below (:func:`_read_twice`) is run on the token stream of every instance and its distinct states
counted at every cut: at most ``2 C(n, s)`` with s the size of the set read second.

Examples
--------
>>> t = order_table(6, 1, 3)
>>> (t["small_first"]["distinct_states"], t["large_first"]["distinct_states"])
(6, 20)
>>> t["read_twice"]["distinct_states_peak"], t["read_twice"]["bits"], t["read_twice"]["correct"]
(12, 4, True)
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from commcomp.errors import InvalidParameterError

__all__ = ["order_table"]


def _sets(n: int, size: int) -> np.ndarray:
    """Every size-subset of [n] as a (C(n, size), n) 0/1 matrix."""
    rows = np.zeros((math.comb(n, size), n), dtype=np.int64)
    for r, s in enumerate(combinations(range(n), size)):
        rows[r, list(s)] = 1
    return rows


def _distinct_rows(first: np.ndarray, second: np.ndarray) -> int:
    matrix = (first @ second.T) == 0  # (rows, cols): disjoint
    return len({row.tobytes() for row in np.packbits(matrix, axis=1)})


def order_table(n: int, small: int, large: int) -> dict:
    """Exact one-pass message sizes under both orders and the read-twice protocol, for DISJ restricted
    to sets of sizes ``small`` <= ``large`` over [n]."""
    if not (1 <= small <= large <= n) or math.comb(n, small) * math.comb(n, large) > 2 ** 22:
        raise InvalidParameterError("need 1 <= small <= large <= n and at most 2^22 instances")
    A, B = _sets(n, small), _sets(n, large)
    out = {}
    for name, first, second in (("small_first", A, B), ("large_first", B, A)):
        states = _distinct_rows(first, second)
        out[name] = {"first_set_size": int(first[0].sum()), "distinct_states": states,
                     "bits": math.ceil(math.log2(states)) if states > 1 else 0}
    out["read_twice"] = _read_twice(n, A, B)
    return out


def _read_twice(n: int, A: np.ndarray, B: np.ndarray) -> dict:
    """Run the read-twice reader on the token stream B A B A of every instance (a Python loop over time
    steps, vectorised over instances): pass 1 skips B, the A pass sets bits of a stored mask, the second
    B pass ORs a "met" bit, the last A pass is skipped; answer = not met.  Counts its distinct states at
    each cut and checks the answers against DISJ."""
    rows = np.repeat(np.arange(len(A)), len(B))
    cols = np.tile(np.arange(len(B)), len(A))
    a_elems = [np.nonzero(r)[0] for r in A[rows]]
    b_elems = [np.nonzero(r)[0] for r in B[cols]]
    a_tok, b_tok = np.array(a_elems), np.array(b_elems)  # (I, small), (I, large): elements in order
    stored = np.zeros(len(rows), dtype=np.int64)
    met = np.zeros(len(rows), dtype=bool)
    states = []
    for t in range(b_tok.shape[1]):  # pass 1 over B: nothing stored
        states.append(1)
    for t in range(a_tok.shape[1]):  # pass over A: remember it
        stored |= 1 << a_tok[:, t]
        states.append(len(np.unique(stored)))
    for t in range(b_tok.shape[1]):  # pass 2 over B: met an element of A?
        met |= ((stored >> b_tok[:, t]) & 1).astype(bool)
        states.append(len(np.unique(stored * 2 + met)))
    truth = ((A[rows] * B[cols]).sum(axis=1) == 0)
    peak = max(states)
    return {"bits": math.ceil(math.log2(peak)) if peak > 1 else 0, "distinct_states_peak": peak,
            "correct": bool(np.array_equal(~met, truth)), "instances": int(truth.size)}
