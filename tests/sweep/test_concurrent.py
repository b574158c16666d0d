"""Sweeps sharing a database, and a submitting process that dies: real processes, real signals.

- two ``commcomp sweep run`` processes on one new database at once: the schema is created once, every
  point is computed by exactly one of them (their ``ran`` add up to the grid), and both exit 0;
- ``kill -9`` of the submitting process: its workers (and the forkserver) are gone within seconds;
- SIGTERM: exits like Ctrl-C (status 143, "terminated", no traceback, no leaked-semaphore warning), the
  workers are gone, and the next run computes exactly the points left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from commcomp.sweep.store import JobRecord, ResultStore

from sweep_helpers import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _start(db, points, seconds, workers=2, extra=()):
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    argv = [sys.executable, "-m", "cli", "sweep", "run", "--op", "selftest", "--name", "shared",
            "--axis", f"n={','.join(map(str, range(points)))}", "--param", f"seconds={seconds}",
            "--workers", str(workers), "--db", str(db), "--format", "json", *extra]
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _session(sid: int) -> set[int]:
    """Every live process in session ``sid`` (the sweep and all it started), zombies excluded."""
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != b"Z":  # fields: state ppid pgrp session ...
            out.add(int(entry))
    return out


def _wait_for_workers(process, at_least, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if len(_session(process.pid) - {process.pid}) >= at_least:
            return
        time.sleep(0.05)
    raise AssertionError(f"no workers appeared: {process.poll()}, {process.stderr.read() if process.poll() else ''}")


def _gone_within(sid, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = _session(sid)
        if not left:
            return set()
        time.sleep(0.1)
    return _session(sid)


def test_two_runs_on_one_new_database_share_the_points(tmp_path):
    db, points = tmp_path / "shared.sqlite", 24
    first, second = _start(db, points, 0.2), _start(db, points, 0.2)
    outs = [p.communicate(timeout=120) for p in (first, second)]
    for p, (out, err) in zip((first, second), outs):
        assert p.returncode == 0, err
        assert "Traceback" not in err and "OperationalError" not in err
    summaries = [json.loads(out)["summary"] for out, _ in outs]
    assert sum(s["ran"] for s in summaries) == points, summaries  # each point computed once
    assert all(s["ran"] > 0 for s in summaries), summaries          # the second run helped
    for s in summaries:
        assert s["ran"] + s["skipped"] + s["busy"] == points
    with ResultStore(str(db), readonly=True) as store:
        rows = store.rows()
        assert store.integrity_ok()
    assert len(rows) == points and {r.status for r in rows} == {"ok"}
    with ResultStore(str(db)) as store:  # claims and runners released
        assert store._db.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
        assert store._db.execute("SELECT count(*) FROM runners").fetchone()[0] == 0


def test_columns_added_by_another_connection_are_not_added_twice(tmp_path):
    db = str(tmp_path / "r.sqlite")
    with ResultStore(db) as a, ResultStore(db) as b:  # b's view of the columns is stale once a records
        a.record(JobRecord("s", "selftest", '{"n":1}', 1, "ok", {"draw": 0.5}))
        b.record(JobRecord("s", "selftest", '{"n":2}', 2, "ok", {"draw": 0.25}))
        assert len(b.rows()) == 2


def test_claims_are_exclusive_and_a_dead_runners_claims_are_taken_over(tmp_path):
    db = str(tmp_path / "r.sqlite")
    with ResultStore(db) as a, ResultStore(db) as b:
        a.start_runner()
        b.start_runner()
        assert a.claim("s", "selftest", '{"n":1}', 1) == "claimed"
        assert b.claim("s", "selftest", '{"n":1}', 1) == "busy"
        assert [r["pid"] for r in b.busy_runners()] == [os.getpid()]
        a.record(JobRecord("s", "selftest", '{"n":1}', 1, "ok", {"draw": 0.5}))
        assert b.claim("s", "selftest", '{"n":1}', 1) == "done"
        assert b.claim("s", "selftest", '{"n":1}', 1, skip_done=None) == "claimed"  # --force
        # a runner whose process is gone: its claim is taken over
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout.strip()
        a._db.execute("UPDATE runners SET pid = ? WHERE owner = ?", (int(dead), a.owner))
        assert a.claim("s", "selftest", '{"n":3}', 3) == "claimed"
        assert b.claim("s", "selftest", '{"n":3}', 3) == "claimed"
        a.stop_runner()
        b.stop_runner()


def test_kill_9_of_the_submitting_process_ends_its_workers(tmp_path):
    process = _start(tmp_path / "k.sqlite", 8, 30.0)  # jobs far longer than the test
    _wait_for_workers(process, at_least=3)             # forkserver + 2 workers (+ resource tracker)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    left = _gone_within(process.pid, 5.0)
    for pid in left:  # clean up before failing
        os.kill(pid, signal.SIGKILL)
    assert not left, f"orphaned processes {sorted(left)} survived the parent's kill -9"


def test_sigterm_exits_like_ctrl_c_and_the_next_run_resumes(tmp_path):
    db, points = tmp_path / "t.sqlite", 10
    process = _start(db, points, 0.2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # a few rows in, mid-sweep
        try:
            with ResultStore(str(db), readonly=True) as store:
                if len(store.rows()) >= 2:
                    break
        except Exception:  # noqa: BLE001 - not created yet
            pass
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines()[-1] == "commcomp: terminated", err
    assert "leaked" not in err and "Traceback" not in err, err
    assert not _gone_within(process.pid, 5.0)
    with ResultStore(str(db), readonly=True) as store:
        done = len(store.rows())
        assert store.integrity_ok()
    assert 2 <= done < points
    again = _start(db, points, 0.2)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    summary = json.loads(out)["summary"]
    assert (summary["skipped"], summary["ran"], summary["busy"]) == (done, points - done, 0)


def test_sigterm_while_the_workers_start(tmp_path):
    """The moment the database exists, the pool is starting its workers: SIGTERM then must still be clean
    (a worker half-started when the run ends used to print a FileNotFoundError traceback)."""
    db = tmp_path / "s.sqlite"
    process = _start(db, 8, 5.0)
    deadline = time.monotonic() + 60
    while not db.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    assert (process.returncode, err.strip()) == (128 + signal.SIGTERM, "commcomp: terminated"), err
    assert not _gone_within(process.pid, 5.0)
