"""Resolving what a simulation runs: the reduction, the problem, the model and the split.

:func:`prepare` turns the names users type (task, architecture, precision, ...) into a
:class:`Simulation`: the reduction and its problem at size n, a model (random weights, a
construction, a saved file, or a ready model object), and the split that runs the model as a
protocol (a :class:`~reductions.simulate.splits.Split`, chosen through
:mod:`reductions.simulate.registry`). Architectures with no protocol of bounded cost are refused
there, before any model is built.

Examples
--------
>>> sim = prepare("index-lookup", "lstm", 6, "fixed:8:4", width=3)
>>> sim.split.kind, sim.bits_per_message, sim.lower_bound_bits, sim.theorem
('recurrent', 48, 6, 'BHBK-IL-RNN')
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from commcomp.architectures import get_architecture
from commcomp.backend import backend_name, namespace, namespace_of
from commcomp.errors import InvalidParameterError
from commcomp.limits import MAX_HEADS, MAX_LAYERS, MAX_N, MAX_WIDTH, check_int, check_seed
from commcomp.precision import Precision, parse_precision
from commcomp.problems import Problem, get_problem

from ..base import Reduction
from ..registry import get_reduction
from .registry import make_split, model_options, random_model, refuse_unsplittable
from .splits import Split

__all__ = ["Simulation", "prepare", "refuse_unsplittable", "answer_classes", "MAX_N", "DEFAULT_WIDTH",
           "format_input", "parse_input", "check_weights_file"]

DEFAULT_WIDTH = 4


@dataclass(frozen=True, eq=False)
class Simulation:
    """Everything one simulation needs, resolved.

    Attributes
    ----------
    reduction, problem : the reduction and its two-party problem
    n : int
        The problem size; ``task_n`` is the task's size parameter (``reduction.task_size(n)``).
    model : the model (a ``RecurrentModel``, a 1-layer ``Transformer``, or qsa's attention unit)
    arch, width, layers, heads : str, int or None, int, int
        What was asked for (``width`` is None for a ready model whose width is not known).
    precision : Precision
        The model's number format (the message code).
    weights : str
        ``random``, ``construction``, a file name, or ``model`` (a model object was given).
    seed : int
    cot : bool
        Bob generates a chain of thought (IsTree) after the input.
    split : Split
        The protocol that runs the model split between Alice and Bob (:mod:`.splits`).
    """

    reduction: Reduction
    problem: Problem
    n: int
    task_n: int
    model: object
    arch: str
    width: int | None
    layers: int
    heads: int
    precision: Precision
    weights: str
    seed: int
    cot: bool
    split: Split

    @property
    def task(self):
        return self.reduction.task

    @property
    def bits_per_message(self) -> int:
        """Bits each instance pays (every message of the protocol, all rounds)."""
        return self.split.bits_per_instance

    @property
    def backend(self) -> str:
        """The array library the model (and so the protocol) runs on: ``numpy``, ``cupy``, ..."""
        return backend_name(getattr(self.model, "xp", None) or namespace_of())

    @property
    def one_way(self) -> bool:
        return self.split.rounds == 1

    @property
    def lower_bound_bits(self) -> int:
        """Bits any protocol of this shape must send (exact, commcomp.problems): D^{A->B}(f) at n for
        one-way protocols, D(f) - 1 for protocols of two or more messages (Bob alone learns the
        answer; :func:`commcomp.bounds.protocol_lower_bound_bits`)."""
        return self.split.lower_bound().bits

    @property
    def theorem(self) -> str | None:
        """Catalogue id of the lower bound this simulation makes concrete (:meth:`Split.theorem`)."""
        return self.split.lower_bound().theorem

    def describe(self) -> dict:
        return {"task": self.task.name, "problem": self.problem.name, "arch": self.arch, "n": self.n,
                "precision": self.precision.name, "width": self.width, "layers": self.layers,
                "heads": self.heads}


def answer_classes(reduction: Reduction, n: int, cot: bool = False) -> int:
    """Readout outputs a model needs: :meth:`Reduction.answer_classes <reductions.base.Reduction.answer_classes>`."""
    return reduction.answer_classes(n, cot)


def _check_int(value, name: str, low: int, high: int | None = None) -> int:
    return check_int(name, value, low, high)  # the limits of commcomp.limits, one message


def _build(arch, reduction, n, precision, width, layers, heads, weights, seed, cot):
    task_n = reduction.task_size(n)
    vocab, classes = reduction.task.vocab_size(task_n), reduction.answer_classes(n, cot)
    spec = get_architecture(arch)
    hyper = model_options(spec, reduction, n)
    if weights == "random":
        own = random_model(spec, reduction, n, width, heads, precision, seed)  # qsa's row unit
        if own is not None:
            return own
        from models.registry import build_model

        return build_model(spec.name, vocab_size=vocab, width=width, n_outputs=classes, layers=layers,
                           heads=heads, precision=precision, seed=seed, **hyper)
    if weights == "construction":
        try:
            from models.constructions import build_construction
        except ImportError:  # pragma: no cover - the registry is optional
            raise InvalidParameterError("no construction registry (models.constructions) is available; "
                                        "use --weights random or a FILE.npz") from None
        fixed_q = getattr(reduction.task, "q", None)  # qSA at a fixed q and any N (index@q1): built at both
        at = {} if fixed_q is None else {"length": reduction.length(n)}
        return build_construction(reduction.task_name, spec.name, n=task_n if fixed_q is None else int(fixed_q),
                                  precision=precision, width=width, layers=layers, heads=heads, n_outputs=classes,
                                  vocab_size=vocab, seed=seed, **at)
    path = Path(weights)
    if not path.is_file():
        raise InvalidParameterError(f"--weights must be random, construction or an existing .npz file; "
                                    f"{weights!r} is none of these")
    from models.files import load_model

    # the Precision object itself, so that its saturation counter is the one the run reports
    return load_model(path, precision=precision)


def check_weights_file(path, arch, reduction, n, cot=False, width=None, layers=None, heads=None):
    """Refuse a model file that does not fit the run (:func:`models.files.check_model_file`), before
    anything is built; returns the file's :class:`~models.files.ModelFileInfo`."""
    from models.files import check_model_file, read_model_info

    info = read_model_info(path)
    task_n = reduction.task_size(n)
    check_model_file(info, arch=arch, vocab_size=reduction.task.vocab_size(task_n),
                     n_outputs=reduction.answer_classes(n, cot), task=reduction.task_name, n=n, task_n=task_n,
                     length=reduction.length(n), width=width, layers=layers, heads=heads)
    return info


def _check_model(model, reduction, n, cot):
    task_n = reduction.task_size(n)
    vocab = reduction.task.vocab_size(task_n)
    if getattr(model, "vocab_size", vocab) < vocab:
        raise InvalidParameterError(f"the model reads {model.vocab_size} token ids, the task needs {vocab}")
    classes = reduction.answer_classes(n, cot)
    if getattr(model, "n_outputs", classes) < classes:
        raise InvalidParameterError(f"the model has {model.n_outputs} outputs, the task needs {classes}")


def _on_namespace(model, xp):
    """``model`` moved to namespace ``xp`` (None: left where it is)."""
    current = getattr(model, "xp", None)
    if xp is None or current is xp or (current is None and backend_name(xp) == "numpy"):
        return model
    if not hasattr(model, "to_namespace"):
        raise InvalidParameterError(f"{type(model).__name__} runs on numpy only; "
                                    f"--backend {backend_name(xp)} is not available for it")
    return model.to_namespace(xp)


def _model_width(model, default):
    """The width m of a model built elsewhere (a construction or a file sets its own); for a
    row-reading attention unit (qsa) its query/key width, SHT's m."""
    if hasattr(model, "row_qkv"):
        return int(model.d_k)
    if hasattr(model, "d_model"):
        return int(model.d_model)
    layers = getattr(model, "layers", None)
    if layers:
        return int(layers[0].d_out)
    return default


def prepare(task, arch=None, n=8, precision="float32", *, width=None, layers=None, heads=None, problem=None,
            weights="random", seed=0, cot=False, model=None, backend=None) -> Simulation:
    """Resolve names into a :class:`Simulation` (see the module docstring).

    Parameters
    ----------
    task : str
        Task registry name or alias (``index-lookup``, ...).
    arch : str, optional
        Architecture registry name; taken from ``model.arch`` when a model is given.
    n : int
        Problem size.
    precision : str or Precision
        Number format of the model (and of its messages).
    width, layers, heads : int, optional
        Model size (default width 4, 1 layer, 1 head).  A model file sets its own: leave them out
        (a value that differs from the file's is an error).
    problem : str, optional
        Picks the reduction when a task has several (default: the task's own).
    weights : {"random", "construction"} or path
        Where the weights come from; ignored when ``model`` is given.
    seed : int
        Seed of random weights.
    cot : bool
        Chain of thought: Bob generates the task's CoT after the input (IsTree).
    model : object, optional
        A ready model (its precision is used as it is; its namespace too unless ``backend`` is given).
    backend : str, optional
        The array library to run on (:func:`commcomp.backend.namespace`): ``numpy``, ``cupy``,
        ``torch`` or ``array_api_strict``; default ``$COMMCOMP_BACKEND``, else numpy.

    Raises
    ------
    UnknownNameError, InvalidParameterError, UnsupportedSplitError, TooLargeError
    BackendUnavailableError
        When the backend's library is not installed.
    """
    xp = namespace(backend) if (model is None or backend is not None) else None
    reduction = get_reduction(task, problem)
    n = _check_int(n, "n", max(1, reduction.min_n), MAX_N)
    seed = check_seed(seed)
    reduction.check_n(n)
    prob = get_problem(reduction.problem)
    if cot and not hasattr(reduction.task, "check_cot"):
        raise InvalidParameterError(f"task {reduction.task_name} has no chain of thought")
    if model is not None:
        arch = "transformer" if hasattr(model, "row_qkv") else getattr(model, "arch", arch)  # qsa's unit
        layers = getattr(model, "n_layers", layers)
        heads = getattr(model, "n_heads", heads)
        weights = "model"
        prec = getattr(model, "precision", None)  # None: float64 reference mode, float64's code
        precision = prec if prec is not None else parse_precision("float64")
    else:
        precision = parse_precision(precision)
    if arch is None:
        raise InvalidParameterError("an architecture (arch) is needed when no model is given")
    spec = get_architecture(arch)
    if model is None and weights not in ("random", "construction") and Path(str(weights)).is_file():
        info = check_weights_file(weights, spec.name, reduction, n, cot, width, layers, heads)
        width, layers, heads = info.width, info.layers, info.heads
    layers = _check_int(1 if layers is None else layers, "layers", 1, MAX_LAYERS)
    heads = _check_int(1 if heads is None else heads, "heads", 1, MAX_HEADS)
    refuse_unsplittable(spec, layers, reduction, model)
    if model is None:
        width = _check_int(DEFAULT_WIDTH if width is None else width, "width", 1, MAX_WIDTH)
        if spec.width_multiple_of == "heads" and width % heads:
            raise InvalidParameterError(f"{spec.name}: width {width} is not a multiple of heads {heads}")
        model = _build(spec.name, reduction, n, precision, width, layers, heads, weights, seed, cot)
        if getattr(model, "precision", None) is not None:
            precision = model.precision  # count saturations on the object that runs
    _check_model(model, reduction, n, cot)
    model = _on_namespace(model, xp)
    if weights != "random":  # a construction or a file sets its own sizes
        width = _model_width(model, width)
        layers, heads = int(getattr(model, "n_layers", layers)), int(getattr(model, "n_heads", heads))
        refuse_unsplittable(spec, layers, reduction, model)
    split = make_split(spec, model, reduction, n, cot)
    return Simulation(reduction, prob, n, reduction.task_size(n), model, spec.name, width, layers, heads,
                      precision, str(weights), int(seed), bool(cot), split)


# -- problem inputs as text ----------------------------------------------------------------------
def _is_index_like(problem: Problem, n: int) -> bool:
    return np.asarray(problem.bob_inputs(min(n, 2))).ndim == 1


def format_input(problem: Problem, n: int, value, party: str):
    """One party's input as users type it: a bit string, or an integer index (INDEX's y)."""
    arr = np.asarray(value)
    if party == "bob" and arr.ndim == 0:
        return int(arr)
    return "".join(str(int(b)) for b in arr.reshape(-1))


def parse_input(problem: Problem, n: int, text: str, party: str) -> np.ndarray:
    """Parse ``--x`` / ``--y``: bits (``0110``), or an integer index for INDEX's y. Returns one row."""
    text = str(text).strip()
    if party == "bob" and _is_index_like(problem, n):
        try:
            value = int(text)
        except ValueError:
            raise InvalidParameterError(f"y must be an index in [0, {n}), got {text!r}") from None
        if not 0 <= value < n:
            raise InvalidParameterError(f"y must be an index in [0, {n}), got {value}")
        return np.array([value], dtype=np.int64)
    if len(text) != n or any(c not in "01" for c in text):
        raise InvalidParameterError(f"{'x' if party == 'alice' else 'y'} must be {n} bits (0/1), got {text!r}")
    return np.array([[int(c) for c in text]], dtype=np.uint8)

