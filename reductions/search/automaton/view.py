"""The ``automaton`` command's rows (the CLI prints them as a table; JSON is the dict itself).

Examples
--------
>>> rows = automaton_rows({"closed": True, "closed_at_length": 2, "reachable_states": 8, "minimal_states": 8,
...     "letters": ["0", "1"], "suffix": [], "against": None, "equivalent": None, "counterexample": None,
...     "aperiodic": False, "period_witness": {"word": "1", "period": 2}, "monoid_size": 2, "monoid_note": None,
...     "roundtrip_failures": 0, "seconds": 0.01})
>>> rows[0]
['closed', 'yes, at length 2 (longer strings reach no new state)']
"""

from __future__ import annotations

__all__ = ["automaton_rows", "automaton_title", "automaton_view"]


def automaton_title(out: dict) -> str:
    return (f"automaton of {out.get('arch')} (width {out.get('width')}, {out.get('weights')} weights) on "
            f"{out.get('task')} at {out.get('precision')}")


def automaton_rows(out: dict) -> list:
    closed = (f"yes, at length {out['closed_at_length']} (longer strings reach no new state)" if out["closed"]
              else f"no: {out.get('stopped')}")
    rows = [["closed", closed],
            ["alphabet", " ".join(out["letters"]) + (f"  (then tokens {out['suffix']} before the answer)"
                                                     if out["suffix"] else "")],
            ["reachable states", str(out["reachable_states"])],
            ["minimal DFA states", "-" if out["minimal_states"] is None else str(out["minimal_states"])]]
    if out.get("against") is not None:
        if out["equivalent"] is True:
            verdict = f"yes: the model decides {out['against']} at every length (proved on the product DFA)"
        elif out["equivalent"] is False:
            c = out["counterexample"]
            verdict = (f"no: shortest counterexample {c['word']!r} (length {c['length']}): model answers "
                       f"{c['model_answer']} (re-run), {out['against']} says {int(c['in_language'])}")
        else:
            verdict = "undecided (the state set did not close)"
        rows.append([f"equivalent to {out['against']}", verdict])
    if out["aperiodic"] is True:
        rows.append(["transition monoid", f"{out['monoid_size']} elements, aperiodic (the language is star-free)"])
    elif out["aperiodic"] is False:
        w = out["period_witness"]
        rows.append(["transition monoid", f"{out['monoid_size']} elements, not aperiodic: {w['word']!r} acts "
                                          f"with period {w['period']} (not star-free)"])
    elif out.get("monoid_note"):
        rows.append(["transition monoid", out["monoid_note"]])
    if out.get("state_tracking"):
        rows.append(["state tracking", "; ".join(f"{r['id']} {r['evidence']} (arXiv {r['arxiv']})"
                                                 for r in out["state_tracking"])])
    rows.append(["codec round trips failed", str(out["roundtrip_failures"])])
    rows.append(["seconds", f"{out['seconds']:.2f}"])
    return rows


def automaton_view(out: dict):
    """The ``automaton`` command's table (rich)."""
    from commcomp.tables import rich_table

    return rich_table(automaton_title(out), ["", ""], automaton_rows(out))
