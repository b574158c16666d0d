"""Rows of the ``witness`` table for a zero-sum search of the attention sums (the CLI shows them)."""

from __future__ import annotations

__all__ = ["zero_sum_rows"]


def zero_sum_rows(out: dict) -> list:
    """``[label, text]`` rows: the instance and each solver's report; none for another search.

    >>> zero_sum_rows({"found": False})
    []
    """
    info = out.get("zero_sum")
    if info is None:
        return []
    inst = info["instance"]
    if "exhaustive_pairs" in inst:  # the hybrid's exhaustive pass
        rows = [["hybrid messages", f"every (x, y) pair ({inst['exhaustive_pairs']}) through the protocol"]]
    elif "templates" in inst:  # the hybrid's linearised sums (reductions/search/attention/hybrid.py)
        rows = [["hybrid template %d" % i, f"{t['rows']} bits of x in disjoint windows the recurrence forgets "
                 f"(longest {t['longest_window']} steps) x {t['coordinates']} integer coordinates; left out: "
                 + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in t["left_out"].items())]
                for i, t in enumerate(inst["templates"])]
    else:
        rows = [["attention sums", f"{inst['bits']} bits of x x {inst['coordinates']} integer coordinates "
                               f"({inst['term_bits']}-bit terms, {inst['queries']} quer"
                               f"{'y' if inst['queries'] == 1 else 'ies'}: {inst['queries_note']})"]]
    if not rows:
        rows = [["hybrid", "no template was built before the time limit"]]
    rows += [[s["method"], f"{s['note']} ({s['seconds']:.2f} s)"] for s in info["searches"]]
    if out.get("found"):
        rows.append(["messages re-run", "equal bit for bit" if out.get("messages_equal") else "DIFFER"])
    return rows
