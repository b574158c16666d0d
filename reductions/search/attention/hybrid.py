"""Collisions of the hybrid's messages: the attention layer's zero-sum problem where its recurrent part forgets.

The hybrid split (:mod:`reductions.simulate.hybrid`) sends three messages: Alice's recurrent state at
the boundary ``s``, Bob's query (a function of that state and of his suffix), and Alice's exact
attention sums for that query over her positions ``0..s-1``, whose keys and values are functions of
the hidden rows there, that is of her whole prefix. Two inputs x, x' collide for Bob's y exactly
when the states are equal bit for bit and the sums for the query of y are equal.

**Where the recurrence forgets, the sums are linear in x.** Fix a filling ``f`` of Alice's bits and
Bob's ``y0``. Flip one bit i of ``f``: the tokens first change at position ``a_i``, the stack's
carried state (every layer's arrays) differs from the unflipped run's from ``a_i`` on, and, at a
precision, a contracting or saturating recurrence rounds the difference away: at some step
``m_i < s`` the state is again equal bit for bit (measured here by running the stack, not assumed;
bits never forgotten before ``s``, or later than ``MAX_WINDOW`` steps, are left out). Then the
hidden rows differ only in ``[a_i, m_i]`` and the boundary state is the unflipped one. For bits
whose windows are disjoint (``a_j > m_i``), the state before ``a_j`` is the unflipped one whatever
was flipped earlier, so each flip changes exactly its own window's rows, as alone. Hence for ``z``
supported on such bits, ``x = f XOR z``:

    state(x) = state(f),   S_q(x) = S_q(f) + sum_i z_i D_i,   D_i = S_q(f XOR e_i) - S_q(f)

exactly (integer sums on the grid), for every query q that does not depend on z. Bob's query is a
function of the (unchanged) state and of y; the bits used are also those whose flip in ``y0``
leaves the hidden rows at every read position equal (Bob's suffix forgets them too), so ``q(y) =
q(y0)`` for every y that differs from ``y0`` on them. The collision problem is then the zero-sum
problem of :mod:`.zerosum` over the rows ``D_i``: ``δ = z - z'`` ternary with ``δ D = 0``, solved by
:mod:`.sorting` and :mod:`.lattice`; x, x' get ``z = max(δ, 0)``, ``z' = max(-δ, 0)`` and y is
a separating input (the problem's own rule, or x or x' themselves).

Nothing of the above is trusted: each witness is re-checked on the real protocol (Alice's three
messages equal bit for bit on (x, y) and (x', y)) and on the unsplit hybrid (outputs bit-identical,
one answer wrong). When Alice's inputs and Bob's are few (``4^n`` within the budget) the search is
exhaustive instead: every (x, y) through the real protocol, messages sorted; only that pass may
be ``complete`` (a witness exists iff some y sees two equal messages with different answers).

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> sim = prepare("string-equality", "hybrid", 200, "fixed:8:4", width=2, seed=0)   # Mamba + attention
>>> r = hybrid_collision(sim, method="sorting", seed=0)
>>> r.found, r.complete, r.messages_equal, r.outputs_identical, r.truth_x != r.truth_x_prime
(True, False, True, True, True)
>>> r.instance["templates"][0]["rows"], r.instance["templates"][0]["longest_window"]   # bits used, steps
(50, 4)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from commcomp.backend import to_numpy
from commcomp.errors import UnsupportedSplitError

from .outcome import DEFAULT_SUMS, AttentionCollision, _solve
from .zerosum import ZeroSumSearch

__all__ = ["HybridInstance", "hybrid_instance", "hybrid_collision", "is_exact_hybrid", "MAX_WINDOW"]

MAX_WINDOW = 64        # steps within which a flipped bit must be forgotten (bit for bit) to be used
TEMPLATES = 3          # (filling, y0) pairs tried: all zero, all one, then a seeded random one
EXHAUSTIVE_PAIRS = 1 << 16   # the exhaustive pass: every (x, y) through the protocol when 4^n fit
MAX_CANDIDATES = 32    # solutions turned into inputs and re-checked per template


def is_exact_hybrid(sim) -> bool:
    from ...simulate.hybrid import HybridSplit

    return isinstance(sim.split, HybridSplit) and bool(sim.split.exact)


@dataclass(frozen=True, eq=False)
class HybridInstance:
    """The linearised messages of one template (module docstring).

    Attributes
    ----------
    differences : ``(J, d)`` int64
        ``D_i`` of the bits used, every read position's sums (per head numerators then denominators).
    bits : ``(J,)`` int64
        The bit of x each row flips.
    windows : ``(J, 2)`` int64
        ``[a_i, m_i]``: the first position the flip changes and the step its state is forgotten.
    fill, y0 : arrays
        The template: Alice's filling and Bob's input whose query the sums answer.
    counts : dict
        How many bits were left out and why (``unforgotten``, ``bob_remembers``, ``overlapping``).
    """

    differences: np.ndarray
    bits: np.ndarray
    windows: np.ndarray
    fill: np.ndarray
    y0: np.ndarray
    counts: dict

    def to_json(self) -> dict:
        w = self.windows[:, 1] - self.windows[:, 0] + 1 if len(self.windows) else np.zeros(0, np.int64)
        return {"rows": int(len(self.bits)), "coordinates": int(self.differences.shape[1]),
                "longest_window": int(w.max()) if w.size else 0, "left_out": dict(self.counts)}


def _flat(part) -> np.ndarray:
    num, den = to_numpy(part.numerator), to_numpy(part.denominator)
    B = num.shape[0]
    return np.concatenate([num.reshape(B, -1), den.reshape(B, -1)], axis=1).astype(np.int64)  # (B, width)


def _state_equal(state, ref_row: int = 0) -> np.ndarray:
    """``(B,)``: rows whose carried state equals row ``ref_row``'s bit for bit (every array)."""
    eq = None
    for v in state.values():
        a = np.ascontiguousarray(to_numpy(v), dtype=np.float64)
        a = a.reshape(a.shape[0], -1).view(np.uint64)
        e = np.all(a == a[ref_row], axis=1)
        eq = e if eq is None else eq & e
    return eq


def _prefix_run(sim, tokens):
    """Step the stack over Alice's prefix: ``(outputs (B, s, d), equal (B, s))``, ``equal[:, t]``
    whether the state after position t equals row 0's."""
    stack, s = sim.model.stack, sim.split.split_at
    state = stack.init_state(tokens.shape[0])
    outs, equal = [], np.zeros((tokens.shape[0], s), dtype=bool)
    for t in range(s):
        state, y = stack.run_layers(tokens[:, t:t + 1], state)  # (B, 1, d)
        outs.append(y)
        equal[:, t] = _state_equal(state)
    xp = sim.model.xp
    return xp.concat(outs, axis=1), equal


def _disjoint(starts, merges) -> np.ndarray:
    """Indices of a largest set of intervals ``[start, merge]`` pairwise apart (``start > merge`` of
    the one before): earliest merge first."""
    chosen, last = [], -1
    for i in np.argsort(merges, kind="stable"):
        if starts[i] > last:
            chosen.append(int(i))
            last = int(merges[i])
    return np.sort(np.asarray(chosen, dtype=np.int64))


def _queries(sim, tokens):
    """Bob's query ``(B, H, d_k)`` at every read position, from the unsplit hidden rows, and those rows."""
    model = sim.model
    hidden = model.hidden(tokens)  # (B, N, d)
    return [model.query(hidden[:, int(o), :]) for o in sim.split.read], hidden


def hybrid_instance(sim, fill, y0, max_window: int = MAX_WINDOW) -> HybridInstance:
    """The rows ``D_i`` of template ``(fill, y0)`` over the bits whose flips are forgotten in disjoint
    windows on Alice's side and before every read position on Bob's (module docstring)."""
    if not is_exact_hybrid(sim):
        raise UnsupportedSplitError("the hybrid zero-sum engine runs the exact hybrid split (a precision set)")
    n, split, model = sim.n, sim.split, sim.model
    s, read = split.split_at, [int(o) for o in split.read]
    fill = np.asarray(fill, dtype=np.uint8)
    xs = np.repeat(fill[None, :], n + 1, axis=0)  # (n + 1, n): row 0 the filling, row 1 + i bit i flipped
    xs[np.arange(1, n + 1), np.arange(n)] ^= 1
    ys = np.repeat(np.asarray(y0)[None, ...], n + 1, axis=0)
    tokens = to_numpy(sim.reduction.encode(xs, ys, n).tokens)  # (n + 1, N)
    changed = tokens[1:, :s] != tokens[0, :s]  # (n, s)
    touched = changed.any(axis=1)
    first = np.where(touched, np.argmax(changed, axis=1), -1)
    last = np.where(touched, s - 1 - np.argmax(changed[:, ::-1], axis=1), -1)
    outs, equal = _prefix_run(sim, tokens[:, :s])
    eq = equal[1:]  # (n, s)
    pos = np.arange(s)
    ok = eq & (pos[None, :] >= last[:, None]) & (pos[None, :] <= last[:, None] + max_window)
    merged = np.where(ok.any(axis=1), np.argmax(ok, axis=1), -1)
    merged = np.where(touched, merged, -1)
    forgotten = ~touched | (merged >= 0)
    bob_ok = np.ones(n, dtype=bool)
    if np.shape(y0) == (n,):  # Bob's bits: the hidden rows at the read positions must not see a flip
        yf = np.repeat(np.asarray(y0, np.uint8)[None, :], n + 1, axis=0)
        yf[np.arange(1, n + 1), np.arange(n)] ^= 1
        btok = to_numpy(sim.reduction.encode(np.repeat(fill[None, :], n + 1, axis=0), yf, n).tokens)
        hid = np.ascontiguousarray(to_numpy(model.hidden(btok))[:, read, :], dtype=np.float64)
        hid = hid.reshape(n + 1, -1).view(np.uint64)
        bob_ok = np.all(hid[1:] == hid[0], axis=1)
    usable = np.flatnonzero(forgotten & bob_ok)
    starts = np.where(touched, first, -1)[usable]
    ends = np.where(touched, merged, -1)[usable]
    silent = usable[starts < 0]  # bits no position of Alice's holds: zero rows, apart from everything
    keep = _disjoint(starts[starts >= 0], ends[starts >= 0])
    bits = np.concatenate([silent, usable[starts >= 0][keep]]).astype(np.int64)
    windows = np.concatenate([np.full((len(silent), 2), -1), np.stack([first[bits[len(silent):]],
                                                                          merged[bits[len(silent):]]], 1)])
    rows = np.concatenate([[0], 1 + bits])  # the filling's row and the flips used
    x = split._rows(outs[rows], 0)  # (R, N, d): Alice's hidden rows, zeros after s
    qs, _ = _queries(sim, tokens[:1])
    sums = np.concatenate([_flat(model.partial(x, np.arange(s), np.repeat(to_numpy(q), len(rows), axis=0), o))
                           for q, o in zip(qs, read)], axis=1)  # (R, d)
    D = sums[1:] - sums[0]  # wrapping int64 differences: exact (terms.py)
    counts = {"unforgotten": int((~forgotten).sum()), "bob_remembers": int((forgotten & ~bob_ok).sum()),
              "overlapping": int(len(usable) - len(bits))}
    return HybridInstance(D.astype(np.int64), bits, windows.astype(np.int64), fill, np.asarray(y0), counts)


def _templates(sim, rng):
    """``(fill, y0)``: all zero, all one, then seeded random (y0 of Bob's shape, from the problem)."""
    n, prob = sim.n, sim.problem
    ys = prob.sample(n, 1, rng)[1]
    bob_bits = np.shape(ys[0]) == (n,)
    for t in range(TEMPLATES):
        fill = (np.zeros(n, np.uint8) if t == 0 else np.ones(n, np.uint8) if t == 1
                else rng.integers(0, 2, size=n, dtype=np.uint8))
        yield fill, (fill.copy() if bob_bits else prob.sample(n, 1, rng)[1][0])


def _pairs_of(inst, delta):
    z = np.zeros(len(inst.fill), np.uint8)
    z2 = z.copy()
    z[inst.bits] = delta > 0
    z2[inst.bits] = delta < 0
    return inst.fill ^ z, inst.fill ^ z2


def _candidate_ys(sim, x, x2, y0, rng):
    """Ys that separate x and x': y0 itself, x', x (Bob's inputs that differ from y0 only on the bits
    used keep y0's query), then the problem's own rule."""
    from commcomp.problems.separate import separating_y

    prob, n = sim.problem, sim.n
    tries = [np.asarray(y0)]
    if np.shape(y0) == (n,):
        tries += [x2, x]
    y, _ = separating_y(prob, n, x, x2, seed=int(rng.integers(1 << 30)))
    if y is not None:
        tries.append(np.asarray(y))
    for y in tries:
        f = prob.evaluate(np.stack([x, x2]), np.stack([y, y]))
        if bool(f[0]) != bool(f[1]):
            yield y


def _recheck(sim, x, x2, y):
    """The confirmation fields when the real protocol and the unsplit model agree it is a witness."""
    from ..confirm import alice_messages, confirm_witness

    ys = np.stack([np.asarray(y), np.asarray(y)])
    msgs = alice_messages(sim, np.stack([x, x2]), ys, "plain")  # every message Alice sends, packed
    if not np.array_equal(msgs[0], msgs[1]):
        return None, True
    conf = confirm_witness(sim, x, x2, y)
    good = (conf["outputs_identical"] and conf["model_answer_x"] == conf["model_answer_x_prime"]
            and conf["truth_x"] != conf["truth_x_prime"])
    return (conf if good else None), not good


def _exhaustive(sim):
    """Every (x, y) through the real protocol; ``(hit, pairs)``, hit ``(x, x', y)`` or None."""
    from ..confirm import alice_messages

    prob, n = sim.problem, sim.n
    X, Y = prob.alice_inputs(n), prob.bob_inputs(n)
    for y in Y:
        ys = np.repeat(np.asarray(y)[None, ...], len(X), axis=0)
        keys = alice_messages(sim, X, ys, "plain")  # (|X|, bytes)
        _, cls = np.unique(keys, axis=0, return_inverse=True)
        f = prob.evaluate(X, ys).astype(bool)
        cls = cls.reshape(-1)
        has_t = np.zeros(cls.max() + 1, bool)
        has_f = np.zeros(cls.max() + 1, bool)
        has_t[cls[f]] = True
        has_f[cls[~f]] = True
        both = np.flatnonzero(has_t & has_f)
        if both.size:
            c = both[0]
            a = np.flatnonzero((cls == c) & f)[0]
            b = np.flatnonzero((cls == c) & ~f)[0]
            return (X[a], X[b], np.asarray(y)), len(X) * len(Y)
    return None, len(X) * len(Y)


def hybrid_collision(sim, *, method: str = "auto", budget=None, seed: int = 0, deadline=None):
    """Two inputs with the same three messages for one y, re-checked (module docstring); an
    :class:`~.outcome.AttentionCollision`."""

    start = time.perf_counter()
    budget = DEFAULT_SUMS if budget is None else int(budget)
    n = sim.n
    pairs = (1 << sim.problem.alice_input_bits(n)) * (1 << sim.problem.bob_input_bits(n)) \
        if max(sim.problem.alice_input_bits(n), sim.problem.bob_input_bits(n)) <= 16 else None
    if pairs is not None and pairs <= min(budget, EXHAUSTIVE_PAIRS):
        hit, tried = _exhaustive(sim)
        search = ZeroSumSearch("enumerate", (), hit is None, {"exhaustive": True, "sums": tried},
                               f"every (x, y) pair ({tried}) through the protocol, messages sorted per y")
        if hit is None:
            note = (f"proved: for every y, the {1 << n} inputs of Alice that send equal messages get equal "
                    "answers, so no collision witness exists")
            return AttentionCollision(False, True, "enumerate", None, None, None, False, False, {}, (search,),
                                      0, 0, {"exhaustive_pairs": tried}, note, time.perf_counter() - start)
        conf, _ = _recheck(sim, *hit)
        if conf is not None:
            note = ("every (x, y) pair through the protocol: " + conf["note"])
            return AttentionCollision(True, True, "enumerate", hit[0], hit[1], hit[2], True, True, conf,
                                      (search,), 1, 0, {"exhaustive_pairs": tried}, note,
                                      time.perf_counter() - start)
        note = ("the protocol sent equal messages on a pair the unsplit model answers differently: a defect "
                "of the split, reported instead of a witness; this proves nothing")
        return AttentionCollision(False, False, "enumerate", None, None, None, False, False, {}, (search,), 1, 1,
                                  {"exhaustive_pairs": tried}, note, time.perf_counter() - start)
    rng = np.random.default_rng([int(seed), 47])
    searches, candidates, rejected, infos = [], 0, 0, []
    for fill, y0 in _templates(sim, rng):
        if deadline is not None and time.perf_counter() > deadline:
            break
        inst = hybrid_instance(sim, fill, y0)
        info = inst.to_json()
        infos.append(info)
        if len(inst.bits) < 2:
            if inst.counts["unforgotten"] >= n - 1:  # the stack forgets no flip at all: other fillings alike
                break
            continue
        found = [replace(f, proved_none=False,  # a pass over the template's 2^J flips proves nothing of x
                         note=f"template {len(infos) - 1}, its {len(inst.bits)} bits only: " + f.note.replace(
                             "proved: no two inputs send the same message", "over these flips alone"))
                 for f in _solve(inst.differences, method, budget, seed, deadline=deadline)]
        searches += found
        for search in found:
            for delta in search.vectors[:MAX_CANDIDATES]:
                candidates += 1
                x, x2 = _pairs_of(inst, np.asarray(delta, np.int64))
                for y in _candidate_ys(sim, x, x2, y0, rng):
                    conf, bad = _recheck(sim, x, x2, y)
                    if conf is not None:
                        note = (f"x and x' differ in {int((x != x2).sum())} bits whose windows the recurrence "
                                f"forgets and whose attention terms cancel exactly ({search.method}: "
                                f"{search.note}); the protocol sends both the same {sim.bits_per_message}-bit "
                                "messages (state, then partial sums; re-run, bit for bit) and the unsplit model "
                                f"answers both the same, but f differs: it is wrong on {conf['wrong_on']}")
                        return AttentionCollision(True, False, search.method, x, x2, y, True, True, conf,
                                                  tuple(searches), candidates, rejected, {"templates": infos},
                                                  note, time.perf_counter() - start)
                    rejected += int(bad)
    if not searches:
        note = ("no template left two bits the recurrence forgets in disjoint windows "
                f"(within {MAX_WINDOW} steps, before the boundary, and unseen at Bob's read positions): "
                "the sums are not linear in x here; this proves nothing")
    elif candidates:
        note = (f"{candidates} exact zero sums found, none turned into a witness ({rejected} contradicted by "
                "the protocol re-run or the model, the rest not separated by the ys tried); this proves nothing")
    else:
        note = ("; ".join(dict.fromkeys(s.note for s in searches)) + "; these cover only the inputs that differ "
                "from a template on its bits, so this proves nothing")
    return AttentionCollision(False, False, searches[-1].method if searches else method, None, None, None, False,
                              False, {}, tuple(searches), candidates, rejected, {"templates": infos}, note,
                              time.perf_counter() - start)
