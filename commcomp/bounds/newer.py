"""Catalogue of the newer results (issue 23): induction heads, function composition, copying, just-read-twice.

Sources and what was read (tags, per the catalogue's convention):

- SHT24 (arXiv 2408.14332): the task's definition was read in the paper's own text (§1, the arXiv HTML);
  ``h m p = Omega(n)`` for one layer and the 2-layer solution with h, m = O(1), p = O(log n) (|Sigma| <= n)
  only in summaries of the paper: [S].
- PNP (arXiv 2402.08164): the abstract (read) says one layer cannot compose for large domains; the
  quantitative ``H(d + 1)p < n log n`` comes from a summary: [S].
- SAF (arXiv 2503.22076): the abstract (read, the authors' text): concise (polylog h d p) 1-layer
  Transformers evaluate f: [n] -> [n] under some representations, not when inputs and values sit at
  different positions; concise 2-layer ones do it even then: [P] for these statements (abstract level).
- JBKM (arXiv 2402.01032): the abstract (read): a 2-layer Transformer copies strings of exponential
  length, GSSMs are limited by their fixed-size state: [P] at abstract level; the formal
  ``error > 1 - |S|/|D|^L`` was not found in any stored text: [R], and commcomp derives the same
  pigeonhole form [D] (a state that outputs the copy is correct on at most |S| of the |D|^L strings).
- JRT (arXiv 2407.05483): the abstract (read, the authors' text in a stored copy of the arXiv HTML):
  recall reduces to set disjointness, the recurrent memory needed to solve it "changes with set order,
  i.e., whether the smaller set appears first", and repeating the context (JRT-Prompt) helps: [P] for
  these statements (abstract level); the bit counts are commcomp's [D].

Every formula with a number commcomp can evaluate is commcomp's own reduction ([D]): INDEX one-way, with
the sizes of :mod:`reductions.composition` written out (capacity of g: ``1 + (n + 1) L - 2^(L+1) + 2``,
``L = floor(log2 n)``).

Examples
--------
>>> from commcomp.bounds.newer import NEWER_BOUNDS, copy_error_floor
>>> sorted(b.id for b in NEWER_BOUNDS if b.task == "induction-heads")[:2]
['COMMCOMP-IH-1TF', 'COMMCOMP-IH-2TF']
>>> copy_error_floor(states=6, alphabet=2, length=3)
Fraction(1, 4)
"""

from __future__ import annotations

import functools
from fractions import Fraction

import sympy as sp

from commcomp.bounds.records import N, Bound, c, eps, floor_div, log2, n, p, sigma
from commcomp.errors import InvalidParameterError

__all__ = ["NEWER_BOUNDS", "copy_error_floor", "composition_capacity"]

_HALF = (n, floor_div(N - 1, 2))      # N = 2n + 1: induction heads (2k + 1), composition pairs, copy
_QUARTER = (n, floor_div(N - 1, 4))   # N = 4n + 1: composition, split layout
_SUMS = p + sp.ceiling(log2(N))       # a p-bit term summed exactly over N positions (DESIGN §3)
_L = sp.floor(log2(n))
#: bits commcomp's g holds at domain n: sum_{i<n} max(1, floor(log2(i + 1))) (reductions.composition)
_CAPACITY = 1 + (n + 1) * _L - 2 ** (_L + 1) + 2


def composition_capacity(domain: int) -> int:
    """The capacity formula at an integer domain (>= 2), evaluated exactly.

    >>> [composition_capacity(d) for d in (2, 3, 4, 8)]
    [2, 3, 5, 14]
    """
    if domain < 2:
        raise InvalidParameterError(f"domain must be >= 2, got {domain}")
    L = domain.bit_length() - 1
    return 1 + (domain + 1) * L - 2 ** (L + 1) + 2


def copy_error_floor(states: int, alphabet: int, length: int) -> Fraction:
    """Smallest error a model with ``states`` distinct states after the string can have on uniform
    strings of ``length`` over ``alphabet`` (pigeonhole: what it writes after the separator is a function
    of its state, so it is right on at most ``states`` strings): ``max(0, 1 - states / alphabet^length)``.
    """
    if states < 1 or alphabet < 2 or length < 1:
        raise InvalidParameterError("need states >= 1, alphabet >= 2, length >= 1")
    return max(Fraction(0), 1 - Fraction(states, alphabet ** length))


_bound = functools.partial(Bound, randomized=False)

NEWER_BOUNDS: tuple[Bound, ...] = (
    # -- induction heads --------------------------------------------------------------------------
    _bound(id="SHT24-IH-1TF", paper="SHT24", task="induction-heads", problem="index",
           split="one-way INDEX (partition)", arch_class="transformer-1layer", kind="lower",
           quantity="heads_width_precision", formula=c * N,
           assumptions="1 layer, h heads, width m, p-bit numbers; N = sequence length (the paper's n); "
                       "commcomp's exact form from its own partition: COMMCOMP-IH-1TF",
           source="main theorem (INDEX reduction)", tags=("[S]",), paper_form="h m p = Omega(n)",
           status="task definition read in the paper [P]; the bound's form from summaries [S]",
           section="SHT24 §2"),
    _bound(id="COMMCOMP-IH-1TF", paper="commcomp", task="induction-heads", problem="index",
           split="partition one-way (current token public, known to both)", arch_class="transformer-1layer",
           kind="lower", quantity="heads_times_width_plus_1", formula=n / _SUMS, definitions=(_HALF,),
           assumptions="INDEX_n -> induction heads (reductions.composition): Bob marks position 2y with the "
                       "current token, Alice writes x_i at 2i+1, N = 2n + 1, |Sigma| <= N; the one-way "
                       "1-layer simulation sends H (m + 1)(p + ceil(log2 N)) bits", source="INDEX -> induction heads",
           tags=("[D]",), status="checked exhaustively up to n = 12 (tests/reductions)", section="SHT24 §2"),
    _bound(id="COMMCOMP-IH-RNN", paper="commcomp", task="induction-heads", problem="index",
           split="prefix/suffix one-way (Bob's marker last)", arch_class="recurrent", kind="lower",
           quantity="state_bits", formula=n, definitions=(_HALF,),
           assumptions="INDEX_n -> induction heads, markers public, x Alice, Bob's marker last; N = 2n + 1",
           source="INDEX -> induction heads (prefix)", tags=("[D]",), section="SHT24 §2"),
    _bound(id="SHT24-IH-2TF", paper="SHT24", task="induction-heads", problem=None, split=None,
           arch_class="transformer-2layer", kind="upper", quantity="width", formula=c,
           assumptions="2 layers, O(1) heads, p = O(log N) when |Sigma| <= N", source="2-layer construction",
           tags=("[S]",), paper_form="h = O(1), m = O(1), p = O(log n)", section="SHT24 §1"),
    _bound(id="COMMCOMP-IH-2TF", paper="commcomp", task="induction-heads", problem=None, split=None,
           arch_class="transformer-2layer", kind="upper", quantity="width",
           formula=3 * sigma + 2 * sp.ceiling(log2(N)) + 2,
           assumptions="models/constructions/induction_heads.py: previous-token head, an MLP that turns "
                       "position 0 into a sink, then a rightmost-match head (recency from +-1 position bits, exact scores); one-hot tokens (sigma = |Sigma|; "
                       "the INDEX partition uses sigma = 3); 1 head per layer; p = O(log N)",
           source="explicit 2-layer weights", tags=("[D✓]",), ref_id="SHT24-IH-2TF",
           status="every input at N <= 5 (|Sigma| = N), N <= 8 (|Sigma| = 3) and N = 12 (|Sigma| = 2), bfloat16 included; sampled at the crossovers",
           section="SHT24 §1"),
    # -- function composition -----------------------------------------------------------------------
    _bound(id="PNP-FC-1TF", paper="PNP", task="function-composition", problem="index",
           split="one-way (g to Alice; layout pairs, N = 2n + 1)", arch_class="transformer-1layer",
           kind="lower", quantity="heads_times_width_plus_1", formula=n * log2(n) / p, definitions=(_HALF,),
           assumptions="one layer, H heads, embedding dimension d = m, p-bit numbers; domain n; the paper "
                       "counts p bits per sent number (commcomp's exact sums add ceil(log2 N): COMMCOMP-FC-1TF)",
           source="Thm 1 (composition)", tags=("[S]",), paper_form="H(d + 1)p < n log n  =>  cannot compose",
           status="the impossibility for large domains [P] (abstract); the formula [S]", section="PNP §3"),
    _bound(id="COMMCOMP-FC-1TF", paper="commcomp", task="function-composition", problem="index",
           split="prefix/suffix one-way (g to Alice, f(0) to Bob, query public; layout pairs)",
           arch_class="transformer-1layer", kind="lower", quantity="heads_times_width_plus_1",
           formula=_CAPACITY / _SUMS, definitions=(_HALF,), conditions=(N >= 5,),
           assumptions="INDEX_C -> composition at domain n, C = the bits g holds "
                       "(1 + (n + 1) L - 2^(L+1) + 2, L = floor(log2 n); n log2 n - O(n)); N = 2n + 1",
           source="INDEX -> function composition", tags=("[D]",),
           status="checked exhaustively up to k = 12 bits (tests/reductions)", section="PNP §3"),
    _bound(id="COMMCOMP-FC-bits-1TF", paper="commcomp", task="function-composition", problem="index",
           split="prefix/suffix one-way (g to Alice, one bit per entry; f(0) to Bob, query public; layout pairs)",
           arch_class="transformer-1layer", kind="lower", quantity="heads_times_width_plus_1",
           formula=n / _SUMS, definitions=(_HALF,),
           assumptions="INDEX_n -> composition at domain n with g's values in {0, 1} (index@bits): weaker than "
                       "COMMCOMP-FC-1TF by a log n factor, but each of Alice's tokens depends on one bit, which "
                       "the 1-layer witness search needs; N = 2n + 1",
           source="INDEX -> function composition (one bit per entry)", tags=("[D]",),
           status="checked exhaustively up to k = 12 bits (tests/reductions)", section="PNP §3"),
    _bound(id="COMMCOMP-FC-RNN", paper="commcomp", task="function-composition", problem="index",
           split="prefix/suffix one-way (g first)", arch_class="recurrent", kind="lower", quantity="state_bits",
           formula=_CAPACITY, definitions=(_HALF,), conditions=(N >= 5,),
           assumptions="the same reduction: g precedes f, so Alice's state after g must hold all C bits",
           source="INDEX -> function composition", tags=("[D]",), section="PNP §3"),
    _bound(id="SAF-FE-split-1TF", paper="SAF", task="function-composition", problem="index",
           split="partition one-way (layout split, N = 4n + 1: Bob the input tokens, Alice the values)",
           arch_class="transformer-1layer", kind="lower", quantity="heads_times_width_plus_1",
           formula=n / _SUMS, definitions=(_QUARTER,),
           assumptions="evaluation (g = identity) under the split layout; INDEX_n via reductions.composition "
                       "(index@split); the pairs layout has no such partition. N here is the split layout's "
                       "length: set beside PNP-FC-1TF at the same N, the domain is (N - 1)/4, not (N - 1)/2",
           source="function evaluation, inputs and values at different positions", tags=("[P]", "[D]"),
           paper_form="concise (h d p = polylog n) 1-layer Transformers cannot",
           status="the statement [P] (abstract); the formula is commcomp's partition [D]", section="SAF §4"),
    _bound(id="SAF-FE-pairs-1TF", paper="SAF", task="function-composition", problem=None, split=None,
           arch_class="transformer-1layer", kind="upper", quantity="statement", formula=None,
           assumptions="function evaluation, each input and its value in one position (layout pairs)",
           source="function evaluation, concise 1 layer", tags=("[P]",),
           paper_form="a concise 1-layer Transformer evaluates f: [n] -> [n] (h d p = polylog n)",
           section="SAF §3"),
    _bound(id="SAF-FE-2TF", paper="SAF", task="function-composition", problem=None, split=None,
           arch_class="transformer-2layer", kind="upper", quantity="statement", formula=None,
           assumptions="function evaluation under either layout", source="function evaluation, concise 2 layers",
           tags=("[P]",), paper_form="concise 2-layer Transformers evaluate f even with inputs and values apart",
           section="SAF §5"),
    _bound(id="COMMCOMP-FC-2TF", paper="commcomp", task="function-composition", problem=None, split=None,
           arch_class="transformer-2layer", kind="upper", quantity="width",
           formula=5 * sp.ceiling(log2(n)) + 2, definitions=(_HALF,), conditions=(N >= 5,),
           assumptions="models/constructions/function_composition.py, layout pairs: layer 1 looks up f's "
                       "entry for x (binary codes of the domain n), an MLP cleans f(x)'s code, layer 2 looks "
                       "up g's entry; 1 head per layer; N = 2n + 1",
           source="explicit 2-layer weights (composition, layout pairs)", tags=("[D✓]",),
           status="every input at n <= 3 in float64, float32, bfloat16; sampled up to n = 512", section="PNP §3"),
    _bound(id="COMMCOMP-FC-split-3TF", paper="commcomp", task="function-composition", problem=None, split=None,
           arch_class="transformer", layers=3, kind="upper", quantity="width",
           formula=8 * sp.ceiling(log2(n)) + 2 * sp.ceiling(log2(N)) + 2, definitions=(_QUARTER,),
           conditions=(N >= 9,),
           assumptions="layout split (N = 4n + 1): a previous-token layer binds each value token to its "
                       "input token, then the two lookups of COMMCOMP-FC-2TF; 3 layers, 1 head each (one more "
                       "than SAF's evaluation, which needs the binding and one lookup)",
           source="explicit 3-layer weights (composition, layout split)", tags=("[D✓]",),
           status="every input at n <= 3 in float64, float32, bfloat16; sampled at n = 64, 256", section="SAF §5"),
    # -- copy ----------------------------------------------------------------------------------------
    _bound(id="JBKM-copy-GSSM", paper="JBKM", task="copy", problem="index",
           split="prefix/suffix one-way (the string, then public blanks)", arch_class="recurrent",
           kind="lower", quantity="state_bits", formula=n * log2(sigma), definitions=(_HALF,),
           assumptions="any fixed-state model (GSSM); the copy is written after the string from the state "
                       "alone, so all |D|^L strings need distinct states; N = 2L + 1, alphabet sigma",
           source="Thm 2.7 [R] (GSSMs cannot copy)", tags=("[D]",),
           paper_form="error > 1 - |S| / |D|^L  (form recalled [R])", status="pigeonhole derived here [D]",
           section="JBKM §2"),
    _bound(id="JBKM-copy-GSSM-error", paper="JBKM", task="copy", problem="index",
           split="prefix/suffix one-way", arch_class="recurrent", kind="lower", quantity="state_bits",
           variant="error eps on uniform strings", formula=n * log2(sigma) + log2(1 - eps), definitions=(_HALF,),
           conditions=(eps < 1,),
           assumptions="a deterministic model wrong on a fraction eps of uniform strings: |S| >= (1 - eps) "
                       "|D|^L (copy_error_floor inverts it); a distributional error, not a randomized model",
           source="Thm 2.7 [R], error form", tags=("[R]", "[D]"), ref_id="JBKM-copy-GSSM",
           paper_form="error > 1 - |S| / |D|^L", section="JBKM §2"),
    _bound(id="JBKM-copy-2TF", paper="JBKM", task="copy", problem=None, split=None,
           arch_class="transformer-2layer", kind="upper", quantity="statement", formula=None,
           assumptions="hash-based 2-layer construction (n-gram lookup), positional information needed",
           source="2-layer Transformer copies", tags=("[P]",),
           paper_form="a two-layer Transformer copies strings of length exponential in its size",
           section="JBKM §2"),
    _bound(id="COMMCOMP-copy-1TF", paper="commcomp", task="copy", problem=None, split=None,
           arch_class="transformer-1layer", kind="upper", quantity="width",
           formula=2 * sigma + 2 * sp.ceiling(log2(n)) + 1, definitions=(_HALF,), conditions=(N >= 5,),
           assumptions="models/constructions/copy.py: the k-th blank attends to position k by binary codes "
                       "(the blank encoding of reductions/tasks/copy.py: the blanks' places are their "
                       "positions, so one layer does what JBKM's n-gram hashing does from the model's own "
                       "output); one-hot symbols, alphabet sigma; N = 2n + 1",
           source="explicit 1-layer weights (copy, blank encoding)", tags=("[D✓]",), ref_id="JBKM-copy-2TF",
           status="every input at n <= 12 in float64, float32, bfloat16; sampled up to n = 2048",
           section="JBKM §2"),
    # -- just read twice (on the existing Disjointness task) ---------------------------------------------
    _bound(id="JRT-DISJ-order", paper="JRT", task="string-disjointness", problem="disjointness",
           split="prefix/suffix one-way, either set first", arch_class="recurrent", kind="lower",
           quantity="statement", formula=None,
           assumptions="sets of sizes a <= b over [n]: one pass with the small set first needs log2 C(n, a) "
                       "bits, with the large set first log2 C(n, b); reading the context twice needs "
                       "log2 C(n, a) + 1 (reductions/search/jrt.py counts all three exactly at small n)",
           source="recall reduces to set disjointness; order matters; JRT", tags=("[P]", "[D]"),
           paper_form="the memory needed depends on which set comes first; repeating the context helps",
           status="the statement [P] (abstract, read); the counts [D], exact by brute force", section="JRT §3"),
)
