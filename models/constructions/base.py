"""The interface every explicit construction implements (theorems.md §7, C1-C8).

A construction file defines one or more :class:`ConstructionSpec` in a module-level tuple
``SPECS``; the registry (:mod:`models.constructions`) collects them.  A spec's ``builder`` has
the signature::

    make(n, precision=None, *, seed=0, **options) -> Construction

``n`` is the *task's* size parameter (what ``reductions.tasks`` call ``n``; the sequence length N
is ``construction.length``), ``precision`` a :class:`~commcomp.precision.Precision` or the string
a user types (None: the float64 reference mode), ``seed`` seeds every random choice (JL draws),
and ``options`` are the construction's knobs (``k`` the JL dimension, ``gamma``, ...; unknown
options raise :class:`~commcomp.errors.InvalidParameterError`).

A :class:`Construction` holds the ready model: a real ``models`` object (a
:class:`~models.transformer.Transformer` or a :class:`~models.recurrent.base.RecurrentModel`)
whose own forward pass answers the task; nothing here computes answers another way.
:meth:`Construction.predict` runs that forward pass at every output position of the task and
decodes the logits (argmax, or the vector itself for vector answers), in the task's answer
format.  Layering: this package does not import ``reductions``; a construction knows its task's
token format (documented in its module) and the tests check it against the task's ground truth.

Examples
--------
>>> from models.constructions import get_construction
>>> c = get_construction("index-lookup").make(8, "fixed:16:8")
>>> c.width == c.model.d_model, c.layers, c.heads, c.length
(True, 1, 1, 9)
>>> import numpy as np
>>> tokens = np.array([[1, 0, 1, 1, 0, 0, 1, 0, 2 + 3]])   # s_3 = 1, query p3
>>> c.predict(tokens).tolist()
[[1]]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from commcomp.errors import InvalidParameterError
from commcomp.jsonable import jsonable
from commcomp.limits import MODEL_POSITION_BYTES, check_memory, check_seed
from commcomp.precision import Precision, parse_precision

__all__ = ["ConstructionSpec", "Construction", "CheckResult", "check_options", "precision_of",
           "tokens_of", "transformer_logits", "recurrent_logits"]


def precision_of(precision) -> Precision | None:
    """``None`` or a fresh :class:`Precision` from what a user types."""
    return None if precision is None else parse_precision(precision)


def check_options(name: str, options: Mapping[str, Any], known) -> dict:
    """Raise :class:`InvalidParameterError` on an option the builder does not know."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InvalidParameterError(f"construction {name!r}: unknown options {unknown}; "
                                    f"known: {sorted(known)}")
    return dict(options)


def tokens_of(batch_or_tokens) -> np.ndarray:
    """The ``(B, N)`` int64 tokens of a ``TaskBatch`` (duck-typed) or of an array."""
    tokens = getattr(batch_or_tokens, "tokens", batch_or_tokens)
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
        raise InvalidParameterError(f"tokens must be a (B, N) integer array, got {tokens.shape}")
    return tokens.astype(np.int64, copy=False)


def transformer_logits(model, tokens, positions) -> np.ndarray:
    """``model.forward`` at each output position: ``(B, K, C)`` host float64 (``forward_at``
    when the model has it: bit for bit the same).

    This is exactly what ``reductions.simulate`` runs for a Transformer (one ``forward`` per
    read position), so a construction is judged on the same pass.
    """
    if hasattr(model, "forward_at"):  # the same numbers, the position-independent work once
        return np.asarray(model.forward_at(tokens, [int(o) for o in positions]))  # (B, K, C)
    outs = [np.asarray(model.forward(tokens, output_position=int(o))) for o in positions]
    return np.stack(outs, axis=1)  # (B, K, C)


def recurrent_logits(model, tokens, positions) -> np.ndarray:
    """A recurrent model's readout at each output position: ``(B, K, C)``.

    One pass (``run_layers``), then the readout of the top layer's output at each position.
    """
    _, y = model.run_layers(tokens)  # (B, T, d_out)
    outs = [np.asarray(model.readout(None, y[:, int(o), :])) for o in positions]
    return np.stack(outs, axis=1)  # (B, K, C)


@dataclass(frozen=True)
class CheckResult:
    """How a construction did on a batch judged by the task's ground truth.

    ``admitted`` counts the inputs inside the construction's promise (all of them unless the
    construction states an input assumption, such as C4's margin); ``correct`` counts the
    admitted inputs it answered right; ``misses`` holds the batch indices of admitted inputs it
    got wrong (at most 20).
    """

    total: int
    admitted: int
    correct: int
    misses: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        """Correct on every admitted input (and at least one input was admitted)."""
        return self.correct == self.admitted and self.admitted > 0

    def __add__(self, other: "CheckResult") -> "CheckResult":
        return CheckResult(self.total + other.total, self.admitted + other.admitted,
                           self.correct + other.correct,
                           (self.misses + tuple(self.total + m for m in other.misses))[:20])


@dataclass(frozen=True, eq=False)
class Construction:
    """A ready model for a task at size ``n``, and how to read its answers.

    Attributes
    ----------
    name, task : str
        Registry name of the construction and of its task.
    n, length : int
        The task's size parameter and the sequence length N.
    model : object
        A ``models`` object (``Transformer``, ``RecurrentModel``) run by its own forward pass.
    width, layers, heads : int
        ``d_model`` (the residual width; the RNN hidden size), depth, heads per layer.
    precision : Precision or None
        The model's number format (None: float64 reference).
    params_report : dict
        What the construction chose and measured: JL ``k``, ``gamma`` (bound and achieved),
        ``beta``, margins, ... (JSON-friendly values).
    source, tag : str
        Catalogue id (``BHBK-IL-1TF``) and how firm it is (``[D✓]``).
    output_positions : tuple of int
        Where the task's answers are read, in increasing order.
    answer_kind : {"bool", "symbol", "vector"}
    n_classes : int
        Logits used for the answer (the first ``n_classes`` of the readout).
    tolerance : float or None
        Vector answers: the largest allowed l2 error per output row.
    promise : callable or None
        ``tokens (B, N) -> (B,) bool``: the inputs the construction is claimed for (its stated
        assumption); None means every input of the task.
    logits_fn : callable or None
        ``(model, tokens, positions) -> (B, K, C)``; default: :func:`transformer_logits` for a
        model with ``forward``, else :func:`recurrent_logits`.
    task_object : object or None
        For a task the construction defines itself (C5's k-DNF, which ``reductions`` lacks): an
        object with ``ground_truth(tokens)``, ``sample(batch, rng)`` and ``all_inputs()``.
    """

    name: str
    task: str
    n: int
    length: int
    model: Any
    width: int
    layers: int
    heads: int
    precision: Precision | None
    params_report: Mapping[str, Any]
    source: str
    tag: str
    output_positions: tuple[int, ...]
    answer_kind: str = "bool"
    n_classes: int = 2
    tolerance: float | None = None
    promise: Callable | None = field(default=None, repr=False)
    logits_fn: Callable | None = field(default=None, repr=False)
    task_object: Any = field(default=None, repr=False)

    # -- running ---------------------------------------------------------------------------
    def logits(self, batch_or_tokens) -> np.ndarray:
        """The model's logits at the output positions, ``(B, K, C)``."""
        tokens = tokens_of(batch_or_tokens)
        if tokens.shape[1] != self.length:
            raise InvalidParameterError(f"{self.name} was built for length {self.length}, got "
                                        f"{tokens.shape[1]}")
        fn = self.logits_fn
        if fn is None:
            fn = transformer_logits if hasattr(self.model, "forward") else recurrent_logits
        return np.asarray(fn(self.model, tokens, self.output_positions), dtype=np.float64)

    def decode(self, logits) -> np.ndarray:
        """Answers from logits ``(B, K, C)``: argmax of the first ``n_classes`` (ties: the lowest
        class), or the vector itself for vector answers."""
        logits = np.asarray(logits)
        if self.answer_kind == "vector":
            return logits[..., :self.n_classes]
        return np.argmax(logits[..., :self.n_classes], axis=-1).astype(np.int64)

    def predict(self, batch_or_tokens) -> np.ndarray:
        """The construction's answers in the task's format: ``(B, K)`` (``(B, K, d)`` for vectors).

        Parameters
        ----------
        batch_or_tokens : TaskBatch or array ``(B, N)`` int
        """
        return self.decode(self.logits(batch_or_tokens))

    __call__ = predict

    def admits(self, batch_or_tokens) -> np.ndarray:
        """``(B,)`` bool: which inputs lie inside the construction's stated assumption."""
        tokens = tokens_of(batch_or_tokens)
        if self.promise is None:
            return np.ones(tokens.shape[0], dtype=bool)
        return np.asarray(self.promise(tokens), dtype=bool)

    def correct(self, batch_or_tokens, truth, answers=None) -> np.ndarray:
        """``(B,)`` bool: the answers equal ``truth`` (the task's ground truth) at every output
        position (vector answers: l2 error per row at most ``tolerance``)."""
        answers = self.predict(batch_or_tokens) if answers is None else np.asarray(answers)
        truth = np.asarray(truth)
        if answers.shape != truth.shape:
            raise InvalidParameterError(f"answers {answers.shape} and truth {truth.shape} differ "
                                        "in shape")
        if self.answer_kind == "vector":
            err = np.sqrt(np.sum((answers - truth) ** 2, axis=-1))  # (B, K)
            return np.all(err <= (self.tolerance or 0.0), axis=1)
        return np.all(answers == truth, axis=1)

    def check(self, batch_or_tokens, truth) -> CheckResult:
        """Count correct answers among the admitted inputs of a batch (``truth``: the task's
        ground truth for the batch, ``(B, K)``)."""
        ok = self.correct(batch_or_tokens, truth)
        admitted = self.admits(batch_or_tokens)
        misses = np.nonzero(admitted & ~ok)[0][:20]
        return CheckResult(int(ok.size), int(admitted.sum()), int((ok & admitted).sum()),
                           tuple(int(m) for m in misses))

    # -- reporting -------------------------------------------------------------------------
    def summary(self) -> dict:
        """A JSON-friendly summary: name, task, sizes, precision and ``params_report``."""
        prec = self.precision
        return {"construction": self.name, "task": self.task, "arch": getattr(self.model, "arch", None),
                "n": self.n, "length": self.length, "width": self.width, "layers": self.layers,
                "heads": self.heads, "precision": None if prec is None else prec.name,
                "precision_bits": None if prec is None else prec.bits, "source": self.source,
                "tag": self.tag, **{k: jsonable(v) for k, v in self.params_report.items()}}



@dataclass(frozen=True)
class ConstructionSpec:
    """A registry entry: what a construction is for and how to build it.

    Attributes
    ----------
    name : str
        Registry name users type (``index-lookup-1tf``).
    task : str
        The task registry name it solves (``index-lookup``).
    arch : str
        Architecture registry name of the model it returns (``transformer``, ``elman``, ...).
    layers, heads : int
        Depth and heads per layer of that model.
    source : str
        Catalogue id (theorems.md: ``BHBK-IL-1TF``).
    tag : str
        How firm the construction is (``[D✓]``, ``[D]``; theorems.md §0).
    builder : callable
        ``make(n, precision=None, *, seed=0, **options) -> Construction``.
    width_formula : str
        The residual width as a formula (``|Σ| + 2k + 1, k = ⌈(4 ln N + 2 ln 2)/γ²⌉``).
    description : str
        One line: what the weights do.
    width_option : str or None
        The builder option that sets the width (``"k"``: the JL dimension), for the minimal
        width search; None if the width is fixed.
    exhaustive_max_n : int
        The largest task size whose every input the tests and the search enumerate in seconds.
    inputs : callable or None
        ``inputs(n) -> tokens (B, N)``: every input of the task at size n (the construction's
        domain), for exhaustive checks; None if not enumerable.
    aliases : tuple of str
        Other names (may include task aliases for :func:`get_construction`).
    default : bool
        The construction :func:`get_construction` returns for its task (one per task).
    width_of : callable or None
        ``width_of(n) -> int``: the width :meth:`make` gives at task size n with default options,
        without building the weights (for constructions whose build is costly at large n: Nearest
        Neighbour's public table); None: read it off a built model.  Tested equal to the built width.
    """

    name: str
    task: str
    arch: str
    layers: int
    source: str
    tag: str
    builder: Callable = field(repr=False)
    width_formula: str = ""
    description: str = ""
    heads: int = 1
    width_option: str | None = None
    exhaustive_max_n: int = 0
    inputs: Callable | None = field(default=None, repr=False)
    aliases: tuple[str, ...] = ()
    default: bool = True
    width_of: Callable | None = field(default=None, repr=False)

    def make(self, n: int, precision=None, *, seed: int = 0, **options) -> Construction:
        """Build the construction at task size ``n`` (see the module docstring)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise InvalidParameterError(f"construction {self.name!r}: n must be an integer >= 1, "
                                        f"got {n!r}")
        check_seed(seed)
        # every construction holds codes for each of its >= n positions (commcomp.limits)
        check_memory(f"construction {self.name}", "n", int(n), lambda v: MODEL_POSITION_BYTES * v,
                     detail=f"{MODEL_POSITION_BYTES} bytes a position")
        return self.builder(int(n), precision, seed=seed, **options)

    def width(self, n: int) -> int:
        """The width at task size n with default options (:attr:`width_of`, else a built model's)."""
        if self.width_of is not None:
            return int(self.width_of(int(n)))
        return int(self.make(n).width)

    def row(self) -> dict:
        """A JSON-friendly row for ``commcomp list constructions``."""
        return {"name": self.name, "task": self.task, "arch": self.arch, "layers": self.layers,
                "heads": self.heads, "source": self.source, "tag": self.tag,
                "width": self.width_formula, "description": self.description}
