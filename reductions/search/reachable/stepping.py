"""Batch-shape-invariant steps: the same state and token give the same bits in any batch.

Merging states across a search is sound only if a step is a function of (state, token) bit for bit
(DESIGN §3, last bullets): numpy's matmul takes other kernels for other shapes, so a row's last
bits can depend on how many rows sit beside it. Here every call of the model gets exactly
``ROWS`` rows: the rows are cut into blocks of ``ROWS`` and the last block is padded with copies
of its first row (padding rows are dropped). Every row of a block goes through the same kernels
and the same code path, whatever the other rows hold; ``tests/reachable/test_reachable_stepping.py``
proves it by stepping the same states in different blocks, at different offsets, beside
different companions.

The message code canonicalises a state: :func:`canonical` returns the packed message bytes of
each row and the state decoded from them (what Bob would hold), so a class of merged inputs
carries exactly the state its message stands for.

On a device namespace (CuPy, torch, array-api-strict) the steps, the message encoding and the
decoded states stay on the device. Merging needs equal keys grouped (``numpy.unique`` over byte
keys: the Array API has no unique-rows with first indices), so :func:`host_keys` is the one place
where the engine moves data to the host on purpose: the message bits are packed into bytes on the
device (exactly :func:`numpy.packbits`'s bytes) and only that ``(B, ceil(bits / 8))`` uint8 array
comes back, once per level, through :func:`commcomp.backend.to_numpy`.

Examples
--------
>>> import numpy as np
>>> from models.registry import build_model
>>> model = build_model("gru", vocab_size=2, width=3, n_outputs=2, precision="fixed:8:4")
>>> s = step_rows(model, model.init_state(3), np.array([0, 1, 1]))
>>> keys, state = canonical(model, s)
>>> keys.shape, bool(np.array_equal(keys[1], keys[2]))
((3, 3), True)
"""

from __future__ import annotations

import numpy as np

from commcomp.backend import is_numpy, namespace_of, to_numpy

from ...simulate.running import concat_rows, take_rows

__all__ = ["ROWS", "step_rows", "run_rows", "canonical", "host_keys", "state_rows_numpy"]

ROWS = 128  # rows per model call: every call has this batch shape


def _blocks(B: int):
    return [(start, min(start + ROWS, B)) for start in range(0, B, ROWS)]


def _padded(state: dict, tokens: np.ndarray, a: int, b: int):
    """Rows a..b-1 of ``state`` and ``tokens`` ``(B, T)``, padded to ``ROWS`` with copies of row a."""
    index = np.arange(a, b)
    if b - a < ROWS:
        index = np.concatenate([index, np.full(ROWS - (b - a), a)])
    return take_rows(state, index), tokens[index]


def run_rows(model, tokens, state=None) -> dict:
    """The state after ``tokens`` ``(B, T)`` from ``state`` (default initial), in blocks of ``ROWS``
    rows; ``T`` may be 0."""
    tokens = np.asarray(tokens, dtype=np.int64)
    B, T = tokens.shape
    state = model.init_state(B) if state is None else state
    if T == 0 or B == 0:
        return state
    parts = []
    for a, b in _blocks(B):
        start, tok = _padded(state, tokens, a, b)
        new, _ = model.run_layers(model.xp.asarray(tok), start)
        parts.append(take_rows(new, np.arange(b - a)))  # an index array: any Array API namespace
    return concat_rows(parts)


def step_rows(model, state: dict, tokens) -> dict:
    """One step of every row: ``tokens`` ``(B,)``; rows in blocks of ``ROWS`` (module docstring)."""
    return run_rows(model, np.asarray(tokens, dtype=np.int64).reshape(-1, 1), state)


def state_rows_numpy(state: dict) -> np.ndarray:
    """The state's arrays flattened in order: ``(B, numbers)`` float64 on the host."""
    parts = [to_numpy(v).reshape(v.shape[0], -1) for v in state.values()]
    return np.concatenate(parts, axis=1).astype(np.float64) if parts else np.zeros((0, 0))


def host_keys(bits) -> np.ndarray:
    """``(B, ceil(L / 8))`` uint8 on the host: the message rows ``bits`` ``(B, L)`` packed as
    :func:`numpy.packbits` packs them (first bit the high bit, zero-padded).

    NumPy bits are packed by NumPy. Bits of another namespace are packed on their device by
    shifts and a sum (disjoint powers of two: the sum is the OR), and the packed bytes are the one
    array that comes to the host, explicitly (:func:`~commcomp.backend.to_numpy`): the engine
    groups equal keys there (module docstring).
    """
    if is_numpy(bits):
        return np.packbits(bits, axis=1)
    xp = namespace_of(bits)
    B, L = bits.shape
    nbytes = -(-L // 8)
    device = getattr(bits, "device", None)
    b = xp.astype(bits, xp.uint8)
    if nbytes * 8 != L:
        b = xp.concat([b, xp.zeros((B, nbytes * 8 - L), dtype=xp.uint8, device=device)], axis=1)
    shifts = xp.arange(7, -1, -1, dtype=xp.uint8, device=device)  # (8,)
    packed = xp.sum(xp.bitwise_left_shift(xp.reshape(b, (B, nbytes, 8)), shifts), axis=-1, dtype=xp.uint8)
    return to_numpy(packed)  # (B, nbytes) uint8: the one transfer of a level


def canonical(model, state: dict) -> tuple[np.ndarray, dict]:
    """``(keys (B, bytes) uint8, decoded state)``: each row's message packed to bytes (on the host,
    :func:`host_keys`), and the state Bob decodes from it (in the model's namespace). Two rows merge
    exactly when their keys are equal."""
    bits = model.state_to_bits(state)
    keys = host_keys(bits.array)  # (B, ceil(bits / 8))
    decoded = model.bits_to_state(bits)
    xp = namespace_of(next(iter(decoded.values()))) if decoded else np
    return keys, {k: xp.asarray(v) for k, v in decoded.items()}
