"""Index Lookup with the index first: a constant-size ReLU Elman RNN (BHBK-IL-order, §4.1 [A]).

With the query last (``reductions.tasks.index_lookup``: s_0 ... s_{n-1}, p) an RNN must carry
all n symbols (BHBK-IL-RNN: ``m·p >= n``).  Put the query first and 4 numbers of
``ceil(log2 n) + 1`` bits suffice: store p, count the symbols, copy s_p when it passes.

Task format (index first: :mod:`reductions.tasks.index_first`, registered as
``index-first-lookup``; ids as in Index Lookup)::

    position  0    1    2    ...  n
    token     p    s_0  s_1  ...  s_{n-1}      (answer s_p, read at position n)

Ids ``0 .. A-1`` are the symbols, ``A + p`` the query for index p (``A`` = alphabet size).

The model is the registry's ``elman`` layer with ``nonlinearity="relu"``, width 4, hidden units
``h = (r+, r-, g, a)``::

    r+ = ReLU(r+ + u_r+)            r+ = p - j before symbol j while j <= p, then 0
    r- = ReLU(r- - r+ + u_r-)       r- = j - p before symbol j once j > p, else 0
    g  = ReLU(u_g - A·r+ - A·r-)    g  = s_j if j = p (r+ = r- = 0), else 0: the copy
    a  = ReLU(a + g)                a  = s_p one step after the copy, and kept

with per-token inputs ``u = E[token]`` (``W_x = I``, ``b = 0``): the query p gives
``u = (p, -1, 0, 0)``, a symbol c gives ``u = (-1, 1, c, 0)``.  Derivation: at t = 0 the state
is 0, so ``r+ = p``, ``r- = ReLU(-1) = 0``, ``g = a = 0``.  Before symbol j <= p, ``r+ = p - j``
and ``r- = 0``; symbol j gives ``r+ = ReLU(p - j - 1)`` and ``r- = ReLU(1 - (p - j)) = [j = p]``.
After p, ``r+ = 0`` and ``r-`` counts up (``ReLU(r- + 1)``).  So ``r+ + r- = |p - j|`` when
symbol j arrives, and ``g = ReLU(c - A·|p - j|)`` is ``c`` at ``j = p`` and 0 elsewhere
(``c <= A - 1 < A``).  ``a`` adds ``g`` one step late and never changes again, so at the end
exactly one of ``a``, ``g`` holds ``s_p`` and the other is 0.  Readout: logit of class c is
``2c·(a + g) - c²``, largest at ``c = a + g`` (``(v - c)^2`` is smallest there).

Every hidden value is an integer in ``[0, n]``.  The model is exact in any format that holds
``0 .. max(n, A) - 1`` exactly (``r-`` may saturate, it only has to stay >= 1 once past p):
``fixed:P:0`` with ``P = ceil(log2 max(n, A)) + 1`` (:func:`index_first_bits`), or an IEEE
format whose integers reach ``n - 1`` (float16: n <= 2049).  State: 4 numbers of
``ceil(log2 n) + 1`` bits, against ``m·p >= n`` with the index last.

Examples
--------
>>> import numpy as np
>>> c = make_index_first_rnn(6, "fixed:4:0")
>>> c.model.state_numbers(), c.model.state_bits()
(4, 16)
>>> tokens = np.array([[2 + 3, 1, 0, 0, 1, 1, 0],        # p = 3: s_3 = 1
...                    [2 + 5, 1, 1, 1, 1, 1, 0]])       # p = 5: s_5 = 0
>>> c.predict(tokens).tolist()
[[1], [0]]
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.errors import InvalidParameterError
from models.recurrent.base import RecurrentModel
from models.recurrent.elman import ElmanLayer

from .base import Construction, ConstructionSpec, check_options, precision_of

__all__ = ["make_index_first_rnn", "index_first_bits", "all_index_first_inputs", "SPECS"]


def index_first_bits(n: int, alphabet: int = 2) -> int:
    """The smallest P at which ``fixed:P:0`` keeps the model exact: ``r+`` counts down from
    ``p <= n - 1`` and ``g``, ``a`` hold symbols ``<= A - 1``, so both must fit in
    ``2^(P-1) - 1``; ``r-`` may saturate (it only has to stay >= 1 once past p).

    >>> [index_first_bits(n) for n in (1, 2, 4, 5, 1024, 8192)]
    [2, 2, 3, 4, 11, 14]
    """
    return max(2, (max(n, alphabet) - 1).bit_length() + 1)


def make_index_first_rnn(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """The width-4 ReLU Elman RNN for index-first Index Lookup (module docstring derives it).

    Parameters
    ----------
    n : int
        Number of symbols (N = n + 1).
    precision : str or Precision, optional
        Exact whenever the format holds the integers ``0 .. max(n, A) - 1``
        (``fixed:P:0`` with P = :func:`index_first_bits`).
    alphabet : int
        Symbol count A (default 2).
    """
    opts = check_options("index-first-rnn", options, {"alphabet"})
    A = int(opts.get("alphabet", 2))
    if A < 2:
        raise InvalidParameterError(f"index-first-rnn: alphabet must be >= 2, got {A}")
    V = A + n
    # embedding = the per-token input u of each unit (r+, r-, g, a)
    E = np.zeros((V, 4))
    E[:A] = np.stack([-np.ones(A), np.ones(A), np.arange(A), np.zeros(A)], axis=1)  # symbol c
    E[A:] = np.stack([np.arange(n), -np.ones(n), np.zeros(n), np.zeros(n)], axis=1)  # query p
    # h @ W_h: row = from unit, column = to unit (r+, r-, g, a)
    W_h = np.array([[1.0, -1.0, -A, 0.0],     # r+ keeps itself, lowers r-, blocks the copy
                    [0.0, 1.0, -A, 0.0],      # r- keeps itself, blocks the copy
                    [0.0, 0.0, 0.0, 1.0],     # g feeds a (one step late)
                    [0.0, 0.0, 0.0, 1.0]])    # a keeps itself
    layer = ElmanLayer(4, 4, {"W_x": np.eye(4), "W_h": W_h, "b": np.zeros(4)}, nonlinearity="relu")
    classes = np.arange(A, dtype=np.float64)
    readout = np.zeros((4, A))
    readout[2] = readout[3] = 2 * classes  # 2c·(g + a)
    prec = precision_of(precision)
    model = RecurrentModel("elman", E, [layer], readout, -classes ** 2, precision=prec,
                           config={"arch": "elman", "vocab_size": V, "width": 4, "n_outputs": A,
                                   "layers": 1, "nonlinearity": "relu"})
    report = {"alphabet": A, "state_numbers": model.state_numbers(),
              "min_fixed_bits": index_first_bits(n, A),
              "min_state_bits": 4 * index_first_bits(n, A),
              "index_last_lower_bound_bits": n}
    return Construction("index-first-rnn", "index-first-lookup", n, n + 1, model, 4, 1, 1, prec,
                        report, "BHBK-IL-order", "[D✓]", (n,), "symbol", A)


def all_index_first_inputs(n: int, alphabet: int = 2) -> np.ndarray:
    """Every index-first input at size n: ``A^n`` symbol strings x n queries, ``(A^n·n, n+1)``."""
    A = int(alphabet)
    r = np.arange(A ** n, dtype=np.int64)
    symbols = np.empty((A ** n, n), dtype=np.int64)
    for j in range(n - 1, -1, -1):
        symbols[:, j], r = r % A, r // A
    query = A + np.tile(np.arange(n), A ** n)[:, None]
    return np.concatenate([query, np.repeat(symbols, n, axis=0)], axis=1)


def _inputs(n: int) -> np.ndarray:
    return all_index_first_inputs(n)


SPECS = (
    ConstructionSpec(
        name="index-first-rnn", task="index-first-lookup", arch="elman", layers=1,
        source="BHBK-IL-order", tag="[D✓]", builder=make_index_first_rnn, exhaustive_max_n=14,
        inputs=_inputs, width_formula="4 (constant); numbers of ceil(log2(n+1)) + 1 bits",
        description="store p, count the symbols, copy s_p as it passes (index first)",
        aliases=("il-first", "index-first")),
)
