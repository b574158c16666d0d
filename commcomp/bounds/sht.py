"""SHT catalogue (theorems.md §5): Sanford, Hsu, Telgarsky, NeurIPS 2023.

Every SHT formula is ``[S]`` (a secondary summary); theorem numbers follow the reference.  The definition
row (SHT-qSA-def) and the experiment row (SHT-qSA-exp) state no bound and are not catalogued here.

Examples
--------
>>> from commcomp.bounds.sht import SHT_BOUNDS
>>> sorted(b.id for b in SHT_BOUNDS)[:3]
['SHT-Match2-UB', 'SHT-Match3-LB', 'SHT-Match3-tensor']
"""

from __future__ import annotations

import functools

import sympy as sp

from commcomp.bounds.records import H, N, Bound, c, dprime, eps, log2, q

__all__ = ["SHT_BOUNDS"]

_bound = functools.partial(Bound, paper="SHT")

SHT_BOUNDS: tuple[Bound, ...] = (
    _bound(id="SHT-qSA-UB-p", task="qsa", problem=None, split=None, arch_class="transformer-1layer",
           kind="upper", quantity="width", randomized=False,
           formula=dprime + sp.Min(N, sp.ceiling(8 * q * sp.log(N))),
           assumptions="one self-attention unit with input MLP, 1 head; C7a: keys Gaussian of dimension "
                       "min(N, ceil(C q ln N)) with C = 8 (commcomp's constant and cap), dual-certificate "
                       "queries, values z_j (d' dims); fixed precision", source="Thm 2 (qSA, fixed precision)",
           precision_model="p-bit numbers",
           tags=("[S]", "[D✓]"),
           paper_form="m = Omega(d' + q log N) suffices with p = O(log(q log N / eps)) "
                      "(asymptotic, constant unknown)", section="§5, §7 C7a"),
    _bound(id="SHT-qSA-UB-p-precision", task="qsa", problem=None, split=None,
           arch_class="transformer-1layer", kind="upper", quantity="precision_bits", randomized=False,
           formula=c * log2(q * log2(N) / eps),
           assumptions="epsilon = the l2 approximation error here", source="Thm 2 (precision)",
           tags=("[S]",), ref_id="SHT-qSA-UB-p", paper_form="p = O(log(q log N / eps))", section="§5"),
    _bound(id="SHT-qSA-UB-inf", task="qsa", problem=None, split=None, arch_class="transformer-1layer",
           kind="upper", quantity="width", randomized=False, formula=2 * q + 1 + dprime,
           assumptions="unbounded precision; C7b: moment-curve keys (cyclic polytope), 2q + 1 key dims "
                       "plus d' value dims; margin can be N^(-2q), so ~2q log2 N bits in practice",
           source="Thm 3 (qSA, infinite precision)", tags=("[S]", "[D✓]"), paper_form="m = Omega(d' + q)",
           precision_model="infinite precision", section="§5, §7 C7b"),
    _bound(id="SHT-qSA-LB", task="qsa", problem="disjointness", split="partition one-way (DISJ_q)",
           arch_class="transformer-1layer", kind="lower", quantity="width_times_precision", randomized=False,
           formula=c * q, strict=True, conditions=(N >= 2 * q + 1, H <= 1),
           assumptions="single head only (H = 1; with H heads see COMMCOMP-qSA-ROW-1TF); 1 layer, p-bit Q; "
                       "1/(2q)-approximation; q large enough, N >= 2q + 1, d' >= 1; holds for randomized models too since R(DISJ) = Theta(q) [D]; token 2q+1's "
                       "K and V also depend on Alice's input (send them too or fix them) [D]",
           source="Thm 4 (qSA lower bound, App. B.3)", tags=("[S]",),
           paper_form="m p <= c q  =>  no 1/(2q)-approximation", section="§5, §8.7"),
    _bound(id="SHT-qSA-FFN", task="qsa", problem=None, split=None, arch_class="feedforward", kind="lower",
           quantity="width", randomized=False, formula=N * dprime / 2, conditions=(2 * q <= N,),
           assumptions="fully connected network on the flattened input; first-layer width; q <= N/2",
           source="Thm 10 (qSA, feedforward)", tags=("[S]",), section="§5"),
    _bound(id="SHT-qSA-RNN", task="qsa", problem=None, split="prefix/suffix one-way (INDEX-type [R])",
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=False,
           formula=(N - 1) / 2,
           assumptions="memory-bounded model; holds even for q = 1", source="Thm 11 (qSA, recurrent)",
           tags=("[S]", "[D]"), paper_form="memory >= (N - 1)/2 bits; m >= (N - 1)/(2p) [D]", evidence="S",
           status="the (N - 1)/2 bits [S]; the division by p [D]", section="§5"),
    _bound(id="SHT-Match2-UB", task="match2", problem=None, split=None, arch_class="transformer-1layer",
           kind="upper", quantity="width", randomized=False, formula=sp.Integer(3),
           assumptions="C8: trigonometric embeddings, 2 dims for Q/K and 2 for V plus a harmless bias; "
                       "precision O(log M + log N), M = poly(N)", source="Thm 6 [R] (Match2)",
           tags=("[S]", "[D✓]"), paper_form="constant embedding dimension (m = 3)", section="§5, §7 C8"),
    _bound(id="SHT-Match3-LB", task="match3", problem="disjointness", split="partition (DISJ-type [R])",
           arch_class="transformer-1layer", kind="lower", quantity="heads_width_precision", randomized=False,
           formula=c * N / log2(log2(N)), strict=True, conditions=(N >= 5,),
           assumptions="1 layer, H heads, p-bit; the log log N denominator is the least certain item; "
                       "commcomp's direct reduction without it: COMMCOMP-MATCH3-1TF",
           source="Thm 7 (Match3)", tags=("[S]",),
           status="linear in N [P]; the formula and its log log N factor [S], the least certain item",
           paper_form="m p H <= c N / log log N  =>  cannot compute Match3", section="§5"),
    _bound(id="SHT-Match3-var", task="match3", problem=None, split=None, arch_class="transformer",
           kind="upper", quantity="statement", randomized=False, formula=None,
           assumptions="extra structure on the embedding, or locality", source="Match3 variants",
           tags=("[S]",), paper_form="efficient", variant="structured embedding or locality", section="§5"),
    _bound(id="SHT-Match3-tensor", task="match3", problem=None, split=None, arch_class="transformer",
           kind="upper", quantity="width", randomized=False, formula=c,
           assumptions="third-order (tensor) self-attention", source="Match3 with tensor attention",
           tags=("[S]",), paper_form="efficient, constant size", variant="third-order attention",
           section="§5"),
)
