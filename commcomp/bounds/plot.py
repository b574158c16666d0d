"""Minimum width against N on log axes, for chosen tasks and architectures (matplotlib, imported lazily).

Lower bounds are solid lines, constructions dashed.  matplotlib is the optional ``plot`` extra; without it
:func:`plot_min_width` raises :class:`PlotUnavailableError` with the install command.

Examples
--------
>>> from commcomp.bounds import compute_bounds
>>> rows = compute_bounds([100, 1000, 10000], 32, task="index-lookup", arch=["lstm", "transformer"])
>>> plot_min_width(rows, "widths.svg")  # doctest: +SKIP
'widths.svg'
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from commcomp.errors import CommcompError, InvalidParameterError

__all__ = ["PlotUnavailableError", "plot_min_width"]

_SUFFIXES = (".svg", ".png")


class PlotUnavailableError(CommcompError, ImportError):
    """matplotlib, the ``plot`` extra, is not installed."""


def _series(rows: Iterable[object]) -> dict[tuple, list[tuple[int, int]]]:
    series: dict[tuple, list[tuple[int, int]]] = {}
    for row in rows:
        get = row.get if isinstance(row, dict) else lambda name, r=row: getattr(r, name, None)
        if get("min_width") is None:
            continue
        depth = get("layers")
        arch = get("arch") if get("arch_class") != "transformer" or depth is None else f"{get('arch')}-{depth}L"
        key = (get("task"), arch, get("theorem"), get("kind"))
        series.setdefault(key, []).append((get("n"), get("min_width")))
    return {key: sorted(set(points)) for key, points in series.items()}


def plot_min_width(rows: Iterable[object], path: str | os.PathLike, *, title: str | None = None) -> str:
    """Draw minimum width against N (log-log) and save it as SVG or PNG.

    Parameters
    ----------
    rows : iterable of BoundRow or dict
        Calculator rows, over several N; rows without a width are left out.
    path : str or PathLike
        Output file; the suffix (``.svg`` or ``.png``) picks the format.
    title : str, optional

    Returns
    -------
    str
        The path written.

    Raises
    ------
    PlotUnavailableError
        If matplotlib is missing.
    InvalidParameterError
        For another suffix, or rows with no width to draw.
    """
    path = os.fspath(path)
    if not path.lower().endswith(_SUFFIXES):
        raise InvalidParameterError(f"plot file must end in .svg or .png, got {path!r}")
    series = _series(rows)
    if not series:
        raise InvalidParameterError("no row has a minimum width to plot")
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotUnavailableError(
            "plotting needs matplotlib: install the plot extra: pip install commcomp[plot]") from None
    figure = Figure(figsize=(8, 5.5), layout="constrained")
    axes = figure.add_subplot()
    for (task, arch, theorem, kind), points in sorted(series.items(), key=lambda item: tuple(map(str, item[0]))):
        xs, ys = zip(*points)
        style = "-" if kind == "lower" else "--"
        axes.plot(xs, ys, style, marker="o", markersize=3, label=f"{task} / {arch}: {theorem} ({kind})")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("input length N")
    axes.set_ylabel("minimum width m (constructions: width used)")
    axes.set_title(title or "Implied minimum width (solid: lower bounds, dashed: constructions)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="x-small", loc="best")
    from commcomp.output import write_with

    write_with(path, figure.savefig)  # atomically, under the output-file policy (commcomp.output)
    return path
