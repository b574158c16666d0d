"""Batched recurrent forward passes: our LSTM/GRU kernels against torch CPU, and the cost of rounding.

Every measurement runs in its own subprocess (numpy and torch in one process fight over the cores:
a torch LSTM went from 7.3 ms to 100 ms right after a numpy BLAS call), with the same thread count
(``OMP/OPENBLAS/MKL_NUM_THREADS`` and ``torch.set_num_threads``), and reports the best of
``repeats`` runs.  Tables are ratios measured in the same run:

* ``ours / torch``: our ``run_layers`` on float inputs ``(B, N, m)`` (one layer, width m, input
  width m) over ``torch.nn.LSTM`` / ``nn.GRU`` (``batch_first``, ``inference_mode``), same dtype;
* ``rounded / plain``: our forward pass with the state rounded to a precision after every step
  over the same pass in reference mode (no rounding).

Needs the ``reference`` extra (torch).  Usage::

    python benchmarks/bench_recurrent.py                    # the grid of the issue (10-15 min, 2 busy cores)
    python benchmarks/bench_recurrent.py --quick            # a small grid (~1 min)
    python benchmarks/bench_recurrent.py --threads 2 --out results.json

Cells whose inputs ``B * N * m`` exceed ``--max-elements`` (default ``2**26``: 0.5 GB per float64
array, skipping B=1024 with N=4096 at m >= 64) are skipped and listed: each holds several GB
(inputs, outputs, torch's workspace) and takes minutes per implementation on 2 cores.
Rows with B = 1 (m <= 64, N = 256) show the per-step call overhead.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time

ARCHS = ("lstm", "gru")
DTYPES = ("float32", "float64")
BATCHES = (64, 1024)
WIDTHS = (16, 64, 256)
LENGTHS = (256, 4096)


def _time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def worker(spec: dict) -> float:
    """Seconds of one forward pass (best of ``repeats``), run inside the subprocess."""
    import numpy as np

    B, N, m, repeats = spec["B"], spec["N"], spec["m"], spec["repeats"]
    x = np.random.default_rng(0).standard_normal((B, N, m)).astype(spec["dtype"])
    if spec["impl"] == "torch":
        import torch

        torch.set_num_threads(spec["threads"])
        cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[spec["arch"]]
        module = cls(m, m, batch_first=True).to(getattr(torch, spec["dtype"]))
        xt = torch.from_numpy(x)
        with torch.inference_mode():
            module(xt[:, :2])  # warm up
            return _time(lambda: module(xt), repeats)
    from models.registry import build_model

    model = build_model(spec["arch"], vocab_size=2, width=m, n_outputs=1, dtype=spec["dtype"],
                        precision=spec.get("precision"))
    model.run_layers(x[:, :2])  # warm up
    return _time(lambda: model.run_layers(x), repeats)


def measure(spec: dict, threads: int) -> float:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    spec = dict(spec, threads=threads)
    out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], env=env,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _pair(first: dict, second: dict, threads: int) -> tuple[float, float]:
    """Best times of two specs, alternated over rounds (2 rounds for small cells) against bursts of load."""
    rounds = 2 if first["B"] * first["N"] * first["m"] ** 2 < 2 ** 30 else 1
    a = b = float("inf")
    for _ in range(rounds):
        a = min(a, measure(first, threads))
        b = min(b, measure(second, threads))
    return a, b


def _repeats(B, N, m) -> int:
    work = B * N * m * m
    return 5 if work < 2 ** 26 else 3 if work < 2 ** 30 else 1


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description="recurrent forward passes vs torch CPU")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="B in {1, 64}, m in {16, 64}, N = 256")
    parser.add_argument("--max-elements", type=float, default=2.0 ** 26)
    parser.add_argument("--precision", default="fixed:16:8", help="format of the rounding overhead table")
    parser.add_argument("--out", help="write the raw timings as JSON")
    args = parser.parse_args(argv)
    if args.worker:
        print(worker(json.loads(args.worker)))
        return {}
    batches, widths, lengths = ((1, 64), (16, 64), (256,)) if args.quick else ((1,) + BATCHES, WIDTHS, LENGTHS)
    rows, skipped = [], []
    print(f"threads={args.threads}; ratio = ours / torch (best of repeats, separate processes)")
    print(f"{'arch':5} {'dtype':8} {'B':>5} {'m':>4} {'N':>5} {'ours_s':>9} {'torch_s':>9} {'ratio':>6}")
    for arch, dtype, B, m, N in itertools.product(ARCHS, DTYPES, batches, widths, lengths):
        if B == 1 and (N > 256 or m > 64):
            continue  # B = 1 rows show the per-step call overhead only
        if B * N * m > args.max_elements:
            skipped.append((arch, dtype, B, m, N))
            continue
        spec = dict(arch=arch, dtype=dtype, B=B, m=m, N=N, repeats=_repeats(B, N, m))
        ours, ref = _pair(dict(spec, impl="numpy"), dict(spec, impl="torch"), args.threads)
        rows.append(dict(spec, ours_s=ours, torch_s=ref, ratio=ours / ref))
        print(f"{arch:5} {dtype:8} {B:5d} {m:4d} {N:5d} {ours:9.4f} {ref:9.4f} {ours / ref:6.2f}", flush=True)
    print(f"skipped (B*N*m > {args.max_elements:.0f}): {skipped}")
    print(f"\nrounding overhead: {args.precision} after every step, rounded / plain (float64 compute)")
    print(f"{'arch':5} {'B':>5} {'m':>4} {'N':>5} {'plain_s':>9} {'round_s':>9} {'ratio':>6}")
    overhead = []
    for arch, B, m in itertools.product(ARCHS, batches, widths):
        N = 128 if B > 1 else 64
        spec = dict(arch=arch, dtype="float64", B=B, m=m, N=N, repeats=_repeats(B, N, m), impl="numpy")
        plain, rounded = _pair(spec, dict(spec, precision=args.precision), args.threads)
        overhead.append(dict(spec, plain_s=plain, rounded_s=rounded, ratio=rounded / plain))
        print(f"{arch:5} {B:5d} {m:4d} {N:5d} {plain:9.4f} {rounded:9.4f} {rounded / plain:6.2f}", flush=True)
    result = {"threads": args.threads, "forward": rows, "skipped": skipped, "rounding": overhead}
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=1)
    return result


if __name__ == "__main__":
    main()
