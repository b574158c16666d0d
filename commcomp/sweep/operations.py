"""What a sweep can run: a registry of operations, ``name -> function(params, seed) -> dict``.

Each operation calls one library function and returns the JSON fields of the matching single-run command
(DESIGN §4), so a sweep row holds exactly what ``commcomp verify ... --format json`` would print. An
operation is registered by the module that holds it, beside the library code it runs: ``bounds``,
``matrix`` and the diagnostic ``selftest`` here (they run :mod:`commcomp` alone); ``verify``,
``witness``, ``reachable`` and ``construct`` in :mod:`reductions.operations` (registered when it is
imported: the ``commcomp`` command does). A worker process imports the registering module before it runs a point
(:func:`commcomp.sweep.engine.execute_job`), so this engine needs nothing of ``reductions``.

=============  ================================================  ==================================================
operation      wraps                                             result fields
=============  ================================================  ==================================================
verify         ``reductions.simulate.verify``                    the ``verify`` JSON (faithful, correct, ...)
witness        ``reductions.search.witness.find_witness``        the ``witness`` JSON (found, x, x_prime, ...)
reachable      ``reductions.search.reachable.api.reachable_analysis``  distinct messages per level, witness, counts
construct      ``reductions.search.construction.minimal_width``  min_width, min_precision_bits, lower_bound_width
bounds         ``commcomp.bounds.compute_bounds``                ``rows`` (the calculator's rows) + headline fields
matrix         ``commcomp.matrix.measure_problem``               the ``matrix`` JSON (one_way_bits, rank, ...)
selftest       nothing (diagnostic)                              ``seconds, mode, draw``
=============  ================================================  ==================================================

The parameters an operation accepts are its library function's keyword parameters (read from its
signature, less ``seed``, ``model`` and ``progress``, which a sweep supplies or cannot store), unless it
states them.

``selftest`` is a diagnostic operation for tests and benchmarks of the sweep machinery itself: it sleeps
(``mode = "sleep"``) or burns CPU (``mode = "spin"``) for ``seconds``, draws one number from its seed,
raises when ``fail`` is true, and ends its worker process abruptly when ``crash`` is true. It accepts any
other parameter and ignores it, so it can stand in for any grid.

Examples
--------
>>> run_operation("selftest", {"seconds": 0, "n": 4}, seed=7)["draw"] == run_operation("selftest", {}, 7)["draw"]
True
>>> get_operation("bounds").wraps_name
'commcomp.bounds.compute_bounds'
"""

from __future__ import annotations

import inspect
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from commcomp.errors import InvalidParameterError, SweepSpecError, UnknownNameError
from commcomp.jsonable import jsonable

from . import library_ops as _lib

__all__ = ["Operation", "OPERATIONS", "register_operation", "get_operation", "list_operations",
           "run_operation", "jsonable", "SWEEP_SUPPLIED"]

#: Keyword parameters of a wrapped function that a sweep point never passes (seeded by the sweep, or
#: objects a database cannot hold).
SWEEP_SUPPLIED = frozenset({"seed", "model", "progress"})


@dataclass(frozen=True)
class Operation:
    """A sweepable operation.

    Attributes
    ----------
    name : str
        What users type (``--op NAME`` or ``[sweep] operation``).
    function : callable
        ``function(params: dict, seed: int) -> dict`` of JSON-able result fields.
    description : str
    wraps : callable or None
        The library function it calls (None for a diagnostic).
    required : tuple of str
        Parameters every point must have (checked before the sweep starts).
    accepted : tuple of str, callable returning one, None, or "signature"
        Every parameter name it understands besides ``required``; None accepts any; ``"signature"`` (the
        default) reads them from ``wraps``' keyword parameters (less :data:`SWEEP_SUPPLIED`), so they cannot
        drift from the function. An unknown name is a spec error, raised before anything runs.
    headline : tuple of str
        Result fields the summary table shows (all scalar fields when empty).
    diagnostic : bool
        True for operations that test the sweep machinery, not the science.
    """

    name: str
    function: Callable[[dict, int], dict]
    description: str
    wraps: Callable | None = None
    required: tuple = ()
    accepted: tuple | Callable[[], tuple] | str | None = "signature"
    headline: tuple = ()
    diagnostic: bool = False
    aliases: tuple = ()

    @property
    def module(self) -> str:
        """The module that holds (and registers) the operation: a worker imports it before running a point."""
        return self.function.__module__

    @property
    def wraps_name(self) -> str:
        """``package.function`` of the wrapped library function, from the shortest package that exports it
        (``commcomp.bounds.compute_bounds``, not its defining submodule); ``(diagnostic)`` for none."""
        if self.wraps is None:
            return "(diagnostic)"
        module, name = self.wraps.__module__, self.wraps.__name__
        parts = module.split(".")
        for end in range(1, len(parts)):
            parent = sys.modules.get(".".join(parts[:end]))
            if getattr(parent, name, None) is self.wraps:
                return f"{'.'.join(parts[:end])}.{name}"
        return f"{module}.{name}"

    def accepted_names(self) -> set | None:
        """Every parameter name the operation understands (``required`` included); None: any."""
        accepted = self.accepted
        if accepted == "signature":
            if self.wraps is None:
                return None
            parameters = inspect.signature(self.wraps).parameters.values()
            if any(p.kind is p.VAR_KEYWORD for p in parameters):
                return None
            accepted = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                        and p.name not in SWEEP_SUPPLIED}
        elif callable(accepted):
            accepted = accepted()
        return None if accepted is None else set(accepted) | set(self.required)

    def check_names(self, names) -> None:
        """Raise when a required parameter is missing or a name is unknown to the operation."""
        names = set(names)
        missing = [r for r in self.required if r not in names]
        if missing:
            raise SweepSpecError(f"operation {self.name!r} needs parameter(s) {', '.join(missing)} "
                                 "(in [params], [axes], --param or --axis)")
        accepted = self.accepted_names()
        if accepted is not None:
            unknown = sorted(names - accepted - {"repeat"})
            if unknown:
                raise SweepSpecError(f"operation {self.name!r} takes no parameter(s) {', '.join(unknown)}; "
                                     f"known: {', '.join(sorted(accepted))}")


# --------------------------------------------------------------------------------------------
# diagnostic
# --------------------------------------------------------------------------------------------
def selftest(params: dict, seed: int) -> dict:
    """Sleep or spin for ``seconds``, return a seeded draw; ``fail``/``crash`` exercise the error paths."""
    seconds = params.get("seconds", 0.0)
    mode = params.get("mode", "sleep")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
        raise InvalidParameterError(f"selftest: seconds must be a number >= 0, got {seconds!r}")
    if mode not in ("sleep", "spin"):
        raise InvalidParameterError(f"selftest: mode must be 'sleep' or 'spin', got {mode!r}")
    draw = float(np.random.default_rng(seed).random())
    if params.get("fail"):
        raise InvalidParameterError(f"selftest: asked to fail (fail={params['fail']!r})")
    if params.get("crash"):
        if multiprocessing.parent_process() is None:
            raise InvalidParameterError("selftest: crash=true only runs in a worker process")
        os._exit(70)  # noqa: the point is to die without cleaning up, as a segfault would
    if mode == "sleep":
        time.sleep(seconds)
    else:  # burn `seconds` of this process's CPU time (wall time grows when cores are shared)
        end = time.process_time() + seconds
        x = 0
        while time.process_time() < end:
            for i in range(2000):
                x ^= i * i
    return {"seconds": seconds, "mode": mode, "draw": draw}


# --------------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------------
OPERATIONS: dict[str, Operation] = {}
_ALIASES: dict[str, str] = {}


def register_operation(operation: Operation) -> Operation:
    """Add ``operation`` to the registry (again under the same name: replaced), with its aliases.

    >>> register_operation(get_operation("selftest")).name
    'selftest'
    """
    OPERATIONS[operation.name] = operation
    _ALIASES.update({alias: operation.name for alias in operation.aliases})
    return operation


for _operation in (
    Operation("bounds", _lib.bounds, "the calculator's lower bounds and constructions",
              wraps=_lib.compute_bounds, required=_lib.BOUNDS_REQUIRED, accepted=_lib.BOUNDS_ACCEPTED,
              headline=("lower_bound_width", "lower_bound_theorem", "construction_width", "rows_count")),
    Operation("matrix", _lib.matrix, "exact measures of a small problem (cheap; also an engine check)",
              wraps=_lib.measure_problem, required=_lib.MATRIX_REQUIRED, accepted=_lib.MATRIX_ACCEPTED,
              headline=("one_way_bits", "rank_rational", "fooling_set_size", "deterministic_cc")),
    Operation("selftest", selftest, "diagnostic: sleep or spin, draw from the seed (tests, benchmarks)",
              accepted=None, diagnostic=True, headline=("seconds", "mode", "draw"), aliases=("sleep",)),
):
    register_operation(_operation)


def get_operation(name: str) -> Operation:
    """The operation registered under ``name`` (or an alias).

    Raises
    ------
    UnknownNameError
        With the known names in the message (``verify``, ``witness``, ``reachable`` and ``construct`` are
        known once :mod:`reductions.operations` is imported).
    """
    key = str(name).strip().lower().replace("_", "-")
    key = _ALIASES.get(key, key)
    if key not in OPERATIONS:
        hint = "" if "verify" in OPERATIONS else " (import reductions.operations for verify, witness, reachable, construct)"
        raise UnknownNameError(f"unknown operation {name!r}; known: {', '.join(sorted(OPERATIONS))}{hint}")
    return OPERATIONS[key]


def list_operations() -> list[Operation]:
    return [OPERATIONS[k] for k in sorted(OPERATIONS)]


def run_operation(name: str, params: dict, seed: int) -> dict:
    """Run one point: the operation's result fields as plain JSON types (a non-dict becomes ``value``).

    The ``repeat`` axis (``repeats``) only tells points apart, through their seeds: it is not passed on.
    """
    params = {k: v for k, v in params.items() if k != "repeat"}
    result = get_operation(name).function(params, int(seed))
    if not isinstance(result, dict):
        result = {"value": result}
    return jsonable(result)
