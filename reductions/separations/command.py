"""``commcomp separations``: its options, the run, and its output (the CLI parses and maps the options).

Without ``--n`` it shows the papers' claims (:mod:`.claims`, one row per claim with a verdict:
the table printed by default), computed from every separation on its ladder of N
(:func:`.rows.separation_ladders`: the table of ``--ladder``, ``--weak``, ``--sizes``, ``--wide``)
and, when no subset is asked for, the special rows (:mod:`.special`: k-DNF, CoT, RAG, hybrid);
``--format json`` gives ``{"claims", "derived", "separations"}`` (the last: the ladders and special rows);
with ``--n`` the per-architecture grid at that problem size (:func:`.grid.separations`, the
original contract).  Tables go through :func:`commcomp.tables.text_table` (no word broken).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from commcomp.errors import InvalidParameterError
from commcomp.limits import (MAX_HEADS, MAX_INSTANCES, MAX_N, MAX_WIDTH, TOKEN_BYTES, check_int, check_memory,
                             check_seed)
from commcomp.jsonable import jsonable
from commcomp.tables import text_table

from . import claims_view, render
from .pipeline import ladders_and_claims
from .rows import DEFAULT_CHECK_MAX_LENGTH, DEFAULT_PRECISION
from .special import special_rows

__all__ = ["SeparationsOptions", "run", "FORMATS"]

FORMATS = ("table", "json", "markdown", "latex")


@dataclass(frozen=True)
class SeparationsOptions:
    """The options of ``commcomp separations`` (the CLI maps its arguments onto them one by one).

    ``n`` None: the claims and ladders (``precision`` default :data:`.rows.DEFAULT_PRECISION`);
    ``n`` given: the per-architecture grid at that size (``precision`` default float32, with
    ``instances`` and ``width``). The ladder-only and grid-only options keep their defaults in the
    other mode (anything else is refused). ``format`` is that of the text returned.
    """

    format: str = "table"             # of the text returned: table, json, markdown, latex (FORMATS)
    precision: str | None = None
    heads: int = 1
    task: Sequence[str] | None = None
    weak: Sequence[str] | None = None
    sizes: Sequence[int] | None = None
    max_n: int = 1 << 16
    samples: int = 32
    budget: int = 1024
    weak_width: int = 1
    weights: str = "random"
    check_max_length: int = DEFAULT_CHECK_MAX_LENGTH
    check_all: bool = False
    workers: int = 0                  # processes for the ladders and the claims (0: rows.default_workers())
    wide: bool = False
    ladder: bool = False
    plot: str | None = None
    n: int | None = None
    instances: int = 32
    width: int = 4
    arch: Sequence[str] | None = None
    seed: int = 0


def _check_args(args: SeparationsOptions) -> SeparationsOptions:
    """Every size and count against :mod:`commcomp.limits`, before any work (one message, exit 2);
    the options with the seed checked."""
    args = replace(args, seed=check_seed(args.seed))
    for name, maximum in (("heads", MAX_HEADS), ("width", MAX_WIDTH), ("weak_width", MAX_WIDTH),
                          ("samples", MAX_INSTANCES), ("budget", MAX_INSTANCES), ("instances", MAX_INSTANCES),
                          ("max_n", MAX_N), ("check_max_length", MAX_N)):
        check_int(f"--{name.replace('_', '-')}", getattr(args, name), 1, maximum)
    check_int("--workers", args.workers, 0, 64)
    if args.n is not None:
        check_int("n", args.n, 1, MAX_N)
    for size in args.sizes or ():
        check_int("--sizes", size, 1, MAX_N)
    # a checked row holds its samples' tokens and one attention matrix of the longest checked sequence
    check_memory("separations", "check-max-length", args.check_max_length,
                 lambda length: TOKEN_BYTES * args.samples * length + 8 * length * length,
                 detail=f"{args.samples} samples of that many tokens and one attention matrix")
    _check_mode_options(args)
    if args.precision is not None:
        from commcomp.precision import parse_precision

        parse_precision(args.precision)  # '' or ' float32' is refused here, not replaced by the default
    if args.weights != "random":
        _check_weights_file(args)
    return args


#: options of one mode only, with their defaults: given in the other mode they would be ignored
_LADDER_ONLY = {"sizes": None, "weak": None, "weak_width": 1, "weights": "random", "samples": 32, "budget": 1024,
                "check_max_length": DEFAULT_CHECK_MAX_LENGTH, "check_all": False, "max_n": 1 << 16, "plot": None,
                "workers": 0}
_GRID_ONLY = {"instances": 32, "width": 4}


def _check_mode_options(args: SeparationsOptions) -> None:
    unused, mode = (_LADDER_ONLY, "with --n (the grid)") if args.n is not None else (_GRID_ONLY, "without --n")
    given = [f"--{k.replace('_', '-')}" for k, default in unused.items() if getattr(args, k, default) != default]
    if given:
        raise InvalidParameterError(f"separations: {', '.join(given)} {'is' if len(given) == 1 else 'are'} not "
                                    f"used {mode}; leave {'it' if len(given) == 1 else 'them'} out")


def _check_weights_file(args: SeparationsOptions) -> None:
    """Read the whole weights file (corrupt bytes, NaN weights) and match it to the weak side, up front."""
    from commcomp.architectures import get_architecture
    from models.files import load_model, read_model_info

    if not os.path.isfile(args.weights):
        raise InvalidParameterError(f"--weights: no such file {args.weights!r}")
    info = read_model_info(args.weights)
    load_model(args.weights)
    from .ladder import WEAK_CANDIDATES, _weak_spec

    weak = WEAK_CANDIDATES if not (args.weak or args.arch) else tuple(_weak_spec(w) for w in (args.weak or args.arch))
    names = sorted({get_architecture(a).name for a, _ in weak})
    if names != [info.arch]:
        raise InvalidParameterError(f"--weights {args.weights} holds {info.describe()}; check (b) would run it "
                                    f"as the weak side {', '.join(names)}: give --weak {info.arch}")


def run(options: SeparationsOptions) -> str:
    """The command's output text in ``options.format`` (JSON through :func:`commcomp.jsonable.jsonable`)."""
    args = _check_args(options)
    if args.n is not None:
        return _grid(args)
    precision = DEFAULT_PRECISION if args.precision is None else args.precision
    start = time.perf_counter()
    ladders, claims, derived = ladders_and_claims(
        args.task, precision, heads=args.heads, sizes=args.sizes, weak=args.weak or args.arch,
        samples=args.samples, budget=args.budget, weak_width=args.weak_width, weights=args.weights,
        seed=args.seed, max_n=args.max_n, check_max_length=args.check_max_length, check_all=args.check_all,
        workers=args.workers)
    specials = special_rows(precision, seed=args.seed, samples=args.samples) if not args.task and not \
        (args.weak or args.arch) and not args.sizes else []
    seconds = time.perf_counter() - start
    if args.plot:
        render.plot_ladders(ladders, args.plot, precision)
    if args.format == "json":
        return json.dumps(jsonable({
            "claims": [c.to_json() for c in claims], "derived": [c.to_json() for c in derived],
            "separations": [{"kind": "separation", **lad.to_json()} for lad in ladders]
            + [{"kind": "special", **s.to_json()} for s in specials]}), indent=2)
    if not (args.ladder or args.weak or args.arch or args.sizes or args.wide):
        return _claims_output(args, claims, derived, precision, seconds)
    note = render.caption(ladders, precision, args.heads, samples=args.samples, budget=args.budget,
                          weak_width=args.weak_width, check_max_length=args.check_max_length,
                          seconds=seconds, check_all=args.check_all)
    wide = args.wide or args.format in ("markdown", "latex")
    columns = render.WIDE_COLUMNS if wide else render.COLUMNS
    rows = render.wide_rows(ladders) + render.special_wide_rows(specials) if wide else \
        render.table_rows(ladders) + render.special_table_rows(specials)
    title = "commcomp separations: minimum width across the crossover"
    if args.format == "markdown":
        return render.markdown(columns, rows, title, note)
    if args.format == "latex":
        return render.latex(columns, rows, title, note)
    return text_table(title, columns, rows, note, one_line=not wide)


def _claims_output(args: SeparationsOptions, claims, derived, precision, seconds) -> str:
    caption = claims_view.claims_caption(precision, args.heads, samples=args.samples, budget=args.budget,
                                         weak_width=args.weak_width, check_max_length=args.check_max_length,
                                         seconds=seconds)
    if args.format == "markdown":
        return claims_view.claims_markdown(claims, derived, caption)
    if args.format == "latex":
        return claims_view.claims_latex(claims, derived, caption)
    return claims_view.claims_text(claims, derived, caption)


def _grid(args: SeparationsOptions) -> str:
    from .grid import separations

    precision = "float32" if args.precision is None else args.precision
    rows = separations(n=args.n, precision=precision, heads=args.heads,
                       instances=args.instances, seed=args.seed, tasks=args.task, archs=args.arch,
                       width=args.width)
    if args.format == "json":
        return json.dumps(jsonable([r.to_json() for r in rows]), indent=2)
    wide = args.wide or args.format in ("markdown", "latex")
    table = []
    for r in rows:
        lower = "-" if r.lower_bound_width is None else f"{r.lower_bound_width} {render._tag(r.lower_bound_tag)}"
        constr = "-" if not r.construction_checked else f"{r.construction_correct}/{r.construction_checked}"
        proto = "-" if r.protocol_bits is None else f"{r.protocol_bits}/{r.protocol_lower_bound_bits}"
        line = [render.TASK_SHORT.get(r.task, r.task), r.arch, r.length, lower,
                render._w(r.catalogue_construction_width), constr, proto, r.status]
        if wide:
            line += [f"{r.lower_bound_theorem or '-'} {r.lower_bound_formula or ''}".strip(),
                     r.construction_note or r.protocol_note or ""]
        table.append(line)
    columns = ["task", "arch", "N", "m>=", "cat m", "constr", "bits/LB", "checked"] + (
        ["theorem", "note"] if wide else [])
    note = (f"n = {args.n}, p = {rows[0].precision if rows else '-'}, H = {args.heads}. constr: the "
            f"construction correct/judged; bits/LB: a random model of width {args.width} as a protocol, bits "
            f"sent / the bound; checked: yes (a check on this architecture ran, none failed), NO, or not "
            f"checked (only the reduction, which does not depend on the architecture).")
    title = f"commcomp separations at n = {args.n}"
    if args.format == "markdown":
        return render.markdown(columns, table, title, note)
    if args.format == "latex":
        return render.latex(columns, table, title, note)
    return text_table(title, columns, table, note, one_line=not wide)
