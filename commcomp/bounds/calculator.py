"""The bound calculator: catalogue x lengths x architectures -> :class:`BoundRow` values.

For each length N, task and architecture, every catalogue entry that covers them is evaluated at the given
precision p and heads H.  Recurrent lower bounds on state bits become a minimum width per architecture through
its state count; Transformer bounds on ``m H`` or ``H (m + 1)`` become a minimum ``m`` given H; constructions
report their width.  With ``width=`` each row also gets the crossover length: the smallest N at which that
width is provably too small (lower bounds) or no longer fits the construction (upper bounds).

Examples
--------
>>> rows = compute_bounds([400, 8192], 32, task="index-lookup", arch="lstm", include_randomized=False)
>>> [(r.n, r.theorem, r.min_width) for r in rows]
[(400, 'BHBK-IL-RNN', 7), (8192, 'BHBK-IL-RNN', 128)]
>>> compute_bounds(400, "float32", task="dyck", arch="transformer", layers=1)[0].summary
'm >= 4 (H*m >= 3.272)'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sympy as sp

from commcomp.architectures import ARCHITECTURES, get_architecture, m, recurrent_stack_state_formula, width_means
from commcomp.bounds.catalogue import (
    BOUNDS, PARAMETERS, applies_to, bound_layers, conditions_hold, substitutions, to_number, value_of,
)
from commcomp.bounds.records import QUANTITIES, TASKS, Bound, N, eps, latex, log2, p, resolve_task, text
from commcomp.bounds.widths import (
    capacity, crossover_length, hybrid_protocol_bits, min_width_for_bits, min_width_for_hybrid,
    min_width_for_quantity, sum_bits,
)
from commcomp.errors import InvalidParameterError, UnknownNameError

__all__ = ["BoundRow", "FIELDS", "compute_bounds", "precision_bits"]

#: largest N the calculator evaluates (exact sympy arithmetic: 10^18 takes seconds, 10^30 minutes)
MAX_BOUND_N = 1 << 64


@dataclass(frozen=True)
class BoundRow:
    """One evaluated bound: the DESIGN §4 ``bounds`` JSON fields first, then extras.

    ``value`` is the right-hand side of ``formula`` at this N (None when the constant is unknown);
    ``min_width`` the width it implies for ``arch`` (for constructions: the width they use);
    ``crossover_n`` the smallest N at which ``width`` (if given) is too small; ``paper_form`` the paper's
    own statement where it differs from ``formula`` (e.g. "width O(log N) (asymptotic, constant unknown)"
    beside commcomp's explicit constant); ``n_means`` what N is for this entry; ``evidence`` where the
    formula's number comes from (P, A, S, R, C, D, D✓); ``precision_model`` how numbers are counted;
    ``cot`` what chain of thought does to it; ``width_means`` what m counts for ``arch``;
    ``holds_at_precision`` (construction rows): whether commcomp's explicit weights for it are
    correct at this N and precision (True / False), None where unchecked (filled by
    ``reductions.separations.holds.annotate_rows``: the check runs models, which this package does
    not import); ``error`` the error ε under uniform inputs of an average-case row
    (:mod:`commcomp.bounds.average`, shown with ``error=``), None on worst-case rows.
    """

    task: str
    problem: str | None
    arch: str
    kind: str
    quantity: str
    value: int | float | None
    formula: str
    theorem: str
    assumptions: str
    n: int
    precision: int
    heads: int
    layers: int | None = None
    min_width: int | None = None
    state_bits: int | float | None = None
    width: int | None = None
    crossover_n: int | None = None
    randomized: bool = False
    eps: float | None = None
    tag: str = ""
    label: str = ""
    paper: str = ""
    split: str | None = None
    arch_class: str = ""
    arch_params: str = ""
    summary: str = ""
    citation: str = ""
    paper_form: str = ""
    formula_latex: str = ""
    n_means: str = ""
    evidence: str = ""
    precision_model: str = ""
    cot: str = ""
    width_means: str = ""
    holds_at_precision: bool | None = None
    error: float | None = None


#: Field names in order (the export column order).
FIELDS = tuple(BoundRow.__dataclass_fields__)


def precision_bits(precision: object) -> int:
    """Bits per number from an int, a Precision-like object (``.bits``) or a string (``"float32"``).

    Strings and integers go through :func:`commcomp.precision.parse_bound_bits` (1..1024 bits, or a
    format in the ranges of :data:`commcomp.precision.FORMATS_HELP`).

    Examples
    --------
    >>> precision_bits(32), precision_bits("bfloat16"), precision_bits("fixed:12:6")
    (32, 16, 12)
    """
    from commcomp.precision import parse_bound_bits

    bits = getattr(precision, "bits", None)  # a Precision-like object
    return bits if isinstance(bits, int) and not isinstance(precision, (str, int)) else \
        parse_bound_bits(precision)  # the ranges of commcomp.precision.FORMATS_HELP, one message


def _positive_ints(values: object, name: str, minimum: int) -> list[int]:
    items = [values] if isinstance(values, (int, str)) or not isinstance(values, Iterable) else list(values)
    out = []
    for v in items:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise InvalidParameterError(f"{name} must be an integer, got {v!r}")
        if int(v) < minimum:
            raise InvalidParameterError(f"{name} must be >= {minimum}, got {int(v)}")
        out.append(int(v))
    if not out:
        raise InvalidParameterError(f"give at least one {name}")
    return out


def _single_int(value: object, name: str) -> int:
    if isinstance(value, (str, Iterable)):
        raise InvalidParameterError(f"{name} must be one integer, got {value!r}")
    return _positive_ints(value, name, 1)[0]


def _names(values: object, resolve, everything: Iterable[str]) -> list[str]:
    if values is None:
        return list(everything)
    items = [values] if isinstance(values, str) else list(values)
    return list(dict.fromkeys(resolve(v) for v in items))


def _split_hyper(hyper: dict) -> dict[str, dict[str, int]]:
    known = {h for spec in ARCHITECTURES.values() for h in spec.hyper_names} - {"layers", "heads"}
    unknown = sorted(set(hyper) - known - set(PARAMETERS))
    if unknown:
        raise InvalidParameterError(f"unknown parameter {', '.join(unknown)}; architecture parameters: "
                                    f"{', '.join(sorted(known))}; bound parameters: {', '.join(PARAMETERS)}")
    return {name: {k: v for k, v in hyper.items() if k in spec.hyper_names and v is not None}
            for name, spec in ARCHITECTURES.items()}


class _Evaluator:
    """Caches exact values per (bound, N) and crossovers per (bound, capacity) within one call."""

    def __init__(self, bits: int, heads: int, params: dict) -> None:
        self.bits, self.heads, self.params = bits, heads, params
        self._subs: dict[int, dict] = {}
        self._values: dict[tuple[str, int], sp.Expr | None] = {}
        self._cross: dict[tuple[str, int], int | None] = {}

    def subs(self, length: int) -> dict:
        if length not in self._subs:
            self._subs[length] = substitutions(length, self.bits, self.heads, **self.params)
        return self._subs[length]

    def value(self, bound: Bound, length: int) -> sp.Expr | None:
        key = (bound.id, length)
        if key not in self._values:
            self._values[key] = value_of(bound, self.subs(length))
        return self._values[key]

    def crossover(self, bound: Bound, cap: int | None, log_coeff: int = 0) -> int | None:
        """Smallest N with ``value(N) - log_coeff * ceil(log2 N) > cap`` (``log_coeff``: the part of
        the capacity that grows with N, for the exact-partial-sum quantities)."""
        if cap is None or bound.formula is None or bound.asymptotic:
            return None
        key = (bound.id, cap, log_coeff)
        if key not in self._cross:
            fixed = {s: v for s, v in self.subs(2).items() if s != N}
            local = dict(fixed)
            for symbol, definition in bound.definitions:
                if symbol not in fixed:
                    local[symbol] = sp.sympify(definition).subs(local).doit()
            expr = bound.formula.subs(local).doit() - log_coeff * sp.ceiling(log2(N))
            start = next((v for v in range(2, 258) if conditions_hold(bound, self.subs(v))), 2)

            def requirement(v: int) -> sp.Expr | None:
                value = self.value(bound, v)
                return None if value is None else value - log_coeff * max(0, (v - 1).bit_length())

            self._cross[key] = crossover_length(requirement, expr, N, cap, start)
        return self._cross[key]


def _lhs(quantity: str, arch: str, hyper: dict) -> tuple[str, str]:
    """The left-hand side of a bound on ``quantity`` for ``arch``: text and LaTeX."""
    if quantity in ("state_bits", "state_numbers_sum_bits", "hybrid_protocol_bits"):
        expr = recurrent_stack_state_formula(arch, **hyper) * p
        if quantity == "state_numbers_sum_bits":
            expr = sp.Mul(expr / p, p + sp.ceiling(log2(N)), evaluate=False)
        elif quantity == "hybrid_protocol_bits":
            heads = hyper.get("heads", 1)
            expr = sp.Add(expr, heads * m * p, sp.Mul(heads * (m + 1), p + sp.ceiling(log2(N)), evaluate=False),
                          evaluate=False)
        return text(expr), latex(expr)
    lhs = QUANTITIES[quantity]
    symbols = {"H": sp.Symbol("H"), "m": sp.Symbol("m"), "p": p, "beta": sp.Symbol("beta"),
               "k_JL": sp.Symbol("k_JL"), "bits": sp.Symbol("bits")}
    return lhs, (latex(sp.sympify(lhs, locals=symbols)) if lhs else "")


# The printed forms depend on the bound and the left-hand side only, not on N: printed once per run
# (sympy's printers took half of a separations ladder's time when every row printed them again).
_LHS: dict[tuple, tuple[str, str]] = {}
_RELATIONS: dict[tuple, tuple[str, str]] = {}


def _lhs_cached(quantity: str, arch: str, hyper: tuple) -> tuple[str, str]:
    key = (quantity, arch, hyper)
    if key not in _LHS:
        _LHS[key] = _lhs(quantity, arch, dict(hyper))
    return _LHS[key]


def _relations(bound: Bound, lhs: str, lhs_latex: str) -> tuple[str, str]:
    key = (bound.id, lhs, lhs_latex)
    if key not in _RELATIONS:
        _RELATIONS[key] = (bound.relation_text(lhs), bound.relation_latex(lhs_latex))
    return _RELATIONS[key]


def _width_and_capacity(quantity: str, exact, arch: str, resolved: dict, bits: int, heads: int, length: int,
                        width: int | None) -> tuple[int | None, int | None, int]:
    """``(min width, capacity of `width`, log coefficient)`` for one evaluated bound (see crossover)."""
    if quantity == "state_bits":
        min_w = None if exact is None else min_width_for_bits(arch, exact, bits, **resolved)
        cap = None if width is None else capacity(quantity, width, bits, heads, arch, resolved)
        return min_w, cap, 0
    if quantity in ("state_numbers_sum_bits", "hybrid_protocol_bits"):
        stack = {k: v for k, v in resolved.items() if k != "heads"}
        if quantity == "state_numbers_sum_bits":
            min_w = None if exact is None else min_width_for_bits(arch, exact, sum_bits(bits, length), **resolved)
        else:
            min_w = None if exact is None else min_width_for_hybrid(exact, bits, heads, length, **stack)
        if width is None:
            return min_w, None, 0
        numbers = int(recurrent_stack_state_formula(arch, **resolved).subs(m, width))
        if quantity == "state_numbers_sum_bits":
            return min_w, numbers * bits, numbers
        # the protocol's bits at N = 1 (sums of p bits); the ceil(log2 N) per sum is the log coefficient
        return min_w, hybrid_protocol_bits(numbers, bits, heads, width, width, 1), heads * (width + 1)
    min_w = min_width_for_quantity(quantity, exact, heads)
    cap = None if width is None or min_w is None else capacity(quantity, width, bits, heads, arch, resolved)
    return min_w, cap, 0


def _error_value(error: object) -> object:
    """``error`` checked to lie in (0, 1/2) (the average-case rows need ``eps < 1/2``)."""
    from fractions import Fraction

    if isinstance(error, bool) or not isinstance(error, (int, float, Fraction, str)):
        raise InvalidParameterError(f"error must be a number in (0, 1/2), got {error!r}")
    try:
        value = Fraction(str(error))
    except (ValueError, ZeroDivisionError):
        raise InvalidParameterError(f"error must be a number in (0, 1/2), got {error!r}") from None
    if not 0 < value < Fraction(1, 2):
        raise InvalidParameterError(f"error must lie in (0, 1/2), got {error}")
    return error


def _summary(bound: Bound, value, min_width: int | None, lhs: str) -> str:
    if bound.formula is None:
        return bound.paper_form or bound.assumptions
    if value is None:
        return f"{bound.paper_form or bound.relation_text(lhs)} (asymptotic, constant unknown)"
    shown = value if isinstance(value, int) else f"{value:.4g}"
    if min_width is None:
        return f"{lhs} = {shown}"
    if bound.kind == "upper":
        return f"m = {min_width} suffices ({lhs} >= {shown})"
    return f"m >= {min_width} ({lhs} >= {shown})"


def compute_bounds(n_values: int | Iterable[int], precision: object, heads: int = 1,
                   task: str | Iterable[str] | None = None, arch: str | Iterable[str] | None = None, *,
                   layers: int | None = None, width: int | None = None, kind: str | None = None,
                   include_randomized: bool = True, include_variants: bool = False,
                   error: float | None = None, **hyper: object) -> list[BoundRow]:
    """Evaluate the catalogue for lengths, precision, heads, tasks and architectures.

    Parameters
    ----------
    n_values : int or iterable of int
        Lengths N (each >= 2).
    precision : int or str
        Bits per number, or a format name (``"float32"``, ``"fixed:16:8"``).
    heads : int
        Attention heads H (also the heads of RetNet / linear attention, which split their width).
    task, arch : str or iterable of str, optional
        Registry names or aliases; all when None.
    layers : int, optional
        Depth.  Recurrent architectures: layers whose states add up (default 1).  Transformer: 1 keeps
        the 1-layer lower bounds, >= 2 the 2-layer constructions; None shows every depth in the catalogue.
    width : int, optional
        A width to test: rows get ``crossover_n``.
    kind : {"lower", "upper"}, optional
    include_randomized, include_variants : bool
        Keep the randomized forms (at ``eps``, default 1/3); keep entries about other input formats or
        augmented models (index first, RAG, general alphabet).
    error : float, optional
        An error ε in (0, 1/2): adds the average-case rows (uniform inputs, :mod:`commcomp.bounds.average`)
        evaluated at ε, each with ``error = ε``; without it they are left out.
    **hyper
        Architecture hyper-parameters (``d_state``, ``d_conv``, ``expand``, ``complex_state``,
        ``value_factor``) and bound parameters (:data:`~commcomp.bounds.catalogue.PARAMETERS`: ``eps``,
        ``gamma``, ``delta``, ``attn_eps``, ``q``, ``dprime``, ``alphabet``, ``k``, ``dyck_types``,
        ``dyck_depth``, ``cc_bits``, ``n``).

    Returns
    -------
    list of BoundRow
        Ordered by N, task, architecture, depth, lower before upper.

    Raises
    ------
    InvalidParameterError
        N < 2 or N > 2^64 (:data:`MAX_BOUND_N`), p < 1, heads < 1, width < 1, or an unknown parameter.
    UnknownNameError
        Unknown task or architecture.
    """
    lengths = _positive_ints(n_values, "N", 2)
    for length in lengths:
        if length > MAX_BOUND_N:  # exact sympy evaluation of the catalogue slows past this (minutes at 10^30)
            raise InvalidParameterError(f"N = {length} is too large for the bound calculator: N <= 2^64")
    bits = precision_bits(precision)
    heads = _single_int(heads, "heads")
    width = None if width is None else _single_int(width, "width")
    layers = None if layers is None else _single_int(layers, "layers")
    if kind not in (None, "lower", "upper"):
        raise UnknownNameError(f"unknown kind {kind!r}; known: lower, upper")
    tasks = _names(task, resolve_task, TASKS)
    archs = _names(arch, lambda a: get_architecture(a).name, ARCHITECTURES)
    params = {k: v for k, v in hyper.items() if k in PARAMETERS}
    per_arch = _split_hyper({k: v for k, v in hyper.items() if k not in PARAMETERS})
    evaluator = _Evaluator(bits, heads, params)
    average = None if error is None else _Evaluator(bits, heads, {**params, "eps": _error_value(error)})
    for length in lengths:
        evaluator.subs(length)  # validates parameters before any work
        if average is not None:
            average.subs(length)
    rows: list[tuple[tuple, BoundRow]] = []
    for arch_index, arch_name in enumerate(archs):
        spec = ARCHITECTURES[arch_name]
        arch_hyper = dict(per_arch[arch_name])
        if "heads" in spec.hyper_names:
            arch_hyper["heads"] = heads
        if "layers" in spec.hyper_names and spec.arch_class != "transformer":
            arch_hyper["layers"] = layers or 1
        resolved = spec.resolve_hyper(**arch_hyper)
        is_transformer = spec.arch_class == "transformer"
        shown_params = ", ".join(f"{k}={v}" for k, v in resolved.items() if not (is_transformer and k == "layers"))
        for bound in BOUNDS:
            if bound.error_model and average is None:
                continue
            bound_eval = average if bound.error_model else evaluator
            if (bound.task not in tasks or bound.kind == "separation" or (kind and bound.kind != kind)
                    or (bound.randomized and not include_randomized and not bound.error_model)
                    or (bound.variant and not include_variants)
                    or not applies_to(bound, arch_name, layers if is_transformer else resolved.get("layers", 1))):
                continue
            if is_transformer:  # the row's depth: the one asked for, else the one the bound is stated for
                depth = layers if layers is not None else bound_layers(bound)
            else:
                depth = resolved.get("layers")
            lhs, lhs_latex = _lhs_cached(bound.quantity, arch_name, tuple(sorted(resolved.items())))
            formula_text, formula_latex = _relations(bound, lhs, lhs_latex)
            for n_index, length in enumerate(lengths):
                subs = bound_eval.subs(length)
                if not conditions_hold(bound, subs):
                    continue
                exact = bound_eval.value(bound, length)
                min_w, cap, log_coeff = _width_and_capacity(bound.quantity, exact, arch_name, resolved, bits,
                                                            heads, length, width)
                value = to_number(exact)
                row = BoundRow(
                    task=bound.task, problem=bound.problem, arch=arch_name, kind=bound.kind,
                    quantity=bound.quantity, value=value, formula=formula_text,
                    theorem=bound.id, assumptions=bound.assumptions, n=length, precision=bits, heads=heads,
                    layers=depth, min_width=min_w,
                    state_bits=value if bound.quantity == "state_bits" else None, width=width,
                    crossover_n=bound_eval.crossover(bound, cap, log_coeff), randomized=bound.randomized,
                    eps=float(subs[eps]) if bound.randomized else None, tag=bound.tag, label=bound.label,
                    paper=bound.paper, split=bound.split, arch_class=spec.arch_class,
                    arch_params=shown_params, summary=_summary(bound, value, min_w, lhs),
                    citation=bound.citation, paper_form=bound.paper_form,
                    formula_latex=formula_latex, n_means=bound.n_means,
                    evidence=bound.evidence, precision_model=bound.precision_model, cot=bound.cot,
                    width_means=width_means(arch_name),
                    error=float(subs[eps]) if bound.error_model else None,
                )
                key = (n_index, TASKS.index(bound.task), arch_index, depth or 0,
                       bound.kind != "lower", bound.randomized)
                rows.append((key, row))
    rows.sort(key=lambda item: item[0])  # stable: catalogue order within a key
    return [row for _, row in rows]
