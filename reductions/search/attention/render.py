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
    rows = [["attention sums", f"{inst['bits']} bits of x x {inst['coordinates']} integer coordinates "
                               f"({inst['term_bits']}-bit terms, {inst['queries']} quer"
                               f"{'y' if inst['queries'] == 1 else 'ies'}: {inst['queries_note']})"]]
    rows += [[s["method"], f"{s['note']} ({s['seconds']:.2f} s)"] for s in info["searches"]]
    if out.get("found"):
        rows.append(["messages re-run", "equal bit for bit" if out.get("messages_equal") else "DIFFER"])
    return rows
