"""SHT's qSA separation at fixed q: the recurrent model is the weak side, one attention unit the strong.

SHT Thm 11: a recurrent (memory-bounded) model needs (N - 1)/2 bits of memory on qSA even at q = 1,
so m >= (N - 1)/(2p) (SHT-qSA-RNN); Thm 2: one self-attention unit of width d' + O(q log N) suffices
(SHT-qSA-UB-p, commcomp's C7a ``qsa-random-keys``: d' + min(N, ceil(8 q ln N))).  The registered
qSA task has q = (N - 1)/2 (SHT Thm 4's DISJ_q reduction), where the unit's width grows like N;
the separation is at fixed q, so this claim builds the weights at q and N rows and judges them with
:class:`.qsa_length.QsaAtLength`.  Checks (b) and (c) run on ``index@q1 -> qsa``
(:data:`reductions.arithmetic.index_to_qsa_q1`: INDEX on n = N - 1 bits, Alice's tokens first, Bob's
last token pointing at his index, a prefix/suffix split at q = 1 and any N): (b) the weak recurrent
model, below the bound, through :func:`.checks.witness_check` (the reachable-states engine), its
witness re-run through the unsplit model; (c) the unit of (a) split by
:class:`reductions.simulate.qsa.RowAttentionSplit` over that partition (Alice sends her rows' keys and
values, Bob attends from his row), faithful bit for bit on :data:`QSA_PROTOCOL_INSTANCES` instances
and at least the n bits INDEX needs one way.  Both at q = 1 only: the reduction has no q > 1 form.

Examples
--------
>>> from commcomp.precision import parse_precision
>>> from reductions.separations.claim_specs import CLAIMS
>>> spec = next(c for c in CLAIMS if c.claim == "retrieval-qSA")
>>> r = qsa_claim(spec, parse_precision("fixed:8:4"), samples=4)
>>> r.crossover_N, r.points[0].weak_width > r.points[0].strong_width, r.verdict
(914, True, 'shown')
>>> [c.status for c in r.checks]
['passed', 'found', 'passed', 'passed']
"""

from __future__ import annotations

from .checks import Check
from .claim_results import ClaimPoint, ClaimResult, claim_verdict, widths_check as _widths_check
from .holds import qsa_check
from .ladder import crossover

__all__ = ["qsa_claim", "QSA_DIM"]

#: d' of the claim's data (the registered task's value dimension).
QSA_DIM = 2
#: Random inputs of check (a) at most (each has N rows of N attention weights).
QSA_SAMPLES = 8
#: Instances of check (c): a handful (faithfulness is bit for bit on each; the bits are the same for all).
QSA_PROTOCOL_INSTANCES = 4
#: The reduction checks (b) and (c) run on (:data:`reductions.arithmetic.index_to_qsa_q1`).
QSA_PROBLEM = "index@q1"


def qsa_claim(spec, fmt, *, heads: int = 1, samples: int = 32, seed: int = 0, max_N: int = 1 << 20,
              weak_width: int = 1, weights: str = "random", budget: int = 1024) -> ClaimResult:
    """The qSA claim at ``spec.q`` (module docstring); ``weak_width``, ``weights`` and ``budget`` are
    check (b)'s, as for the other claims."""
    from commcomp.bounds import best_lower_bound, evaluate_bound, get_bound, min_width_for_bits

    q, bits = int(spec.q), fmt.bits
    unit = get_bound("SHT-qSA-UB-p")

    def weak_row(N):
        return best_lower_bound("qsa", spec.weak_arch, N, bits, heads, layers=spec.weak_layers)

    weak_bound = get_bound("SHT-qSA-RNN")

    def weak(N):  # the bound's state bits as a width (the search evaluates it often: no table rows)
        return min_width_for_bits(spec.weak_arch, evaluate_bound(weak_bound, N=N, p=bits, exact=True), bits)

    def strong(N):
        return int(evaluate_bound(unit, N=N, q=q, dprime=QSA_DIM)) if N >= q + 1 else None

    x = crossover(weak, strong, start=2 * q + 1, limit=max_N)
    if x is None:
        return ClaimResult(spec, fmt.name, None, None, verdict="not shown", reason="no crossover up to "
                           f"N = {max_N}")
    a = qsa_check(spec.construction, q, x, fmt, dim=QSA_DIM, samples=min(samples, QSA_SAMPLES), seed=seed)
    built = a.data.get("width")
    points = []
    for N in (x, 4 * x):
        row = weak_row(N)
        points.append(ClaimPoint(N, q, N, row.min_width, row.theorem, row.evidence, None, None, None,
                                 built if N == x else None, strong(N), N == x))
    problem = spec.problem or QSA_PROBLEM
    b = qsa_witness_check(spec, x, fmt, lower_width=weak(x), weak_width=weak_width, weights=weights,
                          budget=budget, seed=seed, problem=problem)
    c = qsa_protocol_check(spec, x, fmt, seed=seed, problem=problem)
    d = _widths_check(weak(x), built, x)
    checks = {"construction": a, "witness": b, "protocol": c, "widths": d}
    verdict, reason = claim_verdict(checks)
    return ClaimResult(spec, fmt.name, x, x, tuple(points), tuple(checks.values()), x, verdict, reason,
                       extra={"q": q, "dprime": QSA_DIM})


def _qsa_reduction(spec, N: int, problem: str):
    """The claim's reduction and its problem size at N tokens, or a reason it cannot run."""
    from reductions.registry import get_reduction

    reduction = get_reduction(spec.task, problem)
    if int(getattr(reduction.task, "q", -1)) != int(spec.q):
        return None, None, f"{reduction.name} is at q = {getattr(reduction.task, 'q', '?')}, the claim at q = {spec.q}"
    n = N - 1  # N = n + 1: Alice's n tokens, Bob's last
    if int(reduction.length(n)) != N:
        return None, None, f"{reduction.name} has no input of {N} tokens"
    return reduction, n, ""


def qsa_witness_check(spec, N: int, fmt, *, lower_width: int, weak_width: int = 1, weights: str = "random",
                      budget: int = 1024, seed: int = 0, problem: str = QSA_PROBLEM) -> Check:
    """(b) at N tokens: the weak recurrent model below the bound on ``problem``'s reduction
    (:func:`.checks.witness_check`). ``found`` only with its bits below what INDEX needs there and the
    unsplit model's outputs identical on x and x'; a complete search that finds no collision below
    those bits contradicts the theorem: FAILED."""
    from .checks import witness_check

    reduction, n, why = _qsa_reduction(spec, N, problem)
    if reduction is None:
        return Check("witness", "not checked", why)
    wit = _sampled_witness(spec, n, fmt, lower_width=lower_width, weak_width=weak_width, weights=weights,
                           seed=seed, problem=problem)
    if wit is None:  # none among the sampled inputs: the complete search (reachable states) decides
        wit = witness_check(spec.task, spec.weak_arch, spec.weak_layers, n, fmt, lower_width=lower_width,
                            weak_width=weak_width, weights=weights, budget=budget, seed=seed, problem=problem)
    bits, need = wit.data.get("bits_per_message"), wit.data.get("lower_bound_bits")
    below = bits is not None and need is not None and bits < need
    where = f"{reduction.name} at N = {N}"
    if wit.status == "found":
        if not below:
            return Check("witness", "not checked", f"m = {wit.data.get('width')} sends {bits} bits >= the {need} "
                         f"INDEX needs at N = {N}: a wrong answer there witnesses no bound", wit.data)
        same, wrong = _rerun_unsplit(spec, n, fmt, wit.data, weak_width=weak_width, weights=weights, seed=seed,
                                     problem=problem)
        if not (same and wrong):
            return Check("witness", "FAILED", f"the witness does not hold through the unsplit model (outputs "
                         f"identical: {same}, a wrong answer: {wrong}; {where})", wit.data)
        return Check("witness", "found", f"m = {wit.data.get('width')}: {bits} bits < {need} (INDEX, n = {n}; "
                     f"SHT's (N - 1)/2 = {(N - 1) / 2:g}): wrong on {wit.data.get('wrong_on')}, unsplit outputs "
                     f"identical on x and x' ({wit.data.get('method')}, {where})", wit.data)
    if wit.status == "not found" and wit.data.get("complete") and below:
        return Check("witness", "FAILED", f"{wit.detail}: a complete search below the {need} bits INDEX needs "
                     f"found no collision ({where}), which contradicts the bound", wit.data)
    return Check("witness", wit.status, f"{wit.detail} ({where})", wit.data)


#: Inputs of Alice's hashed by the cheap first try of check (b) (a seeded sample, one batch).
QSA_WITNESS_SAMPLE = 256


def _sampled_witness(spec, n: int, fmt, *, lower_width: int, weak_width: int, weights: str, seed: int,
                     problem: str):
    """A witness among :data:`QSA_WITNESS_SAMPLE` seeded inputs of Alice's (one batch through the model:
    at the crossover much cheaper than the reachable-states engine's step per position), as a ``found``
    :class:`Check`; None when none is found there or the weak width is not below the bound (a sample
    proves nothing by finding nothing: the caller then runs the complete search)."""
    from commcomp.errors import CommcompError

    from reductions.search.witness import find_witness

    if weights == "random" and weak_width >= lower_width:
        return None
    try:
        out = find_witness(spec.task, spec.weak_arch, n, fmt, width=weak_width if weights == "random" else None,
                           layers=spec.weak_layers, weights=weights, seed=seed, budget=QSA_WITNESS_SAMPLE,
                           problem=problem, method="sample")
    except CommcompError:
        return None
    if not out["found"]:
        return None
    data = {k: out.get(k) for k in ("method", "complete", "found", "x", "x_prime", "y", "wrong_on", "tried",
                                    "bits_per_message", "lower_bound_bits", "width", "weights")}
    return Check("witness", "found", f"m = {out['width']}: wrong on {out['wrong_on']} ({out['method']})", data)


def qsa_protocol_check(spec, N: int, fmt, *, seed: int = 0, problem: str = QSA_PROBLEM,
                       instances: int = QSA_PROTOCOL_INSTANCES, model=None) -> Check:
    """(c) at N tokens: the claim's unit (``spec.construction`` at q and N; or ``model``) split over
    ``problem``'s prefix/suffix partition by :class:`reductions.simulate.qsa.RowAttentionSplit`:
    ``passed`` when faithful bit for bit on every instance, correct on them, and its one message at
    least the n bits INDEX needs one way."""
    from commcomp.errors import CommcompError

    from reductions.simulate.api import verify

    reduction, n, why = _qsa_reduction(spec, N, problem)
    if reduction is None:
        return Check("protocol", "not checked", why)
    try:
        if model is None:
            from models.constructions import get_construction

            model = get_construction(spec.construction).make(int(spec.q), fmt, seed=seed, length=N,
                                                              dim=QSA_DIM).model
        out = verify(spec.task, spec.strong_arch, n, fmt, problem=problem, model=model, instances=instances,
                     seed=seed)
    except CommcompError as exc:
        return Check("protocol", "not checked", (str(exc).splitlines() or ["-"])[0])
    bits, need, faithful, correct = (out["bits_per_message"], out["lower_bound_bits"], out.get("faithful"),
                                     out.get("correct"))
    data = {"bits": bits, "lower_bound_bits": need, "faithful": faithful, "correct": correct,
            "theorem": out.get("theorem"), "rounds": out.get("protocol_rounds"), "instances": instances,
            "problem": problem, "length": N}
    ok = faithful == 1.0 and correct == 1.0 and bits is not None and need is not None and bits >= need
    detail = (f"{bits} bits {'>=' if ok else 'vs'} {need} (INDEX one way), faithful {faithful}, correct "
              f"{correct} on {instances} instances ({reduction.name} at N = {N}, Alice's rows' keys and values)")
    return Check("protocol", "passed" if ok else "FAILED", detail, data)


def _rerun_unsplit(spec, n: int, fmt, data: dict, *, weak_width: int, weights: str, seed: int,
                   problem: str) -> tuple[bool, bool]:
    """The witness ``(x, x', y)`` of ``data`` re-run through the unsplit weak model (the same model
    :func:`.checks.witness_check` built): ``(outputs bit-identical on x and x', the model's answer
    wrong on one of them)``."""
    import numpy as np

    from reductions.simulate.batch import run_batch
    from reductions.simulate.setup import parse_input, prepare

    sim = prepare(spec.task, spec.weak_arch, n, fmt, width=weak_width if weights == "random" else None,
                  layers=spec.weak_layers, weights=weights, seed=seed, problem=problem)
    x = np.concatenate([np.reshape(parse_input(sim.problem, n, data[k], "alice"), (1, n))
                        for k in ("x", "x_prime")])  # (2, n)
    y = np.concatenate([parse_input(sim.problem, n, str(data["y"]), "bob")] * 2)  # (2,)
    res = run_batch(sim, x, y)
    logits = np.ascontiguousarray(np.asarray(res.reference.logits), dtype=np.float64)  # (2, K, C): unsplit
    same = bool(np.array_equal(logits[0].view(np.uint64), logits[1].view(np.uint64)))
    answer = np.asarray(sim.reduction.decode(np.asarray(res.reference.answers), y), dtype=bool)
    truth = np.asarray(sim.problem.evaluate(x, y), dtype=bool)
    return same, bool(truth[0] != truth[1] and np.any(answer != truth))
