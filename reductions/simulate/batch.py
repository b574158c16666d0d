"""One batch of instances through a simulation: encode, run the protocol and the unsplit model, check.

:func:`run_batch` is the short function that runs the pipeline of DESIGN §1 in order::

    (x, y) --encode--> tokens + owners --split--> protocol (run_protocol) --> Bob's output
                                        \\-------> unsplit model ----------> reference output
    faithful = Bob's output == reference bit for bit;  correct = decoded answer == f(x, y)

:func:`exhaustive_batches` and :func:`random_batches` feed it every instance of a size (x-major,
in chunks) or seeded random ones; :class:`DistinctMessages` counts distinct messages across chunks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from commcomp.errors import TooLargeError
from commcomp.protocol import ALICE, BatchTranscript, run_protocol

from ..base import EncodedBatch
from .outputs import ModelRun, compare_runs

__all__ = ["BatchResult", "run_batch", "exhaustive_batches", "random_batches", "DistinctMessages",
           "chunk_rows", "MAX_EXHAUSTIVE_INSTANCES"]

MAX_EXHAUSTIVE_INSTANCES = 1 << 26


@dataclass(frozen=True, eq=False)
class BatchResult:
    """A batch run through a simulation.

    Attributes
    ----------
    x, y : the problem instances
    encoded : EncodedBatch
    transcript : BatchTranscript
        Every message of every instance, and Bob's decoded answers as the outputs.
    protocol, reference : ModelRun
        Bob's end of the protocol and the unsplit model on the same batch.
    faithful : ``(B,)`` bool
        Bob's output equals the unsplit model's bit for bit (outputs, chain of thought, state).
    max_abs_difference : float
        Largest difference between the two passes' logits (what inexact runs report instead).
    exact : bool
        Whether bit-for-bit equality is what the arithmetic promises.
    truth : ``(B,)`` bool
        f(x, y).
    model_answer : ``(B,)`` bool
        The answer decoded from the unsplit model's output.
    seconds_protocol, seconds_reference : float
    """

    x: np.ndarray
    y: np.ndarray
    encoded: EncodedBatch
    transcript: BatchTranscript
    protocol: ModelRun
    reference: ModelRun
    faithful: np.ndarray
    max_abs_difference: float
    exact: bool
    truth: np.ndarray
    model_answer: np.ndarray
    seconds_protocol: float
    seconds_reference: float

    @property
    def answer(self) -> np.ndarray:
        """Bob's decoded answer ``(B,)`` bool."""
        return np.asarray(self.transcript.outputs, dtype=bool).reshape(-1)

    @property
    def correct(self) -> np.ndarray:
        return self.answer == self.truth

    @property
    def bits_sent(self) -> int:
        return self.transcript.bits_sent

    def alice_messages(self) -> np.ndarray:
        """Everything Alice sent, ``(rows, bits)`` uint8: one row per protocol instance (per x when
        the batch was run in groups of one x and all its y's)."""
        rows = [m.rows.array for m in self.transcript.messages if m.sender == ALICE]
        return np.concatenate(rows, axis=1) if rows else np.zeros((self.transcript.batch, 0), np.uint8)


def run_batch(sim, x, y, *, alice_runner: str = "plain", reference_runner: str = "plain",
              group: int = 1, observe=None) -> BatchResult:
    """Encode ``(x, y)``, run ``sim``'s protocol and the unsplit model on the same batch, compare.

    ``alice_runner`` / ``reference_runner``: ``"plain"`` or ``"prefix-tree"`` (recurrent models;
    rows that share a prefix share its steps). ``group = G``: the batch is x-major with G
    consecutive instances per x, and a recurrent protocol sends one message per x (exhaustive
    runs). ``observe(party, view)`` sees every party view.
    """
    x, y = np.asarray(x), np.asarray(y)
    if group > 1 and (x.shape[0] % group or np.any(x[::group].repeat(group, axis=0) != x)):
        raise ValueError(f"x is not x-major in groups of {group}")
    encoded = sim.reduction.encode(x, y, sim.n)
    alice_in, bob_in, public = sim.split.party_inputs(encoded, y, group)
    sink: dict = {}
    t0 = time.perf_counter()
    transcript = run_protocol(sim.split.protocol(alice_runner=alice_runner, sink=sink, observe=observe),
                              alice_in, bob_in, public)
    t1 = time.perf_counter()
    reference = sim.split.reference(encoded, runner=reference_runner)
    t2 = time.perf_counter()
    faithful, diff = compare_runs(reference, sink["bob"])
    return BatchResult(x, y, encoded, transcript, sink["bob"], reference, faithful, diff,
                       bool(getattr(sim.split, "exact", True)), sim.problem.evaluate(x, y),
                       sim.reduction.decode(reference.answers, y), t1 - t0, t2 - t1)


def chunk_rows(length: int, rows: int | None = None) -> int:
    """Instances per chunk: ``rows`` when given, else about 2^23 tokens per chunk."""
    if rows is not None:
        return max(1, int(rows))
    return int(max(512, min(65536, (1 << 23) // max(1, length))))


def exhaustive_batches(problem, n: int, rows: int):
    """Every ``(x, y)`` of ``problem`` at size ``n``, x-major, in chunks of about ``rows``
    instances that each hold whole x's (every y of an x in one chunk). Yields ``(x, y)``."""
    xs, ys = problem.alice_inputs(n), problem.bob_inputs(n)
    total = len(xs) * len(ys)
    if total > MAX_EXHAUSTIVE_INSTANCES:
        raise TooLargeError(f"{problem.name} at n = {n} has {total} instances; exhaustive runs stop at "
                            f"{MAX_EXHAUSTIVE_INSTANCES}")
    per = max(1, rows // len(ys))
    for start in range(0, len(xs), per):
        block = xs[start:start + per]
        x = np.repeat(block, len(ys), axis=0)
        y = np.tile(ys, (len(block),) + (1,) * (ys.ndim - 1))
        yield x, y


def random_batches(problem, n: int, instances: int, rows: int, rng: np.random.Generator):
    """``instances`` random instances from ``problem.sample``, in chunks of ``rows``."""
    done = 0
    while done < instances:
        size = min(rows, instances - done)
        yield problem.sample(n, size, rng)
        done += size


class DistinctMessages:
    """Counts distinct message rows over many batches (packed bits, merged with ``np.unique``)."""

    def __init__(self):
        self._parts: list[np.ndarray] = []
        self._rows = 0

    def add(self, rows) -> None:
        """Add message rows (a :class:`BitRows` or a ``(B, bits)`` 0/1 array)."""
        arr = np.asarray(getattr(rows, "array", rows))
        packed = np.packbits(arr, axis=1)
        if packed.shape[1] == 0:
            packed = np.zeros((min(1, arr.shape[0]), 1), dtype=np.uint8)
        self._parts.append(np.unique(packed, axis=0))
        self._rows += self._parts[-1].shape[0]
        if len(self._parts) > 64:
            self._merge()

    def _merge(self) -> np.ndarray:
        if not self._parts:
            return np.zeros((0, 1), dtype=np.uint8)
        merged = np.unique(np.concatenate(self._parts, axis=0), axis=0)
        self._parts = [merged]
        return merged

    @property
    def count(self) -> int:
        return int(self._merge().shape[0])
