"""One small interface to exact solvers: can the 1-cells of a 0/1 matrix be covered (or partitioned)
by k all-ones rectangles?

``find_rectangles(ones, k, exact=..., fixed=..., solver=...)`` answers with k rectangles (row and
column index tuples, some possibly empty) or None when there are none. The question is encoded once,
as CNF, and handed to the backend named:

* ``"cadical"``: CaDiCaL 1.9.5 through PySAT (extra ``solver``: ``python-sat``); the default, chosen
  by ``benchmarks/bench_matrix.py --solvers`` (note in the closing note);
* ``"cpsat"``: OR-Tools CP-SAT, one worker, fixed seed (deterministic);
* ``"z3"``: z3's SAT core on the same clauses.

Encoding (variables numbered from 1): ``row[t, i]`` (row i is in rectangle t) and ``col[t, j]``,
for t < k. A 0-cell (i, j) is in no rectangle: ``-row[t,i] v -col[t,j]`` for every t. A 1-cell gets
``in[t, i, j] <-> row[t,i] & col[t,j]`` and ``in[0] v ... v in[k-1]``; for a partition also
``-in[t] v -in[u]`` for every t < u (at most one rectangle holds it). Symmetry breaking: the
rectangles are interchangeable, and no rectangle holds two cells of a fooling set, so the caller's
fooling cells (``fixed``) go into rectangles 0, 1, ... in order (unit clauses); the remaining
rectangles are ordered by the first row they use (``row[t, i] -> OR_{i' <= i} row[t-1, i']``).

``SOLVERS`` lists the backends and ``available_solvers()`` those importable here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ..errors import InvalidParameterError, TooLargeError, UnknownNameError

__all__ = ["SOLVERS", "DEFAULT_SOLVER", "MAX_CONFLICTS", "SolverBackend", "available_solvers", "pick_solver",
           "rectangle_cnf", "find_rectangles"]

DEFAULT_SOLVER = "cadical"
MAX_CONFLICTS = 300_000  # per solver call (seconds, not minutes); past it, TooLargeError


@dataclass(frozen=True)
class SolverBackend:
    """A SAT backend: ``solve(clauses, nvars, max_conflicts, proof)`` returns the set of true
    variables (or None: UNSAT) and, when asked and UNSAT, the DRAT proof lines (else None); past
    the conflict budget it raises TooLargeError."""

    name: str
    description: str  # what the result reports as the solver that ran
    package: str  # the pip distribution that provides it
    module: str  # importable when installed
    solve: Callable  # (clauses, nvars, budget, proof) -> (true variables or None, proof or None)
    gives_proof: bool = False  # can hand back a DRAT proof of unsatisfiability

    def available(self) -> bool:
        import importlib.util

        return importlib.util.find_spec(self.module) is not None


def _over_budget(name: str, budget: int):
    return TooLargeError(f"{name} passed its budget of {budget} conflicts (MAX_CONFLICTS)")


def _solve_pysat(clauses, nvars, budget, proof=False):
    from pysat.solvers import Solver

    with Solver(name="cadical195", bootstrap_with=clauses, with_proof=proof) as s:
        s.conf_budget(budget)
        answer = s.solve_limited()
        if answer is None:
            raise _over_budget("CaDiCaL", budget)
        if answer:
            return {v for v in s.get_model() if v > 0}, None
        return None, (list(s.get_proof()) if proof else None)


def _solve_cpsat(clauses, nvars, budget, proof=False):
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = [None] + [model.NewBoolVar(f"v{v}") for v in range(1, nvars + 1)]
    for cl in clauses:
        model.AddBoolOr([x[v] if v > 0 else x[-v].Not() for v in cl])
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_number_of_conflicts = budget
    status = solver.Solve(model)
    if status == cp_model.INFEASIBLE:
        return None, None
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise _over_budget("CP-SAT", budget)
    return {v for v in range(1, nvars + 1) if solver.BooleanValue(x[v])}, None


def _solve_z3(clauses, nvars, budget, proof=False):
    import z3

    x = [None] + [z3.Bool(f"v{v}") for v in range(1, nvars + 1)]
    s = z3.SolverFor("QF_FD")
    s.set("random_seed", 0)
    s.set("max_conflicts", budget)
    for cl in clauses:
        s.add(z3.Or([x[v] if v > 0 else z3.Not(x[-v]) for v in cl]))
    res = s.check()
    if res == z3.unsat:
        return None, None
    if res != z3.sat:
        raise _over_budget("z3", budget)
    model = s.model()
    return {v for v in range(1, nvars + 1) if z3.is_true(model.eval(x[v], model_completion=True))}, None


SOLVERS: Mapping[str, SolverBackend] = {
    "cadical": SolverBackend("cadical", "PySAT CaDiCaL 1.9.5", "python-sat", "pysat", _solve_pysat,
                             gives_proof=True),
    "cpsat": SolverBackend("cpsat", "OR-Tools CP-SAT (1 worker)", "ortools", "ortools", _solve_cpsat),
    "z3": SolverBackend("z3", "z3 (QF_FD)", "z3-solver", "z3", _solve_z3),
}


def available_solvers() -> list[str]:
    """Names of the backends whose package is installed, the default first.

    Examples
    --------
    >>> set(available_solvers()) <= set(SOLVERS)
    True
    """
    names = [n for n in SOLVERS if SOLVERS[n].available()]
    return sorted(names, key=lambda n: n != DEFAULT_SOLVER)


def pick_solver(solver: str | None) -> str | None:
    """The backend to use: ``"auto"``/None -> the first available (None when none is installed:
    the callers fall back to branch and bound); ``"search"`` -> None; a name -> that name."""
    if solver in (None, "auto"):
        names = available_solvers()
        return names[0] if names else None
    if solver == "search":
        return None
    if solver not in SOLVERS:
        raise UnknownNameError(f"unknown solver {solver!r}; known: auto, search, {', '.join(SOLVERS)}")
    if not SOLVERS[solver].available():
        raise InvalidParameterError(f"solver {solver!r} needs the package {SOLVERS[solver].package} "
                                    f"(pip install 'commcomp[solver]')")
    return solver


def rectangle_cnf(ones: np.ndarray, k: int, *, exact: bool, fixed: Sequence[tuple[int, int]] = (),
                  maximal: bool = True):
    """The CNF (clauses, nvars, row variable table, column variable table) described above.

    Examples
    --------
    >>> import numpy as np
    >>> clauses, nvars, rv, cv = rectangle_cnf(np.eye(2, dtype=bool), 1, exact=True)
    >>> nvars, rv.shape, cv.shape
    (6, (1, 2), (1, 2))
    """
    r, c = ones.shape
    row_var = np.arange(1, k * r + 1).reshape(k, r)  # (k, R)
    col_var = np.arange(k * r + 1, k * (r + c) + 1).reshape(k, c)  # (k, C)
    nvars = k * (r + c)
    clauses: list[list[int]] = []
    for t, (i, j) in enumerate(fixed[:k]):
        clauses += [[int(row_var[t, i])], [int(col_var[t, j])]]
    zi, zj = np.nonzero(~ones)
    for t in range(k):
        clauses += [[-int(a), -int(b)] for a, b in zip(row_var[t, zi], col_var[t, zj])]
    for i, j in zip(*np.nonzero(ones)):
        ins = list(range(nvars + 1, nvars + k + 1))
        nvars += k
        for t, v in enumerate(ins):
            a, b = int(row_var[t, i]), int(col_var[t, j])
            clauses += [[-v, a], [-v, b], [v, -a, -b]]
        clauses.append(ins)
        if exact:
            clauses += [[-ins[t], -ins[u]] for t in range(k) for u in range(t + 1, k)]
    if not exact and maximal:  # a cover may use maximal rectangles only (enlarging one keeps it a cover)
        for t in range(k):
            for i in range(r):  # row i out of rectangle t: a column of t has a 0 in row i
                clauses.append([int(row_var[t, i])] + [int(col_var[t, j]) for j in np.flatnonzero(~ones[i])])
            for j in range(c):
                clauses.append([int(col_var[t, j])] + [int(row_var[t, i]) for i in np.flatnonzero(~ones[:, j])])
    for t in range(min(len(fixed), k) + 1, k):  # free rectangles ordered by their first row
        for i in range(r):
            clauses.append([-int(row_var[t, i])] + [int(row_var[t - 1, q]) for q in range(i + 1)])
    return clauses, nvars, row_var, col_var


def find_rectangles(ones, k: int, *, exact: bool, fixed: Sequence[tuple[int, int]] = (),
                    solver: str = DEFAULT_SOLVER, max_conflicts: int | None = None,
                    proof: list | None = None):
    """k all-ones rectangles covering (``exact``: partitioning) the 1-cells of ``ones``, or None.

    Parameters
    ----------
    ones : (R, C) bool array
    k : int
        Number of rectangles (>= 1).
    exact : bool
        True: each 1-cell in exactly one rectangle; False: in at least one.
    fixed : sequence of (row, col)
        A fooling set of ``ones``' 1-cells (pairwise never in one rectangle), at most k: cell t is
        placed in rectangle t (symmetry breaking; a wrong set makes the answer wrong, so callers
        pass a checked one).
    solver : str
        A key of :data:`SOLVERS`.
    max_conflicts : int, optional
        The solver's conflict budget (deterministic, unlike a time limit); default
        :data:`MAX_CONFLICTS`.
    proof : list, optional
        When given and the backend can (``gives_proof``), an UNSAT answer puts the solver's DRAT
        proof lines for :func:`rectangle_cnf` ``(ones, k, exact, fixed)`` into this list
        (checked by :func:`commcomp.matrix.drat.check_drat`).

    Returns
    -------
    list of (rows, cols) tuples, or None

    Raises
    ------
    TooLargeError
        Past the conflict budget.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]], dtype=bool)
    >>> for name in available_solvers():  # (none without the ``solver`` extra)
    ...     assert find_rectangles(a, 2, exact=True, solver=name) is None  # 3 disjoint ones needed
    ...     assert len(find_rectangles(a, 2, exact=False, solver=name)) == 2  # two 2x2 blocks
    """
    ones = np.asarray(ones, dtype=bool)
    if k < 1:
        raise InvalidParameterError(f"k must be >= 1, got {k}")
    clauses, nvars, row_var, col_var = rectangle_cnf(ones, k, exact=exact, fixed=fixed)
    backend = SOLVERS[solver]
    max_conflicts = MAX_CONFLICTS if max_conflicts is None else int(max_conflicts)
    want = proof is not None and backend.gives_proof
    true, lines = backend.solve(clauses, nvars, max_conflicts, want)
    if true is None:
        if want and lines is not None:
            proof[:] = lines
        return None
    return [(tuple(i for i in range(ones.shape[0]) if int(row_var[t, i]) in true),
             tuple(j for j in range(ones.shape[1]) if int(col_var[t, j]) in true)) for t in range(k)]
