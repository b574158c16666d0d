"""Theorem catalogue and bound calculator.

Every bound is data: a frozen :class:`Bound` with a sympy formula, its task, problem, split, architecture
class, kind, determinism, assumptions and a source carrying the reference tags ([P] [A] [S] [R] [C] [D] [D✓]).
The catalogue lives in one module per paper (:mod:`.bhbk`, :mod:`.sht`, :mod:`.wdl`), commcomp's own bounds
(:mod:`.commcomp_derived`) and standard communication facts (:mod:`.standard`).  :func:`compute_bounds`
evaluates it for lengths, precision, heads and architectures into :class:`BoundRow` values with the
DESIGN §4 ``bounds`` fields; :mod:`.export` writes them as JSON / CSV / Markdown / LaTeX and
:func:`plot_min_width` draws minimum width against N.

Conventions: formulas write ``log2`` for base 2 (bits; the papers write log N without a base) and ``ln`` for
the natural logarithm (JL dimensions, temperatures); a lower bound reads
``quantity >= formula`` (necessary), an upper bound ``quantity >= formula suffices`` (a construction).

Examples
--------
>>> rows = compute_bounds(8192, 64, task="index-lookup", arch="gru", include_randomized=False)
>>> rows[0].min_width, rows[0].theorem, rows[0].tag
(128, 'BHBK-IL-RNN', '[S][A][P]')
>>> get_bound("BHBK-NN-RNN").paper_form
'm >= N/(2p)'
"""

from commcomp.bounds.calculator import FIELDS, BoundRow, compute_bounds, precision_bits
from commcomp.bounds.catalogue import (
    BOUNDS, PARAMETERS, applies_to, evaluate_bound, get_bound, list_bounds,
)
from commcomp.bounds.export import (
    FORMATS, export_rows, parse_csv, parse_json, parse_latex, parse_markdown, parse_rows, to_csv, to_json,
    to_latex, to_markdown,
)
from commcomp.bounds.per_task import (
    SPECIAL_ROWS, QsaWidth, SpecialRow, best_construction, best_lower_bound, bound_parameters, catalogue_N,
    protocol_lower_bound_bits, qsa_construction_widths, qsa_explicit_width,
)
from commcomp.bounds.plot import PlotUnavailableError, plot_min_width
from commcomp.bounds.records import TASKS, Bound
from commcomp.bounds.records import EVIDENCE_TEXT, N_MEANING
from commcomp.bounds.widths import (
    crossover_length, hybrid_protocol_bits, min_width_for_bits, min_width_for_hybrid, min_width_for_quantity, sum_bits,
)

__all__ = [
    "BOUNDS", "FIELDS", "FORMATS", "PARAMETERS", "TASKS", "Bound", "BoundRow", "PlotUnavailableError",
    "applies_to", "compute_bounds", "crossover_length", "evaluate_bound", "export_rows", "get_bound",
    "list_bounds", "min_width_for_bits", "min_width_for_quantity", "parse_csv", "parse_json", "parse_latex",
    "parse_markdown", "parse_rows", "plot_min_width", "precision_bits", "to_csv", "to_json", "to_latex",
    "to_markdown",
    # per task instance, labels, protocols
    "EVIDENCE_TEXT", "N_MEANING", "QsaWidth", "SPECIAL_ROWS", "SpecialRow", "best_construction", "best_lower_bound",
    "bound_parameters", "catalogue_N", "hybrid_protocol_bits", "min_width_for_hybrid", "protocol_lower_bound_bits",
    "qsa_construction_widths", "qsa_explicit_width", "sum_bits",
]
