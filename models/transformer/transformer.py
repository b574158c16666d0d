"""The Transformer: embeddings, L attention + MLP layers, residual, optional norm, readout.

Parameters live in ``model.params`` (float64 NumPy, saved to ``.npz`` as they are), by name:

==================  ===============  ===============================================
name                shape            what
==================  ===============  ===============================================
``tok_emb``         ``(V, d)``       token table
``pos_emb``         ``(N_max, d)``   positional table (``learned`` / ``fixed`` only)
``l{i}.W_Q``        ``(H, d, d_k)``  query projection of layer i; ``l{i}.b_Q`` ``(H, d_k)``
``l{i}.W_K``        ``(H, d, d_k)``  key projection; ``l{i}.b_K`` ``(H, d_k)``
``l{i}.W_V``        ``(H, d, d_v)``  value projection; ``l{i}.b_V`` ``(H, d_v)``
``l{i}.W_O``        ``(H, d_v, d)``  output projection; ``l{i}.b_O`` ``(d,)``
``l{i}.mlp.W1``     ``(d, d_mlp)``   MLP in; ``l{i}.mlp.b1`` ``(d_mlp,)`` (no MLP if d_mlp = 0)
``l{i}.mlp.W2``     ``(d_mlp, d)``   MLP out; ``l{i}.mlp.b2`` ``(d,)``
``l{i}.ln1.g/.b``   ``(d,)``         norm of the attention sub-layer (with ``layer_norm``)
``l{i}.ln2.g/.b``   ``(d,)``         norm of the MLP sub-layer (with ``layer_norm``)
``ln_f.g/.b``       ``(d,)``         final norm (``layer_norm="pre"`` only)
``readout.W``       ``(d, C)``       readout at the output position; ``readout.b`` ``(C,)``
==================  ===============  ===============================================

One layer, pre-norm (``layer_norm="post"`` applies each norm after its residual add instead;
``layer_norm=False`` has no norms; ``residual=False`` drops both skip connections)::

    x = x + concat_h(softmax(scale · Q_h K_hᵀ) V_h) W_O + b_O       Q, K, V from norm1(x)
    x = x + act(norm2(x) W1 + b1) W2 + b2

At a :class:`~commcomp.precision.Precision` every activation is rounded onto its grid
(embeddings, q, k, v, attention outputs, MLP units, residual stream, logits); weights are used as
given.  ``precision=None`` is the float64 reference mode.  The split of a 1-layer model between
Alice and Bob (``query``, ``partial``, ``finish``) is in :mod:`models.transformer.split`.

Compute dtype (``dtype="float32"``): the weights, every activation and the logits are float32
(``precision=None`` is then the float32 reference mode).  The exact attention sums of a precision
stay exact: each weight and weighted value is put on its fixed-point grid from float64 (a float32
value is one exactly) and summed in int64, so ``finish`` of the partials of any split still
equals ``forward()`` bit for bit.  The exact split of the embedding
(:mod:`models.transformer.factored`) is a float64 shortcut and is not used in float32.

Random initialisation (:meth:`Transformer.random`): ``tok_emb`` and a learned ``pos_emb`` N(0, 1)
(``torch.nn.Embedding``); W_Q, W_K, W_V Glorot-uniform over ``(d, H·d_h)`` with zero biases and
W_O U(±1/sqrt(H·d_v)) with zero bias (``torch.nn.MultiheadAttention``); MLP and readout weights and
biases U(±1/sqrt(fan_in)) (``torch.nn.Linear``); norm gains 1 and biases 0.

Examples
--------
>>> import numpy as np
>>> model = Transformer.random(vocab_size=5, d_model=8, n_layers=1, n_heads=2, d_k=4, d_v=4,
...                            d_mlp=16, n_outputs=3, max_len=16, seed=0)
>>> tokens = np.array([[0, 1, 2, 3], [4, 4, 0, 1]])            # (B=2, N=4)
>>> model.forward(tokens).shape, model.forward_all(tokens).shape
((2, 3), (2, 4, 3))
>>> bool(np.allclose(model.forward(tokens), model.forward_all(tokens)[:, -1], atol=1e-12))
True
"""

from __future__ import annotations

import math

import numpy as np

from commcomp.backend import is_array, namespace_of, to_numpy
from commcomp.errors import InvalidParameterError
from commcomp.precision import parse_precision
from models.common import compute_dtype, make_rounder

from .block import (ACTIVATIONS, NORMS, AttentionBlock, block_param_shapes, checked_params, init_block,
                    normalize)
from .factored import first_layer_heads, shared_pattern
from .positional import Positional
from .split import SplitMixin

__all__ = ["Transformer", "AttentionBlock", "normalize", "block_param_shapes", "build_transformer"]


def _dtype_name(dtype) -> str:
    return "float32" if "32" in str(dtype) else "float64"


class Transformer(SplitMixin):
    """An L-layer Transformer over tokens ``(B, N)`` (see the module docstring for parameters).

    Parameters
    ----------
    vocab_size, d_model, n_layers, n_heads, d_k, d_v, d_mlp, n_outputs : int
        ``V``, ``d``, ``L``, ``H``, per-head key and value widths, MLP width (0: no MLP), ``C``.
    positional : {"learned", "fixed", "sinusoidal", "none"} or array_like
        An array is a fixed table ``(N_max, d)`` (kind ``"fixed"``, stored as ``pos_emb``).
    causal : bool
        Causal attention mask (default True).
    layer_norm : {False, True, "pre", "post"}
        No norms, pre-norm (``True``) or post-norm.
    norm : {"layer", "rms"}
        LayerNorm or RMSNorm (both with gain ``g`` and bias ``b``).
    activation : {"relu", "gelu"}
        MLP activation (gelu: the tanh form).
    residual : bool
        Skip connections around both sub-layers (default True).
    attn_scale : float, optional
        Multiplies the scores; default ``1/sqrt(d_k)`` (constructions that fold β into W_Q use 1).
    max_len : int, optional
        Rows of a learned table when ``params`` has none (default 1024).
    precision : Precision or str, optional
        Number format of every activation (``None``: float64 reference).
    params : dict, optional
        Parameters by name; missing ones are zero (norm gains one), so a construction sets only
        the blocks it needs.  Unknown names or wrong shapes raise.
    xp : namespace, optional
        Array API namespace of the kernels (default NumPy).
    dtype : {"float64", "float32"}
        Compute dtype of the weights, activations and logits (default float64).
    """

    arch = "transformer"

    def __init__(self, vocab_size, d_model, n_layers, n_heads, d_k, d_v, d_mlp, n_outputs, *,
                 positional="learned", causal=True, layer_norm=False, norm="layer",
                 activation="relu", residual=True, attn_scale=None, max_len=None, precision=None,
                 params=None, xp=None, ln_eps=1e-5, dtype="float64"):
        self.vocab_size, self.d_model, self.n_layers = int(vocab_size), int(d_model), int(n_layers)
        self.n_heads, self.d_k, self.d_v = int(n_heads), int(d_k), int(d_v)
        self.d_mlp, self.n_outputs = int(d_mlp), int(n_outputs)
        params = dict(params or {})
        if is_array(positional) or isinstance(positional, (list, tuple)):
            params["pos_emb"], positional = np.asarray(to_numpy(positional)), "fixed"
        self.positional_kind, self.causal, self.residual = positional, bool(causal), bool(residual)
        self.layer_norm = {False: None, None: None, True: "pre", "pre": "pre", "post": "post"}.get(
            layer_norm, "bad")
        if self.layer_norm == "bad" or norm not in NORMS or activation not in ACTIVATIONS:
            raise InvalidParameterError(f"layer_norm in (False, True, 'pre', 'post'), norm in {NORMS}"
                                        f", activation in {ACTIVATIONS}; got {layer_norm!r}, "
                                        f"{norm!r}, {activation!r}")
        if min(self.vocab_size, self.d_model, self.n_layers, self.n_heads, self.d_k, self.d_v,
               self.n_outputs) < 1 or self.d_mlp < 0:
            raise InvalidParameterError("sizes must be >= 1 (d_mlp >= 0)")
        self.norm, self.activation, self.ln_eps = norm, activation, float(ln_eps)
        self.attn_scale = 1.0 / math.sqrt(self.d_k) if attn_scale is None else float(attn_scale)
        if "pos_emb" in params:
            max_len = np.asarray(to_numpy(params["pos_emb"])).shape[0]
        self.max_len = int(max_len or 1024) if positional in ("learned", "fixed") else None
        self.precision = None if precision is None else parse_precision(precision)
        self.params = checked_params(params, self.param_shapes())
        self.xp = xp if xp is not None else namespace_of()
        self.dtype = compute_dtype(self.xp, dtype)
        self.prepare()

    # -- parameters ----------------------------------------------------------------------
    def param_shapes(self) -> dict:
        """Every parameter name and its shape (the table in the module docstring)."""
        d, C = self.d_model, self.n_outputs
        shapes = {"tok_emb": (self.vocab_size, d)}
        if self.positional_kind in ("learned", "fixed"):
            shapes["pos_emb"] = (self.max_len, d)
        for i in range(self.n_layers):
            block = block_param_shapes(d, self.n_heads, self.d_k, self.d_v, self.d_mlp,
                                       self.layer_norm is not None)
            shapes.update({f"l{i}.{k}": s for k, s in block.items()})
        if self.layer_norm == "pre":
            shapes.update({"ln_f.g": (d,), "ln_f.b": (d,)})
        shapes.update({"readout.W": (d, C), "readout.b": (C,)})
        return shapes

    def prepare(self) -> None:
        """(Re)build the arrays of ``self.xp`` from ``self.params`` (call after editing params)."""
        xp = self.xp
        self.w = {k: xp.asarray(v, dtype=self.dtype) for k, v in self.params.items()}
        self.rnd = make_rounder(self.precision, xp, self.dtype)
        self.pos = Positional(self.positional_kind, self.d_model, table=self.w.get("pos_emb"))
        self.blocks = [AttentionBlock(
            {k.split(".", 1)[1]: v for k, v in self.w.items() if k.startswith(f"l{i}.")},
            n_heads=self.n_heads, causal=self.causal, layer_norm=self.layer_norm, norm=self.norm,
            activation=self.activation, residual=self.residual, scale=self.attn_scale,
            eps=self.ln_eps, rnd=self.rnd, xp=xp) for i in range(self.n_layers)]
        self._grids = {}
        self._cache = {}  # tables of models.transformer.factored and split.py, per length

    def _kwargs(self) -> dict:
        return {"vocab_size": self.vocab_size, "d_model": self.d_model, "n_layers": self.n_layers,
                "n_heads": self.n_heads, "d_k": self.d_k, "d_v": self.d_v, "d_mlp": self.d_mlp,
                "n_outputs": self.n_outputs, "positional": self.positional_kind,
                "causal": self.causal, "layer_norm": self.layer_norm or False, "norm": self.norm,
                "activation": self.activation, "residual": self.residual,
                "attn_scale": self.attn_scale, "max_len": self.max_len, "ln_eps": self.ln_eps,
                "dtype": _dtype_name(self.dtype)}

    @property
    def config(self) -> dict:
        """The :func:`models.registry.build_model` arguments that rebuild this model's shape
        (``models.common.save_model`` stores them beside :attr:`params`)."""
        k = self._kwargs()
        if k["dtype"] == "float64":
            del k["dtype"]  # the default: configs saved before the float32 mode read the same
        return {"arch": self.arch, "vocab_size": k.pop("vocab_size"), "width": k.pop("d_model"),
                "n_outputs": k.pop("n_outputs"), "layers": k.pop("n_layers"),
                "heads": k.pop("n_heads"), **k,
                "precision": None if self.precision is None else self.precision.name}

    def _copy(self, **changes) -> "Transformer":
        kw = {**self._kwargs(), "precision": self.precision, "xp": self.xp, "params": self.params,
              **changes}
        return Transformer(**kw)

    def with_params(self, params: dict) -> "Transformer":
        """A copy with some or all parameters replaced (names and shapes as :meth:`param_shapes`)."""
        return self._copy(params={**self.params, **params})

    def to_namespace(self, xp) -> "Transformer":
        """A copy whose kernels run on Array API namespace ``xp`` (NumPy, CuPy, array-api-strict)."""
        return self._copy(xp=xp)

    def with_precision(self, precision) -> "Transformer":
        """A copy at another precision (``None``: float64 reference mode)."""
        return self._copy(precision=None if precision is None else parse_precision(precision))

    def with_dtype(self, dtype) -> "Transformer":
        """A copy computing in ``dtype`` (``"float32"`` or ``"float64"``)."""
        return self._copy(dtype=_dtype_name(compute_dtype(self.xp, dtype)))

    @classmethod
    def random(cls, vocab_size, d_model, n_layers, n_heads, d_k, d_v, d_mlp, n_outputs, *,
               seed=0, **kwargs) -> "Transformer":
        """Seeded random weights (initialisers in the module docstring); ``kwargs`` as the constructor."""
        rng = np.random.default_rng(seed)
        kwargs = dict(kwargs)
        positional = kwargs.get("positional", "learned")
        norm = kwargs.get("layer_norm", False) not in (False, None)
        p = {"tok_emb": rng.normal(size=(vocab_size, d_model))}
        rows = int(kwargs.pop("max_len", None) or 1024)
        if isinstance(positional, str) and positional == "learned":
            p["pos_emb"] = rng.normal(size=(rows, d_model))
        elif isinstance(positional, str) and positional == "fixed":
            p["pos_emb"] = np.zeros((rows, d_model))  # a fixed table the caller fills in
        for i in range(n_layers):
            block = init_block(rng, d_model, n_heads, d_k, d_v, d_mlp, norm)
            p.update({f"l{i}.{k}": v for k, v in block.items()})
        a = 1.0 / math.sqrt(d_model)
        p["readout.W"] = rng.uniform(-a, a, size=(d_model, n_outputs))
        p["readout.b"] = rng.uniform(-a, a, size=(n_outputs,))
        p.update(kwargs.pop("params", None) or {})
        return cls(vocab_size, d_model, n_layers, n_heads, d_k, d_v, d_mlp, n_outputs, params=p,
                   **kwargs)

    def save(self, path):
        """Write the model to ``.npz`` (:func:`models.common.save_model`: config + parameters)."""
        from models.files import save_model
        return save_model(self, path)

    @classmethod
    def load(cls, path, **overrides) -> "Transformer":
        """Read what :meth:`save` wrote; ``overrides`` replace saved arguments (``precision=``)."""
        from models.files import load_model
        return load_model(path, **overrides)

    # -- running -------------------------------------------------------------------------
    def _tokens(self, tokens):
        xp = self.xp
        t = tokens if is_array(tokens) and namespace_of(tokens) is xp else \
            xp.asarray(np.array(to_numpy(tokens) if is_array(tokens) else tokens))  # a writable copy
        if t.ndim != 2 or not xp.isdtype(t.dtype, "integral"):
            raise InvalidParameterError(f"tokens must be (B, N) integers, got {tuple(t.shape)} {t.dtype}")
        if t.shape[0] * t.shape[1] and (int(xp.min(t)) < 0 or int(xp.max(t)) >= self.vocab_size):
            raise InvalidParameterError(f"tokens must lie in [0, {self.vocab_size})")
        if t.shape[1] < 1:
            raise InvalidParameterError("need at least one position")
        self.pos.check_length(t.shape[1])
        return xp.astype(t, xp.int64)

    def _output_position(self, output_position, n: int) -> int:
        o = n - 1 if output_position is None else int(output_position)
        o = o + n if o < 0 else o
        if not 0 <= o < n:
            raise InvalidParameterError(f"output position {output_position} outside [0, {n})")
        return o

    def embed(self, tokens):
        """Token + positional vectors ``(B, N, d)``, rounded (tokens already validated)."""
        xp = self.xp
        B, N = tokens.shape
        tok = xp.reshape(xp.take(self.w["tok_emb"], xp.reshape(tokens, (-1,)), axis=0), (B, N, -1))
        return self.rnd(tok + self.position_rows(xp.arange(N))[None, :, :])  # (B, N, d)

    def position_rows(self, positions):
        """The positional vectors of ``positions`` ``(n,)`` in the compute dtype: ``(n, d)``."""
        return self.xp.astype(self.pos.rows(positions, self.xp), self.dtype, copy=False)

    def embed_at(self, tokens_at, position: int):
        """The embedding of one position ``(B, d)``: row ``position`` of :meth:`embed`, bit for bit."""
        xp = self.xp
        tok = xp.take(self.w["tok_emb"], tokens_at, axis=0)  # (B, d)
        return self.rnd(tok + self.position_rows(xp.asarray([position])))  # (B, d)

    def readout(self, x):
        """Final norm (pre-norm models) and readout: ``(..., d)`` -> logits ``(..., C)``."""
        if self.layer_norm == "pre":
            x = self.rnd(normalize(x, self.w["ln_f.g"], self.w["ln_f.b"], self.norm, self.ln_eps))
        return self.rnd(self.xp.matmul(x, self.w["readout.W"]) + self.w["readout.b"])

    def forward_all(self, tokens, *, max_block_elements=None):
        """Logits at every position ``(B, N, C)``, attention in blocks of query rows.

        At a precision the attention is a float64 softmax (row max as shift) whose output is
        rounded; it agrees with :meth:`forward` to within the grid, not bit for bit.
        """
        tokens = self._tokens(tokens)
        x = self.embed(tokens)  # (B, N, d)
        for i, block in enumerate(self.blocks):
            x = block.full(x, max_block_elements, self._shared_qk(tokens) if i == 0 else None)
        return self.readout(x)  # (B, N, C)

    def _shared_qk(self, tokens):
        """The first layer's ``(Q, K)`` ``(1, H, N, d_k)`` when no instance changes them, else None
        (:func:`models.transformer.factored.shared_pattern`)."""
        if not shared_pattern(self, tokens.shape[1]):
            return None
        return first_layer_heads(self, tokens, "Q"), first_layer_heads(self, tokens, "K")

    def forward(self, tokens, output_position=None):
        """Logits ``(B, C)`` at the output position (default the last) in O(N·m) for the top layer.

        A 1-layer model computes exactly ``finish(partial(tokens, all positions))``: at a precision
        its attention terms sit on the fixed-point grid and are summed in integers (DESIGN §3).
        """
        tokens = self._tokens(tokens)
        o = self._output_position(output_position, tokens.shape[1])
        if self.n_layers == 1:
            return self.finish(self.partial(tokens, None, output_position=o), tokens[:, o])
        return self.top_logits(self.layer_inputs(tokens, self.n_layers - 1), o)  # (B, C)

    __call__ = forward

    def layer_inputs(self, tokens, upto: int, patches=None):
        """The residual stream ``(B, N, d)`` that layer ``upto`` reads (0: the embedding), the
        layers below run at every position as :meth:`forward` runs them (float softmax, row max).

        ``patches`` maps a layer ``i < upto`` to ``{"K": (rows, mask), "V": (rows, mask)}``
        (:meth:`AttentionBlock.heads`): layer i's keys and values at the positions of ``mask`` are
        taken from ``rows`` ``(B, N, H, d_h)``. The split of a deep model
        (:mod:`reductions.simulate.deep_transformer`) puts there what the other party sent; with
        no patches this is the unsplit pass, and :meth:`forward` is
        ``top_logits(layer_inputs(tokens, L - 1), o)``.
        """
        tokens = self._tokens(tokens)
        patches = patches or {}
        x = self.embed(tokens)  # (B, N, d)
        for i in range(int(upto)):
            x = self.blocks[i].full(x, None, self._shared_qk(tokens) if i == 0 else None,
                                    patches.get(i))  # (B, N, d)
        return x

    def shares_first_keys(self, n_positions: int) -> bool:
        """Whether layer 0's queries and keys are the same for every input of ``n_positions``
        (:func:`models.transformer.factored.shared_pattern`; only its values then depend on tokens)."""
        return self.n_layers > 1 and bool(shared_pattern(self, int(n_positions)))

    def top_logits(self, x, output_position: int, patch=None):
        """Logits ``(B, C)`` of the top layer at one position from its input ``x`` ``(B, N, d)``
        (:meth:`layer_inputs` of layer ``L - 1``): float softmax over the positions it sees
        (``patch``: received keys and values, as in :meth:`layer_inputs`)."""
        return self.readout(self.blocks[-1].last(x, int(output_position), patch))  # (B, C)

    def forward_at(self, tokens, output_positions):
        """Logits ``(B, K, C)`` at each of ``output_positions``, equal bit for bit to
        ``forward(tokens, o)`` for each ``o``; the work that does not depend on ``o`` (the first
        layer's keys and values, the lower layers) is done once."""
        tokens = self._tokens(tokens)
        N = tokens.shape[1]
        outputs = [self._output_position(o, N) for o in output_positions]
        if not outputs:
            return self.xp.zeros((tokens.shape[0], 0, self.n_outputs), dtype=self.dtype)
        if self.n_layers == 1:
            logits = self._forward_at_one_layer(tokens, outputs)
        else:
            x = self.layer_inputs(tokens, self.n_layers - 1)  # (B, N, d)
            logits = [self.top_logits(x, o) for o in outputs]
        return self.xp.stack(logits, axis=1)  # (B, K, C)

    def __repr__(self) -> str:
        p = self.precision.name if self.precision is not None else f"{_dtype_name(self.dtype)}-reference"
        return (f"Transformer(V={self.vocab_size}, d={self.d_model}, L={self.n_layers}, "
                f"H={self.n_heads}, d_k={self.d_k}, d_v={self.d_v}, d_mlp={self.d_mlp}, "
                f"C={self.n_outputs}, positional={self.positional_kind!r}, causal={self.causal}, "
                f"layer_norm={self.layer_norm}, precision={p}"
                f"{'' if _dtype_name(self.dtype) == 'float64' else ', dtype=float32'})")


def build_transformer(*, vocab_size, width, n_outputs, layers=1, heads=1, precision=None, seed=0,
                      d_k=None, d_v=None, d_mlp=None, max_len=4096, xp=None, dtype="float64",
                      **options) -> Transformer:
    """Registry builder: :meth:`Transformer.random` with ``d_model = width``, ``heads`` heads of
    ``d_k = d_v = width`` (the m of the bounds), an MLP of ``4 · width`` and a learned table of
    ``max_len`` rows; other constructor options (``positional``, ``causal``, ...) pass through;
    ``dtype`` is the compute dtype (``"float64"`` or ``"float32"``)."""
    return Transformer.random(vocab_size, width, layers, heads, d_k or width, d_v or width,
                              4 * width if d_mlp is None else d_mlp, n_outputs, seed=seed,
                              precision=precision, xp=xp, max_len=max_len, dtype=dtype, **options)
