"""The ``commcomp`` command line: argument parsing and dispatch, exit codes.

Each ``cmd_*`` maps its arguments onto one library call and prints the result through the view
that sits beside the library code (JSON through :func:`commcomp.tables.command_text`, which uses
the one :func:`commcomp.jsonable.jsonable`): ``list`` reductions.listing + commcomp.listing;
``bounds`` commcomp.bounds (+ reductions.search.computed_view); ``simulate``/``verify``
reductions.simulate.view; ``witness`` reductions.search.witness_view; ``construct``
reductions.search.construct(_view); ``matrix`` commcomp.matrix.view; ``separations``
reductions.separations.command; ``sweep`` commcomp.sweep.command/view; ``import``
reductions.importing; ``automaton`` reductions.search.automaton.view.

Library code raises; this module reports. A :class:`commcomp.errors.CommcompError` (or a bad
argument) becomes one line on stderr and exit status 2, never a traceback, and ``--out`` files
are written atomically (a temporary file renamed into place), so a failure never leaves a
half-written output. Every subcommand takes ``--format`` and ``--out``; JSON goes to stdout (or
``--out``) and progress bars go to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable


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
from commcomp.progress import progress_callback  # noqa: E402
from commcomp.tables import command_text  # noqa: E402

EXIT_BAD_INPUT = 2


class CLIError(Exception):
    """A user error found by the CLI itself (reported like a CommcompError)."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad arguments as one line and exit status 2 (its usage goes nowhere)."""

    def error(self, message):  # noqa: D401 - argparse API
        raise CLIError(f"{self.prog}: {message}")

    def parse_known_args(self, args=None, namespace=None):  # noqa: D401 - argparse API
        """``--help`` of a command that takes a task, with a task named: its encoding as the epilog."""
        if getattr(self, "takes_task", False) and args and ("-h" in args or "--help" in args):
            from reductions.tasks.encoding import encoding_help

            text = next((t for t in (encoding_help(a) for a in args if not a.startswith("-")) if t), "")
            if text:
                self.epilog = "task encoding (commcomp list tasks --wide lists every task's):\n" + text
                self.formatter_class = argparse.RawDescriptionHelpFormatter
        return super().parse_known_args(args, namespace)


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

    for path in (getattr(args, "out", None), getattr(args, "plot", None), getattr(args, "dot", None),
                 getattr(args, "dfa_json", None)):
        if path:
            check_destination(path)
    if getattr(args, "plot", None):
        require_module("matplotlib", "--plot needs matplotlib: pip install 'commcomp[plot]'")
    if getattr(args, "scheduler", None):
        require_module("distributed", "--scheduler needs the Dask extra: pip install 'commcomp[dask]'")


def emit(args, payload, table: Callable[[], object]) -> None:
    """Write ``payload`` as JSON or the rich renderables from ``table()`` as text."""
    write_output(command_text(args.format, payload, table), args.out)


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


def seconds_value(text: str) -> float:
    """argparse type of ``--time-limit``: a positive, finite number of seconds."""
    try:
        value = float(text) if text.isascii() and text.strip() == text else float("nan")
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


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
def cmd_list(args):
    from commcomp.listing import list_text
    from reductions.listing import list_rows

    rows = list_rows(args.what)
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
# sweep (commcomp.sweep): grids of runs into a resumable SQLite database
# --------------------------------------------------------------------------------------------
def _sweep_workers(text: str) -> int:
    value = _int_at_least(text, 0)
    from commcomp.limits import MAX_WORKERS

    if value > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"{value} is over the limit of {MAX_WORKERS} worker processes")
    return value


def cmd_sweep_run(args):
    from commcomp.sweep.command import backend_environment, sweep_spec

    spec = sweep_spec(args.file, op=args.op, axes=args.axis, params=args.param, seed=args.seed,
                      repeats=args.repeats, name=args.name)
    with backend_environment(args.backend):
        _sweep_run(args, spec)


def _sweep_run(args, spec):
    from commcomp.sweep.command import dry_run_points, run_and_read
    from commcomp.sweep.view import dry_run_view, run_view, sweep_progress

    db = spec.default_db_path() if args.db is None else args.db
    if args.dry_run:
        points = dry_run_points(spec)
        return emit(args, {"sweep": spec.name, "operation": spec.operation, "db": db, "points": points},
                    lambda: dry_run_view(spec, db, points))
    from commcomp.output import check_database

    check_database(db)
    with sweep_progress(spec.name) as (on_start, on_result):
        run = run_and_read(spec, db, workers=args.workers, scheduler=args.scheduler, force=args.force,
                           retry_errors=args.retry_errors, on_start=on_start, on_result=on_result)
    emit(args, run.to_json(), lambda: run_view(run, limit=args.limit))
    if args.plot:  # after the summary, so a plot that cannot be drawn still leaves the table printed
        from commcomp.sweep.plot import plot_sweep

        plot_sweep(run.rows, args.plot, title=f"sweep {spec.name}: {spec.operation}")


def cmd_sweep_show(args):
    from commcomp.sweep.command import read_sweeps
    from commcomp.sweep.view import show_text

    read = read_sweeps(args.db, sweep=args.sweep, status=args.status, columns=args.columns)
    write_output(show_text(read, args.format, all_columns=args.all_columns, wide=args.wide), args.out)
    if args.plot:
        from commcomp.sweep.plot import plot_sweep

        plot_sweep(read.rows, args.plot, title=args.sweep)


def cmd_sweep_ops(args):
    from commcomp.sweep.command import operation_rows
    from commcomp.sweep.report import operations_text

    rows = operation_rows()
    if args.format == "json":
        return emit(args, rows, None)
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
    from commcomp.bounds.catalogue import parse_parameter_texts
    from reductions.separations.holds import annotate_rows

    hyper = parse_parameter_texts(args.param)
    hyper.update({name: getattr(args, name) for name in ("d_state", "d_conv", "expand")
                  if getattr(args, name) is not None})
    rows = compute_bounds(args.n, args.precision, heads=args.heads, task=args.task, arch=args.arch,
                          layers=args.layers, width=args.width, kind=args.kind,
                          include_randomized=not args.no_randomized, include_variants=args.variants,
                          error=args.error, **hyper)
    rows = annotate_rows(rows, args.precision, hyper)
    if args.plot:
        plot_min_width(rows, args.plot)
    if args.computed:  # exact minimum state bits from the task's own matrices, beside the catalogue
        from reductions.search.computed import computed_bounds
        from reductions.search.computed_view import computed_view

        results = computed_bounds(args.task, args.n, args.precision)
        return emit(args, results, lambda: computed_view(results))
    if args.format in ("json", "csv", "markdown", "latex"):
        return write_output(export_rows(rows, args.format), args.out)
    from commcomp.bounds.table import bounds_text

    write_output(bounds_text(rows, args.heads, width=args.width, wide=args.wide), args.out)


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
def _model_options(p, width_required=False):
    p.takes_task = True  # ``--help`` with a task named shows its encoding (_Parser.parse_known_args)
    p.add_argument("task", help="task registry name (commcomp list tasks; with --help: its encoding)")
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


def cmd_simulate(args):
    from reductions.simulate import simulate
    from reductions.simulate.view import simulate_view

    out = simulate(args.task, args.arch, args.n, args.precision, x=args.x, y=args.y,
                   trajectory=args.trajectory, **_model_kwargs(args))
    emit(args, out, lambda: simulate_view(out))


def add_simulate(sub):
    p = sub.add_parser("simulate", help="one instance, step by step: a model split between Alice and Bob")
    _model_options(p)
    p.add_argument("--x", metavar="BITS", help="Alice's input (n bits; default: sampled from --seed)")
    p.add_argument("--y", metavar="BITS|INDEX", help="Bob's input (n bits, or an index for INDEX)")
    p.add_argument("--trajectory", action="store_true", help="the state after each of Alice's steps")
    _common(p, seed=True)
    p.set_defaults(func=cmd_simulate)


def cmd_verify(args):
    from reductions.search.reachable.render import plot_if_asked
    from reductions.simulate import verify
    from reductions.simulate.view import verify_view

    with progress_callback(f"verify {args.task} / {args.arch}") as update:
        out = verify(args.task, args.arch, args.n, args.precision, instances=args.instances,
                     exhaustive=args.exhaustive, method=args.method, max_states=args.max_states,
                     progress=update, **_model_kwargs(args))
    plot_if_asked(args.plot, out)
    emit(args, out, lambda: verify_view(out))


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
    from reductions.search.reachable.render import plot_if_asked
    from reductions.search.witness import find_witness
    from reductions.search.witness_view import witness_view

    if args.width is None and args.weights == "random":
        raise CLIError("commcomp witness: --width is required with random weights (a model file or a "
                       "construction sets its own)")
    with progress_callback(f"witness {args.task} / {args.arch}") as update:
        out = find_witness(args.task, args.arch, args.n, args.precision, budget=args.budget, progress=update,
                           method=args.method, max_states=args.max_states, time_limit=args.time_limit,
                           **_model_kwargs(args))
    plot_if_asked(args.plot, out)
    emit(args, out, lambda: witness_view(out))


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
    p.add_argument("--time-limit", type=seconds_value, metavar="SECONDS",
                   help="stop every phase of the search after this many seconds and report the honest partial "
                   "result (complete: no; what was tried). Progress shows on stderr when it is a terminal")
    _reachable_options(p)
    _common(p, seed=True)
    p.set_defaults(func=cmd_witness)


# --------------------------------------------------------------------------------------------
# construct (models.constructions): export one explicit construction
# --------------------------------------------------------------------------------------------
def cmd_construct(args):
    from reductions.search.construct import construct, parse_builder_options
    from reductions.search.construct_view import construct_view

    run = construct(args.task, args.n, args.precision, arch=args.arch, layers=args.layers,
                    options=parse_builder_options(args.option), check=args.check, seed=args.seed, out=args.out)
    text = command_text(args.format, run.to_json(), lambda: construct_view(run))
    write_output(text, "/dev/stderr" if args.out == "-" else None)  # a model on stdout: the report on stderr


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
def cmd_matrix(args):
    from commcomp.matrix import measure_source
    from commcomp.matrix.view import matrix_view

    report = measure_source(args.problem, args.n, args.matrix, measures=args.measure, solver=args.solver,
                            max_n=args.max_n)
    emit(args, report.to_json(details=True), lambda: matrix_view(report, source=args.matrix))


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
    from reductions.separations.command import SeparationsOptions, run

    options = SeparationsOptions(
        format=args.format, precision=args.precision, heads=args.heads, task=args.task, weak=args.weak,
        sizes=args.sizes, max_n=args.max_n, samples=args.samples, budget=args.budget, weak_width=args.weak_width,
        weights=args.weights, check_max_length=args.check_max_length, check_all=args.check_all,
        workers=args.workers, wide=args.wide,
        ladder=args.ladder, plot=args.plot, n=args.n, instances=args.instances, width=args.width, arch=args.arch,
        seed=args.seed)
    write_output(run(options), args.out)


def add_separations(sub):
    from reductions.separations.command import FORMATS
    from reductions.separations.rows import DEFAULT_CHECK_MAX_LENGTH, DEFAULT_PRECISION

    p = sub.add_parser("separations", help="the main job: each separation across its crossover, with checks")
    p.add_argument("--precision", default=None,
                   help=f"number format; its bits are the p of the bounds (default: {DEFAULT_PRECISION}; "
                        "float32 with --n)")
    p.add_argument("--heads", type=int, default=1, help="attention heads H (default: 1)")
    p.add_argument("--task", nargs="+", help="tasks (default: every one with a separation)")
    p.add_argument("--weak", nargs="+", metavar="ARCH",
                   help="weak-side architectures (default: elman tf1 hybrid; also lstm, linear-attention, ...)")
    p.add_argument("--sizes", type=int, nargs="+", metavar="n",
                   help="problem sizes n of the ladder (default: around each crossover)")
    p.add_argument("--max-n", type=int, default=1 << 16, help="largest n of a default ladder (default: 65536)")
    p.add_argument("--samples", type=int, default=32, help="random inputs for check a (default: 32)")
    p.add_argument("--budget", type=int, default=1024, help="most inputs tried by check b (default: 1024)")
    p.add_argument("--weak-width", type=int, default=1, help="width of check b's random weak model (default: 1)")
    p.add_argument("--weights", default="random", metavar="FILE",
                   help="a weights file (.npz) for check b's weak model instead of random weights")
    p.add_argument("--check-max-length", type=int, default=DEFAULT_CHECK_MAX_LENGTH,
                   help=f"check rows of at most this many tokens (default: {DEFAULT_CHECK_MAX_LENGTH})")
    p.add_argument("--check-all", action="store_true", help="check every row (default: the crossover rows)")
    p.add_argument("--workers", type=int, default=0,
                   help="processes building the ladders, then the claims (default 0: the usable cores, at most 2; "
                        "1: none)")
    p.add_argument("--wide", action="store_true", help="the long table: formulas, theorems, check details")
    p.add_argument("--ladder", action="store_true",
                   help="print the ladders (each separation across its crossover) instead of the claims")
    p.add_argument("--plot", metavar="FILE", help="draw minimum width against N (PNG or SVG; needs matplotlib)")
    p.add_argument("--n", type=int, default=None,
                   help="one problem size: every task x architecture class at this n (the grid)")
    p.add_argument("--instances", type=int, default=32, help="grid: random instances per check (default: 32)")
    p.add_argument("--width", type=int, default=4, help="grid: width of the random models (default: 4)")
    p.add_argument("--arch", nargs="+", help="grid: architecture classes (default: all); "
                   "without --n, the weak side (as --weak)")
    _common(p, formats=FORMATS, seed=True)
    p.set_defaults(func=cmd_separations)


# --------------------------------------------------------------------------------------------
# import (reductions.importing): a torch state dict -> a commcomp model file
# --------------------------------------------------------------------------------------------
def cmd_import(args):
    from reductions.importing import import_torch, import_view

    out = import_torch(args.state_dict, args.arch, args.out, task=args.task, n=args.n, problem=args.problem,
                       prefix=args.prefix, embedding=args.embedding, readout=args.readout,
                       nonlinearity=args.nonlinearity, heads=args.heads, activation=args.activation,
                       causal=None if args.bidirectional is None else False, norm_first=args.norm_first,
                       residual=args.residual, config=args.config, seed=args.seed)
    write_output(command_text(args.format, out, lambda: import_view(out)), None)  # --out is the model file


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
    from reductions.search.automaton.api import automaton_analysis, write_dfa_json, write_dot
    from reductions.search.automaton.view import automaton_view

    out = automaton_analysis(args.task, args.arch, args.precision, width=args.width, layers=args.layers,
                             weights=args.weights, seed=args.seed, n=args.n, against=args.against,
                             alphabet=args.alphabet, suffix=args.suffix, max_states=args.max_states,
                             dot=args.dot is not None, dfa=args.dfa_json is not None)
    write_dot(out, args.dot)
    write_dfa_json(out, args.dfa_json)
    emit(args, out, lambda: automaton_view(out))


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
                   "counterexample: " + "; ".join(LANGUAGES) + " (e.g. dyck-2-2, parity, mod-3); task: the task's "
                   "own predicate where it is a regular language of every length (dyck)")
    p.add_argument("--alphabet", type=lambda t: [int(v) for v in t.split(",")], metavar="T1,T2,...",
                   help="token ids read (default: the task's vocabulary without [CLS])")
    p.add_argument("--suffix", type=lambda t: [int(v) for v in t.split(",") if v != ""], metavar="T1,...",
                   help="tokens read after each word before the answer (default: the task's [CLS], if any)")
    p.add_argument("--max-states", type=positive_int, metavar="S", help="most reachable states (default 2^15)")
    p.add_argument("--dot", metavar="FILE.dot", help="write the minimal DFA as Graphviz DOT")
    p.add_argument("--dfa-json", dest="dfa_json", metavar="FILE.json", help="write the minimal DFA as a DFA file "
                   "(letters, start, output, delta; any size; --against reads it back)")
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
