"""What the reachable states prove, exactly: Bob's side, faithfulness, correctness, collisions.

* :func:`bob_table`: Bob's continuation from every final class for every y (or a seeded sample
  when Bob's inputs are many): the protocol's answers from the decoded message, the unsplit
  model's from the representative input's own prefix state, and whether the two agree bit for
  bit; also whether each representative's unsplit prefix reaches its class's message.
* :func:`index_correct_count`: for INDEX-type problems (f(x, y) = x_y, checked on a sample), the
  exact number of (x, y) the protocol answers correctly, from the per-level transition tables: one
  backward pass of additions (completions per final class, and the signed sum of the bits read).
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
    public = np.nonzero((split.owners == PUBLIC) & (np.arange(split.length) < s))[0]
    bob_suffix, bob_early = _bob_tokens(sim, reps[0], ys, public)  # (Y, L - s), (Y, len(public))
    rows = np.repeat(np.arange(S), Y)  # (S * Y,) class of each row
    y_rows = np.tile(ys, (S,) + (1,) * (np.ndim(ys) - 1))
    suffix, early = np.tile(bob_suffix, (S, 1)), np.tile(bob_early, (S, 1))  # (S * Y, .)
    args = (suffix, early, public, rows)
    protocol = split._continue(reach.state, *args)  # from the decoded messages
    reference = split._continue(rep_state, *args)  # from the unsplit prefix states
    faithful, diff = compare_runs(reference, protocol)
    faithful = to_numpy(faithful)  # (S * Y,) bools to the host: the table is counted there
    answers = sim.reduction.decode(protocol.answers, y_rows).reshape(S, Y)
    model_answers = sim.reduction.decode(reference.answers, y_rows).reshape(S, Y)
    return BobTable(ys, exhaustive, answers, model_answers, faithful.reshape(S, Y) & match[:, None], match,
                    float(diff))


ENCODE_TOKENS = 1 << 22  # tokens encoded at once for Bob's side (about 32 MiB of int64)


def _bob_tokens(sim, x, ys, public):
    """The tokens Bob's side reads for every y (they do not depend on x: one x serves): the suffix
    from ``split_at`` on, and the public positions before it. Encoded ``ENCODE_TOKENS`` tokens at a
    time and cut at once, so the ``(Y, length)`` inputs (n^2 tokens for INDEX) are never all held."""
    s, length = sim.split.split_at, sim.split.length
    step = max(1, ENCODE_TOKENS // max(1, length))
    parts = []
    for i in range(0, len(ys), step):
        chunk = ys[i:i + step]
        tokens = sim.reduction.encode(np.repeat(x[None, :], len(chunk), axis=0), chunk, sim.n).tokens
        parts.append((tokens[:, s:].copy(), tokens[:, public]))  # a copy: a view would keep the chunk
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def is_index_problem(problem, n: int, seed: int = 0) -> bool:
    """Whether f(x, y) = x_y with y ranging over ``0..n-1`` (checked on 8 seeded random x, each
    against every y: one ``(n, n)`` broadcast view of x at a time, never a copy of n^2 bits)."""
    ys = np.asarray(problem.bob_inputs(n))
    if ys.ndim != 1 or not np.array_equal(ys, np.arange(n)):
        return False
    xs = np.random.default_rng([int(seed), 19]).integers(0, 2, size=(8, n), dtype=np.uint8)
    for x in xs:
        got = np.asarray(problem.evaluate(np.broadcast_to(x, (n, n)), ys)).reshape(n)
        if not np.array_equal(got.astype(np.uint8), x):
            return False
    return True


BIG_FROM = 56  # levels from the end at which the backward sums may outgrow int64 (see below)


def count_additions(reach) -> int:
    """Big-integer additions :func:`index_correct_count` makes: at most ``3 S_t K`` at each level
    where the sums outgrow int64 (the cost to budget before starting it)."""
    s, K = len(reach.levels), reach.keys.shape[0]
    return sum(3 * lv.next_class.size * K for t, lv in enumerate(reach.levels) if s - t >= BIG_FROM)


def index_correct_count(sim, reach, table: BobTable, answers: np.ndarray | None = None):
    """Exactly how many (x, y) get ``answers[c, y] == x_y`` (default: the protocol's answers), for
    an INDEX-type problem explored completely with every y in ``table``. ``answers`` may also be a
    list of ``(K, n)`` answer tables: then a list of counts, from one pass.

    correct(c, y) = (1 - a) |c| + w ones(c, y) with w = 2a - 1 = +-1, where ones(c, y) counts the
    inputs of class c with x_y = 1. The sum over (c, y) of the second term is one backward pass
    over the transition tables, with additions only (no product of two big numbers):

    * ``back_t (S_t, K)``: completions from class q after level t into each final class
      (``back_s`` = identity; ``back_(t-1)[p] = sum_j back_t[next(p, j)]``);
    * ``U_t[q] = back_t[q] . w[:, y_t]`` for the bit ``y_t`` level t reads;
    * ``Z_(t-1)[p] = sum_j Z_t[next(p, j)] + U_t[next(p, 1)]``: over the completions of p, the sum
      of ``w[final, y]`` over the bits y read after p and set to 1 (``Z_s = 0``).

    Then the sum is ``Z_0[start]`` times the inputs at the start (``2^(unread bits)``). Every row of
    ``back_t`` sums to the number of completions (the product of the later levels' letter counts),
    so ``U`` needs the sum over one sign only, the smaller side. Entries of
    ``back_t`` are at most ``2^(s-t)`` and of ``Z_t`` at most ``(s-t) 2^(s-t)`` in size: int64 below
    :data:`BIG_FROM` levels from the end, Python ints above. Time: about ``1.5 S K`` additions of
    numbers of ``s - t`` bits per level at most, O(S K n^2 / 64) word operations in all.
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
    signs = [w[:, :, j] for j in range(J)]
    first = [next(i for i in range(J) if np.array_equal(signs[i], signs[j])) for j in range(J)]
    distinct = sorted(set(first))  # tables that are equal (the model's and the protocol's, when faithful)
    w = w[:, :, distinct]  # (K, n, J')
    back = np.eye(K, dtype=np.int64)  # (S_t, K)
    z = np.zeros((K, len(distinct)), dtype=np.int64)  # (S_t, J')
    ways = 1  # completions from any class after level t: every row of back sums to it
    for t in range(s - 1, -1, -1):
        level = reach.levels[t]
        if s - t >= BIG_FROM and back.dtype != object:
            back, z = back.astype(object), z.astype(object)
        nxt = level.next_class  # (S_(t-1), A)
        new_back, new_z = back[nxt[:, 0]], z[nxt[:, 0]]
        for j in range(1, nxt.shape[1]):
            new_back, new_z = new_back + back[nxt[:, j]], new_z + z[nxt[:, j]]
        if level.bit >= 0:
            new_z = new_z + _signed_sums(back[nxt[:, 1]], w[:, level.bit, :], ways)  # (S_(t-1), J')
        back, z, ways = new_back, new_z, ways * nxt.shape[1]
    for j in range(J):
        totals[j] += int(z[0, distinct.index(first[j])]) * reach.unread_factor
    return [int(x) for x in totals] if many else int(totals[0])


def _signed_sums(rows: np.ndarray, signs: np.ndarray, ways: int) -> np.ndarray:
    """``rows (S, K) @ signs (K, J)`` for signs +-1 and rows that each sum to ``ways``, by additions
    only: ``2 plus - ways``, with ``plus`` the sum where the sign is +1 (or ``ways`` minus the sum
    where it is -1, whichever has fewer terms)."""
    if rows.dtype != object:
        return rows @ signs
    out = np.empty((rows.shape[0], signs.shape[1]), dtype=object)
    for j in range(signs.shape[1]):
        pos = signs[:, j] > 0
        if 2 * int(pos.sum()) <= len(pos):
            plus = rows[:, pos].sum(axis=1) if pos.any() else 0
        else:
            plus = ways - rows[:, ~pos].sum(axis=1)
        out[:, j] = 2 * plus - ways
    return out


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
