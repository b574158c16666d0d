"""The usual pictures of a sweep (``--plot FILE``; matplotlib, the ``plot`` extra, imported lazily).

One figure, one panel per picture the rows allow, against ``n`` with one line per ``arch``:

- **fraction faithful / correct / found**: ``correct`` (solid), ``faithful`` (dashed) and a ``witness``
  sweep's ``found`` (dotted) of the ``'ok'`` rows,
  averaged over every other axis (widths, precisions, repeats); ``verify`` reports fractions of its
  instances, a boolean counts as 0 or 1, and a None (``faithful`` when the arithmetic is not exact) is left out;
- **minimal width**: a ``construct`` sweep's ``min_width`` (solid, markers), with the calculator's lower
  bound ``lower_bound_width`` on the same axes (dotted); a ``bounds`` sweep draws the bound alone.

Where several rows share an (arch, n) (other axes), the width panel takes the smallest.
The file type follows the extension (``.png``, ``.pdf``, ``.svg``).
"""

from __future__ import annotations

import os
from collections import defaultdict

from commcomp.errors import CommcompError

from .store import StoredRow

__all__ = ["plot_sweep", "PlotError", "FRACTION_FIELDS", "WIDTH_FIELDS", "BOUND_FIELDS"]

FRACTION_FIELDS = ("correct", "faithful", "found")
WIDTH_FIELDS = ("min_width", "minimal_width")
BOUND_FIELDS = ("lower_bound_width",)


class PlotError(CommcompError):
    """A plot cannot be drawn: matplotlib missing, or the rows hold nothing to plot."""


def _fraction(value) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and 0 <= value <= 1:
        return float(value)
    return None


def _first(result: dict, names) -> object:
    return next((result[n] for n in names if result.get(n) is not None), None)


def _series(rows: list[StoredRow], x: str, group: str):
    """fractions[field][arch][n] -> list of values; widths[kind][arch][n] -> list of values."""
    fractions = {f: defaultdict(lambda: defaultdict(list)) for f in FRACTION_FIELDS}
    widths = {k: defaultdict(lambda: defaultdict(list)) for k in ("min", "bound")}
    for row in rows:
        if row.status != "ok" or not isinstance(row.params.get(x, row.result.get(x)), (int, float)):
            continue
        n = row.params.get(x, row.result.get(x))
        arch = str(row.params.get(group, row.result.get(group, "all")))
        for f in FRACTION_FIELDS:
            value = _fraction(row.result.get(f))
            if value is not None:
                fractions[f][arch][n].append(value)
        for kind, names in (("min", WIDTH_FIELDS), ("bound", BOUND_FIELDS)):
            value = _first(row.result, names)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                widths[kind][arch][n].append(value)
    return fractions, widths


def plot_sweep(rows: list[StoredRow], path: str, x: str = "n", group: str = "arch",
               title: str | None = None) -> list[str]:
    """Draw the pictures ``rows`` allow into ``path``; returns the panel titles.

    Raises
    ------
    PlotError
        matplotlib is not installed, or no row has a field to plot against ``x``.
    """
    fractions, widths = _series(rows, x, group)
    panels = []
    if any(fractions[f] for f in FRACTION_FIELDS):
        panels.append("fraction")
    if widths["min"] or widths["bound"]:
        panels.append("width")
    if not panels:
        raise PlotError(f"nothing to plot: no 'ok' row has {' or '.join(FRACTION_FIELDS + WIDTH_FIELDS + BOUND_FIELDS)}"
                        f" against a numeric {x!r}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        raise PlotError("--plot needs matplotlib: pip install 'commcomp[plot]'") from None
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise PlotError(f"cannot write {path}: directory {directory} does not exist")

    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.2), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    archs = sorted({a for f in FRACTION_FIELDS for a in fractions[f]} | {a for k in widths for a in widths[k]})
    colour = {a: colours[i % len(colours)] for i, a in enumerate(archs)}
    titles = []
    for ax, panel in zip(axes[0], panels):
        xs_all = []
        if panel == "fraction":
            for f, style in zip(FRACTION_FIELDS, ("-", "--", ":")):
                for arch, by_n in sorted(fractions[f].items()):
                    xs = sorted(by_n)
                    xs_all += xs
                    ax.plot(xs, [sum(by_n[n]) / len(by_n[n]) for n in xs], style, marker="o",
                            color=colour[arch], label=f"{arch} {f}")
            ax.set_ylim(-0.05, 1.05)
            ax.set_ylabel("fraction (mean over the other axes)")
            shown = [f"{f} ({s})" for f, s in zip(FRACTION_FIELDS, ("solid", "dashed", "dotted")) if fractions[f]]
            titles.append(f"fraction {' / '.join(shown)} vs {x}")
        else:
            for kind, style, label in (("min", "-", "minimal width"), ("bound", ":", "lower bound")):
                for arch, by_n in sorted(widths[kind].items()):
                    xs = sorted(by_n)
                    xs_all += xs
                    ax.plot(xs, [min(by_n[n]) for n in xs], style, marker="o" if kind == "min" else None,
                            color=colour[arch], label=f"{arch} {label}")
            ax.set_ylabel("width")
            titles.append(f"minimal width (solid) and lower bound (dotted) vs {x}")
        if xs_all and min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 8:
            ax.set_xscale("log", base=2)
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(x)
        ax.set_title(titles[-1], fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    from commcomp.output import write_with

    try:
        write_with(path, fig.savefig)  # atomically, under the output-file policy (commcomp.output)
    finally:
        plt.close(fig)
    return titles
