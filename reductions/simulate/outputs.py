"""What a model pass produces, how it becomes task answers, and the bit-for-bit comparison.

A :class:`ModelRun` holds one pass over a batch, the unsplit model's or Bob's end of a protocol:
the logits at the read positions, the task answers read from them, a generated chain of thought
where there is one, and the final carried state as float64 bit patterns. :func:`compare_runs`
says, per instance, whether two passes agree bit for bit, and gives the largest difference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from commcomp.backend import to_numpy

__all__ = ["ModelRun", "CotSpec", "cot_spec", "answers_from_logits", "compare_runs", "bit_patterns"]


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
    """One model pass over a batch (host arrays).

    Attributes
    ----------
    logits : ``(B, K, C)`` float64 at the K read positions
    answers : ``(B, K)`` int64 task answers (argmax), or ``(B, K, d)`` float64 for vector answers
    generated : ``(B, T)`` int64 chain-of-thought tokens, or None
    cot_logits : ``(B, T + 1, V)`` float64 before each generated token and after the last, or None
    final_state : ``(B, k)`` uint64 float64 bit patterns of the carried state at the end, or None
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
    logits = np.asarray(logits)
    if answer_kind == "vector":
        return logits[..., :classes] if classes else logits
    return np.argmax(logits[..., :classes] if classes else logits, axis=-1).astype(np.int64)


def bit_patterns(a) -> np.ndarray:
    """Float64 bit patterns of an array, rows first: ``(B, -1)`` uint64 (NaNs compare equal)."""
    arr = np.ascontiguousarray(to_numpy(a), dtype=np.float64)
    return arr.reshape(arr.shape[0], -1).view(np.uint64)


def _rows_equal(a, b) -> np.ndarray:
    if a is None and b is None:
        return None
    if a is None or b is None or np.shape(a) != np.shape(b):
        return np.zeros(np.shape(a if a is not None else b)[0], dtype=bool)
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
    diff = np.abs(np.asarray(reference.logits, dtype=np.float64) - np.asarray(protocol.logits, dtype=np.float64))
    finite = diff[np.isfinite(diff)]
    largest = float(finite.max()) if finite.size else 0.0
    return ok, largest
