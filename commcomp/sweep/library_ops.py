"""The sweep operations that wrap :mod:`commcomp`'s own library functions (registered in
:mod:`commcomp.sweep.operations`; those that run reductions are in :mod:`reductions.operations`).

Each wrapper takes one grid point's parameters and its derived seed and returns the fields of the
matching command's JSON (DESIGN §4).
"""

from __future__ import annotations

import inspect

from commcomp.bounds import compute_bounds
from commcomp.jsonable import jsonable
from commcomp.matrix import measure_problem
from commcomp.matrix.measures import measure


BOUNDS_REQUIRED = ("n", "precision")


def _keywords(function, *, drop=()) -> set:
    """The named parameters of ``function`` (not ``*args``/``**kwargs``), less ``drop``: read from its signature."""
    params = inspect.signature(function).parameters.values()
    return {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)} - set(drop)


def BOUNDS_ACCEPTED() -> tuple:  # noqa: N802 - a lazily computed constant
    """compute_bounds' keywords (read from its signature), the wrapper's ``problem_n``, every architecture
    hyper-parameter (its ``**hyper``) and every bound parameter but ``n``."""
    from commcomp.architectures import ARCHITECTURES
    from commcomp.bounds.catalogue import PARAMETERS

    hyper = {h for spec in ARCHITECTURES.values() for h in spec.hyper_names}
    named = _keywords(compute_bounds, drop=("n_values", "precision"))
    return tuple(sorted(named | {"problem_n"} | hyper | (set(PARAMETERS) - {"n"})))


MATRIX_REQUIRED = ("problem", "n")


def MATRIX_ACCEPTED() -> tuple:  # noqa: N802 - a lazily computed constant
    """measure_problem's ``measures`` and the keywords its ``**kwargs`` hand on to :func:`measure`
    (read from the signatures; ``problem`` and ``n`` are the point's own)."""
    named = _keywords(measure_problem, drop=("problem", "n")) | _keywords(measure, drop=("matrix", "names", "problem", "n"))
    return tuple(sorted(named))


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
    rows = [jsonable(r) for r in compute_bounds(n_values, precision, **kwargs)]
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
    report = measure_problem(kwargs.pop("problem"), kwargs.pop("n"), **kwargs)
    return report.to_json() if hasattr(report, "to_json") else report
