"""The zero-sum problem both solvers answer: ternary ``δ != 0`` with ``δ @ D = 0`` exactly.

``D`` is a ``(k, d)`` int64 matrix (one row per bit of Alice's, :mod:`.terms`). A solver returns a
:class:`ZeroSumSearch`: the solutions it found (each re-checked here by :func:`is_solution`, in
wrapping int64 arithmetic, which is exact for these values: :mod:`.terms`), whether it *proved*
that none exists (only an exhaustive pass over every subset can), and what it tried.

Examples
--------
>>> import numpy as np
>>> D = np.array([[3, 1], [5, 2], [2, 1], [7, 7]])
>>> is_solution(D, np.array([1, -1, 1, 0]))        # 3 - 5 + 2 = 0 and 1 - 2 + 1 = 0
True
>>> is_solution(D, np.array([0, 0, 0, 0])), is_solution(D, np.array([2, -1, -1, 0]))
(False, False)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ZeroSumSearch", "is_solution", "canonical", "dedupe"]


def is_solution(D, delta) -> bool:
    """Whether ``delta`` is nonzero, has entries in {-1, 0, 1} and ``delta @ D == 0`` exactly."""
    delta = np.asarray(delta)
    if delta.shape != (D.shape[0],) or not np.any(delta) or np.any(np.abs(delta) > 1):
        return False
    s = np.asarray(delta, dtype=np.int64) @ np.asarray(D, dtype=np.int64)  # wraps: exact (module docstring)
    return bool(np.all(s == 0))


def canonical(delta) -> np.ndarray:
    """``delta`` as int8 with its first nonzero entry positive (``δ`` and ``-δ`` are one collision)."""
    d = np.asarray(delta, dtype=np.int8)
    nz = np.flatnonzero(d)
    return -d if nz.size and d[nz[0]] < 0 else d


def dedupe(vectors) -> tuple:
    """Distinct canonical vectors, in order."""
    seen, out = set(), []
    for v in vectors:
        c = canonical(v)
        key = c.tobytes()
        if key not in seen:
            seen.add(key)
            out.append(c)
    return tuple(out)


@dataclass(frozen=True)
class ZeroSumSearch:
    """What one solver did.

    Attributes
    ----------
    method : str
        ``sorting`` or ``lattice``.
    vectors : tuple of ``(k,)`` int8
        Verified solutions (canonical, distinct).
    proved_none : bool
        True only when an exhaustive pass over all ``2^k`` subsets found that every sum is distinct.
    tried : dict
        The parameters and counts of every phase (JSON-ready).
    note : str
    seconds : float
    """

    method: str
    vectors: tuple
    proved_none: bool
    tried: dict = field(default_factory=dict)
    note: str = ""
    seconds: float = 0.0

    @property
    def found(self) -> bool:
        return bool(self.vectors)

    def to_json(self) -> dict:
        return {"method": self.method, "found": self.found, "solutions": len(self.vectors),
                "proved_none": self.proved_none, "tried": self.tried, "note": self.note,
                "seconds": self.seconds}
