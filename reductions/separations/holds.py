"""At which precision a catalogue construction's weights hold: ``holds_at_precision`` of ``bounds``.

A construction row of the catalogue (``kind == "upper"``, a width) says "this width suffices".
Where commcomp has the explicit weights (the construction registry, matched by the row's theorem),
:func:`holds_at_precision` builds them at the row's instance and number format and judges them with
check (a) of the main job (:func:`.checks.construction_check`: every input when few, else random
plus adversarial inputs, by the task's own ground truth): True when every answer is right, False
when one is wrong, None where unchecked (no weights, an instance too long to check here, or a bit
count that is no runnable format).  :func:`annotate_rows` fills the field of ``BoundRow`` values
and appends "holds at p = ..." / "fails at p = ..." to their summary.

Examples
--------
>>> holds_at_precision("BHBK-IL-1TF", "index-lookup", 16, "float32").holds
True
>>> holds_at_precision("COMMCOMP-qSA-explicit", "qsa", 17, "float32", q=8).holds   # moment curve
False
>>> holds_at_precision("BHBK-JL", None, 16, "float32").holds is None
True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

from commcomp.errors import CommcompError

__all__ = ["Holds", "holds_at_precision", "qsa_check", "annotate_rows", "construction_for", "HOLDS_MAX_LENGTH",
           "HOLDS_SAMPLES"]

#: Rows of at most this many tokens are checked (longer: None, unchecked).
HOLDS_MAX_LENGTH = 1100
#: Random task inputs per check (besides every input when there are few), and adversarial ones at most.
HOLDS_SAMPLES = 16
HOLDS_ADVERSARIAL = 16

#: Catalogue rows whose explicit weights are registered under a construction of another source id.
_ALSO = {"COMMCOMP-qSA-explicit": "qsa-moment-curve", "SHT-qSA-UB-inf": "qsa-moment-curve",
         "COMMCOMP-Dyck-Elman": "dyck-elman", "COMMCOMP-Dyck-2TF": "dyck-2tf"}
#: Catalogue rows stated for another token layout than the task's default reduction: that reduction.
_PROBLEM = {"COMMCOMP-FC-split-3TF": "index@split"}


@dataclass(frozen=True)
class Holds:
    """The verdict on one construction row: ``holds`` (True / False / None), the construction, the
    problem size and number format it ran at, and the counts."""

    holds: bool | None
    construction: str | None
    n: int | None
    precision: str | None
    detail: str


def construction_for(theorem: str, task: str | None) -> str | None:
    """The registered construction realising a catalogue row (its ``source`` is the row's id), or None.

    >>> construction_for("BHBK-EQ-2TF", "string-equality"), construction_for("BHBK-JL", None)
    ('string-equality-2tf', None)
    """
    from models.constructions import list_constructions

    if theorem in _ALSO:
        return _ALSO[theorem]
    for spec in list_constructions():
        if spec.source == theorem and (task is None or spec.task == task):
            return spec.name
    return None


def _problem_size(reduction, task: str, N: int) -> int | None:
    """The largest problem size n whose instance has a catalogue N of at most ``N`` (None: none)."""
    from .catalogue import catalogue_n

    lo = max(1, int(getattr(reduction, "min_n", 1)))

    def fits(n):
        try:
            return catalogue_n(task, reduction.length(n)) <= N
        except CommcompError:
            return False
    if not fits(lo):
        return None
    hi = lo
    while fits(hi * 2):
        hi *= 2
    step = hi // 2
    while step >= 1:
        if fits(hi + step):
            hi += step
        step //= 2
    return hi


def qsa_check(construction: str, q: int, length: int, precision, *, dim: int = 2, samples: int = HOLDS_SAMPLES,
              seed: int = 0):
    """Check (a) of a qSA construction built at sparsity ``q`` and ``length`` rows
    (:class:`.qsa_length.QsaAtLength` judges it): a :class:`.checks.Check`.

    >>> qsa_check("qsa-random-keys", 1, 33, "float32", samples=8).status
    'passed'
    """
    from models.constructions import get_construction

    from reductions.search.construction import check_construction

    from .checks import Check
    from .qsa_length import QsaAtLength

    try:
        built = get_construction(construction).make(q, precision, seed=seed, length=length, dim=dim)
        built = dataclasses.replace(built, task_object=QsaAtLength(q, length, dim))
        result = check_construction(built, samples=samples, seed=seed, stop_early=False)
    except CommcompError as exc:
        return Check("construction", "FAILED", f"could not run: {(str(exc).splitlines() or ['-'])[0]}")
    status = "passed" if result.correct == result.admitted > 0 else "FAILED"
    return Check("construction", status, f"m = {built.width}: {result.correct}/{result.admitted} correct "
                 f"({samples} random, q = {q}, N = {length})",
                 {"width": int(built.width), "correct": int(result.correct), "checked": int(result.admitted),
                  "exhaustive": False, "random": int(samples), "adversarial": 0, "q": q, "length": length})


@lru_cache(maxsize=512)
def holds_at_precision(theorem: str, task: str | None, N: int, precision, *,
                       max_length: int = HOLDS_MAX_LENGTH, samples: int = HOLDS_SAMPLES,
                       seed: int = 0, q: int = 3, dprime: int = 1) -> Holds:
    """Whether the explicit weights of catalogue row ``theorem`` hold at the catalogue's ``N`` and
    ``precision`` (a format name, or a bit count: 16 / 32 / 64 IEEE, else ``fixed:P:P//2``).

    qSA rows are stated at the ``bounds`` parameters ``q`` and ``dprime`` (defaults 3 and 1) and
    any N: their weights are built at that q with N rows and judged by :func:`qsa_check`.
    """
    from commcomp.precision import parse_precision

    from reductions.registry import get_reduction

    from .checks import construction_check

    name = construction_for(theorem, task)
    if name is None or task is None:
        return Holds(None, name, None, None, "no explicit weights registered")
    try:
        fmt = parse_precision(precision)
        reduction = get_reduction(task, _PROBLEM.get(theorem))
    except CommcompError as exc:
        return Holds(None, name, None, None, f"unchecked: {(str(exc).splitlines() or ['-'])[0]}")
    if task == "qsa":
        if N > max_length or N < q + 1:
            return Holds(None, name, q, fmt.name, f"unchecked: N = {N} outside {q + 1}..{max_length}")
        check = qsa_check(name, q, int(N), fmt, dim=dprime, samples=samples, seed=seed)
        return Holds(check.status == "passed", name, q, fmt.name, f"{name} at {fmt.name}: {check.detail}")
    n = _problem_size(reduction, task, int(N))
    if n is None:
        return Holds(None, name, None, fmt.name, f"unchecked: no instance of {task} with N <= {N}")
    length = reduction.length(n)
    if length > max_length:
        return Holds(None, name, n, fmt.name, f"unchecked: {length} tokens > {max_length}")
    check = construction_check(task, name, n, fmt, samples=samples, seed=seed, adversarial_max=HOLDS_ADVERSARIAL,
                               problem=_PROBLEM.get(theorem))
    if check.status == "not checked":
        return Holds(None, name, n, fmt.name, f"unchecked: {check.detail}")
    return Holds(check.status == "passed", name, n, fmt.name, f"{name} at {fmt.name}: {check.detail}")


def annotate_rows(rows, precision, params: dict | None = None) -> list:
    """``BoundRow`` values with ``holds_at_precision`` filled on construction rows (width, upper).

    ``params``: the ``bounds`` parameters (qSA's ``q`` and ``dprime``).  The summary gains
    "holds at p = P" or "fails at p = P (counts)"; other rows are unchanged.
    """
    params = params or {}
    qsa = {"q": int(params.get("q", 3)), "dprime": int(params.get("dprime", 1))}
    out = []
    for row in rows:
        if row.kind != "upper" or row.quantity != "width" or row.min_width is None:
            out.append(row)
            continue
        verdict = holds_at_precision(row.theorem, row.task, int(row.n), precision,
                                     **(qsa if row.task == "qsa" else {}))
        if verdict.holds is None:
            out.append(row)
            continue
        counts = verdict.detail.split(": ", 1)[-1]
        word = "holds" if verdict.holds else "fails"
        out.append(dataclasses.replace(row, holds_at_precision=verdict.holds,
                                       summary=f"{row.summary}; {word} at p = {row.precision} ({counts})"))
    return out
