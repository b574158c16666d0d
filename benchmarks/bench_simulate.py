"""Models as protocols: what a simulation costs next to the unsplit forward pass, and exhaustive runs.

Three measurements (the issue's), each reported with ratios measured in the same run:

1. **protocol / unsplit** on random INDEX -> Index Lookup instances at N = 1024 (n = 1023) with an
   LSTM of width 16 at float32: ``verify`` runs the protocol (Alice's pass, the state encoded and
   decoded, Bob's step) and the unsplit model on the same chunks of the same batch and times each;
   the codec (``state_to_bits`` + ``bits_to_state``) is also timed on its own. Target: <= 1.3x.
2. **exhaustive** INDEX -> Index Lookup at n = 16 (all 65,536 x and all 16 queries, 1,048,576
   instances) with the same LSTM: the prefix tree of Alice's inputs (shared prefixes computed once)
   against the plain row-by-row run (``--method plain``).
3. **witness** search for an LSTM of width 2 at ``fixed:4:2`` on Index Lookup with n = 24.

``--lift`` adds the issue's "what an LSTM of width 64 verifies exhaustively in a minute": the
largest n (from ``--lift-from`` up) whose exhaustive run takes under ``--minute`` seconds, per
method, for the model as ``prepare`` builds it (float64 arithmetic, the state rounded to float32
after every step) and for the same weights computing in float32 (``model.with_dtype("float32")``).

Every timing is printed with the load average (``os.getloadavg``) it ran under: the machine is
shared, and timings move with the load.

BLAS threads: the script runs NumPy's BLAS on one thread unless ``--blas-threads`` says otherwise
(it sets ``OPENBLAS_NUM_THREADS`` and friends before NumPy is imported, unless they are set
already). Measured here on 2 cores shared with other work (load 2 to 4): exhaustive n = 14 with
an LSTM of width 64 took 15.3 s with OpenBLAS's default 2 threads and 3.8 s with 1; n = 17, 85 s
and 16 to 19 s (its threads wait for a core that another process holds). At load 1 two threads
made the step's (2048, 64) x (64, 256) matmul 1.7x faster, about 15% of an LSTM step.

Usage::

    python benchmarks/bench_simulate.py                   # the issue's sizes (~10 min on 2 shared cores)
    python benchmarks/bench_simulate.py --quick           # 10,000 instances, n = 14 (~1 min)
    python benchmarks/bench_simulate.py --lift --out results.json
    python benchmarks/bench_simulate.py --only lift --lift-from 17   # only the minute test
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def _blas_threads(argv) -> str:
    """``--blas-threads N`` from the command line (default 1; 0: the library's own default), set in
    the environment before NumPy loads its BLAS."""
    threads = "1"
    for i, arg in enumerate(argv):
        if arg == "--blas-threads" and i + 1 < len(argv):
            threads = argv[i + 1]
        elif arg.startswith("--blas-threads="):
            threads = arg.split("=", 1)[1]
    if threads != "0":
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, threads)
    return os.environ.get("OPENBLAS_NUM_THREADS", "library default")


BLAS_THREADS = _blas_threads(sys.argv[1:]) if __name__ == "__main__" else None

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from reductions.simulate import prepare, run_batch, verify  # noqa: E402
from reductions.simulate.running import run_blocks  # noqa: E402
from reductions.search.witness import find_witness  # noqa: E402


def protocol_vs_unsplit(instances: int, n: int, width: int, precision: str, repeats: int = 3) -> dict:
    """The whole run once (sums over its chunks), then one chunk ``repeats`` times, alternating
    protocol and unsplit pass, best of each (the machine is shared: single timings are noisy)."""
    out = verify("index-lookup", "lstm", n, precision, width=width, instances=instances, seed=0)
    sim = prepare("index-lookup", "lstm", n, precision, width=width)
    x, y = sim.problem.sample(n, 4096, np.random.default_rng(0))
    best_protocol = best_unsplit = float("inf")
    for _ in range(repeats):
        res = run_batch(sim, x, y)
        best_protocol = min(best_protocol, res.seconds_protocol)
        best_unsplit = min(best_unsplit, res.seconds_reference)
    # the codec alone, on the same chunk's states
    state, _ = run_blocks(sim.model, sim.reduction.encode(x, y, n).tokens[:, :n])
    start = time.perf_counter()
    sim.model.bits_to_state(sim.model.state_to_bits(state))
    codec = time.perf_counter() - start
    return {"instances": out["instances"], "N": n + 1, "width": width, "precision": precision,
            "faithful": out["faithful"], "seconds_protocol": out["seconds_protocol"],
            "seconds_unsplit": out["seconds_reference"],
            "ratio": out["seconds_protocol"] / out["seconds_reference"],
            "chunk": 4096, "best_protocol": best_protocol, "best_unsplit": best_unsplit,
            "best_ratio": best_protocol / best_unsplit, "seconds_codec_chunk": codec,
            "codec_share": codec / best_protocol, "bits_per_message": out["bits_per_message"]}


def load() -> float:
    """The 1-minute load average (what ``uptime`` shows first)."""
    return round(os.getloadavg()[0], 2)


def exhaustive(n: int, width: int, precision: str, methods=("prefix-tree", "plain")) -> dict:
    rows = {}
    for method in methods:
        before = load()
        out = verify("index-lookup", "lstm", n, precision, width=width, exhaustive=True, method=method)
        rows[method] = {"instances": out["instances"], "seconds": out["seconds"],
                        "seconds_protocol": out["seconds_protocol"],
                        "seconds_unsplit": out["seconds_reference"], "faithful": out["faithful"],
                        "distinct_messages": out["distinct_messages"], "load": [before, load()]}
    if len(methods) == 2:
        rows["speedup"] = rows["plain"]["seconds"] / rows["prefix-tree"]["seconds"]
    return {"n": n, "width": width, "precision": precision, **rows}


def witness(n: int = 24) -> dict:
    out = find_witness("index-lookup", "lstm", n, "fixed:4:2", width=2, seed=0)
    return {k: out[k] for k in ("found", "method", "tried", "bits_per_message", "lower_bound_bits", "seconds",
                                "x", "x_prime", "y", "wrong_on")}


def lift(width: int, minute: float, start_n: int = 12, stop_n: int = 22,
         methods=("plain", "prefix-tree"), computes=("float64", "float32")) -> dict:
    """The largest n whose exhaustive run takes at most ``minute`` seconds, per compute dtype and
    method (``None`` when even ``start_n`` takes longer); every n tried, with its load, in
    ``tried``. ``float64``: the model ``prepare`` builds; ``float32``: its weights computing in
    float32 (the state is float32 in both)."""
    out = {"width": width, "minute": minute, "tried": []}
    for compute in computes:
        for method in methods:
            key = method if compute == "float64" else f"{method}/float32-compute"
            out[key] = None
            for n in range(start_n, stop_n + 1):
                model = prepare("index-lookup", "lstm", n, "float32", width=width).model.with_dtype(compute)
                before, t0 = load(), time.perf_counter()
                res = verify("index-lookup", n=n, model=model, exhaustive=True, method=method)
                seconds = time.perf_counter() - t0
                row = {"compute": compute, "method": method, "n": n, "seconds": seconds, "load": [before, load()],
                       "seconds_protocol": res["seconds_protocol"], "seconds_unsplit": res["seconds_reference"],
                       "faithful": res["faithful"], "instances": res["instances"]}
                out["tried"].append(row)
                print(f"  lift {key}: n = {n} in {seconds:.1f} s (protocol {res['seconds_protocol']:.1f} s, "
                      f"unsplit {res['seconds_reference']:.1f} s; load {before} -> {row['load'][1]}), "
                      f"faithful {res['faithful']}", file=sys.stderr)
                if seconds > minute:
                    break
                out[key] = {"n": n, "seconds": seconds, "load": row["load"]}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 instances and n = 14")
    parser.add_argument("--instances", type=int, help="random instances (default 100,000)")
    parser.add_argument("--n-exhaustive", type=int, help="exhaustive n (default 16)")
    parser.add_argument("--lift", action="store_true", help="also the width-64 minute test (slow)")
    parser.add_argument("--minute", type=float, default=60.0, help="seconds for --lift (default 60)")
    parser.add_argument("--lift-from", type=int, default=12, help="first n of --lift (default 12)")
    parser.add_argument("--lift-methods", default="plain,prefix-tree", help="methods of --lift")
    parser.add_argument("--lift-computes", default="float64,float32", help="compute dtypes of --lift")
    parser.add_argument("--only", choices=["ratio", "exhaustive", "witness", "lift"], help="one measurement")
    parser.add_argument("--blas-threads", default="1", help="BLAS threads (default 1; 0: the library's)")
    parser.add_argument("--out", help="write the results as JSON")
    args = parser.parse_args(argv)
    instances = args.instances or (10_000 if args.quick else 100_000)
    n_ex = args.n_exhaustive or (14 if args.quick else 16)
    wanted = {args.only} if args.only else {"ratio", "exhaustive", "witness"} | ({"lift"} if args.lift else set())
    results = {"blas_threads": BLAS_THREADS}
    print(f"BLAS threads: {BLAS_THREADS}; load {load()}", file=sys.stderr)
    verify("index-lookup", "lstm", 6, "float32", width=16, exhaustive=True)  # warm up (imports, caches)
    if "ratio" in wanted:
        print(f"1. protocol vs unsplit: {instances} random instances, N = 1024, LSTM m = 16, float32", file=sys.stderr)
        before = load()
        results["protocol_vs_unsplit"] = r = protocol_vs_unsplit(instances, 1023, 16, "float32")
        r["load"] = [before, load()]
        print(f"   all {r['instances']}: protocol {r['seconds_protocol']:.2f} s, unsplit {r['seconds_unsplit']:.2f} s: "
              f"ratio {r['ratio']:.3f}; faithful {r['faithful']} (load {before} -> {r['load'][1]})")
        print(f"   one chunk of {r['chunk']}, best of 3: protocol {r['best_protocol']:.2f} s, unsplit "
              f"{r['best_unsplit']:.2f} s: ratio {r['best_ratio']:.3f} (encode + decode {r['seconds_codec_chunk']:.3f} s, "
              f"{100 * r['codec_share']:.1f}% of the protocol)")
    if "exhaustive" in wanted:
        print(f"2. exhaustive INDEX -> Index Lookup, n = {n_ex}, LSTM m = 16, float32", file=sys.stderr)
        results["exhaustive"] = e = exhaustive(n_ex, 16, "float32")
        for method in ("prefix-tree", "plain"):
            row = e[method]
            print(f"   {method:11s}: {row['instances']} instances in {row['seconds']:.2f} s (protocol "
                  f"{row['seconds_protocol']:.2f} s, unsplit {row['seconds_unsplit']:.2f} s), faithful "
                  f"{row['faithful']} (load {row['load'][0]} -> {row['load'][1]})")
        print(f"   prefix tree speed-up: {e['speedup']:.2f}x")
    if "witness" in wanted:
        print("3. witness: LSTM m = 2 at fixed:4:2, Index Lookup n = 24", file=sys.stderr)
        results["witness"] = w = witness()
        print(f"   found {w['found']} by {w['method']} after {w['tried']} inputs in {w['seconds']:.2f} s "
              f"({w['bits_per_message']}-bit message, lower bound {w['lower_bound_bits']} bits)")
    if "lift" in wanted:
        print(f"4. exhaustive in {args.minute:.0f} s: LSTM m = 64, float32", file=sys.stderr)
        results["lift"] = lf = lift(64, args.minute, start_n=args.lift_from,
                                    methods=tuple(args.lift_methods.split(",")),
                                    computes=tuple(args.lift_computes.split(",")))
        for key, best in lf.items():
            if key not in ("width", "minute", "tried"):
                print(f"   {key}: n = {best and best['n']}" + (f" in {best['seconds']:.1f} s (load "
                      f"{best['load'][0]} -> {best['load'][1]})" if best else ""))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
