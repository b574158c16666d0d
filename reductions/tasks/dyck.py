"""Bounded Dyck-(k, D) recognition (BHBK): is a bracket string well nested with depth <= D?"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from commcomp.errors import InvalidParameterError

from .base import Task, TaskBatch, balanced_labels, check_batch

__all__ = ["Dyck"]

_OPEN_NAMES = "([{<"
_CLOSE_NAMES = ")]}>"


@dataclass(frozen=True)
class Dyck(Task):
    """Dyck-(k, D) recognition: 2n brackets of k types, then ``[CLS]``; answer 1 iff the
    string is well nested with depth at most D.

    Vocabulary: ids ``0 .. k-1`` are the openers ``( [ { <``..., ids ``k .. 2k-1`` the
    matching closers ``) ] } >``..., id ``2k`` is ``[CLS]`` (for k = 2: ``( [ ) ] [CLS]`` =
    0 1 2 3 4). The size parameter n is half the bracket count (only even lengths can be
    well nested); N = 2n + 1 with the answer read at the final ``[CLS]``.

    The ground truth runs the minimal DFA of the language (one state per stack of depth
    <= D, plus a reject sink: sum_{d<=D} k^d + 1 states, reference C6) over the batch, one
    time step at a time.

    Worked example (k = 2, D = 2, n = 3)::

        tokens   [ ( ) ] ( ) [CLS]     ids 1 0 2 3 0 2 4    answer 1
        tokens   [ ) ( ] ( ) [CLS]     ids 1 2 0 3 0 2 4    answer 0 (`]` expected)
        tokens   ( [ ( ) ] ) [CLS]                          answer 0 (depth 3 > 2)

    Examples
    --------
    >>> task = Dyck(types=2, depth=2)
    >>> b = task.make_batch(3, task.encode_strings(["[()]()", "[)(]()", "([()])"]))
    >>> task.ground_truth(b).ravel().tolist()
    [1, 0, 0]
    >>> task.num_states
    8
    """

    types: int = 2
    depth: int = 2

    name = "dyck"
    aliases = ("dyck-k-d", "bounded-dyck", "dyck-2-2")

    def __post_init__(self):
        if not 1 <= self.types <= len(_OPEN_NAMES) or self.depth < 1:
            raise InvalidParameterError(f"dyck: need 1 <= types <= {len(_OPEN_NAMES)} and depth >= 1")

    # -- format -------------------------------------------------------------------------
    @property
    def cls(self) -> int:
        return 2 * self.types

    def vocabulary(self, n):
        self.check_n(n)
        return tuple(_OPEN_NAMES[:self.types]) + tuple(_CLOSE_NAMES[:self.types]) + ("[CLS]",)

    def vocab_size(self, n):
        return 2 * self.types + 1

    def length(self, n):
        return 2 * self.check_n(n) + 1

    def encode_strings(self, strings) -> np.ndarray:
        """Tokens from bracket strings of equal length, with ``[CLS]`` appended."""
        lookup = {c: i for i, c in enumerate(self.vocabulary(1)[:-1])}
        rows = [[lookup[c] for c in s] + [self.cls] for s in strings]
        return np.array(rows, dtype=np.int64)

    # -- the DFA ------------------------------------------------------------------------
    @cached_property
    def _dfa(self) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
        stacks = [s for d in range(self.depth + 1) for s in itertools.product(range(self.types), repeat=d)]
        index = {s: i for i, s in enumerate(stacks)}
        reject = len(stacks)
        table = np.full((reject + 1, 2 * self.types + 1), reject, dtype=np.int64)  # [CLS] rejects
        for s, i in index.items():
            for t in range(self.types):
                if len(s) < self.depth:
                    table[i, t] = index[s + (t,)]  # push
                if s and s[-1] == t:
                    table[i, self.types + t] = index[s[:-1]]  # matching pop
        return table, tuple(stacks)

    @property
    def transitions(self) -> np.ndarray:
        """DFA table ``(states, vocab)``: state 0 is the empty stack (start, accept), the last
        state the reject sink."""
        return self._dfa[0]

    @property
    def language(self) -> str:
        """``dyck-k-D``: the predicate does not depend on n (odd lengths are never well nested),
        over the openers then the closers, as the vocabulary orders them."""
        return f"dyck-{self.types}-{self.depth}"

    @property
    def num_states(self) -> int:
        """sum_{d=0..D} k^d + 1 (reference C6)."""
        return self._dfa[0].shape[0]

    def run(self, brackets) -> np.ndarray:
        """Final DFA state after reading ``brackets`` ``(B, L)``; a loop over time, not instances."""
        brackets = np.asarray(brackets, dtype=np.int64)
        if np.any((brackets < 0) | (brackets > self.cls)):
            raise InvalidParameterError("dyck: token id out of range")
        table = self.transitions
        state = np.zeros(brackets.shape[0], dtype=np.int64)  # (B,)
        for t in range(brackets.shape[1]):
            state = table[state, brackets[:, t]]
        return state

    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        tokens = batch.tokens
        accept = (self.run(tokens[:, :-1]) == 0) & (tokens[:, -1] == self.cls)
        return accept.astype(np.int64)[:, None]  # (B, 1)

    # -- sampling -----------------------------------------------------------------------
    def sample(self, n, batch, rng) -> TaskBatch:
        """Exactly half the batch well nested; the rest is a well-nested string with one
        bracket replaced by a different bracket, which is never well nested (it either breaks
        the opener/closer balance or mismatches a pair)."""
        n, batch = self.check_n(n), check_batch(batch)
        L, k = 2 * n, self.types
        brackets = np.empty((batch, L), dtype=np.int64)
        stack = np.zeros((batch, self.depth), dtype=np.int64)  # (B, D) bracket types
        level = np.zeros(batch, dtype=np.int64)  # (B,) current depth
        rows = np.arange(batch)
        for t in range(L):
            remaining = L - t
            can_open = (level < self.depth) & (level + 1 <= remaining - 1)
            must_close = level >= remaining
            opening = can_open & ~must_close & ((level == 0) | (rng.random(batch) < 0.5))
            kind = rng.integers(0, k, size=batch)
            top = stack[rows, np.maximum(level - 1, 0)]  # (B,) type of the innermost open bracket
            brackets[:, t] = np.where(opening, kind, k + top)
            slot = np.minimum(level, self.depth - 1)
            stack[rows, slot] = np.where(opening, kind, stack[rows, slot])
            level = level + np.where(opening, 1, -1)
        answers = balanced_labels(batch, 2, rng)  # (B,)
        bad = np.nonzero(answers == 0)[0]
        where = rng.integers(0, L, size=bad.size)
        shift = rng.integers(1, 2 * k, size=bad.size)  # to a different bracket id
        brackets[bad, where] = (brackets[bad, where] + shift) % (2 * k)
        tokens = np.concatenate([brackets, np.full((batch, 1), self.cls)], axis=1)
        return self.make_batch(n, tokens, answers=answers[:, None])
