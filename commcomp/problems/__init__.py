"""Two-party problems, one file each, behind :class:`Problem`; a registry maps names to them.

Examples
--------
>>> get_problem("disj").name
'disjointness'
>>> sorted(PROBLEMS)
['disjointness', 'equality', 'greater-than', 'index', 'inner-product']
"""

from __future__ import annotations

from ..errors import UnknownNameError
from .base import ComplexityFact, Problem, all_bit_strings
from .disjointness import Disjointness
from .equality import Equality
from .greater_than import GreaterThan
from .index import Index
from .inner_product import InnerProduct

__all__ = ["Problem", "ComplexityFact", "PROBLEMS", "get_problem", "list_problems", "all_bit_strings",
           "Index", "Equality", "Disjointness", "InnerProduct", "GreaterThan", "problem_rows"]

PROBLEMS: dict[str, type[Problem]] = {cls.name: cls for cls in
                                      (Index, Disjointness, Equality, InnerProduct, GreaterThan)}
_ALIASES = {alias: cls.name for cls in PROBLEMS.values() for alias in cls.aliases}


def get_problem(name) -> Problem:
    """The problem registered under ``name`` (or an alias); a Problem instance passes through.

    Raises
    ------
    UnknownNameError
        With the known names in the message.
    """
    if isinstance(name, Problem):
        return name
    key = str(name).strip().lower().replace("_", "-")
    key = _ALIASES.get(key, key)
    if key not in PROBLEMS:
        raise UnknownNameError(f"unknown problem {name!r}; known: {', '.join(sorted(PROBLEMS))}")
    return PROBLEMS[key]()


def list_problems() -> list[Problem]:
    """Every registered problem, sorted by name."""
    return [PROBLEMS[k]() for k in sorted(PROBLEMS)]


def problem_rows() -> list[dict]:
    """One dict per problem (``commcomp list problems``): names, description, one-way and two-way
    deterministic communication in bits (formulas from the problem's complexity facts).

    >>> problem_rows()[0]["one_way_bits"]
    'n'
    """
    return [{"name": p.name, "aliases": list(p.aliases), "description": p.description,
             "one_way_bits": str(p.fact("deterministic_one_way").expression),
             "deterministic_bits": str(p.fact("deterministic").expression)} for p in list_problems()]
