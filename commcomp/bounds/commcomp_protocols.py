"""commcomp's bounds from the protocols it implements (theorems.md §8), beyond :mod:`.commcomp_derived`.

Each entry is the communication bound of a protocol that ``reductions.simulate`` runs bit for bit, read
as a width bound; all are ``[D]`` (derived for commcomp), and each states its precision model.

* **RNN rows for Match2 and Match3** through their registered reductions (INDEX -> Match2 with
  ``N = n + 1``, DISJ -> Match3 with ``N = 2n + 1``), both prefix/suffix one-way:
  ``S(m) p >= D^{A->B}(f) = n``.
* **qSA, 1 layer, H heads** from the row protocol (``reductions/simulate/qsa.py``): Alice sends her
  row's query, key and value, ``H (2 d_k + d_v) p`` bits with ``d_k = m`` and ``d_v = d'``; so
  ``H (2m + d') p >= q`` and ``H m >= (q/p - H d')/2``.
* **Dyck-(2,2), 1-layer linear attention, RetNet, DSS**: their final state is a sum over positions
  of terms that each depend on one token and its position (``sum_t phi(k_t) v_t^T``,
  ``sum_t gamma^(N-t) k_t v_t^T``, ``sum_t A^(N-t) B u_t``), so under the interleaved DISJ_n ->
  Dyck-(2,2) partition (blocks A B B A, ``N = 4n + 1``, the final [CLS] token Bob's) Alice sends
  her partial sums, ``S(m)`` numbers of ``p + ceil(log2 N)`` bits when partial sums are exact:
  ``S(m) (p + ceil(log2 N)) >= n``.  A model that rounds its running state at every step is not
  covered (the precision model is "exact partial sums").
* **Hybrid** (recurrent stack + one attention layer, ``reductions/simulate/hybrid.py``): with a
  prefix/suffix split, Alice sends her recurrent state, Bob the query at his output position,
  Alice her partial attention sums: ``S(m) p + H d_k p + H (d_v + 1)(p + ceil(log2 N))`` bits in
  three messages; with ``d_k = d_v = m`` this is at least ``D(f) - 1 = n`` for EQ_n and DISJ_n
  (Bob alone learns the answer).  With chain of thought the protocol needs one round per
  generated token, so no width bound follows (WDL-Hybrid).

Examples
--------
>>> from commcomp.bounds.commcomp_protocols import COMMCOMP_PROTOCOL_BOUNDS
>>> b = next(b for b in COMMCOMP_PROTOCOL_BOUNDS if b.id == "COMMCOMP-DYCK22-SUM-1L")
>>> b.relation_text(), b.archs, b.precision_model
('S(m)*(p + ceiling(log2(N))) >= n, n = floor((N - 1)/4)', ('linear-attention', 'retnet', 'dss'), 'exact partial sums')
"""

from __future__ import annotations

import functools

import sympy as sp

from commcomp.bounds.bhbk import dyck_dfa_states_expr
from commcomp.bounds.records import H, N, Bound, depth, dprime, floor_div, k_lit, n, p, q, types

__all__ = ["COMMCOMP_PROTOCOL_BOUNDS", "HYBRID_COT", "HYBRID_TASKS"]

_bound = functools.partial(Bound, paper="commcomp", tags=("[D]",), randomized=False)
_ONE_WAY = "prefix/suffix one-way"
_S_DFA = sp.Symbol("S_DFA")

#: What chain of thought does to the hybrid protocol (data the table shows).
HYBRID_COT = ("with chain of thought the protocol needs one round per generated token: every generated "
              "token's recurrent state and query depend on both parties, so (query, partial sums) repeat "
              "per token and the cost grows with the CoT length; no width bound follows (WDL-Hybrid)")

#: Tasks with a hybrid entry: task -> (id suffix, problem, n in terms of N, the reduction's layout).
HYBRID_TASKS = {
    "string-equality": ("EQ", "equality", floor_div(N - 1, 2), "x, separator, y: N = 2n + 1; deterministic only"),
    "string-disjointness": ("DISJ", "disjointness", floor_div(N - 1, 2), "x, separator, y: N = 2n + 1"),
    "match3": ("MATCH3", "disjointness", floor_div(N - 1, 2), "DISJ -> Match3, N = 2n + 1"),
    "istree": ("ISTREE", "disjointness", floor_div(N - 2, 6), "DISJ -> IsTree, Alice's edges first, N = 6n + 2"),
}

COMMCOMP_PROTOCOL_BOUNDS: tuple[Bound, ...] = (
    _bound(id="COMMCOMP-MATCH2-RNN", task="match2", problem="index", split=_ONE_WAY, arch_class="recurrent",
           kind="lower", quantity="state_bits", formula=N - 1,
           assumptions="INDEX_n -> Match2 (registered reduction index->match2): Alice's n slots, then Bob's "
                       "query slot, N = n + 1; D^{A->B}(INDEX_n) = n", precision_model="p-bit numbers",
           source="INDEX -> Match2, recurrent", section="§8.1"),
    _bound(id="COMMCOMP-MATCH3-RNN", task="match3", problem="disjointness", split=_ONE_WAY,
           arch_class="recurrent", kind="lower", quantity="state_bits", formula=n,
           definitions=((n, floor_div(N - 1, 2)),),
           assumptions="DISJ_n -> Match3 (registered reduction disjointness->match3): Alice's n slots, Bob's "
                       "n, the public query token, N = 2n + 1; D^{A->B}(DISJ_n) = n",
           precision_model="p-bit numbers", source="DISJ -> Match3, recurrent", section="§8.1, §8.6"),
    _bound(id="COMMCOMP-qSA-ROW-1TF", task="qsa", problem="disjointness",
           split="partition one-way (Alice's output row: its q, k, v)", arch_class="transformer-1layer",
           kind="lower", quantity="heads_times_width", formula=(q / p - H * dprime) / 2,
           assumptions="DISJ_q -> qSA (N = 2q + 1, the output row 2q+1 Alice's): the row protocol sends "
                       "H (2 d_k + d_v) p bits with d_k = m, d_v = d', and must carry D^{A->B}(DISJ_q) = q "
                       "bits: H (2m + d') p >= q; any number of heads",
           precision_model="p-bit numbers", source="DISJ -> qSA, the implemented row protocol",
           section="§8.7"),
    _bound(id="COMMCOMP-DYCK22-SUM-1L", task="dyck", problem="disjointness",
           split="interleaved partition, one-way", arch_class="recurrent", kind="lower",
           quantity="state_numbers_sum_bits", formula=n, definitions=((n, floor_div(N - 1, 4)),),
           conditions=(types >= 2, depth >= 2), archs=("linear-attention", "retnet", "dss"), layers=1,
           assumptions="1 layer only; the final state is a sum over positions of per-position terms, so "
                       "under DISJ_n -> Dyck-(2,2) (blocks A B B A, N = 4n + 1, [CLS] Bob's) Alice sends her "
                       "partial sums: S(m) numbers of p + ceil(log2 N) bits; D^{A->B}(DISJ_n) = n",
           precision_model="exact partial sums", source="DISJ -> Dyck-(2,2), sum-state layers",
           status="derived from the argument of COMMCOMP-DYCK22-1TF-1W; not BHBK's constant-size RNN claim",
           section="§8.9, §8.3"),
    _bound(id="COMMCOMP-qSA-explicit", task="qsa", problem=None, split=None, arch_class="transformer-1layer",
           kind="upper", quantity="width", formula=dprime + 2 * q + 1, tags=("[D✓]",),
           precision_model="p-bit numbers",
           assumptions="commcomp's explicit construction (models.constructions qsa-moment-curve): keys on the "
                       "moment curve (2q + 1 dims) plus d' value dims, at the stated finite precision; its worst "
                       "margin can be ~(2/N)^(2q), so it is exact only where the precision resolves it (about "
                       "2q log2 N bits): check it at the row's precision (SHT Thm 3 proves this width at "
                       "infinite precision only: SHT-qSA-UB-inf)",
           source="qSA, explicit construction C7b", section="§7 C7b"),
    _bound(id="COMMCOMP-kDNF-2TF", task=None, problem=None, split=None, arch_class="transformer-2layer",
           kind="upper", quantity="width", formula=3 * sp.Max(k_lit + 1, sp.ceiling(4 * k_lit * sp.log(N + 1))) + 8,
           tags=("[D✓]",), precision_model="p-bit numbers",
           assumptions="C5 as built (models.constructions k-dnf-2tf): N input bits then [CLS], two heads, "
                       "residual 1 + 3m + 7 = 3m + 8 channels (BIT, KEY/QP/QN of m each, 7 scalars) with key codes "
                       "of m = max(k + 1, ceil(4 k ln(N + 1))) dims (k = dnf_k literals per term), certified "
                       "at build time", source="k-DNF, explicit construction C5",
           ref_id="BHBK-kDNF-2TF", section="§7 C5"),
    _bound(id="COMMCOMP-Dyck-Elman", task="dyck", problem=None, split=None, arch_class="recurrent",
           kind="upper", quantity="width", formula=_S_DFA * (2 * types + 1),
           definitions=((_S_DFA, dyck_dfa_states_expr()),), archs=("elman",), tags=("[D✓]",),
           assumptions="the explicit ReLU Elman RNN (models.constructions dyck-elman): one unit per (DFA "
                       "state, last token) pair, m = S_DFA (2t + 1) = 40 for Dyck-(2,2), exact at fixed:2:0; "
                       "BHBK-Dyck-RNN's m = 1 needs an arbitrary transition function",
           source="bounded Dyck, explicit Elman construction", section="§7 C6"),
    *(
        _bound(id=f"COMMCOMP-HYBRID-{short}", task=task, problem=problem,
               split="prefix/suffix, three messages (state A->B, query B->A, partial sums A->B)",
               arch_class="hybrid", kind="lower", quantity="hybrid_protocol_bits", formula=n,
               definitions=((n, n_of_N),), precision_model="exact partial sums", cot=HYBRID_COT,
               assumptions=f"{layout}; recurrent layers are causal, so Alice's keys and values depend on "
                           "her tokens only; d_k = d_v = m; S(m) = the recurrent stack's state numbers; "
                           "Bob alone learns the answer: D(f) - 1 = n bits",
               source="hybrid split (reductions/simulate/hybrid.py)", section="§8.3, §8.1")
        for task, (short, problem, n_of_N, layout) in HYBRID_TASKS.items()
    ),
)
