"""The reachable-states engine: Alice's side of a one-way recurrent split, level by level.

A model at a finite precision carries a state that takes finitely many values, so the set of
messages Alice can send is the set of states reachable over her positions. Level t holds one
*class* per distinct message after positions ``0..t-1``; each class takes every token position t
allows (:mod:`.letters`), the candidates step in fixed row blocks (:mod:`.stepping`), and
candidates whose encoded messages are bit-equal merge into one class. Each class keeps

* the canonical state (decoded from its message: what Bob would hold),
* its representative input (the first candidate that reached it: a parent pointer and a letter),

and each level keeps its transition table ``next_class (S_prev, A)``, from which the analyses
(:mod:`.analyses`) recover every count they need: the exact number of Alice's inputs in each
class (Python ints: counts reach 2^n) is computed only when asked for
(:meth:`ReachableStates.counts_at`), by one forward pass over the tables. The counts of level t
have t bits each, so the pass costs O(n^2) bit operations (at n = 100,000 it was most of a
``witness`` run, which needs none of them) and keeping them all would cost O(n^2) bits: the pass
keeps them every :data:`COUNT_CHECKPOINT` levels and recomputes the rest forward from the nearest
one, a block at a time. Two different inputs that merge are a
*message collision*: the first few are kept as witnesses. The exploration stops when all of
Alice's positions are done or when a budget (classes at a level, bytes kept) is exceeded; then
:attr:`ReachableStates.complete` is False and :attr:`ReachableStates.stopped` says why.

Examples
--------
>>> from reductions.simulate.setup import prepare
>>> sim = prepare("index-lookup", "lstm", 12, "fixed:4:2", width=2, seed=0)
>>> reach = explore(sim)
>>> reach.complete, reach.sizes[:4], reach.total_inputs == 2 ** 12
(True, [1, 2, 3, 3], True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from commcomp.backend import count_true, is_numpy
from commcomp.errors import UnsupportedSplitError
from commcomp.precision import FixedPoint

from ...simulate.outputs import device_rows_equal
from ...simulate.running import take_rows
from .letters import AliceLetters, alice_letters
from .stepping import canonical, state_rows_numpy, step_rows

__all__ = ["Level", "Collision", "ReachableStates", "explore", "explore_model", "DEFAULT_MAX_STATES", "DEFAULT_MAX_BYTES"]

DEFAULT_MAX_STATES = 1 << 15   # classes at one level
DEFAULT_MAX_BYTES = 1 << 28    # states, messages, tables and counts kept (256 MiB)
KEEP_COLLISIONS = 16
COUNT_CHECKPOINT = 256         # levels between kept counts (the rest are recomputed from the tables)


@dataclass(frozen=True, eq=False)
class Level:
    """One of Alice's positions, explored.

    Attributes
    ----------
    position, bit : int
        The sequence position and the bit of x it holds (-1: a constant token).
    letters : ``(A,)`` int64 tokens tried (bit 0's then bit 1's)
    next_class : ``(S_prev, A)`` int64: the class each (parent class, letter) reaches
    rep_parent, rep_letter : ``(S,)`` int64: the candidate each class keeps as representative
    counts : ``(S,)`` object: Alice's inputs in each class (Python ints, unread bits included),
        computed from the tables when asked for (:meth:`ReachableStates.counts_at`)
    """

    position: int
    bit: int
    letters: np.ndarray
    next_class: np.ndarray
    rep_parent: np.ndarray
    rep_letter: np.ndarray
    index: int = -1
    owner: "ReachableStates | None" = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return int(self.rep_parent.shape[0])

    @property
    def counts(self) -> np.ndarray:
        return self.owner.counts_at(self.index)


@dataclass(frozen=True)
class Collision:
    """Two candidates that merged at ``level``: ``(parent class, letter index)`` each."""

    level: int
    first: tuple
    second: tuple


@dataclass(eq=False)
class ReachableStates:
    """What :func:`explore` found (see the module docstring).

    Attributes
    ----------
    layout : AliceLetters
    levels : list of Level
        One per explored position (all ``split_at`` of them when complete).
    sizes : list of int
        Distinct messages after 0, 1, ..., explored positions (``sizes[0] == 1``).
    state, keys : the classes of the last explored level: canonical states (model namespace)
        and packed messages ``(S, bytes)`` uint8
    collisions : list of Collision
        The first merges of different inputs (at most ``KEEP_COLLISIONS``).
    merged_candidates : int
        Candidates that joined an existing class, over all levels.
    roundtrip_failures : int
        Candidates whose state differs from decode(encode(state)) (0 when the codec is faithful).
    complete : bool
    stopped : str or None
        Why the exploration stopped early (a budget), or None.
    seconds : float
    bytes_kept : int
        What the budget counted.
    reused_levels : int
        Levels whose step repeated the previous level's exactly and was reused, not recomputed.
    """

    layout: AliceLetters
    levels: list
    sizes: list
    state: dict
    keys: np.ndarray
    collisions: list = field(default_factory=list)
    merged_candidates: int = 0
    roundtrip_failures: int = 0
    complete: bool = True
    stopped: str | None = None
    seconds: float = 0.0
    bytes_kept: int = 0
    reused_levels: int = 0
    checkpoints: dict = field(default_factory=dict, repr=False)  # level index -> its counts
    _block: tuple = field(default=(None, []), repr=False)  # (first level index, counts of its levels)

    @property
    def final_counts(self) -> np.ndarray:
        return self.counts_at(len(self.levels) - 1) if self.levels else self.start_counts

    @property
    def start_counts(self) -> np.ndarray:
        return np.array([self.unread_factor], dtype=object)

    def counts_at(self, i: int) -> np.ndarray:
        """Alice's inputs in each class of level ``i`` ``(S_i,)`` (Python ints), computed forward
        from the last checkpoint at or before it (the first call runs the tables from the start up to
        it, keeping a checkpoint every :data:`COUNT_CHECKPOINT` levels); the block of levels it
        recomputes is kept, so walking the levels in either order costs one forward pass per block."""
        if i < 0:
            i += len(self.levels)
        if not 0 <= i < len(self.levels):
            raise IndexError(f"level {i} of {len(self.levels)}")
        first, block = self._block
        if first is not None and first <= i < first + len(block):
            return block[i - first]
        start = i - i % COUNT_CHECKPOINT
        if start not in self.checkpoints:
            self._checkpoints_up_to(start)
        counts = self.checkpoints[start]
        block = [counts]
        for t in range(start + 1, min(start + COUNT_CHECKPOINT, len(self.levels))):
            counts = _step_counts(counts, self.levels[t].next_class)
            block.append(counts)
        self._block = (start, block)
        return block[i - start]

    def _checkpoints_up_to(self, start: int) -> None:
        """The counts of every checkpoint level up to ``start``, forward from the last one kept."""
        done = [t for t in self.checkpoints if t < start]
        t0 = max(done) if done else -1
        counts = self.checkpoints[t0] if done else self.start_counts
        for t in range(t0 + 1, start + 1):
            counts = _step_counts(counts, self.levels[t].next_class, self.levels[t].size)
            if t % COUNT_CHECKPOINT == 0:
                self.checkpoints[t] = counts

    @property
    def unread_factor(self) -> int:
        return 1 << len(self.layout.unread)

    @property
    def total_inputs(self) -> int:
        """Alice's inputs the explored levels cover: the letters' product times the unread bits
        (every (parent, letter) candidate lands in one class, so this is ``sum(final_counts)``,
        without the forward pass)."""
        total = self.unread_factor
        for lv in self.levels:
            total *= lv.next_class.shape[1]
        return total

    @property
    def injective(self) -> bool:
        """True when every input of Alice sends its own message (no merge, every bit read)."""
        return self.complete and self.merged_candidates == 0 and len(self.layout.unread) == 0

    def choices(self, level: int, cls: int) -> list:
        """Letter indices per level of the representative of class ``cls`` after ``level`` levels."""
        out = []
        for t in range(level - 1, -1, -1):
            lv = self.levels[t]
            out.append(int(lv.rep_letter[cls]))
            cls = int(lv.rep_parent[cls])
        return out[::-1]

    def representative(self, level: int, cls: int, fill: int = 0) -> np.ndarray:
        """An input x ``(n,)`` of class ``cls`` after ``level`` levels (bits after it: ``fill``)."""
        return self.layout.inputs_from_choices(self.choices(level, cls), fill)

    def representatives(self) -> np.ndarray:
        """One input ``(S, n)`` per class of the last explored level."""
        S, L = self.keys.shape[0], len(self.levels)
        choices, cls = np.zeros((S, L), dtype=np.int64), np.arange(S)  # (S, L), (S,)
        for t in range(L - 1, -1, -1):  # back through the levels, every class at once
            lv = self.levels[t]
            choices[:, t], cls = lv.rep_letter[cls], lv.rep_parent[cls]
        return self.layout.inputs_from_choices(choices)

    def collision_inputs(self, collision: Collision) -> tuple[np.ndarray, np.ndarray]:
        """Two different inputs x != x' whose messages are equal after ``collision.level + 1``
        positions, completed with the same bits (so their final messages are equal too)."""
        xs = []
        for parent, letter in (collision.first, collision.second):
            xs.append(self.layout.inputs_from_choices(self.choices(collision.level, parent) + [letter]))
        return xs[0], xs[1]


def _state_bits_changed(model, stepped: dict, decoded: dict) -> int:
    """Rows whose stepped state differs from the state decoded from its message (fixed point has
    no -0: a -0.0 counts as 0, as the one-way split's own check does)."""
    if not all(is_numpy(v) for v in stepped.values()):  # on the device: one count comes back
        return _device_rows_changed(model, stepped, decoded)
    a, b = state_rows_numpy(stepped), state_rows_numpy(decoded)
    if isinstance(model.precision, FixedPoint):
        a, b = a + 0.0, b + 0.0
    return int(np.sum(np.any(a.view(np.uint64) != b.view(np.uint64), axis=1)))


def _device_rows_changed(model, stepped: dict, decoded: dict) -> int:
    """:func:`_state_bits_changed` on a device namespace: values and sign bits compared there
    (NaN equals NaN: the formats' rounding yields one canonical NaN), one count to the host."""
    fixed = isinstance(model.precision, FixedPoint)
    same = None
    for k, a in stepped.items():
        b = decoded[k]
        if fixed:  # no -0 in fixed point: -0.0 + 0.0 is +0.0
            a, b = a + 0.0, b + 0.0
        eq = device_rows_equal(a, b)
        same = eq if same is None else same & eq
    return 0 if same is None else int(same.shape[0]) - count_true(same)


def _group(keys: np.ndarray):
    """``(first, inverse)``: the first row of each distinct key row, and each row's class."""
    void = np.ascontiguousarray(keys).view(np.dtype((np.void, keys.shape[1]))).ravel()
    _, first, inverse = np.unique(void, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # classes numbered by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.reshape(-1)]


def explore(sim, *, max_states: int = DEFAULT_MAX_STATES, max_bytes: int = DEFAULT_MAX_BYTES,
            layout: AliceLetters | None = None, progress=None, reuse: bool = True) -> ReachableStates:
    """Explore Alice's reachable states for a prepared one-way recurrent simulation.

    Parameters
    ----------
    sim : Simulation
        From :func:`reductions.simulate.setup.prepare` (a recurrent split).
    max_states, max_bytes : int
        The budget: the exploration stops (``complete = False``) when a level has more classes,
        or the kept tables and states more bytes.
    progress : callable ``(level, levels)``, optional

    Raises
    ------
    UnsupportedSplitError
        For a split that is not one-way recurrent, a chain of thought, or an encoding of x that
        is not one bit per position (:class:`~.letters.NotPositionwiseError`).
    """
    if not sim.split.state_message:
        raise UnsupportedSplitError(f"the reachable-states engine runs one-way recurrent splits, not "
                                    f"{sim.split.kind}")
    layout = alice_letters(sim.reduction, sim.n, sim.seed) if layout is None else layout
    return explore_model(sim.model, layout, max_states=max_states, max_bytes=max_bytes, progress=progress,
                         reuse=reuse)


def explore_model(model, layout: AliceLetters, *, max_states: int = DEFAULT_MAX_STATES,
                  max_bytes: int = DEFAULT_MAX_BYTES, progress=None, reuse: bool = True) -> ReachableStates:
    """:func:`explore` for a recurrent model and a layout of Alice's positions given directly
    (a model outside the registry's tasks, e.g. a construction over its own vocabulary).

    ``reuse``: a step is a function of (state bits, token) alone (``run_layers`` takes no position),
    so a level whose classes are, in the same order, those from which the same letters were last
    stepped steps exactly as that level did: its step is reused instead of recomputed (once the
    reachable set has settled, the rest of a long input costs no model calls; positions that
    alternate between public tokens and bits each keep their own last step).
    """
    start = time.perf_counter()
    keys, state = canonical(model, model.init_state(1))
    reach = ReachableStates(layout, [], [1], state, keys)
    live = keys.shape[1] + 8 * model.state_numbers()  # bytes of a class's message and state (this level only)
    cache = {}  # letters -> (parent keys, first, inverse, keys, state, failures) of their last computed step
    for t in range(layout.split_at):
        letters = layout.letters(t)
        S, A = keys.shape[0], len(letters)
        entry = cache.get(letters.tobytes())
        if reuse and entry is not None and np.array_equal(entry[0], keys):
            first, inverse, new_keys, new_state, failures = entry[1:]
            reach.reused_levels += 1
        else:
            stepped = step_rows(model, take_rows(state, np.repeat(np.arange(S), A)), np.tile(letters, S))
            cand_keys, decoded = canonical(model, stepped)  # (S * A, bytes)
            failures = _state_bits_changed(model, stepped, decoded)
            first, inverse = _group(cand_keys)
            new_keys, new_state = cand_keys[first], take_rows(decoded, first)
            cache[letters.tobytes()] = (keys, first, inverse, new_keys, new_state, failures)
        reach.roundtrip_failures += failures
        K = len(first)
        count_bytes = K * (36 + 4 * (t // 30 + 1))  # one level's exact counts
        kept = S * A * 8 + K * 16 + (count_bytes if t % COUNT_CHECKPOINT == 0 else 0)  # tables, checkpoints
        block = min(t + 1, COUNT_CHECKPOINT) * count_bytes  # the counts :meth:`counts_at` recomputes at once
        need = reach.bytes_kept + kept + block + 2 * S * A * live  # the tables so far, this level's candidates
        if K > max_states or need > max_bytes:
            reach.complete = False
            reach.stopped = (f"budget: level {t + 1} (position {t}) has {K} distinct messages" if K > max_states
                             else f"budget: level {t + 1} needs {need} bytes ({2 * S * A * live} for its "
                                  f"candidates' states and messages), more than max_bytes {max_bytes}")
            break
        if K < S * A:
            reach.merged_candidates += S * A - K
            _record(reach, t, first, inverse, A)
        keys, state = new_keys, new_state
        reach.levels.append(Level(t, int(layout.bit_at[t]), letters, inverse.reshape(S, A), first // A,
                                  first % A, t, reach))
        reach.sizes.append(K)
        reach.bytes_kept += kept
        if progress is not None:
            progress(t + 1, layout.split_at)
    reach.state, reach.keys = state, keys
    reach.seconds = time.perf_counter() - start
    return reach


def _step_counts(counts: np.ndarray, next_class: np.ndarray, K: int | None = None) -> np.ndarray:
    """Counts ``(K,)`` of a level from its parents' ``(S,)`` and its table ``(S, A)``: each class
    receives the counts of the (parent, letter) candidates that reach it."""
    S, A = next_class.shape
    out = np.zeros(int(next_class.max()) + 1 if K is None else K, dtype=object)
    np.add.at(out, next_class.reshape(-1), np.repeat(counts, A))
    return out


def _record(reach: ReachableStates, t: int, first: np.ndarray, inverse: np.ndarray, A: int) -> None:
    """Keep the first collisions of level t: a candidate that joined a class another one founded."""
    if len(reach.collisions) >= KEEP_COLLISIONS:
        return
    joined = np.nonzero(first[inverse] != np.arange(len(inverse)))[0]
    for cand in joined[:KEEP_COLLISIONS - len(reach.collisions)]:
        found = int(first[inverse[cand]])
        reach.collisions.append(Collision(t, (found // A, found % A), (int(cand) // A, int(cand) % A)))
