"""Alice's side of a reduction, position by position: which token each of her positions can hold.

The reachable-states engine runs Alice's prefix level by level, so it needs the encoding of x as a
sequence of per-position choices. Every prefix-suffix reduction in the registry writes each bit x_i
at one position of Alice's and fills the other positions before the split with constants (public
tokens); :func:`alice_letters` finds that layout by probing the reduction's own encoder (x = 0, and
x = 0 with one bit set) and then checks it: a seeded sample of random x (and the all-ones x) must
encode to exactly the tokens the layout predicts, and no bit may be read at two positions.
Reductions that do not have this form raise :class:`NotPositionwiseError`; callers then fall back
to the enumerating runners and say so.

Examples
--------
>>> from reductions.registry import get_reduction
>>> lay = alice_letters(get_reduction("mqar"), 3)
>>> lay.split_at, lay.bit_at.tolist(), lay.tokens.tolist()[:3]
(6, [-1, 0, -1, 1, -1, 2], [[0, 0], [6, 7], [1, 1]])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.errors import UnsupportedSplitError
from commcomp.problems import get_problem

from ...simulate.recurrent import split_point

__all__ = ["AliceLetters", "alice_letters", "probe_positions", "NotPositionwiseError", "CHECK_SAMPLES"]

CHECK_SAMPLES = 64  # random x whose encoding must match the layout exactly


class NotPositionwiseError(UnsupportedSplitError):
    """The reduction's encoding of x is not one bit per position (the engine cannot run it)."""


@dataclass(frozen=True, eq=False)
class AliceLetters:
    """Alice's positions ``0..split_at-1`` as per-position choices.

    Attributes
    ----------
    n : int
        Problem size (bits of x).
    split_at : int
        One past Alice's last position: the engine's levels are ``0..split_at-1``.
    bit_at : ``(split_at,)`` int64
        The bit of x that position t holds, or -1 for a constant position (public, or a bit the
        encoder does not read).
    tokens : ``(split_at, 2)`` int64
        The token at position t when its bit is 0 and when it is 1 (equal for constant positions).
    unread : ``(k,)`` int64
        Bits of x that no position before the split holds: inputs that differ only there send the
        same message.
    """

    n: int
    split_at: int
    bit_at: np.ndarray
    tokens: np.ndarray
    unread: np.ndarray

    def letters(self, t: int) -> np.ndarray:
        """The distinct tokens position t can hold: ``(1,)`` or ``(2,)`` (bit 0's, then bit 1's)."""
        return self.tokens[t, :1] if self.bit_at[t] < 0 else self.tokens[t]

    def prefix_tokens(self, x) -> np.ndarray:
        """Alice's tokens ``(B, split_at)`` for inputs ``x`` ``(B, n)``, from the layout."""
        x = np.asarray(x, dtype=np.int64).reshape(-1, self.n)
        bits = np.where(self.bit_at >= 0, x[:, np.maximum(self.bit_at, 0)], 0)  # (B, s)
        return np.take_along_axis(np.broadcast_to(self.tokens, (x.shape[0],) + self.tokens.shape),
                                  bits[:, :, None], axis=2)[:, :, 0]

    def inputs_from_choices(self, choices, fill: int = 0) -> np.ndarray:
        """x ``(n,)`` uint8 from the letter chosen at each position (0/1 per level), or ``(B, n)``
        from ``(B, levels)`` choices; bits no level chose are ``fill``."""
        choices = np.asarray(choices, dtype=np.int64)
        x = np.full(choices.shape[:-1] + (self.n,), fill, dtype=np.uint8)
        read = self.bit_at[:choices.shape[-1]]
        x[..., read[read >= 0]] = choices[..., read >= 0]
        return x


def _bob_rows(problem, n: int, batch: int) -> np.ndarray:
    ys = problem.sample(n, batch, np.random.default_rng(0))[1]
    return ys


def alice_letters(reduction, n: int, seed: int = 0) -> AliceLetters:
    """Probe and check the layout of Alice's positions ``0..split_at-1`` (module docstring).

    Raises
    ------
    UnsupportedSplitError
        When the reduction is not a prefix-suffix split.
    NotPositionwiseError
        When a position depends on several bits, a bit is read at two positions, or a random x
        encodes to other tokens than the layout predicts.
    """
    s = split_point(reduction.owners(n))
    bit_at, table, unread = probe_positions(reduction, n, np.arange(s), seed)
    return AliceLetters(int(n), int(s), bit_at, table, unread)


def _binary_probes(n: int) -> np.ndarray:
    """``(1 + 2D, n)`` probes, D = bits of n - 1: x = 0, then for each binary digit d the x with
    ``x_i = digit_d(i)`` and its complement. A position that holds bit i alone changes in exactly
    one probe of each pair (the one with x_i = 1), so the pairs spell i: O(n log n) encoded tokens
    where one probe per bit would encode n^2."""
    D = max(1, int(n - 1).bit_length())
    digits = ((np.arange(n)[None, :] >> np.arange(D)[:, None]) & 1).astype(np.uint8)  # (D, n)
    pairs = np.stack([digits, 1 - digits], axis=1).reshape(2 * D, n)  # (2D, n): digit d, then its complement
    return np.vstack([np.zeros((1, n), np.uint8), pairs])


def probe_positions(reduction, n: int, positions, seed: int = 0, *, repeated: bool = False):
    """``(bit_at, tokens, unread)`` of :class:`AliceLetters` for the given sequence positions
    (Alice's prefix, or her own positions anywhere for a partition split), probed and checked.

    The probes are :func:`_binary_probes`; a position that changes in both probes of a pair, or in
    one of some pairs and neither of others, depends on several bits; two positions that spell the
    same bit write it twice (refused unless ``repeated``: a bit may then be written at several positions,
    each position still holding one bit); then a seeded sample of random x (and the all-ones x) must encode to
    the tokens the layout predicts (which is what makes the layout exact, not the probes).
    """
    positions = np.asarray(positions, dtype=np.int64)
    problem = get_problem(reduction.problem)
    probes = _binary_probes(n)  # (1 + 2D, n)
    tokens = reduction.encode(probes, _bob_rows(problem, n, len(probes)), n).tokens[:, positions]  # (1 + 2D, k)
    base = tokens[0]
    changed = (tokens[1:] != base).reshape(-1, 2, len(positions))  # (D, 2, k): digit d's probe, its complement
    per_pair = changed.sum(axis=1)  # (D, k)
    moved = np.any(per_pair > 0, axis=0)  # (k,) the position depends on x at all
    several = np.any(per_pair > 1, axis=0) | (moved & np.any(per_pair == 0, axis=0))
    bit = (changed[:, 0, :].astype(np.int64) << np.arange(changed.shape[0])[:, None]).sum(axis=0)  # (k,)
    several |= moved & (bit >= n)
    if np.any(several):
        t = int(positions[np.nonzero(several)[0][0]])
        raise NotPositionwiseError(f"{reduction.name}: position {t} depends on several bits of x")
    at = np.nonzero(moved)[0]
    bits = bit[at]
    per_bit = np.bincount(bits, minlength=n)
    if not repeated and np.any(per_bit > 1):
        i = int(np.nonzero(per_bit > 1)[0][0])
        raise NotPositionwiseError(f"{reduction.name}: bit {i} of x is written at several positions")
    bit_at = np.full(len(positions), -1, dtype=np.int64)
    bit_at[at] = bits
    table = np.stack([base, base], axis=1).astype(np.int64)  # (k, 2)
    lit = probes[1:][:, bits].T.astype(bool)  # (m, 2D): the probes in which each moved position's bit is 1
    first_lit = 1 + np.argmax(lit, axis=1)  # (m,) row of tokens with that bit set
    table[at, 1] = tokens[first_lit, at]
    layout = AliceLetters(int(n), len(positions), bit_at, table, np.setdiff1d(np.arange(n), bits))
    rng = np.random.default_rng([int(seed), 11])
    xs = np.vstack([np.ones((1, n), np.uint8), rng.integers(0, 2, size=(CHECK_SAMPLES, n), dtype=np.uint8)])
    got = reduction.encode(xs, _bob_rows(problem, n, len(xs)), n).tokens[:, positions]
    if not np.array_equal(got, layout.prefix_tokens(xs)):
        raise NotPositionwiseError(f"{reduction.name}: the encoding of x is not one bit per position "
                                   "(a random x encodes to other tokens than the probed layout)")
    return bit_at, table, layout.unread
