"""The array namespace: NumPy by default, CuPy (GPU), torch or array-api-strict when asked for.

Kernels call :func:`namespace_of` on their inputs and use only Array API functions on the
namespace it returns, so the same code runs on NumPy, on CuPy (GPU) and under
``array_api_strict`` (which proves that no NumPy-only call slipped in).

Users pick the library by name: :func:`namespace` (``--backend`` on the command line, the
``backend=`` argument of the Python API, or the ``COMMCOMP_BACKEND`` environment variable, read
by :func:`resolve_backend`). A library that is not installed raises
:class:`~commcomp.errors.BackendUnavailableError`.

Arrays move from a device to the host in one place only, :func:`to_numpy`: for what is printed,
and on purpose for the few operations with no Array API form (bit packing and byte-key sorting
of witness messages, decoding answers with a reduction's NumPy decoder). It transfers
explicitly (CuPy ``get``, torch ``cpu().numpy()``), never through ``numpy.asarray`` of a device
array, and :data:`host_transfers` counts what it moved (tests bound it).

Examples
--------
>>> import numpy as np
>>> xp = namespace_of(np.zeros(3))
>>> float(xp.sum(xp.ones(3, dtype=xp.float64)))
3.0
>>> namespace("numpy") is xp
True
"""

from __future__ import annotations

import functools
import importlib
import math
import os
import types
from dataclasses import dataclass

import array_api_compat
import numpy as np

from .errors import BackendUnavailableError, UnknownNameError

__all__ = ["namespace_of", "namespace", "resolve_backend", "backend_name", "to_numpy", "is_array",
           "is_numpy", "count_true", "available_namespaces", "host_transfers", "host_uploads", "to_device",
           "BACKENDS", "ENV_VAR", "BackendUnavailableError"]

ENV_VAR = "COMMCOMP_BACKEND"
# user name -> module wrapped by array-api-compat (array_api_strict is its own namespace)
_NAMES = {"numpy": "numpy", "np": "numpy", "cupy": "cupy", "torch": "torch",
          "array_api_strict": "array_api_strict", "array-api-strict": "array_api_strict",
          "strict": "array_api_strict"}
BACKENDS = ("numpy", "cupy", "torch", "array_api_strict")


def is_array(x) -> bool:
    """Whether ``x`` is an array of some Array API namespace (NumPy, CuPy, array-api-strict...)."""
    return array_api_compat.is_array_api_obj(x)


def is_numpy(x) -> bool:
    """Whether ``x`` is a NumPy array (or NumPy scalar): host data, no transfer needed."""
    return isinstance(x, (np.ndarray, np.generic))


def namespace_of(*arrays):
    """The Array API namespace of the given arrays (NumPy's compat namespace for non-arrays)."""
    if all(type(a) is np.ndarray for a in arrays):  # the hot case (a kernel's every step): no lookup
        return _numpy_namespace()
    arrays = [a for a in arrays if is_array(a)]
    if not arrays:
        return _numpy_namespace()
    return array_api_compat.array_namespace(*arrays)


@functools.lru_cache(maxsize=1)
def _numpy_namespace():
    """array-api-compat's NumPy namespace, as ``array_namespace`` gives it for NumPy arrays."""
    return array_api_compat.array_namespace(np.zeros(0))


def resolve_backend(name=None) -> str:
    """The backend name to use: ``name``, else ``$COMMCOMP_BACKEND``, else ``"numpy"``.

    ``name`` may also be the namespace module itself (``numpy``, ``array_api_strict``, ``torch``,
    ``cupy`` or array-api-compat's wrapper of one), as Array API users pass it.

    Raises
    ------
    UnknownNameError
        If the name is not one of :data:`BACKENDS` (or an alias), or the module is no known namespace.

    Examples
    --------
    >>> import numpy
    >>> resolve_backend(numpy), resolve_backend("NumPy")
    ('numpy', 'numpy')
    """
    if isinstance(name, types.ModuleType):
        known = backend_name(name)
        if known not in BACKENDS:
            raise UnknownNameError(f"module {name.__name__!r} is not an array backend commcomp knows; "
                                   f"known: {', '.join(BACKENDS)}")
        return known
    chosen = name if name not in (None, "") else (os.environ.get(ENV_VAR) or "numpy")
    module_name = _NAMES.get(str(chosen).strip().lower())
    if module_name is None:
        source = "" if name not in (None, "") else f" (from ${ENV_VAR})"
        raise UnknownNameError(f"unknown array backend {chosen!r}{source}; known: {', '.join(BACKENDS)}")
    return module_name


def namespace(name="numpy"):
    """The Array API namespace called ``name`` (``numpy``, ``cupy``, ``torch``, ``array_api_strict``, or
    the module itself; None: :func:`resolve_backend`'s choice).

    Raises
    ------
    UnknownNameError
        If the name is unknown.
    BackendUnavailableError
        If the library is not installed (or array-api-compat cannot wrap it).
    """
    module_name = resolve_backend(name)
    try:
        module = importlib.import_module(module_name)
        if module_name == "array_api_strict":
            return module
        return importlib.import_module(f"array_api_compat.{module_name}")
    except ImportError as exc:
        raise BackendUnavailableError(
            f"array backend {module_name!r} is not available here ({exc.__class__.__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else 'import failed'})") from None


def backend_name(xp) -> str:
    """The user-facing name of namespace ``xp`` (``numpy``, ``cupy``, ``torch``, ``array_api_strict``)."""
    if array_api_compat.is_numpy_namespace(xp):
        return "numpy"
    if array_api_compat.is_cupy_namespace(xp):
        return "cupy"
    if array_api_compat.is_torch_namespace(xp):
        return "torch"
    if array_api_compat.is_array_api_strict_namespace(xp):
        return "array_api_strict"
    return getattr(xp, "__name__", str(xp))


def available_namespaces() -> list[str]:
    """Names of the namespaces importable here."""
    out = []
    for name in BACKENDS:
        try:
            namespace(name)
            out.append(name)
        except BackendUnavailableError:
            pass
    return out


def count_true(mask) -> int:
    """How many entries of a bool array are True, as a Python int (any namespace; no transfer
    but the one scalar)."""
    if is_numpy(mask):
        return int(np.count_nonzero(mask))
    xp = namespace_of(mask)
    return int(xp.sum(xp.astype(mask, xp.int64)))


@dataclass
class HostTransfers:
    """What :func:`to_numpy` moved from a device to the host: calls and elements."""

    calls: int = 0
    elements: int = 0

    def reset(self) -> tuple[int, int]:
        out = (self.calls, self.elements)
        self.calls = self.elements = 0
        return out


host_transfers = HostTransfers()
host_uploads = HostTransfers()  # what :func:`to_device` moved from the host to a device namespace


def to_device(xp, x, dtype=None):
    """Upload host data ``x`` to namespace ``xp`` (counted in :data:`host_uploads` unless ``xp`` is
    NumPy, where nothing moves). The reductions' encoders upload a batch's problem bits here, once.

    Examples
    --------
    >>> to_device(namespace("numpy"), [1, 2], dtype=np.int64).tolist()
    [1, 2]
    """
    host = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
    if array_api_compat.is_numpy_namespace(xp):
        return host
    host_uploads.calls += 1
    host_uploads.elements += int(host.size)
    return xp.asarray(np.array(host))  # a writable copy: some libraries refuse read-only buffers


def to_numpy(x) -> np.ndarray:
    """Copy any Array API array (NumPy, CuPy, torch, array-api-strict) to a NumPy array on the host.

    The one place where device data reaches the host: an explicit transfer (CuPy ``get``,
    torch ``cpu().numpy()``, array-api-strict's documented ``_array``, else DLPack), counted
    in :data:`host_transfers`. NumPy input comes back as it is.
    """
    if is_numpy(x) or not is_array(x):
        return np.asarray(x)
    host_transfers.calls += 1
    host_transfers.elements += int(math.prod(x.shape))
    if array_api_compat.is_cupy_array(x):
        return x.get()
    if array_api_compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    if array_api_compat.is_array_api_strict_namespace(namespace_of(x)):
        return np.asarray(x._array)  # array-api-strict's documented escape hatch
    return np.from_dlpack(x)  # pragma: no cover - another Array API library on the CPU
