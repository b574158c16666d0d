"""What ``commcomp simulate`` and ``commcomp verify`` show: rich views of their result dicts.

The views are built from the same dicts that ``--format json`` prints (:func:`.api.simulate`,
:func:`.api.verify`); the CLI only writes them out (:func:`commcomp.tables.command_text`).

Examples
--------
>>> numbers_text([{"name": "h", "values": [0.5, 1.0, 2.0]}])
'h = [0.5, 1, 2]'
>>> from commcomp.tables import render_rich
>>> out = {"owners": {"alice": [0, 1], "bob": [3], "public": [2]}, "split_at": 2, "tokens": ["1", "0", "#", "2"]}
>>> [line.rstrip() for line in render_rich(list(sequence_view(out))).splitlines()]
['1 0 | # 2', 'A A | . B', 'owners: alice (A: 2 positions)  bob (B: 1 position)  public (.: 1 position)']
"""

from __future__ import annotations

from commcomp.tables import rich_table

__all__ = ["simulate_view", "verify_view", "sequence_view", "numbers_text"]

#: the colour of each owner's tokens (Alice's input, Bob's input, public positions)
OWNER_STYLE = {"alice": "bold magenta", "bob": "bold cyan", "public": "dim"}
_OWNER_MARK = {"alice": "A", "bob": "B", "public": "."}


def numbers_text(numbers, limit: int = 8) -> str:
    """The decoded numbers of a message, one line per named vector, the first ``limit`` values each."""
    parts = []
    for item in numbers:
        values = item["values"]
        shown = ", ".join(f"{v:.6g}" for v in values[:limit]) + (", ..." if len(values) > limit else "")
        parts.append(f"{item['name']} = [{shown}]")
    return "\n".join(parts)


def sequence_view(out: dict):
    """``(tokens, marks, legend)``: the task sequence coloured by owner, a line of A/B/. marks under it
    (``|`` at the split), and a legend counting each owner's positions."""
    from rich.text import Text

    owner_of = {p: who for who, ps in out["owners"].items() for p in ps}
    split_at = out.get("split_at")
    tokens, marks = Text(), Text()
    for pos, tok in enumerate(out["tokens"]):
        if pos == split_at and split_at:
            tokens.append("| ", style="bold")
            marks.append("| ", style="bold")
        who = owner_of.get(pos, "public")
        width = max(len(tok), 1)
        tokens.append(tok.ljust(width), style=OWNER_STYLE[who])
        marks.append(_OWNER_MARK[who].ljust(width), style=OWNER_STYLE[who])
        tokens.append(" ")
        marks.append(" ")
    legend = Text("owners: ")
    for who in ("alice", "bob", "public"):
        legend.append(f"{who} ({_OWNER_MARK[who]}: "
                      f"{len(out['owners'][who])} position{'' if len(out['owners'][who]) == 1 else 's'})",
                      style=OWNER_STYLE[who])
        legend.append("  ")
    return tokens, marks, legend


def simulate_view(out: dict) -> list:
    """The rich renderables of ``commcomp simulate``: the run, the inputs, the sequence by owner, the
    messages, Bob's step, the outputs read, the checks, and Alice's trajectory when it was asked for."""
    from rich.text import Text

    from reductions.search.reachable.render import trajectory_table

    from .registry import bob_step_text

    head = Text(f"{out['problem']} -> {out['task']}: {out['arch']} (layers {out['layers']}, width "
                f"{out['width']}, heads {out['heads']}, {out['weights']} weights, seed {out['seed']}) at "
                f"{out['precision']['name']} ({out['precision']['bits']} bits), n = {out['n']}", style="bold")
    inputs = Text(f"x = {out['x']}   (Alice)\ny = {out['y']}   (Bob)")
    tokens, marks, legend = sequence_view(out)
    msg_rows = [[str(i + 1), f"{r['sender']} -> {r['receiver']}", r.get("label", ""), str(r["bits"]),
                 r["hex"] if len(r["hex"]) <= 32 else r["hex"][:16] + "...", numbers_text(r["numbers"])]
                for i, r in enumerate(out["rounds"])]
    cut = any(len(r["hex"]) > 32 for r in out["rounds"])
    messages = rich_table(f"messages ({out['split']})", ["#", "from -> to", "what", "bits", "hex",
                                                        "decoded numbers"], msg_rows,
                          caption="hex: first 16 digits; every bit in --format json" if cut else None)
    bob = Text(bob_step_text(out))
    proto = out["protocol_output"]
    reads = []
    for pos, logits, ans in zip(out["read_positions"], proto["logits"], proto["task_answers"]):
        shown = ", ".join(f"{v:.6g}" for v in logits[:8]) + (", ..." if len(logits) > 8 else "")
        reads.append(f"  output at position {pos}: logits [{shown}] -> task answer {ans}")
    if "generated_text" in proto:
        reads.append(f"  chain of thought: {proto['generated_text']}"
                     + (f"  (valid tour: {out['cot_valid']})" if "cot_valid" in out else ""))
    faithful = ("yes, bit for bit" if out["faithful"] else "NO") if out["exact"] else \
        f"not exact (float sums): largest difference {out['max_abs_difference']:.3g}"
    checks = rich_table("checks", ["check", "value"], [
        ["bits sent", f"{out['bits_sent']} (lower bound {out['lower_bound_bits']} bits, {out['theorem']})"],
        ["faithful (Bob's output = unsplit model's)", faithful],
        ["Bob's answer / unsplit model's answer", f"{int(out['answer'])} / {int(out['model_answer'])}"],
        ["truth f(x, y)", str(int(out["truth"]))],
        ["correct", "yes" if out["correct"] else "no"],
    ])
    traj = trajectory_table(out)
    return [head, inputs, Text("task sequence:"), tokens, marks, legend, messages, bob, Text("\n".join(reads)),
            checks] + ([rich_table(*traj)] if traj else [])


def _fraction(value, count, total) -> str:
    from commcomp.counts import fraction_text
    from reductions.search.reachable.plot import describe_count

    return "-" if value is None else fraction_text(count, total, describe_count)  # counts, never 1.0000 (issue 25)


def verify_view(out: dict):
    """The rich table of ``commcomp verify``: counts of faithful and correct runs, the message size
    against the lower bound, and what the reachable-states engine found."""
    from reductions.search.reachable.plot import describe_count
    from commcomp.bounds.error_check import error_rows
    from reductions.search.reachable.render import correct_text, reachable_rows, wrong_rows

    k = out["instances"]
    faithful = _fraction(out["faithful"], out["faithful_count"], k) if out["exact"] else \
        f"not exact: largest difference {out['max_abs_difference']:.3g}"
    rows = [["instances", f"{describe_count(k)} ({'all' if out['exhaustive'] else 'random'}; "
                          f"{out['method']})"],
            ["faithful", faithful], ["correct", correct_text(out)], *wrong_rows(out),
            *error_rows(out, describe_count),  # commcomp.bounds.error_check
            ["bits per message", f"{out['bits_per_message']} ({out['protocol_rounds']} round"
                                 f"{'s' if out['protocol_rounds'] > 1 else ''})"],
            ["lower bound", f"{out['lower_bound_bits']} bits ({out['theorem']})"],
            ["distinct messages", str(out["distinct_messages"])],
            ["saturations", str(out["saturations"])],
            ["backend", out["backend"]],
            ["seconds", f"{out['seconds']:.2f} (protocol {out['seconds_protocol']:.2f}, unsplit model "
                        f"{out['seconds_reference']:.2f})"]] + reachable_rows(out)
    title = (f"verify {out['problem']} -> {out['task']}: {out['arch']} (layers {out['layers']}, width "
             f"{out['width']}) at {out['precision']}, n = {out['n']}")
    return rich_table(title, ["check", "value"], rows)
