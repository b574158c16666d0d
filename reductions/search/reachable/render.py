"""What the CLI shows of the reachable-states results (``verify``, ``witness``, ``simulate --trajectory``).

Examples
--------
>>> reachable_rows({"method": "sample", "fallback": "budget: level 9 has 40000 distinct messages"})
[['fallback', 'budget: level 9 has 40000 distinct messages']]
"""

from __future__ import annotations

from .plot import save_information_curve

__all__ = ["reachable_rows", "plot_if_asked", "trajectory_table"]


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


def plot_if_asked(args, out: dict) -> None:
    """Write the information curve to ``args.plot`` when given."""
    if getattr(args, "plot", None):
        save_information_curve(out, args.plot)


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
