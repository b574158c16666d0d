"""The default ``commcomp separations``, timed per part: each ladder, each claim, and the whole run.

A reference measured in the same run (CONVENTIONS: no timed tests): the import of the package and
one catalogue evaluation, so the shares read the same on a loaded machine.  Printed per ladder
(its crossover search and its checks) and per claim (what the claim adds to the ladders: the
qSA claim builds and checks its own weights, the others reuse the ladders' rows and checks).

Usage::

    python benchmarks/bench_separations.py                # ~15 s on 2 shared cores
    python benchmarks/bench_separations.py --out sep.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--precision", default="bfloat16")
    ap.add_argument("--out", help="write the numbers as JSON")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    from commcomp.bounds import best_lower_bound
    from reductions.separations import separation_ladders
    from reductions.separations.claims import evaluate_claims
    from reductions.separations.special import special_rows
    imported = time.perf_counter() - t0
    t = time.perf_counter()
    best_lower_bound("index-lookup", "elman", 1025, 16)
    one_bound = time.perf_counter() - t

    marks, last = [], [time.perf_counter()]

    def progress(label):
        now = time.perf_counter()
        marks.append((label, now - last[0]))
        last[0] = now

    start = time.perf_counter()
    ladders = separation_ladders(None, args.precision, progress=progress)
    t = time.perf_counter()
    specials = special_rows(args.precision)
    special_s = time.perf_counter() - t
    claims, derived = evaluate_claims(ladders, args.precision)
    total = time.perf_counter() - start

    print(f"import {imported:.2f} s; one catalogue evaluation (reference) {one_bound * 1e3:.1f} ms")
    print(f"{'ladder':<22}{'seconds':>9}{'checks':>9}{'x ref':>9}")
    for (label, seconds), lad in zip(marks, ladders):
        checks = sum(r.seconds for r in lad.rows)
        print(f"{label:<22}{seconds:9.2f}{checks:9.2f}{seconds / one_bound:9.0f}")
    print(f"{'special rows':<22}{special_s:9.2f}")
    print(f"{'claim':<22}{'seconds':>9}  verdict")
    for c in claims + derived:
        print(f"{c.spec.claim:<22}{c.seconds:9.2f}  {c.verdict}")
    print(f"total (ladders + special rows + claims) {total:.2f} s = {total / one_bound:.0f} x ref; "
          f"with the import {total + imported:.2f} s")
    if args.out:
        Path(args.out).write_text(json.dumps({
            "import_s": imported, "reference_s": one_bound, "total_s": total, "special_s": special_s,
            "ladders": [{"label": label, "seconds": s} for label, s in marks],
            "claims": [{"claim": c.spec.claim, "seconds": c.seconds, "verdict": c.verdict}
                       for c in claims + derived]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
