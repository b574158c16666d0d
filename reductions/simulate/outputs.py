"""What a model pass produces, how it becomes task answers, and the bit-for-bit comparison.

A :class:`ModelRun` holds one pass over a batch, the unsplit model's or Bob's end of a protocol:
the logits at the read positions, the task answers read from them, a generated chain of thought
where there is one, and the final carried state as float64 bit patterns. :func:`compare_runs`
says, per instance, whether two passes agree bit for bit, and gives the largest difference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from commcomp.backend import is_array, is_numpy, namespace_of, to_numpy

__all__ = ["ModelRun", "CotSpec", "cot_spec", "answers_from_logits", "run_from_logits", "compare_runs", "bit_patterns",
           "device_rows_equal"]


@dataclass(frozen=True, eq=False)
class CotSpec:
    """How a chain of thought ends: ``steps`` generated tokens at most, then the answer token that
    follows the first ``eos``; ``true`` / ``false`` are the answer tokens."""

    steps: int
    eos: int
    true: int
    false: int

    def answers(self, generated: np.ndarray) -> np.ndarray:
        """``(B, 1)``: 1 for ``true``, 0 for ``false``, -1 when no answer token follows an ``eos``."""
        gen = np.asarray(generated)
        B, T = gen.shape
        is_eos = gen == self.eos
        has = is_eos.any(axis=1)
        at = np.where(has, np.argmax(is_eos, axis=1) + 1, T)  # position of the answer token
        token = np.where(at < T, gen[np.arange(B), np.minimum(at, T - 1)], -1)
        out = np.where(token == self.true, 1, np.where(token == self.false, 0, -1))
        return out.astype(np.int64)[:, None]


def cot_spec(task, task_n: int) -> CotSpec:
    """The chain of thought of a task that has one (IsTree: a DFS tour of at most 2n - 1 nodes,
    ``[EOS]``, the answer), as a :class:`CotSpec`."""
    from ..tasks.istree import EOS, FALSE, TRUE

    steps = getattr(task, "cot_max_length", None)
    steps = steps(task_n) if callable(steps) else 2 * int(task_n) + 1
    return CotSpec(int(steps), EOS, TRUE, FALSE)


@dataclass(frozen=True, eq=False)
class ModelRun:
    """One model pass over a batch (arrays of the model's namespace: host NumPy, or a device).

    Attributes
    ----------
    logits : ``(B, K, C)`` float64 at the K read positions
    answers : ``(B, K)`` int64 task answers (argmax), or ``(B, K, d)`` float64 for vector answers
    generated : ``(B, T)`` int64 chain-of-thought tokens, or None
    cot_logits : ``(B, T + 1, V)`` float64 before each generated token and after the last, or None
    final_state : ``(B, k)`` uint64 float64 bit patterns of the carried state at the end (on a
        device: the float64 values, compared with their sign bits), or None
    """

    logits: np.ndarray
    answers: np.ndarray
    generated: np.ndarray | None = None
    cot_logits: np.ndarray | None = None
    final_state: np.ndarray | None = None

    @property
    def batch(self) -> int:
        return int(self.logits.shape[0])


def answers_from_logits(logits, answer_kind: str, classes: int | None = None) -> np.ndarray:
    """Task answers from logits ``(B, K, C)``: argmax for bool/symbol answers, the vector itself
    for vector answers (its first ``classes`` entries)."""
    if not is_numpy(logits) and is_array(logits):  # on the device: the argmax is taken there
        xp = namespace_of(logits)
        part = logits[..., :classes] if classes else logits
        return part if answer_kind == "vector" else xp.astype(xp.argmax(part, axis=-1), xp.int64)
    logits = np.asarray(logits)
    if answer_kind == "vector":
        return logits[..., :classes] if classes else logits
    return np.argmax(logits[..., :classes] if classes else logits, axis=-1).astype(np.int64)


def run_from_logits(logits, answer_kind: str, classes: int | None = None) -> ModelRun:
    """A :class:`ModelRun` from logits: a list of ``(B, C)`` arrays, one per read position, or
    ``(B, K, C)`` already stacked; float64 on their own namespace, with their answers.

    >>> run = run_from_logits([np.array([[0.0, 2.0]]), np.array([[3.0, 1.0]])], "bool")
    >>> run.logits.shape, run.answers.tolist()
    ((1, 2, 2), [[1, 0]])
    """
    if isinstance(logits, (list, tuple)):
        xp = namespace_of(*logits)
        logits = xp.stack(logits, axis=1)  # (B, K, C)
    xp = namespace_of(logits)
    logits = xp.astype(logits, xp.float64)
    return ModelRun(logits, answers_from_logits(logits, answer_kind, classes))


def bit_patterns(a) -> np.ndarray:
    """Float64 bit patterns of an array, rows first: ``(B, -1)`` uint64 (NaNs compare equal)."""
    arr = np.ascontiguousarray(to_numpy(a), dtype=np.float64)
    return arr.reshape(arr.shape[0], -1).view(np.uint64)


def device_rows_equal(a, b):
    """Row-wise equality of two arrays of one device namespace, bit for bit: floats compare as
    values with their sign bits (so -0.0 != +0.0) and NaN equals NaN (one canonical NaN: the
    formats' rounding gives no other)."""
    xp = namespace_of(a, b)
    same = a == b
    if xp.isdtype(a.dtype, "real floating"):
        same = xp.logical_or(xp.logical_and(same, xp.signbit(a) == xp.signbit(b)),
                             xp.logical_and(xp.isnan(a), xp.isnan(b)))
    return xp.all(xp.reshape(same, (same.shape[0], -1)), axis=1)


def _rows_equal(a, b) -> np.ndarray:
    if a is None and b is None:
        return None
    if a is None or b is None or tuple(a.shape) != tuple(b.shape):
        return np.zeros((a if a is not None else b).shape[0], dtype=bool)
    if not is_numpy(a) and is_array(a):
        return device_rows_equal(a, b)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f":
        a, b = bit_patterns(a), bit_patterns(b)
    return np.all(a.reshape(a.shape[0], -1) == b.reshape(b.shape[0], -1), axis=1)


def compare_runs(reference: ModelRun, protocol: ModelRun) -> tuple[np.ndarray, float]:
    """``(faithful (B,) bool, largest |difference| of the logits)`` between two passes.

    Faithful means bit for bit: every logit, every generated token and logit of the chain of
    thought, and the final carried state.
    """
    ok = _rows_equal(reference.logits, protocol.logits)
    for a, b in ((reference.generated, protocol.generated), (reference.cot_logits, protocol.cot_logits),
                 (reference.final_state, protocol.final_state)):
        eq = _rows_equal(a, b)
        if eq is not None:
            ok = ok & eq
    ref, got = reference.logits, protocol.logits
    if not is_numpy(ref) and is_array(ref):  # on the device: one scalar comes back
        xp = namespace_of(ref, got)
        diff = xp.abs(xp.astype(ref, xp.float64) - xp.astype(got, xp.float64))
        diff = xp.where(xp.isfinite(diff), diff, xp.zeros_like(diff))
        return ok, float(xp.max(diff)) if math.prod(diff.shape) else 0.0
    diff = np.abs(np.asarray(ref, dtype=np.float64) - np.asarray(got, dtype=np.float64))
    finite = diff[np.isfinite(diff)]
    largest = float(finite.max()) if finite.size else 0.0
    return ok, largest
