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
import tempfile
from typing import Callable

import numpy as np

from commcomp.errors import CommcompError

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
def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if hasattr(value, "is_Number") or type(value).__module__.startswith("sympy"):
        return str(value)
    return value


def write_output(text: str, out: str | None) -> None:
    """Print ``text`` or write it atomically to ``out``."""
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    directory = os.path.dirname(os.path.abspath(out)) or "."
    if not os.path.isdir(directory):
        raise CLIError(f"cannot write {out}: directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".commcomp-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def render_rich(renderables) -> str:
    """Render rich objects to a string (colour only when printing to a terminal)."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=int(os.environ.get("COLUMNS", "120")),
                      force_terminal=sys.stdout.isatty(), color_system="auto" if sys.stdout.isatty() else None)
    for r in renderables if isinstance(renderables, (list, tuple)) else [renderables]:
        console.print(r)
    return buffer.getvalue()


def rich_table(title: str, columns: list[str], rows: list[list], caption: str | None = None):
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=escape(title), caption=escape(caption) if caption else None, show_lines=False)
    for c in columns:
        table.add_column(escape(c), overflow="fold")
    for r in rows:
        table.add_row(*[v if hasattr(v, "__rich__") or hasattr(v, "__rich_console__")
                        else escape("" if v is None else str(v)) for v in r])
    return table


def emit(args, payload, table: Callable[[], object]) -> None:
    """Write ``payload`` as JSON or the rich renderables from ``table()`` as text."""
    if args.format == "json":
        write_output(json.dumps(_jsonable(payload), indent=2), args.out)
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


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _common(p, formats=("table", "json"), seed=False):
    p.add_argument("--format", choices=formats, default="table", help="output format (default: table)")
    p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of printing")
    if seed:
        p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")


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
    raise CLIError(f"list: nothing registered under {what!r} yet")


def cmd_list(args):
    rows, columns = _list_rows(args.what)
    emit(args, rows, lambda: rich_table(f"commcomp {args.what}", columns,
                                        [[", ".join(r[c]) if isinstance(r[c], list) else r[c] for c in columns]
                                         for r in rows]))


def add_list(sub):
    p = sub.add_parser("list", help="what the registries hold")
    p.add_argument("what", choices=["tasks", "archs", "problems", "theorems", "constructions"])
    _common(p)
    p.set_defaults(func=cmd_list)


# --------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------
SUBCOMMANDS = [add_list]


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
        args.func(args)
    except (CommcompError, CLIError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if not message.startswith("commcomp"):
            message = f"commcomp: error: {message}"
        print(message, file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("commcomp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
