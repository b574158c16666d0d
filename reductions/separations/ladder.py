"""The separations of the catalogue, and where each one's widths cross.

A :class:`Separation` is a task with a *weak* architecture class, whose width the catalogue
bounds from below by a quantity that grows with N (an RNN's state must hold the N symbols of
Index Lookup: ``m·p >= N``), and a *strong* one with an explicit construction whose width grows
like log N or not at all (a 1-layer Transformer, width ``2·log2 N + 2``).  :func:`find_separations`
reads them off the catalogue and the construction registry (nothing is typed here):

* weak candidates: Elman (the recurrent class), the 1-layer Transformer and the hybrid (or the
  architectures asked for), each kept when its strongest deterministic lower bound on the task grows from
  N = 64 to N = 4096;
* strong side: the task's registered explicit construction (an architecture of the registry),
  kept when its class differs from the weak one; with none, the catalogue's narrowest
  construction with a width, else the row says there is none.  Beside it, a deeper Transformer's
  weights (Dyck's depth separation) and, under a recurrent weak side, a registered hybrid's
  (Index Lookup: WDL's one attention layer on an RNN).

:func:`crossover` finds the smallest problem size n at which the weak side's minimum width exceeds
the strong side's width, by doubling then bisection on the catalogue's formulas and the
explicit weights' widths (both nondecreasing in n).

Examples
--------
>>> seps = find_separations(["index-lookup"], 16)
>>> [(s.weak_label, s.strong_label, s.construction) for s in seps]
[('elman', 'tf1', 'index-lookup-1tf'), ('elman', 'hybrid', 'index-lookup-hybrid')]
>>> curve = WidthCurves(seps[0], 16)
>>> n = crossover(curve.lower, curve.explicit)
>>> curve.lower(n) > curve.explicit(n) and curve.lower(n - 1) <= curve.explicit(n - 1)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from commcomp.bounds.table import TASK_SHORT
from commcomp.errors import CommcompError

from .catalogue import catalogue_n, construction_bound, lower_bound

__all__ = ["Separation", "find_separations", "WidthCurves", "crossover", "WEAK_CANDIDATES",
           "TASK_SHORT", "arch_label", "EXPLICIT_MAX_LENGTH"]

#: Weak-side candidates by default (registry arch, layers), in table order; ``weak=`` picks others
#: (``lstm``, ``linear-attention``, ...).
WEAK_CANDIDATES: tuple[tuple[str, int], ...] = (("elman", 1), ("transformer", 1), ("hybrid", 1))


#: Explicit weights are built (for their width) only up to this many tokens: building costs up to a
#: second or so there (the crossover search builds a dozen sizes).  A construction whose registry
#: entry states its width without building (``ConstructionSpec.width_of``: Nearest Neighbour, whose
#: public table's Gram check took 6 s and 1.8 GB at 15,105 tokens) is read at any length.
EXPLICIT_MAX_LENGTH = 4100
#: ... and per task where building costs more (or less): qSA's unit at q = (N - 1)/2 holds N x N keys (2.8 s at
#: 4099 tokens), and its width N + 2 never crosses the recurrent bound there.
EXPLICIT_MAX_LENGTH_BY_TASK = {"qsa": 1100, "dyck": 1 << 16}  # Dyck's weights: O(N log N) numbers, ms


def arch_label(arch: str, layers: int) -> str:
    """``tf1``, ``tf2``, ``lin-attn``, or the registry name."""
    if arch == "transformer":
        return f"tf{layers}"
    return {"linear-attention": "lin-attn"}.get(arch, arch) + ("" if layers == 1 else f"x{layers}")


@dataclass(frozen=True)
class Separation:
    """A task, the weak architecture (lower bound growing with N) and the strong one."""

    task: str
    problem: str
    weak_arch: str
    weak_layers: int
    strong_arch: str | None
    strong_layers: int | None
    construction: str | None          # registered explicit construction, if any
    note: str = ""

    @property
    def weak_label(self) -> str:
        return arch_label(self.weak_arch, self.weak_layers)

    @property
    def strong_label(self) -> str:
        return "-" if self.strong_arch is None else arch_label(self.strong_arch, self.strong_layers)

    @property
    def label(self) -> str:
        return f"{TASK_SHORT.get(self.task, self.task)} {self.weak_label}<{self.strong_label}"


def _explicit_spec(task: str):
    from commcomp.architectures import get_architecture
    from models.constructions import CONSTRUCTIONS

    specs = [s for s in CONSTRUCTIONS.values() if s.task == task]
    usable = []
    for s in specs:
        try:
            get_architecture(s.arch)
        except CommcompError:
            continue
        usable.append(s)
    usable.sort(key=lambda s: not s.default)
    return usable[0] if usable else None


def _deeper_spec(task: str, arch: str, layers: int, default):
    """A registered Transformer construction deeper than a Transformer weak side, when the task's
    default construction is of another class (Dyck: the 8-state RNN is the default, the 2-layer
    Transformer the depth separation's strong side), else None."""
    from models.constructions import CONSTRUCTIONS

    if arch != "transformer" or default is None or (default.arch, default.layers) == (arch, layers + 1):
        return None
    return next((s for s in CONSTRUCTIONS.values() if s.task == task and s.arch == arch
                 and s.layers == layers + 1), None)


def _hybrid_spec(task: str, arch: str, default):
    """A registered hybrid construction for the task when the weak side is a recurrent model and the
    task's default construction is of another class (Index Lookup: the 1-layer Transformer is the
    default, the hybrid the strong side of WDL's "one attention layer closes the gap"), else None."""
    from models.constructions import CONSTRUCTIONS

    if arch in ("transformer", "hybrid") or default is None or default.arch == "hybrid":
        return None
    return next((s for s in CONSTRUCTIONS.values() if s.task == task and s.arch == "hybrid"), None)


def _grows(task, problem, arch, layers, reduction, bits, heads) -> bool:
    small, large = (lower_bound(task, arch, layers, reduction.length(n), bits, heads, problem)
                    for n in (_size_for(reduction, 64), _size_for(reduction, 4096)))
    return small is not None and large is not None and large.min_width > small.min_width


def _size_for(reduction, length: int) -> int:
    """The largest n whose task length is at most ``length`` (at least the reduction's minimum)."""
    lo = max(1, int(getattr(reduction, "min_n", 1)))
    n = lo
    while reduction.length(n * 2) <= length:
        n *= 2
    step = n // 2
    while step >= 1:
        if reduction.length(n + step) <= length:
            n += step
        step //= 2
    return n


def find_separations(tasks=None, precision=16, heads: int = 1, weak=None) -> list[Separation]:
    """The separations of the catalogue for ``tasks`` (registry names; all by default).

    ``weak`` (architecture names) restricts the weak side; ``precision`` (bits or a format)
    is the p at which growth is tested.
    """
    from commcomp.bounds import precision_bits
    from reductions.registry import TASKS, get_reduction, get_task

    bits = precision_bits(precision)
    names = list(TASKS) if tasks is None else [get_task(t).name for t in tasks]
    candidates = WEAK_CANDIDATES if weak is None else tuple(_weak_spec(w) for w in weak)
    out = []
    for task in names:
        reduction = get_reduction(task)
        spec = _explicit_spec(task)
        for arch, layers in candidates:
            if not _grows(task, reduction.problem, arch, layers, reduction, bits, heads):
                continue
            if spec is not None and (spec.arch, spec.layers) != (arch, layers):
                out.append(Separation(task, reduction.problem, arch, layers, spec.arch, spec.layers, spec.name))
                deeper = _deeper_spec(task, arch, layers, spec)
                if deeper is not None:  # the depth separation beside the default one
                    out.append(Separation(task, reduction.problem, arch, layers, deeper.arch, deeper.layers,
                                          deeper.name))
                hybrid = _hybrid_spec(task, arch, spec)
                if hybrid is not None:  # WDL's hybrid beside the default strong side
                    out.append(Separation(task, reduction.problem, arch, layers, hybrid.arch, hybrid.layers,
                                          hybrid.name))
                continue
            upper = None
            for s_arch, s_layers in (("transformer", 1), ("transformer", 2), ("elman", 1)):
                if s_arch == arch:  # without weights, a deeper model of the same kind is no separation
                    continue
                upper = construction_bound(task, s_arch, s_layers, reduction.length(_size_for(reduction, 256)),
                                           bits, heads)
                if upper is not None and upper.layers not in (None, s_layers):
                    upper = None  # a construction of another depth: not this class
                if upper is not None:
                    out.append(Separation(task, reduction.problem, arch, layers, s_arch, s_layers, None,
                                          f"no explicit weights; catalogue {upper.theorem}"))
                    break
            if upper is None:
                own = spec is not None and (spec.arch, spec.layers) == (arch, layers)
                out.append(Separation(task, reduction.problem, arch, layers, None, None, None,
                                      f"lower bound only: {spec.name} is this class's own construction "
                                      "(a strong side, not a weak one)" if own else
                                      "no construction with a width in the catalogue or the registry"))
    return out


def _weak_spec(name: str) -> tuple[str, int]:
    from commcomp.architectures import get_architecture

    key = str(name).strip().lower()
    if key.startswith("tf") and key[2:].isdigit():
        return "transformer", int(key[2:])
    if key.startswith("transformer-") and key[12:].isdigit():
        return "transformer", int(key[12:])
    return get_architecture(key).name, 1


class WidthCurves:
    """The three widths of a separation as functions of the problem size n (memoised).

    ``lower(n)``: the weak side's minimum width (catalogue); ``catalogue(n)``: the strong side's
    catalogue construction width; ``explicit(n)``: the width of the registered weights at n
    (None beyond :data:`EXPLICIT_MAX_LENGTH` tokens).
    """

    def __init__(self, separation: Separation, precision, heads: int = 1):
        from commcomp.bounds import precision_bits
        from reductions.registry import get_reduction

        self.sep, self.bits, self.heads = separation, precision_bits(precision), heads
        self.reduction = get_reduction(separation.task)
        self.lower_row = lru_cache(maxsize=None)(self._lower_row)
        self.upper_row = lru_cache(maxsize=None)(self._upper_row)
        self.explicit = lru_cache(maxsize=None)(self._explicit)

    def length(self, n: int) -> int:
        return int(self.reduction.length(n))

    def N(self, n: int) -> int:
        """The catalogue's N at problem size n."""
        return catalogue_n(self.sep.task, self.length(n))

    def _lower_row(self, n):
        s = self.sep
        return _shared_lower(s.task, s.weak_arch, s.weak_layers, self.length(n), self.bits, self.heads, s.problem)

    def _upper_row(self, n):
        s = self.sep
        if s.strong_arch is None:
            return None
        return _shared_upper(s.task, s.strong_arch, s.strong_layers, self.length(n), self.bits, self.heads)

    def lower(self, n: int) -> int | None:
        row = self.lower_row(n)
        return None if row is None else row.min_width

    def catalogue(self, n: int) -> int | None:
        row = self.upper_row(n)
        return None if row is None else row.min_width

    def _explicit(self, n: int) -> int | None:
        if self.sep.construction is None:
            return None
        limit = EXPLICIT_MAX_LENGTH_BY_TASK.get(self.sep.task, EXPLICIT_MAX_LENGTH)
        if self.length(n) > limit and not _width_without_building(self.sep.construction):
            return None
        return _shared_width(self.sep.construction, self.reduction.task_size(n))


# Shared by every curve of one run (the catalogue's rows are frozen values; the weights' width is a
# function of the construction and the task size): separations with the same strong side (EQ under
# Elman, the 1-layer Transformer and the hybrid) evaluate it once.
@lru_cache(maxsize=4096)
def _shared_lower(task, arch, layers, length, bits, heads, problem):
    return lower_bound(task, arch, layers, length, bits, heads, problem)


@lru_cache(maxsize=4096)
def _shared_upper(task, arch, layers, length, bits, heads):
    return construction_bound(task, arch, layers, length, bits, heads)


@lru_cache(maxsize=4096)
def _shared_width(construction: str, task_size: int) -> int | None:
    from models.constructions import get_construction

    try:
        return get_construction(construction).width(task_size)
    except CommcompError:
        return None


def _width_without_building(construction: str) -> bool:
    from models.constructions import get_construction

    return get_construction(construction).width_of is not None


def crossover(lower, strong, start: int = 1, limit: int = 1 << 22) -> int | None:
    """Smallest n >= start with ``lower(n) > strong(n)`` (both nondecreasing), or None.

    None when a side becomes unknown before the crossing (``strong`` returns None beyond what is
    built) or there is none up to ``limit``; sizes too small for a formula (None there) are skipped.

    >>> crossover(lambda n: n // 8, lambda n: 3)
    32
    >>> crossover(lambda n: None if n < 4 else n, lambda n: 5)
    6
    >>> crossover(lambda n: n, lambda n: 40 if n <= 50 else None)   # 64 unknown: the gap is searched
    41
    """
    def crosses(n):
        lo, hi = lower(n), strong(n)
        if lo is None or hi is None:
            return None
        return lo > hi

    n, prev = max(1, start), None
    while n <= limit:
        c = crosses(n)
        if c is None and prev is not None:  # known below, unknown here: search the gap doubling skipped
            return _crossing_in_gap(crosses, prev, n)
        if c:
            break
        if c is not None:
            prev = n
        n *= 2
    else:
        return None
    lo = start - 1 if prev is None else prev  # crosses(lo) is False or unknown (below the first N)
    hi = n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if crosses(mid) else (mid, hi)
    return hi


def _crossing_in_gap(crosses, lo: int, hi: int) -> int | None:
    """The first crossing in ``(lo, hi)``, where ``crosses(lo)`` is False and ``crosses(hi)`` unknown.

    The known sizes are taken to be a prefix (a side is built, or its formula holds, up to some
    size): bisection on known / unknown finds a crossing point if the known part of the gap has
    one, then bisection on the crossing finds the first.  None when the known part never crosses.
    """
    hit = None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        c = crosses(mid)
        if c is None:
            hi = mid
        elif c:
            hit = mid
            break
        else:
            lo = mid
    if hit is None:
        return None
    while hit - lo > 1:
        mid = (lo + hit) // 2
        lo, hit = (lo, mid) if crosses(mid) else (mid, hit)
    return hit
