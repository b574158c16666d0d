"""Where a sweep's jobs run: a local process pool, a Dask cluster, or (for debugging) the calling process.

Every engine has one method, ``run(points, operation)``, which yields ``(point, outcome)`` pairs in
completion order; ``outcome`` is the plain dict :func:`execute_job` returns. Engines never write the
database: the submitting process does, one transaction per outcome (:mod:`commcomp.sweep.runner`).

- :class:`LocalEngine` (default): a ``concurrent.futures.ProcessPoolExecutor`` with ``workers`` processes
  (forkserver start, so the pool is safe beside the progress bar's thread), at most ``2 * workers`` jobs in
  flight. A worker that dies without a Python exception (a segfault, ``os._exit``, the OOM killer) breaks
  the pool; the engine starts a new one and reruns the jobs that were in flight one at a time, so the job
  that kills its worker again is recorded as an error and the others run normally.
  Points are taken from the iterable only as slots free up (a run claims them one by one). Workers end
  with the submitting process however it ends: each has ``PR_SET_PDEATHSIG`` (Linux) and a watchdog
  thread that ends it within ``WATCHDOG_SECONDS`` once that process is gone (``kill -9`` included), and
  an interrupted run (Ctrl-C, SIGTERM) kills its workers before it returns.
- :class:`DaskEngine`: the same jobs on an existing ``distributed`` scheduler (``--scheduler ADDRESS``;
  the ``dask`` extra). Its workers must be able to import this package.
- :class:`InProcessEngine` (``--workers 0``): one job after another in this process (for a debugger).

As with any ``multiprocessing`` code that does not fork, a script that calls :func:`run_sweep` with the
local engine must do so under ``if __name__ == "__main__":`` (workers import the main module); the
``commcomp`` command, ``python -m cli`` and notebooks need nothing.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Iterable, Iterator

from commcomp.errors import CommcompError

from .grid import GridPoint

__all__ = ["execute_job", "LocalEngine", "DaskEngine", "InProcessEngine", "EngineError", "make_engine",
           "default_workers"]

WORKER_DIED = ("WorkerDied: the worker process ended without a Python exception while running this point "
               "(a crash, os._exit, or the OOM killer)")


WATCHDOG_SECONDS = 0.5


def _process_start(pid: int):
    """The kernel's start time of ``pid`` (tells a pid from a later reuse of it); None if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _parent_alive(pid: int, start) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return start is None or _process_start(pid) == start


def _watch_parent(pid: int, start) -> None:
    """Worker initializer: end this worker when the submitting process ``pid`` ends, however it ends."""
    if sys.platform.startswith("linux"):
        try:  # SIGKILL when our own parent (the forkserver, which exits with the submitter) dies
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            pass

    def watch():
        while _parent_alive(pid, start):
            time.sleep(WATCHDOG_SECONDS)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="commcomp-parent-watchdog", daemon=True).start()
    if not _parent_alive(pid, start):
        os.kill(os.getpid(), signal.SIGKILL)


_DEFERRED = {"depth": 0, "pending": None}  # an interrupt that arrived while a worker was being started


def defer_interrupt(exc_type) -> bool:
    """Called by a signal handler: True if ``exc_type`` is to be raised later, when the worker start in
    progress has finished (a worker half-started when the run ends would read semaphores already gone)."""
    if _DEFERRED["depth"]:
        _DEFERRED["pending"] = exc_type
        return True
    return False


@contextlib.contextmanager
def _starting_workers():
    _DEFERRED["depth"] += 1
    try:
        yield
    finally:
        _DEFERRED["depth"] -= 1
        pending, _DEFERRED["pending"] = _DEFERRED["pending"], None
        if pending is not None:
            raise pending()


def _stop_pool(pool, kill: bool) -> None:
    """Shut ``pool`` down; with ``kill`` (an interrupted run), end its workers now rather than after their jobs."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    if kill:
        for process in processes:
            if process.is_alive():
                process.kill()
        for process in processes:
            process.join(timeout=5)


class EngineError(CommcompError):
    """An engine cannot start (the Dask extra missing, an unreachable scheduler, a bad worker count)."""


def default_workers() -> int:
    """The number of cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def execute_job(operation: str, params: dict, seed: int, module: str | None = None) -> dict:
    """Run one point in a worker; never raises for an ``Exception`` (it becomes an ``'error'`` outcome).

    ``module``: the module that registers the operation (:attr:`~commcomp.sweep.operations.Operation.module`),
    imported first, so that a fresh worker process knows operations registered outside this package.

    Returns
    -------
    dict
        ``status`` ('ok' or 'error'), ``result`` (JSON-able dict or None), ``error`` (one line or None),
        ``traceback``, ``wall_seconds`` (the job's own wall time).
    """
    import importlib
    import json

    from .operations import run_operation

    start = time.perf_counter()
    try:
        if module:
            importlib.import_module(module)
        result = run_operation(operation, params, seed)
        json.dumps(result, allow_nan=False)  # fail here, in the job, rather than in the writer
        return {"status": "ok", "result": result, "error": None, "traceback": None,
                "wall_seconds": time.perf_counter() - start}
    except Exception as exc:  # noqa: BLE001 - a failing point is data, not a crash of the sweep
        text = str(exc).strip()
        message = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")
        return {"status": "error", "result": None, "error": message, "traceback": traceback.format_exc(),
                "wall_seconds": time.perf_counter() - start}


def _module_of(operation: str) -> str:
    """The module a worker imports to know ``operation`` (the one that registered it)."""
    from .operations import get_operation

    return get_operation(operation).module


def _died(seconds: float = 0.0) -> dict:
    return {"status": "error", "result": None, "error": WORKER_DIED, "traceback": None, "wall_seconds": seconds}


class InProcessEngine:
    """Run each job in the calling process, one after another."""

    name = "in-process"
    workers = 1

    def run(self, points: Iterable[GridPoint], operation: str) -> Iterator[tuple[GridPoint, dict]]:
        for point in points:
            yield point, execute_job(operation, point.params, point.seed, _module_of(operation))

    def close(self) -> None:
        pass


class LocalEngine:
    """A local process pool of ``workers`` processes.

    Parameters
    ----------
    workers : int
        Number of worker processes (default: the number of cores).
    in_flight : int, optional
        Most jobs submitted at once (default ``2 * workers``: workers never wait for the writer).
    """

    name = "local"

    def __init__(self, workers: int | None = None, in_flight: int | None = None):
        self.workers = default_workers() if workers is None else int(workers)
        if self.workers < 1:
            raise EngineError(f"workers must be >= 1, got {workers}")
        self.in_flight = in_flight or 2 * self.workers
        methods = multiprocessing.get_all_start_methods()
        self._context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if self._context.get_start_method() == "forkserver":
            from .operations import OPERATIONS

            self._context.set_forkserver_preload(sorted({"commcomp.sweep.operations"} |
                                                        {op.module for op in OPERATIONS.values()}))

    def _pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=self._context, initializer=_watch_parent,
                                   initargs=(os.getpid(), _process_start(os.getpid())))

    def run(self, points: Iterable[GridPoint], operation: str) -> Iterator[tuple[GridPoint, dict]]:
        source, exhausted = iter(points), False
        pending: collections.deque[GridPoint] = collections.deque()  # taken from source, not yet submitted
        suspects: collections.deque[GridPoint] = collections.deque()  # rerun alone after a broken pool
        running: dict = {}
        started: dict = {}
        pool = self._pool()

        def submit(queue):
            point = queue[0]
            with _starting_workers():  # submit may start a worker process
                future = pool.submit(execute_job, operation, point.params, point.seed,  # may raise BrokenProcessPool
                                     _module_of(operation))
            running[future] = queue.popleft()
            started[point.key, point.seed] = time.perf_counter()

        def more() -> bool:
            nonlocal exhausted
            if not pending and not exhausted:
                try:
                    pending.append(next(source))
                except StopIteration:
                    exhausted = True
            return bool(pending)

        finished = False
        try:
            while pending or suspects or running or not exhausted:
                broken, pool_broken = [], False
                try:
                    if suspects:
                        if not running:
                            submit(suspects)
                    else:
                        while len(running) < self.in_flight and more():
                            submit(pending)
                except BrokenProcessPool:
                    pool_broken = True
                if running and not pool_broken:
                    done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                    for future in done:
                        point = running.pop(future)
                        try:
                            outcome = future.result()
                        except BrokenProcessPool:
                            broken.append(point)
                            pool_broken = True
                            continue
                        yield point, outcome
                if not pool_broken:
                    continue
                broken.extend(running.values())  # every future of a broken pool fails
                running.clear()
                _stop_pool(pool, kill=True)
                pool = self._pool()
                if len(broken) == 1:  # it ran alone: this point kills its worker
                    point = broken[0]
                    yield point, _died(time.perf_counter() - started[point.key, point.seed])
                else:
                    suspects.extend(sorted(broken, key=lambda p: p.index))
            finished = True
        finally:
            _stop_pool(pool, kill=not finished)  # interrupted (Ctrl-C, SIGTERM, an error): end the workers now

    def close(self) -> None:
        pass


class DaskEngine:
    """The jobs on an existing Dask distributed cluster; results come back to this process.

    Parameters
    ----------
    address : str
        The scheduler's address (``tcp://host:8786``), or an existing ``distributed.Client``.
    timeout : float
        Seconds to wait for the scheduler.
    """

    name = "dask"

    def __init__(self, address, timeout: float = 10.0):
        try:
            from distributed import Client
        except ImportError:
            raise EngineError("--scheduler needs the Dask extra: pip install 'commcomp[dask]' "
                              "(the 'distributed' package)") from None
        if hasattr(address, "submit"):
            self.client, self._own = address, False
        else:
            try:
                self.client, self._own = Client(address, timeout=f"{timeout}s"), True
            except (OSError, TimeoutError, ValueError) as exc:
                raise EngineError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from None
        self.workers = max(1, sum(self.client.nthreads().values()))

    def run(self, points: Iterable[GridPoint], operation: str) -> Iterator[tuple[GridPoint, dict]]:
        from distributed import as_completed

        futures = {}
        for point in points:
            future = self.client.submit(execute_job, operation, point.params, point.seed, _module_of(operation), pure=False,
                                        key=f"commcomp-sweep-{operation}-{point.index}-{os.urandom(4).hex()}")
            futures[future] = point
        try:
            for future in as_completed(list(futures)):
                point = futures.pop(future)
                try:
                    outcome = future.result()
                except Exception as exc:  # noqa: BLE001 - KilledWorker and friends: the point failed
                    outcome = {**_died(), "error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"[:500]}
                future.release()
                yield point, outcome
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        if self._own:
            self.client.close()


def make_engine(workers: int | None = None, scheduler=None):
    """The engine for the command-line options: Dask with a scheduler, in-process for 0 workers, else local."""
    if scheduler:
        return DaskEngine(scheduler)
    if workers == 0:
        return InProcessEngine()
    if workers is not None and workers < 0:
        raise EngineError(f"--workers must be >= 0, got {workers}")
    return LocalEngine(workers)
