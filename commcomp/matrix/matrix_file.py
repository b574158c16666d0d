"""A user's own 0/1 matrix from a file: ``.npy``, ``.csv`` (commas) or whitespace-separated text.

Bad files raise :class:`~commcomp.errors.InvalidParameterError` with one line saying what is wrong
(missing, unreadable, ragged rows, entries other than 0 and 1, not 2-D, empty, too large).

Size limit: ``MAX_FILE_CELLS`` (2^24) entries.

Examples
--------
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "m.txt")
>>> _ = open(path, "w").write("1 0 1\\n0 1 1\\n")
>>> load_matrix(path).astype(int).tolist()
[[1, 0, 1], [0, 1, 1]]
"""

from __future__ import annotations

import os

import numpy as np

from .build import as_matrix
from ..errors import InvalidParameterError, TooLargeError

__all__ = ["MAX_FILE_CELLS", "load_matrix"]

MAX_FILE_CELLS = 2 ** 24


def load_matrix(path: str) -> np.ndarray:
    """The 0/1 matrix stored at ``path`` as a bool array (format by extension: .npy, .csv, else text).

    Raises
    ------
    InvalidParameterError
        For a missing or malformed file (one line naming the file and the problem).
    """
    name = os.fspath(path)
    if not os.path.isfile(name):
        raise InvalidParameterError(f"matrix file {name!r} does not exist")
    if os.path.getsize(name) > 16 * MAX_FILE_CELLS:
        raise TooLargeError(f"matrix file {name!r} is larger than {16 * MAX_FILE_CELLS} bytes")
    try:
        if name.lower().endswith(".npy"):
            raw = np.load(name, allow_pickle=False)
        else:
            raw = _read_text(name, "," if name.lower().endswith(".csv") else None)
    except InvalidParameterError:
        raise
    except (OSError, ValueError, UnicodeDecodeError, EOFError) as err:
        raise InvalidParameterError(f"matrix file {name!r} cannot be read: "
                                    f"{str(err).splitlines()[0] if str(err) else type(err).__name__}")
    raw = np.asarray(raw)
    if raw.dtype.kind not in "biuf":
        raise InvalidParameterError(f"matrix file {name!r} holds {raw.dtype} values, not 0 and 1")
    if raw.size > MAX_FILE_CELLS:
        raise TooLargeError(f"matrix file {name!r} has {raw.size} entries; the limit is {MAX_FILE_CELLS}")
    try:
        return as_matrix(raw)
    except InvalidParameterError as err:
        raise InvalidParameterError(f"matrix file {name!r}: {err}") from None


def _read_text(name: str, sep: str | None) -> np.ndarray:
    rows = []
    with open(name, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = [x.strip() for x in line.split(sep)] if sep else line.split()
            if any(x not in ("0", "1") for x in fields):
                bad = next(x for x in fields if x not in ("0", "1"))
                raise InvalidParameterError(f"matrix file {name!r}, line {number}: entry {bad!r} is "
                                            f"not 0 or 1")
            if rows and len(fields) != len(rows[0]):
                raise InvalidParameterError(f"matrix file {name!r}, line {number}: {len(fields)} "
                                            f"entries where the first row has {len(rows[0])}")
            rows.append([x == "1" for x in fields])
    if not rows:
        raise InvalidParameterError(f"matrix file {name!r} holds no rows")
    return np.array(rows, dtype=bool)
