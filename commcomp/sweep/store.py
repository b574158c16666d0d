"""The results database: one SQLite file, one row per grid point, one transaction per row.

Schema (``results``; every sweep in the file shares it, told apart by the ``sweep`` column)::

    id            INTEGER PRIMARY KEY
    sweep         TEXT     the sweep's name
    operation     TEXT     the operation's registry name
    point         TEXT     canonical JSON of every parameter of the point (the grid key)
    seed          INTEGER  the point's derived seed
    status        TEXT     'ok' or 'error'
    result        TEXT     JSON of the operation's result fields ('ok' rows)
    error         TEXT     'ExceptionType: message' ('error' rows)
    traceback     TEXT     the worker's traceback ('error' rows)
    wall_seconds  REAL     the job's own wall time, measured in the worker
    version       TEXT     commcomp's version
    git_revision  TEXT     ``git rev-parse HEAD`` of the checkout (``+dirty`` with local changes)
    finished_at   TEXT     UTC, ISO 8601
    p_<name>      ...      each parameter promoted to a column (added as new names appear)
    r_<name>      ...      each scalar result field promoted to a column (booleans as 0/1)
    UNIQUE (sweep, operation, point, seed)

and ``sweeps (name, operation, spec, updated_at)`` with each sweep's last specification.  Concurrent runs
share a database through ``runners (owner, host, pid, started_at, heartbeat)`` and ``claims (sweep,
operation, point, seed, owner)``: a run claims each point in a ``BEGIN IMMEDIATE`` transaction before it
computes it (:meth:`ResultStore.claim`), so two runs never compute the same point; a claim whose runner
is gone (its pid is dead on this host, or its heartbeat is older than ``STALE_SECONDS`` elsewhere) is taken
over, so a killed run's points are not lost. The JSON columns are
authoritative; the promoted columns make plain SQL easy::

    SELECT p_arch, p_n, avg(r_correct) FROM results WHERE sweep = 'rnn' GROUP BY p_arch, p_n;

Every finished point is written in its own ``BEGIN IMMEDIATE ... COMMIT`` (WAL journal, ``synchronous=FULL``),
so a process killed at any moment leaves each row either whole or absent, and every committed row survives.
Only submitting processes write; workers return their results to them.  The schema is created, and new
columns added, inside write transactions that re-read the table first, so concurrent runs never add a
column twice.

Examples
--------
>>> import tempfile, os
>>> with ResultStore(os.path.join(tempfile.mkdtemp(), "r.sqlite")) as store:
...     store.record(JobRecord("s", "selftest", '{"n":1}', 5, "ok", {"draw": 0.5}, wall_seconds=0.1))
...     [(r.params, r.result) for r in store.rows()]
[({'n': 1}, {'draw': 0.5})]
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field

from commcomp.errors import CommcompError

from .claims import SHARING_SCHEMA, STALE_SECONDS, SharedStore

__all__ = ["ResultStore", "JobRecord", "StoredRow", "StoreError", "git_revision", "package_version",
           "STALE_SECONDS"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY,
    sweep TEXT NOT NULL,
    operation TEXT NOT NULL,
    point TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    result TEXT,
    error TEXT,
    traceback TEXT,
    wall_seconds REAL,
    version TEXT,
    git_revision TEXT,
    finished_at TEXT NOT NULL,
    UNIQUE (sweep, operation, point, seed)
);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT PRIMARY KEY,
    operation TEXT NOT NULL,
    spec TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
"""
_BASE_COLUMNS = ("id", "sweep", "operation", "point", "seed", "status", "result", "error", "traceback",
                 "wall_seconds", "version", "git_revision", "finished_at")


class StoreError(CommcompError):
    """The results database cannot be opened or is not a commcomp sweep database."""


@dataclass(frozen=True)
class JobRecord:
    """One finished point, as the submitting process writes it."""

    sweep: str
    operation: str
    point: str
    seed: int
    status: str
    result: dict | None = None
    error: str | None = None
    traceback: str | None = None
    wall_seconds: float | None = None
    version: str | None = None
    git_revision: str | None = None
    finished_at: str = field(default_factory=lambda: datetime.datetime.now(datetime.timezone.utc)
                             .isoformat(timespec="milliseconds"))


@dataclass(frozen=True)
class StoredRow:
    """A row read back: parameters and result fields decoded from their JSON."""

    sweep: str
    operation: str
    params: dict
    seed: int
    status: str
    result: dict
    error: str | None
    traceback: str | None
    wall_seconds: float | None
    version: str | None
    git_revision: str | None
    finished_at: str

    @property
    def point(self) -> str:
        from .grid import canonical_json

        return canonical_json(self.params)


def _column(prefix: str, name: str) -> str:
    return prefix + re.sub(r"[^0-9a-zA-Z_]", "_", str(name)).lower()


def _scalar(value):
    if isinstance(value, int) and not -(1 << 63) <= value < (1 << 63):
        return str(value)  # exact counts past SQLite's 64-bit integers (n·2^n instances): as text
    if value is None or isinstance(value, (int, float, str)):
        return value  # bool is an int: stored as 0/1
    return None


def package_version() -> str:
    from commcomp import __version__

    return __version__


def git_revision() -> str | None:
    """``HEAD`` of the checkout this package runs from, ``+dirty`` with uncommitted changes; None outside git."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", root, "diff", "--quiet", "HEAD", "--"], capture_output=True,
                               timeout=10).returncode == 1
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty else "")


class ResultStore(SharedStore):
    """A sweep results database (created on first use).

    Parameters
    ----------
    path : str
        The SQLite file.
    readonly : bool
        Open an existing database for reading only (``sweep show``); a missing file is an error.
    """

    def __init__(self, path: str, readonly: bool = False):
        self.path = path
        if readonly and not os.path.isfile(path):
            raise StoreError(f"results database {path!r} not found")
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise StoreError(f"cannot create {path!r}: directory {directory} does not exist")
        try:
            uri = f"file:{os.path.abspath(path)}?mode=ro" if readonly else os.path.abspath(path)
            self._db = sqlite3.connect(uri, uri=readonly, isolation_level=None, timeout=30.0)
            self._db.execute("PRAGMA busy_timeout = 30000")
            if not readonly:
                self._set_wal()
                self._db.execute("PRAGMA synchronous = FULL")
                with self._transaction():  # one writer at a time: concurrent runs create it once
                    for statement in (_SCHEMA + SHARING_SCHEMA).split(";"):
                        if statement.strip():
                            self._db.execute(statement)
            self._columns = self._read_columns()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a sweep results database ({exc})") from None
        if not set(_BASE_COLUMNS) <= self._columns:
            raise StoreError(f"{path}: not a sweep results database (no results table)")

    def _set_wal(self, attempts: int = 300) -> None:
        """Switch to WAL. SQLite does not call the busy handler for a journal-mode change, so two runs
        creating one database at once can see "database is locked" here: wait and retry (up to ~30 s,
        as busy_timeout), then let the error through."""
        for attempt in range(attempts):
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == attempts - 1:
                    raise
                time.sleep(0.1)

    # -- context manager ---------------------------------------------------------------------
    def close(self) -> None:
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- writing -----------------------------------------------------------------------------
    def register_sweep(self, name: str, operation: str, spec: dict) -> None:
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        with self._transaction():
            self._db.execute("INSERT INTO sweeps (name, operation, spec, updated_at) VALUES (?, ?, ?, ?) "
                             "ON CONFLICT(name) DO UPDATE SET operation = excluded.operation, "
                             "spec = excluded.spec, updated_at = excluded.updated_at",
                             (name, operation, json.dumps(spec), now))  # key order kept: it is the axes order

    def record(self, rec: JobRecord) -> None:
        """Write one finished point in its own transaction (replacing an earlier row of the same point)."""
        if rec.status not in ("ok", "error"):
            raise ValueError(f"status must be 'ok' or 'error', got {rec.status!r}")
        values = {"sweep": rec.sweep, "operation": rec.operation, "point": rec.point, "seed": int(rec.seed),
                  "status": rec.status,
                  "result": None if rec.result is None else json.dumps(rec.result, sort_keys=True,
                                                                       allow_nan=False),
                  "error": rec.error, "traceback": rec.traceback, "wall_seconds": rec.wall_seconds,
                  "version": rec.version, "git_revision": rec.git_revision, "finished_at": rec.finished_at}
        for name, value in json.loads(rec.point).items():
            values[_column("p_", name)] = _scalar(value)
        for name, value in (rec.result or {}).items():
            values[_column("r_", name)] = _scalar(value)
        with self._transaction():
            if not set(values) <= self._columns:  # another run may have added them since we looked
                self._columns = self._read_columns()
            for column in values:
                if column not in self._columns:
                    self._db.execute(f'ALTER TABLE results ADD COLUMN "{column}"')
                    self._columns.add(column)
            key = (rec.sweep, rec.operation, rec.point, int(rec.seed))
            self._db.execute("DELETE FROM claims WHERE sweep = ? AND operation = ? AND point = ? AND seed = ?", key)
            if self.owner is not None:
                self._db.execute("UPDATE runners SET heartbeat = ? WHERE owner = ?", (time.time(), self.owner))
            self._db.execute("DELETE FROM results WHERE sweep = ? AND operation = ? AND point = ? AND seed = ?",
                             (rec.sweep, rec.operation, rec.point, int(rec.seed)))
            names = ", ".join(f'"{c}"' for c in values)
            self._db.execute(f"INSERT INTO results ({names}) VALUES ({', '.join('?' * len(values))})",
                             list(values.values()))

    @contextlib.contextmanager
    def _transaction(self):
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            self._columns = self._read_columns()  # undo ALTERs
            raise
        self._db.execute("COMMIT")

    def _read_columns(self) -> set:
        return {row[1] for row in self._db.execute("PRAGMA table_info(results)")}

    # -- reading -----------------------------------------------------------------------------
    def done_points(self, sweep: str, operation: str, include_errors: bool = True) -> set[tuple[str, int]]:
        """``(point, seed)`` of the rows already recorded (``'ok'`` only unless ``include_errors``)."""
        sql = "SELECT point, seed FROM results WHERE sweep = ? AND operation = ?"
        if not include_errors:
            sql += " AND status = 'ok'"
        return {(p, s) for p, s in self._db.execute(sql, (sweep, operation))}

    def sweeps(self) -> list[dict]:
        rows = self._db.execute("SELECT s.name, s.operation, s.spec, s.updated_at, count(r.id), "
                                "sum(r.status = 'error') FROM sweeps s LEFT JOIN results r ON r.sweep = s.name "
                                "GROUP BY s.name ORDER BY s.name").fetchall()
        return [{"name": n, "operation": o, "spec": json.loads(s), "updated_at": u, "rows": c or 0,
                 "errors": e or 0} for n, o, s, u, c, e in rows]

    def rows(self, sweep: str | None = None, status: str | None = None,
             points: set | None = None) -> list[StoredRow]:
        """Rows in a stable order (sweep, then point key, then seed), optionally filtered."""
        sql = ("SELECT sweep, operation, point, seed, status, result, error, traceback, wall_seconds, version, "
               "git_revision, finished_at FROM results")
        where, args = [], []
        if sweep is not None:
            where.append("sweep = ?")
            args.append(sweep)
        if status is not None:
            where.append("status = ?")
            args.append(status)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY sweep, point, seed"
        out = []
        for (sw, op, point, seed, st, result, error, tb, wall, version, rev, finished) in self._db.execute(sql, args):
            if points is not None and (point, seed) not in points:
                continue
            out.append(StoredRow(sw, op, json.loads(point), seed, st, json.loads(result) if result else {},
                                 error, tb, wall, version, rev, finished))
        return out

    def integrity_ok(self) -> bool:
        return self._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
