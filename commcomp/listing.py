"""The ``commcomp list`` tables: one short line per row at 80 columns, or every field (``--wide``).

The rows are the JSON rows of ``commcomp list WHAT --format json`` (dicts); this module only
chooses what the terminal shows. The default table keeps the ids and short labels (task and
architecture abbreviations, ``LB``/``UB`` for lower bound / construction); the formulas,
aliases, descriptions and other long text are in ``--wide`` and in ``--format json``.

Examples
--------
>>> row = {"id": "BHBK-IL-RNN", "paper": "BHBK", "task": "index-lookup", "arch_class": "recurrent",
...        "kind": "lower", "quantity": "state_bits", "formula": "N", "tag": "[A][S][P]"}
>>> short_rows("theorems", [row])
(['id', 'task', 'arch', 'kind', 'tag'], [['BHBK-IL-RNN', 'IL', 'rnn', 'LB', '[A][S][P]']])
>>> list_text("theorems", [row], wide=False).splitlines()[4].split()
['BHBK-IL-RNN', 'IL', 'rnn', 'LB', '[A][S][P]']
"""

from __future__ import annotations

import textwrap

from commcomp.bounds.table import ARCH_SHORT, TASK_SHORT
from commcomp.tables import text_table

__all__ = ["SHORT_VIEWS", "WIDE_COLUMNS", "short_rows", "wide_rows", "list_text", "encoding_lines"]

#: Short names of the catalogue's architecture classes.
CLASS_SHORT = {"recurrent": "rnn", "transformer-1layer": "tf1", "transformer-2layer": "tf2",
               "transformer": "tf", "feedforward": "ffn"}
KIND_SHORT = {"lower": "LB", "upper": "UB", "separation": "sep"}
#: The ``simulation`` cell of ``list archs`` shortened to its first clause.
SIMULATION_SHORT = {"one-way, state": "one-way", "prefix/suffix, 3 messages": "3 messages",
                    "partition, 1 layer: partial sums; 2+ layers: keys and values": "any depth"}


def _yes(value) -> str:
    return "yes" if value else "no"


def _default_problem(problems) -> str:
    chosen = [p.replace(" (default)", "") for p in problems if p.endswith(" (default)")]
    return chosen[0] if chosen else (problems[0] if problems else "-")


_SPLIT_SHORT = {"prefix-suffix": "prefix", "interleaved-partition": "interleaved"}


def _splits(splits) -> str:
    """One split kind as it is; several (a task with two reductions) shortened, to keep 80 columns."""
    if len(splits) <= 1:
        return splits[0] if splits else "-"
    return ", ".join(_SPLIT_SHORT.get(s, s) for s in splits)


def _theorem(sources) -> str:
    """``BHBK-IL-RNN §8.4`` -> ``BHBK-IL-RNN`` (the section is in the wide table); several (a task with
    two splits) -> the first and ``+k`` for the others, to keep 80 columns."""
    ids = sorted({s.split(" ")[0] for s in sources})
    return (ids[0] + (f" +{len(ids) - 1}" if len(ids) > 1 else "")) if ids else "-"


#: ``what`` -> [(header, cell of a JSON row)] of the default (80-column) table.
SHORT_VIEWS = {
    "theorems": [("id", lambda r: r["id"]), ("task", lambda r: TASK_SHORT.get(r["task"], r["task"])),
                 ("arch", lambda r: CLASS_SHORT.get(r["arch_class"], r["arch_class"])),
                 ("kind", lambda r: KIND_SHORT.get(r["kind"], r["kind"])), ("tag", lambda r: r["tag"])],
    "tasks": [("name", lambda r: r["name"]), ("problem", lambda r: _default_problem(r["problems"])),
              ("split", lambda r: _splits(r["split"])), ("theorem", lambda r: _theorem(r["source"]))],
    "archs": [("name", lambda r: r["name"]), ("class", lambda r: r["class"]),
              ("state numbers", lambda r: r["state_numbers"]),
              ("split", lambda r: SIMULATION_SHORT.get(r["simulation"], r["simulation"])),
              ("model", lambda r: _yes(r["model"]))],
    "constructions": [("name", lambda r: r["name"]), ("task", lambda r: TASK_SHORT.get(r["task"], r["task"])),
                      ("arch", lambda r: {**ARCH_SHORT, "hybrid": "hyb"}.get(r["arch"], r["arch"])),
                      ("L", lambda r: str(r["layers"])),
                      ("H", lambda r: str(r["heads"])), ("source", lambda r: r["source"]),
                      ("tag", lambda r: r["tag"])],
    "problems": [("name", lambda r: r["name"]), ("one-way bits", lambda r: r["one_way_bits"]),
                 ("deterministic bits", lambda r: r["deterministic_bits"])],
}
#: ``what`` -> the JSON fields of the ``--wide`` table, in order.
WIDE_COLUMNS = {
    "theorems": ["id", "paper", "task", "arch_class", "kind", "quantity", "formula", "tag", "label"],
    "tasks": ["name", "aliases", "answer", "problems", "split", "source"],
    "archs": ["name", "class", "aliases", "hyper", "state_numbers", "simulation", "model", "description"],
    "constructions": ["name", "task", "arch", "layers", "heads", "source", "tag", "width", "description"],
    "problems": ["name", "aliases", "description", "one_way_bits", "deterministic_bits"],
}
_LEFT_OUT = {"theorems": "Formulas, quantities and papers", "tasks": "Aliases, answers, every problem and sections",
             "archs": "Aliases, hyperparameters and descriptions",
             "constructions": "Width formulas and descriptions", "problems": "Aliases and descriptions"}


def short_rows(what: str, rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """``(columns, cells)`` of the default table: short labels, one line per row."""
    view = SHORT_VIEWS[what]
    return [h for h, _ in view], [[str(cell(r)) for _, cell in view] for r in rows]


def wide_rows(what: str, rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """``(columns, cells)`` of the ``--wide`` table: every field of the JSON rows."""
    def text(value):
        if isinstance(value, bool):
            return _yes(value)
        return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)

    columns = WIDE_COLUMNS[what]
    return columns, [[text(r.get(c, "")) for c in columns] for r in rows]


def list_text(what: str, rows: list[dict], *, wide: bool = False) -> str:
    """The ``commcomp list WHAT`` table as text (80 columns by default; ``wide``: every field)."""
    columns, cells = (wide_rows if wide else short_rows)(what, rows)
    caption = None
    if not wide:
        short = [f"{v} {k}" for k, v in TASK_SHORT.items() if v.lower() != k and any(r.get("task") == k for r in rows)]
        caption = ("Tasks: " + ", ".join(short) + ". " if short else "") + f"{_LEFT_OUT[what]}: --wide or " \
            "--format json" + ("; values at given N: commcomp bounds." if what == "theorems" else ".")
    table = text_table(f"commcomp {what}", columns, cells, caption, one_line=not wide)
    if wide and what == "tasks" and any("encoding" in r for r in rows):
        blocks = ["\n".join(encoding_lines(r["name"], r["encoding"])) for r in rows if "encoding" in r]
        table = table.rstrip("\n") + "\n\nEncodings (which token means what, where the answer is read):\n\n" + \
            "\n\n".join(blocks) + "\n"
    return table


def encoding_lines(task: str, encoding: dict, width: int = 78) -> list[str]:
    """A task's ``encoding`` JSON (``list tasks --format json``) as wrapped text lines: the words of its
    docstring, then the ids, length and answer positions at a small n, and one worked instance.

    Examples
    --------
    >>> enc = {"n": 2, "length": 3, "vocabulary": ["0", "1", "p0", "p1"], "output_positions": [2],
    ...        "example": "1 0 p0", "example_answer": "[1]", "text": "Index Lookup."}
    >>> encoding_lines("index-lookup", enc)[2]
    '  At n = 2: N = 3 tokens; ids 0=0, 1=1, 2=p0, 3=p1; answer read at position 2.'
    """
    ids = ", ".join(f"{i}={name}" for i, name in enumerate(encoding["vocabulary"]))
    positions = encoding["output_positions"]
    out = [f"{task}:"]
    for para in encoding["text"].split("\n\n"):
        if para.startswith("    ") or "::" in para:  # a worked table: its lines as they are
            out += ["  " + line for line in para.splitlines()]
        else:
            out += textwrap.wrap(" ".join(para.split()), width, initial_indent="  ", subsequent_indent="  ")
    out += textwrap.wrap(f"At n = {encoding['n']}: N = {encoding['length']} tokens; ids {ids}; answer read at "
                         f"position{'s' if len(positions) > 1 else ''} {', '.join(map(str, positions))}.", width,
                         initial_indent="  ", subsequent_indent="  ")
    out += textwrap.wrap(f"Example: {encoding['example']}  ->  {encoding['example_answer']}", width,
                         initial_indent="  ", subsequent_indent="    ")
    return out
