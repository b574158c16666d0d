"""``commcomp sweep run|show|ops``: the sweep from its options, the run and what it recorded, a database read.

The CLI parses the arguments, shows progress and prints; this module does the rest with plain
options (never an argparse namespace), and :mod:`.view` renders what it returns.

Examples
--------
>>> spec = sweep_spec(None, op="selftest", axes=["n=2,3"], params=["draws=1"])
>>> spec.operation, spec.axes, [p["index"] for p in dry_run_points(spec)]
('selftest', {'n': (2, 3)}, [0, 1])
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Callable

from ..errors import InvalidParameterError
from .report import flatten, sort_rows
from .spec import SweepSpec, load_spec, parse_axis_text, parse_param_text

__all__ = ["sweep_spec", "backend_environment", "axis_values", "dry_run_points", "SweepRun", "run_and_read",
           "SweepRead", "read_sweeps", "operation_rows"]


def sweep_spec(file: str | None, *, op: str | None = None, axes=(), params=(), seed: int | None = None,
               repeats: int | None = None, name: str | None = None) -> SweepSpec:
    """The sweep of a file (.toml, .yaml, .json) with the command line's entries applied, or of
    ``op`` alone; ``axes`` are ``NAME=V1,V2,...`` texts and ``params`` ``NAME=VALUE`` texts."""
    if not file and not op:
        raise InvalidParameterError("commcomp sweep run: give a sweep FILE or --op OP (with --axis NAME=V1,V2,...)")
    spec = load_spec(file) if file else SweepSpec(operation="")
    return spec.with_overrides(operation=op, axes=[parse_axis_text(a) for a in axes],
                               params=[parse_param_text(p) for p in params], seed=seed,
                               repeats=repeats, name=name)


@contextlib.contextmanager
def backend_environment(backend: str | None):
    """Run the block with ``$COMMCOMP_BACKEND`` set to ``backend`` (verify and witness points read it;
    local workers inherit it), restored afterwards; a missing library is refused before anything runs.
    ``None``: nothing changes."""
    if not backend:
        yield
        return
    from ..backend import ENV_VAR, namespace

    namespace(backend)  # a missing library: one line, exit 2, before any point runs
    previous = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = backend
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = previous


def axis_values(axes: dict, repeats: int = 1) -> dict:
    """A sweep's axes with their values, and ``repeat`` last when it repeats.

    >>> axis_values({"n": [2, 3]}, repeats=2)
    {'n': [2, 3], 'repeat': [0, 1]}
    """
    return {**axes, **({"repeat": list(range(repeats))} if repeats > 1 else {})}


def dry_run_points(spec: SweepSpec) -> list[dict]:
    """Every point of the grid with its index and seed (``--dry-run``: nothing runs)."""
    from .grid import expand_grid

    return [{"index": p.index, "seed": p.seed, **p.params} for p in expand_grid(spec)]


@dataclass(frozen=True)
class SweepRun:
    """A finished run: its summary and the database rows of its points, sorted along its axes."""

    spec: SweepSpec
    db: str
    summary: object     # runner.SweepSummary
    rows: list
    axes: list

    def to_json(self) -> dict:
        """``{"summary", "rows"}``: the summary and one flat record per point."""
        columns, records = flatten(self.rows, order=list(self.axes))
        return {"summary": self.summary.to_dict(), "rows": [{c: r.get(c) for c in columns} for r in records]}


def run_and_read(spec: SweepSpec, db: str, *, workers: int | None = None, scheduler=None, force: bool = False,
                 retry_errors: bool = False, on_start: Callable | None = None,
                 on_result: Callable | None = None) -> SweepRun:
    """:func:`.runner.run_sweep` into ``db``, then the rows of this sweep's points read back."""
    from .grid import expand_grid
    from .runner import run_sweep
    from .store import ResultStore

    values = axis_values(spec.axes, spec.repeats)
    summary = run_sweep(spec, db, workers=workers, scheduler=scheduler, force=force,
                        retry_errors=retry_errors, on_start=on_start, on_result=on_result)
    keys = {(p.key, p.seed) for p in expand_grid(spec)}
    with ResultStore(db, readonly=True) as store:
        rows = store.rows(sweep=spec.name, points=keys)
    return SweepRun(spec, db, summary, sort_rows(rows, values), list(values))


@dataclass(frozen=True)
class SweepRead:
    """What a database holds (``sweep show``): its sweeps, the rows asked for sorted along the axes,
    their flat records with every column, and the columns chosen (None: the default view)."""

    db: str
    sweep: str | None
    sweeps: list
    rows: list
    axes: list
    columns: list
    records: list
    chosen: list | None


def read_sweeps(db: str, *, sweep: str | None = None, status: str = "all", columns: str | None = None) -> SweepRead:
    """Read ``db`` (read-only): one ``sweep`` or all, rows of one ``status`` (``ok``, ``error``) or all;
    ``columns`` a comma-separated choice, each checked against the columns there are."""
    from .store import ResultStore

    with ResultStore(db, readonly=True) as store:
        sweeps = store.sweeps()
        if sweep and sweep not in {s["name"] for s in sweeps}:
            raise InvalidParameterError(f"commcomp sweep show: no sweep {sweep!r} in {db}; "
                                        f"it holds: {', '.join(s['name'] for s in sweeps) or 'nothing'}")
        rows = store.rows(sweep=sweep, status=None if status == "all" else status)
    values = {}
    for spec in (s["spec"] for s in sweeps if not sweep or s["name"] == sweep):
        values.update(axis_values(spec.get("axes", {}), spec.get("repeats", 1)))
    axes = list(values)
    rows = sort_rows(rows, values)
    all_columns, records = flatten(rows, order=axes)
    chosen = [c.strip() for c in columns.split(",")] if columns else None
    if chosen:
        unknown = [c for c in chosen if c not in all_columns]
        if unknown:
            raise InvalidParameterError(f"commcomp sweep show: unknown column(s) {', '.join(unknown)}; "
                                        f"known: {', '.join(all_columns)}")
    return SweepRead(db, sweep, sweeps, rows, axes, all_columns, records, chosen)


def operation_rows() -> list[dict]:
    """One dict per registered operation (``sweep ops``); registered means importable."""
    from .operations import list_operations

    return [{"name": op.name, "available": True, "wraps": op.wraps_name, "required": list(op.required),
             "description": op.description, "why": ""} for op in list_operations()]
