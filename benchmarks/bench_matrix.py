"""How large a problem each exact measure of commcomp.matrix handles within 10 seconds, against a naive
baseline timed in the same run.

Run:  python benchmarks/bench_matrix.py [--budget 10] [--only rank_q,rank_gf2]
      python benchmarks/bench_matrix.py --suite solvers|hard10|sizes|boofun|all   (partition and
      cover numbers by the solver: see benchmarks/bench_matrix_hard.py)

For each measure, n grows from 1 until one call takes longer than the budget (each call runs in its
own process, killed at the budget; the matrix is built before the clock starts) or the measure
refuses the size (TooLargeError: its documented limit). The table gives the largest n finished, the
time it took, and the ratio baseline / commcomp at the largest n both finished.

Baselines: a Python double loop calling f once per pair (matrix); pairwise row comparison (distinct
rows); numpy's float64 SVD ``matrix_rank`` (rank over Q; not exact: the column "svd ok" says whether
it agreed); a numpy uint8 elimination, one pivot at a time (GF(2)); networkx ``max_weight_clique`` on
the whole compatibility graph (fooling set); protocol-tree search over row/column bitmasks with a
memo but no merging of equal rows and no rank pruning (D(f)); exact-cover search over every
monochromatic rectangle with a memo but no bound (partition number).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from functools import lru_cache

import networkx as nx
import numpy as np

from commcomp.errors import TooLargeError
from commcomp.matrix import (deterministic_cc, distinct_rows, largest_fooling_set, partition_number,
                             problem_matrix, rank_gf2, rank_rational)
from commcomp.problems import get_problem


# ---------------------------------------------------------------- naive baselines
def build_loop(name, n):
    prob = get_problem(name)
    xs, ys = prob.alice_inputs(n), prob.bob_inputs(n)
    return np.array([[bool(prob.evaluate(x[None], y[None])[0]) for y in ys] for x in xs])


def rows_pairwise(m):
    reps: list[np.ndarray] = []
    for row in m:
        if not any(np.array_equal(row, r) for r in reps):
            reps.append(row)
    return len(reps)


def rank_svd(m):
    return int(np.linalg.matrix_rank(m.astype(np.float64)))


def gf2_elimination(m):
    a = m.astype(np.uint8)
    r = 0
    for j in range(a.shape[1]):
        hits = np.flatnonzero(a[r:, j]) + r
        if hits.size == 0:
            continue
        a[[r, hits[0]]] = a[[hits[0], r]]
        below = np.flatnonzero(a[:, j])
        below = below[below != r]
        a[below] ^= a[r]
        r += 1
        if r == a.shape[0]:
            break
    return r


def fooling_networkx(m):
    best = 0
    for z in (False, True):
        xs, ys = np.nonzero(m == z)
        if xs.size == 0:
            continue
        cross = m[xs[:, None], ys[None, :]] == z
        fools = ~(cross & cross.T)
        np.fill_diagonal(fools, False)
        best = max(best, nx.max_weight_clique(nx.from_numpy_array(fools.astype(np.int8)), weight=None)[1])
    return best


def tree_unpruned(m):
    rows, cols = m.shape
    bits = [sum(1 << j for j in range(cols) if m[i, j]) for i in range(rows)]

    def mono(rm, cm):
        seen = set()
        for i in range(rows):
            if rm >> i & 1:
                x = bits[i] & cm
                if x not in (0, cm):
                    return False
                seen.add(x == cm)
        return len(seen) <= 1

    def splits(mask):
        low = mask & -mask
        rest = sub = mask & ~low
        while True:
            if low | sub != mask:
                yield low | sub
            if sub == 0:
                return
            sub = (sub - 1) & rest

    @lru_cache(maxsize=None)
    def fits(rm, cm, d):
        if mono(rm, cm):
            return True
        return d > 0 and (any(fits(s, cm, d - 1) and fits(rm & ~s, cm, d - 1) for s in splits(rm))
                          or any(fits(rm, s, d - 1) and fits(rm, cm & ~s, d - 1) for s in splits(cm)))

    d = 0
    while not fits((1 << rows) - 1, (1 << cols) - 1, d):
        d += 1
    return d


def partition_unbounded(m):
    rows, cols = m.shape
    by_first: dict[int, list[int]] = {}
    for rm in range(1, 1 << rows):
        for cm in range(1, 1 << cols):
            sub = m[np.ix_([i for i in range(rows) if rm >> i & 1], [j for j in range(cols) if cm >> j & 1])]
            if sub.all() or not sub.any():
                mask = sum(1 << (i * cols + j) for i in range(rows) if rm >> i & 1
                           for j in range(cols) if cm >> j & 1)
                by_first.setdefault((mask & -mask).bit_length() - 1, []).append(mask)
    full = (1 << (rows * cols)) - 1

    @lru_cache(maxsize=None)
    def fewest(covered):
        if covered == full:
            return 0
        first = (~covered & (covered + 1)).bit_length() - 1
        return 1 + min(fewest(covered | r) for r in by_first[first] if not r & covered)

    return fewest(0)


# name, problem, ours, baseline (each takes the matrix; "build" takes (problem, n))
SERIES = [
    ("matrix", "disjointness", lambda p, n: problem_matrix(p, n), build_loop),
    ("rows", "disjointness", lambda m: distinct_rows(m).distinct_rows, rows_pairwise),
    ("rank_q", "disjointness", lambda m: rank_rational(m).rank, rank_svd),
    ("rank_gf2", "disjointness", lambda m: rank_gf2(m).rank, gf2_elimination),
    ("fooling", "disjointness", lambda m: largest_fooling_set(m).size, fooling_networkx),
    ("fooling_ip", "inner-product", lambda m: largest_fooling_set(m, method="exact").size,
     fooling_networkx),
    ("d_tree", "equality", lambda m: deterministic_cc(m).deterministic_cc, tree_unpruned),
    ("partition", "disjointness", lambda m: partition_number(m).partition_number, partition_unbounded),
]


def _child(fn, args, queue, setup=None):
    try:
        if setup is not None:  # outside the clock (e.g. building the matrix)
            args = setup(*args)
        t = time.perf_counter()
        value = fn(*args)
        queue.put(("ok", time.perf_counter() - t, value))
    except TooLargeError as err:
        queue.put(("limit", 0.0, str(err)))
    except Exception as err:  # reported in the table, not as a traceback
        queue.put(("error", 0.0, f"{type(err).__name__}: {err}"))


def in_child(fn, args, budget, setup=None):
    """(status, seconds, value): ok / limit / error / timeout / crashed, ``fn(*args)`` run in a
    forked process killed at ``budget`` seconds; ``setup(*args)``, if given, makes the arguments in
    the child before the clock starts. Also used by bench_matrix_hard."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(fn, args, queue, setup))
    proc.start()
    proc.join(budget)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return "timeout", None, None
    if queue.empty():
        return "crashed", None, None
    return queue.get()


def _cells_set(fn, problem, n):
    return int(np.asarray(fn(problem, n)).sum())


def timed(kind, fn, problem, n, budget):
    """(status, seconds, value) with status ok / limit / error / timeout, run in a child process."""
    if kind == "matrix":  # the construction is what is timed
        run = in_child(_cells_set, (fn, problem, n), budget + 5)
    else:  # + start-up and matrix construction, which the clock leaves out
        run = in_child(fn, (problem, n), budget + 5, setup=lambda p, k: (problem_matrix(p, k),))
    status, secs, value = run
    if status == "ok" and secs > budget:
        return "timeout", secs, value
    return status, secs, value


def series(kind, fn, problem, budget, n_max):
    """Largest n finished within the budget, and every n's (seconds, value)."""
    done: dict[int, tuple[float, object]] = {}
    stop = ""
    for n in range(1, n_max + 1):
        status, secs, value = timed(kind, fn, problem, n, budget)
        if status != "ok":
            stop = f"n={n}: {status}" + (f" ({secs:.1f} s)" if secs else "")
            break
        done[n] = (secs, value)
    return done, stop


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=10.0, help="seconds per call (default 10)")
    ap.add_argument("--n-max", type=int, default=14)
    ap.add_argument("--only", default="", help="comma-separated series names")
    ap.add_argument("--suite", choices=["classic", "solvers", "hard10", "sizes", "boofun", "all"],
                    default="classic", help="classic: the series below; the others: bench_matrix_hard")
    args = ap.parse_args()
    if args.suite != "classic":
        import sys

        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from bench_matrix_hard import run

        run(args.suite, args.budget)
        return
    only = set(filter(None, args.only.split(",")))
    print(f"# budget {args.budget:g} s per call; {os.cpu_count()} CPUs; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    head = (f"{'measure':<11} {'problem':<14} {'ours: n':>7} {'time':>7}  {'stopped at':<28} "
            f"{'naive: n':>8} {'time':>7}  {'stopped at':<24} {'ratio at n':>11}  note")
    print(head)
    print("-" * len(head))
    for kind, problem, ours, naive in SERIES:
        if only and kind not in only:
            continue
        a, a_stop = series(kind, ours, problem, args.budget, args.n_max)
        b, b_stop = series(kind, naive, problem, args.budget, args.n_max)
        both = sorted(set(a) & set(b))
        ratio = ""
        if both:
            k = both[-1]
            ratio = f"{b[k][0] / max(a[k][0], 1e-6):7.0f}x @{k}"
        note = ""
        if kind == "rank_q":
            wrong = [n for n in both if a[n][1] != b[n][1]]
            note = "svd ok" if not wrong else f"svd WRONG at n={wrong}"
        elif set(a) & set(b) and any(a[n][1] != b[n][1] for n in both):
            note = "VALUES DIFFER"
        na = max(a, default=0)
        nb = max(b, default=0)
        ta = f"{a[na][0]:.2f}s" if na else "-"
        tb = f"{b[nb][0]:.2f}s" if nb else "-"
        print(f"{kind:<11} {problem:<14} {na:>7} {ta:>7}  {a_stop[:28]:<28} {nb:>8} {tb:>7}  "
              f"{b_stop[:24]:<24} {ratio:>11}  {note}", flush=True)


if __name__ == "__main__":
    main()
