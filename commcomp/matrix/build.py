"""Communication matrices: M[r, c] = f(alice_inputs[r], bob_inputs[c]), built vectorised.

Rows are Alice's inputs and columns Bob's, both in the order the caller (or the problem) lists them.
The matrix is a C-contiguous ``(R, C)`` numpy bool array; every measure in :mod:`commcomp.matrix`
takes such an array (or anything :func:`as_matrix` accepts).

Size limit: ``R * C <= MAX_CELLS`` (2^28 cells, 256 MiB of bool; square problems up to n = 14).
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidParameterError, TooLargeError

__all__ = ["MAX_CELLS", "as_matrix", "communication_matrix", "problem_matrix", "reduce_matrix",
           "ceil_log2", "first_positions"]

MAX_CELLS = 2 ** 28
_CHUNK_PAIRS = 2 ** 20  # (x, y) pairs handed to f per call: bounds the temporary batch arrays


def ceil_log2(k: int) -> int:
    """``ceil(log2 k)`` for an integer ``k >= 1``, exactly (no floating point)."""
    return (int(k) - 1).bit_length()


def as_matrix(matrix) -> np.ndarray:
    """A 0/1 matrix as a C-contiguous 2-D bool array.

    Raises
    ------
    InvalidParameterError
        If ``matrix`` is not 2-D, is empty, or holds values other than 0 and 1.

    Examples
    --------
    >>> as_matrix([[1, 0], [0, 1]]).dtype
    dtype('bool')
    """
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise InvalidParameterError(f"a communication matrix is 2-D, got shape {a.shape}")
    if a.dtype != np.bool_:
        if a.size and not np.all((a == 0) | (a == 1)):
            raise InvalidParameterError("a communication matrix holds only 0 and 1")
        a = a.astype(bool)
    if 0 in a.shape:
        raise InvalidParameterError(f"a communication matrix needs a row and a column, got {a.shape}")
    return np.ascontiguousarray(a)


def communication_matrix(f, alice_inputs, bob_inputs, *, max_cells: int = MAX_CELLS) -> np.ndarray:
    """The communication matrix of a vectorised f on the given input sets.

    Parameters
    ----------
    f : callable
        ``f(x_batch, y_batch) -> (B,)`` bool (or 0/1) array, where ``x_batch`` stacks B of Alice's
        inputs along axis 0 and ``y_batch`` B of Bob's.
    alice_inputs : array (R, ...)
        Alice's inputs, one per row of the matrix.
    bob_inputs : array (C, ...)
        Bob's inputs, one per column.
    max_cells : int
        Refuse matrices with more than this many cells (default :data:`MAX_CELLS` = 2^28).

    Returns
    -------
    (R, C) bool array with ``M[r, c] = f(alice_inputs[r], bob_inputs[c])``.

    Raises
    ------
    TooLargeError
        If ``R * C > max_cells``.
    InvalidParameterError
        If f returns the wrong shape or non-Boolean values.

    Notes
    -----
    Pairs are formed with ``np.repeat`` / ``np.tile`` over blocks of whole rows, so f is called once
    per block of about 2^20 pairs, never once per pair.

    Examples
    --------
    >>> import numpy as np
    >>> xs = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.uint8)
    >>> eq = lambda x, y: np.all(x == y, axis=1)
    >>> communication_matrix(eq, xs, xs).astype(int).tolist()
    [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    """
    xs, ys = np.asarray(alice_inputs), np.asarray(bob_inputs)
    if xs.ndim == 0 or ys.ndim == 0:
        raise InvalidParameterError("input sets must be arrays whose first axis lists the inputs")
    rows, cols = len(xs), len(ys)
    if rows * cols > max_cells:
        raise TooLargeError(f"communication matrix {rows}x{cols} has {rows * cols} cells; "
                            f"the limit is {max_cells} cells")
    out = np.empty((rows, cols), dtype=bool)
    if rows == 0 or cols == 0:
        return out
    step = max(1, _CHUNK_PAIRS // cols)  # whole rows per call of f
    for start in range(0, rows, step):
        block = xs[start:start + step]  # (b, ...)
        b = len(block)
        x = np.repeat(block, cols, axis=0)  # (b*C, ...): each x repeated C times
        y = np.tile(ys, (b,) + (1,) * (ys.ndim - 1))  # (b*C, ...): the whole y list b times
        vals = np.asarray(f(x, y))
        if vals.shape != (b * cols,):
            raise InvalidParameterError(f"f returned shape {vals.shape} for a batch of {b * cols} "
                                        f"pairs; expected ({b * cols},)")
        if vals.dtype != np.bool_ and not np.all((vals == 0) | (vals == 1)):
            raise InvalidParameterError("f must return Boolean (or 0/1) values")
        out[start:start + b] = vals.reshape(b, cols).astype(bool)
    return out


def problem_matrix(problem, n: int) -> np.ndarray:
    """The communication matrix of a registered problem at size n.

    Parameters
    ----------
    problem : str or :class:`commcomp.problems.Problem`
        A registry name (``index``, ``equality``, ``disjointness``, ``inner-product``,
        ``greater-than``, or an alias) or a problem object.
    n : int
        The problem size.

    Examples
    --------
    >>> int(problem_matrix("equality", 2).sum())
    4
    >>> problem_matrix("index", 3).shape
    (8, 3)
    """
    from ..problems import get_problem

    prob = get_problem(problem)
    xs, ys = prob.alice_inputs(n), prob.bob_inputs(n)
    if len(xs) * len(ys) > MAX_CELLS:
        raise TooLargeError(f"{prob.name} at n={n}: matrix {len(xs)}x{len(ys)} exceeds the limit "
                            f"of {MAX_CELLS} cells")
    return communication_matrix(prob.evaluate, xs, ys)


def reduce_matrix(matrix: np.ndarray, *, drop_zero: bool = False):
    """The matrix with duplicate rows and columns (and, optionally, zero ones) removed.

    Returns ``(reduced, row_class, col_class)``: ``reduced`` (R', C') with distinct rows in order of
    first appearance; ``row_class[r]`` is the reduced row equal to row r (``-1`` for a dropped zero
    row); likewise ``col_class``. Rows and columns keep their first-appearance order.

    Examples
    --------
    >>> import numpy as np
    >>> red, rc, cc = reduce_matrix(np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=bool))
    >>> red.astype(int).tolist(), rc.tolist(), cc.tolist()
    ([[1, 0], [0, 1]], [0, 0, 1], [0, 0, 1])
    """
    m = as_matrix(matrix)
    red, row_class = _unique_rows(m, drop_zero)
    redt, col_class = _unique_rows(np.ascontiguousarray(red.T), drop_zero)
    return np.ascontiguousarray(redt.T), row_class, col_class


def first_positions(classes: np.ndarray, k: int) -> np.ndarray:
    """For each class 0..k-1 the first position holding it (classes may hold -1: ignored).

    Examples
    --------
    >>> first_positions(np.array([1, -1, 0, 1, 0]), 2).tolist()
    [2, 0]
    """
    first = np.full(k, -1, dtype=np.int64)
    pos = np.flatnonzero(classes >= 0)
    labels, at = np.unique(classes[pos], return_index=True)
    first[labels] = pos[at]
    return first


def _unique_rows(m: np.ndarray, drop_zero: bool):
    """Distinct rows of m in first-appearance order, and each row's class."""
    if m.shape[0] == 0:
        return m, np.zeros(0, dtype=np.int64)
    packed = np.packbits(m, axis=1)  # (R, ceil(C/8)) uint8
    if packed.shape[1] == 0:
        packed = np.zeros((m.shape[0], 1), dtype=np.uint8)
    _, first, inverse = np.unique(packed, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(first, kind="stable")  # classes by first appearance
    rank_of = np.empty_like(order)
    rank_of[order] = np.arange(len(order))
    row_class = rank_of[inverse]
    reps = first[order]
    red = m[reps]
    if drop_zero:
        nonzero = red.any(axis=1)
        remap = np.full(len(reps), -1, dtype=np.int64)
        remap[nonzero] = np.arange(int(nonzero.sum()))
        row_class = remap[row_class]
        red = red[nonzero]
    return np.ascontiguousarray(red), row_class.astype(np.int64)
