"""Reachable partial sums of a 1-layer Transformer split (the second step of the engine).

In the 1-layer Transformer protocol (theorems.md §8.3) Alice's message is, per read position and
head, the exact integer sums ``sum_j w_j v_j`` and ``sum_j w_j`` over her positions j: each term
sits on the fixed-point grid and depends only on the token at j, on j and on the query, so a
partial sum over her positions is the sum of per-position integer terms. The set of messages she
can send is built position by position: level t adds, to every reachable sum vector, the term of
each token her position t allows, and equal integer vectors merge (they are the same message: the
code is a fixed-width two's complement of each integer).

One round (the query is public, fixed or constant) gives one exploration. With two rounds
(Bob sends his query first) Alice's reply depends on the query, so the exploration runs once per
query, over Bob's inputs (all when few, else a seeded sample), and a collision counts as a
witness only for a y whose query it is.

On a device namespace the terms and the sums stay on the model's device; merging groups equal
sum vectors on the host (``numpy.unique`` over rows: the Array API has no unique-rows with first
indices), so each level's candidate sums ``(S * A, width)`` int64, which are Alice's messages
themselves, come to the host once, explicitly, in :func:`_host_sums`.

Examples
--------
>>> out = reachable_partial_sums("string-equality", n=12, precision="fixed:4:2", width=1, seed=0)
>>> out["rounds"], out["complete"], out["distinct_messages"] < 2 ** 12, out["witness"]["found"]
(1, True, True, True)
>>> out["sums_match_model"], out["faithful"]
(True, True)
"""

from __future__ import annotations

import math
import time

import numpy as np

from commcomp.backend import count_true, is_numpy, namespace_of, to_numpy
from commcomp.errors import UnsupportedSplitError

from ...base import ALICE
from ...simulate.setup import prepare
from ..confirm import confirm_witness
from .letters import AliceLetters, probe_positions
from commcomp.problems.separate import separating_y

__all__ = ["reachable_partial_sums", "partial_sums_of", "explore_sums", "query_rows", "MAX_QUERIES"]

MAX_QUERIES = 32   # Bob's queries explored in a two-round split (all when there are no more)
_TERM_ROWS = 256   # (position, token) rows per call of model.partial


def _flat_sums(part, B: int):
    """A partial's numerators and denominators ``(B, width)`` int64, in the model's namespace."""
    xp = namespace_of(part.numerator)
    num, den = xp.reshape(part.numerator, (B, -1)), xp.reshape(part.denominator, (B, -1))
    return xp.astype(xp.concat([num, den], axis=1), xp.int64)


def _host_sums(cand) -> np.ndarray:
    """A level's candidate sums on the host (the one transfer of a level: module docstring)."""
    return to_numpy(cand)


def _terms(sim, positions, layout: AliceLetters, queries: dict):
    """Integer terms ``(k, 2, width)`` int64 in the model's namespace: position ``positions[t]``
    holding its bit-0 / bit-1 token, every read position's numerators and denominators concatenated."""
    model, N = sim.model, sim.split.length
    k = len(positions)
    rows = np.repeat(np.arange(k), 2)  # (2k,) position index of each row
    toks = layout.tokens.reshape(-1)  # (2k,)
    parts = []
    for o, q in queries.items():
        chunks = []
        for a in range(0, 2 * k, _TERM_ROWS):
            r = slice(a, min(a + _TERM_ROWS, 2 * k))
            B = r.stop - r.start
            tokens = np.zeros((B, N), dtype=np.int64)
            tokens[np.arange(B), positions[rows[r]]] = toks[r]
            mask = np.zeros((B, N), dtype=bool)
            mask[np.arange(B), positions[rows[r]]] = True
            part = model.partial(tokens, mask, query=query_rows(q, B), output_position=o)
            chunks.append(_flat_sums(part, B))
        parts.append(namespace_of(*chunks).concat(chunks, axis=0))
    xp = namespace_of(*parts)
    return xp.reshape(xp.concat(parts, axis=1), (k, 2, -1))


def explore_sums(terms, layout: AliceLetters, max_states: int):
    """Level by level: ``(sizes, final sums (S, width) int64 in the terms' namespace,
    representatives' letters (S, k), merges, stopped)``; a merge is the pair of letter sequences of
    two inputs that reached equal sums. ``terms`` ``(k, 2, width)`` int64, of any namespace."""
    xp = namespace_of(terms)
    w = terms.shape[2]
    sums = xp.zeros((1, w), dtype=xp.int64, device=getattr(terms, "device", None))
    choices = np.zeros((1, 0), dtype=np.int64)
    sizes, merges, stopped = [1], [], None
    for t in range(terms.shape[0]):
        A = 1 if layout.bit_at[t] < 0 else 2
        cand = xp.reshape(sums[:, None, :] + terms[t, :A, :][None, :, :], (-1, w))  # (S * A, w)
        _, first, inverse = np.unique(_host_sums(cand), axis=0, return_index=True, return_inverse=True)
        inverse, C = inverse.reshape(-1), int(cand.shape[0])
        if len(first) > max_states:
            stopped = f"budget: level {t + 1} has {len(first)} distinct partial sums"
            break
        if len(first) < C and len(merges) < 16:  # the letters of both inputs of a merge
            joined = np.nonzero(first[inverse] != np.arange(C))[0][:16 - len(merges)]
            for j in joined:
                a, b = divmod(int(first[inverse[j]]), A), divmod(int(j), A)
                merges.append((list(choices[a[0]]) + [a[1]], list(choices[b[0]]) + [b[1]]))
        parent, letter = first // A, first % A
        choices = np.concatenate([choices[parent], letter[:, None]], axis=1)
        sums = cand[first] if is_numpy(cand) else xp.take(cand, xp.asarray(first), axis=0)
        sizes.append(len(first))
    return sizes, sums, choices, merges, stopped


def _queries(sim, y):
    tokens = sim.reduction.encode(np.zeros((1, sim.n), np.uint8), np.asarray(y)[None, ...], sim.n,
                                  xp=sim.model.xp).tokens  # on the model's namespace
    return {int(o): sim.model.query(tokens[:, int(o)], int(o)) for o in sim.split.read}  # (1, ...) each


def query_rows(q, B: int):
    """The query ``q`` ``(1, ...)`` repeated to ``(B, ...)``, in its own namespace."""
    if is_numpy(q):
        return np.repeat(q, B, axis=0)
    xp = namespace_of(q)
    return xp.take(q, xp.zeros((B,), dtype=xp.int64, device=getattr(q, "device", None)), axis=0)


def reachable_partial_sums(task, arch="transformer", n=8, precision="fixed:8:4", *, width=None, heads=1,
                           problem=None, weights="random", seed=0, model=None, max_states=1 << 15,
                           backend=None) -> dict:
    """What Alice's partial sums reach (module docstring): per query explored, the distinct messages
    per level, whether the representatives' sums equal the model's own ``partial`` over her positions
    (``sums_match_model``) and Bob's finish the unsplit forward pass (``faithful``, on every y or a
    sample), and a witness from the merges.

    Raises
    ------
    UnsupportedSplitError
        For a split other than the 1-layer Transformer's, or sums that are not exact integers.
    """
    start = time.perf_counter()
    sim = prepare(task, arch, n, precision, width=width, heads=heads, problem=problem, weights=weights,
                  seed=seed, model=model, backend=backend)
    out = partial_sums_of(sim, max_states)
    out["seconds"] = time.perf_counter() - start
    return out


def partial_sums_of(sim, max_states: int = 1 << 15) -> dict:
    """:func:`reachable_partial_sums` for a prepared simulation."""
    seed = sim.seed
    split = sim.split
    if not split.partial_sums_message or not split.exact:
        raise UnsupportedSplitError("partial sums are explored for the exact 1-layer Transformer split "
                                    "(a precision set)")
    positions = np.nonzero(split.owners == ALICE)[0]
    bit_at, table, unread = probe_positions(sim.reduction, sim.n, positions, seed)
    layout = AliceLetters(sim.n, len(positions), bit_at, table, unread)
    ys_all = sim.problem.bob_inputs(sim.n) if sim.problem.bob_input_bits(sim.n) <= 16 else None
    rng = np.random.default_rng([int(seed), 23])
    if split.rounds == 1:
        ys = sim.problem.sample(sim.n, 1, rng)[1][:1]
    elif ys_all is not None and len(ys_all) <= MAX_QUERIES:
        ys = ys_all
    else:
        ys = sim.problem.sample(sim.n, MAX_QUERIES, rng)[1]
    runs, witness, ok_sums, ok_bob = [], None, True, True
    for y in ys:
        terms = _terms(sim, positions, layout, _queries(sim, y))
        sizes, sums, choices, merges, stopped = explore_sums(terms, layout, max_states)
        runs.append({"y": y.tolist() if np.ndim(y) else int(y), "sizes": sizes, "complete": stopped is None,
                     "stopped": stopped, "merges": len(merges)})
        if stopped is not None:
            continue
        reps = np.stack([layout.inputs_from_choices(c) for c in choices])  # (S, n)
        ok_sums &= _sums_match(sim, reps, positions, y, sums)
        ok_bob &= _finish_matches(sim, reps, ys_all if split.rounds == 1 and ys_all is not None and
                                  len(ys_all) * len(reps) <= 1 << 16 else np.asarray([y]))
        if witness is None:
            witness = _witness(sim, layout, merges, None if split.rounds == 1 else y, unread)
    complete = all(r["complete"] for r in runs)
    final = [r["sizes"][-1] for r in runs]
    out = {"task": sim.task.name, "problem": sim.problem.name, "arch": sim.arch, "n": sim.n,
           "precision": sim.precision.name, "width": sim.width, "heads": sim.heads, "seed": int(seed),
           "rounds": split.rounds, "bits_per_message": sim.bits_per_message,
           "lower_bound_bits": sim.lower_bound_bits, "backend": sim.backend, "alice_positions": len(positions),
           "queries_explored": len(runs), "complete": complete, "runs": runs,
           "distinct_messages": max(final), "message_bits": math.log2(max(final)),
           "sums_match_model": bool(ok_sums), "faithful": bool(ok_bob),
           "witness": witness or {"found": False, "complete": False, "note": "no exploration finished"}}
    return out


def _sums_match(sim, reps, positions, y, sums) -> bool:
    """The representatives' sums, recomputed by the model's own ``partial`` over Alice's positions."""
    ys = np.repeat(np.asarray(y)[None, ...], len(reps), axis=0)
    tokens = sim.reduction.encode(reps, ys, sim.n, xp=sim.model.xp).tokens  # on the model's namespace
    parts = []
    for o, q in _queries(sim, y).items():
        part = sim.model.partial(tokens, positions, query=query_rows(q, len(reps)), output_position=o)
        parts.append(_flat_sums(part, len(reps)))
    xp = namespace_of(sums)
    got = xp.concat(parts, axis=1)
    return tuple(got.shape) == tuple(sums.shape) and bool(xp.all(got == sums))  # compared on the device


def _finish_matches(sim, reps, ys) -> bool:
    """The protocol over (representative, y) equals the unsplit model bit for bit."""
    from ...simulate.batch import run_batch

    x = np.repeat(reps, len(ys), axis=0)
    y = np.tile(ys, (len(reps),) + (1,) * (np.ndim(ys) - 1))
    faithful = run_batch(sim, x, y).faithful
    return count_true(faithful) == int(faithful.shape[0])


def _witness(sim, layout, merges, y, unread) -> dict:
    """A witness from the first merges (one round: any separating y; two rounds: this query's y)."""
    pairs = []
    for i in unread:
        x2 = np.zeros(sim.n, np.uint8)
        x2[i] = 1
        pairs.append((np.zeros(sim.n, np.uint8), x2))
    pairs += [(layout.inputs_from_choices(a), layout.inputs_from_choices(b)) for a, b in merges]
    for x, x2 in pairs:
        if y is None:
            sep, _ = separating_y(sim.problem, sim.n, x, x2)
        else:
            f = sim.problem.evaluate(np.stack([x, x2]), np.stack([y, y]))
            sep = y if bool(f[0]) != bool(f[1]) else None
        if sep is not None:
            out = {"found": True, "complete": y is None}
            out.update(confirm_witness(sim, x, x2, sep))
            return out
    proved = not pairs and y is None
    return {"found": False, "complete": proved,
            "note": ("proved: every input sends a distinct message, so no collision witness exists" if proved
                     else "no collision of this query's replies is separated by its y")}
