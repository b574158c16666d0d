"""C1: nearly orthogonal position codes (BHBK-JL, theorems.md §7 C1), and binary codes.

Every construction here addresses positions by *sign codes*: position i gets a row
``s_i ∈ {-1, +1}^k`` (stored as int8), a query ``β·s_p`` scores position j with
``β·<s_p, s_j>``, an integer times β.  The attention weight of position j relative to the target
p is ``exp(-β·(k - <s_p, s_j>))``, so what matters is the *leak*

    leak(β) = max_p  Σ_{j≠p} exp(-β·(k - <s_p, s_j>)),

the total weight of the wrong positions when the target has weight 1: the target receives
``α_p = 1 / (1 + leak)`` of the attention (plus whatever other positions score).  Two kinds:

* ``"jl"`` (the reference's C1): i.i.d. uniform signs, ``k ≥ (4 ln N + 2 ln(1/δ)) / γ²``.
  Hoeffding gives ``P(|<s_i, s_j>| ≥ γk) ≤ 2 exp(-kγ²/2)``; a union bound over the
  N(N-1)/2 pairs gives success probability ≥ 1 - δ.  The draw is *certified*: the exact
  largest off-diagonal overlap ``g = max_{i≠j} <s_i, s_j>`` is computed (O(N² k), blocked) and
  the draw is repeated until ``g ≤ γk``.  Then ``leak(β) ≤ (N - 1)·exp(-β(k - g))``.
* ``"binary"`` (commcomp's improvement, same role): ``s_i`` = the k = ⌈log₂ N⌉ bits of i
  mapped to ±1.  Here ``<s_p, s_j> = k - 2·hamming(p, j)``, so the overlaps are *not* small
  (γ = 1 - 2/k), but the leak is a product:
  ``Σ_{j≠p} exp(-2β·hamming(p, j)) ≤ (1 + e^{-2β})^k - 1`` (equality when N = 2^k).  So
  ``β = ½ ln(k / λ)`` already gives leak ≈ λ: the width is exactly ⌈log₂ N⌉ and β is tiny,
  which is what makes N = 65536 cheap.

Examples
--------
>>> c = binary_codes(8)
>>> c.k, c.max_overlap, c.signs[5].tolist()           # 5 = 0b101, least significant bit first
(3, 1, [1, -1, 1])
>>> round(c.leak(2.0), 4)                              # (1 + e^-4)^3 - 1
0.056
>>> j = jl_codes(100, gamma=0.5, seed=0)
>>> j.k == jl_dimension(100, 0.5), j.gamma <= 0.5, j.certified
(True, True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from commcomp.errors import InvalidParameterError

__all__ = ["Codes", "jl_dimension", "binary_codes", "jl_codes", "max_overlap", "make_codes",
           "beta_for_leak", "CODE_KINDS", "CERTIFY_LIMIT"]

CODE_KINDS = ("binary", "jl")
CERTIFY_LIMIT = 1 << 15  # above this many rows an exact O(N²k) certificate takes minutes


def jl_dimension(N: int, gamma: float = 0.5, delta: float = 0.5) -> int:
    """``k = ⌈(4 ln N + 2 ln(1/δ)) / γ²⌉``: random signs of this length have every off-diagonal
    ``|<T(i), T(j)>| ≤ γ`` with probability ≥ 1 - δ (Hoeffding + union bound).

    Examples
    --------
    >>> [jl_dimension(N, 0.5) for N in (20, 100, 400, 1000, 8192)]   # theorems.md C1
    [54, 80, 102, 117, 150]
    """
    if N < 1 or not 0 < gamma < 1 or not 0 < delta < 1:
        raise InvalidParameterError(f"need N >= 1, 0 < gamma < 1, 0 < delta < 1; got {N}, {gamma}, {delta}")
    return max(1, math.ceil((4 * math.log(max(N, 2)) + 2 * math.log(1 / delta)) / gamma ** 2))


@dataclass(frozen=True, eq=False)
class Codes:
    """Sign codes of N positions: ``signs`` ``(N, k)`` int8 in {-1, +1} (row i is ``s_i``).

    ``max_overlap`` is the exact ``max_{i≠j} <s_i, s_j>`` when ``certified`` (else the bound the
    kind guarantees, or None); ``gamma = max_overlap / k`` is the achieved C1 γ.
    """

    signs: np.ndarray
    kind: str
    max_overlap: int | None
    certified: bool
    draws: int = 1
    gamma_bound: float | None = None

    @property
    def N(self) -> int:
        return int(self.signs.shape[0])

    @property
    def k(self) -> int:
        return int(self.signs.shape[1])

    @property
    def gamma(self) -> float | None:
        return None if self.max_overlap is None else self.max_overlap / self.k

    @property
    def distinct(self) -> bool:
        """Every row differs from every other (overlap < k): needed for any β to work."""
        return self.max_overlap is not None and self.max_overlap < self.k

    def leak(self, beta: float) -> float:
        """Bound on ``max_p Σ_{j≠p} exp(-β (k - <s_p, s_j>))`` (module docstring)."""
        if self.N < 2:
            return 0.0
        if self.kind == "binary":
            return math.expm1(self.k * math.log1p(math.exp(-2.0 * beta)))
        if self.max_overlap is None or self.max_overlap >= self.k:
            return math.inf
        return (self.N - 1) * math.exp(-beta * (self.k - self.max_overlap))

    def report(self) -> dict:
        """JSON-friendly facts: kind, k, achieved and bound γ, certified, draws."""
        return {"codes": self.kind, "k": self.k, "max_overlap": self.max_overlap,
                "gamma_achieved": None if self.gamma is None else round(self.gamma, 6),
                "gamma_bound": self.gamma_bound, "codes_certified": self.certified,
                "code_draws": self.draws}


def binary_codes(N: int, k: int | None = None) -> Codes:
    """Row i = the k bits of i (least significant first) as ±1; ``k`` defaults to ⌈log₂ N⌉.

    Raises
    ------
    InvalidParameterError
        If ``2^k < N`` (two positions would share a code).
    """
    kmin = max(1, (int(N) - 1).bit_length())
    k = kmin if k is None else int(k)
    if k < kmin:
        raise InvalidParameterError(f"binary codes of {N} positions need k >= {kmin}, got {k}")
    bits = (np.arange(N, dtype=np.int64)[:, None] >> np.arange(k)) & 1  # (N, k)
    signs = (2 * bits - 1).astype(np.int8)
    return Codes(signs, "binary", k - 2 if N >= 2 else -k, True)


#: Rows of a sign table's Gram matrix computed at once by :func:`max_abs_overlap`: (2048, V) float32
#: (124 MB at V = 15104), so Nearest Neighbour's table at its crossover (15,105 tokens) is checked
#: without its (V, V) matrix (1.8 GB).
GRAM_BLOCK_ROWS = 2048


def max_abs_overlap(signs: np.ndarray, block: int | None = None) -> int:
    """Exact ``max |<s_i, s_j>|`` over i != j of a sign matrix ``(V, k)`` (0 for one row), by blocks of
    ``block`` (default :data:`GRAM_BLOCK_ROWS`) rows; float32 products of +-1 entries are exact
    integers (|<s_i, s_j>| <= k < 2^24).

    >>> max_abs_overlap(np.array([[1, 1, 1], [-1, -1, 1], [1, -1, -1]]), block=1)
    1
    """
    rows = GRAM_BLOCK_ROWS if block is None else block
    f = np.asarray(signs).astype(np.float32)  # (V, k)
    most = 0
    for start in range(0, len(f), rows):
        gram = f[start:start + rows] @ f.T  # (b, V)
        gram[np.arange(len(gram)), start + np.arange(len(gram))] = 0  # the diagonal
        most = max(most, int(np.abs(gram).max(initial=0)))
    return most


def max_overlap(signs: np.ndarray, block: int = 2048, stop_above: int | None = None) -> int:
    """Exact ``max_{i≠j} <s_i, s_j>`` of a sign matrix ``(N, k)`` (blocked float32 products,
    exact: the sums are integers below 2^24).  Stops early once ``stop_above`` is exceeded."""
    S = np.asarray(signs, dtype=np.float32)
    N, k = S.shape
    if k >= 1 << 24:
        raise InvalidParameterError("k too large for an exact float32 certificate")
    best = -k
    for i0 in range(0, N, block):
        i1 = min(N, i0 + block)
        G = S[i0:i1] @ S[i0:].T  # (b, N - i0): pairs (i, j) with j >= i0
        G[np.arange(i1 - i0), np.arange(i1 - i0)] = -k  # the diagonal
        G[np.tril_indices(i1 - i0, -1)] = -k             # j < i inside the block: seen as (j, i)
        best = max(best, int(G.max()))
        if stop_above is not None and best > stop_above:
            break
    return best


def jl_codes(N: int, gamma: float = 0.5, delta: float = 0.5, *, k: int | None = None, seed=0,
             max_draws: int = 30, certify: bool | None = None) -> Codes:
    """C1: random ±1 codes of length ``k`` (default :func:`jl_dimension`), certified.

    Draws until the exact largest overlap is ``≤ γk`` (expected ``< 1/(1-δ)`` draws at the
    default k), at most ``max_draws`` times; if none succeeds (a ``k`` below the formula) the draw
    with the smallest largest overlap is returned, with its true γ.  Above
    :data:`CERTIFY_LIMIT` rows the certificate is skipped unless ``certify=True``.
    """
    if N < 1:
        raise InvalidParameterError(f"N must be >= 1, got {N}")
    k = jl_dimension(N, gamma, delta) if k is None else int(k)
    if k < 1:
        raise InvalidParameterError(f"k must be >= 1, got {k}")
    certify = N <= CERTIFY_LIMIT if certify is None else bool(certify)
    rng = np.random.default_rng(seed)
    limit = math.floor(gamma * k)
    best = None
    for draw in range(1, max_draws + 1):
        signs = np.where(rng.random((N, k)) < 0.5, -1, 1).astype(np.int8)  # (N, k)
        if not certify:
            return Codes(signs, "jl", None, False, draw, gamma)
        g = max_overlap(signs, stop_above=None if best is None else best[0]) if N >= 2 else -k
        if best is None or g < best[0]:
            best = (g, signs, draw)
        if g <= limit:
            break
    g, signs, _ = best
    return Codes(signs, "jl", g, True, draw, gamma)


def make_codes(N: int, kind: str = "binary", *, k: int | None = None, gamma: float = 0.5,
               delta: float = 0.5, seed=0) -> Codes:
    """Codes of one of :data:`CODE_KINDS` (``k``: the code length; default per kind)."""
    if kind == "binary":
        return binary_codes(N, k)
    if kind == "jl":
        return jl_codes(N, gamma, delta, k=k, seed=seed)
    raise InvalidParameterError(f"codes must be one of {CODE_KINDS}, got {kind!r}")


def beta_for_leak(leak_of, target: float, hi: float = 1.0) -> float:
    """The smallest β (to 1e-9 relative) with ``leak_of(β) ≤ target`` for a decreasing function.

    Examples
    --------
    >>> b = beta_for_leak(lambda beta: math.exp(-beta), 0.25)
    >>> round(b, 6) == round(math.log(4), 6)
    True
    """
    if not target > 0:
        raise InvalidParameterError(f"target leak must be > 0, got {target}")
    while leak_of(hi) > target:
        hi *= 2.0
        if hi > 1e12:
            raise InvalidParameterError("no temperature reaches the target leak (codes not distinct?)")
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if leak_of(mid) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-9 * hi:
            break
    return hi
