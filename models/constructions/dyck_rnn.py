"""C6: a constant-size RNN for bounded Dyck-(k, D) (BHBK-Dyck-RNN, theorems.md §4.2 and §7 C6).

Task format (``reductions.tasks.dyck``): 2n brackets, then ``[CLS]``; ids ``0..k-1`` are the
openers, ``k..2k-1`` the matching closers, ``2k`` is ``[CLS]``; the answer (1 iff well nested
with depth <= D) is read at the final ``[CLS]``.

The minimal automaton has one state per stack over k bracket types of depth <= D, plus a reject
sink: :func:`dyck_dfa_states` ``= sum_{d<=D} k^d + 1`` (8 for Dyck-(2,2); 32, 41, 86 for (2,4),
(3,3), (4,3)).  Two exact realisations, both real ``models`` recurrent models:

* ``dyck-rnn`` (:class:`DyckAutomatonLayer`): the carried state is the automaton state, coded
  as a one-hot vector (``m = S`` numbers, each 0 or 1), a binary code (``m = ceil(log2 S)``
  numbers, each 0 or 1) or one integer (``m = 1`` number in ``[-2^(b-1), 2^(b-1))``, ``b =
  ceil(log2 S)``); each step is an exact ReLU network (decode the state, one ReLU unit per
  (state, token) pair, re-encode).  The smallest formats are ``fixed:2:0`` for the 0/1 codes
  (the narrowest format here has 2 bits) and ``fixed:b:0`` for the scalar code, whose
  ``m·p = b`` bits (3 for Dyck-(2,2)) are the information-theoretic minimum ``ceil(log2 S)``.
* ``dyck-elman`` (:class:`~models.recurrent.elman.ElmanLayer`, ReLU): a plain Elman RNN whose
  hidden units are the (state, last token) pairs, ``m = S·(2k+1)`` (40 for Dyck-(2,2)).  A
  one-hot Elman layer of width S cannot work: unit t fires on the pairs with
  ``f(s) + g(a) > theta``, and if it fires on (s1, a1) and (s2, a2) it fires on (s1, a2) or
  (s2, a1) (the four sums add up pairwise); but the empty stack follows (stack ``(``, token
  ``)``) and (``[``, ``]``), and neither (``(``, ``]``) nor (``[``, ``)``).

Examples
--------
>>> import numpy as np
>>> dyck_dfa_states(2, 2), dyck_dfa_states(3, 3)
(8, 41)
>>> c = make_dyck_rnn(3, "fixed:2:0")                      # n = 3: 6 brackets + [CLS]
>>> c.model.state_numbers(), c.model.state_bits()          # one-hot state: 8 numbers of 2 bits
(8, 16)
>>> tokens = np.array([[1, 0, 2, 3, 0, 2, 4],              # [ ( ) ] ( ) [CLS]  -> 1
...                    [0, 1, 0, 2, 3, 2, 4]])             # ( [ ( ) ] ) [CLS]  -> 0 (depth 3)
>>> c.predict(tokens).ravel().tolist()
[1, 0]
>>> scalar = make_dyck_rnn(3, "fixed:3:0", encoding="scalar")   # 1 number of 3 bits
>>> scalar.model.state_bits(), scalar.predict(tokens).ravel().tolist()
(3, [1, 0])
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from commcomp.errors import InvalidParameterError
from models.recurrent.base import RecurrentLayer, RecurrentModel
from models.recurrent.elman import ElmanLayer

from .base import Construction, ConstructionSpec, check_options, precision_of

__all__ = ["dyck_dfa_states", "dyck_automaton", "DyckAutomatonLayer", "make_dyck_rnn",
           "make_dyck_elman", "all_bracket_tokens", "SPECS", "ENCODINGS"]

ENCODINGS = ("onehot", "binary", "scalar")


def dyck_dfa_states(k: int, D: int) -> int:
    """States of the minimal DFA of Dyck-(k, D): ``sum_{d=0..D} k^d + 1`` (stacks + reject).

    >>> [dyck_dfa_states(*kd) for kd in [(2, 2), (2, 4), (3, 3), (4, 3)]]
    [8, 32, 41, 86]
    """
    return sum(k ** d for d in range(D + 1)) + 1


def dyck_automaton(k: int, D: int) -> np.ndarray:
    """The DFA over the task's vocabulary as a table ``(S, 2k + 1)`` of next states.

    State 0 is the empty stack (start; accept when ``[CLS]`` follows), state ``S - 1`` the
    reject sink; an opener pushes (reject past depth D), a closer pops its own opener (else
    reject), ``[CLS]`` and anything read in the sink go to the sink.  Built here from the
    stacks, independently of the task's own table.
    """
    if k < 1 or D < 1:
        raise InvalidParameterError(f"dyck: need k >= 1 and D >= 1, got k={k}, D={D}")
    stacks = [s for d in range(D + 1) for s in itertools.product(range(k), repeat=d)]
    index = {s: i for i, s in enumerate(stacks)}
    reject = len(stacks)
    table = np.full((reject + 1, 2 * k + 1), reject, dtype=np.int64)
    for s, i in index.items():
        for t in range(k):
            if len(s) < D:
                table[i, t] = index[s + (t,)]
            if s and s[-1] == t:
                table[i, k + t] = index[s[:-1]]
    return table


def _bits_for(S: int) -> int:
    return max(1, math.ceil(math.log2(S)))


class DyckAutomatonLayer(RecurrentLayer):
    """A DFA as an exact ReLU network over a coded state (any DFA table; used for Dyck).

    One step, with ``h`` the carried code ``(B, m)`` and ``x_t`` a one-hot token ``(B, V)``::

        z    = ReLU(h @ W_dec + b_dec)             (B, H)    decode the state
        pair = ReLU(z @ W_hp + x_t @ W_xp + b_p)   (B, S·V)  pair[(s, a)] = [state s and token a]
        h'   = pair @ W_ph + b_h                   (B, m)    code of delta(s, a), exactly
        y_t  = pair[:, (0, accept_token)]          (B, 1)    Mealy output: accept here

    The parameters are built by :meth:`from_table`; the comments there derive them.  Carried
    state: ``h`` only (``m`` numbers); ``z`` and ``pair`` are recomputed every step.
    """

    arch = "dyck-automaton"

    def __init__(self, d_in, d_out, params, *, encoding="onehot", states=8, **kw):
        if encoding not in ENCODINGS:
            raise InvalidParameterError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
        self.encoding, self.states = encoding, int(states)
        super().__init__(d_in, d_out, params, **kw)

    @property
    def hyper(self) -> dict:
        return {"encoding": self.encoding, "states": self.states}

    @property
    def width(self) -> int:
        """Carried numbers m: S (one-hot), ceil(log2 S) (binary) or 1 (scalar)."""
        return int(self.params["b_h"].shape[0])

    def state_shapes(self) -> dict:
        return {"h": (self.width,)}

    def init_state(self, batch, xp=None):
        xp = xp if xp is not None else self.xp
        start = xp.asarray(self.params["h0"], dtype=self.dtype)  # (m,) code of state 0
        return {"h": xp.broadcast_to(start[None, :], (int(batch), self.width)) * 1}

    def step(self, state, x_t):
        xp, w = self.xp, self.w
        z = xp.matmul(state["h"], w["W_dec"]) + w["b_dec"]  # (B, H)
        z = xp.maximum(z, xp.zeros_like(z))
        pair = xp.matmul(z, w["W_hp"]) + xp.matmul(x_t, w["W_xp"]) + w["b_p"]  # (B, S·V)
        pair = xp.maximum(pair, xp.zeros_like(pair))
        h = xp.matmul(pair, w["W_ph"]) + w["b_h"]  # (B, m)
        return {"h": h}, xp.matmul(pair, w["W_out"])  # y_t (B, 1)

    @classmethod
    def from_table(cls, table: np.ndarray, encoding: str = "onehot", accept_token: int = -1,
                   **kw) -> "DyckAutomatonLayer":
        """The exact ReLU network of a DFA ``table`` ``(S, V)`` (state 0 = start).

        Derivation (all values are integers, so every line is exact in any format that holds
        the carried code):

        * Codes: one-hot stores state s as ``e_s`` and binary as its bits ``c(s)`` (0/1, so
          ``fixed:2:0`` holds them); scalar stores ``s - 2^(b-1)`` with ``b = ceil(log2 S)``,
          which fits the b-bit two's-complement format ``fixed:b:0`` (no sign bit wasted).
        * Decode to the one-hot ``o`` of the state (``z`` then ``o = z @ W2``):
          one-hot: ``z = ReLU(h) = e_s``.  Binary: ``z_s = ReLU(sum_i (2c_i(s) - 1) h_i + 1 -
          |c(s)|)``; the sum is ``|c(s)|`` minus the number of bits where ``h`` and ``c(s)``
          differ, so ``z_s = 1`` iff ``h = c(s)`` and 0 otherwise.  Scalar: with ``v = h +
          2^(b-1)`` the hat ``ReLU(v-s+1) - 2 ReLU(v-s) + ReLU(v-s-1)`` is ``[v = s]`` for integer
          v (three ReLU units per state, combined linearly by ``W2``).
        * Pairs: ``pair[(s, a)] = ReLU(o_s + x_a - 1)`` is 1 iff ``o_s = x_a = 1`` (both are 0/1).
          Exactly one pair is 1, so ``o' = pair @ [delta(s, a) = s']`` is the one-hot next state.
        * Encode ``o'``: ``h' = o' @ C + b`` with ``C`` the code of each state (rows ``e_s``,
          ``c(s)`` or ``s``; ``b = -2^(b-1)`` for scalar, using ``sum o' = 1``).
        * Output: ``y_t = pair[(0, accept_token)]``, 1 iff the stack was empty when ``[CLS]``
          came.  (``W2`` is folded into ``W_hp = W2 @ P`` and ``C`` into ``W_ph = D @ C``.)
        """
        table = np.asarray(table, dtype=np.int64)
        S, V = table.shape
        bits = _bits_for(S)
        codes = (np.arange(S)[:, None] >> np.arange(bits)[None, :]) & 1  # (S, bits) c(s)
        if encoding == "onehot":
            W_dec, b_dec, W2 = np.eye(S), np.zeros(S), np.eye(S)
            C, b_h = np.eye(S), np.zeros(S)
        elif encoding == "binary":
            W_dec, b_dec, W2 = (2.0 * codes - 1.0).T, 1.0 - codes.sum(axis=1), np.eye(S)
            C, b_h = codes.astype(np.float64), np.zeros(bits)
        elif encoding == "scalar":
            half = 2.0 ** (bits - 1)
            offsets = np.stack([-(np.arange(S) - 1), -np.arange(S), -(np.arange(S) + 1)], 1)
            W_dec, b_dec = np.ones((1, 3 * S)), (offsets + half).reshape(-1)  # v - s + 1, ...
            W2 = np.kron(np.eye(S), np.array([[1.0], [-2.0], [1.0]]))  # (3S, S) hat weights
            C, b_h = np.arange(S, dtype=np.float64)[:, None], np.array([-half])
        else:
            raise InvalidParameterError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
        P = np.zeros((S, S * V))  # o_s feeds every pair (s, .)
        X = np.zeros((V, S * V))  # x_a feeds every pair (., a)
        Dm = np.zeros((S * V, S))  # pair (s, a) -> delta(s, a)
        for s in range(S):
            for a in range(V):
                P[s, s * V + a] = 1.0
                X[a, s * V + a] = 1.0
                Dm[s * V + a, table[s, a]] = 1.0
        out = np.zeros((S * V, 1))
        out[accept_token % V] = 1.0  # pair (0, accept_token) sits at index 0 * V + a
        params = {"W_dec": W_dec, "b_dec": b_dec, "W_hp": W2 @ P, "W_xp": X, "b_p": -np.ones(S * V),
                  "W_ph": Dm @ C, "b_h": b_h, "W_out": out, "h0": C[0] + b_h}
        return cls(V, 1, params, encoding=encoding, states=S, **kw)


def _check_size(k: int, D: int) -> tuple[int, int]:
    for name, v in (("types", k), ("depth", D)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise InvalidParameterError(f"dyck: {name} must be an integer >= 1, got {v!r}")
    return int(k), int(D)


def _encoding_for_width(width: int, S: int) -> str:
    if width >= S:
        return "onehot"
    if width >= _bits_for(S):
        return "binary"
    if width >= 1:
        return "scalar"
    raise InvalidParameterError(f"dyck-rnn: width must be >= 1, got {width}")


_READOUT = (np.array([[-1.0, 1.0]]), np.array([0.5, -0.5]))  # y in {0,1} -> logits (1-2y, 2y-1)/2


def make_dyck_rnn(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """C6 as an exact automaton RNN: ``make(n, precision, types=2, depth=2, encoding=..., width=...)``.

    Parameters
    ----------
    n : int
        Task size: 2n brackets, then ``[CLS]`` (N = 2n + 1).  The model does not depend on n.
    precision : str or Precision, optional
        Rounds the carried state after every step.  Smallest exact formats: ``fixed:2:0``
        (one-hot, binary) and ``fixed:b:0`` with ``b = max(2, ceil(log2 S))`` (scalar).
    types, depth : int
        k bracket types and the depth bound D (default Dyck-(2,2)).
    encoding : {"onehot", "binary", "scalar"}
        State code; ``width`` instead picks the widest code that fits (S, ceil(log2 S) or 1).
    """
    opts = check_options("dyck-rnn", options, {"types", "depth", "encoding", "width"})
    k, D = _check_size(opts.get("types", 2), opts.get("depth", 2))
    table = dyck_automaton(k, D)
    S, V = table.shape
    encoding = opts.get("encoding")
    if "width" in opts:
        chosen = _encoding_for_width(int(opts["width"]), S)
        if encoding is not None and encoding != chosen:
            raise InvalidParameterError(f"dyck-rnn: width {opts['width']} means encoding "
                                        f"{chosen!r}, not {encoding!r}")
        encoding = chosen
    layer = DyckAutomatonLayer.from_table(table, encoding or "onehot", accept_token=2 * k)
    prec = precision_of(precision)
    model = RecurrentModel("rnn", np.eye(V), [layer], *_READOUT, precision=prec,
                           config={"construction": "dyck-rnn", "types": k, "depth": D,
                                   "encoding": layer.encoding})
    report = {"types": k, "depth": D, "dfa_states": S, "encoding": layer.encoding,
              "state_numbers": model.state_numbers(), "state_bits": model.state_bits(),
              "min_state_bits": _bits_for(S), "pair_units": S * V}
    return Construction("dyck-rnn", "dyck", n, 2 * n + 1, model, layer.width, 1, 1, prec, report,
                        "BHBK-Dyck-RNN", "[D✓]", (2 * n,), "bool", 2)


def make_dyck_elman(n: int, precision=None, *, seed: int = 0, **options) -> Construction:
    """C6 as a plain ReLU Elman RNN (registry arch ``elman``) of width ``S·(2k+1)``.

    Hidden unit ``(s, a)`` is 1 iff the automaton was in state s before reading token a (the
    pair of the last step); all zeros before the first token.  Derivation of
    ``h' = ReLU(x W_x + h W_h + b)``: the current state's indicator is linear in ``h``,
    ``I[s'] = sum_{delta(s,a)=s'} h_(s,a) + [s'=0](1 - sum h)`` (the all-zero start counts as
    state 0), so ``W_h[(s,a), (s',a')] = [delta(s,a)=s'] - [s'=0]``, ``W_x[a, (s',a')] = [a=a']``
    and ``b_(s',a') = [s'=0] - 1`` give ``h'_(s',a') = ReLU(I[s'] + x_a' - 1) = [I[s']=1 and
    x_a'=1]``.  The readout picks unit ``(0, [CLS])``.  Exact at ``fixed:2:0`` (values 0/1).
    """
    opts = check_options("dyck-elman", options, {"types", "depth"})
    k, D = _check_size(opts.get("types", 2), opts.get("depth", 2))
    table = dyck_automaton(k, D)
    S, V = table.shape
    delta = np.zeros((S * V, S))
    delta[np.arange(S * V), table.reshape(-1)] = 1.0  # pair (s, a) at s * V + a -> delta(s, a)
    start = np.zeros(S)
    start[0] = 1.0
    W_state = delta - start[None, :]  # (S·V, S): I[s'] = h @ W_state + start
    W_h = np.repeat(W_state, V, axis=1)  # (S·V, S·V): column (s', a') reads I[s']
    W_x = np.tile(np.eye(V), (1, S))  # (V, S·V): column (s', a') reads x_a'
    b = np.repeat(start, V) - 1.0
    layer = ElmanLayer(V, S * V, {"W_x": W_x, "W_h": W_h, "b": b}, nonlinearity="relu")
    readout = np.zeros((S * V, 2))
    readout[2 * k, :] = [-1.0, 1.0]  # unit (0, [CLS]) = index 0 * V + 2k
    prec = precision_of(precision)
    model = RecurrentModel("elman", np.eye(V), [layer], readout, np.array([0.5, -0.5]),
                           precision=prec, config={"arch": "elman", "vocab_size": V,
                                                   "width": S * V, "n_outputs": 2, "layers": 1,
                                                   "nonlinearity": "relu"})
    report = {"types": k, "depth": D, "dfa_states": S, "state_numbers": model.state_numbers(),
              "state_bits": model.state_bits()}
    return Construction("dyck-elman", "dyck", n, 2 * n + 1, model, S * V, 1, 1, prec, report,
                        "BHBK-Dyck-RNN", "[D✓]", (2 * n,), "bool", 2)


def all_bracket_tokens(n: int, k: int = 2, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Rows ``start..stop`` of every string of 2n brackets over 2k symbols, then ``[CLS]``.

    Row r spells r in base 2k, most significant digit first: ``(stop - start, 2n + 1)`` int64.
    """
    L, base = 2 * n, 2 * k
    stop = base ** L if stop is None else stop
    r = np.arange(start, stop, dtype=np.int64)  # (R,)
    out = np.full((len(r), L + 1), base, dtype=np.int64)  # last column: [CLS] = id 2k
    for j in range(L - 1, -1, -1):  # least significant digit last
        out[:, j] = r % base
        r //= base
    return out


def _inputs(n: int) -> np.ndarray:
    return all_bracket_tokens(n)


SPECS = (
    ConstructionSpec(
        name="dyck-rnn", task="dyck", arch="rnn", layers=1, source="BHBK-Dyck-RNN", tag="[D✓]",
        builder=make_dyck_rnn, width_option="width", exhaustive_max_n=6, inputs=_inputs,
        width_formula="S = sum_{d<=D} k^d + 1 (one-hot), ceil(log2 S) (binary) or 1 (scalar); "
                      "constant in N",
        description="the minimal DFA of Dyck-(k,D) with a coded state and an exact ReLU step",
        aliases=("dyck-automaton", "c6")),
    ConstructionSpec(
        name="dyck-elman", task="dyck", arch="elman", layers=1, source="BHBK-Dyck-RNN", tag="[D✓]",
        builder=make_dyck_elman, exhaustive_max_n=6, inputs=_inputs, default=False,
        width_formula="S·(2k+1) (40 for Dyck-(2,2)); constant in N",
        description="a ReLU Elman RNN whose units are (DFA state, token) pairs"),
)
