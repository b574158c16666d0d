"""IEEE bit-pattern rounding (bfloat16, float16's cousin formats) per array size: the chunked passes of
``IEEEFloat._round_bits_numpy`` against whole-array passes, measured in the same run.

The reference is the whole-array version of the same formula (every pass over the full array, as
commcomp did before the chunks): the ratio is what the chunks buy at each size.  Both give the same
bits (checked here on every array).  Sizes are those of the checks in ``commcomp separations``:
a recurrent step's (B, m) (2 to 2^11 numbers) up to a 2-layer check's (B, N, m) (about 2^21).

Usage::

    python benchmarks/bench_precision.py            # about 2 s
    python benchmarks/bench_precision.py --format bfloat16 --repeat 9
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from commcomp.precision import parse_precision  # noqa: E402

_ABS = np.uint64(0x7FFF_FFFF_FFFF_FFFF)
_SIGN = np.uint64(0x8000_0000_0000_0000)
_INF = np.float64(math.inf).view(np.uint64)


def whole_array_round(fmt, x: np.ndarray) -> np.ndarray:
    """The reference: the same rounding with every pass over the whole array (no chunks)."""
    drop = np.uint64(52 - fmt.mantissa_bits)
    u = np.ascontiguousarray(x).view(np.uint64)
    r = u >> drop
    r &= np.uint64(1)
    r += u
    r += np.uint64((1 << (52 - fmt.mantissa_bits - 1)) - 1)
    r >>= drop
    r <<= drop
    magnitude = u & _ABS
    special = magnitude >= _INF
    tiny = magnitude < np.float64(2.0 ** (1 - fmt.bias)).view(np.uint64)
    tiny &= magnitude != 0
    over = (r & _ABS) > np.float64(fmt.max_value).view(np.uint64)
    over &= ~special
    if over.any():
        r[over] = (u[over] & _SIGN) | _INF
    if special.any():
        r[special] = np.where(np.isnan(x[special]), np.float64(math.nan).view(np.uint64), u[special])
    out = r.view(np.float64)
    if tiny.any():
        with np.errstate(all="ignore"):
            out[tiny] = fmt._round_generic(np, x[tiny])
    return out


def best_of(fn, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", default="bfloat16")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    fmt = parse_precision(args.format)
    rng = np.random.default_rng(0)
    print(f"{args.format}: best of {args.repeat}, seconds per call")
    print(f"{'numbers':>9} {'zeros':>6} {'whole s':>10} {'chunked s':>10} {'whole/chunked':>14}")
    for log_size in (1, 6, 11, 16, 19, 21):
        for zeros in (False, True):
            x = rng.standard_normal(1 << log_size) * 10.0 ** rng.integers(-3, 4, 1 << log_size)
            if zeros:
                x[::3] = 0.0  # a ReLU's output
            repeat = args.repeat * (50 if log_size <= 11 else 1)
            reference = best_of(lambda: whole_array_round(fmt, x), repeat)
            chunked = best_of(lambda: fmt.round(x), repeat)
            same = np.array_equal(whole_array_round(fmt, x).view(np.uint64), fmt.round(x).view(np.uint64))
            if not same:
                raise SystemExit(f"different bits at 2^{log_size} numbers")
            print(f"{1 << log_size:>9} {str(zeros):>6} {reference:10.2e} {chunked:10.2e} {reference / chunked:14.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
