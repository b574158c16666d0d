"""Encoding cost on NumPy: every registered reduction's ``Reduction.encode`` at a batch of 4096.

Each reduction has one encoder, written with Array API operations and run on NumPy through
``array_api_compat.numpy`` (issue 19, item 4). Two ratios, each measured in the same run:

1. **encode / copy**: the best time of ``Reduction.encode(x, y, n)`` over the best time of copying
   what it wrote (the tokens, and the float features for Nearest Neighbour and qSA): how far from
   a plain copy of its output each encoder is (a gather from a small table in cache, NN's
   features, can beat a copy that reads its source from memory).
2. **this tree / another tree** (``--against PATH``): the same reduction of another checkout's
   ``reductions`` package (say the tree before a change: ``git archive <commit> | tar -x -C PATH``),
   loaded under another name beside this tree's ``commcomp``, timed on the same instances,
   alternating with this tree's encoder timing by timing (the machine is shared: the load moves
   between two runs made one after the other): the ratio after / before.

The batch is 4096 instances at n = 64 and n = 1024, except where the features do not fit in
memory at that batch: Nearest Neighbour at n = 1024 (``(B, 2049, 128)`` float64: 8.6 GB at 4096)
runs 256 instances and qSA at n = 1024 (``(B, 2049, 1027)``: 69 GB at 4096) 16. Short calls are
timed in loops of at least 20 ms; every figure is the best of ``--repeats`` and is printed with the
load average it ran under.

Usage::

    python benchmarks/bench_encode.py                          # encode / copy (~1 min)
    python benchmarks/bench_encode.py --against /tmp/before    # and after / before (~2 min)
    python benchmarks/bench_encode.py --ns 64 --repeats 9 --out results.json
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from commcomp.problems import get_problem  # noqa: E402
from reductions.registry import list_reductions  # noqa: E402

BATCH = 4096
# (task, n) -> batch where ``BATCH`` instances' features do not fit in memory
SMALLER_BATCH = {("nearest-neighbour", 1024): 256, ("qsa", 1024): 16}


def _loops(fn, at_least: float = 0.02) -> int:
    start = time.perf_counter()
    fn()
    return max(1, int(at_least / max(time.perf_counter() - start, 1e-9)))


def _timed(fn, loops: int) -> float:
    start = time.perf_counter()
    for _ in range(loops):
        fn()
    return (time.perf_counter() - start) / loops


def best_of(fns, repeats: int) -> list[float]:
    """Seconds per call of each of ``fns``, timed in turn (one loop of each, ``repeats`` times): the
    best of each. Alternating keeps a change of load from favouring one of them."""
    loops = [_loops(fn) for fn in fns]
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], _timed(fn, loops[i]))
    return best


def other_reductions(root: Path) -> dict:
    """The registered reductions of the checkout at ``root``, its ``reductions`` package loaded as
    ``_against_reductions`` (its modules import each other relatively, ``commcomp`` is this tree's)."""
    package = root / "reductions"
    spec = importlib.util.spec_from_file_location("_against_reductions", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["_against_reductions"] = module
    spec.loader.exec_module(module)
    return {r.name: r for r in importlib.import_module("_against_reductions.registry").list_reductions()}


def measure(ns, repeats: int, against: dict | None = None, seed: int = 0) -> list[dict]:
    rows = []
    for red in sorted(list_reductions(), key=lambda r: r.name):
        for n in ns:
            batch = SMALLER_BATCH.get((red.task.name, n), BATCH)
            x, y = get_problem(red.problem).sample(n, batch, np.random.default_rng(seed))
            enc = red.encode(x, y, n).task_batch
            written = [a for a in (enc.tokens, enc.features) if a is not None]
            fns = [lambda: red.encode(x, y, n), lambda: [np.array(a, copy=True) for a in written]]
            if against is not None:
                fns.append(lambda other=against[red.name]: other.encode(x, y, n))
            times = best_of(fns, repeats)
            row = {"reduction": red.name, "n": n, "batch": batch, "encode_s": times[0], "copy_s": times[1],
                   "encode_per_copy": times[0] / times[1]}
            if against is not None:
                row.update(before_s=times[2], after_per_before=times[0] / times[2])
            rows.append(row)
            del enc, written, fns
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", type=int, nargs="+", default=[64, 1024])
    parser.add_argument("--repeats", type=int, default=7, help="timings of each (best kept)")
    parser.add_argument("--against", help="another checkout's root: its encoders timed on the same instances")
    parser.add_argument("--out", help="write the rows as JSON here")
    args = parser.parse_args(argv)

    against = other_reductions(Path(args.against).resolve()) if args.against else None
    start_load = os.getloadavg()[0]
    rows = measure(args.ns, args.repeats, against)
    load = (start_load, os.getloadavg()[0])
    print(f"{'reduction':34} {'n':>5} {'batch':>5} {'encode ms':>10} {'/ copy':>7}"
          + (f" {'before ms':>10} {'after/before':>12}" if against else "") + f"   (load {load[0]:.2f} .. {load[1]:.2f})")
    for row in rows:
        text = (f"{row['reduction']:34} {row['n']:>5} {row['batch']:>5} {1e3 * row['encode_s']:>10.3f} "
                f"{row['encode_per_copy']:>7.2f}")
        if against:
            text += f" {1e3 * row['before_s']:>10.3f} {row['after_per_before']:>12.2f}"
        print(text)
    if args.out:
        Path(args.out).write_text(json.dumps({"load": load, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
