"""Exceptions raised by the library.

Library code raises these; only ``cli.py`` turns them into one line on stderr
and exit status 2.  Every one derives from :class:`CommcompError`, and the
ones about bad arguments also derive from :class:`ValueError` so that plain
``except ValueError`` keeps working for callers who do not know this module.
"""

from __future__ import annotations


class CommcompError(Exception):
    """Base class of every error commcomp raises on purpose."""


class InvalidParameterError(CommcompError, ValueError):
    """A numeric parameter is out of range (N < 1, p out of range, heads < 1, ...)."""


class SweepSpecError(InvalidParameterError):
    """A sweep file or command line is malformed (missing file, unknown key, bad axis, bad value)."""


class UnknownNameError(CommcompError, KeyError):
    """A registry lookup failed (unknown task, architecture, problem, theorem, precision)."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want the plain message
        return str(self.args[0]) if self.args else ""


class PrecisionError(InvalidParameterError):
    """A number format string cannot be parsed or describes an impossible format."""


class BitsError(CommcompError, ValueError):
    """Malformed bit-string input (bad hex, wrong length, values out of width)."""


class ProtocolError(CommcompError):
    """A protocol broke its own rules (a party read what it may not, a message of the wrong kind)."""


class TooLargeError(InvalidParameterError):
    """An exact computation was asked for at a size beyond its documented limit."""


class UnsupportedSplitError(CommcompError, ValueError):
    """A model cannot be split between Alice and Bob at bounded cost (2-layer Transformer, hybrid...)."""


class BackendUnavailableError(CommcompError, ImportError):
    """An array library asked for (``--backend cupy``, ``COMMCOMP_BACKEND``) is not installed here."""


class OutputError(CommcompError):
    """An output destination cannot be written (missing or read-only folder, a folder, a link...)."""


class MissingDependencyError(CommcompError, ImportError):
    """An optional extra a command needs is not installed (matplotlib for --plot, dask for --scheduler)."""
