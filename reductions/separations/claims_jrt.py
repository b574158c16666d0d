"""Just read twice (Arora et al. 2024) as a line of the derived table: on the same Disjointness instances,
the state a one-pass recurrent reader needs depends on which set comes first, and reading the context
twice brings it down to the smaller set's.

:func:`reductions.search.jrt.order_table` counts, over every instance with sets of sizes ``a <= b`` over
[n], the distinct rows of the communication matrix split after the first set (exactly the states a one-pass
reader must keep apart) under both orders, and runs an explicit read-twice reader on the token stream of
every instance.  The line's own checks, each able to fail:

* ``counts`` -- the exact counts equal the closed forms ``C(n, a)`` (small set first) and ``C(n, b)`` (large
  set first), computed apart with :func:`math.comb` (JRT-DISJ-order's [D] part);
* ``order`` -- the large set first needs more bits than the small set first (the statement, [P]);
* ``read twice`` -- the read-twice reader is right on every instance, with at most ``2 C(n, a)`` states
  (the small set stored, one "met" bit), fewer bits than one pass with the large set first.

There is no trained or random weak model here: the counts are exact for every one-pass reader (any reader
with fewer states merges two first sets whose rows differ, so it is wrong on a second set), which is what
the ``witness`` column says.

Examples
--------
>>> from reductions.separations.claim_specs import DERIVED
>>> spec = next(s for s in DERIVED if s.claim in JRT_CLAIMS)
>>> r = jrt_claim(spec, None)
>>> r.verdict, r.extra["small_first_bits"], r.extra["large_first_bits"], r.extra["read_twice_bits"]
('shown', 7, 9, 8)
"""

from __future__ import annotations

import math

from commcomp.errors import CommcompError

from .checks import Check
from .claim_results import ClaimPoint, ClaimResult

__all__ = ["JRT_CLAIMS", "JRT_SIZES", "jrt_claim"]

#: (n, a, b): sets of sizes a <= b over [n]; 66 x 495 = 32,670 instances, all of them counted.
JRT_SIZES = (12, 2, 8)


def closed_forms(n: int, a: int, b: int) -> tuple[int, int]:
    """The states a one-pass reader needs with the small set first and with the large set first, in
    closed form: every first set has its own row while the second set fits beside it (b <= n - a)."""
    return math.comb(n, a), math.comb(n, b)


def _bits(states: int) -> int:
    return math.ceil(math.log2(states)) if states > 1 else 0


def jrt_claim(spec, fmt=None, *, seed: int = 0, heads: int = 1) -> ClaimResult:
    """The line for ``spec`` (module docstring); exact counts, so ``fmt``, ``seed`` and ``heads`` play no part."""
    from reductions.search.jrt import order_table

    n, a, b = JRT_SIZES
    try:
        table = order_table(n, a, b)
    except CommcompError as exc:  # pragma: no cover - JRT_SIZES is within order_table's limit
        return ClaimResult(spec, "exact", None, None, verdict="not shown", reason=str(exc).splitlines()[0])
    small, large, twice = table["small_first"], table["large_first"], table["read_twice"]
    closed = closed_forms(n, a, b)
    counted = (small["distinct_states"], large["distinct_states"])
    counts = Check("counts", "passed" if counted == closed else "FAILED",
                   f"distinct rows {counted[0]} (small first), {counted[1]} (large first) "
                   f"{'=' if counted == closed else '!='} C({n}, {a}) = {closed[0]}, C({n}, {b}) = {closed[1]}",
                   {"counted": counted, "closed_form": closed})
    order = Check("order", "passed" if large["bits"] > small["bits"] else "FAILED",
                  f"one pass: {small['bits']} bits with the small set first, {large['bits']} with the large "
                  "set first")
    ceiling = 2 * math.comb(n, a)
    ok = twice["correct"] and twice["distinct_states_peak"] <= ceiling and twice["bits"] < large["bits"]
    read = Check("read twice", "passed" if ok else "FAILED",
                 f"right on all {twice['instances']} instances: {twice['correct']}; peak "
                 f"{twice['distinct_states_peak']} states <= 2 C({n}, {a}) = {ceiling}, {twice['bits']} bits < "
                 f"{large['bits']}", dict(twice))
    own = (counts, order, read)
    failed = [c for c in own if c.status == "FAILED"]
    verdict = "shown" if not failed else "not shown"
    reason = "FAILED " + "; ".join(c.detail for c in failed) if failed else ""
    construction = Check("construction", "passed" if twice["correct"] else "FAILED",
                         f"the read-twice reader on the token stream B A B A of every instance "
                         f"({twice['instances']})")
    witness = Check("witness", "not applicable", f"exact counts over every first set: a one-pass reader with "
                    f"fewer than {counted[1]} states (large first) merges two first sets whose rows differ")
    protocol = Check("protocol", "not applicable", "the counts are the one-way message sizes themselves")
    checks = (construction, witness, protocol, *own)
    tokens = a + b
    point = ClaimPoint(tokens, n, tokens, None, spec.source, "[D]", None, None, None, None, None)
    extra = {"n": n, "a": a, "b": b, "instances": twice["instances"], "small_first_bits": small["bits"],
             "large_first_bits": large["bits"], "read_twice_bits": twice["bits"],
             "points_text": (f"n = {n}, |A| = {a}, |B| = {b}: one pass {small['bits']} bits (small first) vs "
                             f"{large['bits']} (large first); read twice {twice['bits']} bits [D]"),
             "verdict_text": (f"shown over all {twice['instances']} instances: exact counts = closed forms, "
                              "order matters, reading twice helps") if verdict == "shown" else None}
    return ClaimResult(spec, "exact", None, tokens, (point,), checks, None, verdict, reason, extra=extra)


#: claim id -> evaluator (claims.evaluate_claims dispatches on it)
JRT_CLAIMS = {"derived-JRT-order": jrt_claim}
