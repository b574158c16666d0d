"""The main job: every task x architecture, with its bound, its construction, and their confirmation.

:func:`separations` puts the whole picture for one problem size n and precision into rows, one per
(task, architecture class):

* **lower bound** — the strongest deterministic lower bound of the catalogue
  (:func:`commcomp.bounds.compute_bounds`) at the task's length N, as the smallest width it allows,
  with its theorem id and tag;
* **construction** — the narrowest construction the catalogue knows for that architecture class
  (its width at N), and the registered explicit construction (:mod:`models.constructions`), if any;
* **confirmed** — three checks run here and now, each on ``instances`` random instances:
  the reduction (the task's own ground truth on the encoded input equals f(x, y)); a random model
  of the architecture run as an Alice/Bob protocol (:func:`reductions.simulate.verify`: faithful bit
  for bit, with the bits it sent against the problem's lower bound) or the reason no bounded protocol
  exists; and the construction run by its own forward pass and judged by the task's ground truth.
  For qsa the 1-layer model is a row-reading attention unit and the output row is Alice's, so the
  protocol is :mod:`reductions.simulate.qsa`'s (she sends that row's q, k, v; ``protocol_note`` says so).

Examples
--------
>>> rows = separations(n=4, precision="float32", instances=8, tasks=["index-lookup"],
...                    archs=["lstm", "transformer-1"])
>>> [(r.arch, r.protocol_faithful) for r in rows]
[('lstm', 1.0), ('transformer-1', 1.0)]
>>> rows[0].lower_bound_theorem
'BHBK-IL-RNN'
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from commcomp.errors import CommcompError, UnknownNameError
from commcomp.limits import (MAX_HEADS, MAX_INSTANCES, MAX_N, MAX_WIDTH, TOKEN_BYTES, check_int, check_memory,
                             check_seed)
from commcomp.precision import parse_precision

from .catalogue import bound_fields, catalogue_n, construction_bound, lower_bound

__all__ = ["SeparationRow", "separations", "ARCH_CLASSES", "arch_class_spec", "catalogue_length"]

#: Architecture classes of the table: (row name, registry arch, layers).
ARCH_CLASSES: tuple[tuple[str, str, int], ...] = (
    ("elman", "elman", 1), ("lstm", "lstm", 1), ("gru", "gru", 1),
    ("linear-attention", "linear-attention", 1), ("retnet", "retnet", 1), ("dss", "dss", 1),
    ("mamba", "mamba", 1), ("transformer-1", "transformer", 1), ("transformer-2", "transformer", 2),
    ("hybrid", "hybrid", 1),
)


def arch_class_spec(name: str) -> tuple[str, str, int]:
    """``(row name, arch, layers)`` for a row name, a registry name, or ``transformer-L``."""
    key = name.strip().lower()
    for spec in ARCH_CLASSES:
        if key == spec[0]:
            return spec
    from commcomp.architectures import get_architecture

    arch = get_architecture(key).name
    for spec in ARCH_CLASSES:
        if arch == spec[1]:
            return spec
    raise UnknownNameError(f"unknown architecture class {name!r}; known: "
                           f"{', '.join(s[0] for s in ARCH_CLASSES)}")


@dataclass(frozen=True)
class SeparationRow:
    """One task x architecture class (JSON: :meth:`to_json`)."""

    task: str
    problem: str
    arch: str
    layers: int
    n: int
    length: int
    precision: str
    heads: int
    lower_bound_width: int | None
    lower_bound_value: float | None
    lower_bound_quantity: str | None
    lower_bound_theorem: str | None
    lower_bound_tag: str | None
    lower_bound_formula: str | None
    catalogue_construction_width: int | None
    catalogue_construction_theorem: str | None
    construction: str | None
    construction_width: int | None
    construction_correct: int | None
    construction_checked: int | None
    construction_note: str | None
    reduction_checked: int
    reduction_ok: bool
    protocol_width: int | None
    protocol_faithful: float | None
    protocol_bits: int | None
    protocol_lower_bound_bits: int | None
    protocol_theorem: str | None
    protocol_note: str | None
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def confirmed(self) -> bool:
        """Every check that applies passed (and the protocol, if any, sent at least the lower bound)."""
        protocol_ok = (self.protocol_faithful in (None, 1.0)) and (
            self.protocol_bits is None or self.protocol_lower_bound_bits is None
            or self.protocol_bits >= self.protocol_lower_bound_bits or self.protocol_faithful is None)
        construction_ok = self.construction_checked in (None, 0) or \
            self.construction_correct == self.construction_checked
        return self.reduction_ok and protocol_ok and construction_ok

    @property
    def status(self) -> str:
        """``NO`` when a check failed; ``yes`` when a check about this architecture ran (the
        construction was judged, or a model was run as a protocol and was exact) and none failed;
        else ``not checked`` (the reduction's ground truth alone does not depend on the row).
        ``confirmed`` (JSON) keeps its meaning: no check failed."""
        if not self.confirmed:
            return "NO"
        ran = bool(self.construction_checked) or self.protocol_faithful is not None
        return "yes" if ran else "not checked"

    def to_json(self) -> dict:
        out = asdict(self)
        out["confirmed"] = self.confirmed
        out["status"] = self.status
        return out


def catalogue_length(task: str, length: int) -> int:
    """The N the catalogue's formulas use for a task of ``length`` tokens
    (:func:`reductions.separations.catalogue.catalogue_n`: Index Lookup and Multi-Index Lookup
    count their data symbols, every other task its tokens).

    >>> catalogue_length("multi-index-lookup", 32), catalogue_length("index-lookup", 9)
    (16, 8)
    """
    return catalogue_n(task, length)


def _lower_and_upper(task, arch, layers, length, bits, heads, problem):
    return (lower_bound(task, arch, layers, length, bits, heads, problem),
            construction_bound(task, arch, layers, length, bits, heads))


def _check_reduction(reduction, n, instances, rng):
    from commcomp.problems import get_problem

    problem = get_problem(reduction.problem)
    x, y = problem.sample(n, instances, rng)
    encoded = reduction.encode(x, y, n)
    decoded = reduction.decode(reduction.task_answers(encoded), y)
    return int(instances), bool(np.array_equal(np.asarray(decoded, dtype=bool), problem.evaluate(x, y)))


def _check_construction(task, arch, layers, reduction, n, precision, instances, seed):
    try:
        from models.constructions import get_construction
        from reductions.search.construction import check_construction
    except ImportError:  # pragma: no cover - constructions are part of the package
        return None, None, None, None, "constructions unavailable"
    try:
        spec = get_construction(task, arch=arch, layers=layers)
    except UnknownNameError:
        return None, None, None, None, None
    task_n = reduction.task_size(n) if hasattr(reduction, "task_size") else n
    try:
        construction = spec.make(task_n, precision, seed=seed)
        result = check_construction(construction, samples=instances, seed=seed, stop_early=False)
    except CommcompError as exc:
        return spec.name, None, None, None, f"not run at {precision.name}: {str(exc).splitlines()[0]}"
    return spec.name, construction.width, result.correct, result.admitted, None


def _protocol(task, arch, layers, n, precision, width, heads, instances, seed):
    from reductions.simulate import verify
    from reductions.simulate.registry import verify_note

    try:
        out = verify(task, arch, n, precision.name, width=width, layers=layers, heads=heads,
                     instances=instances, seed=seed)
    except CommcompError as exc:
        return None, None, None, None, str(exc).splitlines()[0]
    faithful = out["faithful"] if out.get("exact", True) else None
    note = None if out.get("exact", True) else f"max difference {out.get('max_abs_difference')}"
    note = verify_note(out) or note  # the split family's own note (qsa's row unit: SHT Thm 4, §8.7)
    return faithful, out["bits_per_message"], out["lower_bound_bits"], out.get("theorem"), note


def separations(n: int = 8, precision="float32", *, heads: int = 1, instances: int = 32, seed: int = 0,
                tasks=None, archs=None, width: int = 4,
                progress: Callable[[str], None] | None = None) -> list[SeparationRow]:
    """Bounds, constructions and their confirmation for every task x architecture class.

    Parameters
    ----------
    n : int
        Size of the embedded problem instance (bits per party); each task's length N follows from it.
    precision : str or int
        Number format of the simulated models (``float32``, ``fixed:16:8``, ...); its bit count is
        the p of the bounds.
    heads : int
        Attention heads H (bounds and 1-layer Transformer protocols).
    instances : int
        Random instances for each check.
    seed : int
    tasks, archs : list of str, optional
        Subsets (task registry names; architecture class names of :data:`ARCH_CLASSES`).
    width : int
        Width of the random models run as protocols.
    progress : callable, optional
        Called with a short description after each row.

    Returns
    -------
    list of SeparationRow
    """
    from reductions.registry import TASKS, get_reduction, get_task

    n = check_int("n", n, 1, MAX_N)
    instances = check_int("instances", instances, 1, MAX_INSTANCES)
    heads, width = check_int("heads", heads, 1, MAX_HEADS), check_int("width", width, 1, MAX_WIDTH)
    seed = check_seed(seed)
    fmt = parse_precision(precision)
    task_names = list(TASKS) if tasks is None else [get_task(t).name for t in tasks]
    reductions = [get_reduction(task) for task in task_names]
    # the reduction checks draw all `instances` at once, at each task's length
    check_memory("separations", "n", n, lambda v: TOKEN_BYTES * instances * max(
        (int(r.length(max(v, r.min_n))) for r in reductions), default=0),
        detail=f"{instances} instances of the longest task, {TOKEN_BYTES} bytes a token")
    classes = list(ARCH_CLASSES) if archs is None else [arch_class_spec(a) for a in archs]
    rows = []
    for t_index, (task, reduction) in enumerate(zip(task_names, reductions)):
        rng = np.random.default_rng([seed, t_index])
        checked, reduction_ok = _check_reduction(reduction, n, instances, rng)
        N = int(reduction.length(n))
        for name, arch, layers in classes:
            start = time.perf_counter()
            lower, upper = _lower_and_upper(task, arch, layers, max(2, N), fmt.bits, heads, reduction.problem)
            faithful, bits, lb_bits, theorem, note = _protocol(task, arch, layers, n, fmt, width, heads,
                                                              instances, seed)
            c_name, c_width, c_correct, c_checked, c_note = _check_construction(
                task, arch, layers, reduction, n, fmt, instances, seed)
            rows.append(SeparationRow(
                task=task, problem=reduction.problem, arch=name, layers=layers, n=int(n), length=N,
                precision=fmt.name, heads=heads,
                **bound_fields(lower, upper),
                construction=c_name, construction_width=c_width, construction_correct=c_correct,
                construction_checked=c_checked, construction_note=c_note,
                reduction_checked=checked, reduction_ok=reduction_ok,
                protocol_width=None if bits is None else width, protocol_faithful=faithful,
                protocol_bits=bits, protocol_lower_bound_bits=lb_bits, protocol_theorem=theorem,
                protocol_note=note, seconds=time.perf_counter() - start))
            if progress is not None:
                progress(f"{task} x {name}")
    return rows
