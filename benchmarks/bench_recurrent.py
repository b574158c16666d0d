"""Batched recurrent forward passes: our LSTM/GRU kernels against torch CPU, and the cost of rounding.

The grid: LSTM and GRU, float32 and float64, B in {1, 64, 256}, m in {16, 64, 256}, N = 256
(``--length`` changes N; ``--only`` measures any cell, as big as you like).  Each side of a cell
runs in its own subprocess (numpy and torch in one process fight over the cores: a torch LSTM went
from 7.3 ms to 100 ms right after a numpy BLAS call), with one thread by default
(``OMP/OPENBLAS/MKL_NUM_THREADS`` and ``torch.set_num_threads``); the two sides alternate for
``--rounds`` rounds (default 3) and each reports the best of at least ``repeats`` runs and of at
least ``--min-seconds`` of runs; the best over the rounds counts.  Every row also prints the
1-minute load average, since the machine is shared.  Tables are ratios measured in the same run:

* ``ours / torch``: our ``run_layers`` on float inputs ``(B, N, m)`` (one layer, width m, input
  width m) over ``torch.nn.LSTM`` / ``nn.GRU`` (``batch_first``, ``inference_mode``), same dtype;
* ``rounded / plain``: our forward pass with the state rounded to a precision after every step
  over the same pass in reference mode (no rounding).

Clocks.  Each run is timed on two clocks: CPU time of the process (``time.process_time``) and wall
time.  With ``--threads 1`` the ratio column is the CPU-time ratio: on a machine shared with other
jobs, wall time also counts the slices the OS gave to them (a cell measured 18 us/step and then
25 us/step minutes apart), CPU time much less so; ``wall`` shows the wall-clock ratio of the same
runs.  With more threads the ratio is the wall-clock one (CPU time would add the threads up).

Big cells.  A cell needs about ``(2 + G) * B*N*m`` numbers in torch (input, torch's input
projection of every step ``(N, B, G*m)``, output; G = 4 for the LSTM, 3 for the GRU) and
``2 * B*N*m`` in ours (input, output).  A cell that does not fit in ``--memory-gb`` (default:
half the memory available at start) is *streamed*: both implementations read the N steps as
chunks of S steps, carrying the state from chunk to chunk (the same arithmetic and the same
number of steps, timed end to end; the row says ``S``).  On a 24 GiB machine that is B=1024,
N=4096 at m=256 (torch would need 26 GB in float32, 52 GB in float64) and, for the LSTM, at
m=64 in float64 (13 GB); the m=256 cells take a few minutes per implementation on one core.  ``--max-elements``
skips cells with ``B*N*m`` above it (none by default).

B = 1.  At B = 1 a step is a handful of NumPy calls on ``(1, m)`` arrays, each ~0.3-0.5 us of
call overhead whatever the size (one matmul, one add and seven element-wise calls for the LSTM:
~3 us a step), while torch's float32 LSTM runs the whole sequence inside one oneDNN call (~0.5 us
a step): at small m we stay several times slower, and below that a step would need a compiled
kernel.  At m = 256 the weights dominate: every matmul at B = 1 is a matrix-vector product that
streams its matrix, so float inputs at B = 1 are projected up front (``x_t W_x + b`` for every
step, then ``h W_h + u_t``; see :mod:`models.recurrent.projected`), as torch does, instead of one
fused ``[x_t, h, 1] W`` per step (2.8x torch for the LSTM and 4.6x for the GRU in float64 before).

Where a step's time goes (``--profile``, B >= 2).  Per step, CPU microseconds, ours and torch's
in alternated processes: our whole step; the kernel's pre-activation product alone (G products
``(B, 2m+1) @ (2m+1, m)`` over N distinct rows, as the loop makes them); the cell's calls alone
(element-wise work, plus ``h W_hn`` for the GRU); the rest (loop, copies of the inputs into the
rows ``[x_t, h, 1]``, and the two parts evicting each other from the cache); the same product as
one ``(B, 2m+1) @ (2m+1, G*m)`` call; torch's whole step and that one product in torch (its BLAS,
MKL); and GFlop/s of the three products.

Needs the ``reference`` extra (torch).  Usage::

    python benchmarks/bench_recurrent.py                    # the grid: 36 cells (~15 min idle, 2 cores)
    python benchmarks/bench_recurrent.py --quick            # the 6 cells where we were slowest
    python benchmarks/bench_recurrent.py --only lstm:float32:64:16:256 --only gru:float64:1024:256:4096
    python benchmarks/bench_recurrent.py --profile lstm:float32:64:256:256   # where a step's time goes
    python benchmarks/bench_recurrent.py --threads 2 --out results.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's models, in the workers too

ARCHS = ("lstm", "gru")
DTYPES = ("float32", "float64")
BATCHES = (1, 64, 256)
WIDTHS = (16, 64, 256)
LENGTH = 256
GATES = {"lstm": 4, "gru": 3}
# --quick: the cells where we were slowest against torch (arch, dtype, B, m), at N = 256
QUICK_CELLS = (("lstm", "float32", 64, 16), ("lstm", "float32", 64, 256), ("lstm", "float32", 256, 64),
               ("lstm", "float32", 1, 256), ("lstm", "float64", 1, 256), ("gru", "float64", 1, 256))


def _time(fn, repeats: int, min_seconds: float = 1.0) -> tuple[float, float]:
    """Best CPU seconds and best wall seconds of ``fn``, called at least ``repeats`` times and for
    at least ``min_seconds`` (many tries of a short pass, to catch moments free of other jobs)."""
    cpu = wall = float("inf")
    start, calls = time.perf_counter(), 0
    while calls < repeats or time.perf_counter() - start < min_seconds:
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
        calls += 1
    return cpu, wall


def worker(spec: dict) -> tuple[float, float]:
    """(CPU, wall) seconds of one forward pass (best of ``repeats``), run inside the subprocess.

    With ``spec["stream"] = S`` the pass reads ``N / S`` chunks of S steps (one chunk of inputs,
    read again and again), carrying the state.
    """
    import numpy as np

    B, N, m, repeats = spec["B"], spec["N"], spec["m"], spec["repeats"]
    S = spec.get("stream") or N
    x = np.random.default_rng(0).standard_normal((B, S, m), dtype=spec["dtype"])  # no float64 temporary
    chunks = range(N // S)
    if spec["impl"] == "torch":
        import torch

        torch.set_num_threads(spec["threads"])
        cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[spec["arch"]]
        module = cls(m, m, batch_first=True).to(getattr(torch, spec["dtype"]))
        xt = torch.from_numpy(x)

        def run():
            state = None
            for _ in chunks:
                _, state = module(xt, state)

        with torch.inference_mode():
            module(xt[:, :2])  # warm up
            return _time(run, repeats, spec["min_seconds"])
    from models.registry import build_model

    model = build_model(spec["arch"], vocab_size=2, width=m, n_outputs=1, dtype=spec["dtype"],
                        precision=spec.get("precision"))

    def run():
        state = None
        for _ in chunks:
            state, _ = model.run_layers(x, state)

    model.run_layers(x[:, :2])  # warm up
    return _time(run, repeats, spec["min_seconds"])


def profile_worker(spec: dict) -> dict:
    """CPU seconds per step of the parts of a step at ``B >= 2`` (the fused path), in the subprocess.

    Ours: ``step`` (the whole pass / N), ``product`` (the kernel's pre-activation product over N
    distinct rows ``[x_t, h, 1]``: G products ``(B, K) @ (K, m)``, K = 2m + 1, as the loop makes
    it), ``cell`` (the cell's calls over N steps: element-wise work, plus ``h W_hn`` for the GRU),
    ``one_product`` (the same pre-activations as one ``(B, K) @ (K, G*m)`` product).  Torch:
    ``step`` and ``one_product`` (``torch.mm``, its BLAS).
    """
    import numpy as np

    B, N, m, dt, G = spec["B"], spec["N"], spec["m"], spec["dtype"], GATES[spec["arch"]]
    K, repeats, seconds = 2 * m + 1, spec["repeats"], spec["min_seconds"]
    rng = np.random.default_rng(1)
    rows = list(rng.standard_normal((N, B, K), dtype=dt))  # N distinct (B, K) rows
    w_flat = rng.uniform(-0.05, 0.05, (K, G * m)).astype(dt)  # (K, G*m)
    out = np.empty((B, G * m), dtype=dt)
    step = worker(spec)[0] / N
    if spec["impl"] == "torch":
        import torch

        w_t, out_t, rows_t = torch.from_numpy(w_flat), torch.from_numpy(out), [torch.from_numpy(r) for r in rows]

        def one_product():
            for r in rows_t:
                torch.mm(r, w_t, out=out_t)

        return {"step": step, "one_product": _time(one_product, repeats, seconds)[0] / N}
    from models.registry import build_model

    layer = build_model(spec["arch"], vocab_size=2, width=m, n_outputs=1, dtype=dt).layers[0]
    _, g, cell = layer.numpy_cell(layer.init_state(B), B)
    w = layer.w["W_fused"]  # (G, K, m)
    hs = list(np.zeros((N + 1, B, m), dtype=dt))

    def product():
        for r in rows:
            np.matmul(r, w, g)

    def cells():
        for h, h_out in zip(hs[:-1], hs[1:]):
            cell(h, h_out)

    def one_product():
        for r in rows:
            np.matmul(r, w_flat, out)

    parts = {"step": step}
    for name, fn in (("product", product), ("cell", cells), ("one_product", one_product)):
        parts[name] = _time(fn, repeats, seconds)[0] / N
    return parts


def _run_worker(spec: dict, threads: int, min_seconds: float):
    """What ``--worker`` prints for ``spec``, run in a subprocess with ``threads`` threads."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    spec = dict(spec, threads=threads, min_seconds=min_seconds)
    out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(spec: dict, threads: int, min_seconds: float = 1.0) -> tuple[float, float]:
    cpu, wall = _run_worker(spec, threads, min_seconds)
    return cpu, wall


def profile(cells, threads: int, min_seconds: float, rounds: int) -> list[dict]:
    """Print and return the per-step parts of each cell (ours and torch alternated, min over rounds)."""
    print(f"per step, microseconds (CPU), best of {rounds} alternated rounds; GF/s = 2 B K G m / time")
    print(f"{'arch':5} {'dtype':8} {'B':>4} {'m':>4} {'N':>4} {'ours':>8} {'product':>8} {'cell':>7} "
          f"{'rest':>6} {'1-prod':>8} {'torch':>8} {'mkl-1':>8} {'GF/s':>6} {'1-GF/s':>6} {'mkl':>6} {'load':>5}")
    rows = []
    for arch, dtype, B, m, N in cells:
        spec = dict(arch=arch, dtype=dtype, B=B, m=m, N=N, repeats=_repeats(B, N, m), stream=None)
        ours, ref = {}, {}
        for _ in range(rounds):
            for best, impl in ((ours, "numpy"), (ref, "torch")):
                for k, v in _run_worker(dict(spec, impl=impl, profile=True), threads, min_seconds).items():
                    best[k] = min(best.get(k, float("inf")), v)
        flops = 2 * B * (2 * m + 1) * GATES[arch] * m
        row = dict(spec, ours=ours, torch=ref, load=os.getloadavg()[0])
        rows.append(row)
        us = {k: 1e6 * v for k, v in ours.items()}
        print(f"{arch:5} {dtype:8} {B:4d} {m:4d} {N:4d} {us['step']:8.1f} {us['product']:8.1f} "
              f"{us['cell']:7.1f} {us['step'] - us['product'] - us['cell']:6.1f} {us['one_product']:8.1f} "
              f"{1e6 * ref['step']:8.1f} {1e6 * ref['one_product']:8.1f} {flops / ours['product'] / 1e9:6.1f} "
              f"{flops / ours['one_product'] / 1e9:6.1f} {flops / ref['one_product'] / 1e9:6.1f} "
              f"{row['load']:5.2f}", flush=True)
    return rows


def _pair(first: dict, second: dict, threads: int, min_seconds: float = 1.0,
          rounds: int = 3) -> tuple[tuple, tuple]:
    """(CPU, wall) best times of two specs, each in its own process, alternated over ``rounds``
    (one round for cells of more than 2^30 multiply-adds: those run for minutes)."""
    work = first["B"] * first["N"] * first["m"] ** 2
    rounds = rounds if work < 2 ** 30 else 1
    a = b = (float("inf"), float("inf"))
    for _ in range(rounds):
        a = tuple(map(min, a, measure(first, threads, min_seconds)))
        b = tuple(map(min, b, measure(second, threads, min_seconds)))
    return a, b


def _repeats(B, N, m) -> int:
    work = B * N * m * m
    return 5 if work < 2 ** 26 else 3 if work < 2 ** 30 else 1


def _available_gb() -> float:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2 ** 20
    except OSError:
        pass
    return 8.0


def stream_length(arch: str, dtype: str, B: int, N: int, m: int, memory_gb: float) -> int | None:
    """``None`` when the whole sequence fits in ``memory_gb`` for both implementations, else the
    longest chunk S (a power of two dividing N) that does."""
    itemsize = 4 if dtype == "float32" else 8
    numbers = 2 + GATES[arch]  # torch: input, input projection of every step, output (ours: 2)
    need = numbers * B * m * itemsize / 2 ** 30  # GB per step of the sequence
    if need * N <= memory_gb:
        return None
    S = N
    while S > 1 and need * S > memory_gb:
        S //= 2
    return S


def _parse_cell(cell: str, parser=None):
    """``ARCH:DTYPE:B:M:N`` -> ``(arch, dtype, B, m, N)`` (a parser error on anything else)."""
    try:
        arch, dtype, B, m, N = cell.split(":")
        if arch not in ARCHS or dtype not in DTYPES:
            raise ValueError(cell)
        return arch, dtype, int(B), int(m), int(N)
    except ValueError:
        if parser is None:
            raise
        parser.error(f"bad cell {cell!r}: expected ARCH:DTYPE:B:M:N, e.g. lstm:float32:64:16:256")


def _cells(args, parser=None):
    if args.only:
        for cell in args.only:
            yield _parse_cell(cell, parser)
        return
    if args.quick:
        for arch, dtype, B, m in QUICK_CELLS:
            yield arch, dtype, B, m, args.length
        return
    for arch, dtype, B, m in itertools.product(ARCHS, DTYPES, BATCHES, WIDTHS):
        yield arch, dtype, B, m, args.length


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description="recurrent forward passes vs torch CPU")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true",
                        help=f"only the cells where we were slowest: {QUICK_CELLS}")
    parser.add_argument("--length", type=int, default=LENGTH, help="sequence length N of the grid")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternated runs of each side per cell (the best counts)")
    parser.add_argument("--only", action="append", metavar="ARCH:DTYPE:B:M:N",
                        help="measure this cell only (repeatable)")
    parser.add_argument("--profile", action="append", metavar="ARCH:DTYPE:B:M:N",
                        help="instead of the ratios: where a step's time goes, ours and torch's "
                             "(B >= 2; repeatable)")
    parser.add_argument("--max-elements", type=float, default=float("inf"),
                        help="skip cells with B*N*m above this")
    parser.add_argument("--memory-gb", type=float, default=None,
                        help="stream cells that need more (default: half of MemAvailable)")
    parser.add_argument("--min-seconds", type=float, default=1.0,
                        help="time each implementation for at least this long per round")
    parser.add_argument("--no-rounding", action="store_true", help="skip the rounding overhead table")
    parser.add_argument("--precision", default="fixed:16:8", help="format of the rounding overhead table")
    parser.add_argument("--out", help="write the raw timings as JSON")
    args = parser.parse_args(argv)
    if args.worker:
        spec = json.loads(args.worker)
        print(json.dumps(profile_worker(spec) if spec.get("profile") else worker(spec)))
        return {}
    if args.profile:
        cells = [_parse_cell(cell, parser) for cell in args.profile]
        if any(B < 2 for _, _, B, _, _ in cells):
            parser.error("--profile takes cells with B >= 2 (B = 1 projects the inputs first)")
        return {"threads": args.threads, "profile": profile(cells, args.threads, args.min_seconds, args.rounds)}
    cells = list(_cells(args, parser))  # a bad --only cell stops here, before any output
    memory_gb = args.memory_gb if args.memory_gb is not None else 0.5 * _available_gb()
    clock = 0 if args.threads == 1 else 1  # index of the clock of the ratio column
    rows, skipped = [], []
    print(f"threads={args.threads}; ratio = ours / torch, {('CPU', 'wall')[clock]} time (best of "
          f"repeats, separate processes); wall = the wall-clock ratio; memory budget {memory_gb:.1f} GB; "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'arch':5} {'dtype':8} {'B':>5} {'m':>4} {'N':>5} {'ours_s':>9} {'torch_s':>9} {'ratio':>6} "
          f"{'wall':>6} {'stream':>6} {'load':>5}")
    for arch, dtype, B, m, N in cells:
        if B * N * m > args.max_elements:
            skipped.append((arch, dtype, B, m, N))
            continue
        stream = stream_length(arch, dtype, B, N, m, memory_gb)
        spec = dict(arch=arch, dtype=dtype, B=B, m=m, N=N, repeats=_repeats(B, N, m), stream=stream)
        ours, ref = _pair(dict(spec, impl="numpy"), dict(spec, impl="torch"), args.threads,
                          args.min_seconds, args.rounds)
        ratio, wall = ours[clock] / ref[clock], ours[1] / ref[1]
        load = os.getloadavg()[0]  # the 1-minute load average after the cell (a shared machine)
        rows.append(dict(spec, ours_cpu_s=ours[0], ours_wall_s=ours[1], torch_cpu_s=ref[0],
                         torch_wall_s=ref[1], ratio=ratio, wall_ratio=wall, load=load))
        print(f"{arch:5} {dtype:8} {B:5d} {m:4d} {N:5d} {ours[clock]:9.4f} {ref[clock]:9.4f} {ratio:6.2f} "
              f"{wall:6.2f} {stream or '-':>6} {load:5.2f}", flush=True)
    if skipped:
        print(f"skipped (B*N*m > {args.max_elements:.0f}): {skipped}")
    overhead = []
    if not args.no_rounding and not args.only:
        print(f"\nrounding overhead: {args.precision} after every step, rounded / plain (float64 compute)")
        print(f"{'arch':5} {'B':>5} {'m':>4} {'N':>5} {'plain_s':>9} {'round_s':>9} {'ratio':>6}")
        batches, widths = ((1, 64), (16, 64)) if args.quick else (BATCHES, WIDTHS)
        for arch, B, m in itertools.product(ARCHS, batches, widths):
            N = 128 if B > 1 else 64
            spec = dict(arch=arch, dtype="float64", B=B, m=m, N=N, repeats=_repeats(B, N, m), impl="numpy")
            plain, rounded = (t[clock] for t in _pair(spec, dict(spec, precision=args.precision),
                                                      args.threads, args.min_seconds,
                                                      args.rounds))
            overhead.append(dict(spec, plain_s=plain, rounded_s=rounded, ratio=rounded / plain))
            print(f"{arch:5} {B:5d} {m:4d} {N:5d} {plain:9.4f} {rounded:9.4f} {rounded / plain:6.2f}",
                  flush=True)
    result = {"threads": args.threads, "forward": rows, "skipped": skipped, "rounding": overhead}
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=1)
    return result


if __name__ == "__main__":
    main()
