"""WDL catalogue (theorems.md §6): Wen, Dang, Lyu, *RNNs are not Transformers (Yet)*.

The abstract [P] fixes the headline claims; memory bounds and theorem numbers are [R].  Where the argument
is the one-way INDEX reduction commcomp implements, the row carries its explicit constant [D].  RNN lower
bounds hold with or without chain of thought: every generated token is a function of the state after the
input (§8.2); they fail with In-context RAG, whose retrieved tokens depend on Alice's prefix.

Examples
--------
>>> from commcomp.bounds.wdl import WDL_BOUNDS
>>> [b.id for b in WDL_BOUNDS if b.arch_class == "hybrid"]
['WDL-Hybrid']
"""

from __future__ import annotations

import functools

import sympy as sp

from commcomp.bounds.records import H2, N, Bound, c, eps, floor_div, n

__all__ = ["WDL_BOUNDS"]

_bound = functools.partial(Bound, paper="WDL")
_N_AR = (n, floor_div(N - 1, 2))
_COT = "with or without chain of thought of any length (§8.2)"

WDL_BOUNDS: tuple[Bound, ...] = (
    _bound(id="WDL-CoT-helps", task=None, problem=None, split=None, arch_class="recurrent",
           kind="separation", quantity="statement", randomized=False, formula=None,
           assumptions="assuming PSPACE not in P/poly; complexity-theoretic, not CC",
           source="CoT strictly increases RNN expressiveness", tags=("[P]", "[S]"),
           paper_form="CoT improves RNNs", section="§6"),
    _bound(id="WDL-TF-sim-RNN", task=None, problem=None, split=None, arch_class="transformer",
           kind="upper", quantity="statement", randomized=False, formula=None,
           assumptions="Transformers with CoT emulate RNNs with CoT", source="Transformer simulates RNN",
           tags=("[S]",), paper_form="small multiplicative cost in parameters", variant="with CoT",
           section="§6"),
    _bound(id="WDL-AR-RNN", task="mqar", problem="index", split="prefix/suffix one-way",
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=False, formula=n,
           definitions=(_N_AR,),
           assumptions=f"associative recall: n key-value pairs then one query (N = 2n + 1); {_COT}",
           source="associative recall, recurrent", tags=("[P]", "[R]", "[D]"),
           paper_form="not solvable with o(n)-bit memory [R]; 'RNNs are not expressive enough' [P]",
           section="§6"),
    _bound(id="WDL-AR-RNN-rand", task="mqar", problem="index", split="prefix/suffix one-way",
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=True,
           formula=(1 - H2(eps)) * n, definitions=(_N_AR,), conditions=(eps < sp.Rational(1, 2),),
           assumptions=f"via CC-INDEX randomized; {_COT}", source="associative recall, randomized",
           tags=("[D]",), ref_id="WDL-AR-RNN", section="§6"),
    _bound(id="WDL-AR-TF", task="mqar", problem=None, split=None, arch_class="transformer", kind="upper",
           quantity="width", randomized=False, formula=c,
           assumptions="constant depth and width, O(log n) precision [R]", source="associative recall, "
                                                                             "Transformer",
           tags=("[P]", "[R]"), paper_form="solvable 'with ease'", section="§6"),
    _bound(id="WDL-other-retrieval", task=None, problem="index", split="prefix/suffix one-way",
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=False, formula=c * n,
           assumptions="Index, c-gram retrieval, Counting (task names recalled)",
           source="other retrieval tasks", tags=("[R]",), section="§6"),
    _bound(id="WDL-IsTree-RNN", task="istree", problem=None, split="prefix/suffix one-way of the edge list",
           arch_class="recurrent", kind="lower", quantity="state_bits", randomized=False, formula=c * n,
           definitions=((n, floor_div(N - 2, 6)),),
           assumptions=f"IsTree on an edge list; {_COT}; commcomp's explicit reduction: COMMCOMP-ISTREE-RNN",
           source="IsTree, recurrent with CoT", tags=("[P]", "[R]"),
           paper_form="Omega(n)-bit memory [R]; 'not expressive enough' even with CoT [P]", section="§6"),
    _bound(id="WDL-IsTree-TF", task="istree", problem=None, split=None, arch_class="transformer",
           kind="upper", quantity="width", randomized=False, formula=c,
           assumptions="with CoT of length O(n) writing a DFS Euler tour; O(log n) precision [R]",
           source="IsTree, Transformer with CoT", tags=("[P]", "[R]", "[C]"),
           paper_form="constant size, solvable 'with ease'", section="§6"),
    _bound(id="WDL-gap", task=None, problem=None, split=None, arch_class="recurrent", kind="separation",
           quantity="statement", randomized=False, formula=None,
           assumptions="RNN + CoT vs Transformer + CoT", source="exponential gap", tags=("[S]",),
           paper_form="RNNs with CoT remain exponentially weaker than Transformers with CoT", section="§6"),
    _bound(id="WDL-RAG", task=None, problem=None, split=None, arch_class="recurrent", kind="upper",
           quantity="statement", randomized=False, formula=None,
           assumptions="RNN + In-context RAG (regex retrieval) + CoT", source="RNN with In-context RAG",
           tags=("[P]", "[S]"), paper_form="solves every polynomial-time problem",
           variant="with In-context RAG and CoT", section="§6"),
    _bound(id="WDL-Hybrid", task=None, problem=None, split=None, arch_class="hybrid", kind="upper",
           quantity="statement", randomized=False, formula=None,
           assumptions="RNN stack + one Transformer layer + CoT (Mamba stack, norm, one LlamaDecoderLayer)",
           source="hybrid model", tags=("[P]", "[C]"), paper_form="solves every polynomial-time problem",
           section="§6"),
)
