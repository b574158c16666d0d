"""Base classes of the recurrent family: a layer per architecture, one model that stacks them.

A :class:`RecurrentLayer` is the math of one layer: ``init_state(batch, xp)``, ``step(state, x_t)``
and (optionally faster) ``run_sequence(state, x)``.  A :class:`RecurrentModel` adds a token
embedding, a stack of layers and a linear readout, carries the state of every layer in one
ordered dict ``{"l0.h": (B, m), "l0.c": (B, m), "l1.h": ...}`` and, when it has a
:class:`~commcomp.precision.Precision`, rounds every carried array onto the format's grid after
every step.  So the state *is* the message of a protocol that splits the input between Alice
and Bob: :meth:`RecurrentModel.state_to_bits` costs exactly ``state_numbers() * precision.bits``
bits per instance, and ``run(suffix, bits_to_state(state_to_bits(run(prefix))))`` equals
``run(prefix + suffix)`` bit for bit.

Rounding contract for layer authors
-----------------------------------
The model gives each layer a callable ``layer.round_state(dict) -> dict`` (identity in float64
reference mode).  A layer whose class sets ``rounds_own_state = True`` applies it itself inside
``step`` / ``run_sequence`` to the new state of every step, *before* computing the output from it
(so the next layer reads the rounded value).  For any other layer the model applies it after
each ``step`` (the default ``run_sequence`` does so too).  Rounding is idempotent, so applying it
twice is harmless, merely slower.  Arrays are batched: ``(B, ...)`` in, no loop over instances.

Examples
--------
>>> import numpy as np
>>> from models.registry import build_model
>>> model = build_model("lstm", vocab_size=3, width=4, n_outputs=2, precision="fixed:16:8")
>>> tokens = np.array([[0, 1, 2, 1], [2, 2, 0, 1]])              # (B=2, T=4)
>>> alice = model.run(tokens[:, :2])                               # Alice's prefix
>>> bits = model.state_to_bits(alice)
>>> len(bits) == model.state_numbers() * 16 == 2 * 4 * 16
True
>>> bob, logits = model.run_with_output(tokens[:, 2:], model.bits_to_state(bits))
>>> _, reference = model.run_with_output(tokens)
>>> bool(np.array_equal(logits, reference))
True
"""

from __future__ import annotations

import copy
import math
from typing import Callable

import array_api_compat
import numpy as np

from commcomp.backend import is_array, is_numpy, namespace_of, to_numpy
from commcomp.bits import BitRows
from commcomp.errors import InvalidParameterError
from commcomp.precision import Precision, parse_precision
from models.common import StateRounder, compute_dtype, make_rounder, raw_matmul

__all__ = ["RecurrentLayer", "RecurrentModel", "build_recurrent_model", "make_rounder", "compute_dtype",
           "raw_matmul"]  # ProjectedLayer (it builds on this module): models.recurrent.projected

StateDict = dict  # ordered {name: (B, ...) array}


def _identity_state(state):
    return state


def _round_arrays(xp, rnd, state: StateDict) -> StateDict:
    """Round every array of ``state``; arrays of one shape go through the rounder stacked (fewer calls)."""
    if len(state) > 1 and len({tuple(v.shape) for v in state.values()}) == 1:
        rounded = rnd(xp.stack(list(state.values())))  # (K, B, ...)
        return {k: rounded[i, ...] for i, k in enumerate(state)}
    return {k: rnd(v) for k, v in state.items()}


class RecurrentLayer:
    """One recurrent layer: its parameters and the math of one step.

    Subclasses set the class attribute ``arch`` (registry name) and implement :meth:`state_shapes`
    and :meth:`step`; they may override :meth:`prepare` (lay parameters out for the kernels),
    :meth:`run_sequence` (a faster path that must agree with looping :meth:`step`),
    :meth:`output_from_state` (when the output is part of the state) and :attr:`hyper`.

    Parameters
    ----------
    d_in, d_out : int
        Input and output widths.
    params : dict of str to numpy.ndarray
        The weights, float64 on the host (saved and loaded as they are).
    dtype : {"float64", "float32"}
        Compute dtype of the kernels.
    xp : namespace, optional
        Array API namespace of the kernels (default NumPy).
    """

    arch: str = ""
    rounds_own_state: bool = False  # True: step/run_sequence apply self.round_state themselves

    def __init__(self, d_in: int, d_out: int, params: dict, *, dtype="float64", xp=None):
        self.d_in, self.d_out = int(d_in), int(d_out)
        self.params = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
        self.xp = xp if xp is not None else namespace_of()
        self.dtype = compute_dtype(self.xp, dtype)
        self.round_state: Callable[[StateDict], StateDict] = _identity_state
        self.prepare()

    # -- to override ---------------------------------------------------------------------
    @property
    def hyper(self) -> dict:
        """Hyper-parameters other than the widths (saved with the model)."""
        return {}

    def state_shapes(self) -> dict:  # pragma: no cover - abstract
        """Per-instance shape of each carried array, in order: ``{"h": (m,), ...}``."""
        raise NotImplementedError

    def prepare(self) -> None:
        """Build ``self.w``: the parameters as arrays of ``self.xp`` in ``self.dtype``."""
        self.w = {k: self.xp.asarray(v, dtype=self.dtype) for k, v in self.params.items()}

    def step(self, state: StateDict, x_t) -> tuple[StateDict, object]:  # pragma: no cover
        """One time step: ``x_t`` ``(B, d_in)`` -> (new state, ``y_t`` ``(B, d_out)``)."""
        raise NotImplementedError

    def output_from_state(self, state: StateDict):
        """The layer's last output when it is part of the state (``None`` when it is not)."""
        return None

    # Optional input projection.  A layer that sets ``projects_inputs = True`` splits its step
    # into a row-wise map of the input alone, ``u = project_inputs(x)`` (``(..., d_in) -> (..., k)``),
    # and ``run_projected(state, u)`` over ``u`` ``(B, T, k)``.  The model then projects the
    # embedding table once and gathers rows of it for layer 0.
    projects_inputs: bool = False

    def project_inputs(self, x):  # pragma: no cover - optional
        """Row-wise input projection ``(..., d_in) -> (..., k)`` (only if ``projects_inputs``)."""
        raise NotImplementedError

    def run_projected(self, state: StateDict, u) -> tuple[StateDict, object]:  # pragma: no cover
        """Run over projected inputs ``u`` ``(B, T, k)`` (only if ``projects_inputs``)."""
        raise NotImplementedError

    # -- shared --------------------------------------------------------------------------
    def init_state(self, batch: int, xp=None) -> StateDict:
        """Zeros of shape ``(batch,) + state_shapes()[k]`` for every carried array."""
        xp = xp if xp is not None else self.xp
        return {k: xp.zeros((int(batch),) + tuple(s), dtype=self.dtype)
                for k, s in self.state_shapes().items()}

    def run_sequence(self, state: StateDict, x) -> tuple[StateDict, object]:
        """Run over ``x`` ``(B, T, d_in)``; returns (state, ``y`` ``(B, T, d_out)``).

        The default loops :meth:`step` and rounds the state after every step.
        """
        xp = self.xp
        ys = []
        for t in range(x.shape[1]):
            state, y = self.step(state, x[:, t, ...])  # (B, d_out)
            if not self.rounds_own_state:
                state = self.round_state(state)
            ys.append(y)
        if not ys:
            return state, xp.zeros((x.shape[0], 0, self.d_out), dtype=self.dtype)
        return state, xp.stack(ys, axis=1)  # (B, T, d_out)

    def to_namespace(self, xp, dtype=None) -> "RecurrentLayer":
        """A copy whose kernels run on namespace ``xp`` (and ``dtype``, default unchanged)."""
        new = copy.copy(self)
        new.xp = xp
        new.dtype = compute_dtype(xp, dtype if dtype is not None else _dtype_name(self.dtype))
        new.round_state = _identity_state
        new.prepare()
        return new

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.hyper.items())
        return f"{type(self).__name__}(d_in={self.d_in}, d_out={self.d_out}{extra})"


def _dtype_name(dtype) -> str:
    return "float32" if "32" in str(dtype) else "float64"


class RecurrentModel:
    """Token embedding ``(V, d)``, a stack of recurrent layers, a readout ``(d_out, C)`` + bias.

    Parameters
    ----------
    arch : str
        Registry name (``"lstm"``, ...).
    embedding : numpy.ndarray
        ``(V, d)`` token table (float64).  ``run`` also accepts float inputs ``(B, T, d)``
        instead of tokens (fixed features, bypassing the table).
    layers : list of RecurrentLayer
        ``layers[0].d_in == d``; ``layers[l].d_in == layers[l - 1].d_out``.
    readout_weight, readout_bias : numpy.ndarray
        ``(d_out_last, C)`` and ``(C,)``.
    precision : Precision or str, optional
        Rounds every carried array after every step; ``None`` is the float64 reference mode.
    dtype : {"float64", "float32"}
        Compute dtype.
    config : dict, optional
        The :func:`models.registry.build_model` arguments that rebuild this model (for saving).
    """

    def __init__(self, arch, embedding, layers, readout_weight, readout_bias, *, precision=None,
                 dtype="float64", xp=None, config=None):
        self.arch = arch
        self.embedding = np.asarray(embedding, dtype=np.float64)
        self.layers = list(layers)
        self.readout_weight = np.asarray(readout_weight, dtype=np.float64)
        self.readout_bias = np.asarray(readout_bias, dtype=np.float64)
        self.precision = None if precision is None else parse_precision(precision)
        self.config = dict(config or {})
        self.xp = xp if xp is not None else namespace_of()
        self.dtype = compute_dtype(self.xp, dtype)
        self._check_shapes()
        self._prepare()

    # -- construction --------------------------------------------------------------------
    def _check_shapes(self):
        V, d = self.embedding.shape
        widths = [d] + [layer.d_out for layer in self.layers]
        for i, layer in enumerate(self.layers):
            if layer.d_in != widths[i]:
                raise InvalidParameterError(f"layer {i} takes width {layer.d_in}, gets {widths[i]}")
        if self.readout_weight.shape[0] != widths[-1] or \
                self.readout_bias.shape != (self.readout_weight.shape[1],):
            raise InvalidParameterError(f"readout {self.readout_weight.shape} + bias "
                                        f"{self.readout_bias.shape} does not fit width {widths[-1]}")

    def _prepare(self):
        xp, dt = self.xp, self.dtype
        self._round = rnd = None if self.precision is None else StateRounder(self.precision, xp, dt)
        round_state = _identity_state if rnd is None else (lambda s: _round_arrays(xp, rnd, s))
        for layer in self.layers:
            if layer.xp is not xp or layer.dtype != dt:
                raise InvalidParameterError("layers must share the model's namespace and dtype")
            layer.round_state = round_state
        self._round_state = round_state
        self._emb = xp.asarray(self.embedding, dtype=dt)
        self._ro_w = xp.asarray(self.readout_weight, dtype=dt)
        self._ro_b = xp.asarray(self.readout_bias, dtype=dt)
        first = self.layers[0] if self.layers else None
        # A layer with an input projection sees table[tokens] with table = project(E), so the
        # projection of layer 0 is a gather (the same numbers for any split of the sequence).
        self._table = first.project_inputs(self._emb) if getattr(first, "projects_inputs", False) \
            else None

    def _copy(self, **changes) -> "RecurrentModel":
        xp = changes.get("xp", self.xp)
        dtype = changes.get("dtype", _dtype_name(self.dtype))
        layers = [layer.to_namespace(xp, dtype) for layer in self.layers]
        return RecurrentModel(self.arch, self.embedding, layers, self.readout_weight,
                              self.readout_bias, precision=changes.get("precision", self.precision),
                              dtype=dtype, xp=xp, config=self.config)

    def with_params(self, params: dict) -> "RecurrentModel":
        """A copy with new parameters, named and shaped as :attr:`params` (host arrays)."""
        from models.common import check_params

        given = check_params(self.params, params, f"{self.arch} model")
        layers = []
        for i, layer in enumerate(self.layers):
            new = copy.copy(layer)
            new.params = {k: given[f"l{i}.{k}"] for k in layer.params}
            new.round_state = _identity_state
            new.prepare()
            layers.append(new)
        return RecurrentModel(self.arch, given["embedding"], layers, given["readout.weight"],
                              given["readout.bias"], precision=self.precision,
                              dtype=_dtype_name(self.dtype), xp=self.xp, config=self.config)

    def to_namespace(self, xp, dtype=None) -> "RecurrentModel":
        """A copy whose kernels run on Array API namespace ``xp`` (NumPy, CuPy, array-api-strict)."""
        return self._copy(xp=xp, dtype=dtype if dtype is not None else _dtype_name(self.dtype))

    def with_precision(self, precision) -> "RecurrentModel":
        """A copy at another precision (``None``: float64 reference mode)."""
        return self._copy(precision=None if precision is None else parse_precision(precision))

    def with_dtype(self, dtype) -> "RecurrentModel":
        """A copy computing in ``dtype`` (``"float32"`` or ``"float64"``)."""
        return self._copy(dtype=dtype)

    # -- sizes ---------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return int(self.embedding.shape[0])

    @property
    def width(self) -> int:
        return int(self.embedding.shape[1])

    @property
    def n_outputs(self) -> int:
        return int(self.readout_weight.shape[1])

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def params(self) -> dict:
        """Every parameter by name (``embedding``, ``l0.<name>``, ``readout.weight``, ``readout.bias``)."""
        out = {"embedding": self.embedding}
        for i, layer in enumerate(self.layers):
            out.update({f"l{i}.{k}": v for k, v in layer.params.items()})
        out["readout.weight"] = self.readout_weight
        out["readout.bias"] = self.readout_bias
        return out

    def state_numbers(self) -> int:
        """Numbers each instance carries, measured from the arrays of ``init_state(1)``."""
        return int(sum(math.prod(a.shape[1:]) for a in self.init_state(1).values()))

    def state_bits(self) -> int:
        """Bits of the carried state per instance: ``state_numbers() * precision.bits``."""
        return self.state_numbers() * self._codec_precision().bits

    # -- running -------------------------------------------------------------------------
    def init_state(self, batch: int) -> StateDict:
        """The initial carried state: ``{"l0.h": (B, m), ...}`` in layer order."""
        state = {}
        for i, layer in enumerate(self.layers):
            state.update({f"l{i}.{k}": v for k, v in layer.init_state(batch, self.xp).items()})
        return state

    def _split(self, state) -> list:
        per = [dict() for _ in self.layers]
        for key, value in state.items():
            li, _, name = key.partition(".")
            per[int(li[1:])][name] = value
        return per

    def _join(self, per) -> StateDict:
        return {f"l{i}.{k}": v for i, s in enumerate(per) for k, v in s.items()}

    def _inputs(self, tokens):
        xp = self.xp
        if not is_array(tokens) or (is_numpy(tokens) and not array_api_compat.is_numpy_namespace(xp)):
            tokens = xp.asarray(np.array(tokens))  # host tokens to the model's namespace (an upload, a writable copy)
        if xp.isdtype(tokens.dtype, "real floating"):
            if tokens.ndim != 3 or tokens.shape[2] != self.width:
                raise InvalidParameterError(f"float inputs must be (B, T, {self.width}), "
                                            f"got {tuple(tokens.shape)}")
            return xp.astype(tokens, self.dtype, copy=False), False
        if tokens.ndim != 2:
            raise InvalidParameterError(f"tokens must be (B, T) integers, got shape {tuple(tokens.shape)}")
        if tokens.shape[0] * tokens.shape[1] and (int(xp.min(tokens)) < 0 or
                                                  int(xp.max(tokens)) >= self.vocab_size):
            raise InvalidParameterError(f"tokens must lie in [0, {self.vocab_size})")
        B, T = tokens.shape
        flat = xp.reshape(xp.permute_dims(tokens, (1, 0)), (-1,))  # (T*B,) time-major
        table = self._table if self._table is not None else self._emb
        x = xp.reshape(xp.take(table, flat, axis=0), (T, B, table.shape[1]))  # (T, B, k)
        return xp.permute_dims(x, (1, 0, 2)), self._table is not None  # (B, T, k)

    def run_layers(self, tokens, state=None) -> tuple[StateDict, object]:
        """Run over ``tokens`` ``(B, T)`` from ``state``; returns (state, top outputs ``(B, T, d_out)``).

        At a precision the pass runs with the fast rounding path; if a value saturated (or was
        NaN) anywhere, the pass is redone with ``precision.round`` itself, which counts it
        (see :class:`~models.common.StateRounder`).
        """
        x, projected = self._inputs(tokens)
        state = self.init_state(x.shape[0]) if state is None else state
        rnd = self._round
        if rnd is None:
            return self._run_layers(x, projected, state)
        rnd.start()
        out = self._run_layers(x, projected, state)
        if rnd.flagged():
            rnd.exact = True
            try:
                out = self._run_layers(x, projected, state)
            finally:
                rnd.start()
        return out

    def _run_layers(self, x, projected, state):
        per = self._split(state)
        for i, layer in enumerate(self.layers):
            if i == 0 and projected:
                per[i], x = layer.run_projected(per[i], x)  # (B, T, d_out)
            else:
                per[i], x = layer.run_sequence(per[i], x)  # (B, T, d_out)
        return self._join(per), x

    def run(self, tokens, state=None) -> StateDict:
        """The carried state after reading ``tokens`` ``(B, T)`` from ``state`` (default: initial)."""
        return self.run_layers(tokens, state)[0]

    def step(self, state, tokens_t) -> StateDict:
        """One step: ``tokens_t`` ``(B,)`` -> the new state (same arrays as ``run`` with T = 1)."""
        xp = self.xp
        tokens_t = tokens_t if is_array(tokens_t) and not is_numpy(tokens_t) else xp.asarray(np.asarray(tokens_t))
        return self.run(xp.reshape(tokens_t, (-1, 1)), state)

    def readout(self, state, last_y=None):
        """Logits ``(B, C)`` from the top layer's last output (read from the state when it is there)."""
        if last_y is None:
            last_y = self.layers[-1].output_from_state(self._split(state)[-1])
            if last_y is None:
                raise InvalidParameterError(f"{self.arch}: the output is not part of the state; "
                                            "pass last_y (use run_with_output)")
        return self.xp.matmul(last_y, self._ro_w) + self._ro_b  # (B, C)

    def run_with_output(self, tokens, state=None) -> tuple[StateDict, object]:
        """(state, logits ``(B, C)`` read out at the last step of ``tokens``)."""
        state, y = self.run_layers(tokens, state)
        last = y[:, -1, :] if y.shape[1] else None
        return state, self.readout(state, last)

    # -- the state as bits ---------------------------------------------------------------
    def _codec_precision(self) -> Precision:
        return self.precision if self.precision is not None else parse_precision("float64")

    def state_to_bits(self, state) -> BitRows:
        """The carried state as ``(B, state_numbers() * bits)`` bits at the model's precision.

        In float64 reference mode the code is float64's (64 bits per number, exact).
        """
        if not array_api_compat.is_numpy_namespace(self.xp):  # a device: encoded there, bits stay there
            xp = self.xp
            flat = xp.concat([xp.astype(xp.reshape(v, (v.shape[0], -1)), xp.float64) for v in state.values()],
                             axis=1)  # (B, numbers)
            return BitRows(self._codec_precision().encode_rows(flat))
        rows = [to_numpy(v).reshape(v.shape[0], -1) for v in state.values()]
        flat = np.concatenate(rows, axis=1) if rows else np.zeros((0, 0))  # (B, numbers)
        return BitRows(self._codec_precision().encode_rows(flat.astype(np.float64)))

    def bits_to_state(self, bits) -> StateDict:
        """Inverse of :meth:`state_to_bits` (arrays of the model's namespace and dtype)."""
        arr = bits.array if isinstance(bits, BitRows) else bits
        arr = arr if is_array(arr) else np.asarray(arr)
        if not array_api_compat.is_numpy_namespace(self.xp) and is_numpy(arr):
            arr = self.xp.asarray(arr)  # host bits to the model's device (an upload)
        values = self._codec_precision().decode_rows(arr)  # (B, numbers)
        template = self.init_state(1)
        expected = sum(math.prod(v.shape[1:]) for v in template.values())
        if values.shape[1] != expected:
            raise InvalidParameterError(f"{values.shape[1]} numbers in the bits, the state holds "
                                        f"{expected}")
        out, at = {}, 0
        for key, v in template.items():
            n = math.prod(v.shape[1:])
            shape = (values.shape[0],) + tuple(v.shape[1:])
            if is_numpy(values):
                out[key] = self.xp.asarray(values[:, at:at + n].reshape(shape), dtype=self.dtype)
            else:
                out[key] = self.xp.astype(self.xp.reshape(values[:, at:at + n], shape), self.dtype)
            at += n
        return out

    def __repr__(self) -> str:
        p = self.precision.name if self.precision is not None else "float64-reference"
        return (f"RecurrentModel({self.arch!r}, vocab={self.vocab_size}, width={self.width}, "
                f"layers={self.layers!r}, outputs={self.n_outputs}, precision={p})")


def build_recurrent_model(arch: str, layer_cls, *, vocab_size: int, width: int, n_outputs: int,
                          layers: int = 1, precision=None, seed=0, dtype="float64", xp=None,
                          config=None, input_width=None, **layer_hyper) -> RecurrentModel:
    """Embedding N(0, 1) ``(V, d)``, ``layers`` layers ``layer_cls.init(d_in, width, seed, **hyper)``
    of width ``m``, readout U(±1/sqrt(m)); each part seeded from its own child of ``seed``.
    The embedding width ``d`` is ``input_width`` (default ``m``).

    ``layer_cls.init`` is a classmethod ``init(d_in, width, seed, **hyper)`` that draws the weights
    and returns the layer (it receives ``dtype`` and ``xp`` among ``hyper``).
    """
    from models.common import init_embedding, init_readout

    for name, value in (("vocab_size", vocab_size), ("width", width), ("n_outputs", n_outputs),
                        ("layers", layers)):
        if int(value) < 1:
            raise InvalidParameterError(f"{arch}: {name} must be >= 1, got {value}")
    seeds = np.random.SeedSequence(int(seed)).spawn(int(layers) + 2)
    rngs = [np.random.default_rng(s) for s in seeds]
    d_in = int(width if input_width is None else input_width)
    embedding = init_embedding(rngs[0], int(vocab_size), d_in)
    stack = []
    for i in range(int(layers)):
        layer = layer_cls.init(d_in, int(width), rngs[i + 1], dtype=dtype, xp=xp, **layer_hyper)
        stack.append(layer)
        d_in = layer.d_out
    w, b = init_readout(rngs[-1], d_in, int(n_outputs))
    return RecurrentModel(arch, embedding, stack, w, b, precision=precision, dtype=dtype, xp=xp,
                          config=config)
