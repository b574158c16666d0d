"""Building blocks of the bound catalogue: symbols, ``log2`` and ``H2``, the :class:`Bound` record, task names.

Every bound is a frozen :class:`Bound`: a sympy right-hand side plus everything needed to cite it.  The
reading is always ``quantity >= formula``: necessary for a lower bound (``>`` where ``strict``), and
sufficient for an upper bound ("this much suffices", by construction).

Examples
--------
>>> from commcomp.bounds.records import N, p, log2
>>> (N / p).subs({N: 400, p: 32})
25/2
>>> log2(8192)
13
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from mpmath.libmp import prec_to_dps
from sympy.printing.str import StrPrinter

from commcomp.architectures import m
from commcomp.errors import UnknownNameError

__all__ = [
    "ARCH_CLASSES", "Bound", "ERROR_MODELS", "EVIDENCE", "EVIDENCE_TEXT", "H2", "KINDS", "LABELS", "LOWER_LABELS",
    "N_MEANING", "N_SEQUENCE", "PRECISION_MODELS", "PAPERS", "PROBLEMS", "QUANTITIES", "TAGS",
    "TASKS", "H", "C", "N", "c", "delta", "depth", "dprime", "eps", "gamma", "k", "k_lit", "log2", "m", "n", "p",
    "q", "resolve_task", "sigma", "types", "attn_eps", "floor_div", "latex", "text", "times",
]

# --- symbols (one object each, shared by every module of the catalogue) -------------------------------
N = sp.Symbol("N", positive=True, integer=True)          #: input length in tokens (the papers' N)
n = sp.Symbol("n", nonnegative=True, integer=True)       #: bits per party of the embedded problem
p = sp.Symbol("p", positive=True, integer=True)          #: bits per stored number
H = sp.Symbol("H", positive=True, integer=True)          #: attention heads per layer
q = sp.Symbol("q", positive=True, integer=True)          #: qSA sparsity
dprime = sp.Symbol("d'", positive=True, integer=True)    #: qSA value dimension d'
gamma = sp.Symbol("gamma", positive=True)                #: JL off-diagonal bound
delta = sp.Symbol("delta", positive=True)                #: JL failure probability
eps = sp.Symbol("epsilon", positive=True)                #: protocol error probability (randomized rows)
attn_eps = sp.Symbol("epsilon_attn", positive=True)      #: attention mass allowed off the target (C2)
sigma = sp.Symbol("sigma", positive=True, integer=True)  #: alphabet size |Sigma|
k = sp.Symbol("k", positive=True, integer=True)          #: indices in Multi-Index Lookup
k_lit = sp.Symbol("k_lit", positive=True, integer=True)  #: literals per term of a k-DNF
types = sp.Symbol("t", positive=True, integer=True)      #: Dyck bracket types
depth = sp.Symbol("D", positive=True, integer=True)      #: Dyck depth bound
c = sp.Symbol("c", positive=True)                        #: an unknown universal constant
C = sp.Symbol("C", nonnegative=True)                     #: communication complexity of an embedded problem


class log2(sp.Function):  # noqa: N801 - reads like the maths
    """Base-2 logarithm; prints as ``log2(x)``, exact on powers of two, numeric through ``evalf``.

    Examples
    --------
    >>> log2(1024), float(log2(400))
    (10, 8.643856189774725)
    """

    nargs = 1

    @classmethod
    def eval(cls, x):  # noqa: D102
        if x.is_Integer and x > 0 and (int(x) & (int(x) - 1)) == 0:
            return sp.Integer(int(x).bit_length() - 1)
        if x.is_Rational and x > 0 and x.p == 1 and (x.q & (x.q - 1)) == 0:
            return -sp.Integer(x.q.bit_length() - 1)
        return None

    def _eval_evalf(self, prec):
        return (sp.log(self.args[0]) / sp.log(2)).evalf(prec_to_dps(prec))

    def _eval_rewrite_as_log(self, x, **kwargs):
        return sp.log(x) / sp.log(2)

    def _eval_is_real(self):
        return self.args[0].is_positive

    def _latex(self, printer, exp=None):
        body = r"\log_2\left(%s\right)" % printer._print(self.args[0])
        return body if exp is None else r"%s^{%s}" % (body, exp)


class H2(sp.Function):  # noqa: N801
    """Binary entropy ``-e log2 e - (1-e) log2(1-e)``.

    Examples
    --------
    >>> H2(sp.Rational(1, 2)), round(float(H2(sp.Rational(1, 3))), 6)
    (1, 0.918296)
    """

    nargs = 1

    @classmethod
    def eval(cls, e):  # noqa: D102
        if e == sp.Rational(1, 2):
            return sp.Integer(1)
        if e == 0 or e == 1:
            return sp.Integer(0)
        return None

    def _eval_rewrite_as_log(self, e, **kwargs):
        return -(e * sp.log(e) + (1 - e) * sp.log(1 - e)) / sp.log(2)

    def _eval_evalf(self, prec):
        return self.rewrite(sp.log).evalf(prec_to_dps(prec))

    def _eval_is_real(self):
        return True

    def _latex(self, printer, exp=None):
        body = r"H_2\left(%s\right)" % printer._print(self.args[0])
        return body if exp is None else r"%s^{%s}" % (body, exp)


class _Printer(StrPrinter):
    """sympy's str printer, with the natural logarithm written ``ln`` (``log2`` stays ``log2``)."""

    def _print_log(self, expr):
        return f"ln({self._print(expr.args[0])})"


def text(expr: sp.Basic) -> str:
    """Plain-text form of a formula: ``ln`` for natural logs, ``log2`` for base 2.

    Examples
    --------
    >>> text(sp.log(N) / log2(N))
    'ln(N)/log2(N)'
    """
    return _Printer().doprint(expr)


def latex(expr: sp.Basic) -> str:
    """LaTeX of a formula, ``\\ln`` for natural logs."""
    return sp.latex(expr, ln_notation=True)


def floor_div(numerator: sp.Expr, denominator: int) -> sp.Expr:
    """``floor(numerator / denominator)`` kept in that shape for printing (sympy would expand it).

    Examples
    --------
    >>> floor_div(N - 1, 2), floor_div(N - 1, 2).subs(N, 400)
    (floor((N - 1)/2), 199)
    """
    ratio = sp.Mul(numerator, sp.Pow(sp.Integer(denominator), -1, evaluate=False), evaluate=False)
    return sp.floor(ratio, evaluate=False)


def times(factor: int, expr: sp.Expr) -> sp.Expr:
    """``factor * (expr)`` without distributing, so ``3*(p + log2(N))`` prints as written."""
    return sp.Mul(sp.Integer(factor), expr, evaluate=False)


# --- vocabularies --------------------------------------------------------------------------------------
#: Task registry names (DESIGN §4) and accepted aliases.
TASKS = ("index-lookup", "multi-index-lookup", "nearest-neighbour", "mqar", "string-equality",
         "string-disjointness", "dyck", "qsa", "match2", "match3", "istree",
         "induction-heads", "function-composition", "copy")
_TASK_ALIASES = {
    "il": "index-lookup", "mil": "multi-index-lookup", "nn": "nearest-neighbour",
    "nearest-neighbor": "nearest-neighbour", "associative-recall": "mqar", "equality": "string-equality",
    "disjointness": "string-disjointness", "bounded-dyck": "dyck", "q-sparse-averaging": "qsa",
    "is-tree": "istree", "induction": "induction-heads", "ih": "induction-heads",
    "composition": "function-composition", "fc": "function-composition", "copying": "copy",
}
PROBLEMS = ("index", "disjointness", "equality", "inner-product", "greater-than")
#: Classes a bound can cover; ``protocol`` marks pure communication facts with no model.
ARCH_CLASSES = ("recurrent", "transformer-1layer", "transformer-2layer", "transformer", "hybrid",
                "feedforward", "protocol")
KINDS = ("lower", "upper", "separation")
#: quantity -> the left-hand side it bounds (``S(m)`` is the architecture's state-number count).
QUANTITIES = {
    "state_bits": "S(m)*p", "width": "m", "heads_times_width": "H*m",
    "heads_times_width_plus_1": "H*(m + 1)", "width_times_precision": "m*p",
    "heads_width_precision": "m*p*H", "jl_dim": "k_JL", "inverse_temperature": "beta",
    "precision_bits": "p", "bits": "bits", "statement": "",
    # a 1-layer sum-state model (linear attention, RetNet, DSS) sending exact partial sums of its state
    "state_numbers_sum_bits": "S(m)*(p + ceiling(log2(N)))",
    # the hybrid split (reductions/simulate/hybrid.py): state, then query, then partial sums
    "hybrid_protocol_bits": "S(m)*p + H*m*p + H*(m + 1)*(p + ceiling(log2(N)))",
}
TAGS = ("[P]", "[A]", "[C]", "[S]", "[R]", "[D]", "[D✓]")
LABELS = ("proved lower bound", "construction", "construction parameter", "heuristic", "measured",
          "asymptotic, constant unknown", "statement",
          "lower bound stated by the authors [A]", "lower bound stated by a secondary source [S]",
          "recalled lower bound [R]", "derived lower bound [D]", "derived and verified lower bound [D✓]")
#: Where the *number* of an entry comes from (not the shape of the result): the formula's own tag.
EVIDENCE = ("P", "A", "S", "R", "C", "D", "D✓")
EVIDENCE_TEXT = {
    "P": "proved in the paper [P]",
    "A": "stated by the BHBK authors in their rebuttal [A], not in the paper",
    "S": "stated by a secondary source [S], not checked against the paper body",
    "R": "recalled [R], unverified",
    "C": "read off the authors' released code [C]",
    "D": "derived for commcomp [D]",
    "D✓": "derived for commcomp and verified numerically [D✓]",
}
#: The label of a lower bound, by the evidence for its formula (only [P] formulas are "proved").
LOWER_LABELS = {"P": "proved lower bound", "A": "lower bound stated by the authors [A]",
                "S": "lower bound stated by a secondary source [S]", "R": "recalled lower bound [R]",
                "C": "lower bound stated by the authors [A]", "D": "derived lower bound [D]",
                "D✓": "derived and verified lower bound [D✓]"}
#: What N means in an entry, per task (the papers' N; see :func:`commcomp.bounds.per_task.catalogue_N`).
N_MEANING = {
    "index-lookup": "N = symbols s_1..s_N (the sequence is N + 1 tokens: the query follows)",
    "multi-index-lookup": "N = data symbols s_1..s_N (the sequence is N + 2k tokens: k indices on each side)",
}
N_SEQUENCE = "N = sequence length in tokens"
PRECISION_MODELS = ("", "p-bit numbers", "exact partial sums", "infinite precision")
#: How an entry counts errors: worst case (empty) or averaged over uniform inputs.
ERROR_MODELS = ("", "uniform")
PAPERS = ("BHBK", "SHT", "WDL", "commcomp", "standard", "SHT24", "PNP", "SAF", "JBKM", "JRT")

CITATIONS = {
    "BHBK": "Bhattamishra, Hahn, Blunsom, Kanade, NeurIPS 2024, arXiv 2406.09347",
    "SHT": "Sanford, Hsu, Telgarsky, NeurIPS 2023, arXiv 2306.02896",
    "WDL": "Wen, Dang, Lyu, arXiv 2402.18510",
    "commcomp": "derived for commcomp (shared/reference/theorems.md)",
    "standard": "standard communication complexity (Kushilevitz & Nisan 1997)",
    "SHT24": "Sanford, Hsu, Telgarsky 2024, One-layer transformers fail to solve the induction heads task, "
             "arXiv 2408.14332",
    "PNP": "Peng, Narayanan, Papadimitriou 2024, On limitations of the Transformer architecture, arXiv 2402.08164",
    "SAF": "Strobl, Angluin, Frank 2025, Concise one-layer transformers can do function evaluation (sometimes), "
           "arXiv 2503.22076",
    "JBKM": "Jelassi, Brandfonbrener, Kakade, Malach, ICML 2024, Repeat after me, arXiv 2402.01032",
    "JRT": "Arora et al. 2024, Just read twice: closing the recall gap for recurrent language models, "
           "arXiv 2407.05483",
}


def resolve_task(name: str) -> str:
    """Registry name of a task, from its name or an alias.

    Examples
    --------
    >>> resolve_task("Nearest_Neighbor")
    'nearest-neighbour'
    """
    if not isinstance(name, str):
        raise UnknownNameError(f"task name must be a string, got {name!r}")
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = _TASK_ALIASES.get(key, key)
    if key not in TASKS:
        raise UnknownNameError(f"unknown task {name!r}; known: {', '.join(TASKS)}")
    return key


@dataclass(frozen=True)
class Bound:
    """One catalogue entry.

    Attributes
    ----------
    id : str
        Unique id; reference rows keep the reference's id (``BHBK-IL-RNN``), commcomp's own start
        ``COMMCOMP-``, standard facts ``CC-``.
    paper : str
        One of :data:`PAPERS`.
    task, problem : str or None
        Registry names (None for general statements).
    split : str or None
        How the input is divided between Alice and Bob, and how many rounds.
    arch_class : str
        One of :data:`ARCH_CLASSES`.
    kind : str
        ``lower``, ``upper`` (by construction) or ``separation``.
    quantity : str
        Key of :data:`QUANTITIES`; the left-hand side of the relation.
    randomized : bool
        True if the bound holds for randomized (bounded-error) models.
    formula : sympy.Expr or None
        Right-hand side, in N, p, H, m and the symbols of this module; None for statements with no formula.
        A formula containing :data:`c` is asymptotic (constant unknown) and has no numeric value.
    definitions : tuple of (Symbol, Expr)
        Auxiliary symbols in terms of N, substituted in order (``n = floor((N-1)/2)``).
    strict : bool
        ``>`` instead of ``>=``.
    conditions : tuple of sympy relations
        Must hold for the bound to apply (checked by the calculator).
    assumptions, source, status, paper_form, section : str
        Plain text; ``paper_form`` is the paper's own statement when it differs from ``formula``.
    tags : tuple of str
        Reference tags (:data:`TAGS`) carried into every citation.
    label : str
        What the number is (:data:`LABELS`); derived from kind and formula when left empty.
    variant : str or None
        Set when the bound is about a different input format or an augmented model (index first,
        RAG, ...); the calculator skips variants unless asked.
    ref_id : str or None
        The reference row this entry implements, when its id differs.
    evidence : str
        Where the formula's *number* comes from (:data:`EVIDENCE`), derived from the tags when left
        empty: a derived constant ([D✓], [D]) first, then [A], [S], [R], [C], [P].  Only a [P]
        formula is labelled "proved lower bound".
    precision_model : str
        How numbers are counted (:data:`PRECISION_MODELS`): ``"p-bit numbers"``, ``"exact partial
        sums"`` (terms on a p-bit grid, sums sent exactly in p + ceil(log2 N) bits) or ``"infinite
        precision"`` (a construction that needs unbounded precision); empty for the usual p-bit reading.
    cot : str
        What chain of thought does to the entry (empty: not discussed).
    archs : tuple of str
        Registry names of the only architectures the entry covers (empty: its whole class).
    layers : int or None
        Depth a recurrent entry is stated for (None: any depth; Transformer depth is in ``arch_class``).
    error_model : str
        ``""``: worst case (right on every input, or randomized at ``eps`` on every input); ``"uniform"``:
        error ``eps`` averaged over uniform inputs (:mod:`commcomp.bounds.average`); the calculator shows
        these only when given an error (``bounds --error EPS``).
    """

    id: str
    paper: str
    task: str | None
    problem: str | None
    split: str | None
    arch_class: str
    kind: str
    quantity: str
    randomized: bool
    formula: sp.Expr | None
    definitions: tuple[tuple[sp.Symbol, sp.Expr], ...] = ()
    strict: bool = False
    conditions: tuple[sp.Basic, ...] = ()
    assumptions: str = ""
    source: str = ""
    tags: tuple[str, ...] = ()
    status: str = ""
    label: str = ""
    paper_form: str = ""
    variant: str | None = None
    ref_id: str | None = None
    section: str = ""
    evidence: str = ""
    precision_model: str = ""
    cot: str = ""
    archs: tuple[str, ...] = ()
    layers: int | None = None
    error_model: str = ""

    def __post_init__(self) -> None:
        if self.paper not in PAPERS:
            raise ValueError(f"{self.id}: paper {self.paper!r}")
        if self.task is not None and self.task not in TASKS:
            raise ValueError(f"{self.id}: task {self.task!r}")
        if self.problem is not None and self.problem not in PROBLEMS:
            raise ValueError(f"{self.id}: problem {self.problem!r}")
        if self.arch_class not in ARCH_CLASSES or self.kind not in KINDS or self.quantity not in QUANTITIES:
            raise ValueError(f"{self.id}: class/kind/quantity {self.arch_class}/{self.kind}/{self.quantity}")
        bad = [t for t in self.tags if t not in TAGS]
        if bad or not self.tags:
            raise ValueError(f"{self.id}: tags {self.tags}")
        if not self.evidence:
            object.__setattr__(self, "evidence", self._default_evidence())
        if self.evidence not in EVIDENCE:
            raise ValueError(f"{self.id}: evidence {self.evidence!r}")
        if self.error_model not in ERROR_MODELS:
            raise ValueError(f"{self.id}: error model {self.error_model!r}")
        if self.precision_model not in PRECISION_MODELS:
            raise ValueError(f"{self.id}: precision model {self.precision_model!r}")
        if not self.label:
            object.__setattr__(self, "label", self._default_label())
        if self.label not in LABELS:
            raise ValueError(f"{self.id}: label {self.label!r}")

    def _default_evidence(self) -> str:
        """The formula's tag: a derived constant ([D✓], [D]) wins over the source of the shape."""
        for tag in ("D✓", "D", "A", "S", "R", "C", "P"):
            if f"[{tag}]" in self.tags:
                return tag
        return "R"  # pragma: no cover - every entry has a tag

    def _default_label(self) -> str:
        if self.formula is None or self.kind == "separation":
            return "statement"
        if self.asymptotic:
            return "asymptotic, constant unknown"
        return LOWER_LABELS[self.evidence] if self.kind == "lower" else "construction"

    @property
    def n_means(self) -> str:
        """What N is in this entry's formula (the papers' N; data, shown in captions)."""
        if self.task is None:
            return "N = input length in tokens, as the statement reads"
        return N_MEANING.get(self.task, N_SEQUENCE)

    @property
    def evidence_text(self) -> str:
        """Long form of :attr:`evidence` (``"stated by a secondary source [S], ..."``)."""
        return EVIDENCE_TEXT[self.evidence]

    @property
    def asymptotic(self) -> bool:
        """True if the formula has an unknown constant (no numeric value)."""
        return self.formula is not None and c in self.formula.free_symbols

    @property
    def tag(self) -> str:
        """Tags joined, e.g. ``"[A][S]"``."""
        return "".join(self.tags)

    @property
    def citation(self) -> str:
        """Citation string with the tags, for tables and papers."""
        where = f"{self.source}; " if self.source else ""
        return f"{self.id}: {where}{CITATIONS[self.paper]} {self.tag}"

    def formula_in_N(self) -> sp.Expr | None:
        """The formula with :attr:`definitions` substituted (so only N and parameters remain)."""
        if self.formula is None:
            return None
        expr = self.formula
        for symbol, value in reversed(self.definitions):
            expr = expr.subs(symbol, value)
        return expr

    def relation_text(self, lhs: str | None = None) -> str:
        """``lhs >= rhs`` (necessary, lower) or ``lhs >= rhs suffices`` (upper), with definitions appended."""
        if self.formula is None:
            return self.paper_form or self.status
        lhs = lhs or QUANTITIES[self.quantity]
        op = ">" if self.strict else ">="
        tail = " suffices" if self.kind == "upper" else ""
        defs = "".join(f", {s} = {text(v)}" for s, v in self.definitions)
        return f"{lhs} {op} {text(self.formula)}{tail}{defs}"

    def relation_latex(self, lhs: str | None = None) -> str:
        """LaTeX of :meth:`relation_text` (without the surrounding ``$``)."""
        if self.formula is None:
            return ""
        lhs = lhs or sp.latex(sp.sympify(QUANTITIES[self.quantity].replace("S(m)", "S_m"),
                                         locals={"beta": sp.Symbol("beta"), "k_JL": sp.Symbol("k_JL")}))
        op = ">" if self.strict else r"\ge"
        tail = r"\text{ suffices}" if self.kind == "upper" else ""
        defs = "".join(f",\\ {latex(s)} = {latex(v)}" for s, v in self.definitions)
        return f"{lhs} {op} {latex(self.formula)}{tail}{defs}"
