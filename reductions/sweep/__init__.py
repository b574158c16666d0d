"""Sweeps: run an operation over a grid of parameters, in parallel, into a resumable SQLite database.

Stages, one module each: :mod:`~reductions.sweep.spec` (the sweep file or command line),
:mod:`~reductions.sweep.grid` (points and their seeds), :mod:`~reductions.sweep.operations` (what a point
runs), :mod:`~reductions.sweep.engine` (where it runs), :mod:`~reductions.sweep.store` (where results go),
:mod:`~reductions.sweep.runner` (the flow), :mod:`~reductions.sweep.report` (tables and exports) and
:mod:`~reductions.sweep.plot` (pictures). ``commcomp sweep`` in ``cli.py`` drives them.
"""

from .grid import GridPoint, canonical_json, expand_grid, point_seed
from .operations import OPERATIONS, OperationUnavailableError, get_operation, list_operations
from .runner import SweepSummary, plan_sweep, run_sweep
from .spec import SweepSpec, SweepSpecError, load_spec
from .store import JobRecord, ResultStore, StoredRow

__all__ = ["GridPoint", "canonical_json", "expand_grid", "point_seed", "OPERATIONS", "OperationUnavailableError",
           "get_operation", "list_operations", "SweepSummary", "plan_sweep", "run_sweep", "SweepSpec",
           "SweepSpecError", "load_spec", "JobRecord", "ResultStore", "StoredRow"]
