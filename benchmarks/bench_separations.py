"""The default ``commcomp separations``, timed per part: each ladder, each claim, and the whole run.

Every time is given twice, wall clock and this process's CPU time (user + sys: other jobs on a
shared machine slow the wall clock, not the CPU time), and as a ratio to a reference measured in the
same run (CONVENTIONS: no timed tests): a fixed NumPy workload that runs no commcomp code (a
512 x 512 float64 product and ten integer passes over 2^20 float64 bit patterns, the two kinds of
work the checks do), best of five, so the shares read the same on a loaded machine.  With one
worker (the default here) OpenBLAS runs one thread, as in each worker of the default run, so the
CPU times are the work's own and not threads waiting.  Per ladder: its crossover search and its checks; per
claim: what the claim adds to the ladders (the qSA claim builds and checks its own weights, the
others reuse the ladders' rows and checks).

Usage::

    python benchmarks/bench_separations.py                    # ~12 s of CPU
    python benchmarks/bench_separations.py --check-max-length 1500 --out sep.json
    python benchmarks/bench_separations.py --workers 2     # the default run's processes (CPU: this one's)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    now = _clock()
    return now[0] - start[0], now[1] - start[1]


def reference_seconds() -> float:
    """CPU seconds of the fixed reference workload (best of five)."""
    import numpy as np

    rng = np.random.default_rng(0)
    a, x = rng.standard_normal((512, 512)), rng.standard_normal(1 << 20)
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        float(np.linalg.norm(a @ a))
        u = x.view(np.uint64)
        r = u >> np.uint64(45)  # ten whole-array integer passes, as a rounding's (no commcomp code)
        for shift in (1, 2, 3, 4, 5, 6, 7, 8, 9):
            r ^= u >> np.uint64(shift)
        best = min(best, time.process_time() - start)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--precision", default="bfloat16")
    ap.add_argument("--check-max-length", type=int, default=None)
    ap.add_argument("--workers", type=int, default=1,
                    help="processes for the ladders and claims (default 1: the per-ladder times are this "
                         "process's own)")
    ap.add_argument("--out", help="write the numbers as JSON")
    args = ap.parse_args(argv)

    start = _clock()
    from reductions.separations.pipeline import ladders_and_claims
    from reductions.separations.rows import DEFAULT_CHECK_MAX_LENGTH
    from reductions.separations.special import special_rows
    imported = _since(start)
    limit = args.check_max_length or DEFAULT_CHECK_MAX_LENGTH
    from commcomp.blas import limit_blas_threads

    threads = limit_blas_threads(1) if args.workers == 1 else nullcontext()
    threads.__enter__()  # the reference and the run alike
    ref = reference_seconds()

    marks, last = [], [_clock()]

    def progress(label):
        marks.append((label, _since(last[0])))
        last[0] = _clock()

    run = _clock()  # the default run's schedule (one worker: the ladders, then the claims, here)
    ladders, claims, derived = ladders_and_claims(None, args.precision, progress=progress, check_max_length=limit,
                                                  workers=args.workers)
    t = _clock()
    special_rows(args.precision)
    special = _since(t)
    total = _since(run)
    threads.__exit__(None, None, None)

    print(f"load average {os.getloadavg()[0]:.2f}; check limit {limit} tokens; {args.workers} worker(s); import {imported[0]:.2f} s wall, "
          f"{imported[1]:.2f} s CPU; reference {ref * 1e3:.1f} ms CPU")
    print(f"{'ladder':<22}{'wall s':>8}{'CPU s':>8}{'CPU/ref':>9}{'checks s':>9}")
    for (label, (wall, cpu)), lad in zip(marks, ladders):
        checks = sum(r.seconds for r in lad.rows)
        print(f"{label:<22}{wall:8.2f}{cpu:8.2f}{cpu / ref:9.0f}{checks:9.2f}")
    print(f"{'special rows':<22}{special[0]:8.2f}{special[1]:8.2f}{special[1] / ref:9.0f}")
    # per claim: the CPU of the ladder it reads (its crossover search and checks) plus the wall time
    # of what the claim itself adds (its own checks: qSA's weights, the witness on its own reduction)
    from reductions.separations.claims import _ladder_for

    cpu_of = {id(lad): cpu for (_, (_, cpu)), lad in zip(marks, ladders)}
    per_claim = []
    print(f"{'claim':<22}{'ladder CPU s':>13}{'own wall s':>11}{'sum/ref':>9}  verdict")
    for c in claims + derived:
        lad = _ladder_for(c.spec, ladders)
        ladder_cpu = cpu_of.get(id(lad), 0.0) if lad is not None else 0.0
        per_claim.append({"claim": c.spec.claim, "ladder": None if lad is None else lad.separation.label,
                          "ladder_cpu_seconds": ladder_cpu, "own_seconds": c.seconds,
                          "over_reference": (ladder_cpu + c.seconds) / ref, "verdict": c.verdict})
        print(f"{c.spec.claim:<22}{ladder_cpu:13.2f}{c.seconds:11.2f}{(ladder_cpu + c.seconds) / ref:9.0f}  "
              f"{c.verdict}")
    print(f"total (ladders + special rows + claims): {total[0]:.2f} s wall, {total[1]:.2f} s CPU = "
          f"{total[1] / ref:.0f} x ref; with the import {total[0] + imported[0]:.2f} s wall")
    if args.out:
        Path(args.out).write_text(json.dumps({
            "check_max_length": limit, "workers": args.workers, "load_average": os.getloadavg()[0],
            "import_s": imported[0], "import_cpu_s": imported[1], "reference_cpu_s": ref,
            "total_s": total[0], "total_cpu_s": total[1], "special_s": special[0], "special_cpu_s": special[1],
            "ladders": [{"label": label, "seconds": w, "cpu_seconds": c, "cpu_over_reference": c / ref}
                        for label, (w, c) in marks],
            "claims": per_claim}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
