"""Plain JSON types from whatever a library function returns."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np

__all__ = ["jsonable"]


def jsonable(value):
    """Plain JSON types from numpy arrays and scalars, mappings, dataclasses, ``to_dict()`` objects, tuples,
    sets: the one converter every command's JSON and every sweep row goes through.

    Non-finite floats become strings (``"inf"``, ``"nan"``) and anything else (sympy expressions, a
    Precision, Bits) its ``str``.

    >>> jsonable({"a": np.int64(3), "b": (1.5, float("inf")), "c": np.array([True, False])})
    {'a': 3, 'b': [1.5, 'inf'], 'c': [True, False]}
    """
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return jsonable(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
