"""DISJ -> IsTree (§8.10): one gadget {r, a_i, b_i} per coordinate, Alice's edges first.

Examples
--------
>>> import numpy as np
>>> from reductions.base import describe_owners
>>> x, y = np.array([[0, 1]], dtype=np.uint8), np.array([[1, 0]], dtype=np.uint8)
>>> enc = disjointness_to_istree.encode(x, y, 2)
>>> disjointness_to_istree.task.render(enc.tokens[0], 5)
'[BOS] 1 - 0 4 - 0 3 - 0 4 - 2 [EOS]'
>>> describe_owners(enc.owners)
'.A..A....B..B.'
"""

from __future__ import annotations

import numpy as np

from .base import ALICE, BOB, PUBLIC, Reduction
from .device_ops import constant_columns, interleave, position_columns
from .tasks.istree import BOS, DASH, EOS, NODE0, IsTree

__all__ = ["disjointness_to_istree"]

_ISTREE = IsTree()


def _encode_istree(xp, x, y, n):
    """Nodes: root r = 0, a_i = 1 + i, b_i = 1 + n + i (2n + 1 nodes, 2n edges).
    Alice's edge i: (a_i, r) if x_i = 0 else (b_i, r). Bob's edge i: (b_i, a_i) if y_i = 0 else
    (b_i, r). Written larger id first, as WDL does. Gadget i is a tree unless x_i = y_i = 1,
    when (b_i, r) is doubled and a_i isolated; gadgets share only r.

    The tokens of ``IsTree.from_edges`` written directly: [BOS], Alice's triples ``u - r``, Bob's
    ``b_i - v``, [EOS]."""
    a, b = position_columns(xp, x, n, 1), position_columns(xp, x, n, 1 + n)  # (B, n) node ids
    dash = constant_columns(xp, x, DASH, n)
    alice = interleave(xp, NODE0 + xp.where(x == 1, b, a), dash, constant_columns(xp, x, NODE0, n))  # (B, 3n)
    bob = interleave(xp, NODE0 + b, dash, NODE0 + xp.where(y == 1, 0, a))  # (B, 3n)
    return xp.concat([constant_columns(xp, x, BOS), alice, bob, constant_columns(xp, x, EOS)], axis=1)  # (B, 6n+2)


def _istree_owners(n):
    triple = lambda owner_u, owner_v: [owner_u, PUBLIC, owner_v]  # noqa: E731  (u - v)
    body = triple(ALICE, PUBLIC) * n + triple(PUBLIC, BOB) * n
    return np.array([PUBLIC] + body + [PUBLIC], dtype=np.int8)


disjointness_to_istree = Reduction(
    name="disjointness->istree", problem="disjointness", task=_ISTREE, split="prefix-suffix",
    source="WDL-IsTree-RNN", section="§8.10", tag="[D]",
    encoder=_encode_istree, owners_of=_istree_owners,
    decoder=lambda outputs, y: outputs[:, 0] == 1, task_size=lambda n: 2 * n + 1, query_fixed=True,
    notes="N = 6n+2 in WDL's format. Alice's n edges first: in 'u - r' only u is hers; Bob's n "
          "edges next: in 'b_i - v' only v is his; [BOS], dashes, r and b_i are public. Answer "
          "read at the final [EOS] (public). With CoT, Bob generates the tour from the state.",
)
