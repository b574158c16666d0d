"""JBKM's copy bound from the counted state set: the error floor of a real p-bit model.

A fixed-state model that writes the copy after the separator is right on at most |S| of the
|D|^L strings, where S is the set of states it can be in after the string.  The nominal |S| is
2^(message bits); the reachable-state engine counts the real one (``verify``'s
``distinct_messages`` over every string), usually far smaller, so the floor it gives is higher.
The witness is two strings that reach the same state (:func:`reductions.search.witness.find_witness`).

Examples
--------
>>> r = copy_state_bound("elman", 5, "fixed:4:2", width=1)
>>> r["counted_states"] <= 2 ** r["bits_per_message"], r["error_floor_counted"] >= r["error_floor_nominal"]
(True, True)
"""

from __future__ import annotations

from fractions import Fraction

from commcomp.bounds.newer import copy_error_floor

__all__ = ["copy_state_bound"]


def copy_state_bound(arch: str, n: int, precision, *, width: int, layers: int | None = None, seed: int = 0) -> dict:
    """The copy error floor of a random-weight ``arch`` model at ``precision``: from the counted
    states and from the nominal 2^bits, with a colliding pair of strings.  Binary strings of length n."""
    from reductions.search.witness import find_witness
    from reductions.simulate import verify

    out = verify("copy", arch, n, precision, width=width, layers=layers, exhaustive=True, seed=seed)
    states, bits = int(out["distinct_messages"]), int(out["bits_per_message"])
    wit = find_witness("copy", arch, n, precision, width=width, layers=layers, seed=seed)
    nominal = copy_error_floor(2 ** min(bits, 4 * n + 64), 2, n)  # 2^bits capped: the floor is 0 there anyway
    return {"arch": arch, "n": n, "precision": str(precision), "width": width, "strings": 2 ** n,
            "bits_per_message": bits, "nominal_states": 2 ** bits, "counted_states": states,
            "method": out["method"], "error_floor_counted": copy_error_floor(states, 2, n),
            "error_floor_nominal": nominal, "witness_found": bool(wit["found"]),
            "x": wit.get("x"), "x_prime": wit.get("x_prime"), "y": wit.get("y")}


def error_floor_text(r: dict) -> str:
    """One line for a report: counted vs nominal."""
    return (f"{r['arch']} m={r['width']} at {r['precision']}: {r['counted_states']} states counted of "
            f"{r['nominal_states']} nominal -> error >= {float(Fraction(r['error_floor_counted'])):.4f} "
            f"(nominal {float(Fraction(r['error_floor_nominal'])):.4f}) on {r['strings']} strings")
