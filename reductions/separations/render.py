"""Rendering the separations: an 80-column table, a wide table, Markdown, LaTeX, JSON and a plot.

The default table has one line per row and short cells, so that it reads at 80 columns:

* ``sep`` — ``IL elman<tf1``: the task, the weak architecture, the strong one (first row only);
* ``N`` — the catalogue's N (``x`` marks a crossover: ``x`` with the explicit weights, ``xc``
  with the catalogue's construction formula);
* ``weak m>=`` — the weak side's minimum width and the evidence tag of its bound;
* ``cat m`` / ``expl m`` — the strong side's width: the catalogue's formula, commcomp's weights;
* ``sep?`` — ``yes`` when the weak minimum exceeds the explicit weights' width at this N (``-``
  where the weights are not built);
* ``a b c`` — the checks: ``ok`` passed, ``wit`` witness found, ``FAIL`` failed, ``none`` no
  witness found (inconclusive: proves nothing), ``-`` not checked (the JSON and ``--wide`` say why).

Examples
--------
>>> CHECK_SHORT["found"], CHECK_SHORT["not checked"]
('wit', '-')
"""

from __future__ import annotations

from .ladder import TASK_SHORT

__all__ = ["CHECK_SHORT", "table_rows", "wide_rows", "caption", "markdown", "latex", "plot_ladders",
           "COLUMNS", "WIDE_COLUMNS"]

CHECK_SHORT = {"passed": "ok", "found": "wit", "FAILED": "FAIL", "not found": "none", "not checked": "-"}
COLUMNS = ["sep", "N", "weak m>=", "cat m", "expl m", "sep?", "a", "b", "c"]
WIDE_COLUMNS = ["separation", "N", "tokens", "weak lower bound", "strong construction", "(a) construction",
                "(b) witness", "(c) protocol", "status"]


def _w(value) -> str:
    return "-" if value is None else str(value)


def _tag(tag) -> str:
    """The last evidence tag ([P], [D], ...): what the number is."""
    if not tag:
        return ""
    parts = [p + "]" for p in str(tag).split("]") if p]
    return parts[-1] if parts else ""


def table_rows(ladders) -> list[list[str]]:
    """One short line per row (the 80-column table)."""
    out = []
    for lad in ladders:
        for i, r in enumerate(lad.rows):
            mark = {"explicit": " x", "catalogue": " xc"}.get(r.at_crossover, "")
            tag = f"[{r.lower_bound_evidence}]" if r.lower_bound_evidence else _tag(r.lower_bound_tag)
            weak = "-" if r.lower_bound_width is None else f"{r.lower_bound_width} {tag}"
            sep = {True: "yes", False: "no", None: "-"}[r.separated]
            out.append([lad.separation.label if i == 0 else "", f"{r.N}{mark}", weak,
                        _w(r.catalogue_construction_width), _w(r.construction_width), sep,
                        *[CHECK_SHORT[c.status] for c in r.checks]])
    return out


def _by_letter(checks) -> list:
    """Checks in the a / b / c columns (construction, witness, protocol); others not shown."""
    named = {c.name: c for c in checks}
    return [named.get(name) for name in ("construction", "witness", "protocol")]


def special_table_rows(specials) -> list[list[str]]:
    """One short line per special row (k-DNF, CoT, RAG, hybrid)."""
    return [[s.key, "-" if s.n is None else f"n={s.n}", "-", "-", "-", "-",
             *["-" if c is None else CHECK_SHORT[c.status] for c in _by_letter(s.checks)]] for s in specials]


def special_wide_rows(specials) -> list[list[str]]:
    from .rows import row_status

    return [[f"{s.key}: {s.arch}" + (f" on {s.task}" if s.task else ""), "-" if s.n is None else f"n={s.n}", "-",
             " ".join(s.theorems), s.note,
             *["-" if c is None else f"{c.status}: {c.detail}" for c in _by_letter(s.checks)],
             row_status(s.checks) if any(c.name != "statement" for c in s.checks) else
             f"not checked: {s.checks[0].detail}"] for s in specials]


def wide_rows(ladders) -> list[list[str]]:
    """The long text of every row (``--wide``)."""
    out = []
    for lad in ladders:
        s = lad.separation
        for r in lad.rows:
            lower = "-" if r.lower_bound_width is None else (
                f"{r.lower_bound_quantity}: {r.lower_bound_formula} = {_w(r.lower_bound_value)}, so m >= "
                f"{r.lower_bound_width} ({r.lower_bound_theorem} {r.lower_bound_tag}; {r.lower_bound_label})")
            strong = []
            if r.catalogue_construction_width is not None:
                strong.append(f"m = {r.catalogue_construction_width} ({r.catalogue_construction_theorem})")
            if r.construction:
                strong.append(f"{r.construction}: m = {_w(r.construction_width)}")
            if s.note:
                strong.append(s.note)
            checks = [f"{c.status}: {c.detail}" for c in r.checks]
            out.append([f"{s.task}: {s.weak_label} < {s.strong_label}",
                        f"{r.N}" + (f" (crossover, {r.at_crossover})" if r.at_crossover else ""), str(r.length),
                        lower, "; ".join(strong) or "-", *checks, r.status])
    return out


def caption(ladders, precision: str, heads: int, *, samples: int, budget: int, weak_width: int,
            check_max_length: int, seconds: float | None = None, check_all: bool = False) -> str:
    """What was chosen and what the columns mean, in a few sentences."""
    cross = ", ".join(f"{TASK_SHORT.get(lad.separation.task, lad.separation.task)} "
                      f"{lad.separation.weak_label} {lad.crossover_N_explicit}"
                      for lad in ladders if lad.crossover_N_explicit is not None)
    text = (f"p = {precision}, H = {heads}. N: the catalogue's N (IL/MIL: data symbols; else tokens); "
            f"x: crossover with the explicit weights, xc: with the catalogue formula. weak m>=: the "
            f"weak side's minimum width [evidence tag]; cat m / expl m: the strong side's width (formula; "
            f"commcomp's weights); sep?: weak m>= above expl m and the weights not failed (a). Checks on {'every row' if check_all else 'the crossover rows (else one)'}"
            f" of at most {check_max_length} tokens: a = construction on all/{samples} random + adversarial "
            f"inputs; b = witness on a random weak model of width {weak_width} ({budget} inputs at most); "
            f"c = construction split as a protocol vs the bound. ok/wit: passed; FAIL: failed; none: "
            f"no witness found (proves nothing); -: not checked (why: --wide, --format json).")
    if cross:
        text += f" Crossovers (explicit): {cross}."
    if seconds is not None:
        text += f" {seconds:.1f} s."
    return text


def _cell_md(value: str) -> str:
    return str(value).replace("|", "\\|")


def markdown(columns, rows, title: str, note: str) -> str:
    """A GitHub Markdown table with its title and caption."""
    lines = [f"**{title}**", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell_md(v) for v in r) + " |" for r in rows]
    return "\n".join(lines + ["", note, ""])


def _tex(value: str) -> str:
    out = str(value)
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"),
                 ("<", r"$<$"), (">=", r"$\geq$"), ("[", "{[}"), ("]", "{]}")):
        out = out.replace(a, b)
    return out


def latex(columns, rows, title: str, note: str) -> str:
    """A LaTeX ``table`` with ``tabular`` (booktabs rules) and a caption."""
    lines = [r"\begin{table}", r"\centering", r"\begin{tabular}{" + "l" * len(columns) + "}", r"\toprule",
             " & ".join(_tex(c) for c in columns) + r" \\", r"\midrule"]
    lines += [" & ".join(_tex(v) for v in r) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\caption{" + _tex(title + ". " + note) + "}",
              r"\end{table}"]
    return "\n".join(lines) + "\n"


def plot_ladders(ladders, path: str, precision: str) -> None:
    """Minimum width against N (log-log), one panel per separation: the weak side's minimum width,
    the catalogue's construction width and the explicit weights' width, the crossovers marked,
    the rows whose checks all ran and passed as filled points.

    Raises
    ------
    commcomp.bounds.PlotUnavailableError
        Without matplotlib.
    """
    from commcomp.bounds import PlotUnavailableError

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - optional dependency
        raise PlotUnavailableError("--plot needs matplotlib (pip install matplotlib)") from None
    from .ladder import WidthCurves

    shown = [lad for lad in ladders if lad.rows]
    cols = 3 if len(shown) > 4 else max(1, len(shown))
    rows = -(-len(shown) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 2.4 * rows), squeeze=False)
    for ax, lad in zip(axes.ravel(), shown):
        s = lad.separation
        curves = WidthCurves(s, precision, lad.rows[0].heads)
        top = max(r.n for r in lad.rows)
        ns = sorted({max(1, int(round(2 ** (k / 4)))) for k in range(0, 4 * top.bit_length() + 1)} | {top})
        ns = [n for n in ns if n <= top and n >= max(1, int(getattr(curves.reduction, "min_n", 1)))]
        xs = [curves.N(n) for n in ns]
        for series, label, style in ((curves.lower, f"{s.weak_label} min width", "-"),
                                     (curves.catalogue, f"{s.strong_label} catalogue", "--"),
                                     (curves.explicit, f"{s.strong_label} weights", ":")):
            # weights are built at powers of 2 only (building them is the slow part)
            grid = [(x, n) for x, n in zip(xs, ns) if series is not curves.explicit or n & (n - 1) == 0]
            pts = [(x, series(n)) for x, n in grid if series(n) is not None]
            if pts:
                ax.plot(*zip(*pts), style, label=label, linewidth=1.4)
        for N, what in ((lad.crossover_N_explicit, "x"), (lad.crossover_N_catalogue, "xc")):
            if N is not None and N <= curves.N(top):
                ax.axvline(N, color="grey", linewidth=0.8, linestyle="-.")
                ax.annotate(what, (N, 1), fontsize=7, color="grey")
        ok = [r for r in lad.rows if r.status == "yes"]
        if ok:
            ax.scatter([r.N for r in ok], [r.lower_bound_width for r in ok], color="black", zorder=3, s=14,
                       label="checked, none failed")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(s.label, fontsize=9)
        ax.set_xlabel("N", fontsize=8)
        ax.set_ylabel("width m", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6, loc="upper left")
    for ax in axes.ravel()[len(shown):]:
        ax.axis("off")
    fig.suptitle(f"minimum width vs N at p = {precision}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=72)
    plt.close(fig)
    if str(path).lower().endswith(".png"):  # a 256-colour palette: a third of the size, same look
        from PIL import Image

        with Image.open(path) as image:
            small = image.convert("RGB").quantize(colors=64)
        small.save(path, optimize=True)
