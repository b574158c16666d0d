"""The default ``commcomp separations``: each separation on a ladder of N across its crossover.

For every :class:`~.ladder.Separation`, :func:`separation_ladders` picks problem sizes n across the
crossover (the power of 4 below the crossover with the explicit weights, that crossover, and the
crossover with the catalogue's construction formula; 16, 256, 4096 when there is none), or the
sizes asked for, and at each one gives the weak side's minimum width (theorem, tag), the strong side's
widths (catalogue formula; explicit weights) and the three checks of :mod:`.checks`, run on the
crossover rows (every row with ``check_all``) of at most ``check_max_length`` tokens; the others
say ``not checked`` and why.

Examples
--------
>>> lad = separation_ladders(["index-lookup"], "fixed:8:4", sizes=[16, 64], samples=8, budget=512,
...                          check_all=True)
>>> [(r.N, r.lower_bound_width, r.construction_width) for r in lad[0].rows]
[(16, 2, 10), (64, 8, 14)]
>>> [c.status for c in lad[0].rows[1].checks]
['passed', 'found', 'passed']
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Callable

from commcomp.blas import set_blas_threads
from commcomp.errors import InvalidParameterError
from commcomp.precision import parse_precision

from .catalogue import bound_fields
from .checks import Check, construction_check, protocol_check, witness_check
from .ladder import Separation, WidthCurves, crossover, find_separations

__all__ = ["LadderRow", "SeparationLadder", "separation_ladders", "row_status", "DEFAULT_PRECISION",
           "DEFAULT_CHECK_MAX_LENGTH"]

#: Default number format: 16-bit (p = 16) brings the crossovers with the explicit weights to a
#: few hundred tokens, and every explicit construction but Match2's is exact there.
DEFAULT_PRECISION = "bfloat16"
#: Checks run on rows of at most this many tokens by default.  1500 reaches the crossovers of
#: Multi-Index Lookup (1412 tokens), MQAR (1155) and the 1- vs 2-layer Equality and Disjointness lines
#: (1407) for about 5 s of CPU more than 1100 did; the next ones cost more: induction heads 1 vs 2
#: layers (2075 tokens, +5 s), Dyck 1 vs 2 layers (5109) and Nearest Neighbour (5569: 27 s for 8
#: random + 42 adversarial inputs), each run by ``--check-max-length`` at its length.
DEFAULT_CHECK_MAX_LENGTH = 1500
#: ... and, by default, on explicit weights no wider than this at that length (qSA's grow like N).
CHECK_MAX_WIDTH = 64


def row_status(checks) -> str:
    """``yes`` when at least one check ran and none failed, ``NO`` when one failed, else
    ``not checked`` (a row where nothing could fail never says yes)."""
    ran = [c for c in checks if c.ran]
    if any(c.status in ("FAILED",) for c in ran):
        return "NO"
    if any(c.status in ("passed", "found") for c in ran):
        return "yes"
    return "not checked"


@dataclass(frozen=True)
class LadderRow:
    """One separation at one problem size (JSON: :meth:`to_json`)."""

    task: str
    problem: str
    weak_arch: str
    weak_layers: int
    strong_arch: str | None
    strong_layers: int | None
    n: int
    length: int
    N: int
    precision: str
    heads: int
    lower_bound_width: int | None
    lower_bound_value: float | None
    lower_bound_quantity: str | None
    lower_bound_theorem: str | None
    lower_bound_tag: str | None
    lower_bound_label: str | None
    lower_bound_formula: str | None
    lower_bound_evidence: str | None   # where the number comes from (P, A, S, R, D, D✓), when known
    catalogue_construction_width: int | None
    catalogue_construction_theorem: str | None
    construction: str | None
    construction_width: int | None
    at_crossover: str            # "", "explicit" or "catalogue": this n is that crossover
    separated: bool | None       # the weak minimum width exceeds the explicit width, weights not failed
    checks: tuple = ()
    seconds: float = 0.0

    @property
    def status(self) -> str:
        return row_status(self.checks)

    def to_json(self) -> dict:
        out = asdict(self)
        out["checks"] = {c.name: c.to_json() for c in self.checks}
        out["status"] = self.status
        return out


@dataclass(frozen=True)
class SeparationLadder:
    """A separation, its crossovers (problem size n and the catalogue's N) and its rows."""

    separation: Separation
    crossover_n_explicit: int | None
    crossover_N_explicit: int | None
    crossover_n_catalogue: int | None
    crossover_N_catalogue: int | None
    rows: tuple = field(default_factory=tuple)

    def to_json(self) -> dict:
        head = asdict(self.separation)
        head.update(label=self.separation.label, crossover_n_explicit=self.crossover_n_explicit,
                    crossover_N_explicit=self.crossover_N_explicit,
                    crossover_n_catalogue=self.crossover_n_catalogue,
                    crossover_N_catalogue=self.crossover_N_catalogue,
                    rows=[r.to_json() for r in self.rows])
        return head


def _default_sizes(cross_explicit, cross_catalogue, max_n) -> list[int]:
    sizes = set()
    anchor = cross_explicit or cross_catalogue
    if anchor is None:
        sizes.update({16, 256, 4096})
    else:
        below = 4 ** max(1, (anchor.bit_length() - 1) // 2)
        if below >= anchor:
            below //= 4
        sizes.update({max(4, below), anchor})
        if cross_catalogue is None or cross_catalogue == anchor:  # one crossing: a row beyond it too
            sizes.add(anchor * 4)
    for c in (cross_explicit, cross_catalogue):
        if c is not None:
            sizes.add(c)
    return sorted(s for s in sizes if 1 <= s <= max_n)


def _rows_to_check(ladder, crossings, curves, check_max_length, check_all, weak_width) -> set:
    """Every row (``check_all``); else the crossover rows short enough to check (at most
    ``check_max_length`` tokens, and tokens x explicit width at most that x :data:`CHECK_MAX_WIDTH`),
    or, when there is none, the shortest such row where the bound exceeds the weak width and tokens x
    outputs is within the same budget."""
    if check_all:
        return set(ladder)
    short = [n for n in ladder if curves.length(n) <= check_max_length
             and curves.length(n) * (curves.explicit(n) or 1) <= check_max_length * CHECK_MAX_WIDTH]
    chosen = {n for n in crossings if n in short}
    if chosen:
        return chosen
    # no crossover short enough: one row where the bound bites, if its outputs are few enough
    # (tokens x outputs within the same budget: Multi-Index Lookup's 256 queries over 1024 tokens cost
    # 7 s and show no crossing)
    cheap = [n for n in short if curves.length(n) * _outputs(curves, n) <= check_max_length * CHECK_MAX_WIDTH]
    biting = [n for n in cheap if (curves.lower(n) or 0) > weak_width]
    return set(biting[:1] or cheap[:1])


def _outputs(curves, n) -> int:
    """Output positions of the task instance at problem size n."""
    reduction = curves.reduction
    try:
        return len(reduction.task.output_positions(reduction.task_size(n)))
    except (AttributeError, TypeError):
        return 1


def _separated(lower, explicit, checks) -> bool | None:
    """The weak side's minimum width exceeds the explicit weights' width, and those weights did not
    fail check (a) here (weights wrong at this precision separate nothing); None when a side is
    missing."""
    if lower is None or explicit is None:
        return None
    failed = any(c.name == "construction" and c.status == "FAILED" for c in checks)
    return lower.min_width > explicit and not failed


def _skipped(why: str) -> tuple[Check, ...]:
    return tuple(Check(name, "not checked", why) for name in ("construction", "witness", "protocol"))


def _checks(sep: Separation, curves: WidthCurves, n, fmt, lower_width, *, samples, budget, weak_width,
            weights, seed, heads, check_max_length) -> tuple[Check, ...]:
    length = curves.length(n)
    if length > check_max_length:
        return _skipped(f"{length} tokens > {check_max_length} (raise --check-max-length)")
    a = construction_check(sep.task, sep.construction, n, fmt, samples=samples, seed=seed)
    b = witness_check(sep.task, sep.weak_arch, sep.weak_layers, n, fmt, lower_width=lower_width,
                      weak_width=weak_width, weights=weights, budget=budget, seed=seed, heads=heads)
    c = protocol_check(sep.task, sep.strong_arch, sep.strong_layers, n, fmt, construction=sep.construction,
                       instances=min(samples, 32), seed=seed, heads=heads)
    return a, b, c


def separation_ladders(tasks=None, precision=DEFAULT_PRECISION, *, heads: int = 1, sizes=None, weak=None,
                       samples: int = 32, budget: int = 1024, weak_width: int = 1, weights: str = "random",
                       seed: int = 0, max_n: int = 1 << 16, check_max_length: int = DEFAULT_CHECK_MAX_LENGTH,
                       check_all: bool = False, progress: Callable[[str], None] | None = None,
                       workers: int | None = None) -> list[SeparationLadder]:
    """Every separation of the catalogue on its ladder of N, with its checks (module docstring).

    Parameters
    ----------
    tasks : list of str, optional
        Task registry names (all with a separation by default).
    precision : str or int
        Number format of the checks; its bit count is the p of the bounds.
    heads : int
    sizes : list of int, optional
        Problem sizes n (the ladder); by default chosen around each crossover.
    weak : list of str, optional
        Weak-side architectures (``elman``, ``tf1``, ``hybrid``, ``lstm``, ...).
    samples : int
        Random task inputs for check (a) (besides all inputs when few, and the adversarial ones).
    budget : int
        Most of Alice's inputs the witness search (b) tries.
    weak_width : int
        Width of the random weak model of (b) (it runs only where the bound exceeds it).
    weights : str
        ``random`` or a weights file for the weak model of (b).
    max_n : int
        Largest problem size of a default ladder.
    check_max_length : int
        Checks run on rows of at most this many tokens.
    check_all : bool
        Check every row of the ladder (default: the crossover rows no longer than
        ``check_max_length``, else the shortest where the bound exceeds the weak width).
    workers : int, optional
        Processes that build the ladders (one separation each at a time; None or 0:
        :func:`default_workers`; 1: this process only).  The rows are the same for any number.
    """
    workers = resolve_workers(workers)
    seps, one = ladder_jobs(tasks, precision, heads=heads, sizes=sizes, weak=weak, samples=samples,
                            budget=budget, weak_width=weak_width, weights=weights, seed=seed, max_n=max_n,
                            check_max_length=check_max_length, check_all=check_all)
    out = []
    for lad in map_in_order(one, seps, workers):
        out.append(lad)
        if progress is not None:
            progress(lad.separation.label)
    return out


def ladder_jobs(tasks=None, precision=DEFAULT_PRECISION, *, heads: int = 1, sizes=None, weak=None,
                samples: int = 32, budget: int = 1024, weak_width: int = 1, weights: str = "random",
                seed: int = 0, max_n: int = 1 << 16, check_max_length: int = DEFAULT_CHECK_MAX_LENGTH,
                check_all: bool = False) -> tuple[list[Separation], Callable]:
    """``(separations, one)``: the separations :func:`separation_ladders` ladders (its parameters,
    checked) and ``one(separation)`` that builds one ladder (in any process: it is seeded)."""
    fmt = parse_precision(precision)
    if min(heads, samples, budget, weak_width, max_n, check_max_length) < 1:
        raise InvalidParameterError("heads, samples, budget, weak width, max n and check length must be >= 1")
    seps = find_separations(tasks, fmt.bits, heads, weak)
    return seps, partial(_one_ladder, fmt=fmt, heads=heads, sizes=sizes, samples=samples, budget=budget,
                         weak_width=weak_width, weights=weights, seed=seed, max_n=max_n,
                         check_max_length=check_max_length, check_all=check_all)


def resolve_workers(workers: int | None) -> int:
    """Processes to use for ``workers`` (None or 0: :func:`default_workers`).

    Raises
    ------
    InvalidParameterError
        ``workers`` is not an integer >= 0.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 0):
        raise InvalidParameterError(f"workers must be an integer >= 0, got {workers!r}")
    return default_workers() if workers in (None, 0) else workers


def default_workers() -> int:
    """Processes for the ladders by default: the cores this process may use, at most 2 (the issue's
    machine; each process holds its own checks' arrays, up to about 0.9 GB)."""
    return max(1, min(2, _usable_cores()))


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether worker processes can be forked here (they inherit the imports and the caches)."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def worker_pool(workers: int):
    """A pool of ``workers`` forked processes, each with its share of the BLAS threads."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # Each worker's BLAS gets its share of the cores: with OpenBLAS's default (a thread per core in
    # every process) the workers' threads wait on each other (commcomp/blas.py gives the numbers).
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=_share_blas_threads, initargs=(workers,))


def map_in_order(fn, items, workers: int):
    """``fn`` over ``items``, results in order: in this process (one worker, or one item), else in
    forked worker processes (each separation's ladder, each claim, is independent and seeded: the
    same rows either way, ``tests/separations/test_ladder_workers.py``)."""
    items = list(items)
    if workers <= 1 or len(items) <= 1 or not can_fork():
        yield from map(fn, items)
        return
    with worker_pool(min(workers, len(items))) as pool:
        yield from pool.map(fn, items)


def _share_blas_threads(workers: int) -> None:
    """In a ladder worker: OpenBLAS threads = the cores this process may use // ``workers`` (at least 1)."""
    set_blas_threads(max(1, _usable_cores() // workers))


def _one_ladder(sep, *, fmt, heads, sizes, samples, budget, weak_width, weights, seed, max_n, check_max_length,
                check_all) -> SeparationLadder:
    """One separation on its ladder of N, with its checks (:func:`separation_ladders`)."""
    curves = WidthCurves(sep, fmt.bits, heads)
    start = max(1, int(getattr(curves.reduction, "min_n", 1)))
    x_exp = crossover(curves.lower, curves.explicit, start)
    x_cat = crossover(curves.lower, curves.catalogue, start)
    ladder = sorted(set(sizes)) if sizes else _default_sizes(x_exp, x_cat, max_n)
    checked = _rows_to_check(ladder, (x_exp, x_cat), curves, check_max_length, check_all, weak_width)
    rows = []
    for n in ladder:
        t0 = time.perf_counter()
        lower, upper = curves.lower_row(n), curves.upper_row(n)
        explicit = curves.explicit(n)
        if n in checked:
            checks = _checks(sep, curves, n, fmt, None if lower is None else lower.min_width,
                             samples=samples, budget=budget, weak_width=weak_width, weights=weights,
                             seed=seed, heads=heads, check_max_length=check_max_length)
        else:
            checks = _skipped("only the crossover rows are checked by default (--check-all)")
        rows.append(LadderRow(
            task=sep.task, problem=sep.problem, weak_arch=sep.weak_arch, weak_layers=sep.weak_layers,
            strong_arch=sep.strong_arch, strong_layers=sep.strong_layers, n=int(n),
            length=curves.length(n), N=curves.N(n), precision=fmt.name, heads=heads,
            **bound_fields(lower, upper),
            lower_bound_label=None if lower is None else lower.label,
            lower_bound_evidence=None if lower is None else (getattr(lower, "evidence", "") or None),
            construction=sep.construction, construction_width=explicit,
            at_crossover="explicit" if n == x_exp else ("catalogue" if n == x_cat else ""),
            separated=_separated(lower, explicit, checks),
            checks=checks, seconds=time.perf_counter() - t0))
    return SeparationLadder(sep, x_exp, None if x_exp is None else curves.N(x_exp), x_cat,
                            None if x_cat is None else curves.N(x_cat), tuple(rows))
