"""Sequence tasks, one file each, behind :class:`~reductions.tasks.base.Task`.

Each task defines its vocabulary, input format, a sampler with balanced answers and its own
ground truth from the tokens alone. The registry (:mod:`reductions.registry`) maps the names
users type to default instances.
"""

from .base import Task, TaskBatch
from .dyck import Dyck
from .index_lookup import IndexLookup
from .istree import IsTree
from .match2 import Match2
from .match3 import Match3
from .mqar import MQAR
from .multi_index_lookup import MultiIndexLookup
from .nearest_neighbour import NearestNeighbour
from .qsa import QSparseAveraging
from .string_disjointness import StringDisjointness
from .string_equality import StringEquality

__all__ = ["Task", "TaskBatch", "IndexLookup", "MultiIndexLookup", "NearestNeighbour", "MQAR",
           "StringEquality", "StringDisjointness", "Dyck", "QSparseAveraging", "Match2", "Match3",
           "IsTree"]
