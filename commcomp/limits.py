"""Size limits: every size a user gives is checked here, before anything is allocated.

Two kinds of limit (the table is repeated in docs/CONVENTIONS.md, "Sizes and limits"):

* **fixed** limits, the same on every machine:

  ==========================  ===========================  ====================================
  value                       valid range                  why
  ==========================  ===========================  ====================================
  seed                        0 .. 2^63 - 1                numpy seeds are non-negative; SQLite
                                                           stores a sweep's seeds as int64
  model width m               1 .. 4096 (``MAX_WIDTH``)    an m x m weight matrix per gate
  layers                      1 .. 64 (``MAX_LAYERS``)
  heads H                     1 .. 1024 (``MAX_HEADS``)
  problem size n (simulate,   1 .. 2^20 (``MAX_N``)
  verify, witness)
  exhaustive instances        <= 2^26 pairs (x, y)         ``MAX_EXHAUSTIVE_INSTANCES``
  random instances (verify    1 .. 2^30 (``MAX_INSTANCES``)  hours of work at the top; the
  --instances, --check,                                    memory limit below often binds first
  witness --budget)
  sweep grid points           <= 2^20 (``MAX_SWEEP_POINTS``)  one job and one database row each
  sweep --workers             0 .. 1024 (``MAX_WORKERS``)  one process each
  ==========================  ===========================  ====================================

* **memory** limits, computed from this machine's memory: the bytes a command must hold at
  once, estimated from the sizes before anything is allocated, may not pass
  :func:`memory_limit` (half of the physical memory; the environment variable
  ``COMMCOMP_MEMORY_LIMIT``, e.g. ``8G`` or ``512M``, sets it instead). The estimates are lower
  estimates of what must be held at once, so a run refused here could not have run:
  ``TOKEN_BYTES`` = 16 bytes per token of every instance held (the int64 token batch and as much
  again for the encoded inputs and outputs), ``MODEL_POSITION_BYTES`` = 256 bytes per position of
  a construction (its positional codes and their products; index-lookup-1tf holds about 1.3 KB a
  position, measured with ``/usr/bin/time`` at n = 2^16 and 2^18), and ``MESSAGE_OVERHEAD_BYTES`` = 16 bytes beside each
  packed message kept to count distinct messages.

A value out of range raises :class:`~commcomp.errors.InvalidParameterError` (not an integer,
below the minimum) or :class:`~commcomp.errors.TooLargeError` (above the limit), with the limit
in the message; ``cli.py`` turns both into one line and exit status 2.

Examples
--------
>>> check_seed(7)
7
>>> check_seed(-1)
Traceback (most recent call last):
...
commcomp.errors.InvalidParameterError: seed must be an integer in 0..9223372036854775807, got -1
>>> check_int("width", 5000, 1, MAX_WIDTH)
Traceback (most recent call last):
...
commcomp.errors.TooLargeError: width = 5000 is over the limit width <= 4096
>>> largest_within(lambda n: 100 * n, 1, 10**6, limit=1050)
10
"""

from __future__ import annotations

import os
import re
from typing import Callable

import numpy as np

from .errors import InvalidParameterError, TooLargeError

__all__ = ["MAX_SEED", "MAX_WIDTH", "MAX_LAYERS", "MAX_HEADS", "MAX_N", "MAX_EXHAUSTIVE_INSTANCES",
           "MAX_INSTANCES", "MAX_SWEEP_POINTS", "MAX_WORKERS", "TOKEN_BYTES", "MODEL_POSITION_BYTES", "MESSAGE_OVERHEAD_BYTES", "memory_limit",
           "check_int", "check_seed", "largest_within", "check_memory", "format_bytes"]

MAX_SEED = 2 ** 63 - 1
MAX_WIDTH = 4096
MAX_LAYERS = 64
MAX_HEADS = 1024
MAX_N = 1 << 20
MAX_EXHAUSTIVE_INSTANCES = 1 << 26
MAX_INSTANCES = 1 << 30
MAX_SWEEP_POINTS = 1 << 20
MAX_WORKERS = 1024

TOKEN_BYTES = 16
MODEL_POSITION_BYTES = 256
MESSAGE_OVERHEAD_BYTES = 16

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def memory_limit() -> int:
    """Bytes one command may plan to hold at once: ``COMMCOMP_MEMORY_LIMIT`` or half of physical memory.

    Examples
    --------
    >>> os.environ["COMMCOMP_MEMORY_LIMIT"] = "1.5G"; memory_limit()
    1610612736
    >>> del os.environ["COMMCOMP_MEMORY_LIMIT"]; memory_limit() > 0
    True
    """
    text = os.environ.get("COMMCOMP_MEMORY_LIMIT", "").strip()
    if text:
        match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?", text, flags=re.IGNORECASE)
        if not match:
            raise InvalidParameterError(f"COMMCOMP_MEMORY_LIMIT must be a size like 8G or 512M, got {text!r}")
        return int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        physical = 8 << 30
    return int(physical) // 2


def _where_limit() -> str:
    return ("COMMCOMP_MEMORY_LIMIT" if os.environ.get("COMMCOMP_MEMORY_LIMIT", "").strip()
            else "half of this machine's memory; COMMCOMP_MEMORY_LIMIT changes it")


def format_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'``.

    Examples
    --------
    >>> format_bytes(3 * 2**30), format_bytes(100)
    ('3.0 GiB', '100 B')
    """
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


def check_int(name: str, value, minimum: int, maximum: int | None = None, why: str | None = None) -> int:
    """``value`` as an int in ``[minimum, maximum]``; InvalidParameterError or TooLargeError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidParameterError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        wanted = f"in {minimum}..{maximum}" if maximum is not None else f">= {minimum}"
        raise InvalidParameterError(f"{name} must be an integer {wanted}, got {value}")
    if maximum is not None and value > maximum:
        raise TooLargeError(f"{name} = {value} is over the limit {name} <= {maximum}" + (f" ({why})" if why else ""))
    return value


def check_seed(seed) -> int:
    """A seed: an integer in ``0 .. MAX_SEED``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) <= MAX_SEED:
        raise InvalidParameterError(f"seed must be an integer in 0..{MAX_SEED}, got {seed!r}")
    return int(seed)


def largest_within(estimate: Callable[[int], int], low: int, high: int, limit: int | None = None) -> int:
    """The largest ``v`` in ``[low, high]`` with ``estimate(v) <= limit`` (``estimate`` non-decreasing);
    ``low - 1`` when even ``low`` does not fit."""
    limit = memory_limit() if limit is None else limit
    if estimate(low) > limit:
        return low - 1
    lo, hi = low, high  # estimate(lo) fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate(mid) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return lo


def check_memory(what: str, name: str, value: int, estimate: Callable[[int], int], low: int = 1,
                 detail: str = "") -> int:
    """Refuse ``name = value`` when ``estimate(value)`` bytes pass :func:`memory_limit`.

    The message gives the largest value that fits (searched between ``low`` and ``value``), the
    estimate and the limit. Returns ``value``.

    Examples
    --------
    >>> os.environ["COMMCOMP_MEMORY_LIMIT"] = "1M"
    >>> check_memory("demo", "n", 10**6, lambda n: 16 * n, detail="16 bytes per n")
    Traceback (most recent call last):
    ...
    commcomp.errors.TooLargeError: demo: n = 1000000 is over this machine's limit n <= 65536 (16 bytes per n: about 15.3 MiB at once; the memory limit is 1.0 MiB, COMMCOMP_MEMORY_LIMIT)
    >>> del os.environ["COMMCOMP_MEMORY_LIMIT"]
    """
    limit = memory_limit()
    need = estimate(value)
    if need <= limit:
        return value
    largest = largest_within(estimate, low, value, limit)
    bound = f"{name} <= {largest}" if largest >= low else f"no {name} fits"
    raise TooLargeError(f"{what}: {name} = {value} is over this machine's limit {bound} ("
                        + (f"{detail}: " if detail else "")
                        + f"about {format_bytes(need)} at once; the memory limit is {format_bytes(limit)}, "
                        f"{_where_limit()})")
