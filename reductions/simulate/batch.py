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

from commcomp.backend import is_array, is_numpy, namespace_of
from commcomp.errors import TooLargeError
from commcomp.limits import MAX_EXHAUSTIVE_INSTANCES, MESSAGE_OVERHEAD_BYTES, TOKEN_BYTES, check_memory
from commcomp.protocol import ALICE, BatchTranscript, run_protocol

from ..base import EncodedBatch
from .distinct import DeviceDistinctRows
from .outputs import ModelRun, compare_runs

__all__ = ["BatchResult", "run_batch", "exhaustive_batches", "random_batches", "DistinctMessages",
           "chunk_rows", "position_bytes", "encode_batch", "MAX_EXHAUSTIVE_INSTANCES", "MAX_DEVICE_EXHAUSTIVE_INSTANCES", "check_run_memory"]

MAX_DEVICE_EXHAUSTIVE_INSTANCES = 1 << 29  # on a device backend (INDEX at n = 24 has 24 * 2^24 < 2^29)


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
        if rows and not is_numpy(rows[0]):  # device bits stay on the device
            return namespace_of(*rows).concat(rows, axis=1)
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
    encoded = encode_batch(sim, x, y)
    alice_in, bob_in, public = sim.split.party_inputs(encoded, y, group)
    sink: dict = {}
    t0 = time.perf_counter()
    transcript = run_protocol(sim.split.protocol(alice_runner=alice_runner, sink=sink, observe=observe),
                              alice_in, bob_in, public)
    t1 = time.perf_counter()
    reference = sim.split.reference(encoded, runner=reference_runner, group=group)  # grouped: the x's tree, then each y
    t2 = time.perf_counter()
    faithful, diff = compare_runs(reference, sink["bob"])
    return BatchResult(x, y, encoded, transcript, sink["bob"], reference, faithful, diff,
                       bool(sim.split.exact), sim.problem.evaluate(x, y),
                       sim.reduction.decode(reference.answers, y), t1 - t0, t2 - t1)


def encode_batch(sim, x, y) -> EncodedBatch:
    """``sim.reduction.encode(x, y)`` on the namespace of the model the split runs.

    On a device model (one with a non-NumPy ``xp``: every recurrent architecture, the Transformer
    and the hybrid) the problem bits are uploaded once and the reduction's one (Array API)
    encoder writes the tokens there; the splits then take their parties' columns on the device
    (:func:`~reductions.simulate.running.take_columns`, ``scatter_columns``). A NumPy-only (user)
    encoder takes the counted host fallback (:data:`reductions.base.host_encode_fallbacks`).
    Models with no namespace (the qSA attention-row unit, a NumPy construction) get NumPy tokens.
    """
    return sim.reduction.encode(x, y, sim.n, xp=getattr(sim.model, "xp", None))


MAX_CHUNK_ROWS = 16384


def position_bytes(reduction, n: int) -> int:
    """Bytes a position of an encoded instance takes: ``TOKEN_BYTES``, plus a float64 per feature
    for tasks with ``features`` (Nearest Neighbour's vectors, qSA's rows: ``8 d`` more)."""
    return TOKEN_BYTES + 8 * int(reduction.task.feature_width(reduction.task_size(n)))


def chunk_rows(length: int, rows: int | None = None, bytes_per_position: int = TOKEN_BYTES) -> int:
    """Instances per chunk: ``rows`` when given, else about 2^23 tokens' worth of bytes per chunk
    (fewer rows when each position also carries features: ``bytes_per_position``) and at most
    ``MAX_CHUNK_ROWS``, so a chunk's per-row arrays stay small (measured here, filling a newly
    allocated array: 3.8 ns a float64 at 64 MiB, 1.0 ns at 32 MiB, 0.3 ns at 16 MiB, the larger
    ones paying in page faults; 16,384 rows of a width-64 LSTM's final states are 16 MiB)."""
    if rows is not None:
        return max(1, int(rows))
    per_row = max(1, length) * max(1, int(bytes_per_position))
    return int(max(512, min(MAX_CHUNK_ROWS, ((1 << 23) * TOKEN_BYTES) // per_row)))


def check_run_memory(what: str, reduction, n: int, rows: int | None = None, *, kept: int = 0,
                     kept_name: str = "instances", message_bits: int = 0, at_most: int | None = None) -> None:
    """Refuse, before any batch is drawn, a run whose working set passes the memory limit.

    One chunk of instances at the task's length (:func:`chunk_rows`; :func:`position_bytes` a
    position: ``TOKEN_BYTES`` a token, and its features' float64s) must fit, and so must ``kept``
    packed messages of ``message_bits`` bits (the distinct-message count keeps up to one per
    instance); ``at_most``: the run's whole instance count when it is known to be smaller than a
    chunk (a sampled run draws no more). See :mod:`commcomp.limits`.
    """
    def chunk_bytes(v: int) -> int:
        length, per = int(reduction.length(v)), position_bytes(reduction, v)
        size = chunk_rows(length, rows, per)
        return per * (size if at_most is None else min(size, int(at_most))) * length

    per_n = position_bytes(reduction, n)
    what_per = f"{TOKEN_BYTES} bytes a token" + ("" if per_n == TOKEN_BYTES else
                                                 f" and {per_n - TOKEN_BYTES} of features a position at this n")
    check_memory(what, "n", int(n), chunk_bytes, low=reduction.min_n,
                 detail=f"one chunk of instances, {what_per}")
    if kept:
        per = (int(message_bits) + 7) // 8 + MESSAGE_OVERHEAD_BYTES
        check_memory(what, kept_name, int(kept), lambda k: k * per,
                     detail=f"up to one {per}-byte message kept per instance")


def exhaustive_batches(problem, n: int, rows: int, limit: int = MAX_EXHAUSTIVE_INSTANCES):
    """Every ``(x, y)`` of ``problem`` at size ``n``, x-major, in chunks of about ``rows``
    instances that each hold whole x's (every y of an x in one chunk). Yields ``(x, y)``.
    More than ``limit`` instances raise :class:`TooLargeError` (verify allows
    ``MAX_DEVICE_EXHAUSTIVE_INSTANCES`` on a device backend)."""
    xs, ys = problem.alice_inputs(n), problem.bob_inputs(n)
    total = len(xs) * len(ys)
    if total > limit:
        raise TooLargeError(f"{problem.name} at n = {n} has {total} instances; exhaustive runs stop at "
                            f"{limit}{' on the CPU (a GPU backend allows more)' if limit < MAX_DEVICE_EXHAUSTIVE_INSTANCES else ''}")
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
    """Counts distinct message rows over many batches, exactly.

    Rows are packed to bytes and keyed by a 64-bit hash of their words (:func:`_row_keys`); what
    gets sorted and merged is the keys, and only rows whose keys are equal are compared, byte for
    byte. When two different rows share a key (a collision), the rows involved are counted by
    ``np.unique`` over the bytes themselves, so the count never depends on the hash. Each
    batch's distinct rows are kept as added (never copied again); a width-64 LSTM's float32
    message is 4096 bits, and sorting 64-bit keys instead of 512-byte rows is what makes
    counting 2^20 such messages, in 1281 batches, take about a second here (the old
    ``np.unique(rows, axis=0)`` took 28 us a row within one batch).

    Examples
    --------
    >>> d = DistinctMessages()
    >>> d.add(np.array([[0, 1, 1], [0, 1, 1], [1, 0, 0]])); d.add(np.array([[1, 0, 0], [1, 1, 1]]))
    >>> d.count
    3
    """

    def __init__(self, key=None):
        self._key = _row_keys if key is None else key  # rows (B, w) uint8 -> keys (B,) uint64
        self._rows: list[np.ndarray] = []  # each batch's distinct rows, packed (b, w) uint8
        self._start = [0]  # id of the first row of each batch: ids number all kept rows
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []  # (keys, ids) not merged yet
        self._merged = (np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64))  # distinct, by key
        self._device = None  # DeviceDistinctRows, for rows of a device namespace

    def add(self, rows) -> None:
        """Add message rows (a :class:`BitRows` or a ``(B, bits)`` 0/1 array; rows of a device
        namespace are counted there, :class:`DeviceDistinctRows`)."""
        arr = getattr(rows, "array", rows)
        if is_array(arr) and not is_numpy(arr):
            if self._device is None:
                self._device = DeviceDistinctRows()
            self._device.add(arr)
            return
        arr = np.asarray(arr)
        packed = np.packbits(arr, axis=1)  # (B, ceil(bits / 8))
        if packed.shape[1] == 0:  # messages of no bits: one distinct message (if any)
            packed = np.zeros((min(1, arr.shape[0]), 1), dtype=np.uint8)
        if self._rows and packed.shape[1] != self._rows[0].shape[1]:
            raise ValueError(f"messages of {packed.shape[1]} bytes among messages of {self._rows[0].shape[1]}")
        keys, local = _distinct(self._key(packed), np.arange(len(packed)), lambda ids: packed[ids])
        self._rows.append(packed[local])
        self._pending.append((keys, self._start[-1] + np.arange(len(local))))
        self._start.append(self._start[-1] + len(local))
        if len(self._pending) > 64:
            self._merge()

    def _fetch(self, ids: np.ndarray) -> np.ndarray:
        """The kept rows with ids ``ids``."""
        starts = np.asarray(self._start[:-1])
        part = np.searchsorted(starts, ids, side="right") - 1
        out = np.empty((len(ids), self._rows[0].shape[1]), dtype=np.uint8)
        for p in np.unique(part):
            sel = part == p
            out[sel] = self._rows[p][ids[sel] - starts[p]]
        return out

    def _merge(self) -> tuple[np.ndarray, np.ndarray]:
        if self._pending:
            parts = [self._merged] + self._pending
            keys = np.concatenate([k for k, _ in parts])
            ids = np.concatenate([i for _, i in parts])
            self._merged, self._pending = _distinct(keys, ids, self._fetch), []
        return self._merged

    @property
    def count(self) -> int:
        if self._device is not None:
            if self._rows:
                raise ValueError("host and device message rows mixed in one count")
            return self._device.count
        return int(self._merge()[0].shape[0])


def _distinct(keys: np.ndarray, ids: np.ndarray, fetch) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, ids)`` of the distinct rows among ``ids``, sorted by key; ``fetch(ids)`` gives rows.

    Exact: neighbours in key order with equal keys are compared on their bytes; a run of equal
    rows keeps its first. If equal keys ever hold different rows, every row that shares its key
    with another is counted by ``np.unique`` on the bytes instead.
    """
    order = np.argsort(keys, kind="stable")
    keys, ids = keys[order], ids[order]
    at = np.nonzero(keys[1:] == keys[:-1])[0]  # neighbours with equal keys: (at, at + 1)
    if at.size == 0:
        return keys, ids
    same_row = np.all(fetch(ids[at + 1]) == fetch(ids[at]), axis=1)
    keep = np.ones(len(keys), dtype=bool)
    if same_row.all():
        keep[at + 1] = False
        return keys[keep], ids[keep]
    shared = np.zeros(len(keys), dtype=bool)  # a collision: rows whose key is not theirs alone
    shared[at] = shared[at + 1] = True
    _, first = np.unique(fetch(ids[shared]), axis=0, return_index=True)
    keep[shared] = False
    keep[np.nonzero(shared)[0][first]] = True
    keys, ids = keys[keep], ids[keep]
    order = np.argsort(keys, kind="stable")
    return keys[order], ids[order]


_KEY_MULTIPLIERS = np.random.default_rng(20240601).integers(1, 2 ** 63, size=4096, dtype=np.uint64) * 2 + 1


def _row_keys(rows: np.ndarray) -> np.ndarray:
    """A 64-bit key per byte row ``(B, w)``: its 64-bit words, each mixed and times an odd
    constant, summed modulo 2^64. Equal rows get equal keys; :class:`DistinctMessages` checks
    rows whose keys are equal, so a collision costs time, never the count."""
    B, w = rows.shape
    pad = -w % 8
    if pad:
        rows = np.concatenate([rows, np.zeros((B, pad), dtype=np.uint8)], axis=1)
    words = np.ascontiguousarray(rows).view(np.uint64)  # (B, ceil(w / 8))
    k = words.shape[1]
    mult = _KEY_MULTIPLIERS[np.arange(k) % len(_KEY_MULTIPLIERS)]
    if k > len(_KEY_MULTIPLIERS):  # more words than constants: vary them by position too
        mult = mult + 2 * (np.arange(k, dtype=np.uint64) // len(_KEY_MULTIPLIERS))
    mixed = words ^ (words >> np.uint64(31))
    mixed *= mult  # modulo 2^64
    return np.bitwise_xor.reduce(mixed, axis=1) + mixed.sum(axis=1, dtype=np.uint64)
