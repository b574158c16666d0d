"""The environment variables commcomp reads, checked once, up front, by every command.

``COMMCOMP_MEMORY_LIMIT`` (a size such as ``8G``; :func:`commcomp.limits.memory_limit`) and
``COMMCOMP_BACKEND`` (an array library's name; :func:`commcomp.backend.resolve_backend`) used to be
read only by the commands that happened to need them, so a typo was ignored by some commands and
turned into an error on every point by others.  :func:`check_environment` reads both before any
work: set and malformed (empty, negative, garbage, below :data:`MIN_MEMORY_LIMIT`, an unknown
backend) is one error.

Examples
--------
>>> import os
>>> os.environ["COMMCOMP_MEMORY_LIMIT"] = "1"
>>> try:
...     check_environment()
... except InvalidParameterError as exc:
...     print(str(exc).split(";")[0])
COMMCOMP_MEMORY_LIMIT = '1' is 1 byte
>>> del os.environ["COMMCOMP_MEMORY_LIMIT"]; check_environment()
"""

from __future__ import annotations

import os

from .errors import InvalidParameterError

__all__ = ["check_environment", "MIN_MEMORY_LIMIT"]

#: below this a memory limit is a typo (``1`` for ``1G``): no command plans within it
MIN_MEMORY_LIMIT = 1 << 20


def check_environment() -> None:
    """Raise :class:`InvalidParameterError` / :class:`UnknownNameError` for a malformed variable."""
    from .backend import ENV_VAR, resolve_backend
    from .limits import format_bytes, memory_limit

    environ = os.environ
    if "COMMCOMP_MEMORY_LIMIT" in environ:
        text = environ["COMMCOMP_MEMORY_LIMIT"]
        if not text.strip():
            raise InvalidParameterError("COMMCOMP_MEMORY_LIMIT is set but empty: give a size like 8G or 512M, "
                                        "or unset it (default: half of this machine's memory)")
        limit = memory_limit()
        if limit < MIN_MEMORY_LIMIT:
            raise InvalidParameterError(f"COMMCOMP_MEMORY_LIMIT = {text!r} is {limit} byte{'s' if limit != 1 else ''}"
                                        f"; the least is {format_bytes(MIN_MEMORY_LIMIT)} (a unit missing? 8G, 512M)")
    if ENV_VAR in environ:
        if not environ[ENV_VAR].strip():
            raise InvalidParameterError(f"{ENV_VAR} is set but empty: give numpy, cupy, torch or "
                                        "array_api_strict, or unset it")
        resolve_backend(None)
