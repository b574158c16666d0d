"""Near-valid Dyck-(2,2) inputs: the strings a recogniser is most likely to get wrong.

:func:`dyck_adversarial` draws, at task size n (2n brackets, then ``[CLS]``; ids ``( [ ) ] [CLS]``
= 0..4 as in :mod:`.dyck`), equal shares of

* ``flip``: a valid string with one bracket replaced by each of the three other brackets;
* ``depth3``: balanced, correctly typed strings whose depth reaches 3 once (a valid string with
  one depth-2 pair ``a b`` widened to ``a ( ) b``, two brackets dropped elsewhere to keep the length);
* ``swap``: a valid string whose two closers of different type are exchanged (every type count
  still balanced, two pairs mismatched);
* ``far``: one depth-1 bracket around n - 1 depth-2 pairs, the outer closer right or of the other type
  (the match is ``2n - 1`` positions away);
* ``blocks``: n depth-1 pairs ``x x'`` of random types, the last closer right or of the other type
  (the matching opener is the latest of n openers two positions apart);
* ``cls``: a valid string with ``[CLS]`` moved into the brackets, or the last ``[CLS]`` replaced
  by a bracket;

plus the valid strings they came from.  The labels come from the task's own DFA, never from how a
string was made (a flip can, rarely, give another valid string).

Examples
--------
>>> import numpy as np
>>> from reductions.tasks import Dyck
>>> toks = dyck_adversarial(6, np.random.default_rng(0), 70)
>>> toks.shape, int(Dyck().ground_truth(Dyck().make_batch(6, toks)).sum()) < 70
((70, 13), True)
"""

from __future__ import annotations

import numpy as np

from commcomp.errors import InvalidParameterError

__all__ = ["dyck_adversarial", "KINDS"]

KINDS = ("valid", "flip", "depth3", "swap", "far", "blocks", "cls")
_CLS = 4


def _valid(n: int, count: int, rng) -> np.ndarray:
    """``(count, 2n)`` valid Dyck-(2,2) brackets (depth-1 blocks of random depth-2 pairs)."""
    from .dyck import Dyck

    task = Dyck(types=2, depth=2)
    out, have = [], 0
    while have < count:
        b = task.sample(n, max(8, 2 * (count - have)), rng)
        keep = b.tokens[task.ground_truth(b).ravel() == 1, :-1]
        out.append(keep)
        have += len(keep)
    return np.concatenate(out)[:count]


def _with_cls(brackets: np.ndarray) -> np.ndarray:
    return np.concatenate([brackets, np.full((len(brackets), 1), _CLS, dtype=np.int64)], axis=1)


def _pick(mask: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """A uniformly random True column per row of ``mask`` ``(B, L)``, and whether the row has one."""
    keys = np.where(mask, rng.random(mask.shape), -1.0)  # (B, L)
    return np.argmax(keys, axis=1), mask.any(axis=1)


def _depth3(base: np.ndarray, rng) -> np.ndarray:
    """Widen one depth-2 pair (an opener at odd position i, closed at i + 1) to ``a ( ) b`` and drop
    one depth-1 pair ``x y`` elsewhere to keep the length (truncate when there is none); rows with
    no depth-2 pair stay as they are (the labels say so)."""
    B, L = base.shape
    pos = np.arange(L)[None, :]  # (1, L)
    i, has = _pick((pos % 2 == 1) & (base < 2), rng)  # (B,)
    inner = rng.integers(0, 2, size=B)
    t = np.arange(L + 2)[None, :]  # (1, L + 2) positions of the widened string
    src = np.where(t <= i[:, None], t, t - 2).clip(0, L - 1)
    wide = np.take_along_axis(base, src, axis=1)  # (B, L + 2)
    wide = np.where(t == i[:, None] + 1, inner[:, None], np.where(t == i[:, None] + 2, inner[:, None] + 2, wide))
    nxt = np.concatenate([base[:, 1:], np.full((B, 1), -1)], axis=1)
    block = (pos % 2 == 0) & (base < 2) & (nxt == base + 2) & (pos != i[:, None] - 1)
    j, found = _pick(block, rng)
    j = np.where(found, np.where(j > i, j + 2, j), L)  # in the widened string; L: truncate
    u = np.arange(L)[None, :]
    out = np.take_along_axis(wide, np.where(u < j[:, None], u, u + 2).clip(0, L + 1), axis=1)  # (B, L)
    return np.where(has[:, None], out, base)


def dyck_adversarial(n: int, rng, count: int = 64) -> np.ndarray:
    """``count`` near-valid inputs ``(count, 2n + 1)`` int64 (module docstring), all kinds mixed."""
    if n < 2 or count < len(KINDS):
        raise InvalidParameterError(f"dyck adversarial inputs: need n >= 2 and count >= {len(KINDS)}")
    L = 2 * n
    share = count // len(KINDS)
    base = _valid(n, share, rng)  # (share, L)
    rows = np.arange(share)
    parts = [base]
    flip = base.copy()
    where = rng.integers(0, L, size=share)
    flip[rows, where] = (flip[rows, where] + rng.integers(1, 4, size=share)) % 4
    parts.append(flip)
    parts.append(_depth3(base, rng))
    swap = base.copy()  # exchange a ")" and a "]"
    (a, has_a), (b, has_b) = _pick(base == 2, rng), _pick(base == 3, rng)
    both = rows[has_a & has_b]
    swap[both, a[both]], swap[both, b[both]] = 3, 2
    parts.append(swap)
    outer = rng.integers(0, 2, size=share)
    inner = rng.integers(0, 2, size=(share, n - 1))
    far = np.empty((share, L), dtype=np.int64)
    far[:, 0] = outer
    far[:, 1:L - 1:2], far[:, 2:L - 1:2] = inner, inner + 2
    far[:, L - 1] = np.where(rng.random(share) < 0.5, outer + 2, 3 - outer)  # its closer or the other
    parts.append(far)
    kinds = rng.integers(0, 2, size=(share, n))
    blocks = np.empty((share, L), dtype=np.int64)
    blocks[:, 0::2], blocks[:, 1::2] = kinds, kinds + 2
    blocks[:, L - 1] = np.where(rng.random(share) < 0.5, blocks[:, L - 1], 5 - blocks[:, L - 1])
    parts.append(blocks)
    tokens = [_with_cls(p) for p in parts]
    cls = _with_cls(base)
    move = rng.random(share) < 0.5
    at = rng.integers(0, L, size=share)
    cls[rows[move], at[move]] = _CLS
    cls[rows[~move], L] = rng.integers(0, 4, size=int((~move).sum()))
    tokens.append(cls)
    out = np.concatenate(tokens)
    extra = count - len(out)
    if extra > 0:
        out = np.concatenate([out, _with_cls(_valid(n, extra, rng))])
    return out.astype(np.int64)
