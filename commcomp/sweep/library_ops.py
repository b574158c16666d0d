"""The sweep operations that wrap :mod:`commcomp`'s own library functions (registered in
:mod:`commcomp.sweep.operations`; those that run reductions are in :mod:`reductions.operations`).

Each wrapper takes one grid point's parameters and its derived seed and returns the fields of the
matching command's JSON (DESIGN §4).
"""

from __future__ import annotations

from commcomp.bounds import compute_bounds
from commcomp.jsonable import jsonable
from commcomp.matrix import measure_problem


BOUNDS_REQUIRED = ("n", "precision")


def BOUNDS_ACCEPTED() -> tuple:  # noqa: N802 - a lazily computed constant
    """compute_bounds' keywords, every architecture hyper-parameter and every bound parameter."""
    from commcomp.architectures import ARCHITECTURES
    from commcomp.bounds.catalogue import PARAMETERS

    hyper = {h for spec in ARCHITECTURES.values() for h in spec.hyper_names}
    return tuple(sorted({"heads", "task", "arch", "layers", "width", "kind", "include_randomized",
                         "include_variants", "problem_n"} | hyper | (set(PARAMETERS) - {"n"})))


MATRIX_REQUIRED = ("problem", "n")
# measure_problem takes **kwargs and hands them on: the names it reads, stated here
MATRIX_ACCEPTED = ("measures", "check", "methods")


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
