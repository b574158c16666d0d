"""Hybrid: recurrent layers with one attention layer on top (Wen, Dang, Lyu, theorems.md §3, §6).

As in WDL's code: token embedding, a stack of recurrent layers (any
:class:`~models.recurrent.base.RecurrentLayer`; WDL uses Mamba), the stack's final norm, one
decoder layer (pre-norm causal multi-head attention + MLP, each with a residual), then the head::

    y = recurrent_stack(tok_emb[tokens])          # (B, N, d), states rounded every step
    x = norm_f(y)
    x = x + attention(norm1(x));  x = x + mlp(norm2(x))
    logits = x W + b

Parameters (``model.params``): ``tok_emb`` ``(V, d_in)``; ``r{i}.<name>`` the recurrent layers'
own parameters; ``norm_f.g/.b`` ``(d,)``; ``attn.W_Q`` ``(H, d, d_k)`` ... ``attn.b_O`` ``(d,)``,
``attn.mlp.*``, ``attn.ln1.g/.b``, ``attn.ln2.g/.b`` (names of
:func:`~models.transformer.transformer.block_param_shapes`); ``readout.W`` ``(d, C)``,
``readout.b`` ``(C,)``; ``d`` is the top recurrent layer's ``d_out``.

Departures from WDL, on purpose: no rotary position embedding in the attention layer (the
recurrence supplies order), the causal mask is exact (WDL adds −100), and the MLP is a plain
two-layer one (``gelu`` by default) instead of Llama's gated SwiGLU.

**Split** (``reductions/simulate/hybrid.py``): the recurrent layers are causal, so with a
prefix/suffix split the attention layer's keys and values at Alice's positions depend on her tokens
only.  :meth:`Hybrid.query` is the query at the output position (Bob's, from the hidden row there),
:meth:`Hybrid.partial` the attention sums over some positions and :meth:`Hybrid.finish` the logits
from their total, exactly as for a 1-layer Transformer (:mod:`.split`): with the pre-norm the
shift ``c`` bounds every score from the weights and the query alone, and at a precision the terms
sit on :meth:`Hybrid.attention_grid` and are summed in integers.  At a precision :meth:`forward`
*is* ``finish(partial(all positions))``, so any split adds up to it bit for bit; without the
pre-norm (``layer_norm=False``) no shift is agreed in advance and :meth:`partial` refuses.

Examples
--------
>>> import numpy as np
>>> model = build_hybrid(vocab_size=5, width=8, n_outputs=2, layers=1, heads=2, seed=0,
...                      recurrent="elman")
>>> tokens = np.array([[0, 1, 2, 3, 4]])                          # (B=1, N=5)
>>> bool(np.allclose(model.forward(tokens), model.forward_all(tokens)[:, -1], atol=1e-12))
True
"""

from __future__ import annotations

import copy
import importlib
import inspect
import math
import re

import numpy as np

from commcomp.backend import namespace_of
from commcomp.errors import InvalidParameterError, UnsupportedSplitError
from commcomp.precision import parse_precision
from models.common import make_rounder
from models.recurrent.base import RecurrentModel

from .attention import (AttentionPartial, attention_from_sums, exact_attention_sums, float_attention_sums,
                        sum_partials)
from .block import NORMS, AttentionBlock, block_param_shapes, checked_params, init_block, normalize
from .split import attention_grid_for, prenorm_score_shift, prenorm_value_bound

__all__ = ["Hybrid", "build_hybrid"]



class Hybrid:
    """Recurrent stack + one attention layer (see the module docstring).

    Parameters
    ----------
    vocab_size : int
    layers : list of RecurrentLayer
        The recurrent stack (copied; ``layers[0].d_in`` is the embedding width).
    n_heads, d_k, d_v, d_mlp, n_outputs : int
        The attention layer (``d_mlp = 0``: no MLP) and the head.
    causal : bool
    layer_norm : bool
        ``norm_f`` and the pre-norms of the attention layer (default True).
    norm : {"rms", "layer"}
        RMSNorm (Mamba's and Llama's, default) or LayerNorm.
    activation, residual, attn_scale, ln_eps, precision, params, xp
        As for :class:`~models.transformer.Transformer`.
    """

    arch = "hybrid"

    def __init__(self, vocab_size, layers, n_heads, d_k, d_v, d_mlp, n_outputs, *, causal=True,
                 layer_norm=True, norm="rms", activation="gelu", residual=True, attn_scale=None,
                 precision=None, params=None, xp=None, ln_eps=1e-5):
        if not layers:
            raise InvalidParameterError("a hybrid needs at least one recurrent layer")
        if norm not in NORMS:
            raise InvalidParameterError(f"norm must be one of {NORMS}, got {norm!r}")
        self.xp = xp if xp is not None else namespace_of()
        self.layers = [layer.to_namespace(self.xp, "float64") for layer in layers]
        self.vocab_size, self.n_heads, self.d_k, self.d_v = int(vocab_size), int(n_heads), int(d_k), int(d_v)
        self.d_mlp, self.n_outputs = int(d_mlp), int(n_outputs)
        self.d_model = self.layers[-1].d_out
        self.causal, self.layer_norm, self.norm = bool(causal), bool(layer_norm), norm
        self.activation, self.residual, self.ln_eps = activation, bool(residual), float(ln_eps)
        self.attn_scale = 1.0 / math.sqrt(self.d_k) if attn_scale is None else float(attn_scale)
        self.precision = None if precision is None else parse_precision(precision)
        self.own_params = checked_params(dict(params or {}), self.param_shapes())
        self.prepare()

    def param_shapes(self) -> dict:
        """The hybrid's own parameter names and shapes (the recurrent layers keep theirs)."""
        d = self.d_model
        shapes = {"tok_emb": (self.vocab_size, self.layers[0].d_in)}
        if self.layer_norm:
            shapes.update({"norm_f.g": (d,), "norm_f.b": (d,)})
        block = block_param_shapes(d, self.n_heads, self.d_k, self.d_v, self.d_mlp, self.layer_norm)
        shapes.update({f"attn.{k}": s for k, s in block.items()})
        shapes.update({"readout.W": (d, self.n_outputs), "readout.b": (self.n_outputs,)})
        return shapes

    @property
    def params(self) -> dict:
        """Every parameter: the hybrid's own and ``r{i}.<name>`` of the recurrent layers."""
        out = dict(self.own_params)
        for i, layer in enumerate(self.layers):
            out.update({f"r{i}.{k}": v for k, v in layer.params.items()})
        return out

    def prepare(self) -> None:
        """(Re)build the kernels' arrays from the parameters."""
        xp = self.xp
        self.w = {k: xp.asarray(v) for k, v in self.own_params.items()}
        self.rnd = make_rounder(self.precision, xp, xp.float64)
        self.stack = RecurrentModel("hybrid", self.own_params["tok_emb"], self.layers,
                                    np.zeros((self.d_model, 1)), np.zeros(1),
                                    precision=self.precision, xp=xp)
        self._grids = {}
        block = {k[5:]: v for k, v in self.w.items() if k.startswith("attn.")}
        self.block_w = block
        self.block = AttentionBlock(block, n_heads=self.n_heads, causal=self.causal,
                                    layer_norm="pre" if self.layer_norm else None, norm=self.norm,
                                    activation=self.activation, residual=self.residual,
                                    scale=self.attn_scale, eps=self.ln_eps, rnd=self.rnd, xp=xp)

    def _kwargs(self) -> dict:
        return {"vocab_size": self.vocab_size, "n_heads": self.n_heads, "d_k": self.d_k,
                "d_v": self.d_v, "d_mlp": self.d_mlp, "n_outputs": self.n_outputs,
                "causal": self.causal, "layer_norm": self.layer_norm, "norm": self.norm,
                "activation": self.activation, "residual": self.residual,
                "attn_scale": self.attn_scale, "ln_eps": self.ln_eps}

    def layer_specs(self) -> list:
        """How to rebuild each recurrent layer: module, class, widths, hyper and parameter shapes."""
        return [{"module": type(l).__module__, "class": type(l).__qualname__, "d_in": l.d_in,
                 "d_out": l.d_out, "hyper": l.hyper,
                 "shapes": {k: list(np.shape(v)) for k, v in l.params.items()}} for l in self.layers]

    @property
    def config(self) -> dict:
        """:func:`models.registry.build_model` arguments (``layer_specs`` rebuilds the stack)."""
        k = self._kwargs()
        return {"arch": self.arch, "vocab_size": k.pop("vocab_size"), "width": self.d_model,
                "n_outputs": k.pop("n_outputs"), "layers": len(self.layers),
                "heads": k.pop("n_heads"), **k, "layer_specs": self.layer_specs(),
                "precision": None if self.precision is None else self.precision.name}

    def _copy(self, **changes) -> "Hybrid":
        kw = {**self._kwargs(), "precision": self.precision, "xp": self.xp,
              "params": self.own_params, "layers": self.layers, **changes}
        return Hybrid(**kw)

    def with_params(self, params: dict) -> "Hybrid":
        """A copy with some or all parameters replaced (own names, or ``r{i}.<name>``)."""
        own = {k: v for k, v in params.items() if not re.match(r"r\d+\.", k)}
        layers = []
        for i, layer in enumerate(self.layers):
            mine = {k.split(".", 1)[1]: v for k, v in params.items() if k.startswith(f"r{i}.")}
            if mine:
                unknown = set(mine) - set(layer.params)
                if unknown:
                    raise InvalidParameterError(f"layer r{i} has no parameters {sorted(unknown)}")
                layer = copy.copy(layer)
                layer.params = {**layer.params, **{k: np.asarray(v, dtype=np.float64)
                                                   for k, v in mine.items()}}
                layer.prepare()
            layers.append(layer)
        return self._copy(params={**self.own_params, **own}, layers=layers)

    def to_namespace(self, xp) -> "Hybrid":
        """A copy whose kernels run on Array API namespace ``xp``."""
        return self._copy(xp=xp)

    def with_precision(self, precision) -> "Hybrid":
        """A copy at another precision (``None``: float64 reference mode)."""
        return self._copy(precision=None if precision is None else parse_precision(precision))

    @classmethod
    def random(cls, vocab_size, layers, n_heads, d_k, d_v, d_mlp, n_outputs, *, seed=0, **kwargs):
        """Seeded random embedding N(0, 1), attention layer and head (as ``Transformer.random``)."""
        rng = np.random.default_rng(seed)
        d, norm = layers[-1].d_out, kwargs.get("layer_norm", True)
        p = {"tok_emb": rng.normal(size=(vocab_size, layers[0].d_in))}
        p.update({f"attn.{k}": v for k, v in init_block(rng, d, n_heads, d_k, d_v, d_mlp, norm).items()})
        a = 1.0 / math.sqrt(d)
        p["readout.W"] = rng.uniform(-a, a, size=(d, n_outputs))
        p["readout.b"] = rng.uniform(-a, a, size=(n_outputs,))
        p.update(kwargs.pop("params", None) or {})
        return cls(vocab_size, layers, n_heads, d_k, d_v, d_mlp, n_outputs, params=p, **kwargs)

    # -- running -------------------------------------------------------------------------
    def hidden(self, tokens):
        """The attention layer's input ``(B, N, d)``: the stack's outputs after ``norm_f``."""
        _, y = self.stack.run_layers(tokens)  # (B, N, d)
        x = self.rnd(y)
        if self.layer_norm:
            x = self.rnd(normalize(x, self.w["norm_f.g"], self.w["norm_f.b"], self.norm, self.ln_eps))
        return x

    def _readout(self, x):
        return self.rnd(self.xp.matmul(x, self.w["readout.W"]) + self.w["readout.b"])

    def forward_all(self, tokens, *, max_block_elements=None):
        """Logits at every position ``(B, N, C)`` (attention in blocks of query rows)."""
        return self._readout(self.block.full(self.hidden(tokens), max_block_elements))

    def forward(self, tokens, output_position=None):
        """Logits ``(B, C)`` at the output position (default the last), attention in O(N·m).

        At a precision, with the pre-norm, this is ``finish(partial(all positions))``: the attention
        terms on :meth:`attention_grid`, summed in integers (what the split adds up to bit for bit).
        """
        x = self.hidden(tokens)  # (B, N, d)
        o = self._output_position(output_position, x.shape[1])
        if self.precision is None or not self.layer_norm:
            return self._readout(self.block.last(x, o))  # (B, C), float softmax
        return self.finish(self.partial(x, None, self.query(x[:, o, :]), o), x[:, o, :])

    __call__ = forward

    @staticmethod
    def _output_position(output_position, n: int) -> int:
        o = n - 1 if output_position is None else int(output_position)
        o = o + n if o < 0 else o
        if not 0 <= o < n:
            raise InvalidParameterError(f"output position {output_position} outside [0, {n})")
        return o

    # -- the split (module docstring) ----------------------------------------------------
    def _need_prenorm(self) -> None:
        if not self.layer_norm:
            raise UnsupportedSplitError(
                "the hybrid split needs the attention layer's pre-norm (layer_norm=True): it bounds every "
                "score from the weights and the query alone, so both parties agree on the softmax shift "
                "without sending it; this model has none")

    def value_bound(self) -> float:
        """A bound on ``|v|`` over every input, from the weights alone (pre-norm)."""
        self._need_prenorm()
        p = self.own_params
        return prenorm_value_bound(p["attn.W_V"], p["attn.b_V"], p["attn.ln1.g"], p["attn.ln1.b"], self.d_model)

    def attention_grid(self, n_positions: int):
        """The attention terms' fixed-point grids for ``n_positions`` (None: float64 reference mode)."""
        self._need_prenorm()
        if self.precision is None:
            return None
        n = int(n_positions)
        if n not in self._grids:
            self._grids[n] = attention_grid_for(self.precision, n, self.value_bound)
        return self._grids[n]

    def query(self, hidden_at_output):
        """The query of every head ``(B, H, d_k)`` from the hidden row ``(B, d)`` at the output position."""
        return self.block.query(self.block.attn_input(hidden_at_output))

    def query_bits(self) -> int:
        """Bits of one query message per instance: ``H · d_k · P`` (64 per number in reference mode)."""
        return self.n_heads * self.d_k * (self.precision.bits if self.precision is not None else 64)

    def message_bits(self, n_positions: int) -> int:
        """Bits of one party's partial sums: ``H · (d_v + 1) · (P' + ceil(log2 N))``."""
        grid = self.attention_grid(n_positions)
        return self.n_heads * (self.d_v + 1) * (grid.sum_bits(n_positions) if grid is not None else 64)

    def partial(self, hidden, positions, query, output_position: int) -> AttentionPartial:
        """Attention sums at ``output_position`` over ``positions`` only.

        Parameters
        ----------
        hidden : array ``(B, N, d)``
            The attention layer's input (:meth:`hidden`); rows outside ``positions`` are not read
            (they may hold anything: they are masked before any sum).
        positions : index array or None (all)
        query : array ``(B, H, d_k)`` (:meth:`query` at the output position)
        """
        self._need_prenorm()
        xp = self.xp
        B, N = hidden.shape[0], hidden.shape[1]
        mask_np = np.zeros((1, N), dtype=bool)
        mask_np[0, np.arange(N) if positions is None else np.asarray(positions, dtype=np.int64)] = True
        if self.causal:
            mask_np &= np.arange(N) <= int(output_position)
        mask = xp.asarray(mask_np)
        h = self.block.attn_input(hidden)
        K, V = self.block.heads(h, "K"), self.block.heads(h, "V")  # (B, H, N, d_k), (B, H, N, d_v)
        shift = prenorm_score_shift(xp, self.block_w, query, self.d_model, self.block.scale)  # (B, H)
        grid = self.attention_grid(N)
        if grid is None:
            num, den = float_attention_sums(query, K, V, scale=self.block.scale, shift=shift, mask=mask)
        else:
            num, den = exact_attention_sums(query, K, V, scale=self.block.scale, shift=shift, grid=grid,
                                            mask=mask)
            if grid.source == "covering":  # saturations are reported on the model's precision
                self.precision.saturations.add(grid.weight.saturations.reset() + grid.value.saturations.reset())
        return AttentionPartial(num, den, N, int(output_position), grid)

    def finish(self, partials, hidden_at_output):
        """Logits ``(B, C)`` from the partial sums (one, or a list to add) and Bob's hidden row ``(B, d)``."""
        total = sum_partials(partials) if isinstance(partials, (list, tuple)) else partials
        if total.grid != self.attention_grid(total.n_positions):
            raise InvalidParameterError("the partials were made on another grid or precision")
        xp = self.xp
        num, den = xp.asarray(total.numerator), xp.asarray(total.denominator)
        attn = self.rnd(attention_from_sums(num, den, total.grid))  # (B, H, d_v)
        return self._readout(self.block.after_attention(hidden_at_output, xp.reshape(attn, (attn.shape[0], -1))))

    def save(self, path):
        """Write the model to ``.npz`` (:func:`models.common.save_model`: config + parameters)."""
        from models.files import save_model
        return save_model(self, path)

    @classmethod
    def load(cls, path, **overrides) -> "Hybrid":
        """Read what :meth:`save` wrote; ``overrides`` replace saved arguments (``precision=``)."""
        from models.files import load_model
        return load_model(path, **overrides)

    def __repr__(self) -> str:
        p = self.precision.name if self.precision is not None else "float64-reference"
        return (f"Hybrid(V={self.vocab_size}, layers={self.layers!r}, H={self.n_heads}, "
                f"d_k={self.d_k}, d_v={self.d_v}, d_mlp={self.d_mlp}, C={self.n_outputs}, "
                f"precision={p})")


def _hybrid_options() -> tuple:
    """The keyword-only options of :class:`Hybrid` a builder passes on (``causal``, ``norm``, ...): read
    off its signature, less the three :func:`build_hybrid` sets itself."""
    params = inspect.signature(Hybrid.__init__).parameters.values()
    return tuple(p.name for p in params if p.kind is p.KEYWORD_ONLY and p.name not in ("precision", "params", "xp"))


def _layers_from_specs(specs, xp) -> list:
    layers = []
    for spec in specs:
        layer_cls = getattr(importlib.import_module(spec["module"]), spec["class"])
        zeros = {k: np.zeros(tuple(shape)) for k, shape in spec["shapes"].items()}
        layers.append(layer_cls(spec["d_in"], spec["d_out"], zeros, xp=xp, **spec["hyper"]))
    return layers


def build_hybrid(*, vocab_size, width, n_outputs, layers=1, heads=1, precision=None, seed=0,
                 recurrent="mamba", d_k=None, d_v=None, d_mlp=None, xp=None, dtype="float64",
                 layer_specs=None, **hyper) -> Hybrid:
    """Registry builder: ``layers`` recurrent layers of kind ``recurrent`` (default ``mamba``,
    built by :func:`models.registry.build_model`), then one attention layer with ``heads`` heads of
    ``d_k = d_v = width`` and an MLP of ``4 · width``.  Options of :class:`Hybrid` go in ``hyper``;
    the rest goes to the recurrent layers.  ``layer_specs`` (from :attr:`Hybrid.config`) rebuilds
    a saved stack with zero weights instead (``load_model`` then sets them)."""
    from models.registry import build_model

    if dtype != "float64":
        raise InvalidParameterError("the hybrid computes in float64")
    options = {k: hyper.pop(k) for k in _hybrid_options() if k in hyper}
    seeds = np.random.SeedSequence(int(seed)).spawn(2)
    if layer_specs is not None:
        stack_layers = _layers_from_specs(layer_specs, xp)
        embedding = {}
    else:
        stack = build_model(recurrent, vocab_size=vocab_size, width=width, n_outputs=1,
                            layers=layers, seed=int(seeds[0].generate_state(1)[0]), xp=xp, **hyper)
        stack_layers, embedding = stack.layers, {"tok_emb": stack.embedding}
    return Hybrid.random(vocab_size, stack_layers, heads, d_k or width, d_v or width,
                         4 * width if d_mlp is None else d_mlp, n_outputs,
                         seed=np.random.default_rng(seeds[1]), precision=precision, xp=xp,
                         params=embedding, **options)
