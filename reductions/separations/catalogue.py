"""The catalogue as the main job reads it: one row's lower bound and construction, by task length.

Thin adapter over :mod:`commcomp.bounds`.  When the catalogue offers the per-task helpers
(``best_lower_bound``, ``best_construction``, ``catalogue_N``, ``bound_parameters``: the N
convention and the parameters a task instance fixes), they are used; otherwise the same
convention is applied here: the catalogue's N is the sequence length, except Index Lookup
(N data symbols, then the query: ``length - 1``) and Multi-Index Lookup (N data symbols between
the k query indices: ``length - 2k``, with ``k = length // 4`` for the registered task).

Examples
--------
>>> catalogue_n("multi-index-lookup", 32), catalogue_n("index-lookup", 9), catalogue_n("dyck", 33)
(16, 8, 33)
>>> lower_bound("index-lookup", "elman", 1, 257, 16).min_width     # BHBK-IL-RNN: m·16 >= 256
16
"""

from __future__ import annotations

from commcomp.errors import CommcompError

try:  # the per-task helpers of the catalogue (commcomp.bounds.per_task), when present
    from commcomp.bounds import best_construction as _best_construction
    from commcomp.bounds import best_lower_bound as _best_lower_bound
    from commcomp.bounds import catalogue_N as _catalogue_N
except ImportError:  # pragma: no cover - depends on the catalogue version
    _best_construction = _best_lower_bound = _catalogue_N = None

__all__ = ["catalogue_n", "lower_bound", "construction_bound", "bound_fields", "HAS_PER_TASK"]

#: Whether the catalogue's own per-task helpers are in use (else the fallback below).
HAS_PER_TASK = _best_lower_bound is not None


def catalogue_n(task: str, length: int) -> int:
    """The N the catalogue's formulas use for a task instance of ``length`` tokens."""
    if _catalogue_N is not None:
        return int(_catalogue_N(task, length))
    if task == "index-lookup":
        return length - 1
    if task == "multi-index-lookup":
        return length - 2 * (length // 4)
    return length


def _params(task: str, length: int) -> dict:
    if task == "qsa":
        return {"q": (length - 1) // 2, "dprime": 2}
    if task == "multi-index-lookup":
        return {"k": length // 4}
    return {}


def _fallback(task, arch, layers, length, precision, heads, kind, problem=None):
    from commcomp.bounds import compute_bounds

    rows = compute_bounds(max(2, catalogue_n(task, length)), precision, heads=heads, task=task, arch=arch,
                          layers=layers, kind=kind, include_randomized=False, **_params(task, length))
    rows = [r for r in rows if r.min_width is not None and r.layers in (None, layers)
            and (problem is None or r.problem in (None, problem))]
    if kind == "lower":
        return max(rows, key=lambda r: (r.min_width, r.value or 0), default=None)
    return min(rows, key=lambda r: r.min_width, default=None)


def lower_bound(task: str, arch: str, layers: int, length: int, precision, heads: int = 1,
                problem: str | None = None):
    """The strongest deterministic lower bound (a ``BoundRow``, largest minimum width), or None.

    With ``problem``, the bounds through that embedded problem (the row's reduction); when there
    is none, a bound stated for the task with no embedded problem.
    """
    try:
        row = _lower(task, arch, layers, length, precision, heads, problem)
        if row is None and problem is not None:
            # no bound through this row's reduction: a statement about the task itself (no embedded
            # problem: SHT Thm 11's recurrent qSA bound) still bounds the architecture
            row = _lower(task, arch, layers, length, precision, heads, None)
            row = row if row is not None and row.problem is None else None
        return row
    except CommcompError:
        return None


def _lower(task, arch, layers, length, precision, heads, problem):
    if _best_lower_bound is not None:
        return _best_lower_bound(task, arch, length, precision, heads, layers=layers, problem=problem)
    return _fallback(task, arch, layers, length, precision, heads, "lower", problem)


def construction_bound(task: str, arch: str, layers: int, length: int, precision, heads: int = 1):
    """The narrowest catalogue construction with a width at this length (a ``BoundRow``), or None."""
    try:
        if _best_construction is not None:
            return _best_construction(task, arch, length, precision, heads, layers=layers)
        return _fallback(task, arch, layers, length, precision, heads, "upper")
    except CommcompError:
        return None


def bound_fields(lower, upper) -> dict:
    """The row fields both tables (:mod:`.grid`, :mod:`.rows`) take from a lower bound and a catalogue
    construction (``BoundRow`` or None; None gives None fields).

    >>> bound_fields(None, None)["lower_bound_width"] is None
    True
    """
    def get(row, attr):
        return None if row is None else getattr(row, attr)

    return dict(lower_bound_width=get(lower, "min_width"), lower_bound_value=get(lower, "value"),
                lower_bound_quantity=get(lower, "quantity"), lower_bound_theorem=get(lower, "theorem"),
                lower_bound_tag=get(lower, "tag"), lower_bound_formula=get(lower, "formula"),
                catalogue_construction_width=get(upper, "min_width"),
                catalogue_construction_theorem=get(upper, "theorem"))
