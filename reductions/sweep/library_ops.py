"""The sweep operations that wrap library functions (registered in :mod:`reductions.sweep.operations`).

Each wrapper takes one grid point's parameters and its derived seed, imports its library function lazily
(in the worker process), and returns the fields of the matching command's JSON (DESIGN §4).
"""

from __future__ import annotations

import importlib

from commcomp.errors import CommcompError

from .jsonable import jsonable


class OperationUnavailableError(CommcompError):
    """The library function an operation wraps is not importable (not written yet, or an extra missing)."""


def call(target: str, *args, **kwargs):
    """Import ``"module:function"`` and call it (an :class:`OperationUnavailableError` when it is missing)."""
    module, _, attr = target.partition(":")
    try:
        function = importlib.import_module(module)
        for part in attr.split("."):
            function = getattr(function, part)
    except (ImportError, AttributeError) as exc:
        raise OperationUnavailableError(f"{module}.{attr} is not available: {exc}") from None
    return function(*args, **kwargs)

# "module:function" each operation wraps; Operation.availability() imports them.
VERIFY = "reductions.simulate:verify"
WITNESS = "reductions.search.witness:find_witness"
CONSTRUCT = "reductions.search.construction:minimal_width"
BOUNDS = "commcomp.bounds:compute_bounds"
MATRIX = "commcomp.matrix:measure_problem"

VERIFY_REQUIRED = ("task", "arch")
VERIFY_ACCEPTED = ("n", "precision", "width", "layers", "heads", "problem", "weights", "instances", "exhaustive",
                   "cot", "method", "rows", "max_states", "max_bytes", "backend")
WITNESS_REQUIRED = ("task", "arch")
WITNESS_ACCEPTED = ("n", "precision", "width", "layers", "heads", "problem", "weights", "budget", "cot", "method",
                    "max_states", "max_bytes", "backend")
REACHABLE = "reductions.search.reachable.api:reachable_analysis"
REACHABLE_REQUIRED = ("task", "arch")
REACHABLE_ACCEPTED = ("n", "precision", "width", "layers", "heads", "problem", "weights", "max_states", "max_bytes")
CONSTRUCT_REQUIRED = ("task",)
CONSTRUCT_ACCEPTED = None  # minimal_width's keywords plus each construction's own options (k, gamma, ...)
BOUNDS_REQUIRED = ("n", "precision")


def BOUNDS_ACCEPTED() -> tuple:  # noqa: N802 - a lazily computed constant
    """compute_bounds' keywords, every architecture hyper-parameter and every bound parameter."""
    from commcomp.architectures import ARCHITECTURES
    from commcomp.bounds.catalogue import PARAMETERS

    hyper = {h for spec in ARCHITECTURES.values() for h in spec.hyper_names}
    return tuple(sorted({"heads", "task", "arch", "layers", "width", "kind", "include_randomized",
                         "include_variants", "problem_n"} | hyper | (set(PARAMETERS) - {"n"})))
MATRIX_REQUIRED = ("problem", "n")
MATRIX_ACCEPTED = ("measures", "check", "methods")


def verify(params: dict, seed: int) -> dict:
    """``reductions.simulate.verify(**params, seed=seed)``: the ``verify`` JSON (``faithful`` and ``correct``
    are fractions of the instances)."""
    return call(VERIFY, **params, seed=seed)


def witness(params: dict, seed: int) -> dict:
    """``reductions.search.witness.find_witness(**params, seed=seed)``: the ``witness`` JSON."""
    return call(WITNESS, **params, seed=seed)


def reachable(params: dict, seed: int) -> dict:
    """``reductions.search.reachable.api.reachable_analysis(**params, seed=seed)``: distinct messages per level,
    the complete witness search (flattened to ``witness_found``, ``witness_complete``), faithfulness and
    the exact correctness count over all inputs; ``complete``/``stopped`` say where the budget ended it."""
    out = dict(call(REACHABLE, **params, seed=seed))
    w = out.get("witness") or {}
    out["witness_found"], out["witness_complete"] = w.get("found"), w.get("complete")
    return out


def construct(params: dict, seed: int) -> dict:
    """``reductions.search.construction.minimal_width(**params, seed=seed)``: the construction's minimal width
    (``min_width``) and fixed-point bits (``min_precision_bits``) at size ``n``, with the calculator's
    ``lower_bound_width`` beside them. Keywords: ``task, arch, n, precision, layers, max_width,
    instances, search_precision`` and the construction's own options."""
    return call(CONSTRUCT, **params, seed=seed)


def bounds(params: dict, seed: int) -> dict:
    """The calculator at one point: every row, and headline fields when the point names one task and arch.

    ``n`` is the input length N; the embedded problem's size (the calculator's own ``n``) is ``problem_n``.
    Headline fields (None when the rows span several tasks or architectures, or none applies):
    ``lower_bound_width`` (the largest width a lower-bound row implies), ``lower_bound_theorem``,
    ``lower_bound_state_bits`` (the largest state-bit bound), ``construction_width`` (the smallest width a
    construction row uses), ``construction_theorem``.
    """
    kwargs = dict(params)
    n_values, precision = kwargs.pop("n"), kwargs.pop("precision")
    if "problem_n" in kwargs:
        kwargs["n"] = kwargs.pop("problem_n")
    rows = [jsonable(r) for r in call(BOUNDS, n_values, precision, **kwargs)]
    out = {"rows": rows, "rows_count": len(rows), "lower_bound_width": None, "lower_bound_theorem": None,
           "lower_bound_state_bits": None, "construction_width": None, "construction_theorem": None}
    if len({(r["task"], r["arch"], r["n"]) for r in rows}) != 1:
        return out
    lower = [r for r in rows if r["kind"] == "lower" and r["min_width"] is not None]
    if lower:
        best = max(lower, key=lambda r: r["min_width"])
        out.update(lower_bound_width=best["min_width"], lower_bound_theorem=best["theorem"])
    bits = [r["state_bits"] for r in rows if r["kind"] == "lower" and isinstance(r["state_bits"], (int, float))]
    if bits:
        out["lower_bound_state_bits"] = max(bits)
    upper = [r for r in rows if r["kind"] == "upper" and r["min_width"] is not None]
    if upper:
        best = min(upper, key=lambda r: r["min_width"])
        out.update(construction_width=best["min_width"], construction_theorem=best["theorem"])
    return out


def matrix(params: dict, seed: int) -> dict:
    """``commcomp.matrix.measure_problem(problem, n, measures, check=, methods=).to_json()``: the ``matrix``
    JSON. ``measures`` is a list of measure names or one comma-separated string (default: all)."""
    kwargs = dict(params)
    if isinstance(kwargs.get("measures"), str):
        kwargs["measures"] = [m.strip() for m in kwargs["measures"].split(",") if m.strip()]
    report = call(MATRIX, kwargs.pop("problem"), kwargs.pop("n"), **kwargs)
    return report.to_json() if hasattr(report, "to_json") else report
