"""Registries: the names users type, mapped to tasks and reductions (DESIGN §4).

Examples
--------
>>> get_task("nn").name
'nearest-neighbour'
>>> get_reduction("mqar").problem, get_reduction("mqar", problem="disj").problem
('index', 'disjointness')
>>> [r.name for r in list_reductions()][:3]
['index->copy', 'disjointness->dyck', 'equality->dyck']
>>> get_reduction("induction-heads", problem="index@prefix").split
'prefix-suffix'
"""

from __future__ import annotations

from types import MappingProxyType

from commcomp.errors import UnknownNameError

from .arithmetic import disjointness_to_match3, disjointness_to_qsa, index_to_match2, index_to_qsa_q1
from .base import Reduction
from .composition import (index_to_copy, index_to_function_composition, index_to_function_composition_bits,
                          index_to_function_composition_split,
                          index_to_induction_heads, index_to_induction_heads_prefix)
from .graphs import disjointness_to_istree
from .lookup import (disjointness_to_mqar, disjointness_to_multi_index_lookup, index_to_index_lookup,
                     index_to_mqar, index_to_nearest_neighbour, inner_product_to_mqar,
                     inner_product_to_multi_index_lookup)
from .strings import (disjointness_to_dyck, disjointness_to_string_disjointness, equality_to_dyck,
                      equality_to_string_equality)
from .tasks import (MQAR, Dyck, IndexLookup, IsTree, Match2, Match3, MultiIndexLookup,
                    NearestNeighbour, QSparseAveraging, StringDisjointness, StringEquality)
from .tasks.base import Task
from .tasks.copy import Copy
from .tasks.function_composition import FunctionComposition
from .tasks.induction_heads import InductionHeads
from .tasks.index_first import index_first_task

__all__ = ["TASKS", "EXTRA_TASKS", "task_instance", "REDUCTIONS", "DEFAULT_PROBLEM", "get_task", "list_tasks", "get_reduction",
           "list_reductions", "canonical_task_name", "canonical_problem_name"]

# Each task's default instance (what `get_task` returns); reductions may fix other parameters.
TASKS = MappingProxyType({t.name: t for t in (
    IndexLookup(), MultiIndexLookup(), NearestNeighbour(), MQAR(num_queries=1), StringEquality(),
    StringDisjointness(), Dyck(types=2, depth=2), QSparseAveraging(), Match2(), Match3(), IsTree(),
    InductionHeads(), FunctionComposition(), Copy(),
)})

_REDUCTION_LIST: tuple[Reduction, ...] = (
    index_to_index_lookup, disjointness_to_multi_index_lookup, index_to_nearest_neighbour,
    index_to_mqar, disjointness_to_mqar, equality_to_string_equality,
    disjointness_to_string_disjointness, equality_to_dyck, disjointness_to_dyck,
    disjointness_to_qsa, index_to_qsa_q1, disjointness_to_match3, index_to_match2, disjointness_to_istree,
    index_to_induction_heads, index_to_induction_heads_prefix, index_to_function_composition,
    index_to_function_composition_split, index_to_function_composition_bits, index_to_copy,
    inner_product_to_mqar, inner_product_to_multi_index_lookup,
)


def _registry_problem(r: Reduction) -> str:
    """The `--problem` key of a reduction: its problem, or ``problem@split`` for a second split of the
    same problem and task (``index@prefix`` for induction heads, ``index@split`` for composition)."""
    head = r.name.split("->")[0]
    return head if head.startswith(r.problem + "@") else r.problem


REDUCTIONS = MappingProxyType({(_registry_problem(r), r.task_name): r for r in _REDUCTION_LIST})

# The reduction `--problem` picks when it is not given.
DEFAULT_PROBLEM = MappingProxyType({
    "index-lookup": "index", "multi-index-lookup": "disjointness", "nearest-neighbour": "index",
    "mqar": "index", "string-equality": "equality", "string-disjointness": "disjointness",
    "dyck": "disjointness", "qsa": "disjointness", "match2": "index", "match3": "disjointness",
    "istree": "disjointness", "induction-heads": "index", "function-composition": "index", "copy": "index",
})

#: Tasks with no two-party reduction (so outside TASKS, whose every entry has one), registered
#: under their names for the constructions that solve them: name -> factory of keyword parameters.
EXTRA_TASKS = MappingProxyType({"index-first-lookup": index_first_task})
_EXTRA_DEFAULTS = {name: make() for name, make in EXTRA_TASKS.items()}

_TASK_ALIASES = {alias: t.name for t in (*TASKS.values(), *_EXTRA_DEFAULTS.values())
                 for alias in (t.name,) + t.aliases}
_PROBLEM_ALIASES = {  # kept here so that reductions work without importing every problem
    "index": "index", "idx": "index", "index-function": "index",
    "disjointness": "disjointness", "disj": "disjointness", "set-disjointness": "disjointness",
    "equality": "equality", "eq": "equality",
    "inner-product": "inner-product", "ip": "inner-product", "ip2": "inner-product",
    "greater-than": "greater-than", "gt": "greater-than",
}


def _key(name) -> str:
    return str(name).strip().lower().replace("_", "-")


def canonical_task_name(name) -> str:
    """The registry name for a task name or alias (a Task instance gives its own name)."""
    if isinstance(name, Task):
        return name.name
    key = _key(name)
    if key not in _TASK_ALIASES:
        raise UnknownNameError(f"unknown task {name!r}; known: {', '.join(sorted(TASKS))}")
    return _TASK_ALIASES[key]


def canonical_problem_name(name) -> str:
    """The registry name for a problem name or alias (a Problem instance gives its own name)."""
    if hasattr(name, "evaluate") and hasattr(name, "name"):
        return name.name
    key = _key(name)
    if key in _PROBLEM_ALIASES:
        return _PROBLEM_ALIASES[key]
    from commcomp.problems import get_problem  # a user-registered problem, or the error
    return get_problem(name).name


def get_task(name) -> Task:
    """The default instance of the task registered under ``name`` (or an alias).

    Raises
    ------
    UnknownNameError
        With the known task names in the message.
    """
    key = canonical_task_name(name)
    return TASKS[key] if key in TASKS else _EXTRA_DEFAULTS[key]


def task_instance(name, **params) -> Task:
    """The task registered under ``name`` built with ``params`` (an :data:`EXTRA_TASKS` factory's
    keywords, e.g. ``alphabet``), or the default instance when there are none.

    >>> task_instance("il-first", alphabet=3).vocabulary(2)
    ('0', '1', '2', 'p0', 'p1')
    """
    key = canonical_task_name(name)
    if key in EXTRA_TASKS and params:
        return EXTRA_TASKS[key](**params)
    return get_task(key)


def list_tasks() -> tuple[str, ...]:
    """Registered task names, sorted."""
    return tuple(sorted(TASKS))


def get_reduction(task, problem=None) -> Reduction:
    """The reduction from ``problem`` to ``task``; the task's default when ``problem`` is None.

    Raises
    ------
    UnknownNameError
        For an unknown task, or a problem with no reduction to this task (the message lists
        the problems that have one).
    """
    task_name = canonical_task_name(task)
    if task_name in EXTRA_TASKS:
        raise UnknownNameError(f"task {task_name!r} has no reduction from a two-party problem")
    if problem is None:
        problem_name = DEFAULT_PROBLEM[task_name]
    else:
        base, at, variant = _key(problem).partition("@")
        try:
            problem_name = canonical_problem_name(base) + at + variant
        except UnknownNameError:
            problem_name = _key(problem)
    if (problem_name, task_name) not in REDUCTIONS:
        known = sorted(p for p, t in REDUCTIONS if t == task_name)
        raise UnknownNameError(f"no reduction from problem {problem!r} to task {task_name!r}; "
                               f"known for this task: {', '.join(known)}")
    return REDUCTIONS[(problem_name, task_name)]


def list_reductions() -> tuple[Reduction, ...]:
    """Every registered reduction, sorted by (task, problem); each carries its split kind,
    source, section and tag."""
    return tuple(sorted(_REDUCTION_LIST, key=lambda r: (r.task_name, r.problem)))
