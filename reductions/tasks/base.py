"""The uniform interface of a sequence task: vocabulary, format, sampler, ground truth.

A task knows nothing about two-party problems. Its ground truth is computed from the token
sequence (and, for tasks with real-valued content, from ``features``) alone; that
independence is what makes a reduction checkable (see :mod:`reductions.check`).

Conventions shared by every task
--------------------------------
- Positions are 0-based. ``n`` is the task's size parameter; ``length(n)`` is the sequence
  length N.
- ``tokens`` is a ``(B, N)`` int64 array of ids into ``vocabulary(n)``.
- ``output_positions(n)`` lists the K positions whose outputs the task defines, in increasing
  order; ``ground_truth`` returns the answers there with shape ``(B, K)`` (or ``(B, K, d)``
  for vector answers, as in qSA). A classification token read at the last position gives K = 1.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

from commcomp.backend import is_array, is_numpy, namespace_of, to_numpy
from commcomp.errors import InvalidParameterError

__all__ = ["Task", "TaskBatch", "check_size", "check_batch", "balanced_labels", "random_subsets"]


@dataclass(frozen=True, eq=False)
class TaskBatch:
    """A batch of task instances.

    Attributes
    ----------
    tokens : array
        ``(B, N)`` int64 token ids: NumPy, or an array of a device namespace (a device encoding).
    features : array or None
        ``(B, N, d)`` float64 real-valued content of each position, for tasks whose tokens
        carry vectors (Nearest Neighbour, qSA); None otherwise. On the namespace of the tokens:
        NumPy for host tokens, the device's for device tokens (a device encoding builds both).
    answers : numpy.ndarray or None
        The task's answers at ``output_positions`` when known (a sampler fills them in; an
        encoder leaves them None and the checker computes them with ``ground_truth``).
    meta : dict
        Extras (treat as read-only); always holds ``"task"`` (name) and ``"n"`` (size parameter).

    Examples
    --------
    >>> import numpy as np
    >>> b = TaskBatch(np.zeros((2, 3), dtype=np.int64), meta={"task": "demo", "n": 2})
    >>> b.batch_size, b.length, b.n
    (2, 3, 2)
    """

    tokens: np.ndarray
    features: np.ndarray | None = None
    answers: np.ndarray | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if is_array(self.tokens) and not is_numpy(self.tokens):  # device tokens stay on their namespace
            xp = namespace_of(self.tokens)
            if self.tokens.ndim != 2 or not xp.isdtype(self.tokens.dtype, "integral"):
                raise InvalidParameterError(f"tokens must be a (B, N) integer array, got {self.tokens.dtype} "
                                            f"of shape {tuple(self.tokens.shape)}")
            object.__setattr__(self, "tokens", xp.astype(self.tokens, xp.int64, copy=False))
            shape = tuple(self.tokens.shape)
        else:
            tokens = np.asarray(self.tokens)
            if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
                raise InvalidParameterError(f"tokens must be a (B, N) integer array, got {tokens.dtype} "
                                            f"of shape {tokens.shape}")
            object.__setattr__(self, "tokens", tokens.astype(np.int64, copy=False))
            shape = tokens.shape
        if self.features is not None:
            object.__setattr__(self, "features", self._checked_features(shape))
        object.__setattr__(self, "meta", dict(self.meta))  # a copy (a plain dict pickles)

    def _checked_features(self, shape):
        """``features`` as float64 ``(B, N, d)`` on the tokens' namespace: a device array is checked
        with its own namespace (no transfer), anything else becomes a NumPy array."""
        on_device = is_array(self.features) and not is_numpy(self.features)
        if on_device != (is_array(self.tokens) and not is_numpy(self.tokens)):
            raise InvalidParameterError("features must live on the namespace of the tokens "
                                        f"({type(self.tokens).__name__}), got {type(self.features).__name__}")
        if on_device:
            xp = namespace_of(self.features)
            feats, ok_dtype = self.features, xp.isdtype(self.features.dtype, "real floating")
        else:
            feats, ok_dtype = np.asarray(self.features, dtype=np.float64), True
        if not ok_dtype or feats.ndim != 3 or tuple(feats.shape[:2]) != shape:
            raise InvalidParameterError(f"features must be (B, N, d) real numbers with (B, N) = {shape}, "
                                        f"got {feats.dtype} of shape {tuple(feats.shape)}")
        return xp.astype(feats, xp.float64, copy=False) if on_device else feats

    def on_host(self) -> "TaskBatch":
        """This batch with NumPy tokens and features: itself when it is on the host, else a copy
        brought back through :func:`commcomp.backend.to_numpy` (the named, counted transfer), for
        NumPy-only readers such as the tasks' ``ground_truth``."""
        if is_numpy(self.tokens) and (self.features is None or is_numpy(self.features)):
            return self
        features = None if self.features is None else to_numpy(self.features)
        return TaskBatch(to_numpy(self.tokens), features, self.answers, self.meta)

    @property
    def batch_size(self) -> int:
        return int(self.tokens.shape[0])

    @property
    def length(self) -> int:
        return int(self.tokens.shape[1])

    @property
    def n(self) -> int:
        return int(self.meta["n"])

    def with_answers(self, answers) -> "TaskBatch":
        """A copy with ``answers`` filled in."""
        return TaskBatch(self.tokens, self.features, np.asarray(answers), self.meta)


def check_size(task_name: str, n, minimum: int = 1) -> int:
    """Validate a size parameter; raise InvalidParameterError when it is not an int >= minimum."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise InvalidParameterError(f"{task_name}: n must be an integer >= {minimum}, got {n!r}")
    return int(n)


def check_batch(batch) -> int:
    """Validate a batch size (a non-negative integer)."""
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 0:
        raise InvalidParameterError(f"batch must be a non-negative integer, got {batch!r}")
    return int(batch)


def balanced_labels(shape, classes: int, rng: np.random.Generator) -> np.ndarray:
    """Labels in ``[0, classes)`` with every class equally often (up to one), randomly placed.

    Examples
    --------
    >>> lab = balanced_labels((4, 3), 2, np.random.default_rng(0))
    >>> lab.shape, int(lab.sum())
    ((4, 3), 6)
    """
    size = int(np.prod(shape))
    return rng.permutation(np.arange(size) % classes).reshape(shape).astype(np.int64)


def random_subsets(batch: int, universe: int, size: int, rng: np.random.Generator,
                   rows: int | None = None) -> np.ndarray:
    """``size`` distinct elements of ``[0, universe)`` per row, in random order.

    Returns ``(batch, size)``, or ``(batch, rows, size)`` when ``rows`` is given.
    """
    shape = (batch, universe) if rows is None else (batch, rows, universe)
    keys = rng.random(shape)
    return np.argsort(keys, axis=-1)[..., :size].astype(np.int64)


class Task(ABC):
    """A sequence task: vocabulary, input format, sampler and ground truth.

    Subclasses are frozen dataclasses whose fields are the task's structural parameters
    (alphabet size, bracket types, modulus...); ``n`` is passed to every method.

    Attributes
    ----------
    name : str
        The registry name users type (DESIGN §4).
    aliases : tuple of str
        Other accepted names.
    answer_kind : str
        ``"bool"`` (0/1), ``"symbol"`` (an index into the task's answer alphabet) or
        ``"vector"`` (real-valued, qSA).
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    answer_kind: ClassVar[str] = "bool"
    min_n: ClassVar[int] = 1

    # -- format -------------------------------------------------------------------------
    @abstractmethod
    def vocabulary(self, n: int) -> tuple[str, ...]:
        """Names of the token ids: ``vocabulary(n)[t]`` is what id ``t`` means."""

    def vocab_size(self, n: int) -> int:
        """Number of token ids."""
        return len(self.vocabulary(n))

    @abstractmethod
    def length(self, n: int) -> int:
        """Sequence length N at size ``n``."""

    @property
    def language(self) -> str | None:
        """The task's predicate as a language of every length, where it is one and regular
        (``commcomp.automata.language_dfa``'s names, over the task's letters in id order, the
        answer token left out): what ``automaton --against task`` proves. None for a predicate
        defined at one size n only (an index lookup at n, string equality at n, ...)."""
        return None

    def feature_width(self, n: int) -> int:
        """``d`` of the batch's ``features`` ``(B, N, d)`` at size ``n``; 0 for token-only tasks.
        The memory checks count ``8 d`` bytes a position for it (a float64 each)."""
        return 0

    def output_positions(self, n: int) -> np.ndarray:
        """Positions whose outputs the task defines (default: the last one)."""
        return np.array([self.length(n) - 1], dtype=np.int64)

    # -- data ---------------------------------------------------------------------------
    @abstractmethod
    def sample(self, n: int, batch: int, rng: np.random.Generator) -> TaskBatch:
        """``batch`` random instances with balanced answers and ``answers`` filled in."""

    @abstractmethod
    def ground_truth(self, batch: TaskBatch) -> np.ndarray:
        """The answers at ``output_positions``, computed from the tokens (and features) alone."""

    # -- helpers ------------------------------------------------------------------------
    def check_n(self, n) -> int:
        return check_size(self.name, n, self.min_n)

    def make_batch(self, n: int, tokens, features=None, answers=None, **meta) -> TaskBatch:
        """Wrap arrays into a :class:`TaskBatch` whose meta names this task and ``n``."""
        return TaskBatch(tokens, features, answers, {"task": self.name, "n": int(n), **meta})

    def render(self, tokens, n: int, limit: int = 80) -> str:
        """One instance as a space-separated string of token names (long ones elided)."""
        vocab = self.vocabulary(n)
        ids = [int(t) for t in np.asarray(tokens).reshape(-1)]
        names = [vocab[t] if 0 <= t < len(vocab) else f"<{t}?>" for t in ids]
        if len(names) > limit:
            half = limit // 2
            names = names[:half] + [f"... ({len(names) - 2 * half} more) ..."] + names[-half:]
        return " ".join(names)
