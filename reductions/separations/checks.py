"""The three checks of a separation row, each named, each able to fail.

(a) ``construction`` — the registered explicit weights at their width, at the stated precision,
    judged by the task's own ground truth: on every input when there are few
    (``spec.exhaustive_max_n``), else on ``samples`` random task inputs plus adversarial ones
    (the reduction's encodings of the problem's hardest pairs: ``y = x``, ``y = x`` with one bit
    flipped, all-zero and all-one strings; for Dyck also near-valid strings of the task itself,
    :func:`reductions.tasks.dyck_hard.dyck_adversarial`; pairs that encode to the same tokens count
    once).  ``passed`` / ``FAILED`` with the counts.
(b) ``witness`` — a model of the weak architecture whose state bits fall below the bound
    (random weights of width ``weak_width``, or the user's weights file) run as a protocol;
    :func:`reductions.search.witness.find_witness` looks for x != x' with the same message and a y
    separating them (a 1-layer Transformer: exact collisions of its attention sums,
    :func:`reductions.search.attention.find_attention_collision`, re-checked on the protocol).  ``found`` (x, x', y and which answer is wrong) or ``not found``, with the
    method the engine used.  Not checked when the bound allows the weak width at this N.
(c) ``protocol`` — the construction run as an Alice/Bob protocol
    (:func:`reductions.simulate.verify` with ``weights="construction"``): ``passed`` when the
    split is faithful bit for bit and sends at least the bits the problem needs with that many
    rounds; ``FAILED`` otherwise; not checked when the architecture has no split.

Every check returns a :class:`Check`; a check that could not run says ``not checked`` and why.

Examples
--------
>>> c = witness_check("index-lookup", "elman", 1, 32, "fixed:4:2", lower_width=8, weak_width=1,
...                   budget=2048, seed=0)
>>> c.name, c.status, c.data["bits_per_message"] < c.data["lower_bound_bits"]
('witness', 'found', True)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from commcomp.architectures import get_architecture
from commcomp.errors import CommcompError

__all__ = ["Check", "construction_check", "witness_check", "protocol_check", "adversarial_pairs", "adversarial_budget"]

#: The qSA row unit's witness search: at most this many (B, N, N) entries per chunk (128 MiB).
WITNESS_MAX_ELEMENTS = 1 << 24



def _takes_heads(arch: str) -> bool:
    """Whether ``arch`` has heads among its hyperparameters (the others take none)."""
    return "heads" in get_architecture(arch).hyper_names


@dataclass(frozen=True)
class Check:
    """One named check: ``status`` is passed / FAILED / found / not found / not checked."""

    name: str
    status: str
    detail: str
    data: dict = field(default_factory=dict)

    @property
    def ran(self) -> bool:
        return self.status != "not checked"

    def to_json(self) -> dict:
        return {"name": self.name, "status": self.status, "detail": self.detail, **self.data}


def _skip(name: str, why: str) -> Check:
    return Check(name, "not checked", why)


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def adversarial_pairs(problem, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Hard (x, y) pairs of a two-party problem: ``y = x``, ``y = x`` with bit i flipped (i < 8),
    all zeros and all ones against each other.  ``(B, n)`` uint8 each.

    >>> from commcomp.problems import get_problem
    >>> x, y = adversarial_pairs(get_problem("equality"), 4)
    >>> x.shape, int((x != y).sum(axis=1).max())
    ((9, 4), 4)
    """
    rng = np.random.default_rng([n, 7])
    base = rng.integers(0, 2, size=(1, n), dtype=np.uint8)
    flips = np.repeat(base, min(n, 8), axis=0)
    flips[np.arange(len(flips)), np.arange(len(flips))] ^= 1
    zeros, ones = np.zeros((1, n), np.uint8), np.ones((1, n), np.uint8)
    xs = np.concatenate([base, np.repeat(base, len(flips), 0), zeros, ones, zeros, ones])
    ys = np.concatenate([base, flips, zeros, ones, ones, zeros])
    if problem.name == "index":  # Bob holds an index, not a string: every index against x
        xs = np.repeat(base, n, axis=0)
        ys = np.arange(n)[:, None] if np.ndim(problem.bob_inputs(1)) > 1 else np.arange(n)
    return xs, ys


def construction_check(task: str, construction: str | None, n: int, precision, *, samples: int = 64,
                       seed: int = 0, construction_object=None, adversarial_max: int | None = None,
                       problem: str | None = None) -> Check:
    """(a): the explicit construction judged by the task's ground truth (module docstring);
    ``adversarial_max`` keeps only the first that many adversarial pairs (by default all, up to
    :func:`adversarial_budget` at long lengths: Index's n pairs at Nearest Neighbour's 5569 tokens
    would cost minutes; evenly spaced ones are kept, the first and the last among them); ``problem``
    picks the reduction (``index@split``: the split layout's) whose sizes and hard pairs are used."""
    from reductions.search.construction import check_construction
    from reductions.registry import get_reduction

    if construction is None and construction_object is None:
        return _skip("construction", "no explicit weights registered")
    reduction = None if task is None else get_reduction(task, problem)  # None: the construction's own task
    try:
        if construction_object is None:
            from models.constructions import get_construction

            spec = get_construction(construction)
            built = spec.make(n if reduction is None else reduction.task_size(n), precision, seed=seed)
        else:
            spec, built = None, construction_object
        exhaustive = spec is not None and spec.inputs is not None and built.n <= spec.exhaustive_max_n
        inputs = spec.inputs(built.n) if exhaustive else None
        result = check_construction(built, inputs=inputs, samples=samples, seed=seed, stop_early=False)
        adv, kept_of = (0, 0), None
        if reduction is not None:
            adv, kept_of = _adversarial_check(built, reduction, n, adversarial_max)
        hard = _task_adversarial(built, seed)
        adv = (adv[0] + hard[0], adv[1] + hard[1])
    except CommcompError as exc:
        return Check("construction", "FAILED", f"could not run: {_first_line(exc)}")
    except MemoryError:
        return _skip("construction", f"out of memory at n = {n}")
    correct, total = result.correct + adv[0], result.admitted + adv[1]
    kept = "" if kept_of is None else (f" (evenly spaced, of {kept_of}: pairs x tokens² <= "
                                       f"{ADVERSARIAL_BUDGET:.2g})")
    what = (f"all {result.admitted - samples} inputs + {samples} random" if exhaustive
            else f"{samples} random") + (f" + {adv[1]} adversarial{kept}" if adv[1] else "")
    status = "passed" if correct == total and total > 0 else "FAILED"
    return Check("construction", status, f"m = {built.width}: {correct}/{total} correct ({what})",
                 {"width": int(built.width), "correct": int(correct), "checked": int(total),
                  "exhaustive": bool(exhaustive), "random": int(samples), "adversarial": int(adv[1])})


#: Task-level near-valid inputs per check (a) of a Dyck construction, beside the reduction's pairs.
TASK_ADVERSARIAL_COUNT = 35


def _task_adversarial(built, seed: int) -> tuple[int, int]:
    """Correct / total on the task's own near-valid inputs (Dyck: :mod:`reductions.tasks.dyck_hard`)."""
    from reductions.search.construction import check_construction

    if built.task != "dyck" or built.n < 2:
        return 0, 0
    from reductions.tasks.dyck_hard import dyck_adversarial

    tokens = dyck_adversarial(built.n, np.random.default_rng([seed, 20]), TASK_ADVERSARIAL_COUNT)
    result = check_construction(built, inputs=tokens, stop_early=False)
    return result.correct, result.admitted


#: Adversarial pairs x length² per check (a) at most by default (256 x 1100²: every pair of the rows
#: of up to 739 tokens (Equality's 369 pairs), MQAR's 577 at 1155 tokens cut to 232, the hybrid's 945
#: at 945 to 346, Index's 2784 at 5569 tokens to 16): attention's work is quadratic in the length, so
#: this bounds a check's time (the default `separations` run within about 15 s on 2 cores; it was
#: 1100³, 4.6 times as many, before the hybrid's and the 2-layer lines' checks joined the run).
ADVERSARIAL_BUDGET = 256 * 1100 ** 2


def adversarial_budget(length: int) -> int:
    """How many adversarial pairs a check (a) at ``length`` tokens runs by default (at least 16).

    >>> adversarial_budget(1100), adversarial_budget(945), adversarial_budget(5569)
    (256, 346, 16)
    """
    return max(16, ADVERSARIAL_BUDGET // max(1, length) ** 2)


def _spread(count: int, most: int) -> np.ndarray:
    """``most`` indices of ``range(count)`` evenly spaced, the first and the last among them."""
    return np.unique(np.linspace(0, count - 1, most).round().astype(np.int64))


def _adversarial_check(built, reduction, n, most: int | None = None) -> tuple[tuple[int, int], int | None]:
    """``((correct, total), cut_from)``: the construction on the reduction's encodings of
    :func:`adversarial_pairs` (the first ``most`` of them when given; else at most
    :func:`adversarial_budget`, evenly spaced, and ``cut_from`` says how many there were)."""
    from commcomp.problems import get_problem

    from reductions.search.construction import check_construction

    problem = get_problem(reduction.problem)
    try:
        xs, ys = adversarial_pairs(problem, n)
        cut_from = None
        if most is not None:
            xs, ys = xs[:most], ys[:most]
        elif len(xs) > adversarial_budget(built.length):
            keep = _spread(len(xs), adversarial_budget(built.length))
            cut_from, xs, ys = len(xs), xs[keep], ys[keep]
        encoded = reduction.encode(xs, ys, n)
    except (CommcompError, ValueError, IndexError):
        return (0, 0), None
    batch = getattr(encoded, "task_batch", encoded)
    if getattr(batch, "features", None) is not None:
        inputs = batch
    else:  # pairs that encode to the same tokens are one input (copy: Bob's y only picks the output read)
        inputs = np.unique(np.asarray(getattr(batch, "tokens", batch)), axis=0)
    result = check_construction(built, inputs=inputs, stop_early=False)
    return (result.correct, result.admitted), cut_from


def witness_check(task: str, arch: str, layers: int, n: int, precision, *, lower_width: int | None,
                  weak_width: int = 1, weights: str = "random", budget: int = 1024, seed: int = 0,
                  heads: int = 1, cot: bool = False, problem: str | None = None) -> Check:
    """(b): a witness on a weak model below the bound (module docstring); ``problem`` picks the
    reduction (the task's default when None)."""
    from reductions.search.witness import find_witness

    if lower_width is None:
        return _skip("witness", "no lower bound at this N")
    if weights == "random" and weak_width >= lower_width:
        return _skip("witness", f"bound allows m = {weak_width} at this N (needs m >= {lower_width})")
    from reductions.registry import get_reduction

    reduction = get_reduction(task, problem)
    if reduction.split == "partition" and reduction.task_name == "qsa":  # the row unit: dense (B, N, N) arrays
        # per chunk (reductions.simulate.qsa.random_row_model runs it for qsa only; token Transformers on
        # a partition, induction heads', run the attention engine without such arrays)
        fit = WITNESS_MAX_ELEMENTS // (reduction.length(n) ** 2)
        if fit < 64:
            return _skip("witness", f"the row unit's search needs (B, N, N) arrays: too large at "
                                    f"N = {reduction.length(n)} (use --sizes)")
        budget = min(budget, fit)
    try:
        out = find_witness(task, arch, n, precision, width=None if weights != "random" else weak_width,
                           layers=layers, heads=heads if _takes_heads(arch) else 1, weights=weights, seed=seed,
                           budget=budget, cot=cot, problem=problem)
    except CommcompError as exc:
        return _skip("witness", _first_line(exc))
    except MemoryError:
        return _skip("witness", f"out of memory at n = {n} (lower --budget)")
    data = {k: out.get(k) for k in ("method", "complete", "found", "x", "x_prime", "y", "wrong_on", "tried",
                                    "bits_per_message", "lower_bound_bits", "width", "weights")}
    bits, need = out.get("bits_per_message"), out.get("lower_bound_bits")
    below = bits is not None and need is not None and bits < need
    if out["found"]:
        if not below:  # a collision of a model that may send what the problem needs: no bound at stake
            return Check("witness", "not checked", f"m = {out['width']} sends {bits} bits, not below the {need} "
                         f"the problem needs: a wrong answer there witnesses no bound ({out['method']})", data)
        return Check("witness", "found", f"m = {out['width']}, {bits} bits < {need}: wrong on "
                     f"{out['wrong_on']} ({out['method']})", data)
    exhaustive = out.get("complete") or out.get("method") == "enumerate"
    if exhaustive and below:  # pigeonhole: fewer message values than the problem needs must collide
        return Check("witness", "FAILED", f"m = {out['width']}, {bits} bits < {need}, yet no two inputs "
                     f"collide (exhaustive, {out['method']}): contradicts the bound", data)
    why = "no two inputs collide (exhaustive)" if exhaustive else f"none among {out['tried']} inputs"
    return Check("witness", "not found", f"m = {out['width']}, {bits} bits vs {need}: {why} "
                 f"({out['method']})", data)


#: Check (c) runs at most this many tokens x outputs x instances (4 instances of one output at 8800 tokens).
PROTOCOL_MAX_ELEMENTS = 4 * 8800
#: Check (c) runs at most this many instances: a handful. Faithfulness is bit for bit on each one, and
#: the bits sent are the same for every instance (fixed-length messages), so more instances add time,
#: not strength; the tests run the splits on every input at small n.
PROTOCOL_INSTANCES = 4


def _tokens_times_outputs(task: str, n: int) -> int:
    from reductions.registry import get_reduction

    reduction = get_reduction(task)
    size = reduction.task_size(n)
    return max(1, int(reduction.length(n)) * len(reduction.task.output_positions(size)))


def protocol_check(task: str, arch: str | None, layers: int | None, n: int, precision, *,
                   construction: str | None, instances: int = 32, seed: int = 0, heads: int = 1) -> Check:
    """(c): the construction as an Alice/Bob protocol, faithful and at least the bound's bits; on a task
    with many outputs (copy: n) at most :data:`PROTOCOL_MAX_ELEMENTS` tokens x outputs x instances, and
    at least 4 instances; never more than :data:`PROTOCOL_INSTANCES`. A 2-layer Transformer runs through
    :class:`~reductions.simulate.deep_transformer.DeepTransformerSplit` (rows per layer)."""
    from reductions.simulate import verify

    if construction is None:
        return _skip("protocol", "no explicit weights to split")
    try:
        instances = min(instances, PROTOCOL_INSTANCES,
                        max(4, PROTOCOL_MAX_ELEMENTS // _tokens_times_outputs(task, n)))
        out = verify(task, arch, n, precision, weights="construction", layers=layers, heads=heads,
                     instances=instances, seed=seed)
    except CommcompError as exc:
        return _skip("protocol", _first_line(exc))
    bits, need, faithful = out["bits_per_message"], out["lower_bound_bits"], out.get("faithful")
    data = {"bits": bits, "lower_bound_bits": need, "faithful": faithful, "theorem": out.get("theorem"),
            "rounds": out.get("protocol_rounds"), "instances": instances}
    ok = faithful == 1.0 and bits is not None and (need is None or bits >= need)
    detail = f"{bits} bits >= {need}, faithful {faithful}" if ok else \
        f"{bits} bits vs {need}, faithful {faithful}"
    return Check("protocol", "passed" if ok else "FAILED", detail, data)
