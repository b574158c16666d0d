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
largest n (from 12 up) whose exhaustive run takes under ``--minute`` seconds, per method.

Usage::

    python benchmarks/bench_simulate.py                   # the issue's sizes (~10 min on 2 shared cores)
    python benchmarks/bench_simulate.py --quick           # 10,000 instances, n = 14 (~1 min)
    python benchmarks/bench_simulate.py --lift --out results.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from reductions.simulate import prepare, run_batch, verify  # noqa: E402
from reductions.simulate.running import run_blocks  # noqa: E402
from reductions.witness import find_witness  # noqa: E402


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


def exhaustive(n: int, width: int, precision: str, methods=("prefix-tree", "plain")) -> dict:
    rows = {}
    for method in methods:
        out = verify("index-lookup", "lstm", n, precision, width=width, exhaustive=True, method=method)
        rows[method] = {"instances": out["instances"], "seconds": out["seconds"],
                        "seconds_protocol": out["seconds_protocol"],
                        "seconds_unsplit": out["seconds_reference"], "faithful": out["faithful"],
                        "distinct_messages": out["distinct_messages"]}
    if len(methods) == 2:
        rows["speedup"] = rows["plain"]["seconds"] / rows["prefix-tree"]["seconds"]
    return {"n": n, "width": width, "precision": precision, **rows}


def witness(n: int = 24) -> dict:
    out = find_witness("index-lookup", "lstm", n, "fixed:4:2", width=2, seed=0)
    return {k: out[k] for k in ("found", "method", "tried", "bits_per_message", "lower_bound_bits", "seconds",
                                "x", "x_prime", "y", "wrong_on")}


def lift(width: int, minute: float, start_n: int = 12, stop_n: int = 22) -> dict:
    best = {}
    for method in ("plain", "prefix-tree"):
        best[method] = None
        for n in range(start_n, stop_n + 1):
            t0 = time.perf_counter()
            verify("index-lookup", "lstm", n, "float32", width=width, exhaustive=True, method=method)
            seconds = time.perf_counter() - t0
            print(f"  lift {method}: n = {n} in {seconds:.1f} s", file=sys.stderr)
            if seconds > minute:
                break
            best[method] = {"n": n, "seconds": seconds}
    return {"width": width, "minute": minute, **best}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 instances and n = 14")
    parser.add_argument("--instances", type=int, help="random instances (default 100,000)")
    parser.add_argument("--n-exhaustive", type=int, help="exhaustive n (default 16)")
    parser.add_argument("--lift", action="store_true", help="also the width-64 minute test (slow)")
    parser.add_argument("--minute", type=float, default=60.0, help="seconds for --lift (default 60)")
    parser.add_argument("--out", help="write the results as JSON")
    args = parser.parse_args(argv)
    instances = args.instances or (10_000 if args.quick else 100_000)
    n_ex = args.n_exhaustive or (14 if args.quick else 16)
    results = {}
    verify("index-lookup", "lstm", 6, "float32", width=16, exhaustive=True)  # warm up (imports, caches)
    print(f"1. protocol vs unsplit: {instances} random instances, N = 1024, LSTM m = 16, float32", file=sys.stderr)
    results["protocol_vs_unsplit"] = r = protocol_vs_unsplit(instances, 1023, 16, "float32")
    print(f"   all {r['instances']}: protocol {r['seconds_protocol']:.2f} s, unsplit {r['seconds_unsplit']:.2f} s: "
          f"ratio {r['ratio']:.3f}; faithful {r['faithful']}")
    print(f"   one chunk of {r['chunk']}, best of 3: protocol {r['best_protocol']:.2f} s, unsplit "
          f"{r['best_unsplit']:.2f} s: ratio {r['best_ratio']:.3f} (encode + decode {r['seconds_codec_chunk']:.3f} s, "
          f"{100 * r['codec_share']:.1f}% of the protocol)")
    print(f"2. exhaustive INDEX -> Index Lookup, n = {n_ex}, LSTM m = 16, float32", file=sys.stderr)
    results["exhaustive"] = e = exhaustive(n_ex, 16, "float32")
    for method in ("prefix-tree", "plain"):
        row = e[method]
        print(f"   {method:11s}: {row['instances']} instances in {row['seconds']:.2f} s (protocol "
              f"{row['seconds_protocol']:.2f} s, unsplit {row['seconds_unsplit']:.2f} s), faithful {row['faithful']}")
    print(f"   prefix tree speed-up: {e['speedup']:.2f}x")
    print("3. witness: LSTM m = 2 at fixed:4:2, Index Lookup n = 24", file=sys.stderr)
    results["witness"] = w = witness()
    print(f"   found {w['found']} by {w['method']} after {w['tried']} inputs in {w['seconds']:.2f} s "
          f"({w['bits_per_message']}-bit message, lower bound {w['lower_bound_bits']} bits)")
    if args.lift:
        print(f"4. exhaustive in {args.minute:.0f} s: LSTM m = 64, float32", file=sys.stderr)
        results["lift"] = lf = lift(64, args.minute)
        print(f"   plain: n = {lf['plain'] and lf['plain']['n']}, prefix tree: n = "
              f"{lf['prefix-tree'] and lf['prefix-tree']['n']}")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
