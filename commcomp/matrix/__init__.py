"""Exact measures of small two-party problems, each with a certificate that an independent checker
verifies.

Measures and their size limits (R', C': distinct rows and columns where the measure merges them):

- matrix: :func:`communication_matrix`, :func:`problem_matrix`; R*C <= 2^28 cells.
- distinct rows, one-way complexity: :func:`distinct_rows`; R*C <= 2^28.
- rank over Q: :func:`rank_rational` (``modular`` default, ``bareiss``); min(R', C') <= 4096 and
  R'C' <= 2^24 (bareiss: R'C' <= 2^14).
- rank over GF(2): :func:`rank_gf2`; max(R, C) <= 2^14.
- fooling set: :func:`largest_fooling_set` (``auto`` default, ``exact``, ``networkx``, ``greedy``);
  exact: at most 400 cells of each value and 200 000 nodes (networkx: 128 cells), greedy R'C' <= 2^24.
- D(f) with an optimal protocol tree: :func:`deterministic_cc`; search: R', C' <= 32 and 200 000
  nodes; where the rank bound meets the index protocol: min(R', C') <= 256 and R'C' <= 2^20.
  With the partition numbers computed (``measure``), D >= ceil(log2 χ) starts the deepening.
- partition numbers χ₁, χ₀ (χ = χ₁ + χ₀) and cover numbers C¹, C⁰ (N¹ = ceil(log2 C¹), N⁰):
  :func:`partition_number_1`, :func:`partition_number_0`, :func:`cover_number_1`,
  :func:`cover_number_0`; by SAT (:mod:`.solvers`: CaDiCaL through PySAT by default, CP-SAT, z3)
  from the best lower bound upward: the z-cells reduce to at most 64 distinct rows and columns and
  2048 cells (``rectangles.MAX_SIDE``, ``MAX_CELLS``), 1 000 000 conflicts per solver call
  (``solvers.MAX_CONFLICTS``), DRAT proofs kept up to 200 000 lines (``drat.MAX_PROOF_LINES``); where rank or fooling set meets min(R', C') no search, up to 2^20
  reduced cells (``MAX_CELLS_BOUNDS``). Without a solver: the branch and bound below (partitions)
  and a search over maximal rectangles (covers: 40 z-cells after reduction, 200 000 nodes).
- partition number by branch and bound (the fallback): :func:`partition_number`; R'C' <= 64,
  R', C' <= 16, 200 000 nodes.
- matrix files (:func:`load_matrix`): at most 2^24 entries.

Beyond a limit a measure raises :class:`commcomp.errors.TooLargeError` naming the limit.
:func:`check_certificate` re-verifies any result; :func:`measure` / :func:`measure_problem` run
several (names in :data:`MEASURES`) and return a :class:`MatrixReport` whose ``to_json()`` has the
DESIGN §4 fields.

Examples
--------
>>> rep = measure_problem("equality", 3)
>>> rep.to_json()["deterministic_cc"], rep.certificates_checked
(4, True)
>>> rep.partition_number, rep.partition_number_1, rep.cover_number_1   # χ = χ₁ + χ₀; C¹ = 8 too
(16, 8, 8)
"""

from .build import MAX_CELLS, as_matrix, communication_matrix, problem_matrix, reduce_matrix
from .certificates import CertificateCheck, check_certificate
from .fooling import FoolingSetResult, is_fooling_set, largest_fooling_set
from .gf2 import GF2RankCertificate, rank_gf2
from .measures import JSON_FIELDS, MEASURES, TABLE_FIELDS, MatrixReport, measure, measure_problem, measure_source
from .partition import PartitionResult, Rectangle, partition_number
from .protocol_tree import (ProtocolLeaf, ProtocolNode, ProtocolTreeResult, deterministic_cc,
                            rank_sum_bound, tree_depth, tree_leaves)
from .rank import RankResult, RationalRankCertificate, log_rank_bound, rank_rational
from .rectangles import (RectangleNumberResult, cover_number_0, cover_number_1, partition_number_0,
                         partition_number_1, rectangle_number)
from .rows import DistinctRowsResult, distinct_rows
from .matrix_file import load_matrix
from .solvers import SOLVERS, available_solvers

__all__ = [
    "MAX_CELLS", "as_matrix", "communication_matrix", "problem_matrix", "reduce_matrix",
    "distinct_rows", "DistinctRowsResult",
    "rank_rational", "rank_gf2", "log_rank_bound", "RankResult", "RationalRankCertificate",
    "GF2RankCertificate",
    "largest_fooling_set", "is_fooling_set", "FoolingSetResult",
    "deterministic_cc", "rank_sum_bound", "tree_depth", "tree_leaves", "ProtocolLeaf",
    "ProtocolNode", "ProtocolTreeResult",
    "partition_number", "PartitionResult", "Rectangle",
    "partition_number_1", "partition_number_0", "cover_number_1", "cover_number_0",
    "rectangle_number", "RectangleNumberResult", "SOLVERS", "available_solvers", "load_matrix",
    "check_certificate", "CertificateCheck",
    "MEASURES", "JSON_FIELDS", "TABLE_FIELDS", "MatrixReport", "measure", "measure_problem", "measure_source",
]
