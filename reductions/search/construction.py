"""Minimal precision and width of a construction, judged by its task's own ground truth.

For a construction and a task size n, the search finds

* the smallest **fixed-point** format ``fixed:P:F`` (P scanned upwards, every F in ``[0, P)``
  for each P) at which the construction is correct on every input checked;
* the smallest **float** format among float16, bfloat16, float32, float64 (in that order);
* the smallest **width**: the construction's width option (the code length k, which sets
  ``d_model``) scanned upwards, each value tried with ``draws`` seeds (a random code that fails
  may be redrawn: "there are weights of this width"), at a given precision.

"Correct" means correct on *every* input checked: all inputs (``spec.inputs(n)``) when
``exhaustive`` (the small-N regime), plus ``samples`` random inputs from the task's sampler (the
large-N regime).  The judge is the task's ``ground_truth``: the ``reductions.tasks`` instance
registered under the spec's task name (:func:`reductions.registry.get_task`; pass ``task=`` to
judge by another), or the construction's own ``task_object`` for tasks it defines (C5's k-DNF).
It lives in ``reductions`` (not beside the weights in ``models.constructions``) because the
judge is the task: ``models`` never imports ``reductions``.

Examples
--------
>>> from models.constructions import get_construction
>>> spec = get_construction("index-lookup")
>>> minimal_fixed(spec, 4).precision             # weights round to 0 or 1: hard attention
'fixed:2:0'
>>> minimal_option(spec, 16, samples=100).value             # binary codes: k = log2 16
4
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from commcomp.errors import CommcompError, InvalidParameterError
from commcomp.limits import MAX_INSTANCES, check_int

from models.constructions.base import CheckResult, Construction, ConstructionSpec

__all__ = ["Judge", "judge_for", "check_construction", "minimal_fixed", "minimal_float",
           "minimal_option", "minimal_width", "search_table", "SearchResult", "FLOAT_FORMATS"]

FLOAT_FORMATS = ("float16", "bfloat16", "float32", "float64")
CHUNK = 4096             # instances per forward pass at most
CHUNK_ELEMENTS = 1 << 21  # and at most this many residual entries (B·N·d) per pass (16 MiB: the
#                          passes' temporaries then stay in reused memory; 1 << 23 cost about 2 s more of
#                          system time, page faults, in the default `separations` run)


def chunk_size(construction: Construction) -> int:
    """Instances per forward pass: :data:`CHUNK`, fewer for long or wide models (memory)."""
    per = max(1, construction.length * max(1, construction.width))
    return max(1, min(CHUNK, CHUNK_ELEMENTS // per))


@dataclass(frozen=True)
class Judge:
    """The ground truth and the sampler of a task, as the search uses them.

    An input is a ``(B, N)`` token array, or a ``TaskBatch`` when the task's positions carry
    vectors (``features``: qSA), which the construction reads instead of the tokens.
    """

    ground_truth: object   # inputs -> answers (B, K) or (B, K, d)
    sample: object         # (batch, rng) -> inputs


def take_rows(inputs, index):
    """Rows ``index`` of a token array or of a ``TaskBatch`` (tokens and features; answers dropped)."""
    if getattr(inputs, "tokens", None) is None:
        return np.asarray(inputs)[index]
    feats = inputs.features
    return type(inputs)(inputs.tokens[index], None if feats is None else feats[index], None,
                        inputs.meta)


def count_rows(inputs) -> int:
    """Number of instances in a token array or a ``TaskBatch``."""
    return len(getattr(inputs, "tokens", inputs))


def judge_for(construction: Construction, task=None) -> Judge:
    """The judge of a construction: its ``task_object``, ``task``, or the registered task."""
    obj = construction.task_object
    if obj is not None:
        return Judge(obj.ground_truth, obj.sample)
    if task is None:
        from reductions.registry import task_instance

        params = {"alphabet": construction.params_report["alphabet"]} if construction.task == "index-first-lookup" \
            else {}
        task = task_instance(construction.task, **params)
        extra = construction.params_report.get("task_params")  # the task instance it was built for
        if extra:
            task = dataclasses.replace(task, **extra)
    n = construction.n

    def truth(inputs):
        if getattr(inputs, "tokens", None) is not None:
            return task.ground_truth(inputs)
        return task.ground_truth(task.make_batch(n, inputs))

    def sample(batch, rng):
        b = task.sample(n, batch, rng)
        return b if b.features is not None else b.tokens
    return Judge(truth, sample)


def check_construction(construction: Construction, *, inputs=None, samples: int = 0, seed=0,
                       task=None, stop_early: bool = True) -> CheckResult:
    """Check a construction on ``inputs`` (tokens or a ``TaskBatch``) and on ``samples`` random
    task inputs.

    Runs in chunks of :func:`chunk_size` instances; with ``stop_early`` it returns at the first chunk
    with a miss (the search needs only pass / fail).
    """
    judge = judge_for(construction, task)
    total = CheckResult(0, 0, 0)
    step = chunk_size(construction)
    blocks = []
    if inputs is not None:
        if getattr(inputs, "tokens", None) is None:
            inputs = np.asarray(inputs)
        blocks += [take_rows(inputs, slice(i, i + step)) for i in range(0, count_rows(inputs), step)]
    rng = np.random.default_rng(seed)
    left = check_int("samples", samples, 0, MAX_INSTANCES)
    while blocks or left > 0:
        if blocks:
            chunk = blocks.pop(0)
        else:
            chunk, left = judge.sample(min(left, step), rng), left - min(left, step)
        admitted = construction.admits(chunk)
        if not admitted.any():
            total = total + CheckResult(count_rows(chunk), 0, 0)
            continue
        kept = take_rows(chunk, admitted)
        ok = construction.correct(kept, judge.ground_truth(kept))
        idx = np.nonzero(admitted)[0][~ok][:20]
        total = total + CheckResult(count_rows(chunk), int(admitted.sum()), int(ok.sum()),
                                    tuple(int(i) for i in idx))
        if stop_early and total.correct < total.admitted:
            break
    return total


@dataclass(frozen=True)
class SearchResult:
    """One search outcome: what was minimised, the best value, and what was checked."""

    construction: str
    n: int
    length: int
    quantity: str                 # "fixed", "float", or the width option ("k", "m", ...)
    value: object                 # P, the format name, or the option value (None: none passed)
    precision: str | None         # the format at which it passed
    width: int | None             # d_model of the passing model
    checked: int                  # inputs checked at the passing point
    exhaustive: bool
    tried: int                    # candidates built
    seconds: float
    params: dict = field(default_factory=dict)

    def row(self) -> dict:
        return {k: getattr(self, k) for k in ("construction", "n", "length", "quantity", "value",
                                               "precision", "width", "checked", "exhaustive",
                                               "tried", "seconds")}


def _passes(spec, n, precision, options, exhaustive, samples, seed, task):
    try:
        c = spec.make(n, precision, seed=seed, **options)
    except (CommcompError, np.linalg.LinAlgError, ValueError, OverflowError):
        return None, None
    inputs = spec.inputs(n) if exhaustive and spec.inputs is not None else None
    if exhaustive and inputs is None and c.task_object is not None:
        inputs = c.task_object.all_inputs()
    # a cheap screen first (it can only reject): a few inputs spread over the set, a few samples
    screen = None if inputs is None else take_rows(inputs, slice(None, None,
                                                                 max(1, count_rows(inputs) // 32)))
    quick = check_construction(c, inputs=screen, samples=min(samples, 8), seed=seed, task=task)
    if quick.correct < quick.admitted:
        return c, quick
    r = check_construction(c, inputs=inputs, samples=samples, seed=seed, task=task)
    return c, r


def _regime(spec, n, exhaustive, samples=0):
    exh = (n <= spec.exhaustive_max_n) if exhaustive is None else bool(exhaustive)
    if not exh and samples <= 0:
        raise InvalidParameterError(f"{spec.name} at n = {n}: nothing to check (not exhaustive "
                                    "and no samples); pass samples=")
    return exh


def minimal_fixed(spec: ConstructionSpec, n: int, *, bits=range(2, 54), options=None,
                  exhaustive=None, samples: int = 0, seed=0, task=None) -> SearchResult:
    """The smallest ``fixed:P:F`` (smallest P, then the F tried first in ``0..P-1``) that passes.

    ``exhaustive`` defaults to ``n <= spec.exhaustive_max_n``; ``samples`` random inputs are
    checked as well (use them at large n).
    """
    t0, tried, exh = time.perf_counter(), 0, _regime(spec, n, exhaustive, samples)
    opts = dict(options or {})
    for P in bits:
        for F in range(0, P):
            tried += 1
            c, r = _passes(spec, n, f"fixed:{P}:{F}", opts, exh, samples, seed, task)
            if r is not None and r.ok:
                return SearchResult(spec.name, n, c.length, "fixed", P, f"fixed:{P}:{F}", c.width,
                                    r.admitted, exh, tried, time.perf_counter() - t0)
    return SearchResult(spec.name, n, 0, "fixed", None, None, None, 0, exh, tried,
                        time.perf_counter() - t0)


def minimal_float(spec: ConstructionSpec, n: int, *, formats=FLOAT_FORMATS, options=None,
                  exhaustive=None, samples: int = 0, seed=0, task=None) -> SearchResult:
    """The first format of ``formats`` (narrowest first) at which the construction passes;
    ``params['passing']`` lists every format that passes."""
    t0, exh, passing, first = time.perf_counter(), _regime(spec, n, exhaustive, samples), [], None
    for fmt in formats:
        c, r = _passes(spec, n, fmt, dict(options or {}), exh, samples, seed, task)
        if r is not None and r.ok:
            passing.append(fmt)
            first = first or (fmt, c, r)
    if first is None:
        return SearchResult(spec.name, n, 0, "float", None, None, None, 0, exh, len(formats),
                            time.perf_counter() - t0, {"passing": passing})
    fmt, c, r = first
    return SearchResult(spec.name, n, c.length, "float", fmt, fmt, c.width, r.admitted, exh,
                        len(formats), time.perf_counter() - t0, {"passing": passing})


def minimal_option(spec: ConstructionSpec, n: int, *, precision="float64", options=None,
                   start: int = 1, stop: int | None = None, draws: int = 3, exhaustive=None,
                   samples: int = 0, seed=0, task=None) -> SearchResult:
    """The smallest value of ``spec.width_option`` (``start..stop``) with a passing draw.

    Without a width option the construction's own width is checked and reported.  ``stop``
    defaults to twice the option's default value plus 8 (the default construction's ``k``).
    """
    t0, exh, tried = time.perf_counter(), _regime(spec, n, exhaustive, samples), 0
    opts = dict(options or {})
    name = spec.width_option
    if name and stop is None:
        default = spec.make(n, precision, seed=seed, **opts).params_report.get(name)
        stop = 2 * int(default) + 8 if isinstance(default, (int, np.integer)) else 4096
    values = range(start, stop + 1) if name else [None]
    for v in values:
        for s in range(draws if name else 1):
            tried += 1
            c, r = _passes(spec, n, precision, {**opts, **({name: v} if name else {})}, exh,
                           samples, seed + s, task)
            if r is not None and r.ok:
                return SearchResult(spec.name, n, c.length, name or "width", v, str(precision), c.width,
                                    r.admitted, exh, tried, time.perf_counter() - t0,
                                    {"seed": seed + s, **{k: c.params_report.get(k) for k in
                                                          ("k", "m", "gamma_achieved", "beta")
                                                          if k in c.params_report}})
    return SearchResult(spec.name, n, 0, name or "width", None, str(precision), None, 0, exh, tried,
                        time.perf_counter() - t0)


def search_table(specs_and_options, sizes, *, precision="float64", samples: int = 200,
                 seed=0, fixed=True, floats=True, width=True) -> list[dict]:
    """Rows ``construction, options, n, N, regime, min_width, min_option, min_fixed, min_float``.

    ``specs_and_options``: ``(spec, options dict, label)`` triples; ``sizes``: task sizes n.  Each
    size is checked exhaustively when ``n <= spec.exhaustive_max_n``, else on ``samples``
    random inputs.
    """
    rows = []
    for spec, options, label in specs_and_options:
        for n in sizes:
            exh = n <= spec.exhaustive_max_n
            smp = 0 if exh else samples
            row = {"construction": label or spec.name, "n": n, "regime": "all" if exh else f"{smp} random"}
            if width:
                r = minimal_option(spec, n, precision=precision, options=options, exhaustive=exh,
                                   samples=smp, seed=seed)
                row.update(N=r.length, min_width=r.width, width_option=r.quantity, min_option=r.value)
            if fixed:
                r = minimal_fixed(spec, n, options=options, exhaustive=exh, samples=smp, seed=seed)
                row.update(min_fixed=r.precision, N=row.get("N") or r.length)
            if floats:
                r = minimal_float(spec, n, options=options, exhaustive=exh, samples=smp, seed=seed)
                row.update(min_float=r.value, floats_passing=r.params.get("passing"))
            rows.append(row)
    return rows


def minimal_width(task, arch=None, n: int = 8, precision=None, *, layers=None, heads=None,
                  problem=None, max_width: int | None = None, instances: int = 200, seed: int = 0,
                  search_precision: bool = True, **options) -> dict:
    """The sweep's ``construct`` operation: minimal width (and fixed-point bits) for a task.

    Returns a dict with ``task, arch, n, construction, precision, min_width, width_option,
    min_option, min_precision, min_precision_bits, exhaustive, instances, lower_bound_width,
    catalogue_width, theorem, seconds``.  ``problem`` and ``heads`` are accepted and ignored
    (a construction fixes its heads); ``max_width`` bounds the scanned option values.
    """
    from models.constructions import get_construction

    t0 = time.perf_counter()
    spec = get_construction(task, arch=arch, layers=layers)
    exh = n <= spec.exhaustive_max_n
    smp = 0 if exh else int(instances)
    prec = precision or "float64"
    w = minimal_option(spec, n, precision=prec, options=options, exhaustive=exh, samples=smp,
                       seed=seed, stop=int(max_width) if max_width else None)
    out = {"task": spec.task, "arch": spec.arch, "n": n, "construction": spec.name,
           "precision": str(prec), "min_width": w.width, "width_option": w.quantity,
           "min_option": w.value, "min_precision": None, "min_precision_bits": None,
           "exhaustive": exh, "instances": w.checked, "theorem": spec.source,
           "lower_bound_width": None, "catalogue_width": None}
    if search_precision:
        f = minimal_fixed(spec, n, options=options, exhaustive=exh, samples=smp, seed=seed)
        out.update(min_precision=f.precision, min_precision_bits=f.value)
    out.update(_catalogue_widths(spec, w.length or n, prec))
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


def _catalogue_widths(spec, N, precision) -> dict:
    """The calculator's widest lower bound and narrowest construction width for this task/arch."""
    try:
        from commcomp.bounds import compute_bounds

        rows = compute_bounds(max(2, int(N)), precision, task=spec.task, arch=spec.arch,
                              layers=spec.layers)
    except (CommcompError, KeyError, TypeError, ValueError, ImportError):
        return {}
    low = [r.min_width for r in rows if r.kind == "lower" and getattr(r, "min_width", None)]
    up = [r.min_width for r in rows if r.kind == "upper" and getattr(r, "min_width", None)]
    return {"lower_bound_width": max(low) if low else None,
            "catalogue_width": min(up) if up else None}
