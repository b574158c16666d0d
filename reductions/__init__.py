"""Reductions from two-party problems to sequence tasks, and the tasks themselves.

- :mod:`reductions.tasks`: one file per task (vocabulary, format, sampler, ground truth).
- :mod:`reductions.base`: :class:`Reduction`, :class:`EncodedBatch`, owner codes.
- :mod:`reductions.lookup`, :mod:`reductions.strings`, :mod:`reductions.arithmetic`,
  :mod:`reductions.graphs`: the reductions, grouped by the tasks they target.
- :mod:`reductions.registry`: ``TASKS``, ``REDUCTIONS``, ``get_task``, ``get_reduction``.
- :mod:`reductions.check`: ``check_reduction`` and ``make_task`` / ``make_reduction`` for
  users' own reductions (docs/user_reductions.md).
"""

from .base import ALICE, BOB, PUBLIC, SPLIT_KINDS, EncodedBatch, Reduction, describe_owners
from .check import (CheckReport, OwnerViolation, ReductionCheckError, ReductionCounterexample,
                    check_owners, check_reduction, make_reduction, make_task)
from .registry import (DEFAULT_PROBLEM, REDUCTIONS, TASKS, get_reduction, get_task, list_reductions,
                       list_tasks)
from .tasks import Task, TaskBatch

__all__ = ["PUBLIC", "ALICE", "BOB", "SPLIT_KINDS", "EncodedBatch", "Reduction", "describe_owners",
           "Task", "TaskBatch", "TASKS", "REDUCTIONS", "DEFAULT_PROBLEM", "get_task", "list_tasks",
           "get_reduction", "list_reductions", "check_reduction", "check_owners", "make_task",
           "make_reduction", "CheckReport", "ReductionCheckError", "ReductionCounterexample",
           "OwnerViolation"]
