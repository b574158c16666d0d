"""Shared helpers of the model files: seeded initialisers, embedding/readout, parameter checks, rounding.

Initialisers take a :class:`numpy.random.Generator` and return float64 host arrays; every
architecture documents which it uses.  Saving and loading models is :mod:`models.files`
(``save_model`` / ``load_model``).

Examples
--------
>>> rng = rng_of(0)
>>> w = uniform(rng, (3, 4), bound=0.5)
>>> w.shape, bool(abs(w).max() <= 0.5), w.dtype.name
((3, 4), True, 'float64')
>>> q = orthogonal(rng, (4, 4))
>>> bool(np.allclose(q.T @ q, np.eye(4)))
True
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from commcomp.errors import InvalidParameterError
from commcomp.precision import FixedPoint, IEEEFloat, Precision, parse_precision

__all__ = ["rng_of", "uniform", "normal", "glorot_uniform", "orthogonal", "init_embedding",
           "init_readout", "check_params", "compute_dtype", "make_rounder", "raw_matmul", "StateRounder"]


def rng_of(seed) -> np.random.Generator:
    """A Generator from a seed (int or None) or the Generator itself."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def uniform(rng, shape, bound: float) -> np.ndarray:
    """U(-bound, bound): torch's default for RNN/LSTM/GRU weights and biases with bound 1/sqrt(m)."""
    return rng_of(rng).uniform(-bound, bound, size=shape)


def normal(rng, shape, std: float = 1.0) -> np.ndarray:
    """N(0, std^2) entries."""
    return rng_of(rng).normal(0.0, std, size=shape)


def glorot_uniform(rng, shape) -> np.ndarray:
    """Glorot/Xavier uniform for a ``(fan_in, fan_out)`` matrix: U(±sqrt(6 / (fan_in + fan_out)))."""
    fan_in, fan_out = shape[0], shape[-1]
    return uniform(rng, shape, math.sqrt(6.0 / (fan_in + fan_out)))


def orthogonal(rng, shape) -> np.ndarray:
    """A (semi-)orthogonal ``(rows, cols)`` matrix: QR of a Gaussian, signs fixed (Saxe et al. 2014)."""
    rows, cols = shape
    a = rng_of(rng).normal(size=(max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(a)
    q = q * np.where(np.diag(r) < 0, -1.0, 1.0)
    return q if rows >= cols else q.T


def init_embedding(rng, vocab_size: int, width: int) -> np.ndarray:
    """Token table ``(V, d)`` with N(0, 1) entries (torch ``nn.Embedding``'s default)."""
    return normal(rng, (vocab_size, width), 1.0)


def init_readout(rng, width: int, n_outputs: int) -> tuple[np.ndarray, np.ndarray]:
    """Readout ``(d, C)`` and bias ``(C,)``, U(±1/sqrt(d)) (torch ``nn.Linear``'s default)."""
    bound = 1.0 / math.sqrt(width)
    rng = rng_of(rng)
    return uniform(rng, (width, n_outputs), bound), uniform(rng, (n_outputs,), bound)


def check_params(expected: dict, given: dict, what: str = "model") -> dict:
    """``given`` as float64 arrays, after checking it has exactly the names and shapes of ``expected``.

    Raises
    ------
    InvalidParameterError
        On a missing, unexpected or mis-shaped parameter.
    """
    missing = sorted(set(expected) - set(given))
    extra = sorted(set(given) - set(expected))
    if missing or extra:
        raise InvalidParameterError(f"{what}: missing parameters {missing}, unexpected {extra}")
    out = {}
    for name, ref in expected.items():
        arr = np.asarray(given[name], dtype=np.float64)
        if arr.shape != np.shape(ref):
            raise InvalidParameterError(f"{what}: parameter {name} has shape {arr.shape}, "
                                        f"expected {np.shape(ref)}")
        out[name] = arr
    return out


def compute_dtype(xp, dtype):
    """The floating dtype of namespace ``xp`` named by ``dtype`` (``"float64"``/``"float32"``)."""
    name = dtype if isinstance(dtype, str) else str(getattr(dtype, "name", dtype))
    name = name.replace("numpy.", "").split(".")[-1].strip("<>'\" ")
    if name not in ("float64", "float32"):
        raise InvalidParameterError(f"compute dtype must be float64 or float32, got {dtype!r}")
    return getattr(xp, name)


class StateRounder:
    """Rounds arrays of ``xp``/``dtype`` onto ``precision``'s grid, bit for bit as ``precision.round``.

    Calling it is the fast path: a few element-wise calls and no device sync (fixed point:
    ``rint(x * 2^F) * 2^-F``; float32 from float64: a cast there and back).  It equals
    ``precision.round`` wherever no value saturates and none is NaN, and it keeps a running
    ``max |k|`` per array shape to tell.  A caller runs a whole pass between :meth:`start` and
    :meth:`flagged`; if :meth:`flagged`, it redoes the pass with ``exact = True`` (every call is
    ``precision.round``, which clips, maps NaN and counts saturations) and gets the same numbers
    wherever nothing saturated.  float16 and bfloat16 have no fast path and are always exact.

    Raises
    ------
    InvalidParameterError
        If the format's grid does not fit in the compute dtype (float32 compute holds IEEE formats
        up to float32 and fixed point up to 24 bits).

    Examples
    --------
    >>> import numpy as np
    >>> from commcomp.backend import namespace_of
    >>> xp = namespace_of(np.zeros(1))
    >>> r = StateRounder(parse_precision("fixed:6:2"), xp, xp.float64)
    >>> r.start(); r(np.array([0.3, 0.375])).tolist(), r.flagged()
    ([0.25, 0.5], False)
    >>> r.start(); _ = r(np.array([100.0])); r.flagged()    # saturates: redo the pass exactly
    True
    >>> r.exact = True; r(np.array([100.0])).tolist()
    [7.75]
    """

    def __init__(self, precision: Precision, xp, dtype):
        import array_api_compat

        self.precision, self.xp, self.dtype = parse_precision(precision), xp, dtype
        p, is32 = self.precision, dtype == xp.float32
        if is32 and not ((isinstance(p, IEEEFloat) and p.bits <= 32)
                         or (isinstance(p, FixedPoint) and p.bits <= 24 and abs(p.fraction_bits) <= 100)):
            raise InvalidParameterError(f"precision {p.name} does not fit in float32 compute; "
                                        "use dtype='float64'")
        self._rint = np.rint if array_api_compat.is_numpy_namespace(xp) else xp.round  # half to even
        self._flags: dict = {}
        self._fast = None
        if isinstance(p, FixedPoint) and abs(p.fraction_bits) <= 100:
            self._scale, self._inv = float(p.scale), float(2.0 ** -p.fraction_bits)
            self._limit = float(p.max_int)  # |k| beyond it (or NaN): flagged
            self._fast = self._fixed
        elif isinstance(p, IEEEFloat) and p.bits == 32 and not is32:
            self._limit = float(np.finfo(np.float32).max)
            self._fast = self._float32
        elif isinstance(p, IEEEFloat) and p.bits in (32, 64):
            self._limit = float(np.finfo(np.float32 if is32 else np.float64).max)
            self._fast = self._finite  # the compute dtype is the format: only inf/NaN to look at
        self.exact = self._fast is None

    def start(self) -> None:
        """Forget what was flagged (and leave exact mode for formats that have a fast path)."""
        self._flags = {}
        self.exact = self._fast is None

    def flagged(self) -> bool:
        """Whether a call since :meth:`start` met a saturation or a NaN (one sync per array shape)."""
        return any(not self._fine(peak) for peak in self._flags.values())

    def _fine(self, peak) -> bool:
        return bool(self.xp.all(peak <= self._limit))  # NaN fails <=

    def _fixed(self, x):
        k = self._rint(x * self._scale)  # no clip: beyond the range is flagged and redone exactly
        peak = self.xp.abs(k)
        k *= self._inv
        k += 0.0  # fixed point has no -0: rint(-0.3) = -0.0 becomes +0.0, as precision.round gives
        return k, peak

    def _float32(self, x):
        xp = self.xp
        out = xp.astype(xp.astype(x, xp.float32), self.dtype)  # IEEE cast: nearest, ties to even
        return out, xp.abs(out)

    def _finite(self, x):
        return x, self.xp.abs(x)

    def round_exact(self, x):
        """``precision.round(x)`` in the compute dtype (counts saturations)."""
        out = self.precision.round(x)
        return out if out.dtype == self.dtype else self.xp.astype(out, self.dtype)

    def _within(self, a) -> bool:
        """``-limit <= a <= limit`` everywhere (NaN fails): two reductions, no temporaries."""
        xp = self.xp
        return bool(xp.max(a) <= self._limit) and bool(xp.min(a) >= -self._limit)

    def round_checked(self, x):
        """Exactly ``precision.round(x)``, per call: the fast path, checked at once (one sync).

        The same fast paths as :meth:`__call__`, with the check done by two reductions over the
        integer codes (fixed point) or the cast values (float32) instead of an ``|k|`` array.
        """
        fast = self._fast
        if fast is None or x.ndim == 0 or x.size == 0 or x.dtype != self.dtype:
            if fast is None:
                return self.round_exact(x)
            out, peak = fast(x)
            return out if self._fine(peak) else self.round_exact(x)
        xp = self.xp
        if fast == self._fixed:
            k = self._rint(x * self._scale)  # (...) integer codes, unclipped
            if not self._within(k):
                return self.round_exact(x)
            k *= self._inv
            k += 0.0  # fixed point has no -0
            return k
        if fast == self._float32:
            f = xp.astype(x, xp.float32)  # IEEE cast: nearest, ties to even; overflow gives inf
            return xp.astype(f, self.dtype) if self._within(f) else self.round_exact(x)
        return x if self._within(x) else self.round_exact(x)

    def __call__(self, x):
        if self.exact:
            return self.round_exact(x)
        out, peak = self._fast(x)
        key = tuple(peak.shape)  # running max of |k| per shape; maximum propagates NaN
        old = self._flags.get(key)
        self._flags[key] = peak if old is None else self.xp.maximum(old, peak)
        return out


def make_rounder(precision: Precision | None, xp, dtype) -> Callable:
    """A function equal to ``precision.round`` bit for bit (cast to ``dtype``); identity for None.

    Each call takes :class:`StateRounder`'s fast path and checks it at once (one sync per call);
    a recurrence that rounds every step uses a :class:`StateRounder` and checks once per pass.

    Examples
    --------
    >>> import numpy as np
    >>> from commcomp.backend import namespace_of
    >>> xp = namespace_of(np.zeros(1))
    >>> r = make_rounder(parse_precision("fixed:6:2"), xp, xp.float64)
    >>> r(np.array([0.3, 0.375, 100.0, np.nan])).tolist()
    [0.25, 0.5, 7.75, 0.0]
    """
    if precision is None:
        return lambda x: x
    return StateRounder(precision, xp, dtype).round_checked


def raw_matmul(xp) -> Callable:
    """``xp.matmul``, or the library's own ``matmul`` when ``xp`` is array-api-compat's NumPy or CuPy.

    array-api-compat wraps ``matmul`` in Python (type-promotion checks); on the small per-step
    products of a recurrence that wrapper cost as much as the product itself.  For two arrays of
    one floating dtype the library function computes the same thing.
    """
    import array_api_compat

    if array_api_compat.is_numpy_namespace(xp):
        return np.matmul
    if array_api_compat.is_cupy_namespace(xp):  # pragma: no cover - needs a GPU
        import cupy

        return cupy.matmul
    return xp.matmul
