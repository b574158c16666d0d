"""Standard communication-complexity facts (theorems.md §2), in bits, as catalogue entries.

No model is involved (``arch_class="protocol"``); the calculator does not tabulate these, but they are
what every model bound above instantiates, and ``commcomp list theorems`` shows them.

Examples
--------
>>> from commcomp.bounds.standard import STANDARD_BOUNDS
>>> [b.id for b in STANDARD_BOUNDS][:3]
['CC-INDEX', 'CC-INDEX-rand', 'CC-INDEX-2way']
"""

from __future__ import annotations

import functools

import sympy as sp

from commcomp.bounds.records import H2, Bound, c, eps, log2, n

__all__ = ["STANDARD_BOUNDS"]

_bound = functools.partial(Bound, paper="standard", task=None, arch_class="protocol", quantity="bits")
_KN = "Kushilevitz & Nisan 1997"

STANDARD_BOUNDS: tuple[Bound, ...] = (
    _bound(id="CC-INDEX", problem="index", split="one-way A->B", kind="lower", randomized=False, formula=n,
           assumptions="Bob may ask any i, so Alice's message fixes all of x; exact", source=_KN,
           tags=("[D]",), paper_form="D^{A->B}(INDEX_n) = n", section="§2"),
    _bound(id="CC-INDEX-rand", problem="index", split="one-way A->B", kind="lower", randomized=True,
           formula=(1 - H2(eps)) * n, conditions=(eps < sp.Rational(1, 2),),
           assumptions="bounded error eps < 1/2", source="Kremer, Nisan, Ron 1995/1999; Ablayev 1996",
           tags=("[D]",), paper_form="R^{A->B}_eps(INDEX_n) >= (1 - H2(eps)) n", section="§2"),
    _bound(id="CC-INDEX-2way", problem="index", split="two-way (Bob sends i)", kind="upper",
           randomized=False, formula=sp.ceiling(log2(n)) + 1, assumptions="n >= 1", source=_KN,
           tags=("[D]",), section="§2"),
    _bound(id="CC-EQ", problem="equality", split="two-way", kind="lower", randomized=False, formula=n + 1,
           assumptions="exact for n >= 1 (both parties learn the answer)", source=_KN + "; Lean 4 formalisation",
           tags=("[D]",), paper_form="D(EQ_n) = n + 1", section="§2"),
    _bound(id="CC-EQ-oneway", problem="equality", split="one-way A->B", kind="lower", randomized=False,
           formula=n, assumptions="exact", source=_KN, tags=("[D]",), paper_form="D^{A->B}(EQ_n) = n",
           section="§2"),
    _bound(id="CC-EQ-pub", problem="equality", split="two-way, public coin", kind="upper", randomized=True,
           formula=sp.floor(log2(1 / eps)) + 2, conditions=(eps < 1,),
           assumptions="k + 1 bits whenever 2^-k < eps: so EQ lower bounds bind deterministic models only",
           source="Lean 4 formalisation (Functions/Equality)", tags=("[D]",), section="§2"),
    _bound(id="CC-EQ-priv", problem="equality", split="two-way, private coin", kind="lower", randomized=True,
           formula=c * log2(n), assumptions="private coin: Theta(log n)", source=_KN + "; Newman 1991",
           tags=("[D]",), section="§2"),
    _bound(id="CC-DISJ", problem="disjointness", split="two-way", kind="lower", randomized=False,
           formula=n + 1, assumptions="exact; one-way D^{A->B}(DISJ_n) = n", source=_KN, tags=("[D]",),
           section="§2"),
    _bound(id="CC-DISJ-rand", problem="disjointness", split="two-way (also one-way)", kind="lower",
           randomized=True, formula=c * n, assumptions="dense sets (k-subsets need only O(k))",
           source="Kalyanasundaram & Schnitger 1992; Razborov 1992", tags=("[D]",), section="§2"),
    _bound(id="CC-IP2", problem="inner-product", split="two-way", kind="lower", randomized=False,
           formula=n + 1, assumptions="n + 1 with the output bit", source="Chor & Goldreich 1988",
           tags=("[D]",), section="§2"),
    _bound(id="CC-IP2-disc", problem="inner-product", split="two-way, uniform distribution", kind="lower",
           randomized=True, formula=n / 2 - log2(1 / sp.Symbol("delta_adv", positive=True)) - c,
           assumptions="disc <= 2^(-n/2): advantage delta_adv over 1/2 needs this many bits",
           source="Chor & Goldreich 1988; discrepancy notes", tags=("[D]",), section="§2"),
)
