"""What ``commcomp sweep run|show`` shows: the result tables and the run's totals line.

Built from :mod:`.command`'s results (the same rows the JSON and the exports carry).

Examples
--------
>>> shown_path("/definitely/not/below/here.sqlite")
'/definitely/not/below/here.sqlite'
"""

from __future__ import annotations

import contextlib
import os

from ..tables import console_width, render_rich, rich_table
from .report import cell_text, compact_columns, fit_columns, flatten, to_csv, to_json, to_markdown

__all__ = ["sweep_table", "shown_path", "run_totals", "dry_run_view", "run_view", "show_text", "sweep_progress"]


def shown_path(path: str) -> str:
    """``path`` relative to the current folder when it lies below it (shorter at 80 columns)."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def sweep_table(title, rows, operation=None, axes=(), columns=None, limit=None, caption=None, wide=False):
    """A rich table of stored rows: the given ``columns``, else the operation's headline columns that
    fit the terminal (the others named in the caption), at most ``limit`` rows."""
    from .operations import OPERATIONS

    all_columns, records = flatten(rows, order=list(axes))
    op = OPERATIONS.get(operation or (rows[0].operation if rows else ""))
    shown = columns or (compact_columns(all_columns, records, op.headline if op else (), axes) if records else
                        ["status"])
    body = records if limit is None else records[:limit]
    if limit is not None and len(records) > limit:
        caption = f"{caption + '; ' if caption else ''}first {limit} of {len(records)} rows (sweep show DB for all)"
    cells = [[cell_text(r.get(c), 60) for c in shown] for r in body]
    if not columns and not wide:  # the columns that fit the terminal; the others named in the caption
        fitted = fit_columns(shown, cells, console_width(160))
        if fitted != shown:
            caption = (f"{caption + '; ' if caption else ''}not shown: {', '.join(c for c in shown if c not in fitted)}"
                       " (sweep show DB --wide, --columns or --format csv)")
            cells = [[row[shown.index(c)] for c in fitted] for row in cells]
            shown = fitted
    return rich_table(title, shown, cells, caption=caption)


def run_totals(summary, db: str) -> str:
    """The line under a run's table: points run, failed, skipped or busy elsewhere, engine, times, database."""
    overhead = summary.overhead
    ran = (f"ran {summary.ran} ({summary.failed} failed), skipped {summary.skipped} already done; {summary.engine} "
           f"engine, {summary.workers} workers; wall {summary.wall_seconds:.1f} s, jobs {summary.job_seconds:.1f} s"
           + (f", overhead {100 * overhead:.1f}%" if overhead is not None else "")) if summary.ran else \
        f"all {summary.points} points already done (--force recomputes them)"
    if summary.busy:  # a concurrent run on the same database holds them (commcomp.sweep.runner)
        ran = (ran if summary.ran else f"ran 0, skipped {summary.skipped} already done") + (
            f"; {summary.busy} being computed by another run ({', '.join(summary.busy_runners) or 'now ended'}), "
            "which records them")
    return f"{summary.points} points: {ran}; database {shown_path(db)}"


def dry_run_view(spec, db: str, points: list[dict]):
    """The points of a ``--dry-run`` with their seeds and axis values."""
    from .command import axis_values

    axes = list(axis_values(spec.axes, spec.repeats))
    return rich_table(f"sweep {spec.name}: {spec.operation}, {len(points)} points (dry run)",
                      ["index", "seed"] + axes, [[p[c] for c in ["index", "seed"] + axes] for p in points],
                      caption=f"database: {shown_path(db)}")


def run_view(run, limit: int | None = None) -> list:
    """A finished run's table (at most ``limit`` rows) and its totals line."""
    spec = run.spec
    return [sweep_table(f"sweep {spec.name}: {spec.operation}", run.rows, spec.operation, run.axes, limit=limit),
            run_totals(run.summary, run.db)]


def show_text(read, fmt: str = "table", *, all_columns: bool = False, wide: bool = False) -> str:
    """``sweep show`` output of a :class:`.command.SweepRead`: csv, json, markdown or a table."""
    columns, records, chosen = read.columns, read.records, read.chosen
    if fmt in ("csv", "json"):
        return (to_csv if fmt == "csv" else to_json)(chosen or columns, records)
    if fmt == "markdown":
        from .operations import OPERATIONS

        ops = {r.operation for r in read.rows}
        op = OPERATIONS.get(ops.pop()) if len(ops) == 1 else None
        headline = op.headline if op else ()
        shown = chosen or (columns if all_columns else compact_columns(columns, records, headline, read.axes)
                           if records else columns)
        return to_markdown(shown, records)
    caption = "; ".join(f"{s['name']}: {s['operation']}, {s['rows']} rows, {s['errors']} errors"
                        for s in read.sweeps if not read.sweep or s["name"] == read.sweep)
    return render_rich(sweep_table(f"sweep results: {read.db}", read.rows, axes=read.axes,
                                   columns=chosen or (columns if all_columns else None),
                                   caption=caption or "empty", wide=wide))


@contextlib.contextmanager
def sweep_progress(name: str):
    """``(on_start, on_result)`` callbacks of :func:`.runner.run_sweep`, drawn as a progress bar on
    stderr: the points to do, those already done, then the count done and failed."""
    from ..progress import progress_bar

    with progress_bar() as bar:
        task = bar.add_task(f"sweep {name}", total=None)

        def on_start(todo, skipped):
            bar.update(task, total=todo, description=f"sweep {name} ({skipped} already done)")

        def on_result(point, record, counts):
            bar.update(task, completed=counts["done"], description=f"sweep {name}: {counts['failed']} failed")

        yield on_start, on_result
