"""Attention at long N: last-position attention in O(N·m) and blocked causal attention.

Three tables, each against a reference measured in the same run (CONVENTIONS: no timed tests):

1. **Last position.**  One query per instance and head against N keys
   (``last_position_attention``: O(N·(d_k+d_v)) work, no N x N matrix) and its exact fixed-point
   form (``exact_attention_sums`` on a ``fixed:16:8`` grid, what a protocol sends), against the
   naive kernel that builds the whole ``(B, H, N, N)`` score matrix and keeps its last row.  The
   naive kernel runs where its matrix fits in ``--naive-limit`` bytes (512 MiB); ``speed-up`` =
   naive / ours.
2. **Blocked causal attention** (``softmax_attention``: blocks of query rows, at most
   ``2^21`` score entries at a time) against the naive full-matrix kernel: time, and peak memory
   traced with ``tracemalloc`` (NumPy reports its buffers to it) in a separate run.
3. **A whole 1-layer Transformer** at N = 65536: ``forward`` (the last-position path) and one
   party's ``partial`` at ``fixed:16:8``; and ``forward`` against ``forward_all`` (every
   position, blocked) at N = 8192, where the quadratic pass still takes seconds.

Usage::

    python benchmarks/bench_attention.py                  # ~2-3 minutes on 2 shared cores
    python benchmarks/bench_attention.py --quick          # N up to 4096 (seconds)
    python benchmarks/bench_attention.py --out attention.json

Times are the best of ``--repeats`` runs (1 for the largest cells), wall clock: on a shared
machine they move with its load, the ratios less so.  Default block size of the blocked kernel:
``2^21`` score entries (16 MiB), small enough for the allocator to recycle its buffers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from commcomp.precision import parse_precision  # noqa: E402
from models.transformer import Transformer  # noqa: E402
from models.transformer.attention import (AttentionGrid, exact_attention_sums,  # noqa: E402
                                          last_position_attention, naive_attention,
                                          softmax_attention)

MiB = 2.0 ** 20


def best_time(fn, repeats: int) -> float:
    return measure(fn, repeats, traced=False)[0]


def measure(fn, repeats: int, traced: bool = True) -> tuple[float, int]:
    """(best seconds of ``repeats`` runs, peak traced bytes of the first run)."""
    best, peak = float("inf"), 0
    for i in range(max(1, repeats)):
        if traced and i == 0:
            tracemalloc.start()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        if traced and i == 0:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    return best, peak


def last_position_rows(lengths, B, H, d, naive_limit, repeats):
    rng = np.random.default_rng(0)
    grid = AttentionGrid(parse_precision("fixed:16:8"), parse_precision("fixed:16:8"), "bench", "fixed:16:8")
    rows = []
    for N in lengths:
        Q = rng.normal(size=(B, H, N, d)) / np.sqrt(d)
        K, V = rng.normal(size=(B, H, N, d)), rng.normal(size=(B, H, N, d))
        q = Q[:, :, -1, :]
        reps = repeats if N <= 16384 else 1
        ours = best_time(lambda: last_position_attention(q, K, V, scale=1.0), reps)
        shift = np.full((B, H), 8.0)
        exact = best_time(lambda: exact_attention_sums(q, K, V, scale=1.0, shift=shift, grid=grid), reps)
        matrix = B * H * N * N * 8
        naive = None
        if matrix <= naive_limit:
            naive = best_time(lambda: naive_attention(Q, K, V, scale=1.0)[:, :, -1], reps)
            err = np.abs(naive_attention(Q, K, V, scale=1.0)[:, :, -1]
                         - last_position_attention(q, K, V, scale=1.0)).max()
            assert err < 1e-10, err
        rows.append({"N": N, "B": B, "H": H, "d": d, "ours_s": ours, "exact_s": exact,
                     "naive_s": naive, "naive_matrix_MiB": matrix / MiB,
                     "speedup": None if naive is None else naive / ours})
    return rows


def causal_rows(lengths, H, d, naive_limit, repeats):
    rng = np.random.default_rng(1)
    rows = []
    for N in lengths:
        Q, K, V = (rng.normal(size=(1, H, N, d)) for _ in range(3))
        reps = repeats if N <= 4096 else 1
        run = lambda: softmax_attention(Q, K, V, scale=d ** -0.5, causal=True)  # noqa: E731
        blocked, blocked_peak = measure(run, reps)
        matrix = H * N * N * 8
        naive = naive_peak = None
        if matrix <= naive_limit:
            run_naive = lambda: naive_attention(Q, K, V, scale=d ** -0.5, causal=True)  # noqa: E731
            naive, naive_peak = measure(run_naive, reps)
            assert np.abs(run_naive() - run()).max() < 1e-10
        rows.append({"N": N, "H": H, "d": d, "blocked_s": blocked, "blocked_peak_MiB": blocked_peak / MiB,
                     "naive_s": naive, "naive_peak_MiB": None if naive_peak is None else naive_peak / MiB,
                     "naive_matrix_MiB": matrix / MiB,
                     "inputs_MiB": 4 * H * N * d * 8 / MiB})
    return rows


def model_rows(N, n_all, repeats):
    model = Transformer.random(16, 32, 1, 4, 8, 8, 64, 4, positional="sinusoidal", seed=0)
    rng = np.random.default_rng(2)
    tokens, short = rng.integers(0, 16, size=(1, N)), rng.integers(0, 16, size=(1, n_all))
    fixed = model.with_precision("fixed:16:8")
    q = fixed.query(tokens[:, -1], N - 1)
    half = np.arange(N // 2)
    cells = [("forward, last position, float64", N, lambda: model.forward(tokens)),
             ("forward, last position, fixed:16:8 (exact sums)", N, lambda: fixed.forward(tokens)),
             ("partial over N/2 positions, fixed:16:8", N,
              lambda: fixed.partial(tokens, half, query=q)),
             ("forward, last position, float64", n_all, lambda: model.forward(short)),
             ("forward_all, every position, blocked", n_all, lambda: model.forward_all(short))]
    out = []
    for name, n, fn in cells:
        seconds, peak = measure(fn, 1 if "forward_all" in name else repeats)
        out.append({"what": name, "N": n, "seconds": seconds, "peak_MiB": peak / MiB})
    return out


def fmt(x, spec=".3f"):
    return "—" if x is None else format(x, spec)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 4096 only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--naive-limit", type=float, default=2.0 ** 29,
                        help="largest N x N score matrix (bytes) the naive kernel may build")
    parser.add_argument("--out", type=Path, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    lengths = (256, 1024, 4096) if args.quick else (1024, 4096, 8192, 16384, 65536)
    t0 = time.perf_counter()
    res = {"last_position": last_position_rows(lengths, 1, 1, 32, args.naive_limit, args.repeats),
           "causal": causal_rows(lengths, 1, 16, args.naive_limit, args.repeats),
           "model": model_rows(lengths[-1], lengths[-3], args.repeats)}
    print("\n## Last-position attention, B=1, H=1, d_k=d_v=32 (seconds)\n")
    print("| N | ours O(N·m) | exact fixed:16:8 sums | naive N×N | naive matrix MiB | speed-up |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in res["last_position"]:
        print(f"| {r['N']} | {fmt(r['ours_s'], '.4f')} | {fmt(r['exact_s'], '.4f')} | "
              f"{fmt(r['naive_s'], '.4f')} | {r['naive_matrix_MiB']:.0f} | {fmt(r['speedup'], '.0f')} |")
    print("\n## Causal attention over every position, B=1, H=1, d=16 (seconds, peak MiB)\n")
    print("| N | blocked s | blocked peak MiB | naive s | naive peak MiB | N×N matrix MiB | Q,K,V,out MiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in res["causal"]:
        print(f"| {r['N']} | {r['blocked_s']:.3f} | {r['blocked_peak_MiB']:.0f} | {fmt(r['naive_s'])} | "
              f"{fmt(r['naive_peak_MiB'], '.0f')} | {r['naive_matrix_MiB']:.0f} | {r['inputs_MiB']:.0f} |")
    print("\n## A 1-layer Transformer (d=32, H=4, d_k=d_v=8, sinusoidal), B=1\n")
    print("| what | N | seconds | peak MiB |")
    print("|---|---:|---:|---:|")
    for r in res["model"]:
        print(f"| {r['what']} | {r['N']} | {r['seconds']:.3f} | {r['peak_MiB']:.0f} |")
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    if args.out:
        args.out.write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
