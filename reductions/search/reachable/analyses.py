"""What the reachable states prove, exactly: Bob's side, faithfulness, correctness, collisions.

* :func:`bob_table`: Bob's continuation from every final class for every y (or a seeded sample
  when Bob's inputs are many): the protocol's answers from the decoded message, the unsplit
  model's from the representative input's own prefix state, and whether the two agree bit for
  bit; also whether each representative's unsplit prefix reaches its class's message.
* :func:`index_correct_count`: for INDEX-type problems (f(x, y) = x_y, checked on a sample), the
  exact number of (x, y) the protocol answers correctly, from the per-level transition tables: a
  backward pass counts, for every class and coordinate, the inputs of the class with a 1 there.
* :func:`collision_pairs`: pairs x != x' whose final messages are equal (unread bits first, then
  the merges the engine kept).

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> from reductions.search.reachable.engine import explore
>>> sim = prepare("index-lookup", "lstm", 8, "fixed:4:2", width=2, seed=0)
>>> reach = explore(sim)
>>> table = bob_table(sim, reach)
>>> table.exhaustive, bool(table.faithful.all()), table.answers.shape
(True, True, (4, 8))
>>> 0 <= index_correct_count(sim, reach, table) <= 8 * 2 ** 8
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.backend import to_numpy

from ...base import PUBLIC
from ...simulate.outputs import compare_runs
from .stepping import canonical, run_rows

__all__ = ["BobTable", "bob_table", "index_correct_count", "count_additions", "is_index_problem",
           "collision_pairs", "DEFAULT_BOB_ROWS", "DEFAULT_BOB_SAMPLE", "MAX_COUNT_ADDITIONS"]

DEFAULT_BOB_ROWS = 1 << 22     # (class, y) rows x suffix positions run at most
DEFAULT_BOB_SAMPLE = 256       # y's tried per class when all of them do not fit
MAX_COUNT_ADDITIONS = 1 << 28  # big-integer additions the exact count may take (about a minute here)


@dataclass(frozen=True, eq=False)
class BobTable:
    """Bob's side over the final classes.

    Attributes
    ----------
    ys : Bob's inputs tried (all of them when ``exhaustive``)
    exhaustive : bool
    answers, model_answers : ``(S, Y)`` bool: decoded from the protocol / from the unsplit model
    faithful : ``(S, Y)`` bool: Bob's output equals the unsplit continuation bit for bit
    representatives_match : ``(S,)`` bool: the representative's unsplit prefix sends the class's message
    max_abs_difference : float
    """

    ys: np.ndarray
    exhaustive: bool
    answers: np.ndarray
    model_answers: np.ndarray
    faithful: np.ndarray
    representatives_match: np.ndarray
    max_abs_difference: float


def _bob_inputs(problem, n: int, S: int, suffix: int, max_rows: int, sample: int, seed: int):
    if problem.bob_input_bits(n) <= 20:
        ys = problem.bob_inputs(n)
        if S * len(ys) * max(1, suffix) <= max_rows:
            return ys, True
    rng = np.random.default_rng([int(seed), 17])
    k = max(1, min(sample, max_rows // max(1, S * max(1, suffix))))
    return problem.sample(n, k, rng)[1], False


def bob_table(sim, reach, *, max_rows: int = DEFAULT_BOB_ROWS, sample: int = DEFAULT_BOB_SAMPLE,
              seed: int = 0) -> BobTable:
    """Run Bob's side from every final class (module docstring)."""
    model, split, layout, n = sim.model, sim.split, reach.layout, sim.n
    s = split.split_at
    reps = reach.representatives()  # (S, n)
    S = len(reps)
    rep_state = run_rows(model, layout.prefix_tokens(reps))  # the unsplit model's own prefix pass
    rep_keys, _ = canonical(model, rep_state)
    match = np.all(rep_keys == reach.keys, axis=1)
    ys, exhaustive = _bob_inputs(sim.problem, n, S, split.length - s, max_rows, sample, seed)
    Y = len(ys)
    tokens = sim.reduction.encode(np.repeat(reps[:1], Y, axis=0), ys, n).tokens  # Bob's part is x-free
    rows = np.repeat(np.arange(S), Y)  # (S * Y,) class of each row
    y_rows = np.tile(ys, (S,) + (1,) * (np.ndim(ys) - 1))
    public = np.nonzero((split.owners == PUBLIC) & (np.arange(split.length) < s))[0]
    suffix, early = np.tile(tokens[:, s:], (S, 1)), np.tile(tokens[:, public], (S, 1))  # (S * Y, .)
    args = (suffix, early, public, rows)
    protocol = split._continue(reach.state, *args)  # from the decoded messages
    reference = split._continue(rep_state, *args)  # from the unsplit prefix states
    faithful, diff = compare_runs(reference, protocol)
    faithful = to_numpy(faithful)  # (S * Y,) bools to the host: the table is counted there
    answers = sim.reduction.decode(protocol.answers, y_rows).reshape(S, Y)
    model_answers = sim.reduction.decode(reference.answers, y_rows).reshape(S, Y)
    return BobTable(ys, exhaustive, answers, model_answers, faithful.reshape(S, Y) & match[:, None], match,
                    float(diff))


def is_index_problem(problem, n: int, seed: int = 0) -> bool:
    """Whether f(x, y) = x_y with y ranging over ``0..n-1`` (checked on a seeded sample of x)."""
    ys = np.asarray(problem.bob_inputs(n))
    if ys.ndim != 1 or not np.array_equal(ys, np.arange(n)):
        return False
    x = np.random.default_rng([int(seed), 19]).integers(0, 2, size=(8, n), dtype=np.uint8)
    got = np.asarray(problem.evaluate(np.repeat(x, n, axis=0), np.tile(ys, 8))).reshape(8, n)
    return bool(np.array_equal(got.astype(np.uint8), x))


def _as_exact(a: np.ndarray, big: bool) -> np.ndarray:
    return a.astype(object) if big and a.dtype != object else a


def count_additions(reach) -> int:
    """Big-integer additions :func:`index_correct_count` makes: ``sum_t S_(t-1) A_t K`` over the levels
    where the counts outgrow int64 (the cost to budget before starting it)."""
    s, K = len(reach.levels), reach.keys.shape[0]
    return sum(lv.next_class.size * K for t, lv in enumerate(reach.levels) if s - t >= 62)


def index_correct_count(sim, reach, table: BobTable, answers: np.ndarray | None = None):
    """Exactly how many (x, y) get ``answers[c, y] == x_y`` (default: the protocol's answers), for
    an INDEX-type problem explored completely with every y in ``table``. ``answers`` may also be a
    list of ``(K, n)`` answer tables: then a list of counts, from one pass.

    correct(c, y) = (1 - a) |c| + (2a - 1) ones(c, y), where ones(c, y) counts the inputs of class
    c with x_y = 1. For the bit read at level t, ones(., y) = sum_p fwd_t(p) back_t(next(p, 1), .):
    the inputs reaching parent p times the completions from p's 1-successor into each final class.
    ``back`` runs from the last level to the first (int64 while it fits, then Python ints).
    """
    if not (reach.complete and table.exhaustive):
        raise ValueError("an exact count needs a complete exploration and every y")
    many = isinstance(answers, list)
    tables = answers if many else [table.answers if answers is None else answers]
    a = np.stack([np.asarray(t, dtype=np.int64) for t in tables], axis=2)  # (K, n, J)
    counts = reach.final_counts
    K, s, J = len(counts), len(reach.levels), a.shape[2]
    w = 2 * a - 1  # (K, n, J)
    totals = [sum(int(c) * int((a[k, :, j] == 0).sum()) for k, c in enumerate(counts)) for j in range(J)]
    for i in reach.layout.unread:  # half of each class has x_i = 1
        for j in range(J):
            totals[j] += sum(int(w[k, i, j]) * (int(c) // 2) for k, c in enumerate(counts))
    back = np.eye(K, dtype=np.int64)  # (S_t, K) completions from class q at level t into each final class
    for t in range(s - 1, -1, -1):
        level = reach.levels[t]
        # every completion ends in one final class, so a row of back sums to at most 2^(s - 1 - t):
        # its entries, its +-1 weighted sums and the next level's rows (2^(s - t)) fit int64 below 62
        big = s - t >= 62
        back = _as_exact(back, big)
        if level.bit >= 0:
            v = back[level.next_class[:, 1]] @ _as_exact(w[:, level.bit, :], big)  # (S_prev, J)
            fwd = reach.levels[t - 1].counts if t else np.array([reach.unread_factor], dtype=object)
            contrib = fwd.astype(object) @ v.astype(object)  # (J,)
            for j in range(J):
                totals[j] += int(contrib[j])
        nxt = level.next_class
        back = back[nxt[:, 0]] if nxt.shape[1] == 1 else back[nxt[:, 0]] + back[nxt[:, 1]]
    return [int(x) for x in totals] if many else int(totals[0])


def collision_pairs(reach):
    """Pairs ``(x, x')`` of different inputs whose final messages are equal: flipping a bit no
    position reads, then the merges the engine kept (in the order found)."""
    n = reach.layout.n
    for i in reach.layout.unread:
        x, x2 = np.zeros(n, np.uint8), np.zeros(n, np.uint8)
        x2[i] = 1
        yield x, x2
    for c in reach.collisions:
        yield reach.collision_inputs(c)
