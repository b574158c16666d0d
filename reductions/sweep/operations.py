"""What a sweep can run: a registry of operations, ``name -> function(params, seed) -> dict``.

Each operation calls one library function and returns the JSON fields of the matching single-run command
(DESIGN §4), so a sweep row holds exactly what ``commcomp verify ... --format json`` would print. The
library is imported inside the function, in the worker, so this registry imports nothing heavy, and an
operation whose library is not there yet says so (``commcomp sweep ops``) instead of failing at import.

=============  ================================================  ==================================================
operation      wraps                                             result fields
=============  ================================================  ==================================================
verify         ``reductions.simulate.verify``                    the ``verify`` JSON (faithful, correct, ...)
witness        ``reductions.search.witness.find_witness``               the ``witness`` JSON (found, x, x_prime, ...)
reachable      ``reductions.search.reachable.api.reachable_analysis``  distinct messages per level, witness, exact counts
construct      ``reductions.search.construction.minimal_width`` min_width, min_precision_bits, lower_bound_width
bounds         ``commcomp.bounds.compute_bounds``                ``rows`` (the calculator's rows) + headline fields
matrix         ``commcomp.matrix.measure_problem``               the ``matrix`` JSON (one_way_bits, rank, ...)
selftest       nothing (diagnostic)                              ``seconds, mode, draw``
=============  ================================================  ==================================================

``selftest`` is a diagnostic operation for tests and benchmarks of the sweep machinery itself: it sleeps
(``mode = "sleep"``) or burns CPU (``mode = "spin"``) for ``seconds``, draws one number from its seed,
raises when ``fail`` is true, and ends its worker process abruptly when ``crash`` is true. It accepts any
other parameter and ignores it, so it can stand in for any grid.

Examples
--------
>>> run_operation("selftest", {"seconds": 0, "n": 4}, seed=7)["draw"] == run_operation("selftest", {}, 7)["draw"]
True
>>> get_operation("verify").name
'verify'
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from commcomp.errors import InvalidParameterError, UnknownNameError

from . import library_ops as _lib
from .jsonable import jsonable
from .library_ops import OperationUnavailableError

__all__ = ["Operation", "OPERATIONS", "OperationUnavailableError", "get_operation", "list_operations",
           "run_operation", "jsonable"]


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
    wraps : str
        ``"module:attribute"`` of the library function it calls (checked by :meth:`availability`).
    required : tuple of str
        Parameters every point must have (checked before the sweep starts).
    accepted : tuple of str, callable returning one, or None
        Every parameter name it understands besides ``required``; None accepts any. An unknown name is a
        spec error, raised before anything runs.
    headline : tuple of str
        Result fields the summary table shows (all scalar fields when empty).
    diagnostic : bool
        True for operations that test the sweep machinery, not the science.
    """

    name: str
    function: Callable[[dict, int], dict]
    description: str
    wraps: str = ""
    required: tuple = ()
    accepted: tuple | Callable[[], tuple] | None = None
    headline: tuple = ()
    diagnostic: bool = False
    aliases: tuple = ()

    def availability(self) -> tuple[bool, str]:
        """``(True, "")`` when the wrapped library function imports, else ``(False, why)``."""
        if not self.wraps:
            return True, ""
        module, _, attr = self.wraps.partition(":")
        try:
            loaded = importlib.import_module(module)
        except ImportError as exc:
            return False, f"waiting for {module} ({exc})"
        for part in attr.split(".") if attr else []:
            if not hasattr(loaded, part):
                return False, f"waiting for {module}.{attr}"
            loaded = getattr(loaded, part)
        return True, ""

    def require_available(self) -> None:
        ok, why = self.availability()
        if not ok:
            raise OperationUnavailableError(f"operation {self.name!r} is not available yet: {why}")

    def check_names(self, names) -> None:
        """Raise when a required parameter is missing or a name is unknown to the operation."""
        from .spec import SweepSpecError

        names = set(names)
        missing = [r for r in self.required if r not in names]
        if missing:
            raise SweepSpecError(f"operation {self.name!r} needs parameter(s) {', '.join(missing)} "
                                 "(in [params], [axes], --param or --axis)")
        if self.accepted is not None:
            accepted = set(self.accepted() if callable(self.accepted) else self.accepted) | set(self.required)
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
OPERATIONS: dict[str, Operation] = {op.name: op for op in (
    Operation("verify", _lib.verify, "a reduction and a model checked over many or all instances",
              wraps=_lib.VERIFY, required=_lib.VERIFY_REQUIRED, accepted=_lib.VERIFY_ACCEPTED,
              headline=("faithful", "correct", "bits_per_message", "lower_bound_bits")),
    Operation("witness", _lib.witness, "an input on which an undersized model must fail",
              wraps=_lib.WITNESS, required=_lib.WITNESS_REQUIRED, accepted=_lib.WITNESS_ACCEPTED,
              headline=("found", "bits_per_message", "lower_bound_bits", "tried")),
    Operation("reachable", _lib.reachable, "exact analysis over all inputs via the reachable states",
              wraps=_lib.REACHABLE, required=_lib.REACHABLE_REQUIRED, accepted=_lib.REACHABLE_ACCEPTED,
              headline=("complete", "distinct_messages", "message_bits", "witness_found", "seconds"),
              aliases=("reachable-states",)),
    Operation("construct", _lib.construct, "minimal width (and precision) at which a construction is correct",
              wraps=_lib.CONSTRUCT, required=_lib.CONSTRUCT_REQUIRED, accepted=_lib.CONSTRUCT_ACCEPTED,
              headline=("min_width", "min_precision_bits", "lower_bound_width")),
    Operation("bounds", _lib.bounds, "the calculator's lower bounds and constructions",
              wraps=_lib.BOUNDS, required=_lib.BOUNDS_REQUIRED, accepted=_lib.BOUNDS_ACCEPTED,
              headline=("lower_bound_width", "lower_bound_theorem", "construction_width", "rows_count")),
    Operation("matrix", _lib.matrix, "exact measures of a small problem (cheap; also an engine check)",
              wraps=_lib.MATRIX, required=_lib.MATRIX_REQUIRED, accepted=_lib.MATRIX_ACCEPTED,
              headline=("one_way_bits", "rank_rational", "fooling_set_size", "deterministic_cc")),
    Operation("selftest", selftest, "diagnostic: sleep or spin, draw from the seed (tests, benchmarks)",
              diagnostic=True, headline=("seconds", "mode", "draw"), aliases=("sleep",)),
)}
_ALIASES = {alias: op.name for op in OPERATIONS.values() for alias in op.aliases}


def get_operation(name: str) -> Operation:
    """The operation registered under ``name`` (or an alias).

    Raises
    ------
    UnknownNameError
        With the known names in the message.
    """
    key = str(name).strip().lower().replace("_", "-")
    key = _ALIASES.get(key, key)
    if key not in OPERATIONS:
        raise UnknownNameError(f"unknown operation {name!r}; known: {', '.join(sorted(OPERATIONS))}")
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
