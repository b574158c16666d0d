"""Run a sweep: expand the grid, skip the points already in the database, run the rest, record each.

The whole flow in one function, :func:`run_sweep`::

    spec ──expand_grid──► points ──minus done rows──► todo ──engine.run──► outcomes ──store.record──► rows

Only this (the submitting) process writes the database, one transaction per finished point, so an
interrupted sweep resumes where it stopped: run the same command again.

Examples
--------
>>> import os, tempfile
>>> from reductions.sweep.spec import SweepSpec
>>> spec = SweepSpec("selftest", name="demo", axes={"n": (1, 2, 3)})
>>> db = os.path.join(tempfile.mkdtemp(), "demo.sqlite")
>>> s = run_sweep(spec, db, workers=0)
>>> (s.points, s.ran, s.skipped, s.failed)
(3, 3, 0, 0)
>>> run_sweep(spec, db, workers=0).skipped
3
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from commcomp.output import require_module

from .engine import make_engine
from .grid import GridPoint, expand_grid
from .operations import get_operation
from .spec import SweepSpec
from .store import JobRecord, ResultStore, git_revision, package_version

__all__ = ["run_sweep", "plan_sweep", "SweepSummary"]


@dataclass(frozen=True)
class SweepSummary:
    """What a run did.

    ``points``: grid size; ``skipped``: already recorded; ``ran``: recorded by this run; ``failed``: of
    those, the ``'error'`` rows; ``wall_seconds``: this run's wall time; ``job_seconds``: the sum of the
    jobs' own times; ``overhead``: ``(wall * workers - job_seconds) / job_seconds`` (scheduling, storage,
    start-up and idle workers, as a fraction of the work).
    """

    name: str
    operation: str
    db: str
    engine: str
    workers: int
    points: int
    skipped: int
    ran: int
    failed: int
    wall_seconds: float
    job_seconds: float

    @property
    def overhead(self) -> float | None:
        if self.job_seconds <= 0:
            return None
        return (self.wall_seconds * self.workers - self.job_seconds) / self.job_seconds

    def to_dict(self) -> dict:
        return {**self.__dict__, "overhead": self.overhead}


def plan_sweep(spec: SweepSpec, store: ResultStore, force: bool = False,
               retry_errors: bool = False) -> tuple[list[GridPoint], list[GridPoint]]:
    """``(all points, points to run)``: without ``force``, points with a row (an ``'ok'`` row only, with
    ``retry_errors``) are skipped."""
    points = expand_grid(spec)
    if force:
        return points, points
    done = store.done_points(spec.name, spec.operation, include_errors=not retry_errors)
    return points, [p for p in points if (p.key, p.seed) not in done]


def run_sweep(spec: SweepSpec, db_path: str, *, workers: int | None = None, scheduler=None, engine=None,
              force: bool = False, retry_errors: bool = False,
              on_start: Callable[[int, int], None] | None = None,
              on_result: Callable[[GridPoint, JobRecord, dict], None] | None = None) -> SweepSummary:
    """Run every point of ``spec`` not yet in ``db_path`` and record each as it finishes.

    Parameters
    ----------
    spec : SweepSpec
    db_path : str
        The SQLite results file (created if missing).
    workers, scheduler : engine options (see :func:`reductions.sweep.engine.make_engine`), or
    engine : an engine object (takes precedence).
    force : bool
        Recompute every point (each old row is replaced when its point finishes again).
    retry_errors : bool
        Recompute the points recorded as errors (and the missing ones).
    on_start : callable(todo, skipped), optional
    on_result : callable(point, record, counts), optional
        Called after each row is committed; ``counts`` has ``done``, ``failed``, ``total``.

    Raises
    ------
    OperationUnavailableError
        The operation's library function does not exist yet (checked before anything runs).
    """
    operation = get_operation(spec.operation)
    operation.require_available()
    if engine is None and (scheduler or spec.scheduler):  # before the database exists: nothing left behind
        require_module("distributed", "--scheduler needs the Dask extra: pip install 'commcomp[dask]'")
    started = time.perf_counter()
    with ResultStore(db_path) as store:
        points, todo = plan_sweep(spec, store, force=force, retry_errors=retry_errors)
        store.register_sweep(spec.name, spec.operation, spec.to_dict())
        if on_start:
            on_start(len(todo), len(points) - len(todo))
        owned = engine is None
        if owned and todo:
            engine = make_engine(workers=spec.workers if workers is None else workers,
                                 scheduler=scheduler or spec.scheduler)
        version, revision = package_version(), git_revision()
        counts = {"done": 0, "failed": 0, "total": len(todo)}
        job_seconds = 0.0
        try:
            for point, outcome in (engine.run(todo, spec.operation) if todo else ()):
                record = JobRecord(spec.name, spec.operation, point.key, point.seed, outcome["status"],
                                   outcome["result"], outcome["error"], outcome["traceback"],
                                   outcome["wall_seconds"], version, revision)
                store.record(record)
                counts["done"] += 1
                counts["failed"] += record.status == "error"
                job_seconds += outcome["wall_seconds"] or 0.0
                if on_result:
                    on_result(point, record, dict(counts))
        finally:
            if owned and engine is not None:
                engine.close()
    return SweepSummary(spec.name, spec.operation, db_path, getattr(engine, "name", "none"),
                        getattr(engine, "workers", 0), len(points), len(points) - len(todo), counts["done"],
                        counts["failed"], time.perf_counter() - started, job_seconds)
