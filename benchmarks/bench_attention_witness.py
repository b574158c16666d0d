"""Witnesses for random 1-layer Transformers at the N where their bound bites (issue 21).

For each task (string-equality, string-disjointness, Dyck), width (1, 2) and precision (bfloat16,
float32; float64 with ``--float64``) the problem size n is the crossover of the task's 1-layer
Transformer separation at that precision (read from the catalogue and the explicit weights by
:func:`reductions.separations.ladder.crossover`, nothing typed here), and the n whose sequence
is about ``--tokens`` tokens (default 1400). Each row times :func:`find_witness` with
``method="auto"`` (the zero-sum engine: sorting, then the lattice) and reports the method that
found the witness, the seconds, and whether the witness was re-checked (messages equal bit for
bit and the unsplit model's outputs identical, one answer wrong). A row that finds nothing says so.

``--hybrid`` adds the hybrid (the registry's Mamba stack + one attention layer, width 2) at about
``--tokens`` tokens on string-equality and string-disjointness, at fixed:8:4, bfloat16 and float32:
its witnesses come from the windows its recurrence forgets (reductions/search/attention/hybrid.py).

Target (issue 21): under 30 s per row on 2 cores. Timings move with the machine's load; the load
average is printed with them, and each row gives the process's CPU seconds (user + system, one
thread: OPENBLAS_NUM_THREADS=1) beside the wall seconds.

Usage::

    python benchmarks/bench_attention_witness.py                       # bfloat16 and float32, widths 1 and 2
    python benchmarks/bench_attention_witness.py --float64 --widths 1  # float64 too (slow: BKZ-30 at k = n)
    python benchmarks/bench_attention_witness.py --out results.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TASKS = ["string-equality", "string-disjointness", "dyck"]


def crossover_n(task: str, precision: str):
    """The problem size n where the 1-layer Transformer's bound passes the explicit weights' width."""
    from reductions.separations.ladder import WidthCurves, crossover, find_separations

    seps = [s for s in find_separations([task], precision, weak=["tf1"]) if s.weak_layers == 1]
    if not seps:
        return None
    curves = WidthCurves(seps[0], precision)
    return crossover(curves.lower, curves.explicit) or crossover(curves.lower, curves.catalogue)


def n_for_tokens(task: str, tokens: int) -> int:
    from reductions.registry import get_reduction

    red = get_reduction(task)
    n = 1
    while red.length(n + 1) <= tokens:
        n += 1
    return n


def run_row(task, width, precision, n, where, arch="transformer", time_limit=None):
    from reductions.registry import get_reduction
    from reductions.search.witness import find_witness

    t, c = time.perf_counter(), time.process_time()
    if arch == "hybrid":  # the zero-sum engine alone: auto would go on to birthday sampling when it finds nothing
        out = find_witness(task, "hybrid", n, precision, width=width, seed=0, method="lattice",
                           time_limit=time_limit)
    else:
        out = find_witness(task, "transformer", n, precision, width=width, layers=1, seed=0, time_limit=time_limit)
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    checked = bool(out["found"] and out.get("messages_equal") and out.get("outputs_identical")
                   and out["truth_x"] != out["truth_x_prime"])
    return {"task": task, "arch": arch, "width": width, "precision": precision, "n": n,
            "N": int(get_reduction(task).length(n)), "at": where, "found": out["found"], "method": out["method"],
            "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
            "rechecked": checked, "bits_per_message": out["bits_per_message"],
            "lower_bound_bits": out["lower_bound_bits"], "note": out["note"][:160]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=TASKS)
    ap.add_argument("--widths", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--precisions", nargs="+", default=["bfloat16", "float32"])
    ap.add_argument("--float64", action="store_true", help="also float64")
    ap.add_argument("--tokens", type=int, default=1400)
    ap.add_argument("--max-tokens", type=int, default=4096,
                    help="skip sizes whose sequence is longer (float64 EQ's crossover is N = 55,363)")
    ap.add_argument("--hybrid", action="store_true", help="also the hybrid (Mamba + attention) rows")
    ap.add_argument("--only-hybrid", action="store_true", help="only the hybrid rows")
    ap.add_argument("--time-limit", type=float, default=None, help="witness --time-limit for each row")
    ap.add_argument("--out", help="write the rows as JSON")
    args = ap.parse_args(argv)
    precisions = args.precisions + (["float64"] if args.float64 else [])
    rows = []
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'task':<20} {'arch':<6} {'m':>2} {'precision':<9} {'n':>5} {'N':>5} {'at':<10} {'method':<9} {'s':>7} "
          f"{'cpu s':>7}  found/re-checked")

    def show(r, where):
        print(f"{r['task']:<20} {r['arch'][:6]:<6} {r['width']:>2} {r['precision']:<9} {r['n']:>5} {r['N']:>5} "
              f"{where:<10} {r['method']:<9} {r['seconds']:>7.2f} {r['cpu_seconds']:>7.2f}  "
              f"{r['found']}/{r['rechecked']}", flush=True)

    for task in ([] if args.only_hybrid else args.tasks):
        for precision in precisions:
            sizes = [(crossover_n(task, precision), "crossover"), (n_for_tokens(task, args.tokens), f"~{args.tokens}")]
            for width in args.widths:
                for n, where in sizes:
                    from reductions.registry import get_reduction

                    if n is None or get_reduction(task).length(n) > args.max_tokens:
                        print(f"{task:<20} {width:>2} {precision:<9} {n!s:>5} skipped ({where}: over --max-tokens)")
                        continue
                    r = run_row(task, width, precision, n, where, time_limit=args.time_limit)
                    rows.append(r)
                    show(r, where)
    if args.hybrid or args.only_hybrid:
        for task in [t for t in args.tasks if t != "dyck"]:  # Dyck's reduction is no prefix/suffix split
            n = n_for_tokens(task, args.tokens)
            for precision in ["fixed:8:4"] + args.precisions:
                r = run_row(task, 2, precision, n, f"~{args.tokens}", "hybrid", args.time_limit)
                rows.append(r)
                show(r, f"~{args.tokens}")
    print(f"load average {os.getloadavg()[0]:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0 if all(r["found"] == r["rechecked"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
