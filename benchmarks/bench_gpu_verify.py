"""Exhaustive ``verify`` of INDEX -> Index Lookup with an LSTM of width 64 on an Array API backend.

What the device check (``benchmarks/gpu_check.sh``) runs on the GPU, and what measured the CPU
numbers it compares against (``benchmarks/gpu_check_cpu.json``, recorded on the project's CPU
machine with ``--backend numpy``). For each n the whole exhaustive run (all 2^n x's and n
queries, n·2^n instances: the prefix tree of Alice's inputs, the messages encoded and decoded,
Bob's step, the unsplit model, the bit-for-bit check and the exact distinct-message count) is
timed end to end, and its counts are kept: ``faithful_count``, ``correct_count`` and
``distinct_messages`` must equal the CPU run's wherever both ran (the script says so per n).

The ratio reported is CPU seconds / backend seconds at the same n, from the reference file; where
the reference did not reach that n, the CPU time is extrapolated from its largest n by the
instance count (n·2^n; marked ``"cpu_extrapolated": true``). Sizes run in increasing n until the
next one is predicted (from the last, x the instance ratio) to pass ``--budget`` seconds.

``--reachable N [N ...]``: also run ``verify(..., method="reachable-states")`` at those n when the
reachable-state engine is present (``reductions.search.reachable``); otherwise the result says it is absent.
It runs its own model, an LSTM of ``--reachable-width`` (4) at ``--reachable-precision``
(fixed:8:4: 22 reachable states; a float32 LSTM of width 64 would exceed the state budget at
level 15), on the backend and, in the same process, on NumPy: each row gives both times and
whether the exact results (instances, faithful/correct/model-correct counts, distinct messages at
every level) are equal (``equal_to_numpy``); the exact counts' digits are not printed, only their
bit length.

Usage::

    python benchmarks/bench_gpu_verify.py --backend numpy --n 12 16 --out cpu.json      # CPU reference
    python benchmarks/bench_gpu_verify.py --backend cupy --n 12 24 --reference benchmarks/gpu_check_cpu.json \\
        --budget 300 --out $OUT/gpu_verify.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # one BLAS thread: the convention of bench_simulate.py
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reductions.simulate import verify  # noqa: E402

KEYS = ("instances", "faithful_count", "correct_count", "distinct_messages", "bits_per_message")


def _instances(n: int) -> int:
    return n * (1 << n)


def _cpu_seconds(reference: dict, n: int):
    """``(seconds, extrapolated)`` of the CPU reference at n, or ``(None, False)``."""
    runs = {int(r["n"]): r for r in reference.get("runs", []) if r.get("seconds") is not None}
    if n in runs:
        return runs[n]["seconds"], False
    below = [m for m in runs if m < n]
    if not below:
        return None, False
    m = max(below)
    return runs[m]["seconds"] * _instances(n) / _instances(m), True


def run(args) -> dict:
    reference = json.loads(Path(args.reference).read_text()) if args.reference else {}
    ref_runs = {int(r["n"]): r for r in reference.get("runs", [])}
    sizes = list(range(args.n[0], args.n[-1] + 1)) if len(args.n) == 2 else list(args.n or [])
    out = {"backend": args.backend, "task": "index-lookup", "arch": "lstm", "width": args.width,
           "precision": args.precision, "rows": args.rows, "budget_seconds": args.budget,
           "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "runs": [], "skipped": []}
    if args.warmup:  # first calls compile kernels (CuPy) and fill caches: not part of any timing
        t = time.perf_counter()
        verify("index-lookup", "lstm", args.warmup, args.precision, width=args.width, exhaustive=True,
               seed=args.seed, rows=args.rows, backend=args.backend, method=args.method)
        out["warmup"] = {"n": args.warmup, "seconds": time.perf_counter() - t}
    start, last = time.perf_counter(), None
    for n in sizes:
        if last is not None:
            predicted = last["seconds"] * _instances(n) / _instances(last["n"])
            if time.perf_counter() - start + predicted > args.budget:
                out["skipped"].append({"n": n, "predicted_seconds": predicted, "reason": "budget"})
                continue
        try:
            v = verify("index-lookup", "lstm", n, args.precision, width=args.width, exhaustive=True, seed=args.seed,
                       rows=args.rows, backend=args.backend, method=args.method)
        except Exception as exc:  # recorded, and the sweep stops: a larger n would fail the same way
            out["runs"].append({"n": n, "error": f"{type(exc).__name__}: {exc}"})
            print(json.dumps(out["runs"][-1]), flush=True)
            _write(args, out)
            break
        row = {"n": n, "seconds": v["seconds"], "seconds_protocol": v["seconds_protocol"],
               "seconds_reference": v["seconds_reference"], "method": v["method"],
               **{k: v[k] for k in KEYS}, "instances_per_second": v["instances"] / v["seconds"],
               "load_average": os.getloadavg()[0]}
        cpu, extrapolated = _cpu_seconds(reference, n)
        if cpu is not None:
            row.update({"cpu_seconds": cpu, "cpu_extrapolated": extrapolated, "speedup": cpu / v["seconds"]})
        if n in ref_runs:
            row["counts_equal_cpu"] = all(ref_runs[n].get(k) == row[k] for k in KEYS)
        out["runs"].append(row)
        last = row
        print(json.dumps(row), flush=True)
        _write(args, out)  # after every n: a run stopped by a timeout still leaves its results
    out["reachable"] = _reachable(args)
    out["total_seconds"] = time.perf_counter() - start
    return out


def _write(args, result: dict) -> None:
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))


def _reachable(args) -> list:
    if not args.reachable:
        return []
    if importlib.util.find_spec("reductions.search.reachable") is None:
        return [{"n": n, "error": "the reachable-state engine (reductions.search.reachable) is not in this checkout"}
                for n in args.reachable]
    rows = []
    exact = ("instances", "faithful_count", "correct_count", "model_correct_count", "distinct_messages_per_level")
    for n in args.reachable:
        try:
            runs = {}
            for backend in dict.fromkeys(["numpy", args.backend]):  # NumPy first: the reference
                runs[backend] = verify("index-lookup", "lstm", n, args.reachable_precision,
                                       width=args.reachable_width, exhaustive=True, seed=args.seed,
                                       method="reachable-states", backend=backend)
            v, ref = runs[args.backend], runs["numpy"]
            rows.append({"n": n, "width": args.reachable_width, "precision": args.reachable_precision,
                         "method": v["method"], "distinct_messages": v["distinct_messages"],
                         "faithful": v["faithful"], "correct": v["correct"],
                         "instances_bits": int(v["instances"]).bit_length(), "seconds": v["seconds"],
                         "numpy_seconds": ref["seconds"],
                         "equal_to_numpy": all(v[k] == ref[k] for k in exact)})
        except Exception as exc:  # report and go on: the check must write its results
            rows.append({"n": n, "error": f"{type(exc).__name__}: {exc}"})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="numpy")
    p.add_argument("--n", type=int, nargs="*", default=[16, 24], help="LO HI (a range), a list of n, or none")
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--precision", default="float32")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rows", type=int, default=None, help="instances per chunk (default: verify's)")
    p.add_argument("--warmup", type=int, default=0, help="an untimed run at this n first (0: none)")
    p.add_argument("--budget", type=float, default=600.0, help="seconds for the whole size sweep")
    p.add_argument("--reference", help="CPU reference JSON (this script's output with --backend numpy)")
    p.add_argument("--reachable", type=int, nargs="*", default=[], help="n for the reachable-state engine")
    p.add_argument("--method", default="prefix-tree",
                   help="verify's method for the sweep (the CPU reference ran the prefix tree; 'auto' would "
                        "now pick the reachable-states engine)")
    p.add_argument("--reachable-width", type=int, default=4)
    p.add_argument("--reachable-precision", default="fixed:8:4")
    p.add_argument("--out", help="write the JSON here")
    args = p.parse_args(argv)
    result = run(args)
    _write(args, result)
    if not args.out:
        print(json.dumps(result, indent=1))
    reach_bad = any("error" in r or not r.get("equal_to_numpy", True) for r in result.get("reachable", []))
    return 1 if reach_bad or any("error" in r for r in result["runs"]) else 0


if __name__ == "__main__":
    raise SystemExit(main())
