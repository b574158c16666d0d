"""The architecture registry: the names users type -> builders of models with seeded weights.

Every builder takes the arguments of :func:`build_model`; modules are imported lazily, so a
registry name whose module is not there yet raises :class:`~commcomp.errors.UnknownNameError`
only when it is built.  Aliases are those of :mod:`commcomp.architectures` (``rnn`` -> ``elman``).

Examples
--------
>>> model = build_model("lstm", vocab_size=5, width=8, n_outputs=3, layers=2, seed=0)
>>> model.state_numbers()                     # 2 layers x (h, c) x 8
32
>>> build_model("rnn", vocab_size=2, width=3, n_outputs=1).arch
'elman'
>>> "mamba" in list_architectures()
True
"""

from __future__ import annotations

import importlib
import inspect
from typing import Callable

from commcomp.architectures import get_architecture
from commcomp.errors import InvalidParameterError, UnknownNameError

__all__ = ["ARCHITECTURES", "build_model", "list_architectures", "available_architectures"]

# registry name -> (module, class / builder attribute, kind)
_SOURCES = {
    "elman": ("models.recurrent.elman", "ElmanLayer", "layer"),
    "lstm": ("models.recurrent.lstm", "LSTMLayer", "layer"),
    "gru": ("models.recurrent.gru", "GRULayer", "layer"),
    "linear-attention": ("models.recurrent.linear_attention", "LinearAttentionLayer", "layer"),
    "retnet": ("models.recurrent.retnet", "RetNetLayer", "layer"),
    "dss": ("models.recurrent.dss", "DSSLayer", "layer"),
    "mamba": ("models.recurrent.mamba", "MambaLayer", "layer"),
    "transformer": ("models.transformer", "build_transformer", "builder"),
    "hybrid": ("models.transformer", "build_hybrid", "builder"),
}


def _load(arch: str):
    module_name, attr, kind = _SOURCES[arch]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise UnknownNameError(f"architecture {arch!r} is registered but its module {module_name} "
                                   "is not available yet") from None
        raise
    if not hasattr(module, attr):
        raise UnknownNameError(f"architecture {arch!r}: module {module_name} has no {attr}")
    return getattr(module, attr), kind


def _builder(arch: str) -> Callable:
    def build(*, vocab_size, width, n_outputs, layers=1, heads=1, precision=None, seed=0, **hyper):
        target, kind = _load(arch)
        config = dict(arch=arch, vocab_size=int(vocab_size), width=int(width), n_outputs=int(n_outputs),
                      layers=int(layers), heads=int(heads), seed=int(seed),
                      precision=None if precision is None else str(precision), **hyper)
        config = {k: v for k, v in config.items() if k not in ("xp",)}
        if kind == "builder":
            return target(vocab_size=vocab_size, width=width, n_outputs=n_outputs, layers=layers,
                          heads=heads, precision=precision, seed=seed, **hyper)
        from .recurrent.base import build_recurrent_model

        if "heads" in inspect.signature(target).parameters:  # a recurrent layer with heads (its own keyword)
            hyper = dict(hyper, heads=heads)
        elif int(heads) != 1:
            raise InvalidParameterError(f"{arch} has no heads (got heads={heads})")
        return build_recurrent_model(arch, target, vocab_size=vocab_size, width=width,
                                     n_outputs=n_outputs, layers=layers, precision=precision,
                                     seed=seed, config=config, **hyper)
    build.__name__ = f"build_{arch.replace('-', '_')}"
    build.__doc__ = f"Build a seeded {arch!r} model (arguments of :func:`build_model`)."
    return build


#: Registry name -> builder with the arguments of :func:`build_model`.
ARCHITECTURES: dict[str, Callable] = {name: _builder(name) for name in _SOURCES}


def list_architectures() -> list[str]:
    """Every registry name, in the order of DESIGN §4."""
    return list(ARCHITECTURES)


def available_architectures() -> list[str]:
    """The registry names whose module can be imported here."""
    out = []
    for name in ARCHITECTURES:
        try:
            _load(name)
            out.append(name)
        except UnknownNameError:
            pass
    return out


def build_model(arch: str, *, vocab_size: int, width: int, n_outputs: int, layers: int = 1,
                heads: int = 1, precision=None, seed: int = 0, **hyper):
    """Build a model with seeded random weights.

    Parameters
    ----------
    arch : str
        Registry name or alias (:func:`list_architectures`).
    vocab_size, width, n_outputs : int
        Token count V, width m, readout outputs C.
    layers, heads : int
        Depth; heads (attention and linear-attention families; 1 elsewhere).
    precision : Precision or str, optional
        Format the carried state is rounded to after every step (None: float64 reference).
    seed : int
        Seed of every random choice.
    **hyper
        Architecture options: ``dtype`` (``"float64"``/``"float32"`` compute), ``init``
        (initialiser), ``xp`` (Array API namespace), ``nonlinearity`` (Elman), ...

    Raises
    ------
    UnknownNameError
        For an unknown name, or one whose module is not available.
    """
    name = get_architecture(arch).name
    if name not in ARCHITECTURES:
        raise UnknownNameError(f"architecture {arch!r} has no model here; known: "
                               f"{', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[name](vocab_size=vocab_size, width=width, n_outputs=n_outputs, layers=layers,
                               heads=heads, precision=precision, seed=seed, **hyper)
