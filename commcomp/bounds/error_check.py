"""A model's exact error on uniform inputs held against the floor its message bits imply.

Where ``verify --exhaustive`` counts every instance of an INDEX-type reduction (each ``x ∈ {0,1}^n`` with each
Bob input ``i ∈ [n]`` once, so the count is the uniform distribution), the exact error is
``wrong / instances``.  A one-way split sends ``b`` bits (and, counted over every input, ``K`` distinct
messages), so by :func:`~commcomp.bounds.average.index_error_floor` no such protocol errs less than
``H2⁻¹(1 - b/n)``, nor less than ``H2⁻¹(1 - log2(K)/n)`` (``H(M) <= log2 K``; log2 K rounded up to a multiple of
2^-20).  Inner product mod 2 likewise (every ``(x, y)`` once): :func:`~commcomp.bounds.average.ip_error_floor`,
``(1 - 2^((b - n)/2))/2``, whose proof needs only the number of message classes, so ``log2 K`` may replace
``b`` there too.  ``consistent`` is True when the measured error is at least every floor; False would mean a
wrong floor, a wrong count, or a message carrying more than its declared bits.

Examples
--------
>>> out = error_check("index", 8, instances=8 * 256, wrong=8 * 128, bits=3, rounds=1, distinct=8)
>>> out["exact_error"], out["consistent"], round(out["error_floor"], 4), round(out["error_floor_distinct"], 4)
('1/2', True, 0.1561, 0.1561)
>>> error_check("index", 8, instances=2048, wrong=0, bits=3, rounds=1)["consistent"]   # 0 < floor: caught
False
>>> out = error_check("inner-product", 6, instances=4096, wrong=2016, bits=64, rounds=1, distinct=44)
>>> out["error_floor"], round(out["error_floor_distinct"], 4), out["error_floor_theorem"], out["consistent"]
(0.0, 0.0854, 'CC-IP2-avg-1W', True)
"""

from __future__ import annotations

import math
from fractions import Fraction

from commcomp.bounds.average import index_error_floor, ip_error_floor

__all__ = ["error_check", "error_rows", "FLOOR_THEOREM", "FLOOR_THEOREMS"]

FLOOR_THEOREM = "CC-INDEX-avg"
#: problem -> the catalogue id of its one-way floor under uniform inputs (:func:`_one_way_floor`)
FLOOR_THEOREMS = {"index": FLOOR_THEOREM, "inner-product": "CC-IP2-avg-1W"}


def _one_way_floor(problem: str, bits, size: int) -> Fraction:
    """The least error of a one-way protocol with ``bits`` message bits for ``problem`` (names looked up at
    call time, so a test may replace a floor)."""
    if problem == "index":
        return index_error_floor(bits, size)
    return ip_error_floor(bits, size, rounds=1)
_DISTINCT_BITS = 20  # log2 K rounded up to a multiple of 2^-20 (an upper bound on H(M), so still a floor)


def _log2_up(count: int) -> Fraction:
    if count & (count - 1) == 0:
        return Fraction(count.bit_length() - 1)
    return Fraction(math.ceil(math.log2(count) * (1 << _DISTINCT_BITS)) + 1, 1 << _DISTINCT_BITS)


def error_check(problem: str, n: int, *, instances: int, wrong: int | None, bits, rounds: int,
                distinct: int | None = None, exhaustive: bool = True, floor: Fraction | None = None) -> dict:
    """The ``verify`` fields ``exact_error``, ``error_floor`` and ``consistent`` (and their details).

    Parameters
    ----------
    problem, n : the embedded problem and its size.
    instances, wrong : exact counts over every instance (``exhaustive``); ``wrong=None``: not counted.
    bits, rounds : bits per message and rounds of the split (the floor needs a one-way split).
    distinct : distinct messages over all of Alice's inputs, when counted; a second, tighter floor.
    floor : a floor to hold the error against instead of the INDEX floor (tests: a wrong floor is caught).
    """
    out = {"exact_error": None, "exact_error_value": None, "error_floor": None, "error_floor_distinct": None,
           "error_floor_bits": None, "error_floor_theorem": None, "error_floor_missing": None, "consistent": None}
    if not exhaustive or wrong is None or not instances:
        out["error_floor_missing"] = "the error is counted exactly only by an exhaustive run"
        return out
    error = Fraction(int(wrong), int(instances))
    out.update(exact_error=str(error), exact_error_value=float(error))
    floors = []
    if floor is not None:
        floors = [Fraction(floor)]
        out.update(error_floor=float(floors[0]), error_floor_theorem="given")
    elif problem not in FLOOR_THEOREMS:
        out["error_floor_missing"] = f"no average-case floor for {problem} in the catalogue"
    elif rounds != 1:
        out["error_floor_missing"] = f"a {rounds}-round split: the floor needs a one-way message"
    else:
        floors = [_one_way_floor(problem, bits, n)]
        out.update(error_floor=float(floors[0]), error_floor_bits=bits, error_floor_theorem=FLOOR_THEOREMS[problem])
        if distinct:
            floors.append(_one_way_floor(problem, _log2_up(int(distinct)), n))
            out["error_floor_distinct"] = float(floors[1])
    if floors:
        out["consistent"] = all(f <= error for f in floors)
    return out


def error_rows(out: dict, show=str) -> list[list[str]]:
    """``verify`` table rows ``[check, value]`` for these fields (``show`` writes a big count)."""
    if out.get("exact_error") is None:
        return []
    from commcomp.counts import fraction_text

    rows = [["exact error", f"{fraction_text(out['wrong_count'], out['instances'], show)} = "
                            f"{out['exact_error_value']:.6g}"]]
    if out.get("error_floor") is not None:
        tail = "" if out.get("error_floor_distinct") is None else \
            f"; {out['error_floor_distinct']:.6f} from {out['distinct_messages']} distinct messages"
        rows.append(["error floor", f"{out['error_floor']:.6f} ({out['error_floor_theorem']}: "
                                    f"{out['error_floor_bits']} bits, uniform inputs{tail})"])
        rows.append(["consistent", "yes (error >= floor)" if out["consistent"] else "NO: error below the floor"])
    elif out.get("error_floor_missing"):
        rows.append(["error floor", f"- ({out['error_floor_missing']})"])
    return rows
