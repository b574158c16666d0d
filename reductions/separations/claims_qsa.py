"""SHT's qSA separation at fixed q: the recurrent model is the weak side, one attention unit the strong.

SHT Thm 11: a recurrent (memory-bounded) model needs (N - 1)/2 bits of memory on qSA even at q = 1,
so m >= (N - 1)/(2p) (SHT-qSA-RNN); Thm 2: one self-attention unit of width d' + O(q log N) suffices
(SHT-qSA-UB-p, commcomp's C7a ``qsa-random-keys``: d' + min(N, ceil(8 q ln N))).  The registered
qSA task has q = (N - 1)/2 (SHT Thm 4's DISJ_q reduction), where the unit's width grows like N;
the separation is at fixed q, so this claim builds the weights at q and N rows and judges them with
:class:`.qsa_length.QsaAtLength`.  Check (b) needs a prefix/suffix reduction to qSA (INDEX-type) and
(c) the qSA split at this q: neither is registered, and the claim says so.

Examples
--------
>>> from commcomp.precision import parse_precision
>>> from reductions.separations.claim_specs import CLAIMS
>>> spec = next(c for c in CLAIMS if c.claim == "retrieval-qSA")
>>> r = qsa_claim(spec, parse_precision("fixed:8:4"), samples=4)
>>> r.crossover_N, r.points[0].weak_width > r.points[0].strong_width, r.verdict
(914, True, 'not shown')
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


def qsa_claim(spec, fmt, *, heads: int = 1, samples: int = 32, seed: int = 0, max_N: int = 1 << 20) -> ClaimResult:
    """The qSA claim at ``spec.q`` (module docstring)."""
    from commcomp.bounds import best_lower_bound, evaluate_bound, get_bound, min_width_for_bits

    q, bits = int(spec.q), fmt.bits
    unit = get_bound("SHT-qSA-UB-p")

    def weak_row(N):
        return best_lower_bound("qsa", spec.weak_arch, N, bits, heads, layers=spec.weak_layers)

    weak_bound = get_bound("SHT-qSA-RNN")

    def weak(N):  # the bound's state bits as a width (the search evaluates it often: no table rows)
        return min_width_for_bits(spec.weak_arch, evaluate_bound(weak_bound, N=N, p=bits), bits)

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
    b = Check("witness", "not checked", "no prefix/suffix reduction to qSA is registered (SHT Thm 11's "
              "INDEX-type argument [R]): no weak model is run")
    c = Check("protocol", "not checked", f"the qSA split runs the DISJ_q reduction at N = 2q + 1 only, not "
              f"q = {q} at N = {x}")
    d = _widths_check(weak(x), built, x)
    checks = {"construction": a, "witness": b, "protocol": c, "widths": d}
    verdict, reason = claim_verdict(checks)
    return ClaimResult(spec, fmt.name, x, x, tuple(points), tuple(checks.values()), x, verdict, reason,
                       extra={"q": q, "dprime": QSA_DIM})
