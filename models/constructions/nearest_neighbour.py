"""C4: a 2-layer Transformer for Nearest Neighbour, and its exact-key special case for MQAR.

Task formats (``reductions.tasks.nearest_neighbour`` / ``mqar``), pairs then queries::

    NN     x_1 y_1 ... x_n y_n x_q          ids: vector j < V = 2n; label y0 = V, y1 = V + 1
    MQAR   k_1 v_1 ... k_n v_n q_1 .. q_Q   ids: key j < K = 2n;   value a = K + a

NN vector j is the public unit vector ``s_j / sqrt(k_v)`` with ``s_j ∈ {±1}^{k_v}`` (the task's
:func:`nn_table`, reproduced here because ``models`` does not import ``reductions``; a test checks
they agree), so the inner products are ``o_i / k_v`` with integer overlaps
``o_i = <s_q, s_{x_i}>``.  The nearest vector has the largest ``o_i``; ties go to the earliest
pair.  MQAR key j is the binary code of j (k_v = ⌈log₂ K⌉), so an exact match has
``o = k_v`` and every other key ``o ≤ k_v - 2``.

Residual (width ``k_v + 2c + A + 2`` (+1 with the tie-break); c = ⌈log₂ N⌉, A = labels/values)::

    VEC  k_v  s_j of a vector / key token; layer 1 writes the copied vector here at labels
    VAL  A    onehot(label / value token); layer 2 writes its answer here at the query
    ISL  1    1 at label / value tokens            TIE  1   t_i = (n-1-i)/n at label 2i+1
    OWN  c    code of the position p               PRV  c   code of p-1 (of position 1 at MQAR
                                                            queries after the first)

**Layer 1** (previous-token head): ``W_Q = β₁[PRV -> I]``, ``W_K = [OWN -> I]``,
``W_V = [VEC -> I]``, ``W_O -> VEC``.  As in C2 the position p-1 gets weight ≥ 1/(1+λ₁), so
at label 2i+1 (whose own VEC is 0) ``x̂_i = s_{x_i} + e`` with ``|e|_∞ ≤ 2ε₁``, ε₁ = λ₁/(1+λ₁);
at a query position the head reads a label (VEC 0), so its VEC is ``s_q + e_q``, ``|e_q|_∞ ≤ ε₁``.

**Layer 2** (at each query): ``q = β₂·[VEC ; L ; 1]``, key ``[VEC ; ISL - 1 ; TIE]``, value VAL.
The score of label i is ``β₂(<q̂, x̂_i> + t_i)``; ``|<q̂, x̂_i> - o_i| ≤ δ = k_v(3ε₁ + 2ε₁²)``.
The guaranteed gap between the answer and any other label is ``G`` integer units:

* **NN, every input** (default): the tie-break ``t_i ∈ [0, 1)`` orders equal overlaps by pair and
  never reorders unequal ones (they differ by ≥ 2), so ``G = 1/n``.
* **NN with a margin** ``Δ`` (``margin=``, BHBK's assumption, stated: the nearest inner product
  exceeds the second by ≥ Δ, i.e. ``G = Δ·k_v``; inputs without it are outside the promise).
* **MQAR** (exact keys; promise: every query's key is present, keys distinct): ``G = 2``.

With ``λ₁ = G/(16 k_v)``, δ ≤ G/4, so every other label scores ≥ ``β₂G/2`` below the answer;
``β₂ = 2 ln(8N)/G`` makes their total weight ≤ 1/8.  Non-label positions (``ISL - 1 = -1``)
score ``L`` lower; ``L = β₂(2k_v(1+ε₁)² + k_v + δ + 1) + ln(8N)`` puts them below the answer by
ln(8N) whatever the overlaps, total ≤ 1/8.  So the answer's value gets weight ≥ 0.8 and
``argmax(VAL)`` is its label.  Precision: β₂·k_v and L are O(N log N) with the tie-break
(O(log N) bits) and O(log N) with a margin; the copies need ~log₂(16 k_v/G) fraction bits.

Examples
--------
>>> import numpy as np
>>> c = make_mqar(3, "float32")
>>> t = np.array([[4, 7, 0, 6, 5, 7, 4]])          # k4 v1 k0 v0 k5 v1 | query k4 (K = 6)
>>> c.predict(t).tolist()
[[1]]
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Construction, ConstructionSpec, check_options, precision_of
from .jl import beta_for_leak, binary_codes, max_abs_overlap
from .layout import Layout, Weights, build_transformer_model

__all__ = ["make_nearest_neighbour", "make_mqar", "nn_table", "nn_width", "SPECS"]

_TABLE_SEED = 20240609  # the task's public table (reductions/tasks/nearest_neighbour.py)




@lru_cache(maxsize=16)
def nn_table(size: int, gamma: float = 0.5) -> np.ndarray:
    """The Nearest Neighbour task's public sign table ``(size, k_v)`` int8 (same recipe and seed)."""
    k = math.ceil((4 * math.log(max(size, 2)) + 2 * math.log(2)) / gamma ** 2)
    rng = np.random.default_rng(_TABLE_SEED)
    while True:
        s = np.where(rng.random((size, k)) < 0.5, -1, 1).astype(np.int8)
        if max_abs_overlap(s) <= gamma * k:
            s.setflags(write=False)
            return s


def _retrieval(name, task, n, Q, vectors, A, G, precision, *, tie_break, source, tag, promise,
               report_extra):
    """Build the C4 weights: pairs (vector j, label) then Q queries; see the module docstring."""
    prec = precision_of(precision)
    V, kv = vectors.shape
    N = 2 * n + Q
    pos_codes = binary_codes(N)
    c = pos_codes.k
    lay = Layout()
    vec, val = lay.add("VEC", kv), lay.add("VAL", A)
    lay.add("ISL", 1)
    isl = lay.index("ISL")
    own, prv = lay.add("OWN", c), lay.add("PRV", c)
    tie = None
    if tie_break:
        lay.add("TIE", 1)
        tie = lay.index("TIE")
    d_k, d_v = max(c, kv + 2), max(kv, A)
    w = Weights(lay.d, vocab=V + A, max_len=N, layers=2, heads=1, d_k=d_k, d_v=d_v, d_mlp=0,
                n_out=A)
    p = w.p
    S = pos_codes.signs.astype(np.float64)  # (N, c)
    p["tok_emb"][:V, vec] = vectors
    p["tok_emb"][V + np.arange(A), val.start + np.arange(A)] = 1.0
    p["tok_emb"][V:V + A, isl] = 1.0
    p["pos_emb"][:, own] = S
    p["pos_emb"][1:2 * n + 1, prv] = S[:2 * n]          # p -> p - 1 (first query: the last label)
    p["pos_emb"][2 * n + 1:, prv] = S[1]                  # later queries -> position 1, a label
    if tie is not None:
        p["pos_emb"][2 * np.arange(n) + 1, tie] = (n - 1 - np.arange(n)) / n
    # layer 1: previous-token copy of VEC, leak lambda1 = G / (16 kv)
    lam1 = G / (16.0 * kv)
    beta1 = beta_for_leak(pos_codes.leak, lam1)
    eps1 = lam1 / (1.0 + lam1)
    p["l0.W_Q"][0, prv, :c] = beta1 * np.eye(c)
    p["l0.W_K"][0, own, :c] = np.eye(c)
    p["l0.W_V"][0, vec, :kv] = np.eye(kv)
    p["l0.W_O"][0, :kv, vec] = np.eye(kv)
    # layer 2: nearest copied vector among the labels
    delta = kv * (3 * eps1 + 2 * eps1 ** 2)
    beta2 = 2.0 * math.log(8 * N) / G
    L = beta2 * (2 * kv * (1 + eps1) ** 2 + kv + delta + 1) + math.log(8 * N)
    p["l1.W_Q"][0, vec, :kv] = beta2 * np.eye(kv)
    p["l1.b_Q"][0, kv] = L
    p["l1.W_K"][0, vec, :kv] = np.eye(kv)
    p["l1.W_K"][0, isl, kv] = 1.0
    p["l1.b_K"][0, kv] = -1.0
    if tie is not None:
        p["l1.b_Q"][0, kv + 1] = beta2
        p["l1.W_K"][0, tie, kv + 1] = 1.0
    p["l1.W_V"][0, val, :A] = np.eye(A)
    p["l1.W_O"][0, :A, val] = np.eye(A)
    p["readout.W"][val, :] = np.eye(A)
    model = build_transformer_model(w, precision=prec)
    report = {"k_v": kv, "position_code_k": c, "gap_G": G, "beta1": round(beta1, 6),
              "eps1": eps1, "delta": delta, "beta2": round(beta2, 6), "L": round(L, 3),
              "tie_break": tie is not None, **report_extra, "layout": lay.describe()}
    return Construction(name, task, n, N, model, model.d_model, 2, 1, prec, report, source, tag,
                        tuple(range(2 * n, N)), "symbol" if task == "mqar" else "bool", A,
                        promise=promise)


def nn_width(n: int, table_factor: int = 2, gamma: float = 0.5) -> int:
    """The width of :func:`make_nearest_neighbour` (tie-break form) at n pairs, without its table:
    ``k_v + A + 1 + 2c + 1`` (VEC, VAL with A = 2 labels, ISL, OWN and PRV, TIE), k_v the table's
    row length ``ceil((4 ln V + 2 ln 2) / gamma^2)`` (V = table_factor n), c = ceil(log2 N), N = 2n + 1.

    >>> nn_width(3) == make_nearest_neighbour(3).width
    True
    """
    V = table_factor * n
    kv = math.ceil((4 * math.log(max(V, 2)) + 2 * math.log(2)) / gamma ** 2)
    return kv + 2 + 1 + 2 * binary_codes(2 * n + 1).k + 1


def _nn_overlaps(tokens, n, table):
    s = table.astype(np.int64)
    vec, query = tokens[:, 0:2 * n:2], tokens[:, 2 * n]
    if np.any((vec < 0) | (vec >= len(s))) or np.any((query < 0) | (query >= len(s))):
        raise InvalidParameterError("nearest-neighbour: vector positions must hold vector ids")
    return np.einsum("bik,bk->bi", s[vec], s[query])  # (B, n)


def make_nearest_neighbour(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """C4 for Nearest Neighbour with n pairs (N = 2n + 1).

    Options: ``table_factor`` (2, V = 2n vectors), ``gamma`` (0.5, the table's), ``margin``
    (Δ in inner-product units; default None: the tie-break, correct on every input).  With a
    margin, :meth:`Construction.admits` is True exactly on inputs whose nearest inner product
    beats the second by ≥ Δ (the stated assumption).
    """
    opts = check_options("nearest-neighbour-2tf", options, ("table_factor", "gamma", "margin"))
    V = int(opts.get("table_factor", 2)) * n
    table = nn_table(V, float(opts.get("gamma", 0.5)))
    kv = table.shape[1]
    margin = opts.get("margin")
    if margin is None:
        G, promise, extra = 1.0 / n, None, {"margin": "none (tie-break: every input)"}
    else:
        G = float(margin) * kv
        if not G >= 2 - 1e-9:
            raise InvalidParameterError(f"margin must be >= 2/k_v = {2 / kv:.4g} (overlaps differ by 2)")
        G = math.floor(G / 2 + 1e-9) * 2.0  # overlaps differ by multiples of 2

        def promise(tokens, G=G):
            o = np.sort(_nn_overlaps(np.asarray(tokens), n, table), axis=1)
            return o[:, -1] - (o[:, -2] if n > 1 else -np.inf) >= G - 1e-9
        extra = {"margin": G / kv}
    return _retrieval("nearest-neighbour-2tf", "nearest-neighbour", n, 1, table.astype(np.float64),
                      2, G, precision, tie_break=margin is None, source="BHBK-NN-2TF", tag="[D]",
                      promise=promise, report_extra=extra)


def make_mqar(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """C4's exact-key case for MQAR with n pairs (N = 2n + Q).

    Options: ``num_queries`` (Q, 1 as the task's registry default), ``values`` (2),
    ``key_factor`` (2).  Promise: keys distinct and every queried key present.
    """
    opts = check_options("mqar-2tf", options, ("num_queries", "values", "key_factor"))
    Q = int(opts.get("num_queries") or n) if "num_queries" in opts else 1
    A, K = int(opts.get("values", 2)), int(opts.get("key_factor", 2)) * n
    keys = binary_codes(K).signs.astype(np.float64)

    def promise(tokens):
        t = np.asarray(tokens)
        k = t[:, 0:2 * n:2]
        present = (t[:, 2 * n:, None] == k[:, None, :]).any(axis=2).all(axis=1)
        ordered = np.sort(k, axis=1)
        return present & ~np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)
    return _retrieval("mqar-2tf", "mqar", n, Q, keys, A, 2.0, precision, tie_break=False,
                      source="BHBK-MQAR-2TF", tag="[R]/[D]", promise=promise,
                      report_extra={"margin": 2.0 / keys.shape[1], "num_queries": Q})


def all_nn_inputs(n: int, table_factor: int = 2) -> np.ndarray:
    """Every NN input at n pairs (vectors with repeats, any query, any labels)."""
    V = table_factor * n
    vecs = np.array(list(itertools.product(range(V), repeat=n)), dtype=np.int64)
    labs = V + np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64)
    rows = [np.concatenate([np.stack([v, l], axis=1).reshape(-1), [q]])
            for v in vecs for l in labs for q in range(V)]
    return np.array(rows, dtype=np.int64)


def all_mqar_inputs(n: int, values: int = 2, key_factor: int = 2) -> np.ndarray:
    """Every MQAR input at n pairs and one query: distinct keys, any values, any query key."""
    K = key_factor * n
    keys = np.array(list(itertools.permutations(range(K), n)), dtype=np.int64)
    vals = K + np.array(list(itertools.product(range(values), repeat=n)), dtype=np.int64)
    rows = [np.concatenate([np.stack([k, v], axis=1).reshape(-1), [q]])
            for k in keys for v in vals for q in range(K)]
    return np.array(rows, dtype=np.int64)


SPECS = (
    ConstructionSpec(
        "nearest-neighbour-2tf", "nearest-neighbour", "transformer", 2, "BHBK-NN-2TF", "[D]",
        make_nearest_neighbour, "k_v + 2⌈log₂ N⌉ + 4 (k_v: the task's vector dimension)",
        "layer 1 copies x_i to its label; layer 2 attends to the label of the largest <x_q, x_i>",
        width_option=None, exhaustive_max_n=3, inputs=all_nn_inputs, aliases=("c4", "nn-2tf"),
        width_of=nn_width),
    ConstructionSpec(
        "mqar-2tf", "mqar", "transformer", 2, "BHBK-MQAR-2TF", "[R]/[D]", make_mqar,
        "⌈log₂ K⌉ + |values| + 2⌈log₂ N⌉ + 1 (K = 2n keys)",
        "C4 with exact binary key codes: the query's key code matches one copied key exactly",
        width_option=None, exhaustive_max_n=3, inputs=all_mqar_inputs, aliases=("mqar-c4",)),
)
