"""``commcomp list WHAT``: which registry's rows to list (the task rows here, beside the task registry; the others
beside theirs).

========================  ===============================================================
``what``                  the rows
========================  ===============================================================
``tasks``                 :func:`task_rows` (the task registry and the tasks' encodings)
``archs``                 :func:`reductions.simulate.registry.architecture_rows`
``problems``              :func:`commcomp.problems.problem_rows`
``theorems``              :func:`commcomp.bounds.catalogue.theorem_rows`
``constructions``         :func:`models.constructions.construction_rows`
========================  ===============================================================

The rows are what ``--format json`` prints; :func:`commcomp.listing.list_text` shows them as a table.

Examples
--------
>>> [r["name"] for r in list_rows("problems")][:2]
['disjointness', 'equality']
"""

from __future__ import annotations

from commcomp.errors import UnknownNameError

__all__ = ["LISTS", "list_rows", "task_rows"]


def task_rows() -> list[dict]:
    """One dict per task (``commcomp list tasks``): its reductions' problems (the default marked),
    split kinds, sources and its encoding (:mod:`.tasks.encoding`); the tasks without a two-party
    reduction last.

    >>> next(r for r in task_rows() if r["name"] == "index-lookup")["problems"]
    ['index (default)']
    """
    from .registry import DEFAULT_PROBLEM, EXTRA_TASKS, TASKS, get_task, list_reductions
    from .tasks.encoding import task_encoding

    by_task = {}
    for r in list_reductions():
        by_task.setdefault(r.task_name, []).append(r)
    rows = [{"name": t.name, "aliases": list(t.aliases), "answer": t.answer_kind,
             "problems": [f"{r.problem}{' (default)' if r.problem == DEFAULT_PROBLEM.get(t.name) else ''}"
                          for r in by_task.get(t.name, [])],
             "split": sorted({r.split for r in by_task.get(t.name, [])}),
             "source": sorted({f"{r.source} {r.section}" for r in by_task.get(t.name, [])}),
             "encoding": task_encoding(t).to_json()}
            for t in (TASKS[k] for k in sorted(TASKS))]
    rows += [{"name": t.name, "aliases": list(t.aliases), "answer": t.answer_kind, "problems": [],
              "split": ["none"], "source": ["constructions only: no two-party reduction"],
              "encoding": task_encoding(t).to_json()}
             for t in (get_task(k) for k in sorted(EXTRA_TASKS))]
    return rows


def _archs():
    from .simulate.registry import architecture_rows

    return architecture_rows()


def _problems():
    from commcomp.problems import problem_rows

    return problem_rows()


def _theorems():
    from commcomp.bounds.catalogue import theorem_rows

    return theorem_rows()


def _constructions():
    from models.constructions import construction_rows

    return construction_rows()


#: ``what`` -> the function of its rows (each imports its registry only when listed)
LISTS = {"tasks": task_rows, "archs": _archs, "problems": _problems, "theorems": _theorems,
         "constructions": _constructions}


def list_rows(what: str) -> list[dict]:
    """The rows of ``commcomp list WHAT`` (one dict per registered entry)."""
    if what not in LISTS:
        raise UnknownNameError(f"list: nothing registered under {what!r}; known: {', '.join(LISTS)}")
    return LISTS[what]()
