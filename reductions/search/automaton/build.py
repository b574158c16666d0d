"""The model of a task, without a communication split: what ``automaton`` reads.

:func:`~reductions.simulate.setup.prepare` builds a model and its protocol split, and refuses a
recurrent model on a task whose reduction interleaves the parties (Dyck: a bounded Dyck language
is regular, so the split would prove nothing). The automaton needs only the model, so it is built
here by the same steps as ``prepare`` (random weights, a construction, or a checked file) and no
split is made.

Examples
--------
>>> m = task_model("dyck", "rnn", 4, "fixed:2:0", weights="construction")
>>> m.model.arch, m.task.name, m.classes
('elman', 'dyck', 2)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from commcomp.architectures import get_architecture
from commcomp.errors import InvalidParameterError, UnsupportedSplitError
from commcomp.limits import MAX_LAYERS, MAX_N, MAX_WIDTH, check_int, check_seed
from commcomp.precision import parse_precision

from ...registry import get_reduction
from ...simulate.setup import DEFAULT_WIDTH, _build, _check_model, _model_width, answer_classes, check_weights_file

__all__ = ["TaskModel", "task_model"]


@dataclass(frozen=True, eq=False)
class TaskModel:
    """A built model with its task: ``reduction``, ``task``, ``n``, ``model``, ``arch``, ``width``,
    ``layers``, ``precision``, ``weights``, ``seed``, ``classes`` (answer classes)."""

    reduction: object
    task: object
    n: int
    model: object
    arch: str
    width: int
    layers: int
    precision: object
    weights: str
    seed: int
    classes: int


def task_model(task, arch, n, precision, *, width=None, layers=None, weights="random", seed=0, problem=None,
               model=None) -> TaskModel:
    """Build (or take) a recurrent model for ``task`` as :func:`prepare` would, without a split.

    Raises
    ------
    UnsupportedSplitError
        For an architecture that is not recurrent.
    """
    reduction = get_reduction(task, problem)
    n = check_int("n", n, max(1, reduction.min_n), MAX_N)
    reduction.check_n(n)
    seed = check_seed(seed)
    if model is not None:
        arch, weights = getattr(model, "arch", arch), "model"
        prec = model.precision
    else:
        if arch is None:
            raise InvalidParameterError("an architecture (arch) is needed when no model is given")
        spec = get_architecture(arch)
        if spec.arch_class != "recurrent":
            raise UnsupportedSplitError(f"an automaton is extracted from a recurrent model; {spec.name} carries "
                                        "no fixed-size state")
        prec = parse_precision(precision)
        if weights not in ("random", "construction") and Path(str(weights)).is_file():
            info = check_weights_file(weights, spec.name, reduction, n, False, width, layers, None)
            width, layers = info.width, info.layers
        layers = check_int("layers", 1 if layers is None else layers, 1, MAX_LAYERS)
        width = check_int("width", DEFAULT_WIDTH if width is None else width, 1, MAX_WIDTH)
        model = _build(spec.name, reduction, n, prec, width, layers, 1, weights, seed, False)
        arch = spec.name
    if not hasattr(model, "init_state") or not hasattr(model, "state_to_bits"):
        raise UnsupportedSplitError(f"an automaton is extracted from a recurrent model, not {type(model).__name__}")
    _check_model(model, reduction, n, False)
    prec = getattr(model, "precision", None) or prec
    return TaskModel(reduction, reduction.task, n, model, str(arch), _model_width(model, width),
                     int(getattr(model, "n_layers", layers or 1)), prec, str(weights), int(seed),
                     answer_classes(reduction, n))
