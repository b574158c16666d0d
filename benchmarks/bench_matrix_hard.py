"""Partition and cover numbers where search is the job: solvers compared, the hard 10x10 matrices
against EBMF's recorded seconds, the largest random and gap matrices per measure, and boofun.

Run:  python benchmarks/bench_matrix.py --suite solvers|hard10|sizes|boofun|all [--budget 10]
      (or this file directly, same options)

* ``solvers``: χ₁ and χ₀ of every hard10 matrix with each installed backend (CaDiCaL through PySAT,
  CP-SAT, z3; the same CNF), and the old branch and bound (``solver="search"``) in a child process
  killed at the budget: total seconds and the worst matrix per solver.
* ``hard10``: every matrix of ``hard10.npz`` with the default solver: exact χ₁ and χ = χ₁ + χ₀, each
  timed (target under 4 s), against EBMF's recorded seconds (ones; ones + zeros for χ), with the
  ratio where EBMF needed more than 10 s; values compared with EBMF's.
* ``sizes``: random (density 1/2) and gap matrices (:mod:`commcomp.matrix.generators`: union,
  kronecker, xor) of growing side, two seeds each, every measure (χ₁, χ₀, C¹, C⁰, D) in a child
  process killed at the budget: the largest side at which both seeds finish.
* ``boofun``: ``commcomp.matrix.measure_problem`` (every measure) against boofun's
  ``analysis.communication_complexity.deterministic_cc`` on IP_n and EQ_n, n = 7 and 8 (Alice and
  Bob n bits each), both in this run, when boofun is installed.

The data lie at ``../shared/data`` relative to the repository (or ``$COMMCOMP_SHARED_DATA``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from commcomp.matrix import deterministic_cc, measure_problem, problem_matrix
from commcomp.matrix.generators import gap_matrix, random_matrix
from commcomp.matrix.rectangles import rectangle_number
from commcomp.matrix.solvers import SOLVERS, available_solvers

from bench_matrix import in_child  # benchmarks/ is on sys.path: run as a script or from bench_matrix

MEASURES = {
    "chi_1": lambda m: rectangle_number(m, True, kind="partition").value,
    "chi_0": lambda m: rectangle_number(m, False, kind="partition").value,
    "cover_1": lambda m: rectangle_number(m, True, kind="cover").value,
    "cover_0": lambda m: rectangle_number(m, False, kind="cover").value,
    "D": lambda m: deterministic_cc(m).deterministic_cc,
    "D_with_chi": lambda m: deterministic_cc(m, partition=(
        rectangle_number(m, True, kind="partition"),
        rectangle_number(m, False, kind="partition"))).deterministic_cc,
}


def data_dir() -> Path | None:
    root = Path(__file__).resolve().parents[1]
    for base in (os.environ.get("COMMCOMP_SHARED_DATA"), root.parent / "shared" / "data",
                 root.parent.parent / "shared" / "data"):
        if base and (Path(base) / "hard10.npz").exists():
            return Path(base)
    return None


def hard10():
    """``(npz matrices, folder)`` of the hard10 data, or None (said once) when it is not found."""
    base = data_dir()
    if base is None:
        print("hard10 data not found: skipped")
        return None
    return np.load(base / "hard10.npz"), base


def _both_colours(m, solver, kind):
    if solver == "search":  # the old branch and bound, its cell limit raised as in the issue
        from commcomp.matrix import partition as old

        old.MAX_CELLS = 256
    return (rectangle_number(m, True, kind=kind, solver=solver).value,
            rectangle_number(m, False, kind=kind, solver=solver).value)


def suite_solvers(budget):
    found = hard10()
    if found is None:
        return
    data, _ = found
    names = available_solvers() + ["search"]
    for kind in ("partition", "cover"):
        print(f"\n## {kind} numbers (both colours) of the {len(data.files)} hard10 matrices, each "
              f"solver (budget {budget:g} s per matrix; the fallback with its cell limit raised to 256)")
        print(f"{'solver':<30} {'total s':>8} {'worst s':>8}  {'worst matrix':<12} {'unfinished':>10}  "
              f"agrees")
        reference = None
        for name in names:
            total, worst, worst_name, unfinished, values = 0.0, 0.0, "", [], {}
            for key in data.files:
                m = data[key].astype(bool)
                status, secs, value = in_child(_both_colours, (m, name, kind), budget)
                if status != "ok":
                    unfinished.append(status)
                    continue
                values[key] = value
                total += secs
                if secs > worst:
                    worst, worst_name = secs, key
            reference = values if reference is None else reference
            agrees = all(reference.get(k, v) == v for k, v in values.items())
            label = SOLVERS[name].description if name in SOLVERS else "branch and bound (no solver)"
            gone = (f"{len(unfinished)} ({', '.join(sorted(set(unfinished)))})" if unfinished else "0")
            print(f"{label:<30} {total:8.2f} {worst:8.2f}  {worst_name:<12} {gone:>10}  "
                  f"{'yes' if agrees else 'NO'}", flush=True)


def suite_hard10(budget):
    found = hard10()
    if found is None:
        return
    data, base = found
    meta = json.loads((base / "hard10.json").read_text())["matrices"]
    print(f"\n## hard10 with {SOLVERS[available_solvers()[0]].description if available_solvers() else 'search'}"
          f": exact chi_1 and chi, against EBMF's recorded seconds")
    print(f"{'matrix':<8} {'chi_1':>5} {'EBMF':>5} {'s':>6} {'EBMF s':>7} {'ratio':>7}   "
          f"{'chi':>4} {'EBMF':>5} {'s':>6} {'EBMF s':>7} {'ratio':>7}  lower side of chi_1 / chi_0")
    worst = 0.0
    for key in data.files:
        m = data[key].astype(bool)
        info = meta[key]
        t = time.perf_counter()
        ones = rectangle_number(m, True, kind="partition")
        t_ones = time.perf_counter() - t
        zeros = rectangle_number(m, False, kind="partition")
        t_chi = time.perf_counter() - t
        worst = max(worst, t_chi)
        e1 = info["ebmf_seconds_ones_min"]
        e = e1 + info["ebmf_seconds_zeros_min"]
        chi_e = info["ebmf_partition_ones"] + info["ebmf_partition_zeros"]
        r1 = f"{e1 / t_ones:6.0f}x" if e1 > 10 else ""
        r = f"{e / t_chi:6.0f}x" if e > 10 else ""
        flag = "" if (ones.value, ones.value + zeros.value) == (info["ebmf_partition_ones"], chi_e) \
            else "  VALUES DIFFER"
        print(f"{key:<8} {ones.value:>5} {info['ebmf_partition_ones']:>5} {t_ones:6.2f} {e1:7.2f} "
              f"{r1:>7}   {ones.value + zeros.value:>4} {chi_e:>5} {t_chi:6.2f} {e:7.2f} {r:>7}  "
              f"{ones.lower_bound_by} / {zeros.lower_bound_by}{flag}", flush=True)
    print(f"slowest chi: {worst:.2f} s (target < 4 s)")


def _family(kind):
    if kind == "random":
        return lambda side, seed: random_matrix(side, side, seed=seed)
    return lambda side, seed: gap_matrix(side, kind=kind, seed=seed)


def _run_measure(measure, kind, side, seed):
    return MEASURES[measure](_family(kind)(side, seed))


def suite_sizes(budget, seeds=(0, 1)):
    families = {"random": (12, 16, 20, 24), "union": (8, 12, 16, 20, 24),
                "kronecker": (8, 12, 16, 20, 24), "xor": (8, 12, 16, 20, 24)}
    print(f"\n## largest side finished in {budget:g} s by both seeds {seeds}, per measure "
          f"(time of the slower seed at that side; where it stopped)")
    print(f"{'family':<10} " + " ".join(f"{m:<26}" for m in MEASURES))
    for kind, sides in families.items():
        cells = []
        for measure in MEASURES:
            best, stop = "-", ""
            for side in sides:
                times = []
                for seed in seeds:
                    status, secs, _ = in_child(_run_measure, (measure, kind, side, seed), budget)
                    if status != "ok":
                        stop = f"{side}: {status}"
                        break
                    times.append(secs)
                if stop:
                    break
                best = f"{side} ({max(times):.2f}s)"
            cells.append(f"{best} {('| ' + stop) if stop else ''}")
        print(f"{kind:<10} " + " ".join(f"{c:<26}" for c in cells), flush=True)


def _boofun_dcc(n, name):
    from boofun import create
    from boofun.analysis.communication_complexity import deterministic_cc as boofun_dcc

    m = problem_matrix(name, n)  # (2^n, 2^n): boofun reads index (x << n) | y
    f = create(m.reshape(-1).astype(int).tolist())
    out = boofun_dcc(f)
    return out["rank"], out["fooling_set_size"]


def _ours(n, name):
    rep = measure_problem(name, n)
    return rep.rank_rational, rep.fooling_set_size, rep.deterministic_cc, rep.partition_number


def suite_boofun(budget):
    try:
        import boofun  # noqa: F401
    except ImportError:
        print("\nboofun not installed: comparison skipped")
        return
    print("\n## every commcomp measure (exact D, chi, C, with certificates) against boofun's "
          "deterministic_cc bounds (rank, fooling set, greedy partition)")
    print(f"{'problem':<14} {'n':>2} {'ours s':>7} {'boofun s':>9} {'ratio':>7}  ours (rank, fool, D, chi) "
          f"/ boofun (rank, fool)")
    for name in ("inner-product", "equality"):
        for n in (7, 8):
            s1, t1, v1 = in_child(_ours, (n, name), budget)
            s2, t2, v2 = in_child(_boofun_dcc, (n, name), budget * 12)
            ratio = f"{t2 / t1:6.0f}x" if s1 == s2 == "ok" else ""
            f1 = f"{t1:7.2f}" if s1 == "ok" else s1
            f2 = f"{t2:9.2f}" if s2 == "ok" else s2
            print(f"{name:<14} {n:>2} {f1:>7} {f2:>9} {ratio:>7}  {v1} / {v2}", flush=True)


SUITES = {"solvers": suite_solvers, "hard10": suite_hard10, "sizes": suite_sizes,
          "boofun": suite_boofun}


def run(suite: str, budget: float) -> None:
    print(f"# {os.cpu_count()} CPUs; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"solvers installed: {', '.join(available_solvers()) or 'none'}")
    for name in (SUITES if suite == "all" else [suite]):
        SUITES[name](budget)
    print(f"# load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", choices=[*SUITES, "all"], default="all")
    ap.add_argument("--budget", type=float, default=10.0)
    args = ap.parse_args()
    run(args.suite, args.budget)
