"""The sweep operations that run reductions and models (``commcomp sweep``; DESIGN §4).

Registered in :mod:`commcomp.sweep.operations` when this module is imported (the ``commcomp``
command does before any sweep), beside the library functions they wrap: each returns the JSON of the
matching single-run command, so a sweep row holds what ``commcomp verify ... --format json`` prints.
The parameters each accepts are its library function's keyword parameters
(:meth:`commcomp.sweep.operations.Operation.accepted_names`).

Examples
--------
>>> from commcomp.sweep.operations import get_operation
>>> get_operation("verify").wraps_name, "backend" in get_operation("reachable").accepted_names()
('reductions.simulate.verify', True)
"""

from __future__ import annotations

from commcomp.sweep.operations import Operation, register_operation

from .search.construction import minimal_width
from .search.reachable.api import reachable_analysis
from .search.witness import find_witness
from .simulate import verify as _verify

__all__ = ["verify", "witness", "reachable", "construct"]


def verify(params: dict, seed: int) -> dict:
    """``reductions.simulate.verify(**params, seed=seed)``: the ``verify`` JSON (``faithful`` and ``correct``
    are fractions of the instances)."""
    return _verify(**params, seed=seed)


def witness(params: dict, seed: int) -> dict:
    """``reductions.search.witness.find_witness(**params, seed=seed)``: the ``witness`` JSON."""
    return find_witness(**params, seed=seed)


def reachable(params: dict, seed: int) -> dict:
    """``reductions.search.reachable.api.reachable_analysis(**params, seed=seed)``: distinct messages per
    level, the complete witness search (flattened to ``witness_found``, ``witness_complete``),
    faithfulness and the exact correctness count over all inputs; ``complete``/``stopped`` say where the
    budget ended it."""
    out = dict(reachable_analysis(**params, seed=seed))
    w = out.get("witness") or {}
    out["witness_found"], out["witness_complete"] = w.get("found"), w.get("complete")
    return out


def construct(params: dict, seed: int) -> dict:
    """``reductions.search.construction.minimal_width(**params, seed=seed)``: the construction's minimal
    width (``min_width``) and fixed-point bits (``min_precision_bits``) at size ``n``, with the
    calculator's ``lower_bound_width`` beside them. Keywords: ``task, arch, n, precision, layers,
    max_width, instances, search_precision`` and the construction's own options (so any name)."""
    return minimal_width(**params, seed=seed)


for _operation in (
    Operation("verify", verify, "a reduction and a model checked over many or all instances", wraps=_verify,
              required=("task", "arch"), headline=("faithful", "correct", "bits_per_message", "lower_bound_bits")),
    Operation("witness", witness, "an input on which an undersized model must fail", wraps=find_witness,
              required=("task", "arch"), headline=("found", "bits_per_message", "lower_bound_bits", "tried")),
    Operation("reachable", reachable, "exact analysis over all inputs via the reachable states",
              wraps=reachable_analysis, required=("task", "arch"),
              headline=("complete", "distinct_messages", "message_bits", "witness_found", "seconds"),
              aliases=("reachable-states",)),
    Operation("construct", construct, "minimal width (and precision) at which a construction is correct",
              wraps=minimal_width, required=("task",), headline=("min_width", "min_precision_bits",
                                                                 "lower_bound_width")),
):
    register_operation(_operation)
