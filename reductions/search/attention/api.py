"""Witnesses for 1-layer Transformers from exact collisions of Alice's attention partial sums.

:func:`find_attention_collision` (and :func:`collision_of`, for a prepared simulation) builds the
zero-sum instance of the split (:mod:`.terms`: ``S(x) = base + x D`` over every query Bob may send),
asks the solvers for ternary ``δ`` with ``δ D = 0`` (:mod:`.sorting`, :mod:`.lattice`) and turns each
into inputs: ``x = 1, x' = 0`` where ``δ = 1``, the reverse where ``δ = -1``, and the bits where
``δ = 0`` shared (all zero, all one, then seeded random fillings) until a separating ``y`` exists.
**Nothing is reported that was not re-checked**: the real protocol runs on ``(x, y)`` and ``(x', y)``
(Alice's messages equal bit for bit) and the unsplit model too (outputs bit-identical, so its answers
agree, while ``f(x, y) != f(x', y)``: it is wrong on one of them). A candidate that fails is counted
in ``rejected`` and dropped.

``complete`` is true only when the search covered every input: the sorting solver's exhaustive pass
(``2^n`` sums within the budget) found a witness, or proved every message distinct (a one-round split,
where the stacked sums *are* the message). The meet-in-the-middle phases and the lattice never prove
anything when they find nothing, and say what they tried.

Examples
--------
>>> r = find_attention_collision("transformer", "string-equality", 100, "bfloat16", width=1, seed=0,
...                              method="sorting")
>>> r.found, r.complete, r.messages_equal, r.outputs_identical, r.truth_x != r.truth_x_prime
(True, False, True, True, True)
>>> r.method, int((r.x != r.x_prime).sum())       # two bits whose term differences are equal
('sorting', 2)
>>> s = find_attention_collision("transformer", "string-equality", 6, "float32", width=1, seed=0)
>>> s.found, s.complete, s.note.startswith("proved")
(False, True, True)
"""

from __future__ import annotations

import time

import numpy as np

from commcomp.errors import InvalidParameterError, UnsupportedSplitError
from commcomp.problems.separate import separating_y

from .lattice import lattice_available, lattice_search
from .outcome import DEFAULT_SUMS, AttentionCollision, _solve
from .terms import bob_query_tokens, queries_of_y, transformer_instance

__all__ = ["AttentionCollision", "find_attention_collision", "collision_of", "METHODS", "DEFAULT_SUMS",
           "applies"]

METHODS = ("auto", "sorting", "lattice")
MAX_CANDIDATES = 16        # solutions re-checked on the real protocol before giving up
FILLINGS = 4               # shared-bit fillings tried per solution for a separating y
MAX_STACKED_QUERIES = 4    # two rounds: stack every query Bob may send when there are at most this many
MAX_YS = 4                 # two rounds: Bob's inputs whose queries are searched one at a time


def _is_transformer_split(split) -> bool:
    from ...simulate.transformer import TransformerSplit

    return isinstance(split, TransformerSplit)


def applies(sim) -> bool:
    """Whether the engine runs this simulation: the exact 1-layer Transformer split, or the exact
    hybrid split (:mod:`.hybrid`: where its recurrent part forgets)."""
    from .hybrid import is_exact_hybrid

    return (_is_transformer_split(sim.split) and bool(sim.split.exact)) or is_exact_hybrid(sim)


def find_attention_collision(model, reduction, n: int, precision, *, method: str = "auto", budget=None,
                             seed: int = 0, width=None, heads=None, weights="random") -> AttentionCollision:
    """Two inputs x != x' on which a 1-layer Transformer's split sends the same message (module docstring).

    Parameters
    ----------
    model : str or model object
        ``"transformer"`` (random weights of ``width``, ``heads``, ``seed``) or a 1-layer model.
    reduction : str
        A task name (its default reduction) or ``"problem->task"``.
    method : {"auto", "sorting", "lattice"}
        ``auto``: the sorting phases up to pairs of rows, then the lattice (fpylll) when installed,
        else every sorting phase.
    budget : int, optional
        Most sums per sorting phase (default 2^21); the exhaustive pass runs when ``2^n`` fit.

    Raises
    ------
    UnsupportedSplitError
        For a split other than the exact 1-layer Transformer's.
    MissingDependencyError
        ``method="lattice"`` without fpylll.
    """
    from ...simulate.setup import prepare

    problem, task = (reduction.split("->", 1) if isinstance(reduction, str) and "->" in reduction
                     else (None, reduction))
    arch, obj = (model, None) if isinstance(model, str) else (None, model)
    sim = prepare(task, arch, n, precision, width=width, layers=1 if obj is None else None, heads=heads,
                  problem=problem, weights=weights, seed=seed, model=obj)
    return collision_of(sim, method=method, budget=budget, seed=seed)


def _first_witness(sim, searches, rng, y=None):
    """``(hit, search, candidates, rejected)``: the first candidate that passes the re-check
    (``rejected``: candidates the protocol or the model contradicted; a pair no y separates is not one)."""
    candidates, rejected = 0, 0
    for search in searches:
        for delta in search.vectors:
            candidates += 1
            if candidates > MAX_CANDIDATES * len(searches):
                break
            hit, disagreed = _confirmed(sim, delta, rng, y)
            if hit is not None:
                return hit, search, candidates, rejected
            rejected += int(disagreed)
    return None, None, candidates, rejected


def _instance_info(inst, sim) -> dict:
    return {"bits": int(inst.n), "coordinates": inst.d, "term_bits": inst.term_bits,
            "queries": len(inst.queries), "every_query": inst.strong, "queries_note": inst.query_note,
            "unread_bits": [int(i) for i in inst.unread], "rounds": int(sim.split.rounds)}


def collision_of(sim, *, method: str = "auto", budget=None, seed: int = 0, deadline=None) -> AttentionCollision:
    """:func:`find_attention_collision` for a prepared simulation.

    One round: one instance (every read position's sums). Two rounds: the sums of every query Bob
    may send stacked (a solution collides whatever y is) when there are at most
    ``MAX_STACKED_QUERIES``; else, or when that finds nothing, per query: for up to ``MAX_YS`` of
    Bob's inputs y (seeded), the instance of y's queries alone, whose solutions must be separated by
    that same y. ``deadline`` (a ``time.perf_counter()`` value): no lattice attempt and no further
    query starts after it.
    """
    start = time.perf_counter()
    if method not in METHODS:
        raise InvalidParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if not applies(sim):
        raise UnsupportedSplitError("the attention zero-sum engine runs the exact 1-layer Transformer or hybrid "
                                    "split (a precision set); this is "
                                    f"{getattr(sim.split, 'kind', '?')} split" + (
                                        " without a precision" if getattr(sim.split, "exact", None) is False
                                        else ""))  # an attention split run in float64
    from .hybrid import hybrid_collision, is_exact_hybrid

    if is_exact_hybrid(sim):
        return hybrid_collision(sim, method=method, budget=budget, seed=seed, deadline=deadline)
    budget = DEFAULT_SUMS if budget is None else int(budget)
    rng = np.random.default_rng([int(seed), 41])
    searches, candidates, rejected, info, hit = [], 0, 0, {}, None
    exhaustive = proved = False
    queries, _, _ = bob_query_tokens(sim)
    if sim.split.rounds == 1 or len(queries) <= MAX_STACKED_QUERIES:
        inst = transformer_instance(sim)
        info = _instance_info(inst, sim)
        searches = _solve(inst.differences, method, budget, seed, deadline=deadline)
        exhaustive = bool(searches[0].tried.get("exhaustive"))
        hit, by, candidates, rejected = _first_witness(sim, searches, rng)
        proved = exhaustive and searches[0].proved_none and sim.split.rounds == 1
    if hit is None and not proved and sim.split.rounds == 2:  # per query: y's own sums
        info["per_query"] = []
        for y in sim.problem.sample(sim.n, MAX_YS, np.random.default_rng([int(seed), 43]))[1]:
            if deadline is not None and time.perf_counter() > deadline:
                break
            inst = transformer_instance(sim, queries_of_y(sim, y))
            include = [int(y)] if np.ndim(y) == 0 and 0 <= int(y) < sim.n else []  # INDEX: bit y must move
            found = _solve(inst.differences, method, budget, seed, include, deadline)
            hit, by, c, r = _first_witness(sim, found, rng, y)
            if hit is None and method == "auto" and lattice_available() and found[-1].method != "lattice":
                found.append(lattice_search(inst.differences, seed=seed, include=include,
                                            deadline=deadline))  # y-separable ones
                hit, by, c2, r2 = _first_witness(sim, found[-1:], rng, y)
                c, r = c + c2, r + r2
            info["per_query"].append({"y": np.asarray(y).tolist(), "coordinates": inst.d,
                                      "solutions": sum(len(s.vectors) for s in found)})
            searches += found
            candidates, rejected = candidates + c, rejected + r
            if hit is not None:
                exhaustive = False
                break
    seconds = time.perf_counter() - start
    if hit is not None:
        x, x2, y, conf, msg_equal = hit
        note = (f"x and x' differ in {int((x != x2).sum())} bits whose attention terms cancel exactly "
                f"({by.method}: {by.note}); the protocol sends both the same {sim.bits_per_message}-bit "
                "message (re-run, bit for bit) and the unsplit model answers both the same, but f differs: "
                f"it is wrong on {conf['wrong_on']}")
        return AttentionCollision(True, exhaustive, by.method, x, x2, y, msg_equal, bool(conf["outputs_identical"]),
                                  conf, tuple(searches), candidates, rejected, info, note, seconds)
    if proved:
        note = (f"proved: all {1 << sim.n} inputs of Alice send distinct messages (every subset sum "
                "of her attention terms sorted), so no collision witness exists")
    elif candidates:
        note = (f"{candidates} exact collisions found, none turned into a witness (no separating y among those "
                f"tried; {rejected} contradicted by the protocol re-run); this proves nothing")
    else:
        note = "; ".join(dict.fromkeys(s.note for s in searches))
        if sim.split.rounds == 2:
            note += (" (two rounds: the stacked sums of every query, then the sums of "
                     f"{len(info.get('per_query', []))} of Bob's inputs' queries one at a time)")
    return AttentionCollision(False, proved, searches[-1].method, None, None, None, False, False, {},
                              tuple(searches), candidates, rejected, info, note, seconds)


def _fillings(rng, n: int):
    """The shared bits' values to try: all zero, all one, then seeded random ones."""
    yield np.zeros(n, np.uint8)
    yield np.ones(n, np.uint8)
    for _ in range(FILLINGS - 2):
        yield rng.integers(0, 2, size=n, dtype=np.uint8)


def _confirmed(sim, delta, rng, y_fixed=None):
    """``((x, x', y, confirmation, messages_equal), False)`` when ``delta`` gives a re-checked witness, else
    ``(None, disagreed)``: ``disagreed`` when the protocol or the model contradicted the collision.

    ``y_fixed``: the collision holds for this y's query only, so only this y may separate the pair.
    """
    from ..confirm import alice_messages, confirm_witness

    n, prob = sim.n, sim.problem
    delta = np.asarray(delta, dtype=np.int64)
    for fill in _fillings(rng, n):
        x = np.where(delta == 0, fill, delta == 1).astype(np.uint8)
        x2 = np.where(delta == 0, fill, delta == -1).astype(np.uint8)
        if y_fixed is None:
            y, _ = separating_y(prob, n, x, x2, seed=int(rng.integers(1 << 30)))
        else:
            f = prob.evaluate(np.stack([x, x2]), np.stack([np.asarray(y_fixed)] * 2))
            y = y_fixed if bool(f[0]) != bool(f[1]) else None
        if y is None:
            continue
        ys = np.stack([np.asarray(y), np.asarray(y)])
        msgs = alice_messages(sim, np.stack([x, x2]), ys, "plain")  # (2, bytes): the real protocol
        equal = bool(np.array_equal(msgs[0], msgs[1]))
        conf = confirm_witness(sim, x, x2, y)
        if (equal and conf["outputs_identical"] and conf["model_answer_x"] == conf["model_answer_x_prime"]
                and conf["truth_x"] != conf["truth_x_prime"]):
            return (x, x2, y, conf, equal), False
        return None, True  # the protocol disagrees with the terms: a defect to report, never a witness
    return None, False  # no y separates this pair
