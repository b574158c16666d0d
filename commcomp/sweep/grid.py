"""Expand a sweep's axes into grid points, each with a deterministic seed.

A point is the dict of all its parameters (the fixed ``[params]`` merged with one value per axis). Its
identity is its *canonical JSON*: keys sorted, no spaces, so the same parameters give the same key in any
process, on any machine, in any Python (``hash()`` is randomised per process; we never use it). The point's
seed is a stable hash of the sweep seed and that key::

    seed = int.from_bytes(blake2b(f"{sweep_seed}:{key}", digest_size=8)) mod 2**32

so a point keeps its seed when other axes grow or shrink, and two points almost never share one. Seeds lie
in ``[0, 2**32)``, which every seeding API accepts (``numpy.random.default_rng``, the legacy
``RandomState``, ``random.Random``, ``torch.manual_seed``).

Examples
--------
>>> from commcomp.sweep.spec import SweepSpec
>>> points = expand_grid(SweepSpec("selftest", params={"seconds": 0}, axes={"n": (2, 4), "mode": ("a", "b")}))
>>> [p.key for p in points][:2]
['{"mode":"a","n":2,"seconds":0}', '{"mode":"b","n":2,"seconds":0}']
>>> points[0].seed == point_seed(0, points[0].key)
True
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass

from .spec import SweepSpec, check_grid_size

__all__ = ["GridPoint", "canonical_json", "point_seed", "expand_grid", "grid_size"]

SEED_MODULUS = 2**32


def canonical_json(params: dict) -> str:
    """The key of a point: JSON with sorted keys and no whitespace (ints stay ints, ``4 != 4.0``)."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def point_seed(sweep_seed: int, key: str) -> int:
    """The seed of the point with canonical JSON ``key`` in a sweep with seed ``sweep_seed``.

    >>> point_seed(0, '{"n":4}')
    2441828189
    """
    digest = hashlib.blake2b(f"{int(sweep_seed)}:{key}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % SEED_MODULUS


@dataclass(frozen=True)
class GridPoint:
    """One job of a sweep.

    Attributes
    ----------
    index : int
        Position in grid order (the first axis varies slowest).
    params : dict
        Every parameter of the point (fixed ones and axes).
    key : str
        Canonical JSON of ``params``: the point's identity in the database.
    seed : int
        Derived from the sweep seed and ``key`` (:func:`point_seed`).
    """

    index: int
    params: dict
    key: str
    seed: int


def grid_size(spec: SweepSpec) -> int:
    size = spec.repeats
    for values in spec.axes.values():
        size *= len(values)
    return size


def expand_grid(spec: SweepSpec) -> list[GridPoint]:
    """Every point of ``spec``'s grid, in grid order (repeats innermost)."""
    axes = dict(spec.axes)
    check_grid_size(spec)
    if spec.repeats > 1:
        axes["repeat"] = tuple(range(spec.repeats))
    names = list(axes)
    points = []
    for index, combo in enumerate(itertools.product(*(axes[n] for n in names))):
        params = dict(spec.params)
        params.update(zip(names, combo))
        key = canonical_json(params)
        points.append(GridPoint(index=index, params=json.loads(key), key=key, seed=point_seed(spec.seed, key)))
    return points
