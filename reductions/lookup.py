"""Reductions to the retrieval tasks: Index Lookup, Multi-Index Lookup, Nearest Neighbour, MQAR.

From INDEX, DISJ and inner product mod 2 (IP2 -> MQAR and IP2 -> Multi-Index Lookup: Bob answers
the parity of the outputs at the j with y_j = 1; the average-case rows they carry are derived in
:mod:`commcomp.bounds.average`). Every one is prefix-suffix (Alice's positions all come first), so
it binds recurrent models through the one-way simulation (§8.1) as well as 1-layer Transformers
(§8.3; with n read positions, as in the many-query reductions, the Transformer's message is paid
once per output, so the bound per output is then a constant).

Examples
--------
>>> import numpy as np
>>> enc = index_to_index_lookup.encode(np.array([[1, 0, 1]], dtype=np.uint8), np.array([2]), 3)
>>> enc.tokens.tolist(), enc.owners.tolist()
([[1, 0, 1, 4]], [1, 1, 1, 2])
>>> x, y = np.array([[1, 1, 0]]), np.array([[1, 1, 1]])      # <x, y> = 2: even
>>> enc = inner_product_to_mqar.encode(x, y, 3)
>>> outputs = inner_product_to_mqar.task.ground_truth(enc.task_batch)
>>> outputs.tolist(), inner_product_to_mqar.decode(outputs, y).tolist()
([[1, 1, 0, 0]], [False])
"""

from __future__ import annotations

import numpy as np

from .base import ALICE, BOB, PUBLIC, Reduction, owners_from_runs
from .device_ops import constant_columns, interleave, position_columns
from .tasks.index_lookup import IndexLookup
from .tasks.mqar import MQAR
from .tasks.multi_index_lookup import MultiIndexLookup
from .tasks.nearest_neighbour import NearestNeighbour

__all__ = ["index_to_index_lookup", "disjointness_to_multi_index_lookup",
           "index_to_nearest_neighbour", "index_to_mqar", "disjointness_to_mqar",
           "inner_product_to_multi_index_lookup", "inner_product_to_mqar"]


def _first_output_bit(outputs, y):
    return outputs[:, 0] == 1


def _disjoint_from_lookups(outputs, y):
    """Bob's decoder for Multi-Index Lookup: he read a_j for every j and holds b."""
    return ~np.any((outputs == 1) & (np.asarray(y) == 1), axis=1)


def _parity_of_selected(outputs, y):
    """Bob's decoder for inner product mod 2: the parity of the outputs at the j with y_j = 1.

    ``outputs`` is ``(B, K)`` with ``K >= n`` (MQAR's last, public dummy query is not read);
    output ``j`` is x_j wherever y_j = 1, so the parity is <x, y> mod 2. An output at a j with
    y_j = 0 is never read, so a wrong answer there cannot flip Bob's bit.
    """
    y = np.asarray(y)
    selected = (np.asarray(outputs)[:, :y.shape[1]] == 1) & (y == 1)  # (B, n)
    return np.sum(selected, axis=1) % 2 == 1  # (B,)


# -- INDEX -> Index Lookup (§8.4) --------------------------------------------------------------
_IL = IndexLookup()


def _encode_index_lookup(xp, x, y, n):
    return xp.concat([x, xp.reshape(_IL.alphabet + y, (-1, 1))], axis=1)  # (B, n+1): x, then query p_y


index_to_index_lookup = Reduction(
    name="index->index-lookup", problem="index", task=_IL, split="prefix-suffix",
    source="BHBK-IL-RNN", section="§8.4", tag="[D]",
    encoder=_encode_index_lookup,
    owners_of=lambda n: owners_from_runs((ALICE, n), (BOB, 1)),
    decoder=_first_output_bit, query_fixed=False,
    notes="s_i := x_i at positions 0..n-1 (Alice); query p_i at position n (Bob), read there.",
)

# -- DISJ -> Multi-Index Lookup (§8.8) ---------------------------------------------------------
_MIL = MultiIndexLookup()


def _encode_multi_index_lookup(xp, x, y, n):
    index = position_columns(xp, x, n, _MIL.alphabet)  # (B, n) p_j = j, public
    data = xp.concat([x, constant_columns(xp, x, 0, _MIL.data_length(n) - n)], axis=1)  # (B, 2n): x, zeros
    return xp.concat([index, data, index], axis=1)  # (B, 4n)


def _mil_alice_symbols_owners(n):
    """Multi-Index Lookup with Alice's n symbols between the public indices (the DISJ and IP2 layouts)."""
    return owners_from_runs((PUBLIC, n), (ALICE, n), (PUBLIC, n), (PUBLIC, n))


disjointness_to_multi_index_lookup = Reduction(
    name="disjointness->multi-index-lookup", problem="disjointness", task=_MIL,
    split="prefix-suffix", source="BHBK-MIL-RNN", section="§8.8", tag="[A]",
    encoder=_encode_multi_index_lookup,
    owners_of=_mil_alice_symbols_owners,
    decoder=_disjoint_from_lookups, query_fixed=True,
    notes="indices 0..n-1 (public, both ends); a := x in s_0..s_{n-1} (Alice), s_n..s_{2n-1} = 0 "
          "(public). No Bob positions: Bob reads all n outputs and decodes with his y.",
)

# -- IP2 -> Multi-Index Lookup (the rebuttal's IP2 route, made concrete) -------------------------
inner_product_to_multi_index_lookup = Reduction(
    name="inner-product->multi-index-lookup", problem="inner-product", task=_MIL,
    split="prefix-suffix", source="COMMCOMP-AVG-IP-MIL-RNN", section="§4.1", tag="[D]",
    encoder=_encode_multi_index_lookup,
    owners_of=_mil_alice_symbols_owners,
    decoder=_parity_of_selected, query_fixed=True,
    notes="the DISJ layout: indices 0..n-1 public at both ends, s_j := x_j (Alice), s_n..s_{2n-1} = 0 "
          "public; Bob reads the k = n outputs s_0..s_{n-1} and answers the parity of those with "
          "y_j = 1. The task input does not depend on y (Bob has no position).",
)

# -- INDEX -> Nearest Neighbour (§8.4) ---------------------------------------------------------
_NN = NearestNeighbour()


def _encode_nearest_neighbour(xp, x, y, n):
    # x_i := T(i) public at even positions, y_i := Alice's bit (label token) at odd ones
    tokens = interleave(xp, position_columns(xp, x, n), _NN.table_size(n) + x,
                        tail=(xp.reshape(y, (-1, 1)),))  # (B, 2n+1): x_q := T(Bob's index) last
    return _NN.make_encoded(n, tokens)  # the features T(id) gathered on the tokens' namespace


index_to_nearest_neighbour = Reduction(
    name="index->nearest-neighbour", problem="index", task=_NN, split="prefix-suffix",
    source="BHBK-NN-RNN", section="§8.4", tag="[D]",
    encoder=_encode_nearest_neighbour,
    owners_of=lambda n: np.concatenate([np.tile(np.array([PUBLIC, ALICE], np.int8), n), [BOB]]),
    decoder=_first_output_bit, query_fixed=False,
    notes="vectors T(i) public at even positions, labels x_i Alice at odd positions, query T(y) "
          "Bob at 2n; the nearest vector is the exact match, margin >= 1 - gamma.",
)

# -- INDEX -> MQAR, one query ------------------------------------------------------------------
_MQAR_ONE = MQAR(num_queries=1)


def _encode_mqar_one(xp, x, y, n):
    return interleave(xp, position_columns(xp, x, n), _MQAR_ONE.key_space(n) + x,  # key i, value x_i
                      tail=(xp.reshape(y, (-1, 1)),))  # (B, 2n+1): query key y (Bob) last


index_to_mqar = Reduction(
    name="index->mqar", problem="index", task=_MQAR_ONE, split="prefix-suffix",
    source="BHBK-MQAR-RNN", section="§4.1", tag="[D]",
    encoder=_encode_mqar_one,
    owners_of=lambda n: np.concatenate([np.tile(np.array([PUBLIC, ALICE], np.int8), n), [BOB]]),
    decoder=_first_output_bit, query_fixed=False,
    notes="keys 0..n-1 public, values x_i Alice, one query key y (Bob) at 2n, read there. The "
          "catalogue gives no MQAR format ([R]); this one is commcomp's (see tasks.mqar).",
)

# -- DISJ -> MQAR, many queries ----------------------------------------------------------------
_MQAR_MANY = MQAR(num_queries=None)


def _encode_mqar_many(xp, x, y, n):
    """n + 1 pairs: a dummy (key 0, value 0), then (key i+1, value x_i); n + 1 queries: key
    j+1 where y_j = 1, else the dummy key 0, and a last public query of the dummy. Every query
    asks a present key, so the inputs stay in the task's own distribution."""
    m = n + 1
    K = _MQAR_MANY.key_space(m)
    values = xp.concat([constant_columns(xp, x, K), K + x], axis=1)  # (B, m): dummy value 0 public, then x
    queries = xp.where(y == 1, position_columns(xp, y, n, 1), 0)  # (B, n): Bob's k_{j+1} or the dummy k0
    return interleave(xp, position_columns(xp, x, m), values,  # keys 0..n public
                      tail=(queries, constant_columns(xp, x, 0)))  # (B, 3m): the last, public dummy query


disjointness_to_mqar = Reduction(
    name="disjointness->mqar", problem="disjointness", task=_MQAR_MANY, split="prefix-suffix",
    source="BHBK-MQAR-RNN", section="§4.1", tag="[D]",
    encoder=_encode_mqar_many,
    owners_of=lambda n: owners_from_runs((PUBLIC, 3), *[(ALICE, 1), (PUBLIC, 1)] * (n - 1),
                                         (ALICE, 1), (BOB, n), (PUBLIC, 1)),
    decoder=lambda outputs, y: ~np.any(outputs == 1, axis=1),
    task_size=lambda n: n + 1, query_fixed=False,
    notes="task size n+1: pair 0 = (k0, v0) public, pair i+1 = (k_{i+1} public, x_i Alice); "
          "queries 2n+2..3n+1 Bob (k_{j+1} if y_j else k0), last query k0 public. Bob reads all "
          "n+1 outputs: disjoint iff none is 1.",
)

# -- IP2 -> MQAR, many queries (the rebuttal's IP2 route, made concrete) -----------------------
inner_product_to_mqar = Reduction(
    name="inner-product->mqar", problem="inner-product", task=_MQAR_MANY, split="prefix-suffix",
    source="COMMCOMP-AVG-IP-MQAR-RNN", section="§4.1", tag="[D]",
    encoder=_encode_mqar_many,  # the DISJ -> MQAR layout: Bob's queries select the j with y_j = 1
    owners_of=lambda n: owners_from_runs((PUBLIC, 3), *[(ALICE, 1), (PUBLIC, 1)] * (n - 1),
                                         (ALICE, 1), (BOB, n), (PUBLIC, 1)),
    decoder=_parity_of_selected, task_size=lambda n: n + 1, query_fixed=False,
    notes="task size n+1, the DISJ -> MQAR layout: pair 0 = (k0, v0) public, pair i+1 = (k_{i+1} "
          "public, x_i Alice); query j (Bob) asks k_{j+1} if y_j = 1, else k0; last query k0 public. "
          "Bob reads outputs 0..n-1 and answers the parity of those with y_j = 1 (each is x_j).",
)
