"""Benchmark the modern recurrent layers: chunked vs per-step, and the cost of rounding.

Two tables, each as ratios against a reference measured in the same run (CONVENTIONS: no timed
tests; timings live here):

1. Linear attention and RetNet: the chunked form (float64 reference mode) against the per-step
   loop, over batch B, length T and chunk size, at width m and H heads.  ``speed-up`` is
   loop time / chunked time.
2. Every architecture: a forward pass (``run_with_output``, L layers) at a precision against the
   same pass without one, both through the per-step loop (``chunk_size=0``, so the ratio is the
   rounding alone).  ``overhead`` = with / without; below 2 means the rounding costs less than the
   forward pass it wraps.

Run ``python benchmarks/bench_recurrent_modern.py`` (1-2 minutes on 2 cores) or add
``--quick`` for a smoke run.  Times are the best of ``--repeats`` runs.  BLAS runs on one thread
unless ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` say otherwise: threaded BLAS on the small
per-step products of a loop costs more than it gains on a shared 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy loads its BLAS

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.recurrent.linear_attention import LinearAttentionLayer  # noqa: E402
from models.recurrent.retnet import RetNetLayer  # noqa: E402
from models.registry import build_model  # noqa: E402

HYPER = {"linear-attention": {"heads": 4, "chunk_size": 0}, "retnet": {"heads": 4, "chunk_size": 0},
         "dss": {"d_state": 16, "complex_state": 1}, "mamba": {"d_state": 16, "d_conv": 4, "expand": 2}}


def best_time(fn, repeats: int) -> float:
    """Best wall time of ``repeats`` calls of ``fn`` (seconds)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def chunked_vs_loop(sizes, width: int, head_options, chunks, repeats: int) -> list[str]:
    rows = ["| layer | B | T | m | H | chunk | loop s | chunked s | speed-up | max abs diff |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for cls in (LinearAttentionLayer, RetNetLayer):
        for (B, T), heads in ((size, h) for size in sizes for h in head_options):
            layer = cls.init(width, width, seed=0, heads=heads)
            x = np.random.default_rng(0).normal(size=(B, T, width))  # (B, T, m)
            layer.chunk_size = 0
            t_loop = best_time(lambda: layer.run_sequence(layer.init_state(B), x), repeats)
            y_loop = layer.run_sequence(layer.init_state(B), x)[1]
            for chunk in chunks:
                t_chunk = best_time(lambda: layer.run_chunked(layer.init_state(B), x, chunk), repeats)
                diff = float(np.abs(layer.run_chunked(layer.init_state(B), x, chunk)[1] - y_loop).max())
                rows.append(f"| {cls.arch} | {B} | {T} | {width} | {heads} | {chunk} | {t_loop:.3f} | "
                            f"{t_chunk:.4f} | {t_loop / t_chunk:.1f}x | {diff:.1e} |")
                print(rows[-1], file=sys.stderr)
    return rows


def rounding_overhead(B: int, T: int, width: int, layers: int, precisions, repeats: int) -> list[str]:
    rows = ["| arch | B | T | m | L | state numbers | precision | no rounding s | rounded s | overhead |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    tokens = np.random.default_rng(1).integers(0, 16, size=(B, T))
    for arch, hyper in HYPER.items():
        model = build_model(arch, vocab_size=16, width=width, n_outputs=2, layers=layers, **hyper)
        t_plain = best_time(lambda: model.run_with_output(tokens), repeats)
        for spec in precisions:
            rounded = model.with_precision(spec)
            t_round = best_time(lambda: rounded.run_with_output(tokens), repeats)
            rows.append(f"| {arch} | {B} | {T} | {width} | {layers} | {model.state_numbers()} | {spec} | "
                        f"{t_plain:.3f} | {t_round:.3f} | {t_round / t_plain:.2f} |")
            print(rows[-1], file=sys.stderr)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one repeat (smoke run)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if args.quick:
        sizes, heads, chunks, repeats, width = [(8, 64)], [2], [16], 1, 16
        round_args = dict(B=8, T=32, width=16, layers=1)
    else:
        sizes, heads, chunks, repeats, width = [(16, 1024), (128, 256)], [1, 4], [32, 128], args.repeats, 64
        round_args = dict(B=64, T=128, width=32, layers=2)
    print(f"BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']}\n")
    print("## Chunked vs per-step (float64 reference mode)\n")
    print("\n".join(chunked_vs_loop(sizes, width, heads, chunks, repeats)))
    print("\n## Rounding overhead (per-step loop both ways)\n")
    print("\n".join(rounding_overhead(precisions=["fixed:16:8", "float32", "bfloat16"],
                                      repeats=repeats, **round_args)))


if __name__ == "__main__":
    main()
