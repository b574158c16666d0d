"""How many threads numpy's BLAS may use, read and set at run time.

numpy's Linux and Windows wheels link OpenBLAS, which by default starts one thread per core for every
matrix product.  Where several worker processes already share the cores (``commcomp separations``
builds its ladders in two forked processes on two cores), those threads only wait for each other: the
default run spent about 6 s more CPU and about 3 s more wall clock with them
(``benchmarks/bench_separations.py``).  :func:`limit_blas_threads` caps them, in the process that calls
it, without an extra dependency: it finds the OpenBLAS library numpy has already loaded (listed in
``/proc/self/maps``) and calls its own ``set_num_threads``.  Where no OpenBLAS is loaded (macOS's
Accelerate, MKL, a platform without ``/proc``) it changes nothing and says so by returning ``None``.

Examples
--------
>>> before = blas_threads()
>>> with limit_blas_threads(1) as previous:
...     inside = blas_threads()
>>> previous == before and blas_threads() == before and inside in (1, None)
True
"""

from __future__ import annotations

import ctypes
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator

from commcomp.errors import InvalidParameterError

# OpenBLAS's own names, with the prefix and suffix its builds use: plain (distribution packages),
# ``scipy_openblas`` with ``64_`` (numpy >= 2's wheels, 64-bit integers) or without (32-bit builds).
_NAMES = [(f"{prefix}_get_num_threads{suffix}", f"{prefix}_set_num_threads{suffix}")
          for prefix in ("scipy_openblas", "openblas") for suffix in ("64_", "")]


@lru_cache(maxsize=1)
def _openblas() -> tuple[object, object] | None:
    """``(get, set)`` of the loaded OpenBLAS, or None where there is none (or no ``/proc``)."""
    import numpy  # noqa: F401  (loads numpy's BLAS, so that it is in the map)

    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = sorted({line.split()[-1] for line in maps
                            if "openblas" in line.rsplit("/", 1)[-1].lower() and ".so" in line})
    except OSError:
        return None
    for path in paths:
        try:
            lib = ctypes.CDLL(path)  # the library already mapped: dlopen returns the same handle
        except OSError:  # pragma: no cover - a mapped file that cannot be opened again
            continue
        for get_name, set_name in _NAMES:
            if hasattr(lib, get_name) and hasattr(lib, set_name):
                get, put = getattr(lib, get_name), getattr(lib, set_name)
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                return get, put
    return None


def blas_threads() -> int | None:
    """Threads numpy's OpenBLAS uses now, or None where no OpenBLAS is loaded."""
    found = _openblas()
    return None if found is None else int(found[0]())


def set_blas_threads(threads: int) -> int | None:
    """Let OpenBLAS use ``threads`` threads from now on; return the previous count (None: no OpenBLAS,
    nothing changed).

    Raises
    ------
    InvalidParameterError
        ``threads`` is not an integer >= 1.
    """
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidParameterError(f"BLAS threads must be an integer >= 1, got {threads!r}")
    found = _openblas()
    if found is None:
        return None
    previous = int(found[0]())
    found[1](threads)
    return previous


@contextmanager
def limit_blas_threads(threads: int) -> Iterator[int | None]:
    """Within the block, OpenBLAS uses at most ``threads`` threads; the count before is restored after.
    Yields the count before (None where no OpenBLAS is loaded)."""
    previous = set_blas_threads(threads)
    try:
        yield previous
    finally:
        if previous is not None:
            set_blas_threads(previous)
