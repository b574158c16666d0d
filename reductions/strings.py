"""Reductions to the string tasks: String Equality, String Disjointness, bounded Dyck.

The two string tasks take x and y verbatim (§8.5, prefix-suffix). The Dyck reductions
(§8.9) interleave Alice's and Bob's brackets inside each block: a bounded Dyck language is
regular, so under any prefix-suffix split a constant-size RNN decides it with O(1) one-way
communication, and only a partition that cuts through the blocks can force linear cost.

Examples
--------
>>> import numpy as np
>>> x, y = np.array([[0, 1]], dtype=np.uint8), np.array([[1, 1]], dtype=np.uint8)
>>> enc = disjointness_to_dyck.encode(x, y, 2)
>>> disjointness_to_dyck.task.render(enc.tokens[0], 4)
'( ) ( ) [ ) ( ] [CLS]'
>>> from reductions.base import describe_owners
>>> describe_owners(enc.owners)
'ABBAABBA.'
"""

from __future__ import annotations

import numpy as np

from .base import ALICE, BOB, PUBLIC, Reduction, owners_from_runs
from .device_ops import constant_columns, interleave, select_constant
from .tasks.dyck import Dyck
from .tasks.string_disjointness import StringDisjointness
from .tasks.string_equality import StringEquality
from .tasks.two_strings import CLS

__all__ = ["equality_to_string_equality", "disjointness_to_string_disjointness",
           "equality_to_dyck", "disjointness_to_dyck"]


def _answer_bit(outputs, y):
    return outputs[:, 0] == 1


def _string_owners(n):
    return owners_from_runs((ALICE, n), (BOB, n), (PUBLIC, 1))


_SEQ = StringEquality()
_SDISJ = StringDisjointness()


def _encode_two_strings(xp, x, y, n):
    """``TwoStringTask.assemble`` on namespace ``xp``: ``[x, y, CLS]`` ``(B, 2n+1)``."""
    return xp.concat([x, y, constant_columns(xp, x, CLS)], axis=1)


equality_to_string_equality = Reduction(
    name="equality->string-equality", problem="equality", task=_SEQ, split="prefix-suffix",
    source="BHBK-EQ-RNN", section="§8.5", tag="[D]",
    encoder=_encode_two_strings,
    owners_of=_string_owners, decoder=_answer_bit, query_fixed=True,
    notes="x at 0..n-1 (Alice), y at n..2n-1 (Bob), [CLS] public at 2n, read there. "
          "Deterministic models only: randomized EQ is cheap.",
)

disjointness_to_string_disjointness = Reduction(
    name="disjointness->string-disjointness", problem="disjointness", task=_SDISJ,
    split="prefix-suffix", source="BHBK-DISJ-RNN", section="§8.5", tag="[D]",
    encoder=_encode_two_strings,
    owners_of=_string_owners, decoder=_answer_bit, query_fixed=True,
    notes="x at 0..n-1 (Alice), y at n..2n-1 (Bob), [CLS] public at 2n, read there.",
)

# -- EQ -> Dyck-(2,1): block i = (Alice's opener, Bob's closer) ----------------------------------
_DYCK21 = Dyck(types=2, depth=1)
_ROUND_OPEN, _SQUARE_OPEN, _ROUND_CLOSE, _SQUARE_CLOSE, _CLS = 0, 1, 2, 3, 4


def _encode_dyck21(xp, x, y, n):
    return interleave(xp, select_constant(xp, x == 1, _SQUARE_OPEN, _ROUND_OPEN),  # '[' iff x_i = 1
                      select_constant(xp, y == 1, _SQUARE_CLOSE, _ROUND_CLOSE),  # ']' iff y_i = 1
                      tail=(constant_columns(xp, x, _CLS),))  # (B, 2n+1)


equality_to_dyck = Reduction(
    name="equality->dyck", problem="equality", task=_DYCK21, split="interleaved-partition",
    source="BHBK-Dyck-1TF", section="§8.9", tag="[D]",
    encoder=_encode_dyck21,
    owners_of=lambda n: np.concatenate([np.tile(np.array([ALICE, BOB], np.int8), n), [PUBLIC]]),
    decoder=_answer_bit, query_fixed=True,
    notes="Dyck-(2,1), N = 2n+1: block i is (x_i ? '[' : '(') at 2i (Alice), (y_i ? ']' : ')') at "
          "2i+1 (Bob); valid iff x = y. [CLS] public at 2n, read there. Deterministic models only.",
)

# -- DISJ -> Dyck-(2,2): block i = A B B A -------------------------------------------------------
_DYCK22 = Dyck(types=2, depth=2)


def _encode_dyck22(xp, x, y, n):
    return interleave(xp, select_constant(xp, x == 1, _SQUARE_OPEN, _ROUND_OPEN),  # outer opener, Alice
                      select_constant(xp, y == 1, _ROUND_CLOSE, _ROUND_OPEN),  # '()' or ')(', Bob
                      select_constant(xp, y == 1, _ROUND_OPEN, _ROUND_CLOSE),
                      select_constant(xp, x == 1, _SQUARE_CLOSE, _ROUND_CLOSE),  # outer closer: A B B A
                      tail=(constant_columns(xp, x, _CLS),))  # (B, 4n+1)


disjointness_to_dyck = Reduction(
    name="disjointness->dyck", problem="disjointness", task=_DYCK22, split="interleaved-partition",
    source="BHBK-Dyck-1TF", section="§8.9", tag="[D]",
    encoder=_encode_dyck22,
    owners_of=lambda n: np.concatenate([np.tile(np.array([ALICE, BOB, BOB, ALICE], np.int8), n),
                                        [PUBLIC]]),
    decoder=_answer_bit, task_size=lambda n: 2 * n, query_fixed=True,
    notes="Dyck-(2,2), N = 4n+1: block i = positions 4i..4i+3; Alice's outer pair '( )' or "
          "'[ ]' (x_i), Bob's inner pair '()' or ')(' (y_i); '[ )( ]' is the only invalid block. "
          "[CLS] public at 4n, read there.",
)
