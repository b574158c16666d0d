"""Sweeps: run an operation over a grid of parameters, in parallel, into a resumable SQLite database.

Stages, one module each: :mod:`~commcomp.sweep.spec` (the sweep file or command line),
:mod:`~commcomp.sweep.grid` (points and their seeds), :mod:`~commcomp.sweep.operations` (what a point
runs), :mod:`~commcomp.sweep.engine` (where it runs), :mod:`~commcomp.sweep.store` (where results go),
:mod:`~commcomp.sweep.runner` (the flow), :mod:`~commcomp.sweep.report` (tables and exports) and
:mod:`~commcomp.sweep.plot` (pictures); :mod:`~commcomp.sweep.command` runs ``commcomp sweep`` from plain
options and :mod:`~commcomp.sweep.view` renders it (``cli.py`` only parses and prints). The engine is generic: it imports nothing of
``reductions``, whose operations :mod:`reductions.operations` registers.
"""

from .grid import GridPoint, canonical_json, expand_grid, point_seed
from .operations import OPERATIONS, Operation, get_operation, list_operations, register_operation
from .runner import SweepSummary, plan_sweep, run_sweep
from .spec import SweepSpec, SweepSpecError, load_spec
from .store import JobRecord, ResultStore, StoredRow

__all__ = ["GridPoint", "canonical_json", "expand_grid", "point_seed", "OPERATIONS", "Operation", "register_operation",
           "get_operation", "list_operations", "SweepSummary", "plan_sweep", "run_sweep", "SweepSpec",
           "SweepSpecError", "load_spec", "JobRecord", "ResultStore", "StoredRow"]
