"""Reductions from INDEX to the tasks of the newer results: induction heads, function composition, copy.

- induction heads (SHT 2024): two splits. The default is a partition with a public last token, so
  Alice knows the attention query (one-way 1-layer Transformer simulation, §8.3); the
  ``index@prefix`` one is prefix-suffix with Bob's query last, which binds recurrent models (§8.1).
- function composition (PNP 2024): Alice writes g (n entries of floor(log2 n) bits each), Bob
  writes f(0), the query x = 0 is public: g(f(0)) is Alice's block f(0), so Bob learns any of
  n floor(log2 n) bits (one-way INDEX). Under the ``split`` layout of Strobl, Angluin, Frank
  (2025) a second partition exists (``index@split``): Bob writes where each input token sits,
  Alice the value tokens beside them; the pairs layout has no such partition (an entry is one
  token, so its owner would be both). ``index@bits``: the pairs layout with g's values in {0, 1}
  (g(i) = x_i, f(0) = y), n bits instead of n log n, but each of Alice's tokens depends on one bit,
  which is what the 1-layer Transformer witness search (``reductions.search.attention``) reads.
- copy (JBKM 2024): Alice writes the string, everything after it is public, Bob reads the copy
  at his index (one-way INDEX): the state past the separator must tell the whole string apart.

Examples
--------
>>> import numpy as np
>>> from reductions.base import describe_owners
>>> x, y = np.array([[1, 0, 1]]), np.array([2])
>>> enc = index_to_induction_heads.encode(x, y, 3)
>>> enc.tokens.tolist(), describe_owners(enc.owners)
([[0, 1, 0, 0, 2, 1, 2]], 'BABABA.')
>>> enc = index_to_function_composition.encode(x, y, 3)     # domain 3, 1 bit per value of g
>>> enc.task_batch.n, enc.tokens.tolist(), describe_owners(enc.owners)
(3, [[1, 3, 7, 11, 12, 15, 18]], 'AAAB...')
"""

from __future__ import annotations

import numpy as np

from .base import ALICE, BOB, PUBLIC, Reduction, owners_from_runs
from .device_ops import constant_columns, constant_table, interleave, position_columns, select_constant
from .tasks.copy import Copy
from .tasks.function_composition import FunctionComposition
from .tasks.induction_heads import InductionHeads

__all__ = ["index_to_induction_heads", "index_to_induction_heads_prefix", "index_to_function_composition",
           "index_to_function_composition_bits", "index_to_function_composition_split", "index_to_copy", "composition_sizes", "bit_places"]


def _answer_bit(outputs, y):
    return outputs[:, 0] == 1


# -- INDEX -> induction heads ------------------------------------------------------------------
_IH = InductionHeads(alphabet=3)  # the partition needs a0, a1 (bits) and a2 (the current token)
_IH_MARKED = InductionHeads(alphabet=None)  # the prefix split: k distinct markers, |Sigma| = N
_Z = 2  # the current (last) token; id 0 doubles as filler (only the occurrences of _Z matter)


def _encode_induction_heads(xp, x, y, k):
    """Position 2i: _Z where i = y, else filler 0 (Bob); 2i+1: x_i (Alice); last: _Z (public).
    The rightmost previous _Z sits at 2y, so the token after it is x_y."""
    here = position_columns(xp, x, k) == xp.reshape(y, (-1, 1))  # (B, k)
    return interleave(xp, select_constant(xp, here, _Z, 0), x, tail=(constant_columns(xp, x, _Z),))


index_to_induction_heads = Reduction(
    name="index->induction-heads", problem="index", task=_IH, split="partition",
    source="SHT24-IH-1TF", section="SHT 2024 §2 [D]", tag="[D]",
    encoder=_encode_induction_heads,
    owners_of=lambda k: np.concatenate([np.tile(np.array([BOB, ALICE], np.int8), k), [PUBLIC]]),
    decoder=_answer_bit, task_size=lambda k: 2 * k + 1, query_fixed=True,
    notes="sequence length 2k+1, |Sigma| = 3: Bob marks position 2y with the current token a2 "
          "(a0 elsewhere), Alice writes x_i at 2i+1, the last token a2 is public; the answer is x_y.",
)


def _encode_induction_heads_prefix(xp, x, y, k):
    """Markers a_{2+i} (public) and x_i (Alice) alternate; the last token is Bob's marker a_{2+y}."""
    return interleave(xp, position_columns(xp, x, k, 2), x, tail=(xp.reshape(2 + y, (-1, 1)),))


index_to_induction_heads_prefix = Reduction(
    name="index@prefix->induction-heads", problem="index", task=_IH_MARKED, split="prefix-suffix",
    source="COMMCOMP-IH-RNN", section="SHT 2024 §2 [D]", tag="[D]",
    encoder=_encode_induction_heads_prefix,
    owners_of=lambda k: np.concatenate([np.tile(np.array([PUBLIC, ALICE], np.int8), k), [BOB]]),
    decoder=_answer_bit, task_size=lambda k: 2 * k + 1, query_fixed=False,
    notes="markers a_{i+2} public at 2i, x_i Alice at 2i+1, Bob's marker a_{y+2} last: the "
          "one-way split of a recurrent model (the query is Bob's, so not the 1-layer one).",
)


# -- INDEX -> function composition ---------------------------------------------------------------
def _bits_of_value(i: int) -> int:
    """Bits that value g(i) carries: max(1, floor(log2(i + 1))), at most floor(log2 n) for every i < n."""
    return max(1, (i + 1).bit_length() - 1)


def bit_places(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Where bit t of x goes, for t < k: ``(block, place)``, so that ``g(block)`` holds it at ``place``.

    A fixed sequence (block 0, 1, 2 one bit each, blocks 3..6 two bits, 7..14 three, ...), so Bob finds
    the place of his bit from y alone, whatever k is.

    >>> [tuple(int(v) for v in pair) for pair in zip(*bit_places(8))]
    [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1), (4, 0), (4, 1), (5, 0)]
    """
    blocks, places, i = [], [], 0
    while len(blocks) < k:
        j = _bits_of_value(i)
        blocks.extend([i] * j)
        places.extend(range(j))
        i += 1
    return np.array(blocks[:k], dtype=np.int64), np.array(places[:k], dtype=np.int64)


def composition_sizes(k: int) -> tuple[int, int]:
    """``(n, capacity)``: the domain n >= 2 the reduction uses for INDEX of size k, and the bits its g
    holds, sum over i < n of max(1, floor(log2(i + 1))) (at least k; n log2 n - O(n)).

    >>> [composition_sizes(k) for k in (1, 2, 3, 4, 5, 8, 12)]
    [(2, 2), (2, 2), (3, 3), (4, 5), (4, 5), (6, 9), (8, 14)]
    """
    blocks, _ = bit_places(k)
    n = max(2, int(blocks[-1]) + 1)
    return n, sum(_bits_of_value(i) for i in range(n))


_FC = FunctionComposition(layout="pairs")


def _encode_function_composition(xp, x, y, k):
    """g(i) = sum of x_t 2^place(t) over the bits t placed in block i (:func:`bit_places`); f(0) = Bob's
    block(y), f(i) = 0 for i > 0, and the query x = 0 (public): g(f(0)) holds x_y at place(y)."""
    n, _ = composition_sizes(k)
    blocks, places = bit_places(k)
    weights = np.zeros((k, n), dtype=np.int64)  # (k, n): bit t -> its weight in g(block t)
    weights[np.arange(k), blocks] = 1 << places
    W = constant_table(xp, x, weights, xp.int64)
    g = xp.matmul(xp.astype(x, xp.int64), W)  # (B, k) @ (k, n) -> (B, n) values of g (no (B, k, n) temporary)
    g_tokens = position_columns(xp, x, n) * n + g
    block_of = constant_table(xp, x, blocks, xp.int64)  # (k,)
    f0 = xp.reshape(n * n + xp.take(block_of, y), (-1, 1))  # entry (0, f(0))
    f_rest = n * n + position_columns(xp, x, n - 1, 1) * n  # entries (i, 0)
    return xp.concat([g_tokens, f0, f_rest, constant_columns(xp, x, _FC.query_offset(n))], axis=1)


def _composition_owners(k):
    n, _ = composition_sizes(k)
    alice_blocks = int(bit_places(k)[0][-1]) + 1
    return owners_from_runs((ALICE, alice_blocks), (PUBLIC, n - alice_blocks), (BOB, 1), (PUBLIC, n))


def _composition_bit(outputs, y):
    """Bob's decoder: bit place(y) of g(f(0))."""
    y = np.asarray(y, dtype=np.int64)
    _, places = bit_places(int(y.max()) + 1 if y.size else 1)
    return (np.asarray(outputs)[:, 0] >> places[y]) & 1 == 1


index_to_function_composition = Reduction(
    name="index->function-composition", problem="index", task=_FC, split="prefix-suffix",
    source="COMMCOMP-FC-RNN", section="PNP 2024 Thm 1 [D]", tag="[D]",
    encoder=_encode_function_composition, owners_of=_composition_owners,
    decoder=_composition_bit, task_size=lambda k: composition_sizes(k)[0], query_fixed=True,
    notes="domain n with capacity >= k (composition_sizes); g's entries (i, g(i)) Alice (public past "
          "x's bits), f(0) = block(y) Bob, the other f entries and the query 0 public; Bob reads bit "
          "place(y) of g(f(0)).",
)

# -- INDEX -> function composition, one bit per entry: what the 1-layer witness search reads ----------
_FC_BITS_MIN = 2


def _bits_domain(k: int) -> int:
    return max(_FC_BITS_MIN, k)


def _encode_function_composition_bits(xp, x, y, k):
    """g(i) = x_i in {0, 1} (Alice; g(i) = 0 public past x), f(0) = y (Bob), f(i) = 0 for i > 0 and the
    query 0 public: g(f(0)) = g(y) = x_y. Each of Alice's tokens ``i n + x_i`` holds one bit."""
    n = _bits_domain(k)
    bits = x if n == k else xp.concat([x, constant_columns(xp, x, 0, n - k)], axis=1)  # (B, n)
    g_tokens = position_columns(xp, x, n) * n + xp.astype(bits, xp.int64)
    f0 = xp.reshape(n * n + xp.astype(y, xp.int64), (-1, 1))  # entry (0, y)
    f_rest = n * n + position_columns(xp, x, n - 1, 1) * n  # entries (i, 0)
    return xp.concat([g_tokens, f0, f_rest, constant_columns(xp, x, _FC.query_offset(n))], axis=1)


def _bits_owners(k):
    n = _bits_domain(k)
    return owners_from_runs((ALICE, k), (PUBLIC, n - k), (BOB, 1), (PUBLIC, n))


index_to_function_composition_bits = Reduction(
    name="index@bits->function-composition", problem="index", task=_FC, split="prefix-suffix",
    source="COMMCOMP-FC-bits-1TF", section="PNP 2024 Thm 1 [D]", tag="[D]",
    encoder=_encode_function_composition_bits, owners_of=_bits_owners,
    decoder=_answer_bit, task_size=_bits_domain, query_fixed=True,
    notes="layout pairs, domain n = max(2, k): g(i) = x_i (Alice; one bit per entry, so each of her "
          "tokens depends on one bit, which the 1-layer witness search needs), f(0) = y Bob, the other f "
          "entries and the query 0 public; the answer g(f(0)) = x_y. n bits, not the n log n of "
          "index->function-composition.",
)

# -- INDEX -> function composition, split layout: the partition the pairs layout does not have ------
_FC_SPLIT = FunctionComposition(layout="split")


def _split_domain(k: int) -> int:
    return max(2, k)


def _encode_function_composition_split(xp, x, y, k):
    """g = identity (public); f's slot s holds the input token i<(s - y) mod n> (Bob: input 0 sits at
    slot y) and the value token v<x_s> (Alice; v0 public past x); the query is 0 (public). So
    g(f(0)) = f(0) = the value beside input 0 = x_y."""
    n = _split_domain(k)
    values = x if n == k else xp.concat([x, constant_columns(xp, x, 0, n - k)], axis=1)  # (B, n)
    ids = position_columns(xp, x, n)
    g = interleave(xp, ids, n + ids)  # (B, 2n): i<i> v<i>
    f = interleave(xp, (ids - xp.reshape(y, (-1, 1))) % n, n + values)  # (B, 2n)
    return xp.concat([g, f, constant_columns(xp, x, _FC_SPLIT.query_offset(n))], axis=1)


def _split_owners(k):
    n = _split_domain(k)
    f = np.tile(np.array([BOB, ALICE], np.int8), n)
    f[2 * k + 1::2] = PUBLIC  # value tokens past x
    return np.concatenate([np.full(2 * n, PUBLIC, np.int8), f, [PUBLIC]])


index_to_function_composition_split = Reduction(
    name="index@split->function-composition", problem="index", task=_FC_SPLIT, split="partition",
    source="SAF-FE-split-1TF", section="Strobl et al. 2025 [D]", tag="[D]",
    encoder=_encode_function_composition_split, owners_of=_split_owners,
    decoder=_answer_bit, task_size=_split_domain, query_fixed=True,
    notes="layout split, domain n = max(2, k): g = identity public; in f's block Bob writes the input "
          "tokens (a cyclic shift putting input 0 at slot y), Alice the value tokens x_s beside them; "
          "query 0 public. An entry of the pairs layout is one token, so it has no such split.",
)

# -- INDEX -> copy ----------------------------------------------------------------------------
_COPY = Copy()


def _encode_copy(xp, x, y, k):
    return xp.concat([x, constant_columns(xp, x, _COPY.separator),
                      constant_columns(xp, x, _COPY.blank, k)], axis=1)  # (B, 2k+1)


index_to_copy = Reduction(
    name="index->copy", problem="index", task=_COPY, split="prefix-suffix",
    source="JBKM-copy-GSSM", section="JBKM 2024 §2 [D]", tag="[D]",
    encoder=_encode_copy, owners_of=lambda k: owners_from_runs((ALICE, k), (PUBLIC, k + 1)),
    decoder=lambda outputs, y: np.asarray(outputs)[np.arange(len(y)), np.asarray(y)] == 1,
    query_fixed=True,
    notes="Alice's string x, then [SEP] and k blanks (public); Bob reads the copy at his index y. "
          "No Bob positions: the state past x must tell all 2^k strings apart.",
)
