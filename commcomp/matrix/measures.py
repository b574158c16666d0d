"""All exact measures of one matrix in one report, each certificate checked: what the CLI calls.

``measure(matrix, names)`` runs the measures named (default: all of :data:`MEASURES`), checks every
certificate with :func:`~commcomp.matrix.certificates.check_certificate`, and returns a frozen
:class:`MatrixReport`; ``report.to_json()`` has exactly the DESIGN §4 fields for ``matrix``.

Sizes: a measure asked for by name raises TooLargeError when none of its parts fits its limit;
with the default (every measure) the ones that do not fit are skipped, their fields are None and
``report.skipped`` says why; by default the solver's budget per call is also smaller
(``DEFAULT_RUN_CONFLICTS`` = 50 000 conflicts instead of ``solvers.MAX_CONFLICTS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Callable, Mapping

import numpy as np

from .build import as_matrix, problem_matrix
from .certificates import CertificateCheck, check_certificate
from .discrepancy import discrepancy
from .fooling import largest_fooling_set
from .gf2 import rank_gf2
from .protocol_tree import deterministic_cc
from .rectangles import cover_number_0, cover_number_1, partition_number_0, partition_number_1
from .rank import rank_rational
from .rows import distinct_rows
from ..errors import InvalidParameterError, TooLargeError, UnknownNameError

__all__ = ["MEASURES", "MatrixReport", "measure", "measure_problem", "measure_source", "JSON_FIELDS",
           "TABLE_FIELDS"]


class _MeasureGroup:
    """A registry entry: called on a matrix, runs its functions and returns their results.

    Parts beyond their size limit are left out (and noted in ``skipped``); when every part is, the
    first TooLargeError is raised.
    """

    def __init__(self, name: str, *functions: Callable):
        self.name = name
        self.functions = functions

    def __call__(self, matrix, *, methods: Mapping[str, str] | None = None,
                 skipped: dict | None = None, solver: str | None = "auto",
                 max_conflicts: int | None = None) -> tuple:
        m = as_matrix(matrix)
        methods = methods or {}
        out, errors = [], []
        for fn in self.functions:
            kwargs = {"method": methods[fn.__name__]} if fn.__name__ in methods else {}
            if fn in _TAKES_SOLVER:
                kwargs.update(solver=solver, max_conflicts=max_conflicts)
            if fn is deterministic_cc:  # D >= ceil(log2 χ) where the partition numbers ran
                parts = tuple(r for r in out if r.measure.startswith("partition_number_"))
                kwargs["partition"] = parts if len(parts) == 2 else ()
            try:
                out.append(fn(m, **kwargs))
            except TooLargeError as err:
                errors.append(err)
                if skipped is not None:
                    skipped[fn.__name__] = str(err)
        if not out:
            raise errors[0]
        return tuple(out)

    def __repr__(self) -> str:
        return f"<matrix measure {self.name}: {', '.join(f.__name__ for f in self.functions)}>"


_TAKES_SOLVER = (partition_number_1, partition_number_0, cover_number_1, cover_number_0)
# with no measures named (every one that fits), each solver call stops sooner: a default report
# should not spend minutes on one cover number (named explicitly, the full MAX_CONFLICTS applies)
DEFAULT_RUN_CONFLICTS = 50_000

# name (what users type) -> callable(matrix, *, methods=None) -> tuple of results with certificates
MEASURES: Mapping[str, _MeasureGroup] = MappingProxyType({
    "rows": _MeasureGroup("rows", distinct_rows),
    "rank": _MeasureGroup("rank", rank_rational, rank_gf2),
    "fooling": _MeasureGroup("fooling", largest_fooling_set),
    "partition": _MeasureGroup("partition", partition_number_1, partition_number_0, deterministic_cc),
    "cover": _MeasureGroup("cover", cover_number_1, cover_number_0),
    "discrepancy": _MeasureGroup("discrepancy", discrepancy),
})

@dataclass(frozen=True)
class MatrixReport:
    """Exact measures of one communication matrix; None where a measure was not run.

    ``labels`` says for each value what it is (exact, lower bound, upper bound); ``results`` holds
    the measure results with their certificates, ``checks`` the checker's verdicts, and
    ``certificates_checked`` is true when at least one certificate was checked and all held.
    """

    problem: str | None
    n: int | None
    rows: int
    cols: int
    distinct_rows: int | None = None
    one_way_bits: int | None = None
    rank_rational: int | None = None
    rank_gf2: int | None = None
    log_rank_bound: int | None = None
    fooling_set_size: int | None = None
    fooling_set: tuple[tuple[int, int], ...] | None = None
    fooling_value: bool | None = None
    partition_number: int | None = None
    partition_number_1: int | None = None
    partition_number_0: int | None = None
    cover_number_1: int | None = None
    cover_number_0: int | None = None
    nondeterministic_cc: int | None = None
    conondeterministic_cc: int | None = None
    deterministic_cc: int | None = None
    discrepancy: Mapping | None = None
    spectral_discrepancy_bound: float | None = None
    certificates_checked: bool = False
    labels: Mapping[str, str] = field(default_factory=dict)
    results: tuple = ()
    checks: tuple[CertificateCheck, ...] = ()
    skipped: Mapping[str, str] = field(default_factory=dict)

    def to_json(self, details: bool = False) -> dict:
        """The DESIGN §4 ``matrix`` fields, JSON-ready (fooling_set as [row, column] pairs); with
        ``details`` (``commcomp matrix --format json``) also ``labels``, the certificate ``checks``
        and what was ``skipped``.

        Examples
        --------
        >>> from commcomp.matrix import measure_problem
        >>> sorted(measure_problem("equality", 2, ["rows"]).to_json())[:4]
        ['certificates_checked', 'cols', 'conondeterministic_cc', 'cover_number_0']
        >>> measure_problem("equality", 2, ["rows"]).to_json(details=True)["checks"][0]["ok"]
        True
        """
        out = {name: getattr(self, name) for name in JSON_FIELDS}
        if self.discrepancy is not None:
            out["discrepancy"] = dict(self.discrepancy)
        if self.fooling_set is not None:
            out["fooling_set"] = [list(cell) for cell in self.fooling_set]
        if details:
            out["labels"] = dict(self.labels)
            out["checks"] = [{"measure": c.measure, "ok": c.ok, "status": c.status, "detail": c.detail}
                             for c in self.checks]
            out["skipped"] = dict(self.skipped)
        return out

    def table_rows(self) -> list[list]:
        """``[field, value, label]`` of each measured value, in :data:`TABLE_FIELDS` order.

        >>> from commcomp.matrix import measure_problem
        >>> measure_problem("equality", 2, ["rows"]).table_rows()[0]
        ['distinct_rows', 4, 'exact']
        """
        return [[name, getattr(self, name), self.labels.get(name, "")] for name in TABLE_FIELDS
                if getattr(self, name) is not None]


# the report's fields that to_json carries: every field but the in-memory ones, in field order
JSON_FIELDS = tuple(f.name for f in fields(MatrixReport)
                    if f.name not in ("fooling_value", "labels", "results", "checks", "skipped"))
#: the measures a table shows, in reading order: the lower bounds (rows, rank, fooling set), D(f),
#: then the partition and cover numbers and the nondeterministic complexities
TABLE_FIELDS = ("distinct_rows", "one_way_bits", "rank_rational", "rank_gf2", "log_rank_bound",
                "fooling_set_size", "deterministic_cc", "partition_number", "partition_number_1",
                "partition_number_0", "cover_number_1", "cover_number_0", "nondeterministic_cc",
                "conondeterministic_cc")


def measure(matrix, names=None, *, problem: str | None = None, n: int | None = None,
            check: bool = True, methods: Mapping[str, str] | None = None,
            solver: str | None = "auto") -> MatrixReport:
    """Run exact measures on a matrix and check their certificates.

    Parameters
    ----------
    matrix : (R, C) 0/1 array
    names : iterable of str, optional
        Keys of :data:`MEASURES` (``rows``, ``rank``, ``fooling``, ``partition``, ``cover``,
        ``discrepancy``); default all.
    problem, n : optional
        Recorded in the report (``to_json`` carries them).
    check : bool
        Verify every certificate (default True).
    methods : mapping, optional
        ``{function name: method}``, e.g. ``{"rank_rational": "bareiss", "largest_fooling_set":
        "greedy"}``.
    solver : str, optional
        For the partition and cover numbers: ``"auto"`` (default: the installed solver, else
        branch and bound), ``"search"`` (branch and bound) or a name in
        :data:`~commcomp.matrix.solvers.SOLVERS`.

    Returns
    -------
    MatrixReport

    Raises
    ------
    UnknownNameError
        For a name not in :data:`MEASURES`.
    TooLargeError
        For a measure asked for by name none of whose parts fits its size limit.

    Examples
    --------
    >>> from commcomp.matrix import problem_matrix
    >>> rep = measure(problem_matrix("equality", 3))
    >>> rep.rank_rational, rep.fooling_set_size, rep.deterministic_cc, rep.certificates_checked
    (8, 8, 4, True)
    """
    m = as_matrix(matrix)
    explicit = names is not None
    names = list(MEASURES) if names is None else [str(x) for x in names]
    for name in names:
        if name not in MEASURES:
            raise UnknownNameError(f"unknown matrix measure {name!r}; known: {', '.join(MEASURES)}")
    methods = dict(methods or {})
    values: dict = {}
    labels: dict[str, str] = {}
    results, skipped = [], {}
    for name in names:
        try:
            got = MEASURES[name](m, methods=methods, skipped=skipped, solver=solver,
                                 max_conflicts=None if explicit else DEFAULT_RUN_CONFLICTS)
        except TooLargeError:
            if explicit:
                raise
            continue
        for res in got:
            results.append(res)
            _record(res, values, labels)
    _combine(values, labels)
    checks = tuple(check_certificate(res, m) for res in results) if check else ()
    return MatrixReport(problem=problem, n=n, rows=m.shape[0], cols=m.shape[1], **values,
                        certificates_checked=bool(checks) and all(checks),
                        labels=MappingProxyType(labels), results=tuple(results), checks=checks,
                        skipped=MappingProxyType(skipped))


def _record(res, values: dict, labels: dict) -> None:
    kind = res.measure
    if kind == "rows":
        values.update(distinct_rows=res.distinct_rows, one_way_bits=res.one_way_bits)
        labels.update(distinct_rows="exact", one_way_bits=res.label)
    elif kind == "rank_rational":
        values.update(rank_rational=res.rank, log_rank_bound=res.log_rank_bound)
        labels.update(rank_rational=res.label,
                      log_rank_bound="lower bound on D(f): ceil(log2 rank over Q)")
    elif kind == "rank_gf2":
        values.update(rank_gf2=res.rank)
        labels.update(rank_gf2=res.label)
    elif kind == "fooling":
        values.update(fooling_set_size=res.size, fooling_set=res.cells, fooling_value=res.value)
        labels.update(fooling_set_size=res.label,
                      fooling_set=f"certificate; lower bound D(f) >= {res.lower_bound_bits}")
    elif kind == "deterministic_cc":
        values.update(deterministic_cc=res.deterministic_cc)
        labels.update(deterministic_cc=res.label)
    elif kind == "discrepancy":
        values.update(discrepancy=MappingProxyType(res.to_json()), spectral_discrepancy_bound=res.spectral_bound)
        labels.update(discrepancy=res.label, spectral_discrepancy_bound="upper bound: ||(-1)^M||_2 / sqrt(R C)")
    elif kind in ("partition_number_1", "partition_number_0", "cover_number_1", "cover_number_0"):
        values[kind] = res.value
        labels[kind] = res.label
        labels[kind + "_solver"] = res.solver
        if kind.startswith("cover"):
            field_name = "nondeterministic_cc" if res.colour else "conondeterministic_cc"
            values[field_name] = res.bits
            labels[field_name] = f"exact: ceil(log2 {kind})"


def _combine(values: dict, labels: dict) -> None:
    """χ = χ₁ + χ₀: a partition of M splits into one of its 1-cells and one of its 0-cells."""
    if values.get("partition_number_1") is not None and values.get("partition_number_0") is not None:
        values["partition_number"] = values["partition_number_1"] + values["partition_number_0"]
        labels["partition_number"] = (f"exact: partition_number_1 + partition_number_0 = "
                                      f"{values['partition_number_1']} + {values['partition_number_0']}")


def measure_problem(problem, n: int, measures=None, **kwargs) -> MatrixReport:
    """:func:`measure` on a registered problem's communication matrix at size n.

    Parameters
    ----------
    problem : str or Problem
        ``index``, ``equality``, ``disjointness``, ``inner-product``, ``greater-than`` (or an alias),
        or a problem object.
    n : int
    measures : iterable of str, optional
        Keys of :data:`MEASURES`; default all.
    **kwargs
        Passed to :func:`measure` (``check``, ``methods``).

    Examples
    --------
    >>> rep = measure_problem("index", 3)
    >>> rep.one_way_bits, rep.deterministic_cc, rep.rank_rational
    (3, 3, 3)
    """
    from ..problems import get_problem

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError(f"n must be an integer >= 1, got {n!r}")
    prob = get_problem(problem)
    return measure(problem_matrix(prob, int(n)), measures, problem=prob.name, n=int(n), **kwargs)


def measure_source(problem=None, n: int | None = None, matrix_file: str | None = None, *, measures=None,
                   solver: str | None = "auto", max_n: int = 14) -> MatrixReport:
    """``commcomp matrix``: :func:`measure_problem` on a problem at ``n``, or :func:`measure` on a
    0/1 matrix file (:func:`~commcomp.matrix.matrix_file.load_matrix`); exactly one of the two.

    ``max_n`` caps a problem's size (its matrix has 2^n x 2^n cells).

    >>> measure_source("equality", 2, measures=["rows"]).distinct_rows
    4
    >>> measure_source("equality", 20)
    Traceback (most recent call last):
    ...
    commcomp.errors.InvalidParameterError: matrix: n = 20 is too large for exact measures (limit n <= 14: the matrix has 2^n x 2^n cells)
    """
    from ..problems import get_problem
    from .matrix_file import load_matrix

    if (matrix_file is None) == (problem is None):
        raise InvalidParameterError("matrix: give a problem with --n, or --matrix FILE (not both)")
    if matrix_file is not None:
        if n is not None:
            raise InvalidParameterError("matrix: --n sets a problem's size; a --matrix FILE has its own: leave --n out")
        return measure(load_matrix(matrix_file), measures, solver=solver)
    problem = get_problem(problem)
    if n is None:
        raise InvalidParameterError("matrix: a problem needs --n")
    if n < 1:
        raise InvalidParameterError(f"matrix: n must be >= 1, got {n}")
    if n > max_n:
        raise InvalidParameterError(f"matrix: n = {n} is too large for exact measures (limit n <= "
                                    f"{max_n}: the matrix has 2^n x 2^n cells)")
    return measure_problem(problem, n, measures=measures, solver=solver)
