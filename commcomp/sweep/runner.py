"""Run a sweep: expand the grid, skip the points already in the database, run the rest, record each.

The whole flow in one function, :func:`run_sweep`::

    spec ──expand_grid──► points ──minus done rows──► todo ──engine.run──► outcomes ──store.record──► rows

Only submitting processes write the database, one transaction per finished point, so an interrupted
sweep resumes where it stopped: run the same command again.  Several runs may share one database at
once: each claims a point atomically just before it computes it (:meth:`ResultStore.claim`), so a
second run of the same sweep helps the first (each point is computed once) and reports how many points
it left to the other (``busy``).  SIGTERM ends a run like Ctrl-C (:func:`terminate_as_interrupt`), and
its workers end with it however it ends (:mod:`commcomp.sweep.engine`).

Examples
--------
>>> import os, tempfile
>>> from commcomp.sweep.spec import SweepSpec
>>> spec = SweepSpec("selftest", name="demo", axes={"n": (1, 2, 3)})
>>> db = os.path.join(tempfile.mkdtemp(), "demo.sqlite")
>>> s = run_sweep(spec, db, workers=0)
>>> (s.points, s.ran, s.skipped, s.failed)
(3, 3, 0, 0)
>>> run_sweep(spec, db, workers=0).skipped
3
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from commcomp.output import require_module

from .engine import defer_interrupt, make_engine
from .grid import GridPoint, expand_grid
from .operations import get_operation
from .spec import SweepSpec
from .store import JobRecord, ResultStore, git_revision, package_version

__all__ = ["run_sweep", "plan_sweep", "SweepSummary", "SweepTerminated", "terminate_as_interrupt"]


class SweepTerminated(KeyboardInterrupt):
    """SIGTERM arrived: the run stops as on Ctrl-C (rows committed so far stay; run again to resume)."""

    exit_status = 128 + signal.SIGTERM


@contextlib.contextmanager
def terminate_as_interrupt():
    """While inside, SIGTERM raises :class:`SweepTerminated` in the main thread (a KeyboardInterrupt), so
    the same clean-up as Ctrl-C runs: workers stopped, claims released, no leaked semaphores."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        if not defer_interrupt(SweepTerminated):  # not while a worker is being started (engine.py)
            raise SweepTerminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@dataclass(frozen=True)
class SweepSummary:
    """What a run did.

    ``points``: grid size; ``skipped``: already recorded (before or while this run ran); ``ran``: recorded
    by this run; ``failed``: of those, the ``'error'`` rows; ``busy``: points another live run was computing
    when this one reached them (they are that run's to record); ``busy_runners``: those runs (pid, host); ``wall_seconds``: this run's wall time; ``job_seconds``: the sum of the
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
    busy: int = 0
    busy_runners: tuple = field(default=())

    @property
    def overhead(self) -> float | None:
        if self.job_seconds <= 0:
            return None
        return (self.wall_seconds * self.workers - self.job_seconds) / self.job_seconds

    def to_dict(self) -> dict:
        return {**self.__dict__, "busy_runners": list(self.busy_runners), "overhead": self.overhead}


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
    workers, scheduler : engine options (see :func:`commcomp.sweep.engine.make_engine`), or
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
    UnknownNameError
        An operation nobody registered (checked before anything runs).
    """
    get_operation(spec.operation)
    if engine is None and (scheduler or spec.scheduler):  # before the database exists: nothing left behind
        require_module("distributed", "--scheduler needs the Dask extra: pip install 'commcomp[dask]'")
    started, started_at = time.perf_counter(), time.time()
    skip_done = None if force else ("ok" if retry_errors else "any")
    with terminate_as_interrupt(), ResultStore(db_path) as store:
        points, todo = plan_sweep(spec, store, force=force, retry_errors=retry_errors)
        store.register_sweep(spec.name, spec.operation, spec.to_dict())
        if on_start:
            on_start(len(todo), len(points) - len(todo))
        owned = engine is None
        version, revision = package_version(), git_revision()
        counts = {"done": 0, "failed": 0, "total": len(todo), "busy": 0, "skipped": len(points) - len(todo)}
        job_seconds, busy_runners = 0.0, []

        def claimed(candidates):
            """Claim each point just before the engine takes it; skip what another run did or is doing."""
            for point in candidates:
                state = store.claim(spec.name, spec.operation, point.key, point.seed, skip_done=skip_done,
                                    done_after=started_at if force else None)
                if state == "claimed":
                    yield point
                    continue
                counts["busy" if state == "busy" else "skipped"] += 1
                if state == "busy" and not busy_runners:
                    busy_runners.extend(store.busy_runners())

        try:
            if todo:
                store.start_runner()
            if owned and todo:
                engine = make_engine(workers=spec.workers if workers is None else workers,
                                     scheduler=scheduler or spec.scheduler)
            for point, outcome in (engine.run(claimed(todo), spec.operation) if todo else ()):
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
            store.stop_runner()
    return SweepSummary(spec.name, spec.operation, db_path, getattr(engine, "name", "none"),
                        getattr(engine, "workers", 0), len(points), counts["skipped"], counts["done"],
                        counts["failed"], time.perf_counter() - started, job_seconds, counts["busy"],
                        tuple(f"pid {r['pid']} on {r['host']}" for r in busy_runners))
