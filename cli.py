"""The ``commcomp`` command line: argument parsing, rendering with rich, exit codes.

Library code raises; this module reports. A :class:`commcomp.errors.CommcompError` (or a bad
argument) becomes one line on stderr and exit status 2, never a traceback, and ``--out`` files
are written atomically (a temporary file renamed into place), so a failure never leaves a
half-written output. Every subcommand takes ``--format`` and ``--out``; JSON goes to stdout (or
``--out``) and progress bars go to stderr.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
from typing import Callable

import numpy as np

_PACKAGES = ("commcomp", "models", "reductions")


def _unshadow_packages() -> None:
    """Drop a console script's own folder from the front of ``sys.path`` when it shadows a package.

    Python puts the folder of the running script first on ``sys.path``. For the ``commcomp``
    console script that is the environment's ``bin/``, where python-sat (the ``solver`` extra)
    installs a script named ``models.py``: left there, ``import models.constructions`` fails with
    "'models' is not a package".
    """
    first = os.path.abspath(sys.path[0]) if sys.path and sys.path[0] else None
    script_dir = os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv and sys.argv[0] else None
    if first is None or first != script_dir or first == os.path.dirname(os.path.abspath(__file__)):
        return
    if any(os.path.exists(os.path.join(first, f"{name}.py")) for name in _PACKAGES):
        sys.path.pop(0)
        for name in _PACKAGES:
            if name in sys.modules and not hasattr(sys.modules[name], "__path__"):
                del sys.modules[name]


_unshadow_packages()

from commcomp.errors import CommcompError  # noqa: E402  (after the path fix above)
from commcomp.jsonable import jsonable  # noqa: E402

EXIT_BAD_INPUT = 2


class CLIError(Exception):
    """A user error found by the CLI itself (reported like a CommcompError)."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad arguments as one line and exit status 2 (its usage goes nowhere)."""

    def error(self, message):  # noqa: D401 - argparse API
        raise CLIError(f"{self.prog}: {message}")


# --------------------------------------------------------------------------------------------
# output helpers
# --------------------------------------------------------------------------------------------
def write_output(text: str, out: str | None) -> None:
    """Print ``text`` or write it to ``out`` under the output-file policy (:mod:`commcomp.output`)."""
    from commcomp.output import write_text

    write_text(out, text)


def check_destinations(args) -> None:
    """Every ``--out``/``--plot`` destination and the extras they need, before any work starts."""
    from commcomp.output import check_destination, require_module

    for path in (getattr(args, "out", None), getattr(args, "plot", None), getattr(args, "dot", None)):
        if path:
            check_destination(path)
    if getattr(args, "plot", None):
        require_module("matplotlib", "--plot needs matplotlib: pip install 'commcomp[plot]'")
    if getattr(args, "scheduler", None):
        require_module("distributed", "--scheduler needs the Dask extra: pip install 'commcomp[dask]'")


def _terminal_columns() -> int:
    from commcomp.tables import console_width

    return console_width(160)


def render_rich(renderables) -> str:
    """Render rich objects to a string (colour only when printing to a terminal)."""
    from rich.console import Console

    buffer = io.StringIO()
    items = renderables if isinstance(renderables, (list, tuple)) else [renderables]
    probe = Console(file=io.StringIO(), width=10_000)  # never narrower than the longest word of a column
    need = max([probe.measure(r).minimum for r in items] + [1])
    console = Console(file=buffer, width=max(need, _terminal_columns()),
                      force_terminal=sys.stdout.isatty(), color_system="auto" if sys.stdout.isatty() else None)
    for r in items:
        console.print(r, crop=False)  # a line rich cannot fit shows whole, never cut at the edge
    return buffer.getvalue()


def rich_table(title: str, columns: list[str], rows: list[list], caption: str | None = None):
    from rich.markup import escape
    from rich.table import Table

    from commcomp.tables import fit_widths, longest_lines, longest_words

    table = Table(title=escape(title), caption=escape(caption) if caption else None, show_lines=False,
                  min_width=max(longest_words([title, caption or ""], [])))  # title words are never split
    text = [[str(v) if hasattr(v, "__rich__") or hasattr(v, "__rich_console__") else v for v in r] for r in rows]
    widths = fit_widths(longest_words(columns, text), longest_lines(columns, text),
                        _terminal_columns() - 3 * len(columns) - 1)  # borders and padding: 3 a column, 1 edge
    for c, width in zip(columns, widths):  # wrap at spaces, never inside a word
        table.add_column(escape(c), overflow="fold", width=width)
    for r in rows:
        table.add_row(*[v if hasattr(v, "__rich__") or hasattr(v, "__rich_console__")
                        else escape("" if v is None else str(v)) for v in r])
    return table


def emit(args, payload, table: Callable[[], object]) -> None:
    """Write ``payload`` as JSON or the rich renderables from ``table()`` as text."""
    if args.format == "json":
        write_output(json.dumps(jsonable(payload), indent=2), args.out)
    else:
        write_output(render_rich(table()), args.out)


def progress(total: int, description: str):
    """A rich progress bar on stderr (silent when stderr is not a terminal or total is small)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.console import Console

    return Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                    TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), TimeRemainingColumn(),
                    console=Console(stderr=True), transient=True,
                    disable=not sys.stderr.isatty())


def _int_at_least(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type of sizes and counts: an integer >= 1."""
    return _int_at_least(text, 1)


def seed_value(text: str) -> int:
    """argparse type of ``--seed``: an integer in the range of :func:`commcomp.limits.check_seed`."""
    from commcomp.limits import check_seed

    try:
        return check_seed(int(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc) if "seed" in str(exc) else
                                         f"expected an integer, got {text!r}") from None


def count_value(text: str) -> int:
    """argparse type of counts that may be 0 (``construct --check``): an integer >= 0."""
    return _int_at_least(text, 0)


def _common(p, formats=("table", "json"), seed=False):
    p.add_argument("--format", choices=formats, default="table", help="output format (default: table)")
    p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of printing")
    if seed:
        p.add_argument("--seed", type=seed_value, default=0, help="random seed (default: 0)")


# --------------------------------------------------------------------------------------------
# list
# --------------------------------------------------------------------------------------------
def _list_rows(what: str):
    if what == "problems":
        from commcomp.problems import list_problems

        rows = [{"name": p.name, "aliases": list(p.aliases), "description": p.description,
                 "one_way_bits": str(p.fact("deterministic_one_way").expression),
                 "deterministic_bits": str(p.fact("deterministic").expression)} for p in list_problems()]
        return rows, ["name", "aliases", "description", "one_way_bits", "deterministic_bits"]
    if what == "theorems":
        from commcomp.bounds import BOUNDS

        rows = [{"id": b.id, "paper": b.paper, "task": b.task or "-", "arch_class": b.arch_class, "kind": b.kind,
                 "quantity": b.quantity, "formula": str(b.formula) if b.formula is not None else "-",
                 "tag": "".join(b.tags), "label": b.label} for b in BOUNDS]
        return rows, ["id", "paper", "task", "arch_class", "kind", "quantity", "formula", "tag"]
    if what == "tasks":
        from reductions.registry import DEFAULT_PROBLEM, EXTRA_TASKS, TASKS, get_task, list_reductions

        by_task = {}
        for r in list_reductions():
            by_task.setdefault(r.task_name, []).append(r)
        rows = [{"name": t.name, "aliases": list(t.aliases), "answer": t.answer_kind,
                 "problems": [f"{r.problem}{' (default)' if r.problem == DEFAULT_PROBLEM.get(t.name) else ''}"
                              for r in by_task.get(t.name, [])],
                 "split": sorted({r.split for r in by_task.get(t.name, [])}),
                 "source": sorted({f"{r.source} {r.section}" for r in by_task.get(t.name, [])})}
                for t in (TASKS[k] for k in sorted(TASKS))]
        rows += [{"name": t.name, "aliases": list(t.aliases), "answer": t.answer_kind, "problems": [],
                  "split": ["none"], "source": ["constructions only: no two-party reduction"]}
                 for t in (get_task(k) for k in sorted(EXTRA_TASKS))]
        return rows, ["name", "aliases", "answer", "problems", "split", "source"]
    if what == "archs":
        from commcomp.architectures import list_architectures, state_numbers_formula
        from commcomp.errors import UnsupportedSplitError as _Unsplittable
        from models.registry import available_architectures
        from reductions.simulate.registry import simulation_text

        built = set(available_architectures())
        rows = []
        for a in list_architectures():
            split = simulation_text(a)
            try:
                state = str(state_numbers_formula(a))
            except _Unsplittable:
                state = "-"
            rows.append({"name": a.name, "class": a.arch_class, "aliases": list(a.aliases),
                         "hyper": ", ".join(f"{k}={v}" for k, v in a.defaults().items()),
                         "state_numbers": state, "simulation": split, "model": a.name in built,
                         "description": a.description})
        return rows, ["name", "class", "aliases", "hyper", "state_numbers", "simulation", "model"]
    if what == "constructions":
        from models.constructions import list_constructions

        rows = [s.row() for s in list_constructions()]
        return rows, ["name", "task", "arch", "layers", "heads", "source", "tag", "width"]
    raise CLIError(f"list: nothing registered under {what!r} yet")


def cmd_list(args):
    from commcomp.listing import list_text

    rows, _ = _list_rows(args.what)
    if args.format == "json":
        return emit(args, rows, None)
    write_output(list_text(args.what, rows, wide=args.wide), args.out)


def add_list(sub):
    p = sub.add_parser("list", help="what the registries hold")
    p.add_argument("what", choices=["tasks", "archs", "problems", "theorems", "constructions"])
    p.add_argument("--wide", action="store_true", help="every field in the table (default: one short line per row)")
    _common(p)
    p.set_defaults(func=cmd_list)


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------
# --------------------------------------------------------------------------------------------
# sweep (commcomp.sweep): grids of runs into a resumable SQLite database
# --------------------------------------------------------------------------------------------
def _sweep_workers(text: str) -> int:
    value = _int_at_least(text, 0)
    from commcomp.limits import MAX_WORKERS

    if value > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"{value} is over the limit of {MAX_WORKERS} worker processes")
    return value


def _sweep_spec(args):
    from commcomp.sweep.spec import SweepSpec, load_spec, parse_axis_text, parse_param_text

    if not args.file and not args.op:
        raise CLIError("commcomp sweep run: give a sweep FILE or --op OP (with --axis NAME=V1,V2,...)")
    spec = load_spec(args.file) if args.file else SweepSpec(operation="")
    return spec.with_overrides(operation=args.op, axes=[parse_axis_text(a) for a in args.axis],
                               params=[parse_param_text(p) for p in args.param], seed=args.seed,
                               repeats=args.repeats, name=args.name)


def _sweep_table(title, rows, operation=None, axes=(), columns=None, limit=None, caption=None, wide=False):
    from commcomp.sweep.operations import OPERATIONS
    from commcomp.sweep.report import cell_text, compact_columns, fit_columns, flatten

    all_columns, records = flatten(rows, order=list(axes))
    op = OPERATIONS.get(operation or (rows[0].operation if rows else ""))
    shown = columns or (compact_columns(all_columns, records, op.headline if op else (), axes) if records else
                        ["status"])
    body = records if limit is None else records[:limit]
    if limit is not None and len(records) > limit:
        caption = f"{caption + '; ' if caption else ''}first {limit} of {len(records)} rows (sweep show DB for all)"
    cells = [[cell_text(r.get(c), 60) for c in shown] for r in body]
    if not columns and not wide:  # the columns that fit the terminal; the others named in the caption
        fitted = fit_columns(shown, cells, _terminal_columns())
        if fitted != shown:
            caption = (f"{caption + '; ' if caption else ''}not shown: {', '.join(c for c in shown if c not in fitted)}"
                       " (sweep show DB --wide, --columns or --format csv)")
            cells = [[row[shown.index(c)] for c in fitted] for row in cells]
            shown = fitted
    return rich_table(title, shown, cells, caption=caption)


def _shown_path(path: str) -> str:
    """``path`` relative to the current folder when it lies below it (shorter at 80 columns)."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def cmd_sweep_run(args):
    spec = _sweep_spec(args)
    if not args.backend:
        return _sweep_run(args, spec)
    from commcomp.backend import ENV_VAR, namespace

    namespace(args.backend)  # a missing library: one line, exit 2, before any point runs
    previous = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = args.backend  # verify/witness points read it (local workers inherit it)
    try:
        return _sweep_run(args, spec)
    finally:
        if previous is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = previous


def _sweep_run(args, spec):
    from commcomp.sweep.grid import expand_grid
    from commcomp.sweep.runner import run_sweep
    from commcomp.sweep.store import ResultStore

    db = spec.default_db_path() if args.db is None else args.db
    if not args.dry_run:
        from commcomp.output import check_database

        check_database(db)
    axes_values = {**spec.axes, **({"repeat": list(range(spec.repeats))} if spec.repeats > 1 else {})}
    axes = list(axes_values)
    if args.dry_run:
        points = [{"index": p.index, "seed": p.seed, **p.params} for p in expand_grid(spec)]
        emit(args, {"sweep": spec.name, "operation": spec.operation, "db": db, "points": points},
             lambda: rich_table(f"sweep {spec.name}: {spec.operation}, {len(points)} points (dry run)",
                                ["index", "seed"] + axes, [[p[c] for c in ["index", "seed"] + axes] for p in points],
                                caption=f"database: {_shown_path(db)}"))
        return
    with progress(0, f"sweep {spec.name}") as bar:
        task = bar.add_task(f"sweep {spec.name}", total=None)

        def on_start(todo, skipped):
            bar.update(task, total=todo, description=f"sweep {spec.name} ({skipped} already done)")

        def on_result(point, record, counts):
            bar.update(task, completed=counts["done"],
                       description=f"sweep {spec.name}: {counts['failed']} failed")

        summary = run_sweep(spec, db, workers=args.workers, scheduler=args.scheduler, force=args.force,
                            retry_errors=args.retry_errors, on_start=on_start, on_result=on_result)
    keys = {(p.key, p.seed) for p in expand_grid(spec)}
    with ResultStore(db, readonly=True) as store:
        rows = store.rows(sweep=spec.name, points=keys)
    from commcomp.sweep.report import flatten, sort_rows

    rows = sort_rows(rows, axes_values)
    overhead = summary.overhead
    ran = (f"ran {summary.ran} ({summary.failed} failed), skipped {summary.skipped} already done; {summary.engine} "
           f"engine, {summary.workers} workers; wall {summary.wall_seconds:.1f} s, jobs {summary.job_seconds:.1f} s"
           + (f", overhead {100 * overhead:.1f}%" if overhead is not None else "")) if summary.ran else \
        f"all {summary.points} points already done (--force recomputes them)"
    if summary.busy:  # a concurrent run on the same database holds them (commcomp.sweep.runner)
        ran = (ran if summary.ran else f"ran 0, skipped {summary.skipped} already done") + (
            f"; {summary.busy} being computed by another run ({', '.join(summary.busy_runners) or 'now ended'}), "
            "which records them")
    totals = f"{summary.points} points: {ran}; database {_shown_path(db)}"
    columns, records = flatten(rows, order=axes)
    emit(args, {"summary": summary.to_dict(), "rows": [{c: r.get(c) for c in columns} for r in records]},
         lambda: [_sweep_table(f"sweep {spec.name}: {spec.operation}", rows, spec.operation, axes,
                               limit=args.limit), totals])
    if args.plot:  # after the summary, so a plot that cannot be drawn still leaves the table printed
        from commcomp.sweep.plot import plot_sweep

        plot_sweep(rows, args.plot, title=f"sweep {spec.name}: {spec.operation}")


def cmd_sweep_show(args):
    from commcomp.sweep.report import flatten, sort_rows, to_csv, to_json, to_markdown
    from commcomp.sweep.store import ResultStore

    with ResultStore(args.db, readonly=True) as store:
        sweeps = store.sweeps()
        if args.sweep and args.sweep not in {s["name"] for s in sweeps}:
            raise CLIError(f"commcomp sweep show: no sweep {args.sweep!r} in {args.db}; "
                           f"it holds: {', '.join(s['name'] for s in sweeps) or 'nothing'}")
        rows = store.rows(sweep=args.sweep, status=None if args.status == "all" else args.status)
    axes_values = {}
    for spec in (s["spec"] for s in sweeps if not args.sweep or s["name"] == args.sweep):
        axes_values.update({**spec.get("axes", {}), **({"repeat": list(range(spec["repeats"]))}
                                                       if spec.get("repeats", 1) > 1 else {})})
    axes = list(axes_values)
    rows = sort_rows(rows, axes_values)
    columns, records = flatten(rows, order=axes)
    chosen = [c.strip() for c in args.columns.split(",")] if args.columns else None
    if chosen:
        unknown = [c for c in chosen if c not in columns]
        if unknown:
            raise CLIError(f"commcomp sweep show: unknown column(s) {', '.join(unknown)}; known: {', '.join(columns)}")
    if args.format in ("csv", "json"):
        write_output((to_csv if args.format == "csv" else to_json)(chosen or columns, records), args.out)
    elif args.format == "markdown":
        from commcomp.sweep.operations import OPERATIONS
        from commcomp.sweep.report import compact_columns

        ops = {r.operation for r in rows}
        op = OPERATIONS.get(ops.pop()) if len(ops) == 1 else None
        headline = op.headline if op else ()
        shown = chosen or (columns if args.all_columns else compact_columns(columns, records, headline, axes)
                           if records else columns)
        write_output(to_markdown(shown, records), args.out)
    else:
        caption = "; ".join(f"{s['name']}: {s['operation']}, {s['rows']} rows, {s['errors']} errors"
                            for s in sweeps if not args.sweep or s["name"] == args.sweep)
        write_output(render_rich(_sweep_table(f"sweep results: {args.db}", rows, axes=axes,
                                              columns=chosen or (columns if args.all_columns else None),
                                              caption=caption or "empty", wide=args.wide)), args.out)
    if args.plot:
        from commcomp.sweep.plot import plot_sweep

        plot_sweep(rows, args.plot, title=args.sweep)


def cmd_sweep_ops(args):
    from commcomp.sweep.operations import list_operations

    rows = [{"name": op.name, "available": True, "wraps": op.wraps_name, "required": list(op.required),
             "description": op.description, "why": ""} for op in list_operations()]  # registered: importable
    if args.format == "json":
        return emit(args, rows, None)
    from commcomp.sweep.report import operations_text

    write_output(operations_text(rows, wide=args.wide), args.out)


def add_sweep(sub):
    import reductions.operations  # noqa: F401 - registers verify, witness, reachable, construct

    p = sub.add_parser("sweep", help="run an operation over a grid of parameters into a SQLite database")
    ss = p.add_subparsers(dest="sweep_command", required=True, parser_class=_Parser)
    r = ss.add_parser("run", help="run (or resume) a sweep")
    r.add_argument("file", nargs="?", help="sweep file (.toml; .yaml with PyYAML; .json)")
    r.add_argument("--op", help="the operation (overrides the file's); see `commcomp sweep ops`")
    r.add_argument("--axis", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="a grid axis (repeatable; replaces the file's axis of that name)")
    r.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter shared by every point (repeatable)")
    r.add_argument("--name", help="the sweep's name in the database (default: the file's stem, else the op)")
    r.add_argument("--seed", type=seed_value, default=None, help="the sweep seed (default: the file's, else 0)")
    r.add_argument("--repeats", type=positive_int, default=None, help="independent seeds per point")
    r.add_argument("--workers", type=_sweep_workers, default=None,
                   help="local worker processes (default: the number of cores; 0 = in this process)")
    r.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask distributed scheduler instead")
    r.add_argument("--db", metavar="PATH", help="results database (default: FILE's stem + .sqlite in the current directory)")
    r.add_argument("--force", action="store_true", help="recompute points already in the database")
    r.add_argument("--retry-errors", action="store_true", help="recompute points recorded as errors")
    r.add_argument("--plot", metavar="FILE", help="also draw the usual pictures into FILE (.png/.pdf/.svg)")
    r.add_argument("--limit", type=positive_int, default=40, help="rows in the summary table (default: 40)")
    r.add_argument("--dry-run", action="store_true", help="list the points and their seeds; run nothing")
    _backend_option(r)
    _common(r)
    r.set_defaults(func=cmd_sweep_run)
    s = ss.add_parser("show", help="print or export a sweep database")
    s.add_argument("db", metavar="DB", help="the results database")
    s.add_argument("--sweep", help="only this sweep (a database may hold several)")
    s.add_argument("--status", choices=["ok", "error", "all"], default="all", help="filter rows (default: all)")
    s.add_argument("--columns", help="comma-separated columns to show or export")
    s.add_argument("--all-columns", action="store_true", help="every column in table/markdown output")
    s.add_argument("--wide", action="store_true", help="every headline column, past the terminal's width")
    s.add_argument("--plot", metavar="FILE", help="draw the usual pictures into FILE")
    _common(s, formats=("table", "json", "csv", "markdown"))
    s.set_defaults(func=cmd_sweep_show)
    o = ss.add_parser("ops", help="the operations a sweep can run, and which are available")
    o.add_argument("--wide", action="store_true", help="descriptions too (default: one short line per row)")
    _common(o)
    o.set_defaults(func=cmd_sweep_ops)



# --------------------------------------------------------------------------------------------
# bounds
# --------------------------------------------------------------------------------------------
def cmd_bounds(args):
    from commcomp.bounds import compute_bounds, export_rows, plot_min_width

    hyper = {}
    for item in args.param or []:
        if "=" not in item:
            raise CLIError(f"bounds: --param expects NAME=VALUE, got {item!r}")
        name, value = item.split("=", 1)
        try:
            hyper[name.strip()] = float(value) if any(c in value for c in ".e") else int(value)
        except ValueError:
            raise CLIError(f"bounds: --param {name} needs a number, got {value!r}") from None
    for name in ("d_state", "d_conv", "expand"):
        if getattr(args, name) is not None:
            hyper[name] = getattr(args, name)
    rows = compute_bounds(args.n, args.precision, heads=args.heads, task=args.task, arch=args.arch,
                          layers=args.layers, width=args.width, kind=args.kind,
                          include_randomized=not args.no_randomized, include_variants=args.variants,
                          error=args.error, **hyper)
    from reductions.separations.holds import annotate_rows

    rows = annotate_rows(rows, args.precision, hyper)
    if args.plot:
        plot_min_width(rows, args.plot)
    if args.computed:
        _emit_computed_bounds(args)
        return
    if args.format in ("json", "csv", "markdown", "latex"):
        write_output(export_rows(rows, args.format), args.out)
        return
    from commcomp.bounds.table import bounds_text

    write_output(bounds_text(rows, args.heads, width=args.width, wide=args.wide), args.out)


def _emit_computed_bounds(args):
    """``bounds --computed``: exact minimum state bits from the task's own matrices, beside the catalogue."""
    from reductions.search.computed import PRODUCT_DOMAIN_TASKS, catalogue_check, computed_state_bits

    tasks = args.task or list(PRODUCT_DOMAIN_TASKS)
    results = []
    for task in tasks:
        for n in args.n:
            bound = computed_state_bits(task, n)
            results.append({**bound.to_json(), **catalogue_check(bound, args.precision)})
    from commcomp.bounds.table import TASK_SHORT, number_text

    rows = [[TASK_SHORT.get(r["task"], r["task"]), r["n"], r["length"], r["domain_size"],
             " ".join(map(str, r["classes_per_cut"])), r["max_state_bits"], number_text(r["catalogue_state_bits"]),
             r["catalogue_theorem"] or "-"] for r in results]
    emit(args, results, lambda: rich_table(
        "computed bounds: exact minimum state bits of any recurrent model (Myhill-Nerode classes per cut)",
        ["task", "n", "N", "inputs", "classes at cuts 1..N-1", "state bits", "bound bits", "catalogue bound"],
        rows, "state bits: exact, computed from the task's own ground truth over every input (no reduction, "
        "no theorem); bound bits: the catalogue bound's state bits."))


def add_bounds(sub):
    p = sub.add_parser("bounds", help="the bound calculator table")
    p.add_argument("--n", type=int, nargs="+", required=True, metavar="N",
                   help="the catalogue's N (>= 2): the sequence length in tokens, except for index-lookup "
                   "and multi-index-lookup, where N counts the data symbols s_1..s_N (BHBK; "
                   "the sequence adds the query, or 2k indices); each entry's n_means field says which")
    p.add_argument("--precision", default="32", help="bits per number or a format name (default: 32)")
    p.add_argument("--heads", type=int, default=1, help="attention heads H (default: 1)")
    p.add_argument("--task", nargs="+", help="tasks (default: all)")
    p.add_argument("--arch", nargs="+", help="architectures (default: all)")
    p.add_argument("--layers", type=int, help="depth (recurrent: layers whose states add up)")
    p.add_argument("--width", type=int, help="a width to test: adds the length from which it provably fails")
    p.add_argument("--kind", choices=["lower", "upper"], help="only lower bounds or only constructions")
    p.add_argument("--d-state", dest="d_state", type=int, help="SSM state size (dss, mamba)")
    p.add_argument("--d-conv", dest="d_conv", type=int, help="Mamba convolution width")
    p.add_argument("--expand", type=int, help="Mamba expansion factor")
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="bound parameter (eps, gamma, delta, q, dprime, alphabet, k, ...); repeatable")
    p.add_argument("--no-randomized", action="store_true", help="leave out the randomized forms")
    p.add_argument("--variants", action="store_true", help="include variant entries (index first, RAG, ...)")
    p.add_argument("--error", type=float, metavar="EPS",
                   help="add the average-case rows: error EPS in (0, 1/2) under uniform inputs")
    p.add_argument("--computed", action="store_true",
                   help="exact bounds computed from the task itself at small N (--n is then the task size)")
    p.add_argument("--plot", metavar="FILE", help="draw minimum width against N (SVG or PNG; needs matplotlib)")
    p.add_argument("--wide", action="store_true", help="every field in the table (default: one short line per row)")
    _common(p, formats=("table", "json", "csv", "markdown", "latex"))
    p.set_defaults(func=cmd_bounds)


# --------------------------------------------------------------------------------------------
# simulate, verify, witness (reductions.simulate, reductions.search.witness)
# --------------------------------------------------------------------------------------------
_OWNER_STYLE = {"alice": "bold magenta", "bob": "bold cyan", "public": "dim"}


def _model_options(p, width_required=False):
    p.add_argument("task", help="task registry name (commcomp list tasks)")
    p.add_argument("--arch", required=True, help="architecture (commcomp list archs)")
    p.add_argument("--n", type=positive_int, required=True, help="problem size n")
    p.add_argument("--precision", required=True, help="number format: float32, bfloat16, fixed:P:F, or P bits")
    p.add_argument("--width", type=positive_int,
                   help="model width m" + (" (required with random weights)" if width_required else " (default: 4)")
                   + "; a --weights FILE sets its own")
    p.add_argument("--layers", type=positive_int, help="depth (default: 1; a --weights FILE sets its own)")
    p.add_argument("--heads", type=positive_int, help="heads (default: 1; a --weights FILE sets its own)")
    p.add_argument("--problem", help="the reduction's problem, when a task has several")
    p.add_argument("--weights", default="random", metavar="random|construction|FILE.npz",
                   help="where the weights come from (default: random, seeded)")
    p.add_argument("--cot", action="store_true", help="Bob generates the task's chain of thought (istree)")
    _backend_option(p)


def _backend_option(p):
    p.add_argument("--backend", metavar="numpy|cupy",
                   help="array library to run on: numpy, cupy (GPU), or any other array-api-compat wraps "
                        "(torch, array_api_strict); default $COMMCOMP_BACKEND, else numpy")


def _model_kwargs(args) -> dict:
    return dict(width=args.width, layers=args.layers, heads=args.heads, problem=args.problem,
                weights=args.weights, seed=args.seed, cot=args.cot, backend=args.backend)


def _numbers_text(numbers, limit: int = 8) -> str:
    parts = []
    for item in numbers:
        values = item["values"]
        shown = ", ".join(f"{v:.6g}" for v in values[:limit]) + (", ..." if len(values) > limit else "")
        parts.append(f"{item['name']} = [{shown}]")
    return "\n".join(parts)


def _sequence_view(out):
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
        tokens.append(tok.ljust(width), style=_OWNER_STYLE[who])
        marks.append({"alice": "A", "bob": "B", "public": "."}[who].ljust(width), style=_OWNER_STYLE[who])
        tokens.append(" ")
        marks.append(" ")
    legend = Text("owners: ")
    for who in ("alice", "bob", "public"):
        legend.append(f"{who} ({'A' if who == 'alice' else 'B' if who == 'bob' else '.'}: "
                      f"{len(out['owners'][who])} position{'' if len(out['owners'][who]) == 1 else 's'})",
                      style=_OWNER_STYLE[who])
        legend.append("  ")
    return tokens, marks, legend


def _simulate_view(out):
    from rich.text import Text

    head = Text(f"{out['problem']} -> {out['task']}: {out['arch']} (layers {out['layers']}, width "
                f"{out['width']}, heads {out['heads']}, {out['weights']} weights, seed {out['seed']}) at "
                f"{out['precision']['name']} ({out['precision']['bits']} bits), n = {out['n']}", style="bold")
    inputs = Text(f"x = {out['x']}   (Alice)\ny = {out['y']}   (Bob)")
    tokens, marks, legend = _sequence_view(out)
    msg_rows = [[str(i + 1), f"{r['sender']} -> {r['receiver']}", r.get("label", ""), str(r["bits"]),
                 r["hex"] if len(r["hex"]) <= 32 else r["hex"][:16] + "...", _numbers_text(r["numbers"])]
                for i, r in enumerate(out["rounds"])]
    cut = any(len(r["hex"]) > 32 for r in out["rounds"])
    messages = rich_table(f"messages ({out['split']})", ["#", "from -> to", "what", "bits", "hex",
                                                        "decoded numbers"], msg_rows,
                          caption="hex: first 16 digits; every bit in --format json" if cut else None)
    from reductions.simulate.registry import bob_step_text

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
    return [head, inputs, Text("task sequence:"), tokens, marks, legend, messages, bob, Text("\n".join(reads)),
            checks]


def cmd_simulate(args):
    from reductions.simulate import simulate

    out = simulate(args.task, args.arch, args.n, args.precision, x=args.x, y=args.y,
                   trajectory=args.trajectory, **_model_kwargs(args))
    from reductions.search.reachable.render import trajectory_table

    traj = trajectory_table(out)
    emit(args, out, lambda: _simulate_view(out) + ([rich_table(*traj)] if traj else []))


def add_simulate(sub):
    p = sub.add_parser("simulate", help="one instance, step by step: a model split between Alice and Bob")
    _model_options(p)
    p.add_argument("--x", metavar="BITS", help="Alice's input (n bits; default: sampled from --seed)")
    p.add_argument("--y", metavar="BITS|INDEX", help="Bob's input (n bits, or an index for INDEX)")
    p.add_argument("--trajectory", action="store_true", help="the state after each of Alice's steps")
    _common(p, seed=True)
    p.set_defaults(func=cmd_simulate)


def _fraction(value, count, total):
    from commcomp.counts import fraction_text
    from reductions.search.reachable.plot import describe_count

    return "-" if value is None else fraction_text(count, total, describe_count)  # counts, never 1.0000 (issue 25)


def cmd_verify(args):
    from reductions.simulate import verify

    with progress(0, "verify") as bar:
        task = bar.add_task(f"verify {args.task} / {args.arch}", total=None)
        out = verify(args.task, args.arch, args.n, args.precision, instances=args.instances,
                     exhaustive=args.exhaustive, method=args.method, max_states=args.max_states,
                     progress=lambda done, total: bar.update(task, completed=done, total=total),
                     **_model_kwargs(args))
    from reductions.search.reachable.plot import describe_count
    from reductions.search.attention.render import zero_sum_rows
    from reductions.search.reachable.render import correct_text, plot_if_asked, reachable_rows, wrong_rows
    from commcomp.bounds.error_check import error_rows

    plot_if_asked(args, out)
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
    emit(args, out, lambda: rich_table(title, ["check", "value"], rows))


def add_verify(sub):
    p = sub.add_parser("verify", help="a reduction and a model checked over many or all instances")
    _model_options(p)
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--instances", type=positive_int, metavar="K", help="K random instances")
    how.add_argument("--exhaustive", action="store_true", help="every instance of size n")
    p.add_argument("--method", choices=["auto", "reachable-states", "prefix-tree", "enumerate", "plain"],
                   default="auto", help="exhaustive runs: reachable states where they apply (auto, the default; "
                   "else prefix-tree, saying why), or the prefix tree, or row by row")
    _reachable_options(p)
    _common(p, seed=True)
    p.set_defaults(func=cmd_verify)


def _reachable_options(p):
    p.add_argument("--max-states", type=positive_int, metavar="S",
                   help="reachable-states budget: most distinct messages at one level (default: 2^15)")
    p.add_argument("--plot", metavar="FILE.png", help="draw log2 |distinct messages| against Alice's positions")


def cmd_witness(args):
    from reductions.search.witness import find_witness

    if args.width is None and args.weights == "random":
        raise CLIError("commcomp witness: --width is required with random weights (a model file or a "
                       "construction sets its own)")
    with progress(0, "witness") as bar:
        task = bar.add_task(f"witness {args.task} / {args.arch}", total=None)
        out = find_witness(args.task, args.arch, args.n, args.precision, budget=args.budget,
                           progress=lambda done, total: bar.update(task, completed=done, total=total),
                           method=args.method, max_states=args.max_states, **_model_kwargs(args))
    from reductions.search.reachable.plot import describe_count
    from reductions.search.attention.render import zero_sum_rows
    from reductions.search.reachable.render import plot_if_asked, reachable_rows

    plot_if_asked(args, out)
    title = (f"witness {out['problem']} -> {out['task']}: {out['arch']} (layers {out['layers']}, width "
             f"{out['width']}) at {out['precision']}, n = {out['n']}")
    rows = [["message", f"{out['bits_per_message']} bits; lower bound {out['lower_bound_bits']} bits "
                        f"({out['theorem']})"],
            ["search", (f"{out['method']}: exact collisions of the attention sums (rows below)" if
                        out.get("search") == "zero-sum" else f"{out['method']}: {describe_count(out['tried'])} "
                        f"inputs of Alice {'covered' if out['method'] == 'reachable-states' else 'hashed'}")
                       + f", {out['seconds']:.2f} s ({out['backend']})"],
            ["complete", "yes (every input of Alice)" if out.get("complete") else "no"],
            ["found", "yes" if out["found"] else "no"]] + reachable_rows(out) + zero_sum_rows(out)
    if out["found"]:
        def short(bits):
            return bits if len(bits) <= 40 else f"{bits[:32]}... ({len(bits)} bits; all in --format json)"

        rows += [["x", short(out["x"])], ["x'", short(out["x_prime"])], ["y", short(str(out["y"]))],
                 ["shared message (hex)", out["message"] if len(out["message"]) <= 40 else
                  f"{out['message'][:32]}... (all in --format json)"],
                 ["model on (x, y) / truth", f"{int(out['model_answer_x'])} / {int(out['truth_x'])}"],
                 ["model on (x', y) / truth", f"{int(out['model_answer_x_prime'])} / {int(out['truth_x_prime'])}"],
                 ["unsplit outputs identical", "yes" if out["outputs_identical"] else "NO"],
                 ["wrong on", "x" if out["wrong_on"] == "x" else "x'"]]
    emit(args, out, lambda: rich_table(title, ["", ""], rows, caption=out["note"]))


def add_witness(sub):
    p = sub.add_parser("witness", help="an input on which an undersized model must fail")
    _model_options(p, width_required=True)
    p.add_argument("--budget", type=positive_int, metavar="K",
                   help="most inputs of Alice to hash (default: 2^20; all when there are fewer)")
    p.add_argument("--method", choices=["auto", "reachable-states", "prefix-tree", "enumerate", "sample", "sorting",
                                        "lattice"],
                   default="auto", help="reachable states where they apply (auto, the default), else all inputs "
                   "when at most --budget, else (an exact 1-layer Transformer) exact collisions of the attention "
                   "sums by sorting, then lattice reduction, else a seeded sample")
    _reachable_options(p)
    _common(p, seed=True)
    p.set_defaults(func=cmd_witness)


# --------------------------------------------------------------------------------------------
# construct (models.constructions): export one explicit construction
# --------------------------------------------------------------------------------------------
def _construct_options(items) -> dict:
    """``--option NAME=VALUE`` pairs; values parse as int, float, true/false/none or stay text."""
    out = {}
    for item in items or ():
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise CLIError(f"--option expects NAME=VALUE, got {item!r}")
        low = text.lower()
        value = {"true": True, "false": False, "none": None}.get(low, text)
        if value is text:
            for cast in (int, float):
                try:
                    value = cast(text)
                    break
                except ValueError:
                    pass
        out[name.replace("-", "_")] = value
    return out


def _save_model_atomic(model, path: str, about: dict | None = None) -> None:
    """``models.common.save_model`` into ``path`` under the output-file policy (:mod:`commcomp.output`)."""
    from commcomp.output import write_with
    from models.files import save_model

    write_with(path, lambda tmp: save_model(model, tmp, about=about))


def cmd_construct(args):
    from models.constructions import get_construction
    from reductions.search.construction import check_construction

    name = args.task
    try:  # task aliases (il, nn, ...) as the task registry knows them
        from reductions.registry import canonical_task_name

        name = canonical_task_name(args.task)
    except CommcompError:
        pass
    spec = get_construction(name, arch=args.arch, layers=args.layers)
    c = spec.make(args.n, args.precision, seed=args.seed, **_construct_options(args.option))
    check = None
    if args.check:
        exhaustive = args.n <= spec.exhaustive_max_n and spec.inputs is not None
        res = check_construction(c, inputs=spec.inputs(args.n) if exhaustive else None,
                                 samples=0 if exhaustive else args.check, seed=args.seed,
                                 stop_early=False)
        check = {"instances": res.total, "admitted": res.admitted, "correct": res.correct,
                 "exhaustive": exhaustive, "ok": res.ok}
    if args.out:
        _save_model_atomic(c.model, args.out, about={"task": name, "task_n": args.n,  # checked by --weights
                                                     "source": f"construction {spec.name}"})
    out = {**c.summary(), "d_k": getattr(c.model, "d_k", None), "d_v": getattr(c.model, "d_v", None),
           "width_formula": spec.width_formula, "check": check, "saved_to": args.out}
    out.pop("layout", None)
    keys = ["construction", "task", "arch", "n", "length", "width", "layers", "heads", "d_k", "d_v",
            "precision", "source", "tag"]
    keys += [k for k in ("k", "codes", "gamma_achieved", "beta", "beta2", "m", "min_margin", "k_v",
                         "margin") if k in out]
    rows = [[k, out[k]] for k in keys]
    rows.append(["width formula", spec.width_formula])
    if check:
        rows.append(["check", f"{check['correct']}/{check['admitted']} correct "
                              f"({'all inputs' if check['exhaustive'] else 'random inputs'}"
                              f"{'' if check['admitted'] == check['instances'] else ', ' + str(check['instances']) + ' drawn'})"])
    if args.out:
        rows.append(["saved to", args.out])
    view = argparse.Namespace(format=args.format, out="/dev/stderr" if args.out == "-" else None)  # model on stdout
    emit(view, out, lambda: rich_table(f"construction {spec.name} ({spec.source})", ["", ""], rows,
                                       caption=spec.description))


def add_construct(sub):
    p = sub.add_parser("construct", help="build an explicit construction and export it (.npz)")
    p.add_argument("task", help="task or construction name (commcomp list constructions)")
    p.add_argument("--n", type=positive_int, required=True, help="task size n")
    p.add_argument("--precision", default=None, help="number format (default: float64 reference)")
    p.add_argument("--arch", help="choose among a task's constructions by architecture")
    p.add_argument("--layers", type=positive_int, help="choose among a task's constructions by depth")
    p.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="a builder option, e.g. codes=jl or k=12 (repeatable)")
    p.add_argument("--check", type=count_value, default=64, metavar="K",
                   help="verify on K random inputs, or on all inputs when n is small (0: skip)")
    p.add_argument("--out", metavar="MODEL.npz", help="write the model (models.common.save_model)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--seed", type=seed_value, default=0, help="seed of random codes (default: 0)")
    p.set_defaults(func=cmd_construct)



# --------------------------------------------------------------------------------------------
# matrix
# --------------------------------------------------------------------------------------------
def _short_formula(expression) -> str:
    """sympy's text with ``log(x)/log(2)`` as ``log2(x)`` and ``ceiling`` as ``ceil`` (80 columns)."""
    import re

    return re.sub(r"log\(([^()]*)\)/log\(2\)", r"log2(\1)", str(expression)).replace("ceiling(", "ceil(")


def cmd_matrix(args):
    from commcomp.errors import InvalidParameterError
    from commcomp.matrix import measure, measure_problem
    from commcomp.matrix.discrepancy import discrepancy_rows
    from commcomp.matrix.matrix_file import load_matrix
    from commcomp.problems import get_problem

    if (args.matrix is None) == (args.problem is None):
        raise InvalidParameterError("matrix: give a problem with --n, or --matrix FILE (not both)")
    if args.matrix is not None:
        if args.n is not None:
            raise InvalidParameterError("matrix: --n sets a problem's size; a --matrix FILE has its own: leave --n out")
        problem, report = None, measure(load_matrix(args.matrix), args.measure, solver=args.solver)
    else:
        problem = get_problem(args.problem)
        if args.n is None:
            raise InvalidParameterError("matrix: a problem needs --n")
        if args.n < 1:
            raise InvalidParameterError(f"matrix: n must be >= 1, got {args.n}")
        if args.n > args.max_n:
            raise InvalidParameterError(f"matrix: n = {args.n} is too large for exact measures (limit n <= "
                                        f"{args.max_n}: the matrix has 2^n x 2^n cells)")
        report = measure_problem(problem, args.n, measures=args.measure, solver=args.solver)
    payload = report.to_json()
    payload["labels"] = dict(report.labels)
    payload["checks"] = [{"measure": c.measure, "ok": c.ok, "status": c.status, "detail": c.detail}
                         for c in report.checks]
    payload["skipped"] = report.skipped

    def table():
        rows = []
        for field in ("distinct_rows", "one_way_bits", "rank_rational", "rank_gf2", "log_rank_bound",
                      "fooling_set_size", "deterministic_cc", "partition_number", "partition_number_1",
                      "partition_number_0", "cover_number_1", "cover_number_0", "nondeterministic_cc",
                      "conondeterministic_cc"):
            value = payload.get(field)
            if value is None:
                continue
            rows.append([field, value, report.labels.get(field, "")])
        rows += discrepancy_rows(payload)  # commcomp.matrix.discrepancy
        checks = [[c.measure, {"verified": "ok", "unverified": "unverified"}.get(c.status, "FAILED"), c.detail]
                  for c in report.checks]
        title = (f"{problem.name}, n = {args.n}" if problem is not None else args.matrix)
        out = [rich_table(f"{title}: {payload['rows']} x {payload['cols']} matrix",
                          ["measure", "value", "what it is"], rows),
               rich_table("certificates, re-checked independently", ["measure", "check", "detail"], checks)]
        if report.skipped:
            out.append("skipped: " + "; ".join(f"{k}: {v}" for k, v in dict(report.skipped).items()))
        if problem is not None:
            known = [[f.measure, f.relation + " " + _short_formula(f.expression), f"{f.source} {f.tag}"]
                     for f in problem.complexity()]
            out.append(rich_table("known complexity (catalogue)", ["measure", "value", "source"], known))
        return out

    emit(args, payload, table)


def add_matrix(sub):
    p = sub.add_parser("matrix", help="exact measures of a small problem or 0/1 matrix, each with its certificate")
    p.add_argument("problem", nargs="?", help="index, disjointness, equality, inner-product, greater-than")
    p.add_argument("--n", type=int, help="input bits per party (small: the matrix is 2^n x 2^n)")
    p.add_argument("--matrix", metavar="FILE", help="your own 0/1 matrix instead (.npy, .csv or whitespace text)")
    p.add_argument("--measure", nargs="+", choices=["rows", "rank", "fooling", "partition", "cover", "discrepancy"],
                   help="which measures (default: all that fit their size limits)")
    p.add_argument("--solver", default="auto", choices=["auto", "search", "cadical", "cpsat", "z3"],
                   help="for partition and cover numbers (default auto: CaDiCaL if installed, else branch and bound)")
    p.add_argument("--max-n", type=int, default=14, help=argparse.SUPPRESS)
    _common(p)
    p.set_defaults(func=cmd_matrix)



# --------------------------------------------------------------------------------------------
# separations: the main job
# --------------------------------------------------------------------------------------------
def cmd_separations(args):
    from reductions.separations.command import run

    write_output(run(args, jsonable), args.out)


def add_separations(sub):
    from reductions.separations.command import FORMATS, add_arguments

    p = sub.add_parser("separations", help="the main job: each separation across its crossover, with checks")
    add_arguments(p)
    _common(p, formats=FORMATS, seed=True)
    p.set_defaults(func=cmd_separations)


# --------------------------------------------------------------------------------------------
# import (reductions.importing): a torch state dict -> a commcomp model file
# --------------------------------------------------------------------------------------------
def cmd_import(args):
    from reductions.importing import import_rows, import_torch

    out = import_torch(args.state_dict, args.arch, args.out, task=args.task, n=args.n, problem=args.problem,
                       prefix=args.prefix, embedding=args.embedding, readout=args.readout,
                       nonlinearity=args.nonlinearity, heads=args.heads, activation=args.activation,
                       causal=None if args.bidirectional is None else False, norm_first=args.norm_first,
                       residual=args.residual, config=args.config, seed=args.seed)
    args.out = None  # --out named the model file; the report goes to stdout
    emit(args, out, lambda: rich_table(f"import torch {args.state_dict} ({out['arch']})", ["", ""],
                                       import_rows(out)))


def add_import(sub):
    p = sub.add_parser("import", help="turn a trained model's weights into a commcomp model file (.npz)")
    p.add_argument("framework", choices=["torch"], help="where the weights come from")
    p.add_argument("state_dict", help="torch state_dict: .pt/.pth (needs torch) or .npz of its arrays")
    p.add_argument("--arch", required=True, help="elman (nn.RNN), lstm, gru, or transformer")
    p.add_argument("--out", required=True, metavar="FILE.npz", help="the model file to write")
    p.add_argument("--task", help="check against this task at --n (vocabulary, outputs, length) and record it")
    p.add_argument("--n", type=positive_int, help="problem size the model was trained for (with --task)")
    p.add_argument("--problem", help="the reduction's problem, when a task has several")
    p.add_argument("--prefix", help="key prefix of the recurrent module / attention blocks (found when unique)")
    p.add_argument("--embedding", metavar="KEY", help="the token embedding's key (found when unique)")
    p.add_argument("--readout", metavar="PREFIX", help="the readout nn.Linear's prefix (found when unique)")
    p.add_argument("--nonlinearity", help="nn.RNN's, tanh or relu (no default: a state dict does not record it)")
    p.add_argument("--heads", type=positive_int, help="transformer: num_heads (a state dict does not record it)")
    p.add_argument("--activation", help="encoder layers' activation: relu (gelu is refused; no default)")
    p.add_argument("--config", metavar="FILE.json", help="the options as JSON (default: STATE_DICT.config.json)")
    p.add_argument("--bidirectional", action="store_true", default=None, help="transformer: no causal mask")
    p.add_argument("--norm-first", dest="norm_first", action="store_true", default=None, help="pre-norm blocks")
    p.add_argument("--residual", action="store_true", default=None, help="bare nn.MultiheadAttention: x + attn(x)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")
    p.add_argument("--seed", type=seed_value, default=0, help="seed of the conversion check's random tokens")
    p.set_defaults(func=cmd_import)


def cmd_automaton(args):
    from reductions.search.automaton.api import automaton_analysis, write_dot
    from reductions.search.automaton.view import automaton_rows, automaton_title

    out = automaton_analysis(args.task, args.arch, args.precision, width=args.width, layers=args.layers,
                             weights=args.weights, seed=args.seed, n=args.n, against=args.against,
                             alphabet=args.alphabet, suffix=args.suffix, max_states=args.max_states,
                             dot=args.dot is not None)
    write_dot(out, args.dot)
    emit(args, out, lambda: rich_table(automaton_title(out), ["", ""], automaton_rows(out)))


def add_automaton(sub):
    from commcomp.automata import LANGUAGES

    p = sub.add_parser("automaton", help="a recurrent model at a precision as a finite automaton: closure, minimal "
                       "DFA, a language decided at every length, its transition monoid")
    p.add_argument("--task", required=True, help="task registry name (commcomp list tasks)")
    p.add_argument("--arch", required=True, help="recurrent architecture (commcomp list archs)")
    p.add_argument("--precision", required=True, help="number format: fixed:P:F, float16, ...")
    p.add_argument("--weights", default="random", metavar="random|construction|FILE.npz")
    p.add_argument("--width", type=positive_int, help="model width m (default 4; a file sets its own)")
    p.add_argument("--layers", type=positive_int, help="depth (default 1; a file sets its own)")
    p.add_argument("--n", type=positive_int, help="task size the model is built (or its file checked) for (default 4)")
    p.add_argument("--against", metavar="LANGUAGE", help="prove equivalence at every length or give the shortest "
                   "counterexample: " + "; ".join(LANGUAGES) + " (e.g. dyck-2-2, parity, mod-3)")
    p.add_argument("--alphabet", type=lambda t: [int(v) for v in t.split(",")], metavar="T1,T2,...",
                   help="token ids read (default: the task's vocabulary without [CLS])")
    p.add_argument("--suffix", type=lambda t: [int(v) for v in t.split(",") if v != ""], metavar="T1,...",
                   help="tokens read after each word before the answer (default: the task's [CLS], if any)")
    p.add_argument("--max-states", type=positive_int, metavar="S", help="most reachable states (default 2^15)")
    p.add_argument("--dot", metavar="FILE.dot", help="write the minimal DFA as Graphviz DOT")
    _common(p, seed=True)
    p.set_defaults(func=cmd_automaton)


SUBCOMMANDS = [add_list, add_sweep, add_bounds, add_simulate, add_verify, add_witness, add_construct, add_matrix, add_separations, add_import, add_automaton]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="commcomp", description="Communication complexity of sequence models, executable.")
    from commcomp import __version__

    parser.add_argument("--version", action="version", version=f"commcomp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        __import__("commcomp.environment").environment.check_environment()  # one check, every command
        check_destinations(args)
        args.func(args)
    except (CommcompError, CLIError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if not message.startswith("commcomp"):
            message = f"commcomp: error: {message}"
        print(message, file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as exc:  # SIGTERM during a sweep arrives as one (commcomp.sweep.runner)
        status = getattr(exc, "exit_status", 130)
        print(f"commcomp: {'terminated' if status != 130 else 'interrupted'}", file=sys.stderr)
        return status
    except BrokenPipeError:
        return 0
    except MemoryError as exc:  # past the checked limits, which are lower estimates (commcomp.limits)
        detail = f" ({str(exc).splitlines()[0]})" if str(exc) else ""
        print(f"commcomp: error: not enough memory for these sizes{detail}; the limits checked beforehand "
              "are lower estimates: see docs/CONVENTIONS.md", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # a bug, not bad input: still one line (COMMCOMP_DEBUG=1 shows the traceback)
        if os.environ.get("COMMCOMP_DEBUG"):
            raise
        print(f"commcomp: internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
              " (set COMMCOMP_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
