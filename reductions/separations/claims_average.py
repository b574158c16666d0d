"""The average-case line of the derived table: a seeded random RNN below the worst-case bound, its exact
error over every input at n = 1000, and the floor (CC-INDEX-avg) that its message bits imply.

The worst-case bound (BHBK-IL-RNN) says a model with ``S(m) p < N`` state bits is wrong on *some* input; the
average-case floor says how often: on uniform inputs at least ``H2⁻¹(1 - S(m) p / N)`` of them
(:mod:`commcomp.bounds.average`).  This line runs ``verify --exhaustive`` (the reachable-states engine counts
all ``n 2^n`` instances exactly) on a seeded random model small enough for the engine at n = 1000, and three
checks, each able to fail (beside the table's usual ``construction`` and ``protocol``, not checked: there is no
strong side, and ``witness``: the first wrong input the count met, re-run through the model):

* ``below bound`` — its message bits are below the worst-case bound (else the line says nothing);
* ``exact error`` — the count is exact over every input (``method: reachable-states``);
* ``floor`` — the measured error is at least the floor at the declared bits and at log2 of the distinct
  messages counted (``FAILED`` would mean a wrong floor, a wrong count or state outside the message).

The model (Elman, width 3, ``fixed:4:2``, the run's seed) is fixed here rather than at the run's precision:
a random model at 16 bits per number keeps too many distinct states for an exact count at n = 1000.

Examples
--------
>>> from reductions.separations.claim_specs import DERIVED
>>> spec = next(s for s in DERIVED if s.claim in AVERAGE_CLAIMS)
>>> r = average_claim(spec, None, seed=0)
>>> r.verdict, r.extra["consistent"], r.extra["exact_error_value"] > r.extra["error_floor"]
('shown', True, True)
"""

from __future__ import annotations

from commcomp.errors import CommcompError

from .checks import Check
from .claim_results import ClaimPoint, ClaimResult

__all__ = ["AVERAGE_CLAIMS", "AVERAGE_MODEL", "average_claim"]

#: The model of the line: small enough that its reachable states stay few at n = 1000.
AVERAGE_MODEL = {"arch": "elman", "width": 3, "precision": "fixed:4:2", "n": 1000}


def average_claim(spec, fmt=None, *, seed: int = 0, heads: int = 1) -> ClaimResult:
    """The line for ``spec`` (module docstring); ``fmt`` (the run's precision) is not used: see there."""
    from commcomp.bounds import best_lower_bound
    from commcomp.counts import fraction_text
    from commcomp.precision import parse_precision

    from reductions.search.reachable.plot import describe_count
    from reductions.simulate import verify

    model = AVERAGE_MODEL
    n, precision = model["n"], model["precision"]
    try:
        out = verify(spec.task, model["arch"], n, precision, width=model["width"], seed=seed, exhaustive=True)
    except CommcompError as exc:
        why = f"verify refused: {(str(exc).splitlines() or ['-'])[0]}"
        return ClaimResult(spec, precision, None, n, verdict="not shown", reason=why)
    bits, need = out["bits_per_message"], out["lower_bound_bits"]
    below = Check("below bound", "passed" if bits < need else "not checked",
                  f"{bits} message bits < {need} ({out['theorem']})" if bits < need else
                  f"{bits} bits >= {need}: not below the worst-case bound", {"bits": bits, "bound_bits": need})
    if out["method"] == "reachable-states" and out.get("exact_error") is not None:
        shown = fraction_text(out["wrong_count"], out["instances"], describe_count)
        counted = Check("exact error", "passed", f"{shown} wrong, every input (reachable states)")
    else:
        counted = Check("exact error", "not checked", f"not counted exactly ({out.get('fallback') or out['method']})")
    if out.get("consistent") is None:
        floor = Check("floor", "not checked", out.get("error_floor_missing") or "no floor")
    else:
        text = (f"error {out['exact_error_value']:.6f} >= floor {out['error_floor']:.6f} ({bits} bits), "
                f"{out['error_floor_distinct']:.6f} ({out['distinct_messages']} distinct messages)")
        floor = Check("floor", "passed" if out["consistent"] else "FAILED",
                      text if out["consistent"] else "error below the floor: " + text.replace(">=", "<"))
    own = (below, counted, floor)
    failed = [c for c in own if c.status == "FAILED"]
    pending = [c for c in own if c.status != "passed"]
    wrong = out.get("wrong_example")
    witness = (Check("witness", "found", f"a wrong input, re-run through the unsplit model: i = {wrong['y']}, "
                     f"model {int(wrong['model_answer'])}, truth {int(wrong['truth'])}", dict(wrong))
               if wrong else Check("witness", "not found", "no wrong input: the model is right everywhere"))
    none = "no strong side: the average-case line holds one model against a floor, not a separation"
    checks = (Check("construction", "not checked", none), witness, Check("protocol", "not checked", none), *own)
    verdict = "shown" if not pending else "not shown"
    reason = ("FAILED " + "; ".join(c.detail for c in failed)) if failed else "; ".join(c.detail for c in pending)
    lower = best_lower_bound(spec.task, model["arch"], n + 1, parse_precision(precision).bits, heads)
    point = ClaimPoint(n, n, n + 1, lower.min_width, lower.theorem, lower.evidence, None, None, None, None, None)
    extra = {key: out.get(key) for key in ("exact_error", "exact_error_value", "error_floor", "error_floor_distinct",
                                           "error_floor_theorem", "consistent", "wrong_count", "instances",
                                           "bits_per_message", "lower_bound_bits", "distinct_messages")}
    summary = (f"N = {n}: {model['arch']} m = {model['width']} (weak m >= {lower.min_width} [{lower.evidence}]), "
               f"exact error {out['exact_error_value']:.6f} over all {describe_count(out['instances'])} inputs "
               f">= floor {out['error_floor']:.4f} [D✓]" if out.get("error_floor") is not None else f"N = {n}: -")
    extra.update(model={**model, "seed": seed}, points_text=summary,
                 verdict_text=(f"shown at N = {n} ({precision}, seed {seed}): {bits} bits below the bound, "
                               "exact error over every input, at or above the floor") if verdict == "shown" else None)
    return ClaimResult(spec, precision, None, n, (point,), checks, n, verdict, reason, extra=extra)


#: claim id -> evaluator (claims.evaluate_claims dispatches on it)
AVERAGE_CLAIMS = {"derived-avg-IL-RNN": average_claim}
