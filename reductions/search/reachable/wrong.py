"""One input on which the protocol is wrong, found over the reachable states (INDEX-type problems).

The exact count (:func:`.analyses.index_correct_count`) says how many (x, y) the protocol gets
wrong; this finds one. Bob answers ``a = answers[c, y]`` for every x of final class c, so (x, y)
is wrong iff ``x_y != a``: we need an x of class c with ``x_y = 1 - a``. A backward pass over the
transition tables gives ``R_t (S_t, K)`` bool, "class q at level t has a completion into final
class c"; at the level t that reads bit y, class c holds an x with ``x_y = b`` iff some parent p
has ``R_(t+1)[next(p, b), c]``. A bit no position reads is free. The first such (c, y) (classes,
then y, in order) is completed into a concrete x by walking forward through the tables, keeping
to classes that still reach c.

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> from reductions.search.reachable.engine import explore
>>> from reductions.search.reachable.analyses import bob_table
>>> sim = prepare("index-lookup", "lstm", 8, "fixed:4:2", width=2, seed=0)
>>> reach = explore(sim)
>>> table = bob_table(sim, reach)
>>> x, y = first_wrong_input(reach, table.answers)
>>> wrong_example(sim, x, y)["protocol_answer"] != wrong_example(sim, x, y)["truth"]
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["first_wrong_input", "wrong_example"]


def wrong_example(sim, x, y) -> dict:
    """``(x, y)`` re-run through the protocol and the unsplit model: the ``wrong_example`` fields."""
    from ...simulate.batch import run_batch
    from ...simulate.setup import format_input

    res = run_batch(sim, np.asarray(x, dtype=np.uint8)[None, :], np.asarray([y]))
    return {"x": format_input(sim.problem, sim.n, x, "alice"), "y": format_input(sim.problem, sim.n, y, "bob"),
            "protocol_answer": bool(res.answer[0]), "model_answer": bool(res.model_answer[0]),
            "truth": bool(res.truth[0])}


def first_wrong_input(reach, answers: np.ndarray):
    """``(x (n,) uint8, y)`` with the protocol's ``answers[c, y] != x_y``, or None when every input
    is answered correctly. ``answers`` ``(K, n)``: Bob's answer per final class and y."""
    a = np.asarray(answers).astype(np.int64)  # (K, n)
    K, L, n = a.shape[0], len(reach.levels), reach.layout.n
    R = [None] * (L + 1)
    R[L] = np.eye(K, dtype=bool)  # (K, K)
    for t in range(L - 1, -1, -1):
        nxt = reach.levels[t].next_class  # (S_t, A)
        R[t] = np.logical_or.reduce([R[t + 1][nxt[:, j]] for j in range(nxt.shape[1])])
    holds = np.ones((2, K, n), dtype=bool)  # holds[b, c, y]: class c has an x with x_y = b
    for t, lv in enumerate(reach.levels):
        if lv.bit >= 0:
            for b in (0, 1):
                holds[b, :, lv.bit] = R[t + 1][lv.next_class[:, b]].any(axis=0)
    wrong = np.take_along_axis(holds, (1 - a)[None], axis=0)[0]  # (K, n): some x of c has x_y = 1 - a
    found = np.argwhere(wrong)
    if not len(found):
        return None
    c, y = (int(v) for v in found[0])
    want = 1 - int(a[c, y])
    choices, q = [], 0
    for t, lv in enumerate(reach.levels):
        options = range(lv.next_class.shape[1]) if lv.bit != y else [want]
        letter = next(j for j in options if R[t + 1][lv.next_class[q, j], c])
        choices.append(letter)
        q = int(lv.next_class[q, letter])
    x = reach.layout.inputs_from_choices(choices)
    if y in set(int(i) for i in reach.layout.unread):
        x[y] = want
    return x, y
