"""The array namespace: NumPy by default, CuPy or array-api-strict when the caller brings them.

Kernels call :func:`namespace_of` on their inputs and use only Array API functions on the
namespace it returns, so the same code runs on NumPy, on CuPy (GPU) and under
``array_api_strict`` (which proves that no NumPy-only call slipped in).

Examples
--------
>>> import numpy as np
>>> xp = namespace_of(np.zeros(3))
>>> float(xp.sum(xp.ones(3, dtype=xp.float64)))
3.0
"""

from __future__ import annotations

import importlib

import array_api_compat
import numpy as np

from .errors import UnknownNameError

__all__ = ["namespace_of", "namespace", "to_numpy", "is_array", "available_namespaces"]

_NAMES = {"numpy": "numpy", "np": "numpy", "cupy": "cupy", "array_api_strict": "array_api_strict",
          "strict": "array_api_strict"}


def is_array(x) -> bool:
    """Whether ``x`` is an array of some Array API namespace (NumPy, CuPy, array-api-strict...)."""
    return array_api_compat.is_array_api_obj(x)


def namespace_of(*arrays):
    """The Array API namespace of the given arrays (NumPy's compat namespace for non-arrays)."""
    arrays = [a for a in arrays if is_array(a)]
    if not arrays:
        return array_api_compat.array_namespace(np.zeros(0))
    return array_api_compat.array_namespace(*arrays)


def namespace(name: str = "numpy"):
    """The Array API namespace called ``name`` (``numpy``, ``cupy`` or ``array_api_strict``).

    Raises
    ------
    UnknownNameError
        If the name is unknown or the package is not installed.
    """
    module_name = _NAMES.get(name.lower())
    if module_name is None:
        raise UnknownNameError(f"unknown array namespace {name!r}; known: numpy, cupy, array_api_strict")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise UnknownNameError(f"array namespace {name!r} is not installed") from None
    if module_name == "array_api_strict":
        return module
    return array_api_compat.array_namespace(module.zeros(0) if module_name == "cupy" else np.zeros(0))


def available_namespaces() -> list[str]:
    """Names of the namespaces importable here."""
    out = []
    for name in ("numpy", "cupy", "array_api_strict"):
        try:
            importlib.import_module(name)
            out.append(name)
        except ImportError:
            pass
    return out


def to_numpy(x) -> np.ndarray:
    """Copy any Array API array (NumPy, CuPy, array-api-strict) to a NumPy array on the host."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "get") and type(x).__module__.startswith("cupy"):
        return x.get()
    if type(x).__module__.startswith("array_api_strict"):
        return np.asarray(x._array)  # array-api-strict's documented escape hatch
    return np.asarray(x)
