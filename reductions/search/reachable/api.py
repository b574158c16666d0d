"""The reachable-states engine behind ``verify --exhaustive``, ``witness`` and its own analysis.

* :func:`reachable_analysis`: everything the exploration proves, as JSON: distinct messages per
  level (the information the model keeps), the complete witness search, faithfulness over all
  reachable states, the exact correctness count (INDEX-type problems).
* :func:`reachable_verify` and :func:`reachable_witness`: the ``verify`` and ``witness`` JSON of
  DESIGN §4 with ``method: "reachable-states"``; they raise :class:`ReachableFallback` (with the
  reason) when the engine does not apply or its budget ends the exploration, and the callers then
  run today's runners and report the reason in ``fallback``.

Examples
--------
>>> out = reachable_analysis("index-lookup", "lstm", 1000, "fixed:4:2", width=2, seed=0)
>>> out["complete"], out["distinct_messages"], out["witness"]["found"], out["witness"]["complete"]
(True, 4, True, True)
>>> out["instances"] == 1000 * 2 ** 1000, out["faithful_count"] == out["instances"]
(True, True)
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

from commcomp.errors import CommcompError, InvalidParameterError, UnsupportedSplitError

from ...simulate.setup import prepare
from ..confirm import confirm_witness
from .analyses import (MAX_COUNT_ADDITIONS, bob_table, collision_pairs, count_additions, index_correct_count,
                       is_index_problem)
from .engine import DEFAULT_MAX_BYTES, DEFAULT_MAX_STATES, explore
from .wrong import first_wrong_input, wrong_example
from commcomp.problems.separate import rows_pairwise_distinct, separating_y

__all__ = ["ReachableFallback", "reachable_analysis", "reachable_verify", "reachable_witness", "explore_sim",
           "try_reachable"]

PROVED = "proved: every input sends a distinct message, so no collision witness exists"


class ReachableFallback(CommcompError):
    """The engine does not apply here, or its budget ended the exploration (the reason is the text)."""


def explore_sim(sim, max_states=None, max_bytes=None, progress=None):
    """:func:`~.engine.explore` that raises :class:`ReachableFallback` instead of stopping short."""
    if sim.split.partial_sums_message:
        raise ReachableFallback(f"a {sim.split.rounds}-round Transformer split: complete searches run on the "
                                "one-round split's partial sums (a two-round reply depends on Bob's query)"
                                if sim.split.rounds == 2 else "the partial sums are not exact (no precision)")
    if not sim.split.state_message:
        raise ReachableFallback(f"the engine runs one-way recurrent splits; this is a {sim.split.kind} split")
    if sim.cot:
        raise ReachableFallback("Bob's chain of thought is not analysed over reachable states")
    try:
        reach = explore(sim, max_states=max_states or DEFAULT_MAX_STATES,
                        max_bytes=max_bytes or DEFAULT_MAX_BYTES, progress=progress)
    except UnsupportedSplitError as exc:
        raise ReachableFallback(str(exc)) from None
    if not reach.complete:
        raise ReachableFallback(reach.stopped)
    return reach


def _header(sim) -> dict:
    return {"task": sim.task.name, "problem": sim.problem.name, "arch": sim.arch, "n": sim.n,
            "precision": sim.precision.name, "width": sim.width, "layers": sim.layers, "heads": sim.heads,
            "weights": sim.weights, "seed": sim.seed, "bits_per_message": sim.bits_per_message,
            "lower_bound_bits": sim.lower_bound_bits, "theorem": sim.theorem, "backend": sim.backend}


def _levels(reach) -> dict:
    sizes = reach.sizes
    return {"distinct_messages": sizes[-1], "distinct_messages_per_level": sizes,
            "message_bits": math.log2(sizes[-1]), "alice_positions": reach.layout.split_at,
            "unread_bits": [int(i) for i in reach.layout.unread], "merged_candidates": reach.merged_candidates,
            "roundtrip_failures": reach.roundtrip_failures, "seconds_explore": reach.seconds}


def _witness(sim, reach, seed: int) -> dict:
    """The complete witness search over the final classes (module docstring of .separate)."""
    out = {"method": "reachable-states", "fallback": None, "tried": reach.total_inputs, "complete": True,
           "rows_pairwise_distinct": rows_pairwise_distinct(sim.problem)}
    if reach.injective:
        out.update({"found": False, "proved": True, "x": None, "x_prime": None, "y": None,
                    "model_answer_x": None, "model_answer_x_prime": None, "truth_x": None,
                    "truth_x_prime": None, "wrong_on": None, "note": PROVED})
        return out
    for x, x_prime in collision_pairs(reach):
        y, how = separating_y(sim.problem, sim.n, x, x_prime, seed)
        if y is not None:
            out.update({"found": True, "proved": False, "separated_by": how})
            out.update(confirm_witness(sim, x, x_prime, y))
            return out
    complete = out["rows_pairwise_distinct"]  # with distinct rows every collision is separated
    out.update({"found": False, "proved": False, "complete": False, "x": None, "x_prime": None, "y": None,
                "model_answer_x": None, "model_answer_x_prime": None, "truth_x": None, "truth_x_prime": None,
                "wrong_on": None, "note": ("messages collide, but no y separates the colliding pairs kept" +
                         ("" if complete else " (this problem's rows need not be distinct)"))})
    return out


def reachable_witness(sim, *, max_states=None, max_bytes=None, budget=None, progress=None) -> dict:
    """The ``witness`` JSON from the reachable states (raises :class:`ReachableFallback`): of the
    one-way recurrent split, or of the one-round 1-layer Transformer split's exact partial sums.
    ``progress(level, levels)`` is called as the recurrent exploration goes (it may raise
    :class:`ReachableFallback` to stop it, as a time limit does)."""
    if sim.split.partial_sums_message and sim.split.rounds == 1 and sim.split.exact:
        return _transformer_witness(sim, max_states, budget)
    reach = explore_sim(sim, max_states, max_bytes, progress)
    out = _header(sim)
    out.update(_witness(sim, reach, sim.seed))
    out.update(_levels(reach))
    out["budget"] = budget
    return out


def _transformer_witness(sim, max_states, budget) -> dict:
    from .transformer import partial_sums_of

    try:
        sums = partial_sums_of(sim, max_states or DEFAULT_MAX_STATES)
    except UnsupportedSplitError as exc:
        raise ReachableFallback(str(exc)) from None
    if not sums["complete"]:
        raise ReachableFallback(sums["runs"][0]["stopped"])
    out = _header(sim)
    w = dict(sums["witness"])
    w.setdefault("proved", not w["found"] and w["complete"])
    for key in ("x", "x_prime", "y", "model_answer_x", "model_answer_x_prime", "truth_x", "truth_x_prime",
                "wrong_on"):
        w.setdefault(key, None)
    sizes = sums["runs"][0]["sizes"]
    out.update(w)
    out.update({"method": "reachable-states", "fallback": None, "tried": 2 ** sim.n, "budget": budget,
                "distinct_messages": sizes[-1], "distinct_messages_per_level": sizes,
                "message_bits": math.log2(sizes[-1]), "alice_positions": sums["alice_positions"],
                "sums_match_model": sums["sums_match_model"], "faithful": sums["faithful"]})
    return out


def _bob_and_counts(sim, reach):
    """The Bob table, the exact correct counts (protocol, model) or None, and why they are None."""
    table = bob_table(sim, reach, seed=sim.seed)
    if not table.exhaustive:
        return table, None, "Bob's inputs are too many to run from every reachable state"
    if not is_index_problem(sim.problem, sim.n, sim.seed):
        return table, None, f"{sim.problem.name} is not INDEX-type (f(x, y) = x_y)"
    cost = count_additions(reach)
    if cost > MAX_COUNT_ADDITIONS:
        return table, None, (f"the exact count would take {cost} big-integer additions (more than "
                             f"{MAX_COUNT_ADDITIONS}: {reach.keys.shape[0]} final classes over {len(reach.levels)} levels)")
    return table, tuple(index_correct_count(sim, reach, table, [table.answers, table.model_answers])), None


def reachable_verify(sim, *, max_states=None, max_bytes=None, progress=None) -> dict:
    """The ``verify --exhaustive`` JSON from the reachable states: exact counts over all
    ``2^n x |Y|`` instances (raises :class:`ReachableFallback` where they cannot be exact)."""
    start = time.perf_counter()
    if not is_index_problem(sim.problem, sim.n, sim.seed):
        raise ReachableFallback(f"exact correctness over all inputs is counted for INDEX-type problems "
                                f"(f(x, y) = x_y); {sim.problem.name} is not one")
    saturations0 = sim.precision.saturations.count
    reach = explore_sim(sim, max_states, max_bytes, progress)
    t1 = time.perf_counter()
    table, counts, why = _bob_and_counts(sim, reach)
    if counts is None:
        raise ReachableFallback(why)
    instances = reach.total_inputs * len(table.ys)
    per_class = [int(c) for c in reach.final_counts]
    faithful = sum(c * int(table.faithful[k].sum()) for k, c in enumerate(per_class))
    out = _header(sim)
    out.update({"instances": instances, "exhaustive": True, "method": "reachable-states", "fallback": None,
                "faithful": faithful / instances, "faithful_count": faithful, "exact": True,
                "max_abs_difference": table.max_abs_difference, "correct": counts[0] / instances,
                "correct_count": counts[0], "correct_fraction": str(Fraction(counts[0], instances)),
                "model_correct_count": counts[1], "protocol_rounds": sim.split.rounds, "split_kind": sim.split.kind,
                "representatives_match": bool(table.representatives_match.all()),
                "saturations": sim.precision.saturations.count - saturations0,
                "seconds_protocol": t1 - start, "seconds_reference": time.perf_counter() - t1})
    wrong = instances - counts[0]
    found = first_wrong_input(reach, table.answers) if wrong else None
    out.update({"wrong_count": wrong, "wrong_example": None if found is None else wrong_example(sim, *found)})
    out.update(_levels(reach))
    out["seconds"] = time.perf_counter() - start
    return out


def reachable_analysis(task, arch=None, n=8, precision="float32", *, width=None, layers=1, heads=1,
                       problem=None, weights="random", seed=0, model=None, max_states=None,
                       max_bytes=None, progress=None, backend=None) -> dict:
    """Everything the reachable states prove for one model and reduction (module docstring).

    Fields: the ``verify`` header, ``complete``/``stopped`` (the budget), the per-level counts
    (``distinct_messages_per_level``, ``message_bits`` = log2 of the final count, against
    ``bits_per_message`` and ``lower_bound_bits``), ``witness`` (the ``witness`` JSON), and, when
    the exploration is complete, ``faithful_states`` (every reachable state's codec round trip,
    representatives and Bob's continuation for every y, or a sample), ``instances``,
    ``faithful_count``, ``correct_count``/``correct_fraction`` (INDEX-type problems).

    For a 1-layer Transformer split the fields are those of
    :func:`~.transformer.reachable_partial_sums` (per query explored: ``runs``).

    ``backend`` (:func:`commcomp.backend.namespace`'s names; default ``$COMMCOMP_BACKEND`` or NumPy)
    runs the steps, the message codec and Bob's side on that library's device; only each level's
    packed message keys, Bob's answers and what is printed come to the host (:mod:`.stepping`).

    Raises
    ------
    UnsupportedSplitError
        For a split the engine does not run (qsa's row unit, or x not one bit per position).
    """
    start = time.perf_counter()
    sim = prepare(task, arch, n, precision, width=width, layers=layers, heads=heads, problem=problem,
                  weights=weights, seed=seed, model=model, backend=backend)
    if sim.split.partial_sums_message:  # the 1-layer Transformer: Alice's exact partial sums
        from .transformer import partial_sums_of

        out = _header(sim)
        out.update(partial_sums_of(sim, max_states or DEFAULT_MAX_STATES))
        out.update({"method": "reachable-states", "seconds": time.perf_counter() - start})
        return out
    if not sim.split.state_message:
        raise UnsupportedSplitError(f"the reachable-states engine runs one-way recurrent and 1-layer "
                                    f"Transformer splits, not {sim.split.kind}")
    reach = explore(sim, max_states=max_states or DEFAULT_MAX_STATES, max_bytes=max_bytes or DEFAULT_MAX_BYTES,
                    progress=progress)
    out = _header(sim)
    out.update(_levels(reach))
    out.update({"method": "reachable-states", "complete": reach.complete, "stopped": reach.stopped})
    if not reach.complete:
        out["witness"] = {"found": False, "complete": False, "method": "reachable-states",
                          "note": f"not found: the exploration stopped ({reach.stopped})"}
        out["seconds"] = time.perf_counter() - start
        return out
    witness = _header(sim)
    witness.update(_witness(sim, reach, seed))
    out["witness"] = witness
    table, counts, why = _bob_and_counts(sim, reach)
    per_class = [int(c) for c in reach.final_counts]
    instances = reach.total_inputs * len(table.ys)
    out.update({
        "bob_inputs_tried": len(table.ys), "bob_inputs_all": table.exhaustive,
        "faithful_states": bool(table.faithful.all() and reach.roundtrip_failures == 0),
        "representatives_match": bool(table.representatives_match.all()),
        "instances": instances if table.exhaustive else None,
        "faithful_count": sum(c * int(table.faithful[k].sum()) for k, c in enumerate(per_class)),
        "correct_count": None if counts is None else counts[0],
        "correct_fraction": None if counts is None else str(Fraction(counts[0], instances)),
        "model_correct_count": None if counts is None else counts[1], "correct_count_missing": why,
        "class_sizes": per_class if len(per_class) <= 64 else None,
    })
    out["seconds"] = time.perf_counter() - start
    return out


def try_reachable(run, sim, method: str, **kwargs):
    """``run(sim, **kwargs)`` (:func:`reachable_verify` or :func:`reachable_witness`) where ``method``
    asks for it: ``(result, None)`` when it ran, ``(None, reason)`` when it does not apply here
    (``method="auto"``: the caller falls back and reports the reason), ``(None, None)`` when
    ``method`` names another runner. ``method="reachable-states"`` that cannot run raises
    :class:`InvalidParameterError`."""
    if method not in ("auto", "reachable-states"):
        return None, None
    try:
        out = run(sim, **kwargs)
    except ReachableFallback as why:
        if method == "reachable-states":
            raise InvalidParameterError(f"reachable-states cannot run here: {why}") from None
        return None, str(why)
    out.setdefault("backend", sim.backend)
    return out, None
