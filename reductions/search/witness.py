"""Witnesses: inputs on which an undersized model must fail, found by message collision.

The lower bound made concrete. If Alice's message has fewer bits than the problem's
communication complexity, two of her inputs x != x' send the same message; when some y has
f(x, y) != f(x', y), Bob sees the same transcript on (x, y) and (x', y) and answers both the
same, so the model is wrong on one of them. :func:`find_witness`

1. hashes Alice's messages (packed bits) over all of her inputs when there are at most
   ``budget`` of them, or over a seeded stream of random inputs until a birthday collision;
2. for a colliding pair, looks for a y that separates them (all of Bob's inputs when there are
   few, else unit vectors, x, x', their complements and random ones);
3. runs the unsplit model on (x, y) and (x', y), checks that it answers both the same, and says
   on which one it is wrong.

With two rounds (a 1-layer Transformer whose query Bob sends first) Alice's reply depends on y
too, so the collision is sought among her replies to one fixed y at a time.

When nothing is found, the result says how many inputs were tried, and that this proves nothing.

Examples
--------
>>> w = find_witness("index-lookup", "lstm", 24, "fixed:4:2", width=2, seed=0)
>>> w["found"], w["bits_per_message"], w["lower_bound_bits"]
(True, 16, 24)
>>> w["model_answer_x"] == w["model_answer_x_prime"], w["truth_x"] != w["truth_x_prime"]
(True, True)
"""

from __future__ import annotations

import time

import numpy as np

from commcomp.backend import is_numpy, namespace_of, to_numpy
from commcomp.errors import InvalidParameterError
from commcomp.limits import MAX_INSTANCES, check_int
from commcomp.problems import all_bit_strings
from commcomp.protocol import ALICE, run_protocol

from commcomp.problems.separate import rows_pairwise_distinct, separating_inputs
from ..simulate.batch import check_run_memory, encode_batch
from ..simulate.distinct import pack_words
from ..simulate.setup import prepare
from .confirm import alice_messages, confirm_witness
from .reachable.api import ReachableFallback, reachable_witness, try_reachable

__all__ = ["find_witness", "DEFAULT_BUDGET", "confirm_witness"]

DEFAULT_BUDGET = 1 << 20
WITNESS_METHODS = ("auto", "reachable-states", "prefix-tree", "enumerate", "sample", "sorting", "lattice")
_CHUNK = 4096
_ENUMERATE_Y = 1 << 16


def _separating_y(problem, n, x, x_prime, rng):
    ys = separating_inputs(problem, n, x, x_prime, rng)
    k = len(ys)
    fx = problem.evaluate(np.repeat(x[None, :], k, axis=0), ys)
    fx2 = problem.evaluate(np.repeat(x_prime[None, :], k, axis=0), ys)
    hits = np.nonzero(fx != fx2)[0]
    return ys[hits[0]] if hits.size else None


def _stream(n: int, budget: int, rng, enumerate_all: bool):
    """Chunks of Alice's inputs: all of them in order, or random ones up to ``budget``."""
    if enumerate_all:
        xs = all_bit_strings(n)
        for start in range(0, len(xs), _CHUNK * 4):
            yield xs[start:start + _CHUNK * 4]
        return
    done = 0
    while done < budget:
        size = min(_CHUNK, budget - done)
        yield rng.integers(0, 2, size=(size, n), dtype=np.uint8)
        done += size


def _collide(seen: dict, keys: np.ndarray, xs: np.ndarray):
    """Add packed messages ``keys`` of inputs ``xs`` to ``seen``; yield pairs with equal messages."""
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    for row in range(len(xs)):  # within the chunk: rows whose message an earlier row sent
        f = first[inverse[row]]
        if f != row and not np.array_equal(xs[f], xs[row]):
            yield xs[f], xs[row]
    for f in first:
        key = keys[f].tobytes()
        other = seen.get(key)
        if other is None:
            seen[key] = xs[f].copy()
        elif not np.array_equal(other, xs[f]):
            yield other, xs[f]


def find_witness(task, arch=None, n=8, precision="float32", *, width=None, layers=None, heads=None, problem=None,
                 weights="random", budget=None, seed=0, cot=False, model=None, progress=None,
                 method="auto", max_states=None, max_bytes=None, backend=None, time_limit=None) -> dict:
    """Find x != x' and y on which the model, split as a protocol, must fail (module docstring).

    Returns the ``witness`` JSON of DESIGN §4 (``found, x, x_prime, y, model_answer_x, ...,
    tried``) and ``method`` (``enumerate`` or ``birthday``), ``message`` (the shared message in
    hex), ``wrong_on`` (``"x"`` or ``"x_prime"``), ``outputs_identical`` (the unsplit model's
    outputs on both, bit for bit), ``seconds`` and a ``note``.

    Parameters
    ----------
    budget : int, optional
        Most of Alice's inputs hashed (default 2^20); all are enumerated when there are no more.
    progress : callable ``(tried, budget)``, optional
    backend : str, optional
        The array library to run on (as for :func:`~reductions.simulate.verify`).
    method : {"auto", "reachable-states", "prefix-tree", "enumerate", "sample", "sorting", "lattice"}
        ``auto`` (default) explores the reachable states of a one-way recurrent split
        (:mod:`reductions.search.reachable`: complete at any n, ``complete: true``) and falls back, saying
        why in ``fallback``, to hashing every input (``prefix-tree`` for recurrent models,
        ``enumerate`` otherwise) when there are at most ``budget``, else (an exact 1-layer Transformer
        split) to exact collisions of the attention sums (:mod:`reductions.search.attention`: sorting,
        then the lattice), else a seeded sample. ``sorting`` and ``lattice`` run only that engine
        (``budget`` then counts the sums sorted per phase).
    max_states, max_bytes : int, optional
        The reachable-states budget (:func:`reductions.search.reachable.engine.explore`).
    time_limit : float, optional
        Seconds: past them no phase goes on (the reachable exploration stops between positions, no
        lattice attempt or sampled chunk starts), and the result is the honest partial one:
        ``stopped_at_time_limit: true``, ``complete: false``, ``found: false`` unless a witness was
        already confirmed, and a note that it proves nothing.
    """
    start = time.perf_counter()
    if method not in WITNESS_METHODS:
        raise InvalidParameterError(f"method must be one of {', '.join(WITNESS_METHODS)}, got {method!r}")
    if time_limit is not None and not (isinstance(time_limit, (int, float)) and 0 < time_limit < float("inf")):
        raise InvalidParameterError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    deadline = None if time_limit is None else start + float(time_limit)

    def past_deadline() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    def reach_progress(level, levels):  # the exploration's step: stop it at the deadline
        if past_deadline():
            raise ReachableFallback(f"the time limit of {time_limit:g} s came at position {level} of {levels} "
                                    "of the reachable-states exploration")
        if progress is not None:
            progress(level, levels)

    sim = prepare(task, arch, n, precision, width=width, layers=layers, heads=heads, problem=problem,
                  weights=weights, seed=seed, cot=cot, model=model, backend=backend)
    budget = check_int("budget", DEFAULT_BUDGET if budget is None else budget, 2, MAX_INSTANCES)
    check_run_memory("witness", sim.reduction, sim.n, kept=budget, kept_name="budget",
                     message_bits=sim.bits_per_message)
    out, fallback = try_reachable(reachable_witness, sim, method, max_states=max_states, max_bytes=max_bytes,
                                  budget=budget, progress=reach_progress)
    if out is not None:
        out["seconds"] = time.perf_counter() - start
        return _timed_out(out, time_limit, False)
    prob, n = sim.problem, sim.n
    rng = np.random.default_rng([int(seed), 3])
    enumerate_all = n <= 24 and (1 << n) <= budget and method not in ("sample", "sorting", "lattice")
    if method in ("sorting", "lattice") or (method == "auto" and not enumerate_all and _zero_sum_applies(sim)
                                            and not past_deadline()):
        out, why = _zero_sum(sim, method, budget if method != "auto" else None, seed, fallback, deadline)
        if out is not None:
            out["seconds"] = time.perf_counter() - start
            return _timed_out(out, time_limit, past_deadline() and not out["found"])
        fallback = why
    if method in ("prefix-tree", "enumerate") and not enumerate_all:
        raise InvalidParameterError(f"method {method} hashes all 2^{n} inputs of Alice, more than the budget "
                                    f"{budget} (or n > 24)")
    runner = "prefix-tree" if (enumerate_all and "prefix-tree" in sim.split.runners) else "plain"
    two_round = sim.split.rounds >= 2  # a hybrid (3 messages): Alice's sums answer the query of y
    y_cycle = prob.bob_inputs(n) if prob.bob_input_bits(n) <= 16 else None
    # two rounds: every x against every y when they fit in the budget (a complete search), else one y a chunk
    every_y = two_round and enumerate_all and y_cycle is not None and (1 << n) * len(y_cycle) <= budget
    seen: dict = {}
    tried, found, chunk_no, stopped = 0, None, 0, False
    for xs in _stream(n, budget, rng, enumerate_all):
        if past_deadline():
            stopped = True
            break
        if two_round:  # Alice's reply depends on Bob's query: collide among replies to one y
            if every_y:
                y_list = list(y_cycle)
            elif y_cycle is not None:
                y_list = [y_cycle[chunk_no % len(y_cycle)]]
            else:
                y_list = [rng.integers(0, 2, size=n, dtype=np.uint8)]
        else:
            y_list = [None]
        chunk_no += 1
        for y_one in y_list:
            if two_round:
                ys = np.repeat(np.asarray(y_one)[None, ...], len(xs), axis=0).reshape((len(xs),) + np.shape(y_one))
                table = seen.setdefault(("y", np.asarray(y_one).tobytes()), {})
            else:
                ys = np.repeat(prob.bob_inputs(n)[:1], len(xs), axis=0) if y_cycle is not None else \
                    np.zeros_like(xs)
                table = seen
            keys = alice_messages(sim, xs, ys, runner)
            tried += len(xs)
            for a, b in _collide(table, keys, xs):
                if two_round:
                    y = ys[0]
                    if bool(prob.evaluate(a[None], y[None])[0]) != bool(prob.evaluate(b[None], y[None])[0]):
                        found = (a, b, y)
                        break
                else:
                    y = _separating_y(prob, n, a, b, rng)
                    if y is not None:
                        found = (a, b, y)
                        break
            if found is not None:
                break
        if progress is not None:
            progress(tried, budget)
        if found is not None:
            break
    out = {"task": sim.task.name, "problem": prob.name, "arch": sim.arch, "n": n,
           "precision": sim.precision.name, "width": sim.width, "layers": sim.layers, "heads": sim.heads,
           "weights": sim.weights, "seed": int(seed), "backend": sim.backend, "bits_per_message": sim.bits_per_message,
           "lower_bound_bits": sim.lower_bound_bits, "theorem": sim.theorem,
           "method": ("prefix-tree" if runner == "prefix-tree" else "enumerate") if enumerate_all else "sample",
           "search": "enumerate" if enumerate_all else "birthday", "budget": budget, "tried": tried,
           "found": found is not None, "complete": bool(not stopped and (every_y or enumerate_all and not two_round and (
               y_cycle is not None or rows_pairwise_distinct(prob)))), "fallback": fallback}
    if found is None:
        what = "all" if enumerate_all else "random"
        what = f"(x, y) pairs (every input of Alice's against each of Bob's {len(y_cycle)})" if every_y else (
            f"{what} inputs of Alice, each against one of Bob's queries (two rounds)" if two_round else
            f"{what} inputs of Alice")
        out.update({"x": None, "x_prime": None, "y": None, "model_answer_x": None, "model_answer_x_prime": None,
                    "truth_x": None, "truth_x_prime": None, "wrong_on": None,
                    "note": f"no witness among {tried} {what}" + (
                        ": proved: every input sends a distinct message or no y separates a colliding pair, "
                        "so no collision witness exists" if out["complete"] else
                        f", stopped at the time limit of {time_limit:g} s; this proves nothing" if stopped else
                        "; this proves nothing (the model may still be wrong somewhere, and a bigger budget "
                        "may find one)")})
    else:
        out.update(confirm_witness(sim, *found))
    out["seconds"] = time.perf_counter() - start
    return _timed_out(out, time_limit, stopped)


def _timed_out(out: dict, time_limit, stopped: bool) -> dict:
    """``out`` with the time limit it ran under and whether the limit stopped it (then never complete)."""
    if time_limit is not None:
        out["time_limit"] = float(time_limit)
        out["stopped_at_time_limit"] = bool(stopped)
        if stopped:
            out["complete"] = False
    return out


def _zero_sum_applies(sim) -> bool:
    from .attention import applies

    return applies(sim) and not sim.cot


def _zero_sum(sim, method: str, budget, seed: int, fallback, deadline=None):
    """The attention engine's witness JSON, or ``(None, why)`` when ``auto`` should go on sampling."""
    from .attention import collision_of

    if not _zero_sum_applies(sim):
        raise InvalidParameterError(f"method {method} runs on the exact 1-layer Transformer or hybrid split (a precision "
                                    f"set), not on this {sim.split.kind} split")
    res = collision_of(sim, method="auto" if method == "auto" else method, budget=budget, seed=seed,
                       deadline=deadline)
    if method == "auto" and not res.found and not res.complete:
        return None, f"zero-sum search of the attention sums: {res.note}"
    out = {"task": sim.task.name, "problem": sim.problem.name, "arch": sim.arch, "n": sim.n,
           "precision": sim.precision.name, "width": sim.width, "layers": sim.layers, "heads": sim.heads,
           "weights": sim.weights, "seed": int(seed), "backend": sim.backend,
           "bits_per_message": sim.bits_per_message, "lower_bound_bits": sim.lower_bound_bits,
           "theorem": sim.theorem, "budget": budget, "fallback": fallback}
    out.update(res.to_json())
    return out, None

