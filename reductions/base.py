"""Reductions from two-party problems to sequence tasks: the :class:`Reduction` value type.

A reduction maps a batch of problem instances (x for Alice, y for Bob) to task inputs,
says who holds each position (the owner mask), and decodes the task's answers back to
f(x, y). It is correct when, for every (x, y),

    decode(task.ground_truth(encode(x, y))[at output_positions], y) == f(x, y),

and its owner mask is honest: a position is Alice's when its content depends only on x,
Bob's when only on y, public when on neither. :func:`reductions.check.check_reduction`
checks both.

Split kinds
-----------
``prefix-suffix``
    Every Alice position comes before every Bob position (public positions anywhere). A
    recurrent model is simulated one way (§8.1): Alice runs up to her last position and sends
    the state. This is also a partition, so 1-layer Transformer simulations (§8.3) apply too.
``partition``
    Any split of the positions; only the 1-layer Transformer simulation applies.
``interleaved-partition``
    A partition that alternates inside blocks (the Dyck reductions, §8.9). No prefix-suffix
    split can work there: a bounded Dyck language is regular, so a constant-size RNN
    recognises it and its one-way communication is O(1).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import array_api_compat
import array_api_compat.numpy as _host_xp  # the NumPy namespace the encoders run on the host
import numpy as np

from commcomp.backend import is_numpy, to_device, to_numpy
from commcomp.errors import InvalidParameterError, UnsupportedSplitError
from commcomp.problems import get_problem
from commcomp.protocol.owners import OWNER_NAMES, Owner

from .tasks.base import Task, TaskBatch, check_size

__all__ = ["PUBLIC", "ALICE", "BOB", "OWNER_NAMES", "SPLIT_KINDS", "EncodedBatch", "Reduction",
           "owners_from_runs", "describe_owners", "host_encode_fallbacks"]

# Reduction name -> batches encoded on the host and uploaded as tokens because the reduction's
# encoder is NumPy-only (``array_api=False``; Reduction.encode with a device ``xp``): the documented
# host fallback.
host_encode_fallbacks: Counter = Counter()

PUBLIC, ALICE, BOB = Owner.PUBLIC, Owner.ALICE, Owner.BOB  # the owner codes, defined in commcomp.protocol.owners
SPLIT_KINDS = ("prefix-suffix", "partition", "interleaved-partition")


def owners_from_runs(*runs: tuple[int, int]) -> np.ndarray:
    """An owner mask from ``(owner, count)`` runs, e.g. ``owners_from_runs((ALICE, 3), (BOB, 1))``.

    Examples
    --------
    >>> owners_from_runs((ALICE, 2), (PUBLIC, 1), (BOB, 1)).tolist()
    [1, 1, 0, 2]
    """
    return np.concatenate([np.full(count, owner, dtype=np.int8) for owner, count in runs])


def describe_owners(owners) -> str:
    """One character per position: ``A`` Alice, ``B`` Bob, ``.`` public.

    Examples
    --------
    >>> describe_owners([1, 1, 0, 2])
    'AA.B'
    """
    return "".join(".AB"[int(o)] for o in np.asarray(owners).ravel())


def _upload_int64(xp, a):
    """Host integers ``a`` as int64 on namespace ``xp``: uploaded in the narrowest unsigned type that
    holds them (problem bits are uint8: 1/8 of the int64 bytes cross the bus), widened there."""
    a = np.asarray(a)
    if a.dtype in (np.uint8, np.bool_):  # the problem bits: no scan needed
        return xp.astype(to_device(xp, a, np.uint8), xp.int64)
    if a.size and a.dtype.kind in "iu" and int(a.min()) >= 0:
        for narrow in (np.uint8, np.uint16, np.uint32):
            if int(a.max()) <= np.iinfo(narrow).max:
                return xp.astype(to_device(xp, a, narrow), xp.int64)
    return to_device(xp, a, np.int64)


@dataclass(frozen=True, eq=False)
class EncodedBatch:
    """What an encoder produces: the task batch and who holds each position.

    Attributes
    ----------
    task_batch : TaskBatch
        ``tokens (B, N)`` (and ``features`` where the task has them); ``answers`` is None.
    owners : numpy.ndarray
        ``(N,)`` int8 with PUBLIC = 0, ALICE = 1, BOB = 2; the same for every instance of a size.
    n : int
        The problem size the instances came from (the task's size is ``task_batch.n``).
    """

    task_batch: TaskBatch
    owners: np.ndarray
    n: int

    @property
    def tokens(self) -> np.ndarray:
        return self.task_batch.tokens

    def positions(self, owner: int) -> np.ndarray:
        """Positions held by ``owner`` (PUBLIC, ALICE or BOB)."""
        return np.nonzero(self.owners == owner)[0]


@dataclass(frozen=True, eq=False)
class Reduction:
    """A reduction from a two-party problem to a task.

    Attributes
    ----------
    name : str
        ``"<problem>-><task>"``.
    problem : str
        Registry name of the problem (``commcomp.problems``).
    task : Task
        The task instance the encoder writes (its parameters fixed: e.g. ``Dyck(2, 1)``).
    split : str
        One of ``SPLIT_KINDS``.
    source, section, tag : str
        The reference catalogue's theorem id, the section that gives the reduction (``§8.4``),
        and its tag (``[D]``, ``[A]``...).
    encoder : callable ``(xp, x, y, n) -> tokens`` or ``-> TaskBatch``
        The reduction's one encoder, vectorised over the batch: x and y arrive as int64 arrays of
        namespace ``xp`` and the tokens (and features, for tasks that have them) are arrays of
        ``xp``. Returning plain tokens is enough for token-only tasks. See ``array_api``.
    array_api : bool
        True (every registered reduction): ``encoder`` uses Array API operations of ``xp`` only
        (:mod:`reductions.device_ops`: no integer-array setitem, no NumPy call), so the same code
        runs on NumPy (``array_api_compat.numpy``) and on a device namespace, where only the
        problem bits are uploaded (see :meth:`encode`); instance-independent constants (a public
        table) are made there with :func:`reductions.device_ops.constant_table`. False: a
        NumPy-only encoder (a user's ``make_reduction(encode=...)``), always called with NumPy;
        a device run encodes on the host and uploads the tokens (and features), counted in
        :data:`host_encode_fallbacks`.
    owners_of : callable ``n -> (N,)`` owner codes
    decoder : callable ``(outputs, y) -> (B,) bool``
        Run by Bob, so it may read y but never x. ``outputs`` are the task's answers at
        ``output_positions(n)``: ``(B, K)``, or ``(B, K, d)`` for vector answers.
    read_positions : callable ``n -> positions`` or None
        Where Bob reads the task's output(s); None means the task's ``output_positions``.
    task_size : callable ``n -> task size parameter``
        Default: the identity.
    query_fixed : bool
        True when the tokens at the output positions are public constants, so Alice knows the
        attention query there without hearing from Bob (one-way 1-layer Transformer
        simulation, §8.3 step 1). False when Bob (or Alice) must supply it.
    output_owner : int
        Who reads the answer: always Bob here.
    notes : str
        Anything a simulation must know (shown by ``commcomp list``).
    min_n : int
        Smallest problem size the encoding supports.
    """

    name: str
    problem: str
    task: Task
    split: str
    source: str
    section: str
    tag: str
    encoder: Callable
    owners_of: Callable[[int], np.ndarray]
    decoder: Callable
    read_positions: Callable[[int], np.ndarray] | None = None
    task_size: Callable[[int], int] = field(default=lambda n: n)
    query_fixed: bool = False
    output_owner: int = BOB
    notes: str = ""
    min_n: int = 1
    array_api: bool = True

    def __post_init__(self):
        if self.split not in SPLIT_KINDS:
            raise InvalidParameterError(f"split must be one of {SPLIT_KINDS}, got {self.split!r}")

    @property
    def task_name(self) -> str:
        return self.task.name

    def check_n(self, n) -> int:
        return check_size(self.name, n, self.min_n)

    def length(self, n) -> int:
        """Sequence length N of the encoded input at problem size n."""
        return self.task.length(self.task_size(self.check_n(n)))

    def owners(self, n) -> np.ndarray:
        """``(N,)`` int8 owner mask at problem size n."""
        owners = np.asarray(self.owners_of(self.check_n(n)), dtype=np.int8)
        if owners.shape != (self.length(n),) or not np.all(np.isin(owners, (PUBLIC, ALICE, BOB))):
            raise InvalidParameterError(f"{self.name}: owners must be ({self.length(n)},) codes 0/1/2")
        return owners

    def split_point(self, n) -> int:
        """For a prefix-suffix reduction, the first position Bob runs: one after Alice's last.

        Alice runs the model on positions ``[0, split_point)`` (public ones among them) and
        sends her state; Bob runs ``[split_point, N)``.

        Raises
        ------
        UnsupportedSplitError
            When the reduction is not prefix-suffix.
        """
        if self.split != "prefix-suffix":
            raise UnsupportedSplitError(f"{self.name} is {self.split}, not prefix-suffix")
        alice = np.nonzero(self.owners(n) == ALICE)[0]
        return int(alice.max()) + 1 if alice.size else 0

    def output_positions(self, n) -> np.ndarray:
        """Positions (in the task sequence) whose outputs the decoder reads."""
        n = self.check_n(n)
        if self.read_positions is None:
            return self.task.output_positions(self.task_size(n))
        return np.asarray(self.read_positions(n), dtype=np.int64).reshape(-1)

    def answer_columns(self, n) -> np.ndarray:
        """Indices into the task's answers ``(B, K, ...)`` of ``output_positions(n)``."""
        task_pos = self.task.output_positions(self.task_size(self.check_n(n)))
        wanted = self.output_positions(n)
        cols = np.searchsorted(task_pos, wanted)
        if np.any(cols >= task_pos.size) or np.any(task_pos[np.minimum(cols, task_pos.size - 1)] != wanted):
            raise InvalidParameterError(f"{self.name}: read positions {wanted.tolist()} are not task outputs")
        return cols

    def encode(self, x, y, n, xp=None) -> EncodedBatch:
        """Task inputs and the owner mask for a batch of instances ``x (B, n)``, ``y``.

        ``xp``: the namespace the tokens should live on (None or NumPy: NumPy tokens, the
        encoder run on ``array_api_compat.numpy``). On another namespace, x and y are uploaded
        once (:func:`commcomp.backend.to_device`, counted) and the same encoder builds the tokens
        (and the features, for tasks that have them) there; a NumPy-only encoder
        (``array_api=False``) runs on the host and its tokens and features are uploaded: the
        host fallback, counted in :data:`host_encode_fallbacks` and in the upload count.

        Examples
        --------
        >>> import array_api_strict as xps
        >>> from reductions.lookup import index_to_index_lookup as r
        >>> x, y = np.array([[1, 0, 1]]), np.array([2])
        >>> r.encode(x, y, 3, xp=xps).tokens.shape, r.encode(x, y, 3).tokens.tolist()
        ((1, 4), [[1, 0, 1, 4]])
        """
        n = self.check_n(n)
        x = np.asarray(x)
        y = np.asarray(y)
        if x.ndim != 2 or x.shape[1] != n or y.shape[0] != x.shape[0]:
            raise InvalidParameterError(f"{self.name}: expected x of shape (B, {n}) and y with B rows, "
                                        f"got {x.shape} and {y.shape}")
        on_host = xp is None or array_api_compat.is_numpy_namespace(xp)
        if not on_host and self.array_api:  # the problem bits go up, tokens are built there
            out = self.encoder(xp, _upload_int64(xp, x), _upload_int64(xp, y), n)
            if is_numpy(getattr(out, "tokens", out)):  # a NumPy encoding in disguise would move data unseen
                raise InvalidParameterError(f"{self.name}: the encoder gave NumPy tokens, not {xp.__name__}'s")
        else:  # int64: no uint8 overflow
            out = self.encoder(_host_xp, x.astype(np.int64), y.astype(np.int64), n)
        if not isinstance(out, TaskBatch):
            out = self.task.make_batch(self.task_size(n), out)
        if out.tokens.shape != (x.shape[0], self.length(n)):
            raise InvalidParameterError(f"{self.name}: encoder gave tokens {out.tokens.shape}, expected "
                                        f"{(x.shape[0], self.length(n))}")
        if not on_host and not self.array_api:  # the host fallback: tokens (and features) uploaded
            host_encode_fallbacks[self.name] += 1
            features = None if out.features is None else to_device(xp, out.features)
            out = TaskBatch(to_device(xp, out.tokens), features, out.answers, out.meta)
        return EncodedBatch(out, self.owners(n), n)

    def task_answers(self, encoded: EncodedBatch) -> np.ndarray:
        """The task's own ground truth at the read positions: ``(B, K, ...)``."""
        answers = np.asarray(self.task.ground_truth(encoded.task_batch.on_host()))  # NumPy tasks
        if answers.ndim == 1:
            answers = answers[:, None]
        return answers[:, self.answer_columns(encoded.n)]

    def answer_classes(self, n, cot: bool = False) -> int:
        """Readout outputs a model needs at size n: 2 for bool answers, the alphabet for symbols,
        the vector's dimension for vector answers, the vocabulary for a chain of thought (a
        language-model head).

        Examples
        --------
        >>> from reductions.registry import get_reduction
        >>> get_reduction("index-lookup").answer_classes(4), get_reduction("qsa").answer_classes(3)
        (2, 2)
        """
        task, task_n = self.task, self.task_size(n)
        if cot:
            return task.vocab_size(task_n)
        if task.answer_kind == "bool":
            return 2
        if task.answer_kind == "symbol":
            if callable(getattr(task, "answer_values", None)):  # a task whose answers are fewer than its tokens
                return int(task.answer_values(task_n))
            for attr in ("alphabet", "values"):
                if isinstance(getattr(task, attr, None), int):
                    return int(getattr(task, attr))
            return task.vocab_size(task_n)
        x, y = get_problem(self.problem).sample(n, 1, np.random.default_rng(0))  # one instance's answer width
        return int(self.task_answers(self.encode(x, y, n)).shape[-1])

    def decode(self, outputs, y) -> np.ndarray:
        """f(x, y) from the task outputs at ``output_positions`` (and Bob's y): ``(B,)`` bool."""
        # the decoders are NumPy code: a device's (B, K) answers come to the host here, on purpose
        out = np.asarray(self.decoder(to_numpy(outputs), np.asarray(y)))
        return out.astype(bool).reshape(-1)

    def __repr__(self) -> str:
        return f"<reduction {self.name} ({self.split}, {self.source} {self.section} {self.tag})>"
