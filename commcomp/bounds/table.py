"""The ``bounds`` table as text: one short line per row at 80 columns, or every field (``wide``).

The default columns are N, the task and architecture (short names), what the row is (lower bound
or construction, with the evidence tag of its number), the minimum width and the theorem id; the
quantity, value, formula and label are in the wide table and in JSON / CSV / Markdown / LaTeX
(:mod:`.export`).

Examples
--------
>>> from commcomp.bounds import compute_bounds
>>> rows = compute_bounds(1024, 16, task="index-lookup", arch="elman", include_randomized=False)
>>> short_rows(rows)[0]  # doctest: +ELLIPSIS
['1024', 'IL', 'elman', 'LB [...]', '64', 'BHBK-IL-RNN']
"""

from __future__ import annotations

from commcomp.tables import text_table

__all__ = ["TASK_SHORT", "ARCH_SHORT", "number_text", "short_what", "short_rows", "wide_rows", "bounds_text"]

#: Short task names for 80-column tables.
TASK_SHORT = {"index-lookup": "IL", "multi-index-lookup": "MIL", "nearest-neighbour": "NN", "mqar": "MQAR",
              "string-equality": "EQ", "string-disjointness": "DISJ", "dyck": "Dyck", "qsa": "qSA",
              "match2": "Match2", "match3": "Match3", "istree": "IsTree", "k-dnf": "kDNF",
              "index-first-lookup": "IL-first", "induction-heads": "IH", "function-composition": "FC"}
ARCH_SHORT = {"linear-attention": "lin-attn", "transformer": "tf", "feedforward": "ffn"}


def number_text(value) -> str:
    """A table cell of a number: ``-`` for None, 4 significant digits for a float."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _last_tag(tag: str) -> str:
    parts = [p + "]" for p in str(tag or "").split("]") if p.strip()]
    return parts[-1] if parts else ""


def short_what(row) -> str:
    """``LB [P]`` (lower bound), ``UB [D✓]`` (construction), ``stmt``: at most 8 characters."""
    kind = {"lower": "LB", "upper": "UB"}.get(row.kind, row.kind[:4])
    evidence = getattr(row, "evidence", "")  # where the number comes from, when the catalogue says
    return f"{kind} {f'[{evidence}]' if evidence else _last_tag(row.tag)}".strip()


def _arch(row) -> str:
    name = ARCH_SHORT.get(row.arch, row.arch)
    return f"{name}{row.layers}" if row.arch == "transformer" and row.layers else (
        f"{name} L={row.layers}" if row.layers and row.layers > 1 else name)


def short_rows(rows, width: int | None = None) -> list[list[str]]:
    """One short line per bound row (``width``: add the N from which that width fails)."""
    out = []
    for r in rows:
        line = [str(r.n), TASK_SHORT.get(r.task, r.task or "-"), _arch(r), short_what(r), number_text(r.min_width),
                r.theorem]
        if width:
            line.insert(5, number_text(r.crossover_n))
        out.append(line)
    return out


def wide_rows(rows, width: int | None = None) -> list[list[str]]:
    """Every field of the table."""
    out = []
    for r in rows:
        line = [str(r.n), r.task or "-", _arch(r), r.label, r.quantity, number_text(r.value), number_text(r.min_width),
                r.formula, f"{r.theorem} {r.tag}"]
        if width:
            line.insert(7, number_text(r.crossover_n))
        out.append(line)
    return out


def holds_text(row) -> str:
    """``holds`` / ``fails p=16`` / ``-``: a construction row's explicit weights checked at its N and p.

    >>> from types import SimpleNamespace as R
    >>> holds_text(R(holds_at_precision=False, precision=16)), holds_text(R(holds_at_precision=None, precision=8))
    ('fails p=16', '-')
    """
    held = getattr(row, "holds_at_precision", None)
    return "-" if held is None else ("holds" if held else f"fails p={row.precision}")


def bounds_text(rows, heads: int, *, width: int | None = None, wide: bool = False) -> str:
    """The ``commcomp bounds`` table (80 columns by default; ``wide``: every field)."""
    checked = any(getattr(r, "holds_at_precision", None) is not None for r in rows)
    text = _bounds_text(rows, heads, width=width, wide=wide, checked=checked)
    return text


def _bounds_text(rows, heads, *, width, wide, checked) -> str:
    if wide:
        columns = ["N", "task", "arch", "what", "quantity", "value", "min width", "formula", "source"]
        if width:
            columns.insert(7, f"fails from N (m={width})")
        table = wide_rows(rows, width)
    else:
        columns = ["N", "task", "arch", "what", "m", "theorem"]
        if width:
            columns.insert(5, f"fails (m={width})")
        table = short_rows(rows, width)
    caption = (f"p = {rows[0].precision} bits, H = {heads}; log = log2. m: the smallest integer width the "
               "bound allows (LB: lower bound) or the construction uses (UB); [tag]: where the number "
               "comes from (P paper, S secondary source, D derived here, D✓ derived and verified)."
               + (" weights: commcomp's explicit weights for a construction row, checked at this N and p "
                  "(holds: every answer right; fails p=P: a wrong answer; -: unchecked)." if checked else "")
               + ("" if wide else " Formulas and labels: --wide or --format json.")
               if rows else "no bound matches")
    if checked:
        columns.append("weights")
        table = [line + [holds_text(r)] for line, r in zip(table, rows)]
    if any(getattr(r, "error", None) is not None for r in rows):  # bounds --error: the average-case rows
        columns.append("error")
        table = [line + [number_text(getattr(r, "error", None))] for line, r in zip(table, rows)]
        caption += (" error: the error eps under uniform inputs an average-case row allows "
                    "(commcomp.bounds.average; a task row: the image of the uniform problem inputs, "
                    "the answer read for INDEX rows, every answer for IP rows); - on worst-case rows.")
    return text_table("commcomp bounds", columns, table, caption, one_line=not wide)
