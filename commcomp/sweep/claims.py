"""Several runs on one results database: runners, and claims on points (mixed into ``ResultStore``).

A run registers itself (``runners``: owner id, host, pid, start, heartbeat) and claims each point in a
``BEGIN IMMEDIATE`` transaction just before computing it (``claims``: one row per point being computed).
A point with a result row, or claimed by a live runner, is not claimed again, so two runs never compute
the same point.  A runner is alive while its pid exists on this host (checked with ``kill(pid, 0)``), or,
on another host sharing the file, while its heartbeat (its last claim or row) is younger than
``STALE_SECONDS``; a dead runner's claims are taken over, so a killed run loses no point.  Recording a
point deletes its claim in the same transaction (:meth:`ResultStore.record`).

Examples
--------
>>> import os, tempfile
>>> from commcomp.sweep.store import ResultStore
>>> db = os.path.join(tempfile.mkdtemp(), "r.sqlite")
>>> with ResultStore(db) as a, ResultStore(db) as b:
...     _ = a.start_runner(), b.start_runner()
...     a.claim("s", "selftest", '{"n":1}', 1), b.claim("s", "selftest", '{"n":1}', 1)
('claimed', 'busy')
"""

from __future__ import annotations

import datetime
import os
import socket
import time
import uuid

__all__ = ["SharedStore", "SHARING_SCHEMA", "STALE_SECONDS"]

SHARING_SCHEMA = """
CREATE TABLE IF NOT EXISTS runners (
    owner TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at REAL NOT NULL,
    heartbeat REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS claims (
    sweep TEXT NOT NULL,
    operation TEXT NOT NULL,
    point TEXT NOT NULL,
    seed INTEGER NOT NULL,
    owner TEXT NOT NULL,
    PRIMARY KEY (sweep, operation, point, seed)
);
"""
#: A runner on another host whose heartbeat (its last claim or row) is older than this is presumed dead.
STALE_SECONDS = 600.0


def _timestamp(iso: str) -> float:
    try:
        return datetime.datetime.fromisoformat(iso).timestamp()
    except (TypeError, ValueError):
        return 0.0


class SharedStore:
    """The claim methods of :class:`~commcomp.sweep.store.ResultStore` (needs its ``_db`` and
    ``_transaction``)."""

    owner: str | None = None

    def start_runner(self) -> str:
        """Register this process as a runner (its claims are its own); returns its owner id."""
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        now = time.time()
        with self._transaction():
            self._db.execute("INSERT INTO runners (owner, host, pid, started_at, heartbeat) VALUES (?, ?, ?, ?, ?)",
                             (self.owner, socket.gethostname(), os.getpid(), now, now))
        return self.owner

    def stop_runner(self) -> None:
        """Drop this runner's unfinished claims (another run may take them) and its registration."""
        if self.owner is None:
            return
        with self._transaction():
            self._db.execute("DELETE FROM claims WHERE owner = ?", (self.owner,))
            self._db.execute("DELETE FROM runners WHERE owner = ?", (self.owner,))
        self.owner = None

    def _alive(self, owner: str) -> bool:
        row = self._db.execute("SELECT host, pid, heartbeat FROM runners WHERE owner = ?", (owner,)).fetchone()
        if row is None:
            return False
        host, pid, heartbeat = row
        if host != socket.gethostname():
            return time.time() - heartbeat < STALE_SECONDS
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # alive, another user's
            return True
        return True

    def claim(self, sweep: str, operation: str, point: str, seed: int, *, skip_done: str | None = "any",
              done_after: float | None = None) -> str:
        """Claim one point for this runner, atomically: ``"claimed"``, ``"done"`` (a row exists) or
        ``"busy"`` (a live runner holds it; a dead runner's claim is taken over).

        ``skip_done``: ``"any"`` skips points with any row, ``"ok"`` only those with an ``'ok'`` row (retry
        errors), None none (``--force``); ``done_after`` (a time.time()) then still skips rows finished after
        it, which another run computed while this one was running.
        """
        if self.owner is None:
            raise RuntimeError("claim() needs start_runner() first")
        key = (sweep, operation, point, int(seed))
        with self._transaction():
            row = self._db.execute("SELECT status, finished_at FROM results WHERE sweep = ? AND operation = ? "
                                   "AND point = ? AND seed = ?", key).fetchone()
            if row is not None:
                if skip_done == "any" or (skip_done == "ok" and row[0] == "ok"):
                    return "done"
                if done_after is not None and _timestamp(row[1]) > done_after:
                    return "done"
            holder = self._db.execute("SELECT owner FROM claims WHERE sweep = ? AND operation = ? AND point = ? "
                                      "AND seed = ?", key).fetchone()
            if holder is not None and holder[0] != self.owner and self._alive(holder[0]):
                return "busy"
            self._db.execute("INSERT OR REPLACE INTO claims (sweep, operation, point, seed, owner) "
                             "VALUES (?, ?, ?, ?, ?)", key + (self.owner,))
            self._db.execute("UPDATE runners SET heartbeat = ? WHERE owner = ?", (time.time(), self.owner))
        return "claimed"

    def busy_runners(self) -> list[dict]:
        """The other live runners holding claims: ``owner, host, pid, claims``."""
        rows = self._db.execute("SELECT r.owner, r.host, r.pid, count(c.point) FROM runners r JOIN claims c "
                                "ON c.owner = r.owner GROUP BY r.owner").fetchall()
        return [{"owner": o, "host": h, "pid": p, "claims": n} for o, h, p, n in rows
                if o != self.owner and self._alive(o)]
