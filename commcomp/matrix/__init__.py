"""Exact measures of small two-party problems, each with a certificate that an independent checker
verifies.

=====================  ==============================================  ==================================
measure                function                                        size limit (after merging equal
                                                                       rows and columns where it applies)
=====================  ==============================================  ==================================
matrix                 :func:`communication_matrix`,                   R*C <= 2^28 cells
                       :func:`problem_matrix`
distinct rows, one-way :func:`distinct_rows`                           R*C <= 2^28
rank over Q            :func:`rank_rational` (``modular``/``bareiss``) min(R', C') <= 4096, R'C' <= 2^24
                                                                       (bareiss: R'C' <= 2^14)
rank over GF(2)        :func:`rank_gf2`                                max(R, C) <= 2^14
fooling set            :func:`largest_fooling_set`                     exact: <= 400 cells of each value
                       (``auto``/``exact``/``networkx``/``greedy``)    and 200 000 nodes; greedy R'C' <= 2^24
D(f) + protocol tree   :func:`deterministic_cc`                        R', C' <= 32; 200 000 nodes
partition number       :func:`partition_number`                        R'C' <= 64, R', C' <= 16; 200 000 nodes
=====================  ==============================================  ==================================

Beyond a limit a measure raises :class:`commcomp.errors.TooLargeError` naming the limit.
:func:`check_certificate` re-verifies any result; :func:`measure` / :func:`measure_problem` run
several (names in :data:`MEASURES`) and return a :class:`MatrixReport` whose ``to_json()`` has the
DESIGN §4 fields.

Examples
--------
>>> rep = measure_problem("equality", 3)
>>> rep.to_json()["deterministic_cc"], rep.certificates_checked
(4, True)
"""

from .build import MAX_CELLS, as_matrix, communication_matrix, problem_matrix, reduce_matrix
from .certificates import CertificateCheck, check_certificate
from .fooling import FoolingSetResult, is_fooling_set, largest_fooling_set
from .gf2 import GF2RankCertificate, rank_gf2
from .measures import JSON_FIELDS, MEASURES, MatrixReport, measure, measure_problem
from .partition import PartitionResult, Rectangle, partition_number
from .protocol_tree import (ProtocolLeaf, ProtocolNode, ProtocolTreeResult, deterministic_cc,
                            rank_sum_bound, tree_depth, tree_leaves)
from .rank import RankResult, RationalRankCertificate, log_rank_bound, rank_rational
from .rows import DistinctRowsResult, distinct_rows

__all__ = [
    "MAX_CELLS", "as_matrix", "communication_matrix", "problem_matrix", "reduce_matrix",
    "distinct_rows", "DistinctRowsResult",
    "rank_rational", "rank_gf2", "log_rank_bound", "RankResult", "RationalRankCertificate",
    "GF2RankCertificate",
    "largest_fooling_set", "is_fooling_set", "FoolingSetResult",
    "deterministic_cc", "rank_sum_bound", "tree_depth", "tree_leaves", "ProtocolLeaf",
    "ProtocolNode", "ProtocolTreeResult",
    "partition_number", "PartitionResult", "Rectangle",
    "check_certificate", "CertificateCheck",
    "MEASURES", "JSON_FIELDS", "MatrixReport", "measure", "measure_problem",
]
