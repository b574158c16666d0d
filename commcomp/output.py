"""Where commcomp writes its files, and how: one policy for ``--out``, ``--plot`` and ``--db``.

The policy (docs/CONVENTIONS.md, "Output files"), decided by what the path is *now*:

================================  ============================================================
the path                          what happens
================================  ============================================================
``-``, ``/dev/stdout``            standard output (text, or the bytes of a model or a picture)
``/dev/stderr``, ``/dev/fd/N``    the descriptor already open, appended to (``2>log`` keeps
                                  what it holds)
does not exist                    created atomically: written to a temporary file in the same
                                  folder, then renamed into place, with mode ``0666 & ~umask``
a regular file                    replaced atomically (the same way); it keeps its permissions;
                                  a file its user may not write is refused
a FIFO or a character device      written into (appended), never replaced: the obvious intent
(a named pipe, ``/dev/null``,     of a pipe or a device; a symbolic link whose target is one
a terminal)                       of these is followed to it
a symbolic link to anything       refused (exit 2): commcomp never replaces a link, nor writes
else, or a dangling link          through one into a regular file; give the target itself
a folder, a block device,         refused (exit 2), saying what the path is
a socket
================================  ============================================================

The folder of a file to create must exist and be writable; :func:`check_destination` checks
it (by creating and removing a temporary file there) so that commands can refuse a bad
destination before any work starts. A database (``--db``) is updated in place rather than
replaced: it must be missing or a regular file (a link to one is followed), and its folder
writable, since SQLite writes its journal beside it. Every refusal is an
:class:`~commcomp.errors.OutputError` naming the path.

Examples
--------
>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "table.txt")
>>> check_destination(path).action
'create'
>>> write_text(path, "hello")
>>> open(path).read()
'hello\\n'
>>> check_destination(path).action, check_destination("-").action
('replace', 'stdout')
>>> check_destination(folder)                      # doctest: +ELLIPSIS
Traceback (most recent call last):
...
commcomp.errors.OutputError: cannot write ...: it is a folder; give a file name inside it
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, Iterator

from .errors import MissingDependencyError, OutputError

__all__ = ["Destination", "check_destination", "check_database", "atomic_output", "write_text",
           "write_with", "require_module", "STDOUT"]

STDOUT = "-"
_OPEN_DESCRIPTOR = re.compile(r"^/(dev/stderr|dev/fd/\d+|proc/self/fd/\d+)$")


@dataclass(frozen=True)
class Destination:
    """A checked output path: ``action`` is ``stdout``, ``stream``, ``create`` or ``replace``."""

    path: str
    action: str
    mode: int | None = None  # the permission bits the written file gets (create / replace)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder; give a file name inside it"),
                       (stat.S_ISBLK, "a block device; commcomp writes only to files, pipes and "
                                      "character devices"),
                       (stat.S_ISSOCK, "a socket; commcomp writes only to files, pipes and "
                                       "character devices")):
        if test(mode):
            return name
    return "not a regular file, a pipe or a character device"


def _probe_folder(path: str, doing: str | None = None, folder_of: str | None = None) -> None:
    """Refuse a missing or unwritable folder for ``path`` (a temporary file is created and removed)."""
    doing = doing or f"cannot write {path}"
    folder = os.path.dirname(os.path.abspath(folder_of or path))
    if not os.path.exists(folder):
        raise OutputError(f"{doing}: folder {folder} does not exist")
    if not os.path.isdir(folder):
        raise OutputError(f"{doing}: {folder} is not a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".commcomp-probe-")
    except OSError as exc:
        raise OutputError(f"{doing}: folder {folder} is not writable "
                          f"({exc.strerror or type(exc).__name__})") from None
    os.close(fd)
    os.unlink(probe)


def check_destination(path: str) -> Destination:
    """Check that ``path`` may be written under the module's policy; raise OutputError if not.

    Nothing is written (the folder probe's temporary file is removed again).
    """
    path = os.fspath(path)
    if path == STDOUT or os.path.abspath(path) == "/dev/stdout":
        return Destination(path, "stdout")
    if _OPEN_DESCRIPTOR.match(os.path.abspath(path)):
        return Destination(path, "stream")  # a descriptor already open (2>file, a pipe): written into
    if not path:
        raise OutputError("cannot write to an empty file name")
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        _probe_folder(path)
        return Destination(path, "create", 0o666 & ~_umask())
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    if stat.S_ISLNK(link.st_mode):
        target = os.path.realpath(path)
        try:
            st = os.stat(path)
        except OSError:
            raise OutputError(f"cannot write {path}: it is a symbolic link to {target}, which does "
                              "not exist; commcomp does not write through links") from None
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
            return Destination(path, "stream")
        what = "a regular file" if stat.S_ISREG(st.st_mode) else "a folder" if stat.S_ISDIR(st.st_mode) \
            else "not a file"
        raise OutputError(f"cannot write {path}: it is a symbolic link (to {target}, {what}); commcomp "
                          "never replaces a link or writes through one: give the target itself")
    if stat.S_ISFIFO(link.st_mode) or stat.S_ISCHR(link.st_mode):
        return Destination(path, "stream")
    if stat.S_ISREG(link.st_mode):
        if not os.access(path, os.W_OK):
            raise OutputError(f"cannot write {path}: the file is read-only (mode "
                              f"{stat.S_IMODE(link.st_mode):o}); commcomp does not replace it")
        _probe_folder(path)
        return Destination(path, "replace", stat.S_IMODE(link.st_mode))
    raise OutputError(f"cannot write {path}: it is {_kind(link.st_mode)}")


def check_database(path: str) -> str:
    """Check a results database path (missing or a regular file, its folder writable); returns it."""
    path = os.fspath(path)
    if path == STDOUT:
        raise OutputError("a database cannot be written to standard output ('-'); give a file name")
    if not path.strip():
        raise OutputError("--db '' names no file: give a file name (or leave --db out for the default)")
    if os.path.islink(path) and os.path.exists(path):
        raise OutputError(f"cannot open database {path}: it is a symbolic link to {os.path.realpath(path)}; "
                          "commcomp writes through no link: give the file itself")
    if os.path.isfile(path):
        _require_commcomp_database(path)
    if os.path.lexists(path):
        try:
            st = os.stat(path)
        except OSError:
            raise OutputError(f"cannot open database {path}: it is a link to "
                              f"{os.path.realpath(path)}, which does not exist") from None
        if not stat.S_ISREG(st.st_mode):
            raise OutputError(f"cannot open database {path}: it is {_kind(st.st_mode)}")
    # SQLite writes its journal beside the database itself (a link's target)
    _probe_folder(path, f"cannot open database {path}", os.path.realpath(path))
    return path


#: the tables a commcomp results database holds (commcomp.sweep.store)
_DATABASE_TABLES = {"results", "sweeps", "claims", "runners"}


def _require_commcomp_database(path: str) -> None:
    """An existing database must be commcomp's (empty, or holding its tables only) and writable."""
    import sqlite3

    if not os.access(path, os.W_OK):
        raise OutputError(f"cannot open database {path}: it is not writable")
    if os.path.getsize(path) == 0:
        return
    try:
        with open(path, "rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                raise OutputError(f"cannot open database {path}: it is not an SQLite database")
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise OutputError(f"cannot open database {path}: {exc}") from None
    if tables and (not tables <= _DATABASE_TABLES | {"sqlite_sequence"} or "results" not in tables):
        raise OutputError(f"cannot open database {path}: it is not a commcomp results database (it holds "
                          f"table{'s' if len(tables) != 1 else ''} {', '.join(sorted(tables)[:5])}); "
                          "commcomp adds no tables to another program's file")


def _copy_into(source: str, target, binary_stream=None) -> None:
    with open(source, "rb") as src:
        if binary_stream is not None:
            shutil.copyfileobj(src, binary_stream)
            binary_stream.flush()
        else:
            with open(target, "ab") as dst:  # appended: a descriptor redirected to a file keeps its text
                shutil.copyfileobj(src, dst)


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[str]:
    """Yield a temporary file name to write into; on success it is put where ``path`` says.

    The temporary file keeps ``path``'s extension (so writers that go by it, like matplotlib,
    still do), lives beside ``path`` (so the final rename is atomic) and is removed on any
    failure, so an interrupted or failed write never leaves a half-written output.
    """
    dest = check_destination(path)
    ext = os.path.splitext(path)[1]
    folder = os.path.dirname(os.path.abspath(path)) if dest.action in ("create", "replace") else None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".commcomp-", suffix=".tmp" + ext)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    os.close(fd)
    try:
        yield tmp
        try:
            if dest.action == "stdout":
                sys.stdout.flush()
                _copy_into(tmp, None, getattr(sys.stdout, "buffer", None) or _TextBytes(sys.stdout))
            elif dest.action == "stream":
                _copy_into(tmp, path)
            else:
                again = check_destination(path)  # it may have changed while the work ran
                os.chmod(tmp, dest.mode if again.mode is None else again.mode)
                os.replace(tmp, path)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class _TextBytes:
    """Bytes written to a text stream that has no ``buffer`` (pytest's capture, StringIO)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, data: bytes) -> None:
        self.stream.write(data.decode("utf-8", errors="replace"))

    def flush(self) -> None:
        self.stream.flush()


def write_with(path: str, writer: Callable[[str], object]) -> None:
    """Call ``writer(temporary_name)`` and put the result at ``path`` under the policy."""
    with atomic_output(path) as tmp:
        writer(tmp)


def write_text(path: str | None, text: str) -> None:
    """Write ``text`` (a newline added if missing) to ``path``; ``None`` or ``-`` is standard output."""
    text = text if text.endswith("\n") else text + "\n"
    if path is None or path == STDOUT:
        sys.stdout.write(text)
        return

    def writer(tmp):
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)

    write_with(path, writer)


def require_module(module: str, message: str) -> None:
    """Raise MissingDependencyError(``message``) unless ``module`` can be imported (not importing it)."""
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise MissingDependencyError(message)
