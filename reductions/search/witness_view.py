"""What ``commcomp witness`` shows: a rich table of :func:`.witness.find_witness`'s result dict.

The table is built from the dict that ``--format json`` prints; the CLI only writes it out.

Examples
--------
>>> short_bits("0101")
'0101'
>>> short_bits("1" * 50)
'11111111111111111111111111111111... (50 bits; all in --format json)'
"""

from __future__ import annotations

from commcomp.tables import rich_table

__all__ = ["witness_view", "short_bits"]


def short_bits(bits: str) -> str:
    """A bit string as it is up to 40 characters, else its first 32 and its length."""
    return bits if len(bits) <= 40 else f"{bits[:32]}... ({len(bits)} bits; all in --format json)"


def witness_view(out: dict):
    """The rich table of ``commcomp witness``: the message against the lower bound, the search, and
    when found the two inputs of Alice that share a message and the one the model gets wrong."""
    from reductions.search.attention.render import zero_sum_rows
    from reductions.search.reachable.plot import describe_count
    from reductions.search.reachable.render import reachable_rows

    title = (f"witness {out['problem']} -> {out['task']}: {out['arch']} (layers {out['layers']}, width "
             f"{out['width']}) at {out['precision']}, n = {out['n']}")
    rows = [["message", f"{out['bits_per_message']} bits; lower bound {out['lower_bound_bits']} bits "
                        f"({out['theorem']})"],
            ["search", (f"{out['method']}: exact collisions of the attention sums (rows below)" if
                        out.get("search") == "zero-sum" else f"{out['method']}: {describe_count(out['tried'])} "
                        f"inputs of Alice {'covered' if out['method'] == 'reachable-states' else 'hashed'}")
                       + f", {out['seconds']:.2f} s ({out['backend']})"],
            ["complete", "yes (every input of Alice)" if out.get("complete") else
             f"no: stopped at the time limit of {out['time_limit']:g} s" if out.get("stopped_at_time_limit") else "no"],
            ["found", "yes" if out["found"] else "no"]] + reachable_rows(out) + zero_sum_rows(out)
    if out["found"]:
        rows += [["x", short_bits(out["x"])], ["x'", short_bits(out["x_prime"])], ["y", short_bits(str(out["y"]))],
                 ["shared message (hex)", out["message"] if len(out["message"]) <= 40 else
                  f"{out['message'][:32]}... (all in --format json)"],
                 ["model on (x, y) / truth", f"{int(out['model_answer_x'])} / {int(out['truth_x'])}"],
                 ["model on (x', y) / truth", f"{int(out['model_answer_x_prime'])} / {int(out['truth_x_prime'])}"],
                 ["unsplit outputs identical", "yes" if out["outputs_identical"] else "NO"],
                 ["wrong on", "x" if out["wrong_on"] == "x" else "x'"]]
    return rich_table(title, ["", ""], rows, caption=out["note"])
