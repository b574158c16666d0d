"""The whole catalogue, lookups, and exact evaluation of one bound.

Examples
--------
>>> get_bound("BHBK-Dyck-1TF").tag
'[S][P]'
>>> round(evaluate_bound("BHBK-Dyck-1TF", N=400, p=16), 2)
5.4
>>> [b.id for b in list_bounds(task="index-lookup", arch="transformer")]
['BHBK-IL-1TF']
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Real

import sympy as sp

from commcomp.architectures import get_architecture
from commcomp.bounds.average import AVERAGE_BOUNDS
from commcomp.bounds.bhbk import BHBK_BOUNDS
from commcomp.bounds.commcomp_derived import COMMCOMP_BOUNDS
from commcomp.bounds.commcomp_protocols import COMMCOMP_PROTOCOL_BOUNDS
from commcomp.bounds.exact_round import with_numeric_ceilings
from commcomp.bounds.newer import NEWER_BOUNDS
from commcomp.bounds.records import (
    KINDS, PAPERS, Bound, C, H, N, attn_eps, delta, depth, dprime, eps, gamma, k, k_lit, n, p, q, resolve_task,
    sigma,
    text, types,
)
from commcomp.bounds.sht import SHT_BOUNDS
from commcomp.bounds.standard import STANDARD_BOUNDS
from commcomp.bounds.wdl import WDL_BOUNDS
from commcomp.errors import InvalidParameterError, UnknownNameError

__all__ = ["BOUNDS", "PARAMETERS", "applies_to", "bound_layers", "evaluate_bound", "get_bound",
           "list_bounds", "parse_parameter_texts", "substitutions", "theorem_rows", "value_of"]

#: Every catalogue entry, by paper: BHBK, SHT, WDL, commcomp's own, standard CC facts, then the
#: average-case rows (:mod:`commcomp.bounds.average`).
BOUNDS: tuple[Bound, ...] = (BHBK_BOUNDS + SHT_BOUNDS + WDL_BOUNDS + COMMCOMP_BOUNDS + COMMCOMP_PROTOCOL_BOUNDS
                             + STANDARD_BOUNDS + NEWER_BOUNDS + AVERAGE_BOUNDS)
_BY_ID = {b.id: b for b in BOUNDS}
if len(_BY_ID) != len(BOUNDS):  # pragma: no cover - a catalogue bug, caught at import
    raise RuntimeError("duplicate bound ids in the catalogue")

#: Optional parameters: keyword -> (symbol, default).  N, p and H are passed on their own.
PARAMETERS: dict[str, tuple[sp.Symbol, object]] = {
    "eps": (eps, sp.Rational(1, 3)),        # error probability of randomized models
    "gamma": (gamma, sp.Rational(1, 2)),    # JL off-diagonal bound (C1)
    "delta": (delta, sp.Rational(1, 2)),    # JL failure probability (C1)
    "attn_eps": (attn_eps, sp.Rational(1, 4)),  # attention mass off the target (C2 temperature)
    "q": (q, 3),                            # qSA sparsity
    "dprime": (dprime, 1),                  # qSA value dimension d'
    "alphabet": (sigma, 2),                 # alphabet size |Sigma|
    "k": (k, None),                         # Multi-Index Lookup indices (default floor(N/2))
    "dyck_types": (types, 2),               # Dyck bracket types
    "dyck_depth": (depth, 2),               # Dyck depth bound
    "dnf_k": (k_lit, 3),                    # literals per term of a k-DNF
    "cc_bits": (C, None),                   # communication complexity C for the general BHBK-Bool-LB rows
    "n": (n, None),                         # problem size; default from N through each reduction
}
_INTEGER_PARAMS = {"q", "dprime", "alphabet", "k", "dyck_types", "dyck_depth", "dnf_k", "cc_bits", "n"}


def get_bound(bound_id: str) -> Bound:
    """The catalogue entry with this id.

    Raises
    ------
    UnknownNameError
        If no entry has this id (the message lists near ids).
    """
    if isinstance(bound_id, Bound):
        return bound_id
    try:
        return _BY_ID[bound_id]
    except (KeyError, TypeError):
        near = [i for i in _BY_ID if isinstance(bound_id, str) and i.lower().startswith(bound_id.lower()[:6])]
        hint = f"; did you mean {', '.join(near[:6])}?" if near else ""
        raise UnknownNameError(f"unknown theorem id {bound_id!r}{hint}") from None


def bound_layers(bound: Bound) -> int | None:
    """Depth a bound is stated for: 1 or 2 for Transformer entries, ``bound.layers`` otherwise (None: any)."""
    return {"transformer-1layer": 1, "transformer-2layer": 2}.get(bound.arch_class, bound.layers)


def applies_to(bound: Bound, arch: str, layers: int | None = None) -> bool:
    """Whether ``bound`` covers architecture ``arch`` at depth ``layers`` (None: any depth).

    A 1-layer lower bound binds only 1-layer Transformers; a construction with L layers also works with
    more (identity layers).  Recurrent bounds cover every recurrent architecture at any depth.

    Examples
    --------
    >>> b = get_bound("BHBK-Dyck-1TF")
    >>> applies_to(b, "transformer", 1), applies_to(b, "transformer", 2), applies_to(b, "lstm")
    (True, False, False)
    """
    spec = get_architecture(arch)
    if bound.archs and spec.name not in bound.archs:
        return False
    if spec.arch_class != "transformer":
        if bound.layers is not None and layers is not None:  # a depth-specific recurrent entry
            if (layers != bound.layers) if bound.kind == "lower" else (layers < bound.layers):
                return False
        return bound.arch_class == spec.arch_class
    if bound.arch_class == "transformer":
        return True
    depth_of = bound_layers(bound)
    if depth_of is None:
        return False
    if layers is None:
        return True
    return layers == depth_of if bound.kind == "lower" else layers >= depth_of


def parse_parameter_texts(items) -> dict:
    """``NAME=VALUE`` texts (``bounds --param``) as bound parameters: a value with ``.`` or ``e`` is a
    float, any other an integer.

    >>> parse_parameter_texts(["eps=0.1", "k=3"])
    {'eps': 0.1, 'k': 3}
    >>> parse_parameter_texts(["q"])
    Traceback (most recent call last):
    ...
    commcomp.errors.InvalidParameterError: bounds: --param expects NAME=VALUE, got 'q'
    """
    params = {}
    for item in items or ():
        if "=" not in item:
            raise InvalidParameterError(f"bounds: --param expects NAME=VALUE, got {item!r}")
        name, value = item.split("=", 1)
        try:
            params[name.strip()] = float(value) if any(c in value for c in ".e") else int(value)
        except ValueError:
            raise InvalidParameterError(f"bounds: --param {name} needs a number, got {value!r}") from None
    return params


def theorem_rows() -> list[dict]:
    """One dict per catalogue entry, in catalogue order (``commcomp list theorems``).

    >>> theorem_rows()[0]["id"] == BOUNDS[0].id
    True
    """
    return [{"id": b.id, "paper": b.paper, "task": b.task or "-", "arch_class": b.arch_class, "kind": b.kind,
             "quantity": b.quantity, "formula": str(b.formula) if b.formula is not None else "-",
             "tag": "".join(b.tags), "label": b.label} for b in BOUNDS]


def list_bounds(task: str | None = None, arch: str | None = None, kind: str | None = None,
                paper: str | None = None, layers: int | None = None, ref: str | None = None) -> list[Bound]:
    """Catalogue entries matching every filter given.

    Parameters
    ----------
    task, arch : str, optional
        Registry names or aliases; ``arch`` keeps the entries that cover it (see :func:`applies_to`).
    kind : {"lower", "upper", "separation"}, optional
    paper : {"BHBK", "SHT", "WDL", "commcomp", "standard"}, optional
    layers : int, optional
        Transformer depth, used with ``arch``.
    ref : str, optional
        A reference row id; keeps the entries implementing it (``BHBK-Bool-LB`` -> three entries).
    """
    if kind is not None and kind not in KINDS:
        raise UnknownNameError(f"unknown kind {kind!r}; known: {', '.join(KINDS)}")
    if paper is not None and paper not in PAPERS:
        raise UnknownNameError(f"unknown paper {paper!r}; known: {', '.join(PAPERS)}")
    task = resolve_task(task) if task is not None else None
    out = []
    for bound in BOUNDS:
        if task is not None and bound.task != task:
            continue
        if kind is not None and bound.kind != kind:
            continue
        if paper is not None and bound.paper != paper:
            continue
        if ref is not None and ref not in (bound.id, bound.ref_id):
            continue
        if arch is not None and not applies_to(bound, arch, layers):
            continue
        out.append(bound)
    return out


def _exact(value: object, name: str, integer: bool) -> sp.Expr:
    if isinstance(value, bool) or not isinstance(value, (Real, Fraction, sp.Basic, str)):
        raise InvalidParameterError(f"{name} must be a number, got {value!r}")
    try:
        if isinstance(value, sp.Rational):  # already exact (the defaults): nsimplify would return it
            exact = value
        elif isinstance(value, int):
            exact = sp.Integer(value)
        else:
            exact = sp.Rational(Fraction(str(value)).limit_denominator(10**12)) if not isinstance(
                value, sp.Basic) else sp.nsimplify(value)
    except (ValueError, TypeError, ZeroDivisionError):
        raise InvalidParameterError(f"{name} must be a number, got {value!r}") from None
    if integer and not exact.is_Integer:
        raise InvalidParameterError(f"{name} must be an integer, got {value!r}")
    if exact <= 0:
        raise InvalidParameterError(f"{name} must be positive, got {value!r}")
    return exact


def substitutions(N_value: int | None, p_value: int | None = None, heads: int = 1, **params: object) -> dict:
    """Symbol -> exact value for N, p, H and the optional :data:`PARAMETERS` (defaults filled in).

    Raises
    ------
    InvalidParameterError
        For an unknown parameter or an out-of-range value (N < 2, p < 1, heads < 1, eps outside (0, 1/2]...).
    """
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise InvalidParameterError(f"unknown bound parameter {', '.join(unknown)}; known: "
                                    f"{', '.join(PARAMETERS)}")
    subs: dict = {H: _exact(heads, "heads", True)}
    if N_value is not None:
        subs[N] = _exact(N_value, "N", True)
        if subs[N] < 2:
            raise InvalidParameterError(f"N must be >= 2, got {N_value}")
    if p_value is not None:
        subs[p] = _exact(p_value, "precision p", True)
    for name, (symbol, default) in PARAMETERS.items():
        value = params.get(name)
        value = default if value is None else value
        if value is not None:
            subs[symbol] = _exact(value, name, name in _INTEGER_PARAMS)
    for name in ("eps", "gamma", "delta", "attn_eps"):
        if subs[PARAMETERS[name][0]] >= 1:
            raise InvalidParameterError(f"{name} must lie in (0, 1), got {params.get(name)}")
    return subs


def value_of(bound: Bound, subs: dict) -> sp.Expr | None:
    """Exact value of ``bound`` under ``subs`` (None if it has no formula or an unknown constant).

    Raises
    ------
    InvalidParameterError
        If a symbol the formula needs has no value (e.g. ``p``, or ``cc_bits`` for the general rows).
    """
    if bound.formula is None or bound.asymptotic:
        return None
    formula = _FORMULAS.get(bound.id)
    if formula is None:
        formula = _FORMULAS[bound.id] = with_numeric_ceilings(bound.formula)
    value = formula.xreplace(_local_values(bound, subs)).doit()
    missing = sorted(str(s) for s in value.free_symbols)
    if missing:
        raise InvalidParameterError(f"{bound.id} needs a value for {', '.join(missing)}")
    return value


def failed_conditions(bound: Bound, subs: dict) -> list[str]:
    """The conditions of ``bound`` that fail under ``subs``, as text (conditions on missing symbols pass)."""
    local = _local_values(bound, subs)
    failed = []
    for cond in bound.conditions:
        held = cond.xreplace(local)
        if not held.free_symbols and not bool(held):
            failed.append(text(cond))
    return failed


# The definitions and the formula of each bound, sympified once (a bound's id is unique in the
# catalogue), their ceilings evaluated by NumericCeiling (the same integers, exact_round.py).
_DEFINITIONS: dict[str, tuple] = {}
_FORMULAS: dict[str, sp.Expr] = {}


def _local_values(bound: Bound, subs: dict) -> dict:
    """``subs`` (symbol -> exact value) plus the bound's definitions evaluated in order.

    Symbol-for-number replacement by ``xreplace`` (one pass, the expression rebuilt and evaluated),
    not ``subs`` (which sympifies, sorts and tries pattern matches for every key): the same exact
    values (``tests/bounds/test_bounds_catalogue_values.py`` compares both over the catalogue),
    about ten times faster, which the separations' crossover searches (a thousand evaluations) need.
    """
    key = (bound.id, tuple(subs.items()))
    local = _LOCALS.get(key)
    if local is not None:  # a row asks twice: its conditions, then its value
        return local
    definitions = _DEFINITIONS.get(bound.id)
    if definitions is None:
        definitions = _DEFINITIONS[bound.id] = tuple((symbol, with_numeric_ceilings(sp.sympify(d)))
                                                     for symbol, d in bound.definitions)
    local = {symbol: sp.sympify(value) for symbol, value in subs.items()}
    for symbol, definition in definitions:
        if symbol not in subs:  # a user-given value (e.g. k) wins over the definition
            local[symbol] = definition.xreplace(local).doit()
    if len(_LOCALS) >= _LOCALS_MAX:
        _LOCALS.clear()
    _LOCALS[key] = local
    return local


# The local values of the last (bound, substitutions) pairs: the same dict for the same pair (read
# only), so a row's conditions and value evaluate the definitions once.
_LOCALS: dict[tuple, dict] = {}
_LOCALS_MAX = 4096


def conditions_hold(bound: Bound, subs: dict) -> bool:
    """Whether every condition of ``bound`` holds under ``subs``."""
    return not failed_conditions(bound, subs)


def to_number(value: sp.Expr | None) -> int | float | None:
    """A sympy value as a Python int (when integral) or float."""
    if value is None:
        return None
    if value.is_Integer:
        return int(value)
    return float(value.evalf(30))


def evaluate_bound(bound: str | Bound, N: int | None = None, p: int | None = None, heads: int = 1, *,
                   exact: bool = False, **params: object):
    """Evaluate one catalogue formula: the right-hand side at these values.

    Returns
    -------
    int, float, sympy.Expr or None
        None for statements and asymptotic bounds (unknown constant); exact sympy value if ``exact``.

    Raises
    ------
    InvalidParameterError
        Bad parameters, a missing value, or a condition of the bound that fails (e.g. N < 2q + 1).

    Examples
    --------
    >>> evaluate_bound("BHBK-JL", N=400, gamma=0.25)
    406
    >>> round(evaluate_bound("COMMCOMP-C2-beta", N=8192, gamma=0.5), 2)
    20.22
    >>> evaluate_bound("CC-EQ-pub", n=1000, eps=0.25)   # public-coin equality: k + 1 bits, 2^-k < eps
    4
    """
    bound = get_bound(bound)
    subs = substitutions(N, p, heads, **params)
    failed = failed_conditions(bound, subs)
    if failed:
        raise InvalidParameterError(f"{bound.id} does not apply here: it needs {', '.join(failed)}")
    value = value_of(bound, subs)
    return value if exact else to_number(value)
