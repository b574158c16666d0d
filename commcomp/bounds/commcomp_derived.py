"""commcomp's own bounds (theorems.md §8): explicit constants from reductions commcomp implements and checks.

Each is tagged ``[D]``; where a paper states a bound for the same task, that row is catalogued beside this
one (BHBK-NN-RNN beside COMMCOMP-NN-RNN, BHBK-Dyck-1TF beside COMMCOMP-DYCK22-1TF-*, SHT-Match3-LB beside
COMMCOMP-MATCH3-1TF, WDL-IsTree-RNN beside COMMCOMP-ISTREE-RNN).

Counting: Bob alone learns the answer, so a protocol sends at least ``D(f) - 1`` bits and a one-way message
at least ``D^{A->B}(f)``; for DISJ_n and EQ_n both are ``n``.  The reference writes ``n + 1`` in §8.6, §8.9,
§8.10 and §10 (it counts Bob's output bit); an ``n``-bit message *can* carry Alice's whole input, so ``n`` is
the bound that holds.

Examples
--------
>>> from commcomp.bounds.commcomp_derived import COMMCOMP_BOUNDS
>>> b = next(b for b in COMMCOMP_BOUNDS if b.id == "COMMCOMP-MATCH3-1TF")
>>> b.relation_text()
'H*(m + 1) >= n/(p + ceiling(log2(N))), n = floor((N - 1)/2)'
"""

from __future__ import annotations

import functools

import sympy as sp

from commcomp.bounds.records import (N, Bound, attn_eps, c, depth, floor_div, gamma, log2, n, p, sigma, times,
                                     types)

__all__ = ["COMMCOMP_BOUNDS", "crt_prime_sum"]


class crt_prime_sum(sp.Function):  # noqa: N801 (a sympy function prints under its class name)
    """``L_1 + ... + L_r`` for the first primes ``L_1 < ... < L_r`` whose product is ``>= x``: the ring
    units of the hybrid's position code (``models/constructions/hybrid_lookup.py``).  Stays symbolic
    until ``x`` is an integer.

    >>> crt_prime_sum(7), crt_prime_sum(1101), crt_prime_sum(N + 1)
    (10, 28, crt_prime_sum(N + 1))
    """

    @classmethod
    def eval(cls, x):
        if x.is_Integer:
            total, prod, prime = 0, 1, 2
            while prod < int(x) or total == 0:
                total, prod, prime = total + prime, prod * prime, int(sp.nextprime(prime))
            return sp.Integer(total)
        return None

    def _eval_is_positive(self):
        return True

    def _eval_is_integer(self):
        return True


_bound = functools.partial(Bound, paper="commcomp")
_HALF = (n, floor_div(N - 1, 2))
_QUARTER = (n, floor_div(N - 1, 4))
_ONE_WAY_1TF = n / (p + sp.ceiling(log2(N)))
_TWO_ROUND_1TF = n / (times(3, p + log2(N)))
_DYCK22 = (types >= 2, depth >= 2)  # the reduction's strings use 2 types, depth 2; mismatches stay mismatches
_CLS = ("a classification token at the end, owned by Bob, with a fixed embedding, so Alice knows its "
        "query (§8.3 step 1)")

COMMCOMP_BOUNDS: tuple[Bound, ...] = (
    _bound(id="COMMCOMP-NN-RNN", task="nearest-neighbour", problem="index", split="prefix/suffix one-way",
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=False, formula=n,
           definitions=(_HALF,),
           assumptions="x_i = T(i) distinct unit vectors known to both, y_i = Alice's bit i, x_q = T(Bob's "
                       "i), margin 1 - gamma; N = 2n + 1 tokens", source="INDEX -> Nearest Neighbour",
           tags=("[D]",), section="§8.4"),
    _bound(id="COMMCOMP-DYCK22-1TF-2R", task="dyck", problem="disjointness",
           split="interleaved partition, two-round", arch_class="transformer-1layer", kind="lower",
           quantity="heads_times_width", randomized=False, formula=_TWO_ROUND_1TF, definitions=(_QUARTER,),
           conditions=_DYCK22,
           assumptions="DISJ_n -> Dyck-(2,2), blocks A B B A, N = 4n + 1; two-round simulation "
                       "3 m H (p + log2 N) >= n; a constant factor 4 weaker than BHBK-Dyck-1TF",
           source="DISJ -> Dyck-(2,2), two-round", tags=("[D]",),
           status="reduction checked exhaustively for n <= 6", section="§8.9, §8.3"),
    _bound(id="COMMCOMP-DYCK22-1TF-1W", task="dyck", problem="disjointness",
           split="interleaved partition, one-way", arch_class="transformer-1layer", kind="lower",
           quantity="heads_times_width_plus_1", randomized=False, formula=_ONE_WAY_1TF,
           definitions=(_QUARTER,), conditions=_DYCK22,
           assumptions=f"DISJ_n -> Dyck-(2,2), N = 4n + 1; {_CLS}; H(m+1)(p + ceil(log2 N)) >= n",
           source="DISJ -> Dyck-(2,2), one-way", tags=("[D]",),
           status="reduction checked exhaustively for n <= 6", section="§8.9, §8.3"),
    _bound(id="COMMCOMP-DYCK22-1TF-rand", task="dyck", problem="disjointness",
           split="interleaved partition, two-round", arch_class="transformer-1layer", kind="lower",
           quantity="heads_times_width", randomized=True, formula=c * _TWO_ROUND_1TF,
           definitions=(_QUARTER,), conditions=_DYCK22, assumptions="R(DISJ_n) = Theta(n)",
           source="DISJ -> Dyck-(2,2), randomized", tags=("[D]",), ref_id="COMMCOMP-DYCK22-1TF-2R",
           section="§8.9"),
    _bound(id="COMMCOMP-DYCK21-1TF-2R", task="dyck", problem="equality",
           split="interleaved partition, two-round", arch_class="transformer-1layer", kind="lower",
           quantity="heads_times_width", randomized=False, formula=_TWO_ROUND_1TF, definitions=(_HALF,),
           conditions=(types >= 2,),
           assumptions="EQ_n -> Dyck-(2,1), blocks of 2 tokens, N = 2n + 1; deterministic models only",
           source="EQ -> Dyck-(2,1), two-round", tags=("[D]",),
           status="reduction checked exhaustively for n <= 6", section="§8.9, §8.3"),
    _bound(id="COMMCOMP-DYCK21-1TF-1W", task="dyck", problem="equality",
           split="interleaved partition, one-way", arch_class="transformer-1layer", kind="lower",
           quantity="heads_times_width_plus_1", randomized=False, formula=_ONE_WAY_1TF,
           definitions=(_HALF,), conditions=(types >= 2,),
           assumptions=f"EQ_n -> Dyck-(2,1), N = 2n + 1; {_CLS}; deterministic models only",
           source="EQ -> Dyck-(2,1), one-way", tags=("[D]",),
           status="reduction checked exhaustively for n <= 6", section="§8.9, §8.3"),
    _bound(id="COMMCOMP-MATCH3-1TF", task="match3", problem="disjointness",
           split="partition one-way (query at token 1, known to both)", arch_class="transformer-1layer",
           kind="lower", quantity="heads_times_width_plus_1", randomized=False, formula=_ONE_WAY_1TF,
           definitions=(_HALF,),
           assumptions="DISJ_n -> Match3: token 1 = 0, Alice's tokens in [1, M/4), Bob's -b mod M, M odd "
                       "> 4n, N = 2n + 1; no log log N loss (compare SHT-Match3-LB); the reference's "
                       "(n + 1) counts Bob's output bit", source="DISJ -> Match3", tags=("[D]",),
           status="direct reduction checked by hand", section="§8.6, §10"),
    _bound(id="COMMCOMP-MATCH3-1TF-rand", task="match3", problem="disjointness",
           split="partition one-way (query at token 1, known to both)", arch_class="transformer-1layer",
           kind="lower", quantity="heads_times_width_plus_1", randomized=True, formula=c * _ONE_WAY_1TF,
           definitions=(_HALF,), assumptions="R(DISJ_n) = Theta(n)", source="DISJ -> Match3, randomized",
           tags=("[D]",), ref_id="COMMCOMP-MATCH3-1TF", section="§8.6"),
    _bound(id="COMMCOMP-ISTREE-RNN", task="istree", problem="disjointness",
           split="prefix/suffix one-way (Alice's edges first)", arch_class="recurrent", kind="lower",
           quantity="state_bits", randomized=False, formula=n, definitions=((n, floor_div(N - 2, 6)),),
           assumptions="root r and gadgets {a_i, b_i}: Alice adds (r, a_i) or (r, b_i), Bob (a_i, b_i) or "
                       "(r, b_i); a tree iff DISJ(x, y) = 1; WDL tokens [BOS], 3 per edge, [EOS]: "
                       "N = 6n + 2; holds with or without CoT (§8.2); the reference's n + 1 counts Bob's "
                       "output bit", source="DISJ -> IsTree", tags=("[D]",),
           status="checked exhaustively per gadget; networkx is_tree is the ground truth", section="§8.10"),
    _bound(id="COMMCOMP-ISTREE-RNN-rand", task="istree", problem="disjointness",
           split="prefix/suffix one-way (Alice's edges first)", arch_class="recurrent", kind="lower",
           quantity="state_bits", randomized=True, formula=c * n, definitions=((n, floor_div(N - 2, 6)),),
           assumptions="R(DISJ_n) = Theta(n)", source="DISJ -> IsTree, randomized", tags=("[D]",),
           ref_id="COMMCOMP-ISTREE-RNN", section="§8.10"),
    _bound(id="COMMCOMP-C2-beta", task=None, problem=None, split=None, arch_class="transformer-1layer",
           kind="upper", quantity="inverse_temperature", randomized=False,
           formula=sp.log((N - 1) * (1 - attn_eps) / attn_eps) / (1 - gamma),
           conditions=(gamma < 1, attn_eps < 1), label="construction parameter",
           assumptions="C2 (Index Lookup, 1 layer): beta this large puts weight >= 1 - epsilon_attn on the "
                       "queried position (ignoring the smaller e^-beta term)", source="il_beta",
           tags=("[D]",), section="§7 C2, §10"),
    _bound(id="COMMCOMP-IL-Hybrid", task="index-lookup", problem=None, split=None, arch_class="hybrid",
           kind="upper", quantity="width", randomized=False, formula=2 * crt_prime_sum(N + 1) + sigma + 1,
           assumptions="one ReLU Elman layer whose rings count t mod L_i (the first primes with product >= N + 1 "
                       "positions: a CRT position code) and pass the token through, then one pre-norm attention "
                       "head matching the query's residues; hidden values 0/1, every row r + 1 ones, so the "
                       "norms scale all rows alike; any format holding 0 and 1 and the rounded beta",
           source="Index Lookup on the hybrid (models/constructions/hybrid_lookup.py)", tags=("[D✓]",),
           paper_form="WDL: one added attention layer closes the retrieval gap [P]; width "
                      "O(log^2 N / log log N) here, not O(log N)",
           status="checked over every input at n <= 8 and on samples at the crossover", section="§6, §7"),
)
