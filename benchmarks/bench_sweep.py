"""The sweep machinery's own cost: overhead per grid point, and the speed-up from 1 to 2 local workers.

Runs ``run_sweep`` (the same path as ``commcomp sweep run``: grid, local process pool, one SQLite
transaction per finished point) on the diagnostic ``selftest`` operation, whose jobs take a known time:

* ``mode = "sleep"``: each job sleeps ``--seconds``; no CPU, so the figures isolate the engine and the
  database from whatever else runs on the machine;
* ``mode = "spin"``: each job burns ``--seconds`` of CPU; the speed-up then also shows how many cores
  the machine actually gives us (on a shared machine, less than 2).

Figures, each measured in this run:

* ``overhead``: ``(wall * workers - sum of job times) / sum of job times``; the jobs' times are measured
  inside the workers, so this is everything else: scheduling, pickling, the database writes, starting the
  pool, and workers idle at the end. ``per point`` is the same total divided by the points, in ms.
* ``speed-up``: wall with 1 worker / wall with 2 workers, same jobs.
* ``write``: the time of one ``ResultStore.record`` (one transaction, WAL, ``synchronous=FULL``).

The one-off start of the forkserver (it imports the package once, ~1-2 s here, mostly ``sympy`` pulled in
by ``reductions/__init__``) is measured separately as ``cold start`` and excluded by a warm-up sweep.

Usage::

    python benchmarks/bench_sweep.py                      # 20 points of 1 s, sleep and spin (~2 min)
    python benchmarks/bench_sweep.py --quick              # 8 points of 0.25 s
    python benchmarks/bench_sweep.py --points 40 --seconds 0.5 --out sweep_bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from commcomp.sweep.runner import run_sweep  # noqa: E402
from commcomp.sweep.spec import SweepSpec  # noqa: E402
from commcomp.sweep.store import JobRecord, ResultStore  # noqa: E402


def one_sweep(points: int, seconds: float, mode: str, workers: int, directory: str) -> dict:
    spec = SweepSpec("selftest", name=f"bench-{mode}-{workers}", params={"seconds": seconds, "mode": mode},
                     axes={"i": tuple(range(points))})
    db = os.path.join(directory, f"{spec.name}.sqlite")
    summary = run_sweep(spec, db, workers=workers)
    assert summary.ran == points and summary.failed == 0
    spare = summary.wall_seconds * workers - summary.job_seconds
    return {"mode": mode, "workers": workers, "points": points, "seconds": seconds,
            "wall": summary.wall_seconds, "jobs": summary.job_seconds, "overhead": summary.overhead,
            "per_point_ms": 1000 * spare / points}


def write_cost(directory: str, rows: int = 200) -> float:
    with ResultStore(os.path.join(directory, "writes.sqlite")) as store:
        start = time.perf_counter()
        for i in range(rows):
            store.record(JobRecord("w", "selftest", json.dumps({"i": i}), i, "ok",
                                   {"seconds": 1.0, "mode": "sleep", "draw": 0.5}, wall_seconds=1.0))
        return (time.perf_counter() - start) / rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--modes", default="sleep,spin")
    parser.add_argument("--quick", action="store_true", help="8 points of 0.25 s")
    parser.add_argument("--out", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.points, args.seconds = 8, 0.25
    results = {"load_average_before": os.getloadavg(), "cores": os.cpu_count(), "runs": []}
    with tempfile.TemporaryDirectory() as directory:
        start = time.perf_counter()
        one_sweep(1, 0.0, "sleep", 1, directory)  # starts the forkserver (imports the package once)
        results["cold_start_seconds"] = time.perf_counter() - start
        results["write_ms"] = 1000 * write_cost(directory)
        for mode in args.modes.split(","):
            for workers in (1, 2):
                run = one_sweep(args.points, args.seconds, mode, workers, directory)
                results["runs"].append(run)
                print(f"{mode:5s} workers={workers}: wall {run['wall']:7.2f} s, jobs {run['jobs']:7.2f} s, "
                      f"overhead {100 * run['overhead']:5.2f}% ({run['per_point_ms']:6.1f} ms/point)", flush=True)
    results["load_average_after"] = os.getloadavg()
    print(f"\n{args.points} points of {args.seconds:g} s; cores {results['cores']}; load average before "
          f"{results['load_average_before'][0]:.2f}, after {results['load_average_after'][0]:.2f}")
    print(f"cold start (forkserver importing the package, once per process): {results['cold_start_seconds']:.2f} s")
    print(f"one database write (a transaction, WAL, synchronous=FULL): {results['write_ms']:.2f} ms")
    by = {(r["mode"], r["workers"]): r for r in results["runs"]}
    print(f"{'mode':6s} {'overhead 1w':>12s} {'overhead 2w':>12s} {'speed-up 1->2':>14s}")
    for mode in args.modes.split(","):
        one, two = by[mode, 1], by[mode, 2]
        results[f"speedup_{mode}"] = one["wall"] / two["wall"]
        print(f"{mode:6s} {100 * one['overhead']:11.2f}% {100 * two['overhead']:11.2f}% "
              f"{results[f'speedup_{mode}']:13.2f}x")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
