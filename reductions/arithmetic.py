"""Reductions to SHT's tasks: q-sparse averaging, Match3, and Match2.

Examples
--------
>>> import numpy as np
>>> x, y = np.array([[1, 0, 1]], dtype=np.uint8), np.array([[0, 0, 1]], dtype=np.uint8)
>>> enc = disjointness_to_match3.encode(x, y, 3)
>>> enc.tokens.tolist()          # M = 13, pad 6: Alice 1 6 3 | Bob 6 6 13-3 | query 0
[[1, 6, 3, 6, 6, 10, 0]]
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from .base import ALICE, BOB, PUBLIC, Reduction, owners_from_runs
from .device_ops import constant_columns, interleave, position_columns, select_constant
from .tasks.match2 import Match2
from .tasks.match3 import Match3
from .tasks.qsa import QsaOnePointer, QSparseAveraging

__all__ = ["disjointness_to_qsa", "index_to_qsa_q1", "disjointness_to_match3", "index_to_match2"]

# -- DISJ_q -> qSA (SHT Thm 4, App. B.3; §8.7) -------------------------------------------------
_QSA = QSparseAveraging()
_PLUS_E0, _MINUS_E0 = 0, 1  # ids of +e_0 and -e_0 in the public data table


def _encode_qsa(xp, x, y, n):
    """Slots 2i ("0" slot) hold -e_0; slots 2i+1 ("1" slot) hold +e_0 iff y_i = 1 (Bob's data).
    Token 2n points at slot 2i + x_i for each i (Alice's pointer set); tokens before it point
    at the fixed set {0, ..., n-1}. Then qSA_{2n} = -e_0 exactly iff x and y are disjoint,
    and its first coordinate is >= -1 + 2/n otherwise."""
    z = interleave(xp, constant_columns(xp, x, _MINUS_E0, n),  # slot 2i: -e0
                   select_constant(xp, y == 1, _PLUS_E0, _MINUS_E0),  # slot 2i+1: +e0 iff y_i
                   tail=(constant_columns(xp, x, _MINUS_E0),))  # (B, N): the output token's -e0 last
    B = x.shape[0]
    row = xp.arange(n, dtype=xp.int64, device=array_api_compat.device(x))
    fixed = xp.broadcast_to(xp.reshape(row, (1, 1, n)), (B, 2 * n, n))  # the fixed set {0, ..., n-1}
    alice = xp.reshape(2 * position_columns(xp, x, n) + x, (B, 1, n))  # slot 2i + x_i (ascending)
    return _QSA.assemble(n, z, xp.concat([fixed, alice], axis=1))  # pointers (B, N, q)


def _decode_qsa(outputs, y):
    q = np.asarray(y).shape[1]
    return outputs[:, 0, 0] < -1 + 1 / q  # threshold of §8.7: disjoint iff the mean is -e_0


disjointness_to_qsa = Reduction(
    name="disjointness->qsa", problem="disjointness", task=_QSA, split="partition",
    source="SHT-qSA-LB", section="§8.7", tag="[S]/[D]",
    encoder=_encode_qsa,
    owners_of=lambda n: np.concatenate([np.tile(np.array([PUBLIC, BOB], np.int8), n), [ALICE]]),
    decoder=_decode_qsa, read_positions=lambda n: [2 * n], query_fixed=False,
    notes="q = n, N = 2n+1. Even slots public (-e0), odd slots Bob (+e0 iff y_i), the output token "
          "2n is Alice's (her pointer set) and its output is read there, by Bob: Alice sends "
          "Q(x_2n) and, since her token's own key and value depend on x, its K and V too (§8.7).",
)

# -- INDEX -> qSA at q = 1 (SHT Thm 11's INDEX-type argument [R], this layout [D]) ----------------
_QSA1 = QsaOnePointer()
_BOB_DATA = 2  # id of +e_1: the data of Bob's own token (never read: nothing points at it)


def _encode_qsa_q1(xp, x, y, n):
    """N = n + 1 tokens at q = 1. Alice's token i holds z_i = +e_0 if x_i = 1, else -e_0, and
    points at itself (a public pointer); Bob's last token n holds +e_1 and points at his index j.
    So qSA_n = z_j = +e_0 iff x_j = 1: the first coordinate of the last output is x_j's sign, and a
    one-way prefix/suffix protocol for qSA is one for INDEX on n bits (n bits needed)."""
    z = xp.concat([select_constant(xp, x == 1, _PLUS_E0, _MINUS_E0), constant_columns(xp, x, _BOB_DATA)],
                  axis=1)  # (B, n + 1)
    pointers = xp.concat([position_columns(xp, x, n), xp.reshape(y, (-1, 1))], axis=1)  # (B, n + 1)
    return _QSA1.assemble(n + 1, z, pointers)


index_to_qsa_q1 = Reduction(
    name="index@q1->qsa", problem="index", task=_QSA1, split="prefix-suffix",
    source="SHT-qSA-RNN", section="Thm 11", tag="[S]/[D]",
    encoder=_encode_qsa_q1,
    owners_of=lambda n: owners_from_runs((ALICE, n), (BOB, 1)),
    decoder=lambda outputs, y: outputs[:, 0, 0] > 0, read_positions=lambda n: [n], query_fixed=False,
    task_size=lambda n: n + 1,
    notes="qSA at q = 1, N = n + 1 (any N, not the task's 2q + 1): Alice's tokens 0..n-1 hold +-e0 by "
          "x_i and point at themselves (public), Bob's last token points at his index, read there. SHT Thm "
          "11 is INDEX-type in the catalogue [R]; this layout is designed here [D]. Being prefix-suffix "
          "it binds recurrent models (m p >= n = N - 1, above Thm 11's (N - 1)/2).",
)

# -- DISJ -> Match3 (§8.6) -----------------------------------------------------------------------
_MATCH3 = Match3()


def _encode_match3(xp, x, y, n):
    """The query token holds 0. With M = 4n + 1 and pad 2n: Alice's slot i holds i+1 if x_i = 1,
    Bob's slot i holds M - (i+1) if y_i = 1, the pad otherwise. Alice-Alice sums lie in [2, 2n],
    Bob-Bob sums in [M-2n, M-2], pad sums avoid 0 as well (2n + a in [2n+1, 3n], 2n - b in
    [n, 2n-1], 4n = -1), so 0 + x_j + x_k = 0 iff some i has x_i = y_i = 1.

    §8.6 puts the query at token 1; here it is the last token. Match3 is permutation
    equivariant, so §8.6's argument is unchanged, and a causal model (an RNN, a causal
    Transformer) can only answer at the end."""
    M, pad = _MATCH3.modulus_at(n), 2 * n
    value = position_columns(xp, x, n, 1)  # (B, n): i + 1
    alice = xp.where(x == 1, value, pad)
    bob = xp.where(y == 1, M - value, pad)
    return xp.concat([alice, bob, constant_columns(xp, x, 0)], axis=1)  # (B, 2n+1): the query token 0 last


disjointness_to_match3 = Reduction(
    name="disjointness->match3", problem="disjointness", task=_MATCH3, split="prefix-suffix",
    source="SHT-Match3-LB", section="§8.6", tag="[D]",
    encoder=_encode_match3,
    owners_of=lambda n: owners_from_runs((ALICE, n), (BOB, n), (PUBLIC, 1)),
    decoder=lambda outputs, y: outputs[:, 0] == 0, read_positions=lambda n: [2 * n], query_fixed=True,
    notes="N = 2n+1, M = 4n+1: Alice's slots 0..n-1, Bob's n..2n-1, the query token (value 0, "
          "public) last at 2n, read there (§8.6 puts it first; Match3 is permutation equivariant, "
          "and last lets causal models answer). Being prefix-suffix it also binds RNNs (mp >= n+1).",
)

# -- INDEX -> Match2 (designed here; not in the catalogue) ---------------------------------------
_MATCH2 = Match2()


def _encode_match2(xp, x, y, n):
    """Alice's slot j holds j+1 if x_j = 1, else 0; Bob's last token holds M - (i+1) with
    M = 2n + 1. A j != n with x_j = i+1 exists iff x_i = 1 (0 never matches a nonzero)."""
    M = _MATCH2.modulus_at(n)
    alice = xp.where(x == 1, position_columns(xp, x, n, 1), 0)  # (B, n): j + 1 where x_j = 1
    return xp.concat([alice, xp.reshape(M - 1 - y, (-1, 1))], axis=1)  # (B, n+1)


index_to_match2 = Reduction(
    name="index->match2", problem="index", task=_MATCH2, split="prefix-suffix",
    source="CC-INDEX", section="-", tag="[D]",
    encoder=_encode_match2,
    owners_of=lambda n: owners_from_runs((ALICE, n), (BOB, 1)),
    decoder=lambda outputs, y: outputs[:, 0] == 1, read_positions=lambda n: [n], query_fixed=False,
    notes="Not in the catalogue: designed for commcomp. N = n+1, M = 2n+1: Alice's slots 0..n-1, "
          "Bob's query value at n, read there. One-way it forces mp >= n on RNNs; a 1-layer "
          "Transformer (constant size for Match2) escapes because Bob can send his query first "
          "(two-way INDEX costs only log n).",
)
