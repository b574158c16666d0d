"""Architectures as data: class, hyper-parameters, and the carried-state count.

A recurrent model split between Alice (a prefix) and Bob (the suffix) sends Bob its whole carried state,
so a lower bound on state *bits* becomes a minimum width through the number of state *numbers* each
architecture carries.  This module holds those counts, once, as sympy expressions in the width ``m`` and
the architecture's hyper-parameters.  The calculator in :mod:`commcomp.bounds` reads them, and a test in
``tests/models`` checks them against the arrays a ``models`` object actually carries.

Carried state per layer (``L`` layers in total; every count is multiplied by ``L``):

=================  ==========================================  =================================================
name               state numbers                               arrays
=================  ==========================================  =================================================
elman              ``m``                                       hidden state ``h`` (m,)
lstm               ``2 m``                                     hidden ``h`` (m,) and cell ``c`` (m,)
gru                ``m``                                       hidden state ``h`` (m,)
linear-attention   ``m**2/heads + m``                          per head: ``S = sum phi(k) v^T`` (d_k, d_v) and
                                                               normaliser ``z = sum phi(k)`` (d_k,);
                                                               ``d_k = d_v = m/heads``
retnet             ``value_factor * m**2/heads``               per head: retention state ``S`` (d_k, d_v) with
                                                               ``d_k = m/heads``, ``d_v = value_factor*m/heads``;
                                                               no running normaliser (RetNet normalises outputs)
dss                ``(1 + complex_state) * d_state * m``       diagonal SSM state ``x`` (m channels, d_state);
                                                               a complex entry counts as 2 real numbers
mamba              ``expand*m*(d_state + d_conv - 1)``         SSM state ``h`` (expand*m, d_state) and the causal
                                                               conv buffer of the last ``d_conv - 1`` inputs,
                                                               each of width ``expand*m``
=================  ==========================================  =================================================

``transformer``, ``hybrid`` and ``feedforward`` carry no fixed-size state (a key/value cache grows with N),
so :func:`state_numbers_formula` raises :class:`~commcomp.errors.UnsupportedSplitError` for them.

Examples
--------
>>> state_numbers("lstm", 8)
16
>>> state_numbers("mamba", 4, d_state=16, d_conv=4, expand=2)
152
>>> state_numbers_formula("linear-attention", heads=2)
m**2/2 + m
>>> get_architecture("rnn").name
'elman'
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from commcomp.errors import InvalidParameterError, UnknownNameError, UnsupportedSplitError

__all__ = [
    "ARCH_CLASSES",
    "ARCHITECTURES",
    "Architecture",
    "HyperParameter",
    "get_architecture",
    "hyper_symbol",
    "list_architectures",
    "m",
    "state_numbers",
    "state_numbers_formula",
    "recurrent_stack_state_formula",
    "width_means",
]

#: The width: RNN hidden size per layer, Transformer embedding / key-query dimension, SSM model dimension.
m = sp.Symbol("m", positive=True, integer=True)

#: Architecture classes a bound can cover (see ``commcomp.bounds``).
ARCH_CLASSES = ("recurrent", "transformer", "hybrid", "feedforward")


@dataclass(frozen=True)
class HyperParameter:
    """One hyper-parameter of an architecture, with its default and its allowed range.

    Examples
    --------
    >>> HyperParameter("layers", 1, "number of stacked layers").default
    1
    """

    name: str
    default: int
    doc: str
    minimum: int = 1
    maximum: int | None = None


@dataclass(frozen=True)
class Architecture:
    """A registry entry: what users type, the class, hyper-parameters and the carried-state count.

    Attributes
    ----------
    name : str
        Registry name (DESIGN §4), e.g. ``"lstm"``.
    arch_class : str
        One of :data:`ARCH_CLASSES`.
    description : str
        One line for ``commcomp list archs``.
    aliases : tuple of str
        Other names that resolve to this entry.
    hyper : tuple of HyperParameter
        Hyper-parameters other than the width ``m``, with defaults.
    state_formula : sympy.Expr or None
        Carried state numbers as an expression in :data:`m` and the hyper-parameter symbols
        (see :func:`hyper_symbol`); None for architectures without a fixed-size state.
    state_arrays : str
        Which arrays make up the state, precisely.
    width_multiple_of : str or None
        Name of a hyper-parameter that must divide ``m`` (heads split the width).
    """

    name: str
    arch_class: str
    description: str
    aliases: tuple[str, ...] = ()
    hyper: tuple[HyperParameter, ...] = ()
    state_formula: sp.Expr | None = None
    state_arrays: str = ""
    width_multiple_of: str | None = None

    @property
    def hyper_names(self) -> tuple[str, ...]:
        """Names of the hyper-parameters, in declaration order."""
        return tuple(h.name for h in self.hyper)

    def defaults(self) -> dict[str, int]:
        """The default hyper-parameters as a dict.

        Examples
        --------
        >>> get_architecture("mamba").defaults()
        {'layers': 1, 'expand': 2, 'd_state': 16, 'd_conv': 4}
        """
        return {h.name: h.default for h in self.hyper}

    def resolve_hyper(self, **hyper: int) -> dict[str, int]:
        """Defaults overridden by ``hyper``, validated (unknown names and out-of-range values raise)."""
        known = {h.name: h for h in self.hyper}
        unknown = sorted(set(hyper) - set(known))
        if unknown:
            raise InvalidParameterError(
                f"architecture {self.name!r} has no hyper-parameter {', '.join(unknown)}; "
                f"it takes: {', '.join(known) or 'none'}"
            )
        values = self.defaults()
        for name, value in hyper.items():
            if value is None:
                continue
            spec = known[name]
            value = _as_int(value, f"{self.name} {name}")
            if value < spec.minimum or (spec.maximum is not None and value > spec.maximum):
                top = "" if spec.maximum is None else f" and <= {spec.maximum}"
                raise InvalidParameterError(f"{self.name} {name} must be >= {spec.minimum}{top}, got {value}")
            values[name] = value
        return values


def hyper_symbol(name: str) -> sp.Symbol:
    """The sympy symbol used for a hyper-parameter in state formulas.

    Examples
    --------
    >>> hyper_symbol("d_state")
    d_state
    """
    if name == "complex_state":
        return sp.Symbol(name, nonnegative=True, integer=True)
    return sp.Symbol(name, positive=True, integer=True)


def _as_int(value: object, what: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) or (hasattr(value, "__index__") and not isinstance(value, float)):
        return int(value)  # type: ignore[arg-type]
    raise InvalidParameterError(f"{what} must be an integer, got {value!r}")


_S = hyper_symbol
_LAYERS = HyperParameter("layers", 1, "stacked layers; the state of every layer is carried")
_HEADS = HyperParameter("heads", 1, "heads; they split the width m (m must be a multiple of heads)")
_D_STATE_SSM = HyperParameter("d_state", 64, "SSM state size per channel (DSS/S4D default 64)")
_COMPLEX = HyperParameter("complex_state", 0, "1 if the diagonal state is complex (2 reals per entry)", 0, 1)
_EXPAND = HyperParameter("expand", 2, "inner width factor: d_inner = expand * m")
_D_STATE_MAMBA = HyperParameter("d_state", 16, "SSM state size per inner channel")
_D_CONV = HyperParameter("d_conv", 4, "causal depthwise convolution kernel size")
_VALUE_FACTOR = HyperParameter("value_factor", 1, "d_v = value_factor * d_k (the RetNet paper uses 2)")

_REGISTRY: tuple[Architecture, ...] = (
    Architecture(
        "elman", "recurrent", "Elman RNN: h_t = tanh(W h_{t-1} + U x_t + b)",
        aliases=("rnn", "vanilla-rnn", "simple-rnn"), hyper=(_LAYERS,),
        state_formula=_S("layers") * m, state_arrays="hidden state h of shape (m,) per layer",
    ),
    Architecture(
        "lstm", "recurrent", "LSTM (Hochreiter & Schmidhuber 1997)", hyper=(_LAYERS,),
        state_formula=_S("layers") * 2 * m,
        state_arrays="hidden state h (m,) and cell state c (m,) per layer",
    ),
    Architecture(
        "gru", "recurrent", "GRU (Cho et al. 2014)", hyper=(_LAYERS,),
        state_formula=_S("layers") * m, state_arrays="hidden state h of shape (m,) per layer",
    ),
    Architecture(
        "linear-attention", "recurrent", "linear Transformer (Katharopoulos et al. 2020), recurrent form",
        aliases=("linear-transformer", "linear-attn"), hyper=(_LAYERS, _HEADS),
        state_formula=_S("layers") * (m**2 / _S("heads") + m),
        state_arrays=("per layer and head: S = sum_t phi(k_t) v_t^T of shape (d_k, d_v) and the normaliser "
                      "z = sum_t phi(k_t) of shape (d_k,), with d_k = d_v = m/heads; so heads*(d_k*d_v + d_k) "
                      "= m**2/heads + m per layer"),
        width_multiple_of="heads",
    ),
    Architecture(
        "retnet", "recurrent", "RetNet (Sun et al. 2023), recurrent retention",
        aliases=("retention",), hyper=(_LAYERS, _HEADS, _VALUE_FACTOR),
        state_formula=_S("layers") * _S("value_factor") * m**2 / _S("heads"),
        state_arrays=("per layer and head: retention state S of shape (d_k, d_v) with d_k = m/heads and "
                      "d_v = value_factor*m/heads; the decay is fixed and the output GroupNorm carries no "
                      "running sum, so heads*d_k*d_v = value_factor*m**2/heads per layer"),
        width_multiple_of="heads",
    ),
    Architecture(
        "dss", "recurrent", "diagonal state-space model (DSS / S4D)",
        aliases=("s4d", "diagonal-ssm"), hyper=(_LAYERS, _D_STATE_SSM, _COMPLEX),
        state_formula=_S("layers") * (1 + _S("complex_state")) * _S("d_state") * m,
        state_arrays=("per layer: diagonal state x of shape (m channels, d_state); real entries count 1, "
                      "complex entries 2 (real and imaginary part) when complex_state=1"),
    ),
    Architecture(
        "mamba", "recurrent", "Mamba (Gu & Dao 2023) selective SSM blocks",
        aliases=("mamba1", "selective-ssm"), hyper=(_LAYERS, _EXPAND, _D_STATE_MAMBA, _D_CONV),
        state_formula=_S("layers") * _S("expand") * m * (_S("d_state") + _S("d_conv") - 1),
        state_arrays=("per layer: SSM state h of shape (expand*m, d_state) and the causal conv1d buffer of "
                      "the last d_conv - 1 inputs, each of width expand*m"),
    ),
    Architecture(
        "transformer", "transformer", "softmax-attention Transformer (depth via layers)",
        aliases=("tf", "softmax-transformer"), hyper=(_LAYERS, HyperParameter("heads", 1, "attention heads")),
        state_arrays="none of fixed size: the key/value cache grows with N",
    ),
    Architecture(
        "hybrid", "hybrid", "recurrent (Mamba) stack plus one attention layer (WDL)",
        aliases=("mamba-hybrid",),
        hyper=(_LAYERS, HyperParameter("heads", 1, "attention heads"), _EXPAND, _D_STATE_MAMBA, _D_CONV),
        state_arrays="none of fixed size: the attention layer's key/value cache grows with N",
    ),
    Architecture(
        "feedforward", "feedforward", "fully connected network on the flattened input (SHT Thm 10)",
        aliases=("ffn", "mlp", "fully-connected"), hyper=(_LAYERS,),
        state_arrays="none: the whole input is read at once",
    ),
)

#: Registry: name -> :class:`Architecture`, in the order of DESIGN §4.
ARCHITECTURES: dict[str, Architecture] = {a.name: a for a in _REGISTRY}
_ALIASES: dict[str, str] = {alias: a.name for a in _REGISTRY for alias in (a.name, *a.aliases)}


def _normalise(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


def get_architecture(name: str | Architecture) -> Architecture:
    """Look up an architecture by registry name or alias (case-insensitive, ``_`` = ``-``).

    Raises
    ------
    UnknownNameError
        If the name is not in the registry.

    Examples
    --------
    >>> get_architecture("Linear_Transformer").name
    'linear-attention'
    """
    if isinstance(name, Architecture):
        return name
    if not isinstance(name, str):
        raise UnknownNameError(f"architecture name must be a string, got {name!r}")
    key = _ALIASES.get(_normalise(name))
    if key is None:
        raise UnknownNameError(f"unknown architecture {name!r}; known: {', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[key]


def list_architectures(arch_class: str | None = None) -> tuple[Architecture, ...]:
    """All registered architectures, optionally only those of one class.

    Examples
    --------
    >>> [a.name for a in list_architectures("hybrid")]
    ['hybrid']
    """
    if arch_class is not None and arch_class not in ARCH_CLASSES:
        raise UnknownNameError(f"unknown architecture class {arch_class!r}; known: {', '.join(ARCH_CLASSES)}")
    return tuple(a for a in _REGISTRY if arch_class is None or a.arch_class == arch_class)


def state_numbers_formula(arch: str | Architecture, **hyper: int) -> sp.Expr:
    """Carried state numbers as a sympy expression in the width ``m``, hyper-parameters substituted.

    Parameters
    ----------
    arch : str or Architecture
        Registry name or alias.
    **hyper : int
        Hyper-parameters overriding the defaults (``layers``, ``heads``, ``d_state``, ...).

    Returns
    -------
    sympy.Expr
        A polynomial in :data:`m`.

    Raises
    ------
    UnsupportedSplitError
        For architectures without a fixed-size state (transformer, hybrid, feedforward).
    InvalidParameterError
        For a hyper-parameter the architecture does not take, or one out of range.

    Examples
    --------
    >>> state_numbers_formula("lstm", layers=3)
    6*m
    >>> state_numbers_formula("dss", d_state=64, complex_state=1)
    128*m
    """
    spec = get_architecture(arch)
    values = spec.resolve_hyper(**hyper)
    if spec.state_formula is None:
        raise UnsupportedSplitError(
            f"{spec.name} carries no fixed-size state ({spec.state_arrays}); "
            "its bounds are stated on heads and width instead"
        )
    return sp.expand(spec.state_formula.subs({hyper_symbol(k): v for k, v in values.items()}))


def state_numbers(arch: str | Architecture, width: int, **hyper: int) -> int:
    """The number of state numbers an Alice -> Bob message must carry, at width ``width``.

    Raises
    ------
    InvalidParameterError
        If ``width < 1`` or ``width`` is not a multiple of the heads that split it.

    Examples
    --------
    >>> state_numbers("retnet", 8, heads=2)
    32
    >>> state_numbers("gru", 5, layers=2)
    10
    """
    spec = get_architecture(arch)
    width = _as_int(width, "width")
    if width < 1:
        raise InvalidParameterError(f"width must be >= 1, got {width}")
    values = spec.resolve_hyper(**hyper)
    if spec.width_multiple_of is not None and width % values[spec.width_multiple_of]:
        raise InvalidParameterError(
            f"{spec.name} width {width} is not a multiple of {spec.width_multiple_of}="
            f"{values[spec.width_multiple_of]}"
        )
    count = state_numbers_formula(spec, **values).subs(m, width)
    return int(count)


#: What the width m counts, per architecture (the others: hidden size m); shown in table captions.
_WIDTH_MEANS = {
    "transformer": "per-head d_k (= d_v); H heads carry H*m numbers per position",
    "hybrid": "recurrent stack width m; the attention layer has per-head d_k = d_v = m",
    "linear-attention": "total width m, split across H heads (d_k = d_v = m/H)",
    "retnet": "total width m, split across H heads (d_k = m/H, d_v = value_factor*m/H)",
    "dss": "channels m (state: d_state numbers per channel, 2 if complex)",
    "mamba": "model width m (inner width expand*m)",
    "lstm": "hidden size m (state: h and c, 2m numbers)",
    "feedforward": "first-layer width",
}


def width_means(arch: str | Architecture) -> str:
    """What the width m of ``arch`` counts (data for captions; one convention per architecture).

    Examples
    --------
    >>> width_means("retnet")
    'total width m, split across H heads (d_k = m/H, d_v = value_factor*m/H)'
    >>> width_means("gru")
    'hidden size m'
    """
    return _WIDTH_MEANS.get(get_architecture(arch).name, "hidden size m")


def recurrent_stack_state_formula(arch: str | Architecture, **hyper: int) -> sp.Expr:
    """State numbers of ``arch``'s recurrent part: the state itself, or a hybrid's Mamba stack.

    Examples
    --------
    >>> recurrent_stack_state_formula("hybrid", layers=2)
    76*m
    """
    spec = get_architecture(arch)
    if spec.name != "hybrid":
        return state_numbers_formula(spec, **hyper)
    mamba = get_architecture("mamba")
    values = {k: v for k, v in spec.resolve_hyper(**hyper).items() if k in mamba.hyper_names}
    return state_numbers_formula(mamba, **values)
