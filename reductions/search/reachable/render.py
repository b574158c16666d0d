"""What the CLI shows of the reachable-states results (``verify``, ``witness``, ``simulate --trajectory``).

Examples
--------
>>> reachable_rows({"method": "sample", "fallback": "budget: level 9 has 40000 distinct messages"})
[['fallback', 'budget: level 9 has 40000 distinct messages']]
"""

from __future__ import annotations

from .plot import save_information_curve

__all__ = ["reachable_rows", "plot_if_asked", "trajectory_table", "correct_text", "wrong_rows"]


def correct_text(out: dict) -> str:
    """The ``correct`` cell of ``verify``: 4 decimals, but never a rounded 1.0000 while an input is
    wrong (then as many digits as it takes to show it below 1).

    >>> correct_text({"correct": 49150 / 49152, "correct_count": 49150, "instances": 49152, "wrong_count": 2})
    '0.99996 (49150/49152; 2 wrong)'
    """
    from .plot import describe_count

    value, count, total, wrong = out["correct"], out["correct_count"], out["instances"], out.get("wrong_count")
    if value is None:
        return "-"
    text = f"{value:.4f}"
    if wrong:  # the fewest decimals (at least 4) at which the exact fraction rounds below 1
        from fractions import Fraction

        exact = Fraction(count, total)
        digits = next((d for d in range(4, 61) if round(exact * 10 ** d) < 10 ** d), None)
        text = f"0.{round(exact * 10 ** digits):0{digits}d}" if digits else "1 - " + str(Fraction(wrong, total))
    tail = f"; {describe_count(wrong)} wrong" if wrong else ""
    return f"{text} ({describe_count(count)}/{describe_count(total)}{tail})"


def wrong_rows(out: dict) -> list:
    """A ``wrong input`` row: the first (x, y) the protocol answers wrongly, re-run through the model."""
    w = out.get("wrong_example")
    if not w:
        return []
    x = w["x"] if len(w["x"]) <= 40 else f"{w['x'][:32]}... ({len(w['x'])} bits; all in --format json)"
    return [["wrong input", f"x = {x}, y = {w['y']}: protocol {int(w['protocol_answer'])}, model "
                            f"{int(w['model_answer'])} (re-run), truth {int(w['truth'])}"]]


def reachable_rows(out: dict) -> list:
    """Extra ``[check, value]`` rows: the information the model keeps, the proof, or the fallback."""
    rows = []
    if out.get("method") == "reachable-states":
        sizes = out["distinct_messages_per_level"]
        shown = ", ".join(str(k) for k in sizes[:12]) + (f", ... {sizes[-1]}" if len(sizes) > 12 else "")
        rows.append(["reachable messages per level", shown])
        rows.append(["information kept", f"log2 {sizes[-1]} = {out['message_bits']:.2f} bits (nominal "
                                         f"{out['bits_per_message']}, lower bound {out['lower_bound_bits']})"])
        if "correct_fraction" in out:
            rows.append(["correct (exact fraction)", out["correct_fraction"] if len(out["correct_fraction"]) < 60
                         else "in the JSON (" + str(len(out["correct_fraction"])) + " characters)"])
    if out.get("fallback"):
        rows.append(["fallback", out["fallback"]])
    return rows


def plot_if_asked(path: str | None, out: dict) -> None:
    """Write the information curve to ``path`` when one is given (``--plot``)."""
    if path:
        save_information_curve(out, path)


def trajectory_table(out: dict, limit: int = 12):
    """``(title, columns, rows)`` of Alice's trajectory (first and last steps when it is long), or None."""
    steps = out.get("trajectory")
    if not steps:
        return None
    keep = steps if len(steps) <= limit else steps[:limit // 2] + [None] + steps[-limit // 2:]
    rows = [["...", "", "", ""] if s is None else
            [str(s["position"]), s["owner"], s["token"], s["hex"] if len(s["hex"]) <= 48 else s["hex"][:48] + "..."]
            for s in keep]
    match = out.get("trajectory_matches_message")
    return (f"Alice's trajectory ({len(steps)} steps; last state = message sent: {'yes' if match else 'NO'})",
            ["pos", "owner", "token", "state (hex)"], rows)
