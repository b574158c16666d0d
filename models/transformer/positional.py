"""Positional information for Transformers: learned absolute, sinusoidal, an arbitrary fixed table.

A :class:`Positional` turns position indices into vectors added to the token embeddings.

* ``"learned"``: a table ``pos_emb`` ``(N_max, d)`` that is a parameter of the model (random
  initialisation N(0, 1), like ``torch.nn.Embedding``).
* ``"fixed"``: the same kind of table, given by the caller and documented as not learned; the
  explicit constructions (theorems.md §7, C2 onward) put an arbitrary function of the position
  here (JL vectors, the "partner" block of C3, ...).
* ``"sinusoidal"``: Vaswani et al.: ``PE[p, 2i] = sin(p / base^(2i/d))`` and
  ``PE[p, 2i+1] = cos(p / base^(2i/d))``, computed on the fly for any position (no table, no
  ``N_max``).
* ``"none"``: zeros (positional information only through causal masking or the recurrence).

Rows are computed elementwise from the position index alone, so row ``p`` of ``rows(arange(N))``
equals ``rows([p])`` bit for bit: what Bob computes for his one position is what the unsplit
forward pass uses there.

Examples
--------
>>> import numpy as np
>>> pe = Positional("sinusoidal", d_model=4)
>>> np.round(pe.rows(np.arange(2)), 4).tolist()
[[0.0, 1.0, 0.0, 1.0], [0.8415, 0.5403, 0.01, 1.0]]
>>> Positional("fixed", d_model=2, table=np.eye(3, 2)).rows(np.array([1, 0])).tolist()
[[0.0, 1.0], [1.0, 0.0]]
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.backend import is_array, namespace_of
from commcomp.errors import InvalidParameterError

__all__ = ["Positional", "sinusoidal_rows", "POSITIONAL_KINDS"]

POSITIONAL_KINDS = ("learned", "fixed", "sinusoidal", "none")


def sinusoidal_rows(positions, d_model: int, base: float = 10000.0):
    """Sinusoidal encodings of ``positions`` ``(n,)`` (ints): an ``(n, d_model)`` float64 array.

    Runs on the namespace of ``positions`` (NumPy for lists).

    Examples
    --------
    >>> sinusoidal_rows(np.array([0]), 3).tolist()
    [[0.0, 1.0, 0.0]]
    """
    xp = namespace_of(positions) if is_array(positions) else namespace_of()
    pos = xp.asarray(positions) if is_array(positions) else xp.asarray(np.asarray(positions))
    pos = xp.astype(pos, xp.float64)
    d = int(d_model)
    pair = np.arange(d) // 2                                            # (d,)
    inv_freq = xp.asarray(float(base) ** (-(2.0 * pair) / d), dtype=xp.float64)  # (d,)
    angle = xp.reshape(pos, (-1, 1)) * xp.reshape(inv_freq, (1, -1))  # (n, d)
    is_even = xp.asarray(np.arange(d) % 2 == 0)
    return xp.where(is_even, xp.sin(angle), xp.cos(angle))  # (n, d)


class Positional:
    """Position vectors of width ``d_model`` for one of :data:`POSITIONAL_KINDS`.

    Parameters
    ----------
    kind : {"learned", "fixed", "sinusoidal", "none"}
    d_model : int
    table : array_like, optional
        ``(N_max, d_model)`` for ``"learned"`` and ``"fixed"`` (the model's ``pos_emb``).
    base : float
        The sinusoidal base (10000).

    Raises
    ------
    InvalidParameterError
        On an unknown kind, a missing table or a table of the wrong width.
    """

    def __init__(self, kind: str, d_model: int, table=None, base: float = 10000.0):
        if kind not in POSITIONAL_KINDS:
            raise InvalidParameterError(f"positional must be one of {POSITIONAL_KINDS} or a table, "
                                        f"got {kind!r}")
        self.kind, self.d_model, self.base = kind, int(d_model), float(base)
        self.table = None
        if kind in ("learned", "fixed"):
            if table is None:
                raise InvalidParameterError(f"positional {kind!r} needs a table (N_max, d_model)")
            self.table = table if is_array(table) else np.asarray(table, dtype=np.float64)
            if self.table.ndim != 2 or self.table.shape[1] != self.d_model:
                raise InvalidParameterError(f"positional table must be (N_max, {self.d_model}), "
                                            f"got {tuple(self.table.shape)}")

    @property
    def has_table(self) -> bool:
        """Whether the positions come from a table (``pos_emb``)."""
        return self.table is not None

    @property
    def max_len(self) -> float:
        """Number of positions available (``inf`` without a table)."""
        return float(self.table.shape[0]) if self.has_table else math.inf

    def check_length(self, n_positions: int) -> None:
        """Raise :class:`InvalidParameterError` if ``n_positions`` exceeds the table."""
        if n_positions > self.max_len:
            raise InvalidParameterError(f"{n_positions} positions, but the positional table has "
                                        f"{int(self.max_len)} rows")

    def rows(self, positions, xp=None):
        """Vectors of ``positions`` ``(n,)``: ``(n, d_model)`` on namespace ``xp`` (default NumPy)."""
        xp = xp if xp is not None else namespace_of()
        pos = positions if is_array(positions) and namespace_of(positions) is xp else \
            xp.asarray(np.asarray(positions, dtype=np.int64))
        if self.kind == "sinusoidal":
            return sinusoidal_rows(pos, self.d_model, self.base)  # (n, d)
        if self.kind == "none":
            return xp.zeros((pos.shape[0], self.d_model), dtype=xp.float64)  # (n, d)
        table = self.table if namespace_of(self.table) is xp else xp.asarray(np.asarray(self.table))
        return xp.take(table, xp.astype(pos, xp.int64), axis=0)  # (n, d)

    def coordinate_abs_max(self) -> np.ndarray:
        """``(d_model,)``: the largest ``|PE[p, r]|`` over every position ``p`` (host NumPy).

        Used for bounds both parties can compute in advance (the value grid of exact attention).
        """
        if self.kind == "sinusoidal":
            return np.ones(self.d_model)
        if self.kind == "none":
            return np.zeros(self.d_model)
        return np.max(np.abs(np.asarray(self.table)), axis=0)

    def __repr__(self) -> str:
        size = f", N_max={int(self.max_len)}" if self.has_table else ""
        return f"Positional({self.kind!r}, d_model={self.d_model}{size})"
